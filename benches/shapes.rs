//! Snapshot benchmarks on the family of world shapes (issue 24, `common/shapes.rs`), each at
//! 1k / 10k / 100k saveable entities. Per shape and count, in the criterion group
//! `shapes_<shape>`:
//!
//! - `capture`: a full capture + encode (`snapshot::capture`), against `dw_postcard_save`:
//!   `DynamicWorld` extraction + postcard. Wall clock: ours spreads the encoding over the
//!   compute pool (the calling thread helping), `DynamicWorld` runs on the calling thread alone;
//! - `decode_apply`: our decode + apply into a fresh app, against `dw_postcard_load`: postcard
//!   `WorldDeserializer` + `write_to_world`. Wall clock, both ending with every value's box
//!   freed: ours hands the frees to the async compute pool, and the row waits for them;
//! - `capture_cpu`, `dw_postcard_save_cpu`, `decode_apply_cpu`, `dw_postcard_load_cpu`: the
//!   same four by the CPU time the whole process spends (every thread, pool work joined), so
//!   the two contenders are compared on equal work (issue 53);
//! - `floor_save`, `floor_load` and their `_cpu` twins: the floor (issue 52, `common/floor.rs`),
//!   the same world written by typed serde (postcard) straight from typed queries and read
//!   back into one bundle per entity, references remapped: what any saver at least pays;
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
//! checked: a capture of the loaded world must hold the saved world's entities and values,
//! entities named by the saved ids they stand for (`bevy_keepsake::testing::SavedValues`, sibling order left out); a difference panics
//! before anything is timed, under `cargo bench -- --test` too.
//!
//! Run: `cargo bench --bench shapes` (`KEEPSAKE_BENCH_QUICK=1`: 10k only;
//! `KEEPSAKE_BENCH_COUNTS=1000,100000` and `KEEPSAKE_BENCH_SHAPES=deep,large` pick).

#[path = "common/env.rs"]
mod env;
#[path = "common/floor.rs"]
mod floor;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
#[path = "common/shapes.rs"]
mod shapes;

use bevy::asset::{AssetPath, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, block_on};
use bevy::world_serialization::serde::{DynamicWorldSerializer, WorldDeserializer};
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, ChunkCache, EncodeOptions, SaveMeta};
use bevy_keepsake::snapshot::{self, CaptureCache, LoadMode, SaveRegistry};
use bevy_keepsake::testing::SavedValues;
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
    floor: Vec<u8>,
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
        let floor = floor::save(world, shape);
        let (name, floor_len) = (shape.name(), floor.len());
        println!("shapes size, {name}, {count} entities: floor postcard {floor_len} bytes");
        Fixture {
            app,
            ours,
            dw_postcard,
            floor,
        }
    }
}

/// Our load path: `snapshot::decode`, then `snapshot::apply`; returns the saved id → loaded
/// entity map. Box frees past a few hundred go to the async compute pool, detached (as in a
/// game): [`join_async_pool`] waits for them.
fn keepsake_load(app: &mut App, ours: &snapshot::Snapshot) -> EntityHashMap<Entity> {
    let decoded = decode_ours(app.world(), ours);
    snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn).entity_map
}

/// Our decode, with the world's asset server when it has one (the `handles` shape), so saved
/// handles come back from their paths as `DynamicWorld`'s do, not as default handles.
fn decode_ours(world: &World, ours: &snapshot::Snapshot) -> snapshot::DecodedSnapshot {
    let registry = world.resource::<SaveRegistry>();
    let types = world.resource::<AppTypeRegistry>().read();
    let assets = world.get_resource::<AssetServer>();
    snapshot::decode_with_assets(&ours.blob, ours.state_hash, registry, &types, assets).unwrap()
}

/// Bevy's load path: `WorldDeserializer`, then `write_to_world`, on the calling thread alone
/// (the `DynamicWorld` is dropped before it returns); returns the saved id → loaded entity map.
fn dynamic_world_load(app: &mut App, bytes: &[u8]) -> EntityHashMap<Entity> {
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
    let mut entity_map = EntityHashMap::default();
    dw.write_to_world(world, &mut entity_map).unwrap();
    entity_map
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
                let decoded = decode_ours(app.world(), ours);
                let start = Instant::now();
                black_box(snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn));
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

/// Loads the three contenders' encodings into fresh apps, captures each loaded world and compares
/// its values with the saved world's (entities named by the saved ids they stand for, see
/// `bevy_keepsake::testing::SavedValues`); panics on the first difference, before anything is timed, so a load
/// that writes wrong values fails the bench and `cargo bench -- --test` alike.
fn verify_round_trips(shape: Shape, fixture: &Fixture, count: u32) {
    let expected = SavedValues::of(&fixture.ours.blob).without_sibling_order();
    for name in ["keepsake", "dynamic_world_postcard", "floor"] {
        let mut app = shape.app();
        let entity_map = match name {
            "keepsake" => keepsake_load(&mut app, &fixture.ours),
            "floor" => floor::load(app.world_mut(), shape, &fixture.floor),
            _ => dynamic_world_load(&mut app, &fixture.dw_postcard),
        };
        let recaptured = snapshot::capture(app.world()).unwrap();
        let found = SavedValues::loaded(&recaptured.blob, &entity_map).without_sibling_order();
        let what = format!("{}, {name}, {count} entities", shape.name());
        expected.assert_same(&found, &what);
        println!("shapes round trip ok: {what} (every saved value read back)");
    }
}

