//! The save file format: a fixed header, metadata, an optional thumbnail and a payload. Since
//! format version 2 the payload is cut into content-defined chunks, each compressed with LZ4 when
//! that shrinks it enough to be worth it ([`CompressWhen`]) and checksummed on its own, so that
//! a save of a world that changed a little compresses only the chunks around the changes
//! ([`ChunkCache`], [`encode_cached`]) and a load decompresses the chunks in parallel. Format
//! version 3 is version 2 sealed: the payload encrypted and authenticated under a key the game
//! holds ([`Sealing`], [`SealKey`]), its metadata still readable without the key.
//!
//! This layer is engine-free: it imports nothing from Bevy and can be used by tools that inspect
//! or convert save files.
//!
//! # Byte layout (format versions 1, 2 and 3)
//!
//! A file is four sections back to back: `header | metadata | thumbnail | payload`. All integers
//! are little-endian. CRCs are CRC-32 (IEEE 802.3, as computed by `crc32fast`). Where the
//! versions differ, the table says so; offsets marked "payload +" count from the payload's start,
//! and "v2" rows describe version 3's sealed content as well (its "chunked payload", once
//! opened). Unsealed saves are written as version 2 (or 1), sealed ones as version 3, so that
//! builds from before sealing refuse sealed files as newer instead of taking them for damaged.
//!
//! | offset | size | field | notes |
//! |-------:|-----:|-------|-------|
//! | 0  | 4 | magic | ASCII `KPSK` (`4B 50 53 4B`) |
//! | 4  | 2 | format version | `u16`, `1`, `2` or `3` (this build writes `2` unless told [`PayloadLayout::Whole`] (`1`) or to seal (`3`)); a reader refuses newer versions whose header CRC verifies |
//! | 6  | 1 | codec | `u8`, one of the codec bytes tabled under [`Compression`] (`0` stored, `1` LZ4 block without size prefix). v1: the payload's codec. v2, v3: the codec of the compressed chunks, `0` when every chunk is stored as is |
//! | 7  | 1 | flags | `u8`. v1, v2: no flag is defined, must be `0`. v3: must be `0x01` (bit 0, "sealed": AES-256-GCM, see the v3 payload rows); other bits are undefined |
//! | 8  | 4 | metadata length | `u32`, bytes of the metadata section |
//! | 12 | 4 | thumbnail length | `u32`, `0` when the save has no thumbnail |
//! | 16 | 4 | payload length | `u32`, bytes of the payload section as stored (v2: chunk table and chunks; v3: nonce, sealed chunk table and chunks, tag) |
//! | 20 | 4 | uncompressed payload length | `u32`, bytes of the postcard bundle (v1: equal to the payload length for codec `0`; v2, v3: the sum of the chunks' uncompressed lengths) |
//! | 24 | 4 | metadata CRC | over the metadata section |
//! | 28 | 4 | thumbnail CRC | over the thumbnail section (`0` when empty) |
//! | 32 | 4 | payload CRC | v1: over the payload as stored (before decompression). v2: over the chunk table (count and entries), whose entries hold each chunk's CRC. v3: over the whole payload section as stored (nonce, ciphertext, tag), so disk damage is told from a broken seal |
//! | 36 | 4 | header CRC | over bytes `0..36` |
//! | 40 | metadata length | metadata | [`SaveMeta`] in postcard, without its thumbnail; not encrypted in v3 (listings read it without the key) but authenticated |
//! | … | thumbnail length | thumbnail | PNG bytes, skipped by listings; v3: not encrypted, authenticated |
//! | … | payload length | payload (v1) | [`SaveBundle`] in postcard, then compressed by the codec (stored as is under codec `0`) |
//! | payload + 0 | 12 | nonce (v3) | AES-256-GCM nonce, drawn at random for each file |
//! | payload + 12 | payload length − 28 | sealed payload (v3) | a v2 payload (the rows below: chunk table, then chunks) encrypted with AES-256-GCM under the game's key and the nonce; associated data (authenticated, not encrypted): header bytes `0..24` ‖ metadata ‖ thumbnail. Once opened, the table's and the chunks' CRCs are not checked (the tag covers them; writers still fill them in) and chunk offsets count from payload + 12 |
//! | payload + length − 16 | 16 | tag (v3) | AES-GCM authentication tag over the associated data and the ciphertext |
//! | payload + 0 | 4 | chunk count `n` (v2) | `u32`; at most `uncompressed / 4096 + 16` |
//! | payload + 4 + 13·i | 4 | chunk `i`: uncompressed length (v2) | `u32`, never `0` |
//! | payload + 8 + 13·i | 4 | chunk `i`: stored length (v2) | `u32`, within what its codec can produce (see [`Compression`]) |
//! | payload + 12 + 13·i | 1 | chunk `i`: codec (v2) | `u8`: `0` stored as is, or the header's codec |
//! | payload + 13 + 13·i | 4 | chunk `i`: CRC (v2) | over the chunk's stored bytes |
//! | payload + 4 + 13·n | Σ stored lengths | chunks (v2) | each chunk's stored bytes, in table order; decompressed and joined, they are the [`SaveBundle`] in postcard, exactly as a v1 payload decompresses |
//!
//! The file ends exactly after the payload; trailing bytes are an error. Where chunks are cut is
//! the writer's choice (a reader only bounds their count). This writer never cuts across the
//! snapshot blob's ends: the bundle's fields before the blob (which hold the game tick) and
//! after it are chunks of their own. It cuts the blob at the pieces the snapshot layer made it
//! from ([`BlobPieces`], groups of whole pieces from 56 KiB, see `pieces.rs`) when the bundle
//! carries them and they describe its blob, else where the content says (a gear hash over
//! 64 bytes, see `chunk.rs`), at 56 KiB to 256 KiB, about 64 KiB on average.

