//! `--crowd N`: N extra saveable critters wandering the arena, so anyone can feel what a save of
//! a big world costs (the HUD shows the last save's main-thread time). `--smoke` runs with 20 000.
//!
//! Critters are reflection-only components (`#[derive(Component, Reflect)]
//! #[reflect(Component)]`, no serde), the way most Bevy games write them. They are not drawn:
//! tens of thousands of sprites would make software rendering (CI's lavapipe) crawl, and what
//! matters here is what the save captures. Each frame a different 1 % of them takes a step, so
//! between two saves a few percent of the world changes, as in a game where most things idle.

use bevy::prelude::*;
use bevy_keepsake::prelude::*;

/// The crowd `--smoke` runs with.
pub const SMOKE_CROWD: usize = 20_000;

/// Where a critter is heading and how fast.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default)]
pub struct Critter {
    pub heading: f32,
    pub speed: f32,
}

/// How hungry a critter is; it grows with every step.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default)]
pub struct Hunger(pub u8);

/// What a critter is up to.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default)]
pub enum Mood {
    #[default]
    Calm,
    Curious {
        toward: Vec2,
    },
    Sleepy(u16),
}

/// Registers the critters' types for saving (also for `--dump`, which reads any save).
pub fn register_saved_types(app: &mut App) {
    app.register_saveable::<Critter>()
        .register_saveable::<Hunger>()
        .register_saveable::<Mood>();
}

/// Spawns `0` critters at startup and lets them wander.
pub struct CrowdPlugin(pub usize);

/// Which critters step next.
#[derive(Resource)]
struct Turn {
    size: usize,
    next: usize,
}

impl Plugin for CrowdPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(Turn {
            size: self.0,
            next: 0,
        })
        .add_systems(Startup, spawn_crowd)
        .add_systems(Update, wander.run_if(super::game::not_rewinding));
    }
}

/// Takes `--crowd N` out of the arguments: the crowd size, if given, and the other arguments.
pub fn take_crowd_arg(args: Vec<String>) -> Result<(Option<usize>, Vec<String>), String> {
    let mut crowd = None;
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg != "--crowd" {
            rest.push(arg);
            continue;
        }
        let count = args.next().ok_or("--crowd needs a number of critters")?;
        let count = count
            .parse()
            .map_err(|_| format!("--crowd needs a number of critters, not {count:?}"))?;
        crowd = Some(count);
    }
    Ok((crowd, rest))
}

fn spawn_crowd(mut commands: Commands, turn: Res<Turn>) {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut unit = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    let arena = super::game::ARENA;
    commands.spawn_batch(
        (0..turn.size)
            .map(|i| {
                let at = Vec2::new(unit() - 0.5, unit() - 0.5) * arena * 2.0;
                let mood = match i % 3 {
                    0 => Mood::Calm,
                    1 => Mood::Curious {
                        toward: Vec2::new(unit() - 0.5, unit() - 0.5) * arena,
                    },
                    _ => Mood::Sleepy((unit() * 600.0) as u16),
                };
                (
                    Saveable,
                    Transform::from_xyz(at.x, at.y, 0.5),
                    Critter {
                        heading: unit() * std::f32::consts::TAU,
                        speed: 10.0 + unit() * 30.0,
                    },
                    Hunger((unit() * 100.0) as u8),
                    mood,
                )
            })
            .collect::<Vec<_>>(),
    );
}

/// A different 1 % of the critters takes a step each frame, staying in the arena.
fn wander(
    time: Res<Time>,
    mut turn: ResMut<Turn>,
    mut critters: Query<(&mut Transform, &mut Critter, &mut Hunger)>,
) {
    let len = critters.iter().len();
    if len == 0 {
        return;
    }
    let steps = (len / 100).max(1);
    let start = turn.next % len;
    let arena = super::game::ARENA;
    for (mut transform, mut critter, mut hunger) in critters.iter_mut().skip(start).take(steps) {
        let step = Vec2::from_angle(critter.heading) * critter.speed * time.delta_secs() * 100.0;
        let next = transform.translation.truncate() + step;
        if next.abs().cmpgt(arena).any() {
            critter.heading += std::f32::consts::PI;
        } else {
            transform.translation = next.extend(transform.translation.z);
        }
        hunger.0 = hunger.0.wrapping_add(1);
    }
    turn.next = start + steps;
}