/// CPU time of every thread of this process so far: the calling thread, the compute pool a
/// capture spreads over, the async compute pool a load's box frees go to.
fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; the clock id is a constant Linux knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Returns once every task spawned on the async compute pool before the call has run: a load's
/// box frees, which it hands to that pool detached. Sound because `main` gives the pool one
/// thread, which takes tasks spawned from outside it in the order they were spawned, and a
/// free task never yields: the empty task spawned here runs after them.
fn join_async_pool() {
    if let Some(pool) = AsyncComputeTaskPool::try_get() {
        block_on(pool.spawn(async {}));
    }
}

/// Times `work` on a fresh `setup()` each iteration (made and dropped untimed) by the CPU time
/// the whole process spends on it, pool work joined ([`join_async_pool`]), so two contenders
/// are compared on the work they do, not on how many of the machine's two cores they use.
fn bench_cpu<I>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (name, count): (&str, u32),
    mut setup: impl FnMut() -> I,
    mut work: impl FnMut(&mut I),
) {
    group.bench_function(BenchmarkId::new(name, count), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut input = setup();
                let start = process_cpu_time();
                work(&mut input);
                join_async_pool();
                total += process_cpu_time() - start;
                drop(input);
            }
            total
        })
    });
}

fn bench_full(group: &mut BenchmarkGroup<'_, WallTime>, shape: Shape, count: u32) {
    let fixture = Fixture::new(shape, count);
    verify_round_trips(shape, &fixture, count);
    let Fixture {
        mut app,
        ours,
        dw_postcard,
        floor,
    } = fixture;
    let world = app.world_mut();
    let types = world.resource::<AppTypeRegistry>().clone();
    // Wall clock. Ours spreads a capture's encoding over the compute pool (the calling thread
    // helping) and hands a load's box frees to the async compute pool; `DynamicWorld` +
    // postcard runs on the calling thread alone. The load rows wait for those frees
    // (`join_async_pool`), so both sides' loads end with every value's box freed.
    group.bench_function(BenchmarkId::new("capture", count), |b| {
        b.iter(|| snapshot::capture(black_box(&*world)).unwrap())
    });
    group.bench_function(BenchmarkId::new("dw_postcard_save", count), |b| {
        b.iter(|| {
            let dw = shape.dynamic_world(world);
            postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read())).unwrap()
        })
    });
    let load = |app: &mut App| {
        keepsake_load(app, &ours);
        join_async_pool();
    };
    group.bench_function(BenchmarkId::new("decode_apply", count), |b| {
        b.iter_batched_ref(|| shape.app(), load, BatchSize::PerIteration)
    });
    let dw_load = |app: &mut App| {
        dynamic_world_load(app, &dw_postcard);
        join_async_pool();
    };
    group.bench_function(BenchmarkId::new("dw_postcard_load", count), |b| {
        b.iter_batched_ref(|| shape.app(), dw_load, BatchSize::PerIteration)
    });
    // The same four by the CPU time they cost the whole process (every thread, pool work
    // joined): equal work whatever each side spreads over threads.
    let capture = |_: &mut ()| drop(black_box(snapshot::capture(&*world).unwrap()));
    bench_cpu(group, ("capture_cpu", count), || (), capture);
    let dw_save = |_: &mut ()| {
        let dw = shape.dynamic_world(world);
        let bytes = postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read()));
        drop(black_box(bytes.unwrap()));
    };
    bench_cpu(group, ("dw_postcard_save_cpu", count), || (), dw_save);
    bench_cpu(group, ("decode_apply_cpu", count), || shape.app(), load);
    bench_cpu(
        group,
        ("dw_postcard_load_cpu", count),
        || shape.app(),
        dw_load,
    );
    bench_floor(group, (shape, count), world, &floor);
    bench_apply_only(group, (shape, count), &ours, &dw_postcard);
}

/// The floor's rows (`common/floor.rs`), timed as the contenders' are: `floor_save` and
/// `floor_load` by wall clock (the load into a fresh app, as ours), their `_cpu` twins by the
/// process's CPU time. The floor runs on the calling thread alone.
fn bench_floor(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (shape, count): (Shape, u32),
    world: &mut World,
    bytes: &[u8],
) {
    group.bench_function(BenchmarkId::new("floor_save", count), |b| {
        b.iter(|| floor::save(black_box(&mut *world), shape))
    });
    let load = |app: &mut App| drop(black_box(floor::load(app.world_mut(), shape, bytes)));
    group.bench_function(BenchmarkId::new("floor_load", count), |b| {
        b.iter_batched_ref(|| shape.app(), load, BatchSize::PerIteration)
    });
    let save = |_: &mut ()| drop(black_box(floor::save(&mut *world, shape)));
    bench_cpu(group, ("floor_save_cpu", count), || (), save);
    bench_cpu(group, ("floor_load_cpu", count), || shape.app(), load);
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
    // many changed rows over the compute pool, a load frees its boxes on the async compute
    // pool. That one gets a single thread (its default on two cores) so `join_async_pool` is
    // sound on any machine.
    let mut pools = bevy::app::TaskPoolOptions::default();
    pools.async_compute.min_threads = 1;
    pools.async_compute.max_threads = 1;
    pools.create_default_pools();
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
