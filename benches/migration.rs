//! Loading a save written by an older game version, whose `Health` had another layout, through
//! `register_saveable_migration`, beside loading the same world saved by the current version.

use bevy::prelude::*;
use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry, Saveable, SaveableAppExt, Snapshot};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};

mod old_game {
    use bevy::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Health"]
    pub struct Health(pub u32);
}

/// `Health` as version 1 stored it.
#[derive(Reflect, Clone, Serialize, Deserialize)]
#[reflect(Serialize, Deserialize)]
#[type_path = "game::legacy"]
#[type_name = "HealthV1"]
struct HealthV1(u32);

#[derive(Component, Reflect, Clone, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
#[type_path = "game"]
#[type_name = "Health"]
struct Health {
    current: f32,
    max: f32,
}

impl From<HealthV1> for Health {
    fn from(old: HealthV1) -> Self {
        Health {
            current: old.0 as f32,
            max: 100.0,
        }
    }
}

fn new_game() -> App {
    let mut app = App::new();
    app.register_saveable_serde::<Health>()
        .register_saveable_migration::<HealthV1, Health>(1)
        .register_saveable_serde::<Transform>();
    app
}

fn old_save(count: u32) -> Snapshot {
    let mut app = App::new();
    app.register_saveable_serde::<old_game::Health>()
        .register_saveable_serde::<Transform>();
    for i in 0..count {
        app.world_mut().spawn((
            Saveable,
            old_game::Health(i % 100),
            Transform::from_xyz(i as f32, 0.0, 0.0),
        ));
    }
    snapshot::capture(app.world()).unwrap()
}

fn current_save(count: u32) -> Snapshot {
    let mut app = new_game();
    for i in 0..count {
        app.world_mut().spawn((
            Saveable,
            Health {
                current: (i % 100) as f32,
                max: 100.0,
            },
            Transform::from_xyz(i as f32, 0.0, 0.0),
        ));
    }
    snapshot::capture(app.world()).unwrap()
}

fn load(app: &mut App, saved: &Snapshot) {
    let world = app.world_mut();
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, LoadMode::Respawn);
}

fn migration(c: &mut Criterion) {
    let mut group = c.benchmark_group("migration");
    group.sample_size(20);
    for count in [1_000u32, 10_000] {
        let old = old_save(count);
        let current = current_save(count);
        group.bench_function(
            BenchmarkId::new("load_v1_save_through_migration", count),
            |b| b.iter_batched_ref(new_game, |app| load(app, &old), BatchSize::PerIteration),
        );
        group.bench_function(BenchmarkId::new("load_current_save", count), |b| {
            b.iter_batched_ref(new_game, |app| load(app, &current), BatchSize::PerIteration)
        });
    }
    group.finish();
}

criterion_group!(benches, migration);
criterion_main!(benches);
