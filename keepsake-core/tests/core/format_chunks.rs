//! Format version 2: the chunk cache makes a save's work follow what changed, and forged chunk
//! tables are refused with typed errors before anything is allocated from them.

use crate::common;

use common::alloc::peak_allocation;
use common::fixtures::{self, Rng};
use keepsake_core::SlotId;
use keepsake_core::format::{
    self, ChunkCache, ChunkStats, CompressWhen, Compression, DecodeOptions, EncodeOptions,
    FormatError, Header, PayloadLayout, SaveBundle, SaveMeta, Section, WorldState,
};

/// A game-shaped blob that LZ4 shrinks enough to be compressed by default (a real world's blob
/// does: names, enum tags, small integers repeat).
fn world_blob(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(len + 64);
    let mut entity = 0u32;
    while out.len() < len {
        out.extend_from_slice(&entity.to_le_bytes());
        out.extend_from_slice(&(rng.below(64) as f32).to_le_bytes());
        out.extend_from_slice(&[0, 0, 0x80, 0x3F, 1, 0, 100, 0]);
        out.extend_from_slice(["goblin", "archer", "wolf"][rng.below(3) as usize].as_bytes());
        entity += 1;
    }
    out.truncate(len);
    out
}

fn bundle(blob: Vec<u8>, tick: u64) -> SaveBundle {
    SaveBundle::new(WorldState {
        tick,
        ecs_blob: blob,
        state_hash: tick * 7,
    })
}

/// `blob` with about 1 % of its bytes changed: 16-byte values rewritten in place (half the
/// budget; `spread` of the blob, from its middle: 1.0 is anywhere), one run of bytes inserted
/// (a spawn) and one removed (a despawn), which shift everything after them.
fn changed(blob: &[u8], spread: f64, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = blob.to_vec();
    let budget = blob.len() / 100;
    let span = (blob.len() as f64 * spread) as u64 - 64;
    let from = (blob.len() as u64 - span) / 2;
    for _ in 0..budget / 2 / 16 {
        let at = (from + rng.below(span)) as usize;
        out[at..at + 16]
            .iter_mut()
            .for_each(|b| *b = b.wrapping_add(1));
    }
    let insert_at = rng.below(out.len() as u64) as usize;
    out.splice(insert_at..insert_at, world_blob(budget / 4, seed));
    let remove_at = rng.below((out.len() - budget) as u64) as usize;
    out.drain(remove_at..remove_at + budget / 4);
    out
}

/// A first save through `cache`, then one after a 1 % change: their chunk stats, and the second
/// save's bundle and file.
fn two_saves(cache: &ChunkCache, spread: f64) -> (ChunkStats, ChunkStats, SaveBundle, Vec<u8>) {
    let meta = SaveMeta::new(SlotId::Auto(0));
    let options = EncodeOptions::default();
    let first = bundle(world_blob(6_600_000, 1), 1);
    let full = format::encode_cached(&meta, &first, &options, cache).unwrap();
    let second = bundle(changed(&first.world.ecs_blob, spread, 2), 2);
    let encoded = format::encode_cached(&meta, &second, &options, cache).unwrap();
    let stats = (full.chunk_stats().unwrap(), encoded.chunk_stats().unwrap());
    println!(
        "spread {spread}: full {:?}\n  1 % changed {:?}",
        stats.0, stats.1
    );
    let bytes = encoded.to_vec();
    drop(encoded);
    (stats.0, stats.1, second, bytes)
}

