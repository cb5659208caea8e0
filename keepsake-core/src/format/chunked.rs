//! The payload of format version 2, written: the bundle's postcard bytes cut into
//! content-defined chunks, each stored compressed or as is, taken from the [`ChunkCache`] when
//! an earlier save stored the same bytes.
//!
//! The bundle is never copied into one postcard buffer: its bytes are three segments, the
//! postcard encoding of the fields before the snapshot blob (with the blob's length), the blob
//! itself, and the fields after it. Their concatenation is exactly `postcard(bundle)`, so a
//! reader joins the chunks and decodes them as in version 1. A chunk never spans two segments:
//! the first one holds the game tick, which changes every save, and must not make the blob's
//! first chunk differ.

use super::bundle::SaveBundle;
use super::cache::{ChunkCache, ChunkKey, StoredChunk};
use super::chunk::cut;
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::options::{
    CompressWhen, EncodeOptions, SAMPLE_LEN, SAMPLE_WINDOW_LEN, compression_pays, length_within,
};
use super::pieces::group;
use super::table::{ChunkEntry, table_len, write_table};
use std::sync::Arc;

/// What one chunked encode did, for tests, benchmarks and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Chunks in the payload.
    pub chunks: usize,
    /// Chunks taken from the cache, neither compressed nor checksummed again.
    pub reused: usize,
    /// Chunks stored compressed.
    pub compressed: usize,
    /// Uncompressed bytes of the chunks that were not in the cache, or in it waiting to be
    /// compressed: what this save checksummed (and compressed, see `codec_bytes`).
    pub new_bytes: usize,
    /// Uncompressed bytes this save ran through the codec.
    pub codec_bytes: usize,
}

/// A stored chunk's bytes: compressed (shared with the cache), or the chunk as is, borrowed
/// from the bundle's blob (no copy) or copied from the few bytes around it.
#[derive(Clone, Debug)]
pub(crate) enum Part<'a> {
    Shared(Arc<[u8]>),
    Borrowed(&'a [u8]),
}

impl Part<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Part::Shared(bytes) => bytes,
            Part::Borrowed(bytes) => bytes,
        }
    }
}

/// A version-2 payload ready to be written: its table, then its chunks.
#[derive(Clone, Debug)]
pub(crate) struct ChunkedPayload<'a> {
    /// The codec of its compressed chunks ([`Compression::None`] when none is).
    pub(crate) codec: Compression,
    /// The chunk count and table (the header's payload CRC covers these bytes).
    pub(crate) table: Vec<u8>,
    /// The stored chunks, in order.
    pub(crate) chunks: Vec<Part<'a>>,
    /// The bundle's postcard length.
    pub(crate) uncompressed_len: u32,
    /// Table and chunks.
    pub(crate) stored_len: u32,
    pub(crate) stats: ChunkStats,
}

/// The bundle's postcard bytes as three segments (see the module docs).
fn segments(bundle: &SaveBundle) -> Result<[Vec<u8>; 2], FormatError> {
    let encode_error = |source| FormatError::Encode {
        section: Section::Payload,
        source,
    };
    let world = &bundle.world;
    // A `usize` is a varint in postcard, exactly as the length before a byte string is.
    let before = (bundle.schema_version, world.tick, world.ecs_blob.len());
    let after = (world.state_hash, &bundle.extras);
    Ok([
        postcard::to_stdvec(&before).map_err(encode_error)?,
        postcard::to_stdvec(&after).map_err(encode_error)?,
    ])
}

/// One chunk's bytes, and the hash that identifies them in the cache: the XXH3-128 of the bytes,
/// or (for a group of the snapshot's pieces) of its pieces' hashes.
struct Cut<'a> {
    raw: &'a [u8],
    hash: u128,
}

/// `segment` cut where its content says, each chunk hashed.
fn by_content(segment: &[u8]) -> Vec<Cut<'_>> {
    cut(segment)
        .into_iter()
        .map(|raw| Cut {
            raw,
            hash: xxhash_rust::xxh3::xxh3_128(raw),
        })
        .collect()
}

