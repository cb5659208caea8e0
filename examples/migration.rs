//! Migrations, headless: release 1 of a game saves, release 2 loads that save with its changed
//! types. Both releases are in this file, their types under the same type paths.
//!
//! Between the releases:
//! - `Health(u32)` became `Health { current: f32, max: f32 }`: a change no load reads by
//!   itself, so release 2 keeps the old layout as `HealthV1` and registers
//!   `register_saveable_migration::<HealthV1, Health>(1)` (a `From` conversion);
//! - `Gold` moved from `game::Gold` to `game::inventory::Gold`: `register_saveable_rename`.
//!
//! Fields added (with a default), removed, reordered or widened need nothing: a load reads a
//! changed layout by name (the README's "When your types change").
//!
//! Run: `cargo run --example migration` (exits non-zero if release 2 read a value wrong).
use bevy::prelude::*;
use bevy_keepsake::plugin::KeepsakeCorePlugin;
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::{TestSaves, run_until};
use std::path::Path;

/// The game as release 1 shipped it.
mod release1 {
    use bevy::prelude::*;

    #[derive(Component, Reflect)]
    #[reflect(Component)]
    #[type_path = "game"]
    pub struct Health(pub u32);

    #[derive(Resource, Reflect)]
    #[reflect(Resource)]
    #[type_path = "game"]
    pub struct Gold(pub u64);
}

/// The game today.
mod release2 {
    use bevy::prelude::*;

    /// Release 1's layout, kept only to read its saves (any type path but `game::Health`).
    #[derive(Reflect)]
    #[type_path = "game::v1"]
    #[type_name = "Health"]
    pub struct HealthV1(pub u32);

    #[derive(Component, Reflect, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
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

    #[derive(Resource, Reflect, Debug, PartialEq)]
    #[reflect(Resource)]
    #[type_path = "game::inventory"]
    pub struct Gold(pub u64);
}

/// How many frames a result may take, not counting those while the plugin's work runs in the
/// background (see `bevy_keepsake::testing::run_until`).
const FRAMES: u32 = 20;

fn main() {
    let saves = TestSaves::new();

    let mut v1 = app(saves.root(), "1.0", |app| {
        app.register_saveable::<release1::Health>()
            .register_saveable::<release1::Gold>()
            .insert_resource(release1::Gold(250));
    });
    v1.world_mut().spawn((Saveable, release1::Health(73)));
    v1.world_mut().commands().save(SlotId::Manual(0));
    run_until::<SaveCompleted>(&mut v1, FRAMES);
    drop(v1);

    let mut v2 = app(saves.root(), "2.0", |app| {
        app.register_saveable::<release2::Health>()
            .register_saveable_migration::<release2::HealthV1, release2::Health>(1)
            .register_saveable::<release2::Gold>()
            .register_saveable_rename::<release2::Gold>("game::Gold");
    });
    v2.world_mut().commands().load(SlotId::Manual(0));
    let loaded = run_until::<LoadCompleted>(&mut v2, FRAMES);
    println!(
        "release 2 loaded a save of release {}",
        loaded.meta.game_version
    );
    assert_eq!(loaded.meta.game_version, "1.0");

    let world = v2.world_mut();
    let health = (world.query::<&release2::Health>().single(world)).expect("the hero");
    println!("{health:?}, {:?}", world.resource::<release2::Gold>());
    let migrated = release2::Health {
        current: 73.0,
        max: 100.0,
    };
    assert_eq!(*health, migrated, "Health through the migration");
    assert_eq!(
        world.resource::<release2::Gold>().0,
        250,
        "Gold by its old path"
    );
}

/// A release of the game with the plugin, saving under `root`, with the types `register` adds.
fn app(root: &Path, version: &str, register: impl FnOnce(&mut App)) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugins::new("migration-example")
                .save_root(root)
                .set(KeepsakeCorePlugin {
                    game_version: version.into(),
                    ..default()
                }),
        )
        .add_observer(|failed: On<SaveFailed>| panic!("save failed: {}", failed.error))
        .add_observer(|failed: On<LoadFailed>| panic!("load failed: {}", failed.error));
    register(&mut app);
    app.finish();
    app.cleanup();
    app
}
