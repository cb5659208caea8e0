//! The save file format: a fixed header, metadata, an optional thumbnail and a payload, compressed
//! with LZ4 when that shrinks it enough to be worth it ([`CompressWhen`]).
//!
//! This layer is engine-free: it imports nothing from Bevy and can be used by tools that inspect
//! or convert save files.
//!
//! # Byte layout (format version 1)
//!
//! A file is four sections back to back: `header | metadata | thumbnail | payload`. All integers
//! are little-endian. CRCs are CRC-32 (IEEE 802.3, as computed by `crc32fast`).
//!
//! | offset | size | field | notes |
//! |-------:|-----:|-------|-------|
//! | 0  | 4 | magic | ASCII `KPSK` (`4B 50 53 4B`) |
//! | 4  | 2 | format version | `u16`, currently `1`; a reader refuses newer versions whose header CRC verifies |
//! | 6  | 1 | codec | `u8`, one of the codec bytes tabled under [`Compression`] (version 1: `0` stored, `1` LZ4 block without size prefix); a writer picks per file (see [`CompressWhen`]) |
//! | 7  | 1 | flags | `u8`, no flag is defined in version 1: must be `0` |
//! | 8  | 4 | metadata length | `u32`, bytes of the metadata section |
//! | 12 | 4 | thumbnail length | `u32`, `0` when the save has no thumbnail |
//! | 16 | 4 | payload length | `u32`, bytes of the payload as stored |
//! | 20 | 4 | uncompressed payload length | `u32`, equal to the payload length for codec `0` |
//! | 24 | 4 | metadata CRC | over the metadata section |
//! | 28 | 4 | thumbnail CRC | over the thumbnail section (`0` when empty) |
//! | 32 | 4 | payload CRC | over the payload as stored (before decompression) |
//! | 36 | 4 | header CRC | over bytes `0..36` |
//! | 40 | metadata length | metadata | [`SaveMeta`] in postcard, without its thumbnail |
//! | … | thumbnail length | thumbnail | PNG bytes, skipped by listings |
//! | … | payload length | payload | [`SaveBundle`] in postcard, then compressed by the codec (stored as is under codec `0`) |
//!
//! The file ends exactly after the payload; trailing bytes are an error.
//!
//! # Reading order and limits
//!
//! A reader checks, in this order and each before the work it protects: magic → version `0` (no
//! format has it) → header CRC (before the version is trusted; every version keeps it, see below)
//! → version (a newer one is refused before anything else is interpreted, since its layout may
//! differ) → codec and flags → every length against the [`Limits`] in the reader's
//! [`DecodeOptions`], and the uncompressed length against what the codec can produce (its largest
//! expansion, tabled under [`Compression`]: LZ4 at most 255:1) → metadata CRC → thumbnail CRC →
//! payload CRC → decompression into a buffer of exactly the announced size → postcard decoding
//! that must consume every byte. Nothing is allocated from a length before that length passed its
//! checks, and readers grow buffers as data arrives rather than trusting lengths.
//!
//! Every reading function ([`decode`], [`decode_owned`], [`decode_from`], [`read_summary`],
//! [`read_thumbnail`]) takes `&DecodeOptions`: whatever a reader needs besides the limits (such
//! as a key for sealed saves) is added there, not to the functions' signatures.
//!
//! # Versioning
//!
//! Postcard is not self-describing, so any change to [`SaveMeta`], [`SaveBundle`] or the header
//! layout bumps [`FORMAT_VERSION`]; readers keep decoding every older version. One golden file per
//! released version lives in `tests/golden/` and must decode forever.
//!
//! ## What every version keeps
//!
//! A reader must tell a save from a newer format (refused with "update the game", never loaded
//! from an older backup nor saved over) from a damaged save whose version field happens to read
//! as a newer number (one flipped bit turns `1` into `9`; handled like any damaged file: the
//! slot loads from its backup and the next save writes a new generation). So every future
//! version keeps these bytes of version 1 where they are, meaning the same:
//!
//! | offset | size | field | kept as |
//! |-------:|-----:|-------|---------|
//! | 0  | 4 | magic | ASCII `KPSK` |
//! | 4  | 2 | format version | `u16`, little-endian |
//! | 36 | 4 | header CRC | CRC-32 over bytes `0..36`, which include the version |
//!
//! The header is at least 40 bytes long in every version; bytes `6..36` and everything after
//! byte 40 may change meaning. A reader verifies the header CRC before it trusts the version:
//! a claimed newer version under a CRC that does not verify is a damaged file, whatever version
//! it claims. A newer file whose header is damaged is therefore handled as damaged too, which is
//! no loss: no build could read it.

mod bundle;
mod cache;
mod chunk;
mod chunked;
mod codec;
mod decode;
mod encode;
mod error;
mod header;
mod limits;
mod meta;
mod options;
mod table;
mod unchunk;

pub use bundle::{BUNDLE_SCHEMA_VERSION, SaveBundle, WorldState};
pub use cache::ChunkCache;
pub use chunk::{ANCHOR_BITS, MAX_CHUNK, MIN_CHUNK};
pub use chunked::ChunkStats;
pub use codec::{Compression, LZ4_MAX_RATIO};
pub use decode::{
    DecodeOptions, DecodedSave, SaveSummary, decode, decode_from, decode_owned, read_chunk_table,
    read_header, read_summary, read_thumbnail,
};
pub use encode::{EncodedSave, encode, encode_cached};
pub use options::{CompressWhen, EncodeOptions, LZ4_PAYS_AT_PERCENT, PayloadLayout};
pub use table::{ChunkEntry, ChunkTable};
pub use error::{FormatError, Section};
pub use header::{FORMAT_VERSION, HEADER_LEN, Header, MAGIC};
pub use limits::Limits;
pub use meta::{DEVICE_ID_KEY, DEVICE_NAME_KEY, SaveMeta, Timestamp};
