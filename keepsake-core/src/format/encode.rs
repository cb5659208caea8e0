//! Writing save files: version 2 (chunked payload) by default, version 1 on request.

use super::bundle::SaveBundle;
use super::cache::ChunkCache;
use super::chunked::{ChunkStats, ChunkedPayload, Part, encode_payload};
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::{HEADER_LEN, Header, SEALED_VERSION};
use super::limits::check_expansion;
use super::meta::SaveMeta;
use super::options::{
    CompressWhen, EncodeOptions, PayloadLayout, SAMPLE_LEN, compression_pays, length_within,
    sample_compressed_len,
};
use super::seal::{NONCE_LEN, SEAL_OVERHEAD, SealKey, Sealing, random_nonce, seal};
use std::io::Write;

/// A save file encoded in memory, section by section, ready to be written. It borrows the
/// bundle it was encoded from: chunks stored as is are written from the snapshot blob itself.
#[derive(Clone, Debug)]
pub struct EncodedSave<'a> {
    header: Header,
    header_bytes: [u8; HEADER_LEN],
    meta: Vec<u8>,
    thumbnail: Vec<u8>,
    /// Version 1: the whole payload. Version 2: the chunk table.
    payload: Vec<u8>,
    /// Version 2: the stored chunks after the table (shared with the encoder's cache, or
    /// borrowed from the bundle).
    chunks: Vec<Part<'a>>,
    stats: Option<ChunkStats>,
}

impl EncodedSave<'_> {
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

    /// What the chunked encoder did (`None` for a version-1 file).
    pub fn chunk_stats(&self) -> Option<ChunkStats> {
        self.stats
    }

    /// The file's bytes in order, without joining them: header, metadata, thumbnail, then the
    /// payload (version 1: one part; version 2: the chunk table, then each chunk).
    pub fn parts(&self) -> Vec<&[u8]> {
        let sections = [
            &self.header_bytes[..],
            &self.meta,
            &self.thumbnail,
            &self.payload,
        ];
        sections
            .into_iter()
            .chain(self.chunks.iter().map(Part::bytes))
            .collect()
    }

    /// Writes the whole file to `writer`, part after part.
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
/// section; the bundle is postcard-encoded, then stored as [`EncodeOptions`] say: by default in
/// content-defined chunks, each compressed when that pays (format version 2), or as one block
/// (version 1, [`PayloadLayout::Whole`]). Every section and chunk gets a CRC-32 and the header
/// a CRC-32 of its own.
///
/// This compresses every chunk; [`encode_cached`] reuses the chunks of earlier saves.
///
/// ```
/// use keepsake_core::{SlotId, format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Quick).with_title("Docks");
/// let bundle = SaveBundle::new(WorldState { tick: 42, ecs_blob: vec![1, 2, 3], state_hash: 9 });
/// let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())?.to_vec();
///
/// let decoded = format::decode(&bytes, &DecodeOptions::default())?;
/// assert_eq!(decoded.meta, meta);
/// assert_eq!(decoded.bundle, bundle);
/// # Ok::<(), keepsake_core::format::FormatError>(())
/// ```
pub fn encode<'a>(
    meta: &SaveMeta,
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
) -> Result<EncodedSave<'a>, FormatError> {
    encode_cached(meta, bundle, options, &ChunkCache::new())
}

/// Like [`encode`], taking every chunk an earlier save through `cache` stored from it, and
/// keeping the chunks of this one there for the next: a save of a world that changed a little
/// checksums only the chunks around the changes. Under [`CompressWhen::ItPays`] (the default)
/// those are stored as is, and compressed by the first later save that finds them unchanged:
/// chunks that change every save are never compressed, the rest once. The file decodes to the
/// same bundle as the one [`encode`] writes; through an empty cache it is that file byte for
/// byte. (Version-1 files do not use the cache.)
///
/// Sealed saves ([`EncodeOptions::seal`]) use the cache the same way: it keeps the chunks'
/// compressed plaintext, and each save seals its payload anew, under a fresh nonce.
pub fn encode_cached<'a>(
    meta: &SaveMeta,
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
    cache: &ChunkCache,
) -> Result<EncodedSave<'a>, FormatError> {
    let seal = match options.seal {
        Sealing::Off => None,
        Sealing::Key(key) => Some((key, random_nonce()?)),
    };
    encode_with(meta, bundle, options, cache, seal)
}

/// Like [`encode`], sealing (when [`EncodeOptions::seal`] says so) under `nonce` instead of a
/// random one, so that a file is the same byte for byte every time: for golden files and fuzz
/// seeds only. A game must never use it: two saves sealed under one key and one nonce let
/// whoever holds both forge saves and read the difference of their payloads. Built only with
/// the `golden-files` feature, which the crates' tests turn on and a game never needs.
#[cfg(feature = "golden-files")]
pub fn encode_with_fixed_nonce<'a>(
    meta: &SaveMeta,
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
    nonce: [u8; NONCE_LEN],
) -> Result<EncodedSave<'a>, FormatError> {
    let seal = match options.seal {
        Sealing::Off => None,
        Sealing::Key(key) => Some((key, nonce)),
    };
    encode_with(meta, bundle, options, &ChunkCache::new(), seal)
}

