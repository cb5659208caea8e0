//! Snapshot layer against Bevy's own `DynamicWorld` path, side by side on the same world.
//!
//! - save: our capture into an `ecs_blob` vs `DynamicWorldBuilder` extraction + RON, and
//!   + postcard (`DynamicWorldSerializer`);
//! - load: our decode + apply vs RON / postcard `WorldDeserializer` + `write_to_world`.
//!
//! Loads go into a fresh world each iteration (its setup is not timed). `states_load` times a
//! load that changes a saved `States` value (its transitions run first).
//!
//! Two worlds: `game_world` (five flat types, all serde) in `snapshot_save` / `snapshot_load`,
//! and `real_world` (a hierarchy, entity references, enums, maps, mostly reflection-only types)
//! in `real_world_save` / `real_world_load`. Before timing the real-game world, every
//! contender's load is checked against the saved world (compared by `UnitId`); a contender
//! that does not round-trip prints `round trip FAILED: <contender>` and is still timed.

#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/game_world.rs"]
mod game_world;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;

use bevy::asset::{AssetPath, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy::world_serialization::serde::{DynamicWorldSerializer, WorldDeserializer};
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry, Saveable, SaveableAppExt};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde::de::DeserializeSeed;
use std::any::TypeId;
use std::hint::black_box;

/// The benchmark world holds no asset handles, so nothing is ever loaded from a path.
struct NoAssets;

impl LoadFromPath for NoAssets {
    fn load_from_path_erased(&mut self, _: TypeId, path: AssetPath<'static>) -> UntypedHandle {
        unreachable!("the benchmark world has no asset handles, yet {path} was requested")
    }
}

fn populated(count: u32) -> App {
    let mut app = game_world::app();
    game_world::populate(app.world_mut(), count);
    app
}

fn dynamic_world(world: &mut World) -> DynamicWorld {
    let types = world.resource::<AppTypeRegistry>().clone();
    let types = types.read();
    let mut saved = world.query_filtered::<Entity, With<Saveable>>();
    let entities: Vec<Entity> = saved.iter(world).collect();
    DynamicWorldBuilder::from_world(world, &types)
        .deny_all_resources()
        .extract_entities(entities.into_iter())
        .build()
}

/// Entity counts (see `common/env.rs`): 1k in a quick run, else 1k, 10k and 100k.
fn counts() -> Vec<u32> {
    env::counts(&[1_000], &[1_000, 10_000, 100_000])
}

/// One world and its encodings by every contender.
struct Fixture {
    app: App,
    ours: snapshot::Snapshot,
    dw_postcard: Vec<u8>,
    dw_ron: String,
}

/// How `DynamicWorld` extracts the same entities and resources a world's keepsake save holds.
type Extract = fn(&mut World) -> DynamicWorld;

impl Fixture {
    /// Encodes `app`'s world by every contender; prints the sizes under `label`.
    fn new(mut app: App, extract: Extract, label: &str, count: u32) -> Self {
        let world = app.world_mut();
        let types = world.resource::<AppTypeRegistry>().clone();
        let ours = snapshot::capture(world).unwrap();
        let dw = extract(world);
        let dw_postcard =
            postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read())).unwrap();
        let dw_ron = dw.serialize(&types.read()).unwrap();
        println!(
            "{label} size, {count} entities: keepsake blob {} bytes, DynamicWorld postcard {} bytes ({:.1}x), RON {} bytes",
            ours.blob.len(),
            dw_postcard.len(),
            dw_postcard.len() as f64 / ours.blob.len() as f64,
            dw_ron.len()
        );
        Fixture {
            app,
            ours,
            dw_postcard,
            dw_ron,
        }
    }
}

fn fixture(count: u32) -> Fixture {
    Fixture::new(populated(count), dynamic_world, "snapshot", count)
}

/// `DynamicWorld`'s save of `world`: extraction, then postcard and RON.
fn bench_dynamic_world_saves(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    count: u32,
    world: &mut World,
    extract: Extract,
) {
    let types = world.resource::<AppTypeRegistry>().clone();
    group.bench_function(BenchmarkId::new("dynamic_world_postcard", count), |b| {
        b.iter(|| {
            let dw = extract(world);
            postcard::to_stdvec(&DynamicWorldSerializer::new(&dw, &types.read())).unwrap()
        })
    });
    group.bench_function(BenchmarkId::new("dynamic_world_ron", count), |b| {
        b.iter(|| extract(world).serialize(&types.read()).unwrap())
    });
}

