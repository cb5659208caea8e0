//! The registry the `ecs_blob` fuzz target and its corpus replay decode against: serde-path and
//! reflection-path types with every kind of field, entity references, a resource and a legacy
//! migration.
#![allow(dead_code)]

use bevy::prelude::*;
use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
pub struct Stats {
    pub level: u8,
    pub title: String,
    pub tags: Vec<String>,
    pub nickname: Option<String>,
    pub resist: HashMap<String, f32>,
    pub mood: Mood,
}

#[derive(Reflect, Clone, Debug, PartialEq)]
pub enum Mood {
    Calm,
    Angry { rage: u32 },
    Scared(f32),
}

#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
pub struct Target(#[entities] pub Entity);

#[derive(Reflect, Clone, Debug, PartialEq)]
pub struct HealthV1(pub u32);

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Health {
    pub current: f32,
    pub max: f32,
}

impl From<HealthV1> for Health {
    fn from(old: HealthV1) -> Self {
        Health {
            current: old.0 as f32,
            max: 100.0,
        }
    }
}

#[derive(Resource, Reflect, Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[reflect(Resource, Serialize, Deserialize)]
pub struct Score {
    pub points: u64,
    pub log: Vec<String>,
}

/// An app with the fuzz world's types registered.
pub fn app() -> App {
    let mut app = App::new();
    app.register_saveable_serde::<Position>()
        .register_saveable::<Stats>()
        .register_saveable::<Target>()
        .register_saveable_serde::<Health>()
        .register_saveable_migration::<HealthV1, Health>(1)
        .register_saveable_serde::<Score>()
        .register_saveable_serde::<Name>();
    app
}

/// A small populated world whose capture seeds the fuzzer.
pub fn populate(world: &mut World) {
    let root = world
        .spawn((Saveable, Position { x: 1.0, y: 2.0 }, Name::new("root")))
        .id();
    let child = world
        .spawn((
            Saveable,
            ChildOf(root),
            Stats {
                level: 3,
                title: "Knight".into(),
                tags: vec!["brave".into()],
                nickname: Some("Sir".into()),
                resist: HashMap::from([("fire".into(), 0.5)]),
                mood: Mood::Angry { rage: 7 },
            },
            Health {
                current: 5.0,
                max: 9.0,
            },
        ))
        .id();
    world.spawn((Saveable, Target(child), Position { x: -3.0, y: 0.5 }));
    world.insert_resource(Score {
        points: 1200,
        log: vec!["found the lantern".into()],
    });
}
