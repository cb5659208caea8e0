//! Format layer, grouped like the reference report (`aw-save` benchmarks): serialization,
//! compression, checksum, and the whole encode / decode / header read. Every group runs on
//! game-shaped bundles; compression also on a repeated byte, the reference report's data, so the
//! figures compare.

#[path = "../keepsake-core/tests/core/common/fixtures.rs"]
mod fixtures;
#[path = "../tests/it/common/game_world.rs"]
mod game_world;

use bevy_keepsake::SlotId;
use bevy_keepsake::format::{
    self, ChunkCache, CompressWhen, DecodeOptions, EncodeOptions, PayloadLayout, SaveBundle,
    SealKey, Sealing, WorldState,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const SIZES: [(&str, usize); 3] = [("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)];

/// A bundle around a captured game world's snapshot blob of `len` bytes.
fn world_bundle(len: usize) -> SaveBundle {
    SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: game_world::captured_blob(len),
        state_hash: 0,
    })
}

/// A bundle of one repeated byte, like the reference report's test data.
fn repeated_byte_bundle(len: usize) -> SaveBundle {
    SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: vec![0x42; len],
        state_hash: 0,
    })
}

fn serialization(c: &mut Criterion) {
    let mut group = c.benchmark_group("serialization");
    for (label, len) in SIZES {
        let bundle = fixtures::bundle(len, 1);
        let bytes = postcard::to_stdvec(&bundle).unwrap();
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(BenchmarkId::new("serialize", label), |b| {
            b.iter(|| postcard::to_stdvec(black_box(&bundle)).unwrap())
        });
        group.bench_function(BenchmarkId::new("deserialize", label), |b| {
            b.iter(|| postcard::from_bytes::<SaveBundle>(black_box(&bytes)).unwrap())
        });
    }
    group.finish();
}

fn compression(c: &mut Criterion) {
    let mut group = c.benchmark_group("compression");
    for (label, len) in SIZES {
        for (data_kind, raw) in [
            (
                "game",
                postcard::to_stdvec(&fixtures::bundle(len, 1)).unwrap(),
            ),
            ("world", postcard::to_stdvec(&world_bundle(len)).unwrap()),
            (
                "repeated_byte",
                postcard::to_stdvec(&repeated_byte_bundle(len)).unwrap(),
            ),
        ] {
            let compressed = lz4_flex::block::compress(&raw);
            println!(
                "lz4 {data_kind} {label}: {} -> {} bytes ({:.1}% of the original)",
                raw.len(),
                compressed.len(),
                100.0 * compressed.len() as f64 / raw.len() as f64
            );
            group.throughput(Throughput::Bytes(raw.len() as u64));
            group.bench_function(
                BenchmarkId::new(format!("lz4_compress_{data_kind}"), label),
                |b| b.iter(|| lz4_flex::block::compress(black_box(&raw))),
            );
            let mut out = vec![0; raw.len()];
            group.bench_function(
                BenchmarkId::new(format!("lz4_decompress_{data_kind}"), label),
                |b| {
                    b.iter(|| {
                        lz4_flex::block::decompress_into(black_box(&compressed), &mut out).unwrap()
                    })
                },
            );
        }
    }
    group.finish();
}

fn checksum(c: &mut Criterion) {
    let mut group = c.benchmark_group("checksum");
    for (label, len) in SIZES {
        let data = fixtures::game_like_blob(len, 3);
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(BenchmarkId::new("crc32", label), |b| {
            b.iter(|| crc32fast::hash(black_box(&data)))
        });
    }
    group.finish();
}

fn encode_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("format");
    let bundles = SIZES
        .into_iter()
        .map(|(label, len)| (label.to_owned(), fixtures::bundle(len, 1)))
        .chain([("1MB_world".to_owned(), world_bundle(1 << 20))]);
    for (label, bundle) in bundles {
        let len = bundle.world.ecs_blob.len();
        let label = label.as_str();
        let meta = fixtures::meta(SlotId::Manual(0), 1);
        let encoded = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
        println!(
            "format {label}: payload stored with {}, {} of {} bytes",
            encoded.header().compression.name(),
            encoded.header().payload_len,
            encoded.header().payload_uncompressed_len
        );
        let bytes = encoded.to_vec();
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("encode", label), &bundle, |b, bundle| {
            b.iter(|| format::encode(black_box(&meta), bundle, &EncodeOptions::default()).unwrap())
        });
        // What every save did before LZ4 became conditional.
        let always = EncodeOptions {
            compress_when: CompressWhen::Always,
            ..Default::default()
        };
        group.bench_with_input(
            BenchmarkId::new("encode_lz4_always", label),
            &bundle,
            |b, bundle| b.iter(|| format::encode(black_box(&meta), bundle, &always).unwrap()),
        );
        group.bench_with_input(BenchmarkId::new("decode", label), &bytes, |b, bytes| {
            b.iter(|| format::decode(black_box(bytes), &DecodeOptions::default()).unwrap())
        });
        let lz4_bytes = format::encode(&meta, &bundle, &always).unwrap().to_vec();
        group.bench_with_input(
            BenchmarkId::new("decode_lz4_always", label),
            &lz4_bytes,
            |b, bytes| {
                b.iter(|| format::decode(black_box(bytes), &DecodeOptions::default()).unwrap())
            },
        );
        group.bench_with_input(
            BenchmarkId::new("read_summary", label),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    format::read_summary(&mut black_box(&bytes[..]), &DecodeOptions::default())
                        .unwrap()
                })
            },
        );
    }
    group.finish();
}

