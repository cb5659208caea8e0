//! The demo's compatibility guard (`cargo test --example demo`): the save schema it commits
//! (`examples/demo/saves.schema`) must be today's, and every save it keeps from earlier
//! releases (`examples/demo/kept-saves/`) must load with today's types. `Coin` changed since
//! the first release (a `value` in points became a `kind`), so those saves load through its
//! registered migration, and would fail these tests without it.
//!
//! After changing a saved type: `KEEPSAKE_WRITE_SCHEMA=1 cargo test --example demo`, review the
//! schema's diff, commit it. At a release: add a save of it with `cargo test --example demo --
//! --ignored write_kept_save`.

use crate::game::{
    self, ArenaRng, Coin, CoinKind, Enemy, Inventory, Lantern, Level, Player, Score,
};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::compat;
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt};
use std::path::PathBuf;

fn demo_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/demo")
        .join(name)
}

/// The demo's saved types, registered as the game registers them.
fn saved_types() -> App {
    let mut app = App::new();
    game::register_saved_types(&mut app);
    app
}

#[test]
fn the_committed_schema_is_todays() {
    compat::assert_schema_file(&saved_types(), demo_file("saves.schema"));
}

#[test]
fn every_kept_save_loads_with_todays_types() {
    compat::assert_kept_saves_load(&saved_types(), demo_file("kept-saves"));
}

/// The kept saves exercise `Coin`'s migration: without it, the first release's coins (and the
/// Bevy 0.19 quicksave's) do not load, and the guard says which type and field.
#[test]
fn without_the_coin_migration_the_kept_saves_fail() {
    let mut app = App::new();
    app.register_saveable::<Coin>();
    let report = compat::check_kept_saves(&app, demo_file("kept-saves"));
    assert!(!report.passed(), "{report}");
    let text = report.to_string();
    assert!(text.contains("demo::game::Coin v1"), "{text}");
    assert!(text.contains("demo::game::Coin.kind"), "{text}");
    let layouts_only = compat::check_folder(
        &compat::SaveSchema::of_app(&saved_types()),
        demo_file("kept-saves"),
    );
    assert!(
        layouts_only
            .to_string()
            .contains("demo::game::Coin v1: migrates to version 2"),
        "{layouts_only}"
    );
}

/// A save of a small arena with today's types, for the kept saves of a release.
#[test]
#[ignore = "writes a kept save of this build: run it at a release"]
fn write_kept_save() {
    let mut app = saved_types();
    let world = app.world_mut();
    world.insert_resource(Score(35));
    world.insert_resource(Inventory { gold: 1, gems: 1 });
    world.insert_resource(Level(2));
    world.insert_resource(ArenaRng(0x1234_5678_9abc));
    let player = world
        .spawn((
            Saveable,
            Player { speed: 260.0 },
            Transform::from_xyz(10.0, -4.0, 1.0),
        ))
        .id();
    world.spawn((
        Saveable,
        Lantern { glow: 2.0 },
        Transform::from_xyz(16.0, 14.0, 1.0),
        ChildOf(player),
    ));
    for (n, kind) in [CoinKind::Gold, CoinKind::Gem, CoinKind::Gold]
        .into_iter()
        .enumerate()
    {
        let at = Transform::from_xyz(40.0 * n as f32, 80.0, 0.0);
        world.spawn((Saveable, Coin { kind }, at));
    }
    world.spawn((
        Saveable,
        Enemy {
            speed: 90.0,
            target: player,
        },
        Transform::from_xyz(-200.0, 0.0, 1.5),
    ));
    let captured = snapshot::capture(world).unwrap();
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    });
    let meta = SaveMeta::new(SlotId::Manual(0)).with_title("Level 2 · 35 points · 1 gold, 1 gem");
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
    let name = format!("demo-{}.ksav", env!("CARGO_PKG_VERSION"));
    // A kept save is never replaced: it stands for the release that wrote it.
    let mut file = std::fs::File::create_new(demo_file("kept-saves").join(name)).unwrap();
    std::io::Write::write_all(&mut file, &bytes.to_vec()).unwrap();
}