/// Cuts the bundle into chunks and stores each, from `cache` when it holds it. The blob is cut
/// into groups of the pieces its snapshot layer made when they describe it ([`BlobPieces`]),
/// else by content.
///
/// [`BlobPieces`]: super::BlobPieces
pub(crate) fn encode_payload<'a>(
    bundle: &'a SaveBundle,
    options: &EncodeOptions,
    cache: &ChunkCache,
) -> Result<ChunkedPayload<'a>, FormatError> {
    let [before, after] = segments(bundle)?;
    let blob = &bundle.world.ecs_blob[..];
    let total = before.len() + blob.len() + after.len();
    let uncompressed_len = length_within(
        Section::Payload,
        total,
        options.limits.max_payload_uncompressed,
    )?;
    let mut cuts = by_content(&before);
    match bundle.blob_pieces().describing(blob) {
        Some(pieces) => cuts.extend(group(pieces).into_iter().map(|group| Cut {
            raw: &blob[group.start..group.end],
            hash: group.hash,
        })),
        None => cuts.extend(by_content(blob)),
    }
    cuts.extend(by_content(&after));
    let (save, warm) = cache.begin();
    let stored = store_chunks(&cuts, options, cache, (save, warm));
    cache.end();
    let (entries, chunks): (Vec<ChunkEntry>, Vec<Part<'a>>) = stored
        .iter()
        .zip(&cuts)
        .map(|(chunk, cut)| (entry(chunk, cut.raw.len()), part(chunk, cut.raw, blob)))
        .unzip();
    let table = write_table(&entries);
    let data: usize = chunks.iter().map(|chunk| chunk.bytes().len()).sum();
    let stored_len = length_within(Section::Payload, table_len(entries.len()) + data, u32::MAX)?;
    let compressed = entries
        .iter()
        .filter(|e| e.codec != Compression::None)
        .count();
    let reused = stored.iter().filter(|chunk| chunk.reused).count();
    let bytes_where = |keep: fn(&Stored) -> bool| -> usize {
        cuts.iter()
            .zip(&stored)
            .filter(|(_, chunk)| keep(chunk))
            .map(|(cut, _)| cut.raw.len())
            .sum()
    };
    let new_bytes = bytes_where(|chunk| !chunk.reused);
    let codec_bytes = bytes_where(|chunk| chunk.compressed_now);
    Ok(ChunkedPayload {
        codec: if compressed > 0 {
            options.compression
        } else {
            Compression::None
        },
        table,
        chunks,
        uncompressed_len,
        stored_len,
        stats: ChunkStats {
            chunks: cuts.len(),
            reused,
            compressed,
            new_bytes,
            codec_bytes,
        },
    })
}

fn entry(chunk: &Stored, uncompressed_len: usize) -> ChunkEntry {
    ChunkEntry {
        // Within the payload's length, checked above.
        uncompressed_len: uncompressed_len as u32,
        stored_len: chunk
            .chunk
            .bytes
            .as_ref()
            .map_or(uncompressed_len, |b| b.len()) as u32,
        codec: chunk.chunk.codec,
        crc: chunk.chunk.crc,
    }
}

/// The bytes a chunk is written as: its compressed form, or the raw piece itself, borrowed when
/// it lies in `blob` (a chunk stored as is costs no copy).
fn part<'a>(chunk: &Stored, raw: &[u8], blob: &'a [u8]) -> Part<'a> {
    if let Some(bytes) = &chunk.chunk.bytes {
        return Part::Shared(Arc::clone(bytes));
    }
    let blob_range = blob.as_ptr_range();
    if blob_range.contains(&raw.as_ptr()) {
        let start = raw.as_ptr() as usize - blob.as_ptr() as usize;
        return Part::Borrowed(&blob[start..start + raw.len()]);
    }
    Part::Shared(raw.into())
}

/// New chunks up to this many bytes in all are compressed by the save that finds them, even
/// with a warm cache: about 0.4 ms of LZ4, and small saves (different worlds saved to the
/// slots of one profile) stay as small as version 1 wrote them.
const COMPRESS_NOW_UP_TO: usize = 128 << 10;

/// A chunk's stored form, whether it came from the cache as is, and whether this save ran it
/// through the codec.
struct Stored {
    chunk: StoredChunk,
    reused: bool,
    compressed_now: bool,
}