//! # Reading order and limits
//!
//! A reader checks, in this order and each before the work it protects: magic → version `0` (no
//! format has it) → header CRC (before the version is trusted; every version keeps it, see below)
//! → version (a newer one is refused before anything else is interpreted, since its layout may
//! differ) → codec and flags → every length against the [`Limits`] in the reader's
//! [`DecodeOptions`], and the uncompressed length against what the codec can produce (its largest
//! expansion, tabled under [`Compression`]: LZ4 at most 255:1), and what the whole file decodes
//! to against the file's own length (at most [`MAX_EXPANSION`] bytes per byte of the file and
//! [`BUDGET_BASE`] more, else [`FormatError::ExpandsTooFar`]) → (when the payload is to be read)
//! the seal against the options: a sealed file needs a key ([`FormatError::SealedNeedsKey`]), an
//! unsealed one is refused by a reader with a key unless it accepts them
//! ([`FormatError::UnsealedRefused`], [`UnsealedSaves`]) → metadata CRC → thumbnail CRC →
//! payload (v3: the seal is opened in place; when it does not open, the payload CRC, checked
//! only then, tells disk damage ([`FormatError::ChecksumMismatch`]) from an edited byte or a
//! wrong key ([`FormatError::SealBroken`]); the opened v2 payload is read on as below. v1: its
//! CRC. v2: the chunk table fits the payload → the table's CRC → the chunk count within its
//! bound → each entry's codec and lengths → the chunks add up to the header's lengths) → (v2:
//! each chunk's CRC, a damaged chunk being [`FormatError::ChunkChecksumMismatch`] naming its
//! index and file offset; v3 skips them, the seal having authenticated every byte; then each
//! chunk's decompression into its own part of the output, on several threads for large
//! payloads) → decompression into a buffer of exactly the announced size →
//! postcard decoding that must consume every byte. Nothing is allocated from a length before
//! that length passed its checks, and readers grow buffers as data arrives rather than trusting
//! lengths. Listings ([`read_summary`], [`read_thumbnail`]) need no key: a sealed file's
//! metadata and thumbnail are read unauthenticated there (its CRCs still checked).
//! [`verify_from`] checks in the same order every checksum a load would (the seal with the
//! key, else the sealed bytes' CRC), stopping short of decompression and postcard: it tells an
//! intact backup from a damaged one.
//!
//! The seal authenticates the metadata, and with it the slot the save was written for
//! ([`SaveMeta::slot`]); this layer does not know file names, so the slot store is what refuses
//! a sealed save found under another slot's name (`StoreError::SealedForAnotherSlot`). Nothing
//! in a file says which generation of its slot it is, so a seal cannot tell an older save put
//! back in place of a newer one.
//!
//! A length within the limits is still only a claim, and a count of small items a larger claim
//! still (a five-byte `extras` entry is a hundred-byte B-tree entry). So each read holds one
//! [`Budget`], from [`Limits::budget`]: **[`BUDGET_PER_INPUT_BYTE`] (4) bytes per byte the file
//! decodes to (its metadata, thumbnail and payload as announced) and [`BUDGET_BASE`] (1 MiB)**,
//! the input counted at most as large as the limits allow. Everything a read allocates for a
//! length or a count is paid from it before it is allocated: the payload's decompressed buffer,
//! a sealed payload's copy, the chunk table's entries and the jobs that decompress them, each
//! `extras` entry of the metadata and of the bundle, the thumbnail's and the snapshot blob's
//! copies. What asks for more is [`FormatError::OverBudget`], naming it. A legitimate file
//! takes about two bytes per decoded byte (the payload once, the blob moved out of it or
//! copied once); the world blob's readers (see `snapshot::blob`) keep to the same rule with a
//! budget of the blob's size.
//!
//! Every reading function ([`decode`], [`decode_owned`], [`decode_from`], [`read_summary`],
//! [`read_thumbnail`], [`read_chunk_table`], [`verify_from`]) takes `&DecodeOptions`: whatever a reader needs
//! besides the limits (such as the key for sealed saves) is added there, not to the functions'
//! signatures.
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

