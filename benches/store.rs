//! Store layer: durable saves, loads with verification, and listings.

#[path = "../tests/common/fixtures.rs"]
mod fixtures;

use bevy_keepsake::SlotId;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn save_load_list(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");
    group.sample_size(20);
    for (label, len) in [("10KB", 10usize << 10), ("1MB", 1 << 20)] {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let bundle = fixtures::bundle(len, 1);
        let slot = SlotId::Manual(0);
        group.bench_function(BenchmarkId::new("save", label), |b| {
            b.iter(|| store.save(slot, fixtures::meta(slot, 1), &bundle).unwrap())
        });
        group.bench_function(BenchmarkId::new("load", label), |b| {
            b.iter(|| store.load(slot).unwrap())
        });
        for other in store.config().layout.slots() {
            store
                .save(other, fixtures::meta(other, 2), &bundle)
                .unwrap();
        }
        group.bench_function(BenchmarkId::new("list_16_slots", label), |b| {
            b.iter(|| store.list().unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, save_load_list);
criterion_main!(benches);
