//! Writing save files.

use super::bundle::SaveBundle;
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::{FORMAT_VERSION, HEADER_LEN, Header};
use super::limits::{Limits, check};
use super::meta::SaveMeta;
use std::io::Write;

/// How [`encode`] writes a file.
///
/// ```
/// use bevy_keepsake::format::{Compression, CompressWhen, EncodeOptions};
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
}

/// When the codec of [`EncodeOptions::compression`] ([`Compression::Lz4`] by default) is applied
/// to a payload.
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
    #[default]
    ItPays,
}

/// [`CompressWhen::ItPays`] keeps LZ4 only when the compressed payload is at most this share
/// (in percent) of the raw one: a smaller saving does not repay the compression time on a
/// fast disk nor the decompression time of every load.
pub const LZ4_PAYS_AT_PERCENT: usize = 80;

/// How many windows of a large payload are compressed to judge it.
const SAMPLE_WINDOWS: usize = 4;
/// Each window is a quarter of LZ4's 64 KB match distance: long enough to find the repeats that
/// make game data compress, short enough that the sample costs a few percent of a megabyte.
const SAMPLE_WINDOW_LEN: usize = 16 << 10;
/// Payloads up to this size are judged by compressing them whole (as cheap as the sample);
/// larger ones by the sample first.
const SAMPLE_LEN: usize = SAMPLE_WINDOWS * SAMPLE_WINDOW_LEN;

/// A save file encoded in memory, section by section, ready to be written.
#[derive(Clone, Debug)]
pub struct EncodedSave {
    header: Header,
    header_bytes: [u8; HEADER_LEN],
    meta: Vec<u8>,
    thumbnail: Vec<u8>,
    payload: Vec<u8>,
}

impl EncodedSave {
    /// The header that will be written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Total size of the file in bytes.
    pub fn len(&self) -> u64 {
        self.header.file_len()
    }

    /// Whether the file is empty (never: a save file always has a header).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The file's four sections in order: header, metadata, thumbnail, payload.
    pub fn parts(&self) -> [&[u8]; 4] {
        [
            &self.header_bytes,
            &self.meta,
            &self.thumbnail,
            &self.payload,
        ]
    }

    /// Writes the whole file to `writer`, section after section.
    pub fn write_to<W: Write>(&self, mut writer: W) -> Result<(), FormatError> {
        for part in self.parts() {
            writer.write_all(part).map_err(FormatError::write)?;
        }
        Ok(())
    }

    /// The whole file as one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        self.parts().concat()
    }
}

/// Encodes `meta` and `bundle` into a save file.
///
/// The metadata is postcard-encoded and stored as is; the thumbnail (if any) follows in its own
/// section; the bundle is postcard-encoded, then compressed as [`EncodeOptions`] say (the
/// header's codec byte records whether it was). Every section gets a CRC32 and the header a
/// CRC32 of its own.
///
/// ```
/// use bevy_keepsake::{SlotId, format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Quick).with_title("Docks");
/// let bundle = SaveBundle::new(WorldState { tick: 42, ecs_blob: vec![1, 2, 3], state_hash: 9 });
/// let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())?.to_vec();
///
/// let decoded = format::decode(&bytes, &DecodeOptions::default())?;
/// assert_eq!(decoded.meta, meta);
/// assert_eq!(decoded.bundle, bundle);
/// # Ok::<(), bevy_keepsake::format::FormatError>(())
/// ```
pub fn encode(
    meta: &SaveMeta,
    bundle: &SaveBundle,
    options: &EncodeOptions,
) -> Result<EncodedSave, FormatError> {
    let limits = &options.limits;
    let meta_bytes = postcard::to_stdvec(meta).map_err(|source| FormatError::Encode {
        section: Section::Metadata,
        source,
    })?;
    let thumbnail = meta.thumbnail.clone().unwrap_or_default();
    let raw_payload = postcard::to_stdvec(bundle).map_err(|source| FormatError::Encode {
        section: Section::Payload,
        source,
    })?;

    let meta_len = length_within(Section::Metadata, meta_bytes.len(), limits.max_meta)?;
    let thumbnail_len = length_within(Section::Thumbnail, thumbnail.len(), limits.max_thumbnail)?;
    let payload_uncompressed_len = length_within(
        Section::Payload,
        raw_payload.len(),
        limits.max_payload_uncompressed,
    )?;

    let (compression, payload) = store_payload(raw_payload, options);
    let payload_len = length_within(Section::Payload, payload.len(), u32::MAX)?;

    let header = Header {
        version: FORMAT_VERSION,
        compression,
        meta_len,
        thumbnail_len,
        payload_len,
        payload_uncompressed_len,
        meta_crc: crc32fast::hash(&meta_bytes),
        thumbnail_crc: crc32fast::hash(&thumbnail),
        payload_crc: crc32fast::hash(&payload),
    };
    Ok(EncodedSave {
        header_bytes: header.to_bytes(),
        header,
        meta: meta_bytes,
        thumbnail,
        payload,
    })
}