mod budget;
mod bundle;
mod cache;
mod chunk;
mod chunked;
mod clock;
mod codec;
mod decode;
mod encode;
mod error;
mod header;
mod limits;
mod meta;
mod options;
pub(crate) mod pieces;
mod seal;
mod sections;
mod table;
mod unchunk;
mod verify;
mod versions;

pub use budget::{
    BUDGET_BASE, BUDGET_PER_INPUT_BYTE, Budget, MAX_EXPANSION, OverBudget, max_decoded_len,
};
pub use bundle::{BUNDLE_SCHEMA_VERSION, SaveBundle, WorldState};
pub use cache::ChunkCache;
pub use chunk::{ANCHOR_BITS, MAX_CHUNK, MIN_CHUNK};
pub use chunked::ChunkStats;
pub use clock::{Clock, SystemClock};
pub use codec::{Compression, LZ4_MAX_RATIO};
pub use decode::{
    DecodeOptions, DecodedSave, SaveSummary, decode, decode_from, decode_owned, read_chunk_table,
    read_header, read_summary, read_thumbnail,
};
#[cfg(feature = "golden-files")]
pub use encode::encode_with_fixed_nonce;
pub use encode::{EncodedSave, encode, encode_cached};
pub use error::{FormatError, Section};
pub use header::{FORMAT_VERSION, HEADER_LEN, Header, MAGIC, SEALED_VERSION};
pub use limits::Limits;
pub use meta::{
    CRASH_EXTRA, CrashCause, DEVICE_ID_EXTRA, DEVICE_NAME_EXTRA, FOLLOWS_EXTRA, Lineage,
    MAX_FOLLOWS, OVER_UNREAD_EXTRA, SaveMeta, Timestamp,
};
pub use options::{CompressWhen, EncodeOptions, LZ4_PAYS_AT_PERCENT, PayloadLayout};
pub use pieces::BlobPieces;
pub use seal::{SealKey, SealKeyError, Sealing, UnsealedSaves};
pub use table::{ChunkEntry, ChunkTable, declared_table_len};
pub use verify::verify_from;
pub use versions::{MAX_VERSIONS, VERSION_MARK, Versions};

/// Bytes for the format's unit tests.
#[cfg(test)]
pub(crate) mod test_bytes {
    /// Bytes LZ4 cannot shrink (xorshift output).
    pub(crate) fn noise(len: usize) -> Vec<u8> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }
}
