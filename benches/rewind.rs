//! The rewind ring (issue 26) on the family of world shapes (`common/shapes.rs`), at 10k
//! saveable entities (`KEEPSAKE_BENCH_COUNTS` to change; `KEEPSAKE_BENCH_SHAPES` to pick
//! shapes). Per shape, in the criterion group `rewind_<shape>`:
//!
//! - `point_1pct`: the main thread's part of a rewind point after 1 % of the entities changed
//!   since the last one: the incremental capture (`CaptureCache::capture`) and keeping it
//!   (`SnapshotHistory::record`), as the plugin does; the patches it made are put together
//!   untimed afterwards, as the plugin does on the pool;
//! - `rewind_pool`: the pool's part of a rewind to the oldest of 60 points: putting the point
//!   back together (`KeptSnapshot::pending` + `finish`) and decoding it;
//! - `rewind_main`: the main thread's part: applying the decoded point to the world
//!   (`snapshot::apply`, as a load).
//!
//! Each prints p50 / p99 over every timed iteration. Before timing, 60 points of the world
//! changing 1 % between two of them are kept, and two memory figures printed against one full
//! blob: what the points hold (`SnapshotHistory::memory`, an estimate from above that counts
//! the chunks they share with the capture cache), and what keeping them added to the heap
//! (a counting allocator: the heap after the 60 points less the heap before them, the capture
//! cache warm in both).
//!
//! Run: `cargo bench --bench rewind`.

// Each bench uses a part of the test helpers.
#[allow(dead_code)]
#[path = "../tests/it/common/alloc.rs"]
mod alloc;
#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
#[path = "common/shapes.rs"]
mod shapes;

use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, CaptureCache, KeptSnapshot, LoadMode, SaveRegistry, SnapshotHistory,
};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use shapes::Shape;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: alloc::CountingAlloc = alloc::CountingAlloc;

/// How many points the memory figure and the rewinds are taken over (the ring's default).
const POINTS: usize = 60;

/// Entity counts (see `common/env.rs`): 10k, the targets' count.
fn counts() -> Vec<u32> {
    env::counts(&[10_000], &[10_000])
}

/// Prints p50 / p99 of `samples`.
fn report(samples: &mut [Duration], shape: Shape, count: u32, name: &str) {
    if let Some(percentiles) = shapes::percentiles(samples) {
        let shape = shape.name();
        println!("rewind part, {shape}, {count} entities, {name}: {percentiles}");
    }
}

/// A world of `shape`, its capture cache and history, and 60 points taken 1 % apart.
struct Ring {
    app: App,
    entities: Vec<Entity>,
    cache: CaptureCache,
    history: SnapshotHistory,
    points: Vec<KeptSnapshot>,
}

impl Ring {
    fn new(shape: Shape, count: u32) -> Self {
        let mut app = shape.populated(count);
        let world = app.world_mut();
        let entities = shapes::saved_entities(world);
        let blob = snapshot::capture(world).unwrap().blob.len();
        let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
        world.increment_change_tick();
        // The cache warm, as in a game that saved once: the points add to it.
        cache.capture(world).unwrap().settle();
        let (points, added) = alloc::net_allocation(|| {
            let mut points = Vec::new();
            for round in 0..POINTS {
                shapes::change(world, shape, &entities, 0.01, round);
                let pending = cache.capture(world).unwrap();
                points.push(history.record(&pending));
                pending.settle();
            }
            points
        });
        let memory = history.memory();
        println!(
            "rewind memory, {}, {count} entities: {POINTS} points 1 % apart hold {memory} bytes \
             ({:.2}x one blob of {blob} bytes); keeping them added {added} bytes to the heap \
             ({:.2}x)",
            shape.name(),
            memory as f64 / blob as f64,
            added as f64 / blob as f64
        );
        Ring {
            app,
            entities,
            cache,
            history,
            points,
        }
    }
}

fn bench_point(
    group: &mut BenchmarkGroup<'_, WallTime>,
    shape: Shape,
    count: u32,
    ring: &mut Ring,
) {
    let world = ring.app.world_mut();
    let mut samples = Vec::new();
    let mut round = POINTS;
    group.bench_function(BenchmarkId::new("point_1pct", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                shapes::change(world, shape, &ring.entities, 0.01, round);
                let start = Instant::now();
                let pending = ring.cache.capture(world).unwrap();
                let point = ring.history.record(&pending);
                let elapsed = start.elapsed();
                pending.settle();
                // The ring keeps its count: the oldest point goes.
                ring.points.remove(0);
                ring.points.push(point);
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "point_1pct");
}

fn bench_rewind(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32, ring: &Ring) {
    let oldest = ring.points[0].clone();
    let registry = ring.app.world().resource::<SaveRegistry>().clone();
    let types = ring.app.world().resource::<AppTypeRegistry>().clone();
    let decode = || {
        let snapshot = oldest.pending().finish();
        snapshot::decode(
            &snapshot.blob,
            snapshot.state_hash,
            &registry,
            &types.read(),
        )
        .unwrap()
    };
    let mut samples = Vec::new();
    group.bench_function(BenchmarkId::new("rewind_pool", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(decode());
                let elapsed = start.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "rewind_pool");

    let mut app = shape.populated(count);
    let mut samples = Vec::new();
    group.bench_function(BenchmarkId::new("rewind_main", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let decoded = decode();
                let start = Instant::now();
                black_box(snapshot::apply(app.world_mut(), decoded, LoadMode::Replace));
                let elapsed = start.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "rewind_main");
}

fn main() {
    // The task pools every app with `TaskPoolPlugin` has: a capture spreads the encoding of
    // many changed rows over the compute pool.
    bevy::app::TaskPoolOptions::default().create_default_pools();
    let mut criterion = Criterion::default().configure_from_args();
    for shape in Shape::from_env() {
        let mut group = criterion.benchmark_group(format!("rewind_{}", shape.name()));
        group.sample_size(10);
        for count in counts() {
            let mut ring = Ring::new(shape, count);
            bench_point(&mut group, shape, count, &mut ring);
            bench_rewind(&mut group, shape, count, &ring);
        }
        group.finish();
    }
    criterion.final_summary();
}
