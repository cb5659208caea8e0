//! How a file is written: [`EncodeOptions`], and the judgement of when compressing pays.

use super::codec::Compression;
use super::error::{FormatError, Section};
use super::limits::{Limits, check};
use super::seal::Sealing;

/// How [`encode`](super::encode) writes a file.
///
/// ```
/// use keepsake_core::format::{Compression, CompressWhen, EncodeOptions};
///
/// let options = EncodeOptions { compression: Compression::None, ..Default::default() };
/// assert_eq!(options.limits, Default::default());
/// assert_eq!(EncodeOptions::default().compress_when, CompressWhen::ItPays);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// The codec the payload may be stored with (LZ4 by default).
    pub compression: Compression,
    /// Whether LZ4 is used for every payload or only for those it shrinks enough to be worth its
    /// cost (the default); ignored with [`Compression::None`].
    pub compress_when: CompressWhen,
    /// The encoder refuses to write a file the reader would refuse under these limits.
    pub limits: Limits,
    /// How the payload is laid out: in chunks (format version 2, the default) or whole (format
    /// version 1, for readers built before version 2).
    pub layout: PayloadLayout,
    /// Whether the payload is sealed under a key (format version 3, chunked layout only) or
    /// written as is ([`Sealing::Off`], the default).
    pub seal: Sealing,
}

/// How [`encode`](super::encode) lays out the payload, which decides the file's format version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PayloadLayout {
    /// Format version 2: content-defined chunks of about 64 KiB, each compressed (or not) and
    /// checksummed on its own, behind a chunk table. Chunks that did not change since the last
    /// save are taken from a [`ChunkCache`](super::ChunkCache) instead of being compressed and
    /// checksummed again, and loads decompress the chunks in parallel.
    #[default]
    Chunked,
    /// Format version 1: the payload as one block, readable by every build (a build from
    /// before version 2 refuses version-2 files as newer).
    Whole,
}

impl PayloadLayout {
    /// The format version a file of this layout has.
    pub fn format_version(self) -> u16 {
        match self {
            PayloadLayout::Whole => 1,
            PayloadLayout::Chunked => 2,
        }
    }
}

/// When the codec of [`EncodeOptions::compression`] ([`Compression::Lz4`] by default) is applied
/// to a payload (format version 1) or to each chunk of it (version 2).
///
/// Compressing costs more main-memory passes than writing: on a fast SSD, LZ4 on 1 MB takes
/// longer than writing the megabyte, so it pays only when it shrinks the file a lot (smaller
/// files, faster on slow disks and cloud sync). The codec a file was written with is in its
/// header, so files written either way read the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CompressWhen {
    /// Every payload is compressed.
    Always,
    /// A payload is compressed only when the codec shrinks it to at most
    /// [`LZ4_PAYS_AT_PERCENT`] % of its size, judged on a sample of a few spread-out windows
    /// for large payloads (so an incompressible payload costs a sample, not a full compression)
    /// and then on the whole compressed result. Otherwise it is stored as is (codec `0`).
    ///
    /// In format version 2 each chunk is judged on its own; and with a warm
    /// [`ChunkCache`](super::ChunkCache) a chunk that changed since the last save is stored as
    /// is and compressed by the first later save that finds it unchanged: compressing what
    /// changes every save would cost a compression per save (see
    /// [`encode_cached`](super::encode_cached)).
    #[default]
    ItPays,
}

/// [`CompressWhen::ItPays`] keeps LZ4 only when the compressed payload is at most this share
/// (in percent) of the raw one: a smaller saving does not repay the compression time on a
/// fast disk nor the decompression time of every load.
pub const LZ4_PAYS_AT_PERCENT: usize = 80;

/// How many windows of a large payload are compressed to judge it.
pub(crate) const SAMPLE_WINDOWS: usize = 4;
/// Each window is a quarter of LZ4's 64 KB match distance: long enough to find the repeats that
/// make game data compress, short enough that the sample costs a few percent of a megabyte.
pub(crate) const SAMPLE_WINDOW_LEN: usize = 16 << 10;
/// Payloads up to this size are judged by compressing them whole (as cheap as the sample);
/// larger ones by the sample first.
pub(crate) const SAMPLE_LEN: usize = SAMPLE_WINDOWS * SAMPLE_WINDOW_LEN;

/// Whether `compressed` bytes out of `raw` are a saving worth decompressing on every load.
pub(crate) fn compression_pays(compressed: usize, raw: usize) -> bool {
    compressed * 100 <= raw * LZ4_PAYS_AT_PERCENT
}

/// The compressed size of [`SAMPLE_WINDOWS`] windows spread evenly over `raw` (first and last
/// included), each compressed on its own by `codec`; `raw` must be longer than [`SAMPLE_LEN`].
pub(crate) fn sample_compressed_len(codec: Compression, raw: &[u8]) -> usize {
    let last_start = raw.len() - SAMPLE_WINDOW_LEN;
    (0..SAMPLE_WINDOWS)
        .map(|window| {
            let start = last_start * window / (SAMPLE_WINDOWS - 1);
            codec.compress(&raw[start..start + SAMPLE_WINDOW_LEN]).len()
        })
        .sum()
}

/// Converts a section length to the `u32` the header stores, refusing it over `limit`.
pub(crate) fn length_within(section: Section, len: usize, limit: u32) -> Result<u32, FormatError> {
    let too_large = FormatError::SizeLimit {
        section,
        size: len as u64,
        limit: limit.into(),
    };
    let len = u32::try_from(len).map_err(|_| too_large)?;
    check(section, len, limit)?;
    Ok(len)
}