#[test]
fn a_save_after_a_clustered_one_percent_change_checksums_few_chunks() {
    let cache = ChunkCache::new();
    let (full, changed, second, bytes) = two_saves(&cache, 0.02);
    assert_eq!(full.reused, 0);
    assert_eq!(
        full.codec_bytes, full.new_bytes,
        "the first save compresses everything"
    );
    assert!(full.compressed > full.chunks / 2, "{full:?}");
    // The edits (2 % of the blob, 2 to 3 chunks), the chunks the 16 KB spawn and despawn fall
    // in and the few after them before the boundaries are back in step, and the tick's chunk:
    // about 15 chunks of 103 (measured: 0.95 MB of 6.6 MB).
    assert!(changed.new_bytes * 5 < full.new_bytes, "{changed:?}");
    assert_eq!(
        changed.codec_bytes, 0,
        "changed chunks wait to be compressed"
    );
    let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.bundle, second);

    // Unchanged: the chunks the last save stored as is are compressed now, once.
    let meta = SaveMeta::new(SlotId::Auto(1));
    let third = bundle(second.world.ecs_blob.clone(), 3);
    let again = format::encode_cached(&meta, &third, &EncodeOptions::default(), &cache).unwrap();
    let stats = again.chunk_stats().unwrap();
    assert!(
        stats.codec_bytes > 0 && stats.codec_bytes <= changed.new_bytes,
        "{stats:?}"
    );
    assert!(stats.reused >= changed.reused, "{stats:?}");
    let fourth = bundle(second.world.ecs_blob.clone(), 4);
    let last = format::encode_cached(&meta, &fourth, &EncodeOptions::default(), &cache).unwrap();
    let stats = last.chunk_stats().unwrap();
    // All but the fields before the blob (the tick) and after it (the state hash).
    assert_eq!(stats.reused, stats.chunks - 2, "{stats:?}");
    // Those two are new, and few enough bytes to be tried with LZ4 at once.
    assert!(stats.codec_bytes < 64, "{stats:?}");
}

#[test]
fn a_save_after_a_scattered_one_percent_change_compresses_nothing() {
    // 1 % of the entities changed at random over the world: every chunk has a changed row, so
    // every chunk is new, and none is compressed (it would change again by the next save).
    let cache = ChunkCache::new();
    let (full, changed, second, bytes) = two_saves(&cache, 1.0);
    assert!(changed.reused < changed.chunks / 10, "{changed:?}");
    assert_eq!(changed.codec_bytes, 0, "{changed:?}");
    assert!(full.codec_bytes > 6_000_000);
    let decoded = format::decode_owned(bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.bundle, second);
}

#[test]
fn the_cache_keeps_only_the_chunks_of_the_last_two_saves() {
    let cache = ChunkCache::new();
    let meta = SaveMeta::new(SlotId::Quick);
    let options = EncodeOptions::default();
    for seed in 0..5 {
        let save = bundle(world_blob(400_000, seed), seed);
        format::encode_cached(&meta, &save, &options, &cache).unwrap();
    }
    let nine = bundle(world_blob(400_000, 9), 9);
    let one_save = format::encode(&meta, &nine, &options)
        .unwrap()
        .chunk_stats()
        .unwrap()
        .chunks;
    assert!(
        cache.len() <= 2 * one_save + 2,
        "{} chunks kept",
        cache.len()
    );
    // Every save since the first was new: stored as is, nothing compressed kept.
    assert_eq!(cache.stored_bytes(), 0);
    let last = bundle(world_blob(400_000, 4), 5);
    format::encode_cached(&meta, &last, &options, &cache).unwrap();
    assert!(cache.stored_bytes() > 0, "found unchanged, compressed now");
    cache.clear();
    assert!(cache.is_empty());
}

#[test]
fn every_option_round_trips_through_the_chunked_layout_and_the_cache() {
    let cache = ChunkCache::new();
    let meta = SaveMeta::new(SlotId::Manual(1));
    let blobs = [
        Vec::new(),
        vec![5],
        world_blob(1 << 20, 3),
        fixtures::game_like_blob(700_000, 4),
    ];
    for blob in blobs {
        let save = bundle(blob, 4);
        for compression in [Compression::Lz4, Compression::None] {
            for compress_when in [CompressWhen::Always, CompressWhen::ItPays] {
                let options = EncodeOptions {
                    compression,
                    compress_when,
                    ..Default::default()
                };
                for _ in 0..2 {
                    let bytes = format::encode_cached(&meta, &save, &options, &cache)
                        .unwrap()
                        .to_vec();
                    let decoded = format::decode_owned(bytes, &DecodeOptions::default());
                    assert_eq!(decoded.unwrap().bundle, save, "{options:?}");
                }
            }
        }
    }
}