/// Each piece's stored form: from the cache, or compressed (or not) and checksummed now.
///
/// Under [`CompressWhen::ItPays`], once the cache holds an earlier save (`warm`), and the
/// chunks not in it are more than [`COMPRESS_NOW_UP_TO`] bytes, they are stored as is, only
/// checksummed, and compressed by the first later save that finds them unchanged. A chunk that is new is a change, and changed chunks tend to change again
/// (the rows of moving entities): compressing one costs a compression every save to shrink one
/// file. Scattered changes (1 % of the entities, at random) touch every chunk of the columns
/// they change: without this, such a save would compress those columns whole, every time.
fn store_chunks(
    cuts: &[Cut<'_>],
    options: &EncodeOptions,
    cache: &ChunkCache,
    (save, warm): (u64, bool),
) -> Vec<Stored> {
    let (codec, when) = (options.compression, options.compress_when);
    let keys: Vec<ChunkKey> = cuts
        .iter()
        .map(|cut| ChunkKey::new(cut.hash, cut.raw.len(), codec, when))
        .collect();
    let cached: Vec<Option<StoredChunk>> = keys.iter().map(|key| cache.get(key, save)).collect();
    let missing: Vec<&[u8]> = cuts
        .iter()
        .zip(&cached)
        .filter(|(_, hit)| hit.is_none())
        .map(|(cut, _)| cut.raw)
        .collect();
    let new_bytes: usize = missing.iter().map(|raw| raw.len()).sum();
    let defer = warm
        && codec != Compression::None
        && when == CompressWhen::ItPays
        && new_bytes > COMPRESS_NOW_UP_TO;
    let try_codec = codec != Compression::None && !defer && worth_trying(codec, when, &missing);
    let fresh = |raw: &[u8], key: ChunkKey, codec: Option<Compression>, deferred: bool| {
        let chunk = store_one(raw, codec, when, deferred);
        cache.insert(key, chunk.clone(), save);
        Stored {
            chunk,
            reused: false,
            compressed_now: codec.is_some(),
        }
    };
    cuts.iter()
        .map(|cut| cut.raw)
        .zip(keys)
        .zip(cached)
        .map(|((raw, key), hit)| match hit {
            // Unchanged since the save that stored it as is: compressed now, for good.
            Some(chunk) if chunk.deferred => fresh(raw, key, Some(codec), false),
            Some(chunk) => Stored {
                chunk,
                reused: true,
                compressed_now: false,
            },
            None if defer => fresh(raw, key, None, true),
            None => fresh(raw, key, try_codec.then_some(codec), false),
        })
        .collect()
}

/// Whether compressing the chunks not in the cache is worth a try: always under
/// [`CompressWhen::Always`]; under [`CompressWhen::ItPays`], when they are few (judged chunk by
/// chunk) or a sample of them shrinks enough, so that an incompressible world costs a sample,
/// not a compression of every chunk, on its first save.
fn worth_trying(codec: Compression, when: CompressWhen, missing: &[&[u8]]) -> bool {
    let new_bytes: usize = missing.iter().map(|raw| raw.len()).sum();
    if when == CompressWhen::Always || new_bytes <= 4 * SAMPLE_LEN {
        return true;
    }
    // The start of four chunks spread over the missing ones.
    let last = missing.len() - 1;
    let (sampled, compressed) = (0..4)
        .map(|window| missing[last * window / 3])
        .map(|raw| &raw[..raw.len().min(SAMPLE_WINDOW_LEN)])
        .fold((0, 0), |(raw, stored), window| {
            (raw + window.len(), stored + codec.compress(window).len())
        });
    compression_pays(compressed, sampled)
}

/// A chunk stored now: compressed when `codec` is given and (under `ItPays`) that pays.
fn store_one(
    raw: &[u8],
    codec: Option<Compression>,
    when: CompressWhen,
    deferred: bool,
) -> StoredChunk {
    let compressed = codec.map(|codec| (codec, codec.compress(raw)));
    match compressed {
        Some((codec, bytes))
            if when == CompressWhen::Always || compression_pays(bytes.len(), raw.len()) =>
        {
            StoredChunk {
                codec,
                crc: crc32fast::hash(&bytes),
                bytes: Some(bytes.into()),
                deferred,
            }
        }
        _ => StoredChunk {
            codec: Compression::None,
            crc: crc32fast::hash(raw),
            bytes: None,
            deferred,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::WorldState;

    #[test]
    fn the_segments_are_the_bundles_postcard_bytes() {
        let mut bundle = SaveBundle::new(WorldState {
            tick: 300_000_000_000,
            ecs_blob: vec![9; 70_000],
            state_hash: u64::MAX - 3,
        });
        bundle.extras.insert("quest".into(), vec![1, 2, 3]);
        let [before, after] = segments(&bundle).unwrap();
        let joined = [&before[..], &bundle.world.ecs_blob, &after].concat();
        assert_eq!(joined, postcard::to_stdvec(&bundle).unwrap());
    }
}
