//! A game-shaped world for benchmarks and size checks: entities with a `Transform`, a
//! `Velocity`, `Health`, a `Name`, and an `Inventory` on one in ten.
#![allow(dead_code)]

use bevy::prelude::*;
use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};
use serde::{Deserialize, Serialize};

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Velocity(pub Vec3);

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Health {
    pub current: f32,
    pub max: f32,
}

#[derive(Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: u32,
    pub count: u16,
}

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Inventory {
    pub items: Vec<Item>,
}

/// An app with the game's saveable types registered with their serde implementations (the
/// fast path every game whose components derive serde should use).
pub fn app() -> App {
    let mut app = App::new();
    app.register_saveable_serde::<Transform>()
        .register_saveable_serde::<Velocity>()
        .register_saveable_serde::<Health>()
        .register_saveable_serde::<Name>()
        .register_saveable_serde::<Inventory>();
    app
}

/// The same types registered through reflection only (`register_saveable`, which uses
/// `ReflectSerialize`): same bytes, slower.
pub fn reflect_app() -> App {
    let mut app = App::new();
    app.register_saveable::<Transform>()
        .register_saveable::<Velocity>()
        .register_saveable::<Health>()
        .register_saveable::<Name>()
        .register_saveable::<Inventory>();
    app
}

const NAMES: [&str; 6] = ["goblin", "archer", "merchant", "wolf", "guard", "slime"];

/// Spawns `count` saveable entities with varied, deterministic values.
pub fn populate(world: &mut World, count: u32) {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    for i in 0..count {
        let mut entity = world.spawn((
            Saveable,
            Transform::from_xyz(next() * 1000.0, next() * 1000.0, 0.0)
                .with_rotation(Quat::from_rotation_z(next() * std::f32::consts::TAU)),
            Velocity(Vec3::new(next() - 0.5, next() - 0.5, 0.0) * 40.0),
            Health {
                current: (next() * 100.0).round(),
                max: 100.0,
            },
            Name::new(format!("{} {i}", NAMES[i as usize % NAMES.len()])),
        ));
        if i % 10 == 0 {
            let items = (0..1 + i % 5)
                .map(|k| Item {
                    id: 100 + k * 7 + i % 13,
                    count: (1 + k * 3) as u16,
                })
                .collect();
            entity.insert(Inventory { items });
        }
    }
}

/// The snapshot blob of a populated game world, cut to `len` bytes: what a real save's payload
/// carries. It compresses far better than `fixtures::game_like_blob` (whose floats are random),
/// so benchmarks of the codec choice run on both.
pub fn captured_blob(len: usize) -> Vec<u8> {
    // About 83 bytes per entity; spawn a margin more and cut.
    let entities = u32::try_from(len / 70 + 16).expect("a benchmark-sized blob");
    let mut app = app();
    populate(app.world_mut(), entities);
    let mut blob = bevy_keepsake::snapshot::capture(app.world())
        .expect("the game world captures")
        .blob;
    assert!(
        blob.len() >= len,
        "{} entities gave {} bytes",
        entities,
        blob.len()
    );
    blob.truncate(len);
    blob
}
