//! The rewind ring (issue 26) on the family of world shapes (`common/shapes.rs`), at 10k
//! saveable entities (`KEEPSAKE_BENCH_COUNTS` to change; `KEEPSAKE_BENCH_SHAPES` to pick
//! shapes). Per shape, in the criterion group `rewind_<shape>`:
//!
//! - `point_1pct`: the main thread's part of a rewind point after 1 % of the entities changed
//!   since the last one: the incremental capture (`CaptureCache::capture`) and keeping it
//!   (`SnapshotHistory::record`), as the plugin does; the patches it made are put together
//!   untimed afterwards, as the plugin does on the pool;
//! - `step_newest_1pct`: one rewind step in place to the newest point after 1 % of the
//!   entities changed since it (an undo: a point is taken, 1 % changes, the world goes back),
//!   the main thread's part as the plugin makes it: a capture through the cache (recorded by
//!   the history) and `snapshot::restore` (issue 42's target: ≤ 1 ms p99 at 10k);
//! - `far_pool`: the pool's part of a rewind to the oldest of 60 points, too far back for the
//!   frame: the point put back together (`KeptSnapshot::pending` + `finish`), decoded and
//!   compared with a capture (`snapshot::prepare`);
//! - `respawn_main`: for comparison, the main thread's part of that rewind by respawning
//!   (`snapshot::apply` with `LoadMode::Respawn`, every rewind before issue 42);
//! - `hold_step` (printed only): holding the rewind key, from the newest point back to the
//!   oldest one point per step, each step's main-thread part.
//!
//! Each prints p50 / p99 over every timed iteration. Before timing, 60 points of the world
//! changing 1 % between two of them are kept, and two memory figures printed against one full
//! blob: what the points hold (`SnapshotHistory::memory`, an estimate from above that counts
//! the pieces they share with the capture cache), and what keeping them added to the heap
//! (a counting allocator: the heap after the 60 points less the heap before them, the capture
//! cache warm in both).
//!
//! Run: `cargo bench --bench rewind`.

// Each bench uses a part of the test helpers.
#[allow(dead_code)]
#[path = "../keepsake-core/tests/core/common/alloc.rs"]
mod alloc;
#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
#[path = "common/shapes.rs"]
mod shapes;

use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, CaptureCache, EntityRecord, KeptSnapshot, LoadMode, SaveRegistry, SavedIds,
    SnapshotHistory,
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

/// The main thread's part of one rewind step in place, as the plugin makes it: a capture
/// through the cache (recorded by the history), then [`snapshot::restore`].
fn step(ring: &mut Ring, to: &KeptSnapshot, record: &mut EntityRecord) -> Duration {
    let world = ring.app.world_mut();
    let start = Instant::now();
    let live = ring.cache.capture(world).unwrap();
    drop(ring.history.record(&live));
    black_box(
        snapshot::restore(world, to, &live, record)
            .unwrap()
            .unwrap(),
    );
    let elapsed = start.elapsed();
    // The plugin puts the capture's patches together on the pool.
    live.settle();
    elapsed
}

/// One rewind step to the newest point after 1 % of the entities changed since it, as an undo
/// is: a point, 1 % of the entities changed (another 1 % each time), back to the point.
fn bench_step(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32, ring: &mut Ring) {
    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    let (mut samples, mut round) = (Vec::new(), 2 * POINTS);
    group.bench_function(BenchmarkId::new("step_newest_1pct", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                let world = ring.app.world_mut();
                world.increment_change_tick();
                let pending = ring.cache.capture(world).unwrap();
                let newest = ring.history.record(&pending);
                pending.settle();
                shapes::change(world, shape, &ring.entities, 0.01, round);
                let elapsed = step(ring, &newest, &mut record);
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "step_newest_1pct");
}

/// Holding the rewind key: from the newest point back to the oldest, one point per step (the
/// points are 1 % apart), as the plugin does with `Back(1)` then `Back(2)` each frame. Once,
/// outside criterion (the steps use the ring up).
fn bench_hold(shape: Shape, count: u32, ring: &mut Ring) {
    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    let points: Vec<KeptSnapshot> = ring.points.iter().rev().cloned().collect();
    let mut samples: Vec<Duration> = points
        .iter()
        .map(|point| step(ring, point, &mut record))
        .collect();
    report(&mut samples, shape, count, "hold_step");
}

/// The pool's part of a rewind too far back to be made in the frame: the oldest point put back
/// together, decoded and compared with a capture of the world; and, for comparison, the main
/// thread's part of the same rewind by respawning (`LoadMode::Respawn`, before issue 42).
fn bench_far(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32, ring: &mut Ring) {
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
    let live = ring.cache.capture(ring.app.world()).unwrap();
    drop(ring.history.record(&live));
    live.settle();
    let record = EntityRecord::new(SavedIds::ThisWorld);
    let mut samples = Vec::new();
    group.bench_function(BenchmarkId::new("far_pool", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(snapshot::prepare(decode(), &live, &record));
                let elapsed = start.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "far_pool");

    let mut app = shape.populated(count);
    let mut samples = Vec::new();
    group.bench_function(BenchmarkId::new("respawn_main", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let decoded = decode();
                let start = Instant::now();
                black_box(snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn));
                let elapsed = start.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    report(&mut samples, shape, count, "respawn_main");
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
            // While the points are the newest 60 captures (the steps below add more).
            bench_hold(shape, count, &mut ring);
            bench_step(&mut group, shape, count, &mut ring);
            bench_far(&mut group, shape, count, &mut ring);
        }
        group.finish();
    }
    criterion.final_summary();
}
