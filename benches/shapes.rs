//! Snapshot benchmarks on the family of world shapes (issue 24, `common/shapes.rs`), each at
//! 1k / 10k / 100k saveable entities. Per shape and count, in the criterion group
//! `shapes_<shape>`:
//!
//! - `capture`: a full capture + encode (`snapshot::capture`), against `dw_postcard_save`:
//!   `DynamicWorld` extraction + postcard;
//! - `decode_apply`: our decode + apply into a fresh app, against `dw_postcard_load`: postcard
//!   `WorldDeserializer` + `write_to_world`;
//! - `apply_at_start`: the main thread's part of a load at start (issue 42), our apply alone
//!   (decoded untimed) into a fresh app, against `dw_apply`: `write_to_world` alone
//!   (deserialized untimed); both also print p50 / p99;
//! - `main_10pct` / `main_1pct`: the main thread's part of a save (`CaptureCache::capture`) after
//!   10 % / 1 % of the entities changed since the last capture (spread over the whole world);
//! - `copy_10pct`: what the main thread would pay to copy the values changed after 10 % changed
//!   (each looked up and cloned through its type's own `Clone`, no reflection) instead of
//!   encoding them: the copy alone of the design that encodes them on the pool;
//! - `pool_1pct`: the pool's part of such a save after 1 % changed (`PendingSnapshot::finish` +
//!   `format::encode` of the bundle), against `pool_full`: the same for a full save (the cache
//!   cleared first, as for the first save of a session).
//!
//! The main-thread and pool parts also print their p50 / p99 over every timed iteration
//! (criterion reports means; the target is a p99). Before timing, each contender's load is
//! checked: the loaded world must hold as many saved entities and `ChildOf` links as the saved
//! one (`round trip FAILED` otherwise, and it is still timed).
//!
//! Run: `cargo bench --bench shapes` (`KEEPSAKE_BENCH_QUICK=1`: 10k only;
//! `KEEPSAKE_BENCH_COUNTS=1000,100000` and `KEEPSAKE_BENCH_SHAPES=deep,large` pick).

#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
#[path = "common/shapes.rs"]
mod shapes;

use bevy::asset::{AssetPath, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy::world_serialization::serde::{DynamicWorldSerializer, WorldDeserializer};
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, ChunkCache, EncodeOptions, SaveMeta};
use bevy_keepsake::snapshot::{self, CaptureCache, LoadMode, SaveRegistry, Saveable};
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, BenchmarkId, Criterion};
use serde::de::DeserializeSeed;
use shapes::Shape;
use std::any::TypeId;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// No shape holds asset handles, so nothing is ever loaded from a path.
struct NoAssets;

impl LoadFromPath for NoAssets {
    fn load_from_path_erased(&mut self, _: TypeId, path: AssetPath<'static>) -> UntypedHandle {
        unreachable!("only the handles shape has asset handles, yet {path} was requested")
    }
}

/// Entity counts (see `common/env.rs`): 10k in a quick run, else 1k, 10k and 100k.
fn counts() -> Vec<u32> {
    env::counts(&[10_000], &[1_000, 10_000, 100_000])
}

/// A populated world of one shape and its encodings by both contenders.
struct Fixture {
    app: App,
    ours: snapshot::Snapshot,
    dw_postcard: Vec<u8>,
}

impl Fixture {
    fn new(shape: Shape, count: u32) -> Self {
        let mut app = shape.populated(count);
        let world = app.world_mut();
        let types = world.resource::<AppTypeRegistry>().clone();
        let ours = snapshot::capture(world).unwrap();
        let dw = shape.dynamic_world(world);
        let dw_postcard =
            postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read())).unwrap();
        println!(
            "shapes size, {}, {count} entities: keepsake blob {} bytes, DynamicWorld postcard {} bytes",
            shape.name(),
            ours.blob.len(),
            dw_postcard.len(),
        );
        Fixture {
            app,
            ours,
            dw_postcard,
        }
    }
}

fn keepsake_load(app: &mut App, ours: &snapshot::Snapshot) {
    let world = app.world_mut();
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded = snapshot::decode(&ours.blob, ours.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, LoadMode::Replace);
}

/// Bevy's load path: `WorldDeserializer`, then `write_to_world`.
fn dynamic_world_load(app: &mut App, bytes: &[u8]) {
    let world = app.world_mut();
    let types = world.resource::<AppTypeRegistry>().clone();
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    // The `handles` shape's handles come back through its asset server; no other shape has any.
    let server = world.get_resource::<AssetServer>().cloned();
    let (mut server, mut no_assets) = (server.as_ref(), NoAssets);
    let load_from_path: &mut dyn LoadFromPath = match server.as_mut() {
        Some(server) => server,
        None => &mut no_assets,
    };
    let dw = WorldDeserializer {
        type_registry: &types.read(),
        load_from_path,
    }
    .deserialize(&mut deserializer)
    .unwrap();
    dw.write_to_world(world, &mut EntityHashMap::default())
        .unwrap();
}