/// The codec the payload is stored with, and the payload as stored.
fn store_payload(raw: Vec<u8>, options: &EncodeOptions) -> (Compression, Vec<u8>) {
    let codec = options.compression;
    if codec == Compression::None {
        return (Compression::None, raw);
    }
    if options.compress_when == CompressWhen::ItPays
        && raw.len() > SAMPLE_LEN
        && !compression_pays(sample_compressed_len(codec, &raw), SAMPLE_LEN)
    {
        return (Compression::None, raw);
    }
    let compressed = codec.compress(&raw);
    match options.compress_when {
        CompressWhen::ItPays if !compression_pays(compressed.len(), raw.len()) => {
            (Compression::None, raw)
        }
        _ => (codec, compressed),
    }
}

/// Whether `compressed` bytes out of `raw` are a saving worth decompressing on every load.
fn compression_pays(compressed: usize, raw: usize) -> bool {
    compressed * 100 <= raw * LZ4_PAYS_AT_PERCENT
}

/// The compressed size of [`SAMPLE_WINDOWS`] windows spread evenly over `raw` (first and last
/// included), each compressed on its own by `codec`; `raw` must be longer than [`SAMPLE_LEN`].
fn sample_compressed_len(codec: Compression, raw: &[u8]) -> usize {
    let last_start = raw.len() - SAMPLE_WINDOW_LEN;
    (0..SAMPLE_WINDOWS)
        .map(|window| {
            let start = last_start * window / (SAMPLE_WINDOWS - 1);
            codec.compress(&raw[start..start + SAMPLE_WINDOW_LEN]).len()
        })
        .sum()
}

/// Converts a section length to the `u32` the header stores, refusing it over `limit`.
fn length_within(section: Section, len: usize, limit: u32) -> Result<u32, FormatError> {
    let too_large = FormatError::SizeLimit {
        section,
        size: len as u64,
        limit: limit.into(),
    };
    let len = u32::try_from(len).map_err(|_| too_large)?;
    check(section, len, limit)?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes LZ4 cannot shrink (xorshift output).
    fn noise(len: usize) -> Vec<u8> {
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

    #[test]
    fn a_payload_whose_sample_misleads_is_judged_on_the_whole_result() {
        // Noise everywhere except 128 KB of zeros around each sampled window: the sample says
        // compress, the whole result (about 90 % of the raw size) says it does not pay.
        let len = 4 << 20;
        let mut raw = noise(len);
        let last_start = len - SAMPLE_WINDOW_LEN;
        for window in 0..SAMPLE_WINDOWS {
            let at = last_start * window / (SAMPLE_WINDOWS - 1);
            let region = at.saturating_sub(64 << 10)..(at + (64 << 10)).min(len);
            raw[region].fill(0);
        }
        assert!(compression_pays(
            sample_compressed_len(Compression::Lz4, &raw),
            SAMPLE_LEN
        ));

        let options = EncodeOptions::default();
        let (codec, stored) = store_payload(raw.clone(), &options);
        assert_eq!(codec, Compression::None);
        assert_eq!(stored, raw);
    }

    #[test]
    fn noise_is_refused_by_the_sample_alone() {
        assert!(!compression_pays(
            sample_compressed_len(Compression::Lz4, &noise(1 << 20)),
            SAMPLE_LEN
        ));
    }
}