#[test]
fn a_damaged_chunk_of_a_large_save_is_named_by_index_and_offset() {
    // Large enough to be decompressed on several threads: the first damaged chunk in file
    // order is reported, whichever thread finds it.
    let save = bundle(world_blob(3 << 20, 5), 5);
    let bytes = format::encode(
        &SaveMeta::new(SlotId::Quick),
        &save,
        &EncodeOptions::default(),
    )
    .unwrap()
    .to_vec();
    let table = format::read_chunk_table(&bytes, &DecodeOptions::default())
        .unwrap()
        .unwrap();
    let chunks: Vec<(u64, _)> = table.with_offsets().collect();
    let (middle, last) = (chunks.len() / 2, chunks.len() - 2);
    let mut damaged = bytes.clone();
    for index in [middle, last] {
        damaged[chunks[index].0 as usize + 3] ^= 0x01;
    }
    let error = format::decode(&damaged, &DecodeOptions::default()).unwrap_err();
    assert!(
        matches!(error, FormatError::ChunkChecksumMismatch { index, offset, .. }
            if index == middle && offset == chunks[middle].0),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------------------
// Forged chunk tables, with every checksum valid so only the table lies.

/// Builds a version-2 file from a table (count and raw entries) and chunk data.
fn forge(
    codec: Compression,
    entries: &[(u32, u32, u8)],
    data: &[u8],
    uncompressed: u32,
) -> Vec<u8> {
    let meta = postcard::to_stdvec(&SaveMeta::new(SlotId::Quick)).unwrap();
    let mut table = (entries.len() as u32).to_le_bytes().to_vec();
    let mut at = 0usize;
    for &(raw, stored, codec) in entries {
        let chunk = data.get(at..at + stored as usize).unwrap_or(&[]);
        at += stored as usize;
        table.extend_from_slice(&raw.to_le_bytes());
        table.extend_from_slice(&stored.to_le_bytes());
        table.push(codec);
        table.extend_from_slice(&crc32fast::hash(chunk).to_le_bytes());
    }
    let header = Header {
        version: 2,
        compression: codec,
        meta_len: meta.len() as u32,
        thumbnail_len: 0,
        payload_len: (table.len() + data.len()) as u32,
        payload_uncompressed_len: uncompressed,
        meta_crc: crc32fast::hash(&meta),
        thumbnail_crc: 0,
        payload_crc: crc32fast::hash(&table),
    };
    [&header.to_bytes()[..], &meta, &table, data].concat()
}

/// Decodes through every reading function, returning the error of each and the peak
/// allocation.
fn refused(bytes: &[u8]) -> (Vec<FormatError>, usize) {
    let options = DecodeOptions::default();
    let (errors, peak) = peak_allocation(|| {
        vec![
            format::decode(bytes, &options).unwrap_err(),
            format::decode_from(&mut &bytes[..], &options).unwrap_err(),
            format::decode_owned(bytes.to_vec(), &options).unwrap_err(),
        ]
    });
    (errors, peak)
}

#[test]
fn forged_chunk_tables_are_refused_before_allocating() {
    let lz4 = lz4_flex::block::compress(&[7u8; 1000]);
    let n = lz4.len() as u32;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "a count of 2^32-1 chunks in a small payload",
            forge_count(u32::MAX),
        ),
        (
            "an empty chunk",
            forge(Compression::Lz4, &[(0, 0, 0), (1000, n, 1)], &lz4, 1000),
        ),
        (
            "chunks adding up to more than the header announces",
            forge(Compression::Lz4, &[(1000, n, 1)], &lz4, 999),
        ),
        (
            "a chunk of another codec than the header's",
            forge(Compression::None, &[(1000, n, 1)], &lz4, 1000),
        ),
        (
            "a chunk claiming more than 255 times its stored size",
            forge(Compression::Lz4, &[(n * 256, n, 1)], &lz4, n * 256),
        ),
        (
            "a stored chunk whose lengths differ",
            forge(Compression::None, &[(11, 10, 0)], &[1; 10], 11),
        ),
        (
            "stored lengths beyond the payload",
            forge(Compression::Lz4, &[(1000, u32::MAX / 2, 1)], &lz4, 1000),
        ),
        (
            "an unknown chunk codec",
            forge(Compression::Lz4, &[(1000, n, 9)], &lz4, 1000),
        ),
        (
            "a chunk that does not decompress to its length",
            forge(Compression::Lz4, &[(1001, n, 1)], &lz4, 1001),
        ),
    ];
    for (name, bytes) in cases {
        let (errors, peak) = refused(&bytes);
        for error in &errors {
            let typed = matches!(
                error,
                FormatError::InvalidChunkTable { .. }
                    | FormatError::ImplausibleSize { .. }
                    | FormatError::UnknownCodec { .. }
                    | FormatError::ChunkDecompress { index: 0, .. }
            );
            assert!(typed, "{name}: {error}");
        }
        println!("{name}: {} (peak {peak} bytes)", errors[0]);
        assert!(peak < 64 << 10, "{name}: peak {peak}");
    }
}