/// Bevy's load path without its deserializer: the `DynamicWorld` postcard gave, written into a
/// world (`write_to_world`, timed alone).
fn dynamic_world_of(app: &App, bytes: &[u8]) -> bevy::world_serialization::DynamicWorld {
    let world = app.world();
    let types = world.resource::<AppTypeRegistry>().clone();
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    let server = world.get_resource::<AssetServer>().cloned();
    let (mut server, mut no_assets) = (server.as_ref(), NoAssets);
    let load_from_path: &mut dyn LoadFromPath = match server.as_mut() {
        Some(server) => server,
        None => &mut no_assets,
    };
    WorldDeserializer {
        type_registry: &types.read(),
        load_from_path,
    }
    .deserialize(&mut deserializer)
    .unwrap()
}

/// The main thread's part of a load at start (issue 42): our decoded snapshot applied to a
/// world with no saved entity (`snapshot::apply`, every entity spawned), against `DynamicWorld`'s
/// `write_to_world` of the same world; decoding and deserializing are not timed.
fn bench_apply_only(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (shape, count): (Shape, u32),
    ours: &snapshot::Snapshot,
    dw_postcard: &[u8],
) {
    let (mut samples, mut dw_samples) = (Vec::new(), Vec::new());
    group.bench_function(BenchmarkId::new("apply_at_start", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut app = shape.app();
                let world = app.world_mut();
                let registry = world.resource::<SaveRegistry>().clone();
                let types = world.resource::<AppTypeRegistry>().clone();
                let decoded =
                    snapshot::decode(&ours.blob, ours.state_hash, &registry, &types.read())
                        .unwrap();
                let start = Instant::now();
                black_box(snapshot::apply(world, decoded, LoadMode::Replace));
                let elapsed = start.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    group.bench_function(BenchmarkId::new("dw_apply", count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut app = shape.app();
                let dw = dynamic_world_of(&app, dw_postcard);
                let start = Instant::now();
                dw.write_to_world(app.world_mut(), &mut EntityHashMap::default())
                    .unwrap();
                let elapsed = start.elapsed();
                dw_samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    for (name, samples) in [
        ("apply_at_start", &mut samples),
        ("dw_apply", &mut dw_samples),
    ] {
        if let Some(percentiles) = shapes::percentiles(samples) {
            println!(
                "shapes part, {}, {count} entities, {name}: {percentiles}",
                shape.name()
            );
        }
    }
}

/// How many saved entities and `ChildOf` links a world holds.
fn census(world: &mut World) -> (usize, usize) {
    let saved = world
        .query_filtered::<(), With<Saveable>>()
        .iter(world)
        .count();
    let children = world
        .query_filtered::<(), (With<Saveable>, With<ChildOf>)>()
        .iter(world)
        .count();
    (saved, children)
}

/// Loads both contenders' encodings into fresh apps and compares their census with the saved
/// world's.
fn verify_round_trips(shape: Shape, fixture: &mut Fixture, count: u32) {
    let expected = census(fixture.app.world_mut());
    for name in ["keepsake", "dynamic_world_postcard"] {
        let mut app = shape.app();
        match name {
            "keepsake" => keepsake_load(&mut app, &fixture.ours),
            _ => dynamic_world_load(&mut app, &fixture.dw_postcard),
        }
        let found = census(app.world_mut());
        let verdict = if found == expected { "ok" } else { "FAILED" };
        println!(
            "shapes round trip {verdict}: {}, {name}, {count} entities ({found:?} for {expected:?})",
            shape.name()
        );
    }
}

fn bench_full(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32) {
    let mut fixture = Fixture::new(shape, count);
    verify_round_trips(shape, &mut fixture, count);
    let Fixture {
        mut app,
        ours,
        dw_postcard,
    } = fixture;
    let world = app.world_mut();
    let types = world.resource::<AppTypeRegistry>().clone();
    group.bench_function(BenchmarkId::new("capture", count), |b| {
        b.iter(|| snapshot::capture(black_box(&*world)).unwrap())
    });
    group.bench_function(BenchmarkId::new("dw_postcard_save", count), |b| {
        b.iter(|| {
            let dw = shape.dynamic_world(world);
            postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read())).unwrap()
        })
    });
    group.bench_function(BenchmarkId::new("decode_apply", count), |b| {
        b.iter_batched_ref(
            || shape.app(),
            |app| keepsake_load(app, &ours),
            BatchSize::PerIteration,
        )
    });
    group.bench_function(BenchmarkId::new("dw_postcard_load", count), |b| {
        b.iter_batched_ref(
            || shape.app(),
            |app| dynamic_world_load(app, &dw_postcard),
            BatchSize::PerIteration,
        )
    });
    bench_apply_only(group, (shape, count), &ours, &dw_postcard);
}

/// The pool's part of a save: the blob joined and hashed, then the file encoded (metadata,
/// postcard, chunks compressed where it pays, CRCs) through the profile's chunk cache, as the
/// plugin's save job does before its durable write.
fn pool_part(pending: snapshot::PendingSnapshot, chunks: &ChunkCache) -> usize {
    let bundle = pending.finish().into_bundle(1);
    let meta = SaveMeta::new(SlotId::Auto(0));
    let encoded = format::encode_cached(&meta, &bundle, &EncodeOptions::default(), chunks).unwrap();
    encoded.len() as usize
}

/// What one incremental benchmark times.
#[derive(Clone, Copy)]
enum Part {
    /// `CaptureCache::capture` after this fraction changed.
    Main(f64),
    /// [`Shape::copy`] of the values changed after this fraction changed: the main thread's
    /// part, copy alone, if it copied changed values instead of encoding them.
    Copy(f64),
    /// [`pool_part`] after this fraction changed.
    Pool(f64),
    /// [`pool_part`] after the cache was cleared (a full save).
    PoolFull,
}

/// Times one [`Part`] per iteration (the changes and the untimed parts outside the timing), and
/// prints p50 / p99 over every iteration criterion ran.
fn bench_part(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (shape, count): (Shape, u32),
    (name, part): (&str, Part),
    world: &mut World,
    entities: &[Entity],
) {
    let mut cache = CaptureCache::default();
    // The profile's chunk cache, kept between saves as the store keeps it.
    let chunks = ChunkCache::new();
    world.increment_change_tick();
    black_box(pool_part(cache.capture(world).unwrap(), &chunks));
    let mut samples: Vec<Duration> = Vec::new();
    let mut round = 0;
    group.bench_function(BenchmarkId::new(name, count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                let elapsed = match part {
                    Part::Main(fraction) => {
                        shapes::change(world, shape, entities, fraction, round);
                        let start = Instant::now();
                        let pending = cache.capture(world).unwrap();
                        let elapsed = start.elapsed();
                        // The plugin finishes every capture on the pool; so does this, untimed
                        // (a patched chunk is put together there).
                        black_box(pending.finish());
                        elapsed
                    }
                    Part::Copy(fraction) => {
                        shapes::change(world, shape, entities, fraction, round);
                        let changed = shapes::changed(entities, fraction, round);
                        let start = Instant::now();
                        let copies = shape.copy(world, &changed);
                        let elapsed = start.elapsed();
                        drop(black_box(copies));
                        elapsed
                    }
                    Part::Pool(fraction) => {
                        shapes::change(world, shape, entities, fraction, round);
                        let pending = cache.capture(world).unwrap();
                        let start = Instant::now();
                        black_box(pool_part(pending, &chunks));
                        start.elapsed()
                    }
                    Part::PoolFull => {
                        cache.clear();
                        let pending = cache.capture(world).unwrap();
                        let start = Instant::now();
                        black_box(pool_part(pending, &ChunkCache::new()));
                        start.elapsed()
                    }
                };
                samples.push(elapsed);
                total += elapsed;
            }
            total
        })
    });
    if let Some(percentiles) = shapes::percentiles(&mut samples) {
        let shape = shape.name();
        println!("shapes part, {shape}, {count} entities, {name}: {percentiles}");
    }
}

fn bench_incremental(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32) {
    let mut app = shape.populated(count);
    let world = app.world_mut();
    let entities = shapes::saved_entities(world);
    for part in [
        ("main_10pct", Part::Main(0.10)),
        ("main_1pct", Part::Main(0.01)),
        ("copy_10pct", Part::Copy(0.10)),
        ("pool_1pct", Part::Pool(0.01)),
        ("pool_full", Part::PoolFull),
    ] {
        bench_part(group, (shape, count), part, world, &entities);
    }
}

fn main() {
    // The task pools every app with `TaskPoolPlugin` has: a capture spreads the encoding of
    // many changed rows over the compute pool.
    bevy::app::TaskPoolOptions::default().create_default_pools();
    let mut criterion = Criterion::default().configure_from_args();
    for shape in Shape::from_env() {
        let mut group = criterion.benchmark_group(format!("shapes_{}", shape.name()));
        group.sample_size(10);
        for count in counts() {
            bench_full(&mut group, shape, count);
            bench_incremental(&mut group, shape, count);
        }
        group.finish();
    }
    criterion.final_summary();
}