fn save(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_save");
    group.sample_size(10);
    for count in counts() {
        let mut app = fixture(count).app;
        let world = app.world_mut();
        group.bench_function(BenchmarkId::new("keepsake_capture", count), |b| {
            b.iter(|| snapshot::capture(black_box(&*world)).unwrap())
        });
        let mut reflect_app = game_world::reflect_app();
        game_world::populate(reflect_app.world_mut(), count);
        group.bench_function(BenchmarkId::new("keepsake_capture_reflect", count), |b| {
            b.iter(|| snapshot::capture(black_box(reflect_app.world())).unwrap())
        });
        bench_dynamic_world_saves(&mut group, count, world, dynamic_world);
    }
    group.finish();
}

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_load");
    group.sample_size(10);
    for count in counts() {
        let Fixture {
            ours,
            dw_postcard,
            dw_ron,
            ..
        } = fixture(count);

        group.bench_function(BenchmarkId::new("keepsake_decode_apply", count), |b| {
            b.iter_batched_ref(
                game_world::app,
                |app| {
                    let world = app.world_mut();
                    let registry = world.resource::<SaveRegistry>().clone();
                    let types = world.resource::<AppTypeRegistry>().clone();
                    let decoded =
                        snapshot::decode(&ours.blob, ours.state_hash, &registry, &types.read())
                            .unwrap();
                    snapshot::apply(world, decoded, LoadMode::Respawn)
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("dynamic_world_postcard", count), |b| {
            b.iter_batched_ref(
                game_world::app,
                |app| {
                    let mut deserializer = postcard::Deserializer::from_bytes(&dw_postcard);
                    write_dynamic_world(app.world_mut(), &mut deserializer);
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("dynamic_world_ron", count), |b| {
            b.iter_batched_ref(
                game_world::app,
                |app| {
                    let mut deserializer = ron::Deserializer::from_str(&dw_ron).unwrap();
                    write_dynamic_world(app.world_mut(), &mut deserializer);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// Bevy's load path: `WorldDeserializer`, then `write_to_world`.
fn write_dynamic_world<'de, D>(world: &mut World, deserializer: D)
where
    D: serde::Deserializer<'de>,
    D::Error: std::fmt::Debug,
{
    let types = world.resource::<AppTypeRegistry>().clone();
    let dw = WorldDeserializer {
        type_registry: &types.read(),
        load_from_path: &mut NoAssets,
    }
    .deserialize(deserializer)
    .unwrap();
    dw.write_to_world(world, &mut EntityHashMap::default())
        .unwrap();
}

fn real_dynamic_world(world: &mut World) -> DynamicWorld {
    let types = world.resource::<AppTypeRegistry>().clone();
    let types = types.read();
    real_world::dynamic_world_builder(world, &types).build()
}

fn real_fixture(count: u32) -> Fixture {
    let mut app = real_world::app();
    real_world::populate(app.world_mut(), count);
    Fixture::new(app, real_dynamic_world, "real-game", count)
}

fn keepsake_load(app: &mut App, ours: &snapshot::Snapshot) {
    let world = app.world_mut();
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded = snapshot::decode(&ours.blob, ours.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, LoadMode::Respawn);
}

/// Loads one contender's encoding into an app.
type Loader<'a> = dyn Fn(&mut App) + 'a;

/// Loads each contender's encoding into a fresh app and compares it with the saved world.
fn verify_real_round_trips(fixture: &mut Fixture, count: u32) {
    let expected = real_world::rows(fixture.app.world_mut());
    let contenders: [(&str, &Loader); 3] = [
        ("keepsake", &|app| keepsake_load(app, &fixture.ours)),
        ("dynamic_world_postcard", &|app| {
            let mut deserializer = postcard::Deserializer::from_bytes(&fixture.dw_postcard);
            write_dynamic_world(app.world_mut(), &mut deserializer);
        }),
        ("dynamic_world_ron", &|app| {
            let mut deserializer = ron::Deserializer::from_str(&fixture.dw_ron).unwrap();
            write_dynamic_world(app.world_mut(), &mut deserializer);
        }),
    ];
    for (name, load) in contenders {
        let mut app = real_world::app();
        load(&mut app);
        let verdict = if real_world::rows(app.world_mut()) == expected {
            "ok"
        } else {
            "FAILED"
        };
        println!("real-game round trip {verdict}: {name}, {count} entities");
    }
}

fn real_save(c: &mut Criterion) {
    let mut group = c.benchmark_group("real_world_save");
    group.sample_size(10);
    for count in counts() {
        let mut fixture = real_fixture(count);
        verify_real_round_trips(&mut fixture, count);
        let mut app = fixture.app;
        let world = app.world_mut();
        group.bench_function(BenchmarkId::new("keepsake_capture", count), |b| {
            b.iter(|| snapshot::capture(black_box(&*world)).unwrap())
        });
        group.bench_function(BenchmarkId::new("keepsake_capture_no_plans", count), |b| {
            b.iter(|| bevy_keepsake::__private::capture_without_plans(black_box(&*world)).unwrap())
        });
        // The same world with every type registered through serde: the bound for the plans.
        let mut serde_app = real_world::serde_app();
        real_world::populate(serde_app.world_mut(), count);
        group.bench_function(BenchmarkId::new("keepsake_capture_all_serde", count), |b| {
            b.iter(|| snapshot::capture(black_box(serde_app.world())).unwrap())
        });
        bench_dynamic_world_saves(&mut group, count, world, real_dynamic_world);
    }
    group.finish();
}

fn real_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("real_world_load");
    group.sample_size(10);
    for count in counts() {
        let Fixture {
            ours,
            dw_postcard,
            dw_ron,
            ..
        } = real_fixture(count);
        group.bench_function(BenchmarkId::new("keepsake_decode_apply", count), |b| {
            b.iter_batched_ref(
                real_world::app,
                |app| keepsake_load(app, &ours),
                BatchSize::PerIteration,
            )
        });
        let app = real_world::app();
        let registry = app.world().resource::<SaveRegistry>().clone();
        let types = app.world().resource::<AppTypeRegistry>().clone();
        group.bench_function(BenchmarkId::new("keepsake_decode", count), |b| {
            b.iter(|| {
                snapshot::decode(&ours.blob, ours.state_hash, &registry, &types.read()).unwrap()
            })
        });
        let serde_app = real_world::serde_app();
        let serde_registry = serde_app.world().resource::<SaveRegistry>().clone();
        group.bench_function(BenchmarkId::new("keepsake_decode_all_serde", count), |b| {
            b.iter(|| {
                snapshot::decode(&ours.blob, ours.state_hash, &serde_registry, &types.read())
                    .unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("keepsake_decode_no_plans", count), |b| {
            b.iter(|| {
                bevy_keepsake::__private::decode_without_plans(
                    &ours.blob,
                    ours.state_hash,
                    &registry,
                    &types.read(),
                )
                .unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("dynamic_world_postcard", count), |b| {
            b.iter_batched_ref(
                real_world::app,
                |app| {
                    let mut deserializer = postcard::Deserializer::from_bytes(&dw_postcard);
                    write_dynamic_world(app.world_mut(), &mut deserializer);
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("dynamic_world_ron", count), |b| {
            b.iter_batched_ref(
                real_world::app,
                |app| {
                    let mut deserializer = ron::Deserializer::from_str(&dw_ron).unwrap();
                    write_dynamic_world(app.world_mut(), &mut deserializer);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// Asset handles: the reflection-only game world with a `Looks` component on one entity in four,
// holding a path-loaded handle, beside the same world whose `Looks` holds a plain index instead.

/// An asset type for the handles (nothing is ever loaded: the handles only need their paths).
#[derive(Asset, TypePath)]
struct Art;

#[derive(Component, Reflect)]
#[reflect(Component)]
struct Looks {
    art: Handle<Art>,
    tint: Vec4,
}

#[derive(Component, Reflect)]
#[reflect(Component)]
struct LooksPlain {
    art: u32,
    tint: Vec4,
}

fn world_with_looks(count: u32, handles: bool) -> App {
    let mut app = game_world::reflect_app();
    app.add_plugins((bevy::app::TaskPoolPlugin::default(), AssetPlugin::default()))
        .init_asset::<Art>();
    if handles {
        app.register_saveable::<Looks>();
    } else {
        app.register_saveable::<LooksPlain>();
    }
    game_world::populate(app.world_mut(), count);
    let server = app.world().resource::<AssetServer>().clone();
    let world = app.world_mut();
    let mut saved = world.query_filtered::<Entity, With<Saveable>>();
    let entities: Vec<Entity> = saved.iter(world).step_by(4).collect();
    for (n, entity) in entities.into_iter().enumerate() {
        let tint = Vec4::new(1.0, 0.5, 0.25, 1.0);
        let art = (n % 16) as u32;
        let mut entity = world.entity_mut(entity);
        if handles {
            let art = server.load(format!("art/sprite-{art}.art"));
            entity.insert(Looks { art, tint });
        } else {
            entity.insert(LooksPlain { art, tint });
        }
    }
    app
}

fn handles(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_handles");
    group.sample_size(10);
    for count in counts() {
        for (name, with_handles) in [("without_handles", false), ("with_handles", true)] {
            let app = world_with_looks(count, with_handles);
            let captured = snapshot::capture(app.world()).unwrap();
            assert!(captured.handles_left_out.is_empty());
            group.bench_function(BenchmarkId::new(name, count), |b| {
                b.iter(|| snapshot::capture(black_box(app.world())).unwrap())
            });
        }
    }
    group.finish();
}

/// A saved phase of the game, loaded through its transitions.
#[derive(States, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum Phase {
    #[default]
    Menu,
    Playing,
}

/// A saved resource `OnEnter(Phase::Playing)` reads and resets.
#[derive(Resource, Reflect, Clone, Copy, Default)]
#[reflect(Resource)]
struct Score(u32);

/// The game world of `count` entities with a saved `Phase`, whose `OnEnter(Playing)` reads and
/// resets the score and lays out a fresh level of 100 saved entities; in `Phase::Menu`.
fn world_with_states(count: u32) -> App {
    let mut app = game_world::app();
    app.add_plugins(bevy::state::app::StatesPlugin)
        .init_state::<Phase>()
        .register_saveable_state::<Phase>()
        .register_saveable::<Score>()
        .add_systems(
            OnEnter(Phase::Playing),
            |mut score: ResMut<Score>, mut commands: Commands| {
                black_box(score.0);
                score.0 = 0;
                for _ in 0..100 {
                    commands.spawn((Saveable, game_world::Velocity(Vec3::ZERO)));
                }
            },
        );
    app.insert_resource(Score(0));
    game_world::populate(app.world_mut(), count);
    app.world_mut()
        .run_schedule(bevy::state::state::StateTransition);
    app
}

fn go_to(app: &mut App, phase: Phase) {
    app.world_mut()
        .resource_mut::<NextState<Phase>>()
        .set(phase);
    app.world_mut()
        .run_schedule(bevy::state::state::StateTransition);
}

/// A world of `count` entities saved while playing (score 42), then gone back to the menu.
fn saved_while_playing(count: u32) -> (App, snapshot::Snapshot) {
    let mut app = world_with_states(count);
    go_to(&mut app, Phase::Playing);
    app.world_mut().resource_mut::<Score>().0 = 42;
    let saved = snapshot::capture(app.world()).unwrap();
    go_to(&mut app, Phase::Menu);
    (app, saved)
}

/// What a load that changes `States` costs: the transitions run first, reading the saved
/// resources, and the apply puts the save over what `OnEnter` made. Respawning into a fresh
/// world, and in place into the world the save was captured from.
fn states_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("states_load");
    group.sample_size(10);
    for count in env::counts(&[1_000], &[1_000, 10_000]) {
        let (_, saved) = saved_while_playing(count);
        for (name, mode) in [
            ("respawn", LoadMode::Respawn),
            ("in_place", LoadMode::InPlace),
        ] {
            group.bench_function(BenchmarkId::new(name, count), |b| {
                b.iter_batched_ref(
                    || match mode {
                        LoadMode::Respawn => (world_with_states(count), saved.clone()),
                        LoadMode::InPlace => saved_while_playing(count),
                    },
                    |(app, saved)| {
                        let world = app.world_mut();
                        let registry = world.resource::<SaveRegistry>().clone();
                        let types = world.resource::<AppTypeRegistry>().clone();
                        let decoded = snapshot::decode(
                            &saved.blob,
                            saved.state_hash,
                            &registry,
                            &types.read(),
                        )
                        .unwrap();
                        let report = snapshot::apply(world, decoded, mode);
                        assert_eq!(world.resource::<Score>().0, 42);
                        report
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    save,
    load,
    real_save,
    real_load,
    handles,
    states_load
);
criterion_main!(benches);