/// [`encode_cached`] with the key and nonce a sealed file is sealed with (`None`: unsealed).
///
/// A file that would decode to more than [`MAX_EXPANSION`](super::MAX_EXPANSION) bytes per
/// byte of it (a large world of identical values, compressed) is written again with its
/// payload stored as is: readers refuse the compressed one as a decompression bomb
/// ([`FormatError::ExpandsTooFar`]), and a save this build writes must read back.
fn encode_with<'a>(
    meta: &SaveMeta,
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
    cache: &ChunkCache,
    seal: Option<(SealKey, [u8; NONCE_LEN])>,
) -> Result<EncodedSave<'a>, FormatError> {
    let encoded = encode_once(meta, bundle, options, cache, seal)?;
    if options.compression == Compression::None || check_expansion(encoded.header()).is_ok() {
        return Ok(encoded);
    }
    let stored = EncodeOptions {
        compression: Compression::None,
        ..*options
    };
    // A cache of its own: this save's chunks stored as is are no use to the next save.
    encode_once(meta, bundle, &stored, &ChunkCache::new(), seal)
}

/// [`encode_with`] under `options` as given.
fn encode_once<'a>(
    meta: &SaveMeta,
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
    cache: &ChunkCache,
    seal: Option<(SealKey, [u8; NONCE_LEN])>,
) -> Result<EncodedSave<'a>, FormatError> {
    let limits = &options.limits;
    let meta_bytes = postcard::to_stdvec(meta).map_err(|source| FormatError::Encode {
        section: Section::Metadata,
        source,
    })?;
    let thumbnail = meta.thumbnail.clone().unwrap_or_default();
    let meta_len = length_within(Section::Metadata, meta_bytes.len(), limits.max_meta)?;
    let thumbnail_len = length_within(Section::Thumbnail, thumbnail.len(), limits.max_thumbnail)?;
    let payload = match (options.layout, seal) {
        (PayloadLayout::Chunked, _) => encode_payload(bundle, options, cache)?,
        (PayloadLayout::Whole, None) => whole_payload(bundle, options)?,
        (PayloadLayout::Whole, Some(_)) => return Err(FormatError::SealNeedsChunkedLayout),
    };
    let mut header = Header {
        version: options.layout.format_version(),
        compression: payload.codec,
        meta_len,
        thumbnail_len,
        payload_len: payload.stored_len,
        payload_uncompressed_len: payload.uncompressed_len,
        meta_crc: crc32fast::hash(&meta_bytes),
        thumbnail_crc: crc32fast::hash(&thumbnail),
        // Version 2: the table's CRC (each chunk has its own in the table).
        payload_crc: crc32fast::hash(&payload.table),
    };
    let stats = payload.stats;
    let payload = match seal {
        Some((key, nonce)) => {
            let sealing = Sealed {
                key: &key,
                nonce,
                meta: &meta_bytes,
                thumbnail: &thumbnail,
            };
            seal_payload(&mut header, payload, sealing)?
        }
        None => payload,
    };
    Ok(EncodedSave {
        header_bytes: header.to_bytes(),
        header,
        meta: meta_bytes,
        thumbnail,
        payload: payload.table,
        chunks: payload.chunks,
        stats: (options.layout == PayloadLayout::Chunked).then_some(stats),
    })
}

/// What a sealed payload is sealed with and authenticates.
struct Sealed<'s> {
    key: &'s SealKey,
    nonce: [u8; NONCE_LEN],
    meta: &'s [u8],
    thumbnail: &'s [u8],
}

/// Seals a chunked `payload` (table and chunks) into one part, `nonce | ciphertext | tag`, and
/// makes `header` a version-3 header for it (its payload CRC over the sealed bytes, so that a
/// reader tells disk damage from a broken seal).
fn seal_payload<'a>(
    header: &mut Header,
    payload: ChunkedPayload<'a>,
    sealing: Sealed<'_>,
) -> Result<ChunkedPayload<'a>, FormatError> {
    let stored = payload.stored_len as usize + SEAL_OVERHEAD;
    header.version = SEALED_VERSION;
    header.payload_len = length_within(Section::Payload, stored, u32::MAX)?;
    let associated = header.seal_associated_data(sealing.meta, sealing.thumbnail);
    let plaintext: Vec<&[u8]> = std::iter::once(&payload.table[..])
        .chain(payload.chunks.iter().map(Part::bytes))
        .collect();
    let sealed = seal(sealing.key, sealing.nonce, &associated, &plaintext)?;
    header.payload_crc = crc32fast::hash(&sealed);
    Ok(ChunkedPayload {
        table: sealed,
        chunks: Vec::new(),
        stored_len: header.payload_len,
        ..payload
    })
}

/// A version-1 payload, in the shape of a chunked one: the whole stored payload as its "table"
/// and no chunks.
fn whole_payload(
    bundle: &SaveBundle,
    options: &EncodeOptions,
) -> Result<ChunkedPayload<'static>, FormatError> {
    let raw = postcard::to_stdvec(bundle).map_err(|source| FormatError::Encode {
        section: Section::Payload,
        source,
    })?;
    let uncompressed_len = length_within(
        Section::Payload,
        raw.len(),
        options.limits.max_payload_uncompressed,
    )?;
    let (codec, payload) = store_payload(raw, options);
    Ok(ChunkedPayload {
        codec,
        stored_len: length_within(Section::Payload, payload.len(), u32::MAX)?,
        table: payload,
        chunks: Vec::new(),
        uncompressed_len,
        stats: ChunkStats::default(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::options::{SAMPLE_WINDOW_LEN, SAMPLE_WINDOWS};
    use crate::format::test_bytes::noise;

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

        let options = EncodeOptions {
            layout: PayloadLayout::Whole,
            ..Default::default()
        };
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
