//! Format layer: encode and decode of game-shaped bundles, and header+metadata reads.

#[path = "../tests/common/fixtures.rs"]
mod fixtures;

use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, EncodeOptions, Limits};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const SIZES: [(&str, usize); 3] = [("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)];

fn encode_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("format");
    for (label, len) in SIZES {
        let meta = fixtures::meta(SlotId::Manual(0), 1);
        let bundle = fixtures::bundle(len, 1);
        let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())
            .unwrap()
            .to_vec();
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("encode", label), &bundle, |b, bundle| {
            b.iter(|| format::encode(black_box(&meta), bundle, &EncodeOptions::default()).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("decode", label), &bytes, |b, bytes| {
            b.iter(|| format::decode(black_box(bytes), &Limits::default()).unwrap())
        });
        group.bench_with_input(
            BenchmarkId::new("read_summary", label),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    format::read_summary(&mut black_box(&bytes[..]), &Limits::default()).unwrap()
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, encode_decode);
criterion_main!(benches);