/// `blob` with about 1 % of its bytes changed the way a game changes between two saves: values
/// rewritten in place at scattered rows (a tenth of the budget each), one run of rows inserted
/// (spawns) and one removed (despawns), which shift everything after them.
fn one_percent_changed(blob: &[u8], seed: u64) -> Vec<u8> {
    let mut rng = fixtures::Rng::new(seed);
    let mut out = blob.to_vec();
    let budget = blob.len() / 100;
    for _ in 0..budget / 2 / 16 {
        let at = rng.below(out.len() as u64 - 16) as usize;
        out[at..at + 16]
            .iter_mut()
            .for_each(|b| *b = b.wrapping_add(1));
    }
    let insert_at = rng.below(out.len() as u64) as usize;
    let spawned = blob[..budget / 4].to_vec();
    out.splice(insert_at..insert_at, spawned);
    let remove_at = rng.below((out.len() - budget) as u64) as usize;
    out.drain(remove_at..remove_at + budget / 4);
    out
}

/// Format version 2: what the pool's encode costs when 1 % of the world changed since the last
/// save (chunks of the last save in the cache) against a full encode, and a chunked load
/// (chunks decompressed in parallel) against a version-1 load (one LZ4 block, one thread).
fn chunked(c: &mut Criterion) {
    let mut group = c.benchmark_group("format_v2");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(3));
    for (label, len) in [("1MB_world", 1 << 20), ("6.6MB_world", 6_600_000)] {
        let base = world_bundle(len);
        let mut next = base.clone();
        next.world.ecs_blob = one_percent_changed(&base.world.ecs_blob, 7);
        next.world.tick += 1;
        let meta = fixtures::meta(SlotId::Auto(0), 1);
        let options = EncodeOptions::default();
        let warm = || {
            let cache = ChunkCache::new();
            format::encode_cached(&meta, &base, &options, &cache).unwrap();
            cache
        };
        let cache = warm();
        let stats = format::encode_cached(&meta, &next, &options, &cache)
            .unwrap()
            .chunk_stats()
            .unwrap();
        println!("format_v2 {label}: 1 % changed: {stats:?}");
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(BenchmarkId::new("encode_full", label), |b| {
            b.iter(|| format::encode(black_box(&meta), &next, &options).unwrap())
        });
        group.bench_function(BenchmarkId::new("encode_1pct_changed", label), |b| {
            b.iter_batched(
                warm,
                |cache| format::encode_cached(black_box(&meta), &next, &options, &cache).unwrap(),
                criterion::BatchSize::PerIteration,
            )
        });
        let v1 = EncodeOptions {
            layout: PayloadLayout::Whole,
            compress_when: CompressWhen::Always,
            ..Default::default()
        };
        let v2 = EncodeOptions {
            compress_when: CompressWhen::Always,
            ..Default::default()
        };
        for (name, options) in [("decode_v1_whole", v1), ("decode_v2_chunked", v2)] {
            let bytes = format::encode(&meta, &next, &options).unwrap().to_vec();
            group.bench_function(BenchmarkId::new(name, label), |b| {
                b.iter(|| format::decode(black_box(&bytes), &DecodeOptions::default()).unwrap())
            });
        }
    }
    group.finish();
}

/// Sealed saves (format version 3) against unsealed ones, without the disk: what a save's pool
/// part encodes after 1 % of the world changed (chunk cache warm, as the store keeps it), and
/// what a load decodes from the file's own buffer (`decode_owned`, as the store reads).
fn sealed(c: &mut Criterion) {
    let mut group = c.benchmark_group("format_sealed");
    group.sample_size(30);
    let key = Sealing::Key(SealKey::from_bytes([0x5E; 32]));
    for (label, base) in [
        ("1MB", fixtures::bundle(1 << 20, 1)),
        ("1MB_world", world_bundle(1 << 20)),
    ] {
        let mut next = base.clone();
        next.world.ecs_blob = one_percent_changed(&base.world.ecs_blob, 7);
        let meta = fixtures::meta(SlotId::Auto(0), 1);
        for (name, seal) in [("unsealed", Sealing::Off), ("sealed", key)] {
            let options = EncodeOptions {
                seal,
                ..Default::default()
            };
            let warm = || {
                let cache = ChunkCache::new();
                format::encode_cached(&meta, &base, &options, &cache).unwrap();
                cache
            };
            group.bench_function(
                BenchmarkId::new(format!("{name}_encode_1pct"), label),
                |b| {
                    b.iter_batched(
                        warm,
                        |cache| {
                            format::encode_cached(black_box(&meta), &next, &options, &cache)
                                .unwrap()
                        },
                        criterion::BatchSize::PerIteration,
                    )
                },
            );
            let bytes = format::encode(&meta, &next, &options).unwrap().to_vec();
            let reading = DecodeOptions::new().seal(seal);
            group.bench_function(
                BenchmarkId::new(format!("{name}_decode_owned"), label),
                |b| {
                    b.iter_batched(
                        || bytes.clone(),
                        |bytes| format::decode_owned(bytes, &reading).unwrap(),
                        criterion::BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    serialization,
    compression,
    checksum,
    encode_decode,
    chunked,
    sealed
);
criterion_main!(benches);
