//! The compatibility guard, headless, as a game's CI runs it: old saves must keep loading.
//!
//! At each release the game commits its save schema (every saved type's layout as text, so a
//! change shows in review) and keeps a save in a folder. Its tests then check both against
//! today's types. Here release 1 saved `Stats { hp: u32 }`; today's `Stats` has `hp: f32` and
//! a `max_hp`. Without a migration the guard fails, naming the type and the field; with one
//! it passes, and the new schema file shows the change. In a game, the checks are one test:
//!
//! ```ignore
//! #[test]
//! fn old_saves_still_load() {
//!     let mut app = App::new();
//!     my_game::register_saved_types(&mut app);
//!     compat::assert_schema_file(&app, "saves.schema"); // KEEPSAKE_WRITE_SCHEMA=1 rewrites it
//!     compat::assert_kept_saves_load(&app, "tests/kept-saves");
//! }
//! ```
//!
//! or, without the game's code, `keepsake compat saves.schema tests/kept-saves`.
//!
//! Run: `cargo run --example compat_guard` (exits non-zero if the guard misjudged a save).
use bevy::prelude::*;
use bevy_keepsake::compat::{self, SaveSchema};
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot;
use std::path::Path;

/// `Stats` as release 1 saved it.
#[derive(Component, Reflect)]
#[reflect(Component)]
#[type_path = "game"]
#[type_name = "Stats"]
struct Release1Stats {
    hp: u32,
}

/// Release 1's layout, kept today to read its saves.
#[derive(Reflect)]
#[type_path = "game::v1"]
#[type_name = "Stats"]
struct StatsV1 {
    hp: u32,
}

/// `Stats` today.
#[derive(Component, Reflect)]
#[reflect(Component)]
#[type_path = "game"]
struct Stats {
    hp: f32,
    max_hp: f32,
}

impl From<StatsV1> for Stats {
    fn from(old: StatsV1) -> Self {
        let hp = old.hp as f32;
        Stats { hp, max_hp: hp }
    }
}

fn main() {
    let repo = tempfile::tempdir().expect("a temporary folder");
    let schema = repo.path().join("saves.schema");
    let kept = repo.path().join("kept-saves");
    std::fs::create_dir(&kept).unwrap();

    // Release 1: commit the schema, keep a save.
    let mut release1 = App::new();
    release1.register_saveable::<Release1Stats>();
    let committed = SaveSchema::of_app(&release1);
    committed.write_file(&schema).unwrap();
    let world = release1.world_mut();
    world.spawn((Saveable, Release1Stats { hp: 40 }));
    keep_save(world, &kept.join("release-1.ksav"));

    // Today, without a migration: the schema file is stale and the kept save fails.
    let mut unmigrated = App::new();
    unmigrated.register_saveable::<Stats>();
    let stale = SaveSchema::read_file(&schema).unwrap();
    assert_ne!(stale, SaveSchema::of_app(&unmigrated), "stale schema");
    let report = compat::check_kept_saves(&unmigrated, &kept);
    println!("without a migration:\n{report}\n");
    assert!(!report.passed(), "hp changed type: the guard fails");
    assert!(report.to_string().contains("game::Stats.hp"), "names hp");

    // Today, with the migration: the guard passes; the new schema is reviewed and committed.
    let mut today = App::new();
    today.register_saveable::<Stats>();
    today.register_saveable_migration::<StatsV1, Stats>(1);
    let report = compat::check_kept_saves(&today, &kept);
    println!("with the migration:\n{report}");
    compat::assert_kept_saves_load(&today, &kept);
    let new = SaveSchema::of_app(&today);
    print_diff(&committed, &new);
    new.write_file(&schema).unwrap(); // what KEEPSAKE_WRITE_SCHEMA=1 makes the test do
    compat::assert_schema_file(&today, &schema);
}

/// `game::Stats` in the schema file's diff, as the reviewer sees it.
fn print_diff(old: &SaveSchema, new: &SaveSchema) {
    let stats = |schema: &SaveSchema| {
        let text = schema.to_text();
        let block = text
            .split("\n\n")
            .find(|b| b.starts_with("type game::Stats"));
        block.unwrap().lines().map(String::from).collect::<Vec<_>>()
    };
    let (old, new) = (stats(old), stats(new));
    println!("the schema file's diff:");
    old.iter()
        .filter(|line| !new.contains(line))
        .for_each(|line| println!("- {line}"));
    new.iter()
        .filter(|line| !old.contains(line))
        .for_each(|line| println!("+ {line}"));
}

/// Writes a save of `world` as the game writes it (in a game: a save copied from its folder).
fn keep_save(world: &mut World, path: &Path) {
    let captured = snapshot::capture(world).expect("a capture");
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    });
    let meta = SaveMeta::new(SlotId::Manual(0)).with_title("release 1");
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).expect("a save");
    std::fs::write(path, bytes.to_vec()).expect("the kept save");
}
