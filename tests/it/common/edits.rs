//! Random edits of the real-game world of the kinds a game makes between two saves (values,
//! components inserted and removed, spawns, despawns, reparenting, the filter's marker), shared
//! by the tests that compare captures after them.

use crate::common::fixtures::Rng;
use crate::common::real_world::{self, AiState, GameClock, Owner, Stats, Target, UnitId, Weather};
use bevy::prelude::*;
use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};

/// A saveable sparse-set component: its column is walked by archetype, not by table.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
#[component(storage = "SparseSet")]
pub struct Buff(pub u8);

/// A sparse-set marker the filter excludes: entities of one table are then saved or not
/// depending on it.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
#[component(storage = "SparseSet")]
pub struct Hidden;

/// The real-game world with `entities` units, a frame later than their spawns, as in a game
/// (edits made in the tick of a capture count as changed at the next one too).
pub fn world_with(entities: u32) -> App {
    let mut app = real_world::app();
    app.register_saveable::<Buff>();
    real_world::populate(app.world_mut(), entities);
    app.world_mut().increment_change_tick();
    app
}

/// A random saved (or once saved) entity of the world.
pub fn pick(world: &mut World, rng: &mut Rng) -> Option<Entity> {
    let entities: Vec<Entity> = world
        .query_filtered::<Entity, With<UnitId>>()
        .iter(world)
        .collect();
    (!entities.is_empty()).then(|| entities[rng.below(entities.len() as u64) as usize])
}

/// Random edits from one seed; recruits get `UnitId`s counted up from the first id.
pub struct Edits {
    pub rng: Rng,
    pub next_id: u32,
}

impl Edits {
    pub fn new(seed: u64, first_id: u32) -> Self {
        Edits {
            rng: Rng::new(seed),
            next_id: first_id,
        }
    }

    /// `count` random [`edit`]s.
    pub fn apply(&mut self, world: &mut World, count: u64) {
        for _ in 0..count {
            edit(world, &mut self.rng, &mut self.next_id);
        }
    }
}

/// One random edit of the kinds a game makes between two saves.
pub fn edit(world: &mut World, rng: &mut Rng, next_id: &mut u32) {
    let Some(entity) = pick(world, rng) else {
        return;
    };
    let other = pick(world, rng).unwrap_or(entity);
    let roll = rng.below(16);
    match roll {
        0 | 1 => {
            if let Some(mut stats) = world.get_mut::<Stats>(entity) {
                stats.hp = (rng.below(1000) as f32) / 10.0;
            }
        }
        2 => {
            if let Some(mut transform) = world.get_mut::<Transform>(entity) {
                transform.translation.x += 1.0;
            }
        }
        3 => match world.get::<Buff>(entity) {
            Some(_) => drop(world.entity_mut(entity).remove::<Buff>()),
            None => drop(world.entity_mut(entity).insert(Buff(rng.below(9) as u8))),
        },
        4 => match world.get::<Target>(entity) {
            Some(_) => drop(world.entity_mut(entity).remove::<Target>()),
            None => drop(world.entity_mut(entity).insert(Target {
                entity: Some(other),
                priority: rng.below(5) as i32,
            })),
        },
        5 => world.entity_mut(entity).despawn(),
        6 => {
            *next_id += 1;
            let mut spawned = world.spawn((
                Saveable,
                UnitId(*next_id),
                Stats {
                    hp: 5.0,
                    max_hp: 10.0,
                    level: 1,
                    xp: *next_id,
                    armor: -1,
                    alive: true,
                },
                Name::new(format!("recruit {next_id}")),
            ));
            if rng.below(2) == 0 {
                spawned.insert(ChildOf(entity));
            }
        }
        7 if entity != other && !is_ancestor(world, entity, other) => {
            world.entity_mut(entity).insert(ChildOf(other));
        }
        8 => drop(world.entity_mut(entity).remove::<ChildOf>()),
        9 => {
            world.entity_mut(entity).insert(Owner(other));
            if let Some(mut ai) = world.get_mut::<AiState>(entity) {
                *ai = AiState::Chase {
                    target: other,
                    since: 1.0,
                };
            }
        }
        10 => world.resource_mut::<GameClock>().tick += 1,
        11 => *world.resource_mut::<Weather>() = Weather::Rain { intensity: 0.5 },
        12 => match world.get::<Hidden>(entity) {
            Some(_) => drop(world.entity_mut(entity).remove::<Hidden>()),
            None => drop(world.entity_mut(entity).insert(Hidden)),
        },
        13 => match world.get::<Saveable>(entity) {
            Some(_) => drop(world.entity_mut(entity).remove::<Saveable>()),
            None => drop(world.entity_mut(entity).insert(Saveable)),
        },
        14 => {
            if let Some(mut name) = world.get_mut::<Name>(entity) {
                name.set(format!("renamed {}", rng.below(100)));
            }
        }
        // Marked changed without a new value.
        _ => {
            if let Some(mut stats) = world.get_mut::<Stats>(entity) {
                stats.set_changed();
            }
        }
    }
}

/// Whether `ancestor` is `entity` or one of its ancestors (a `ChildOf` to it would make a
/// cycle).
pub fn is_ancestor(world: &World, ancestor: Entity, entity: Entity) -> bool {
    let mut current = Some(entity);
    while let Some(at) = current {
        if at == ancestor {
            return true;
        }
        current = world.get::<ChildOf>(at).map(ChildOf::parent);
    }
    false
}