/// A payload of a few bytes whose table announces `count` chunks (its CRC over the 4 bytes).
fn forge_count(count: u32) -> Vec<u8> {
    let meta = postcard::to_stdvec(&SaveMeta::new(SlotId::Quick)).unwrap();
    let mut payload = count.to_le_bytes().to_vec();
    payload.extend_from_slice(&[0; 9]);
    let header = Header {
        version: 2,
        compression: Compression::None,
        meta_len: meta.len() as u32,
        thumbnail_len: 0,
        payload_len: payload.len() as u32,
        payload_uncompressed_len: 9,
        meta_crc: crc32fast::hash(&meta),
        thumbnail_crc: 0,
        payload_crc: crc32fast::hash(&payload[..4]),
    };
    [&header.to_bytes()[..], &meta, &payload].concat()
}

#[test]
fn a_version_2_header_must_leave_room_for_the_table() {
    // A payload shorter than the chunk count: refused from the header alone.
    let mut bytes = forge(Compression::None, &[], &[], 0);
    let payload_len_at = 16;
    bytes[payload_len_at..payload_len_at + 4].copy_from_slice(&2u32.to_le_bytes());
    bytes.truncate(bytes.len() - 2);
    // As a forger would, with every checksum valid for the edited bytes.
    let fixed = common::crc_fixup::with_valid_checksums(&bytes).unwrap();
    let (errors, _) = refused(&fixed);
    for error in errors {
        assert!(
            matches!(error, FormatError::ImplausibleSize { .. }),
            "{error}"
        );
    }
    // And an empty payload in a valid table decodes as nothing: not a save bundle.
    let empty = forge(Compression::None, &[], &[], 0);
    let (errors, _) = refused(&empty);
    assert!(matches!(
        errors[0],
        FormatError::Decode {
            section: Section::Payload,
            ..
        }
    ));
}

#[test]
fn version_1_files_are_still_written_on_request_and_read() {
    let save = bundle(world_blob(300_000, 6), 6);
    let options = EncodeOptions {
        layout: PayloadLayout::Whole,
        ..Default::default()
    };
    let encoded = format::encode(&SaveMeta::new(SlotId::Quick), &save, &options).unwrap();
    assert_eq!(encoded.header().version, 1);
    assert!(encoded.chunk_stats().is_none());
    let decoded = format::decode(&encoded.to_vec(), &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.bundle, save);
}

#[test]
fn consecutive_saves_of_a_profile_share_its_chunk_cache() {
    let dir = tempfile::tempdir().unwrap();
    let config = keepsake_core::store::StoreConfig::new(dir.path());
    let store = keepsake_core::store::SlotStore::open(config).unwrap();
    assert!(store.chunk_cache().is_empty());
    let world = bundle(world_blob(1 << 20, 11), 1);
    store
        .save(SlotId::Auto(0), SaveMeta::new(SlotId::Auto(0)), &world)
        .unwrap();
    let after_one = (
        store.chunk_cache().len(),
        store.chunk_cache().stored_bytes(),
    );
    assert!(after_one.0 > 10 && after_one.1 > 0, "{after_one:?}");
    // Another slot, the same world: every chunk is found (nothing new to keep), and a clone
    // of the store (as the plugin hands to its tasks) shares the cache.
    let clone = store.clone();
    clone
        .save(SlotId::Quick, SaveMeta::new(SlotId::Quick), &world)
        .unwrap();
    assert_eq!(
        (
            store.chunk_cache().len(),
            store.chunk_cache().stored_bytes()
        ),
        after_one
    );
    assert_eq!(store.load(SlotId::Quick).unwrap().bundle, world);
}
