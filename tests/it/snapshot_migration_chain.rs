//! Issue 25: a type that changed three times loads saves of every one of its four layouts
//! through a chain of one-step migrations (`V1 → V2 → V3 → today`), from golden saves each
//! written by the game of its time (`tests/golden/migration-chain-release<n>.ksav`).

use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt, SnapshotError};
use std::path::PathBuf;

/// The game as each of its releases had `game::Armor`; every release saved it at the type path
/// today's type has.
mod releases {
    use bevy::prelude::*;

    /// Release 1: a rating.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Armor"]
    pub struct Armor1(pub u32);

    /// Release 2: a rating and a material.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Armor"]
    pub struct Armor2 {
        pub rating: u32,
        pub material: String,
    }

    /// Release 3: the rating became fractional.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Armor"]
    pub struct Armor3 {
        pub rating: f32,
        pub material: String,
    }
}

/// The game today: `Armor` wears out, and its earlier layouts are kept only to read old saves.
mod today {
    use bevy::prelude::*;

    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "game::armor_v1"]
    #[type_name = "Armor"]
    pub struct ArmorV1(pub u32);

    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "game::armor_v2"]
    #[type_name = "Armor"]
    pub struct ArmorV2 {
        pub rating: u32,
        pub material: String,
    }

    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "game::armor_v3"]
    #[type_name = "Armor"]
    pub struct ArmorV3 {
        pub rating: f32,
        pub material: String,
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Armor"]
    pub struct Armor {
        pub rating: f32,
        pub material: String,
        pub durability: f32,
    }

    impl From<ArmorV1> for ArmorV2 {
        fn from(old: ArmorV1) -> Self {
            ArmorV2 {
                rating: old.0,
                material: "leather".into(),
            }
        }
    }

    impl From<ArmorV2> for ArmorV3 {
        fn from(old: ArmorV2) -> Self {
            ArmorV3 {
                rating: old.rating as f32,
                material: old.material,
            }
        }
    }

    impl From<ArmorV3> for Armor {
        fn from(old: ArmorV3) -> Self {
            Armor {
                rating: old.rating,
                material: old.material,
                durability: 1.0,
            }
        }
    }
}

use releases::{Armor1, Armor2, Armor3};
use today::{Armor, ArmorV1, ArmorV2, ArmorV3};

/// Stands in for the migrations each release had registered (from versions 1, 2, …): they set
/// the type's schema version, which is all a save of that release records of them.
#[derive(Reflect, Clone)]
#[type_path = "game::earlier"]
struct Earlier;

macro_rules! from_earlier {
    ($($release:ty => $value:expr),*) => {
        $(impl From<Earlier> for $release {
            fn from(_: Earlier) -> Self {
                $value
            }
        })*
    };
}
from_earlier!(Armor2 => Armor2 { rating: 0, material: String::new() },
    Armor3 => Armor3 { rating: 0.0, material: String::new() });

fn golden(release: u32) -> PathBuf {
    let name = format!("tests/golden/migration-chain-release{release}.ksav");
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// Today's game: one step per change.
fn today_app() -> App {
    let mut app = App::new();
    app.register_saveable::<Armor>()
        .register_saveable_migration_step::<Armor, ArmorV1, ArmorV2>(1)
        .register_saveable_migration_step::<Armor, ArmorV2, ArmorV3>(2)
        .register_saveable_migration::<ArmorV3, Armor>(3);
    app
}

/// What each release's save holds, and what it must load as today.
fn expected(release: u32) -> Armor {
    let (rating, material, durability) = match release {
        1 => (12.0, "leather", 1.0),
        2 => (15.0, "iron", 1.0),
        3 => (17.5, "mithril", 1.0),
        _ => (20.0, "dragon scale", 0.75),
    };
    Armor {
        rating,
        material: material.into(),
        durability,
    }
}

/// A release's game, saving one armoured entity.
fn release_save(release: u32) -> Vec<u8> {
    let mut app = App::new();
    let world = match release {
        1 => {
            app.register_saveable::<Armor1>();
            app.world_mut().spawn((Saveable, Armor1(12)));
            app.world_mut()
        }
        2 => {
            app.register_saveable::<Armor2>()
                .register_saveable_migration::<Earlier, Armor2>(1);
            let armor = Armor2 {
                rating: 15,
                material: "iron".into(),
            };
            app.world_mut().spawn((Saveable, armor));
            app.world_mut()
        }
        3 => {
            app.register_saveable::<Armor3>()
                .register_saveable_migration::<Earlier, Armor3>(1)
                .register_saveable_migration::<Earlier, Armor3>(2);
            let armor = Armor3 {
                rating: 17.5,
                material: "mithril".into(),
            };
            app.world_mut().spawn((Saveable, armor));
            app.world_mut()
        }
        _ => {
            let mut app = today_app();
            app.world_mut().spawn((Saveable, expected(4)));
            return encode(snapshot::capture(app.world_mut()).unwrap());
        }
    };
    encode(snapshot::capture(world).unwrap())
}

fn encode(snapshot: snapshot::Snapshot) -> Vec<u8> {
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: snapshot.blob,
        state_hash: snapshot.state_hash,
    });
    let meta = SaveMeta::new(SlotId::Manual(0)).with_title("armour");
    format::encode(&meta, &bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec()
}

/// Loads a save's world into `app` (replacing its saved entities) and returns its armour.
fn load(app: &mut App, file: &[u8]) -> Result<Vec<Armor>, SnapshotError> {
    let decoded = format::decode(file, &DecodeOptions::new()).unwrap();
    let world = &decoded.bundle.world;
    let registry = app.world().resource::<snapshot::SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().clone();
    let snapshot = snapshot::decode(&world.ecs_blob, world.state_hash, &registry, &types.read())?;
    snapshot::apply(app.world_mut(), snapshot, snapshot::LoadMode::Respawn);
    let mut query = app.world_mut().query::<&Armor>();
    Ok(query.iter(app.world()).cloned().collect())
}

#[test]
fn a_save_of_every_past_layout_loads_through_the_chain() {
    for release in 1..=4 {
        let file = std::fs::read(golden(release))
            .unwrap_or_else(|e| panic!("{}: {e}", golden(release).display()));
        let mut app = today_app();
        let loaded = load(&mut app, &file).unwrap_or_else(|e| panic!("release {release}: {e}"));
        assert_eq!(loaded, [expected(release)], "release {release}");
        // And the golden file holds what that release writes (the layouts are stable; the
        // blob's own layout version may have moved on since).
        let written = format::decode(&release_save(release), &DecodeOptions::new()).unwrap();
        let golden = format::decode(&file, &DecodeOptions::new()).unwrap();
        let columns = |blob: &[u8]| {
            let table = snapshot::inspect(blob).unwrap();
            format!("{:?} {:?}", table.entity_ids, table.columns)
        };
        assert_eq!(
            columns(&written.bundle.world.ecs_blob),
            columns(&golden.bundle.world.ecs_blob),
            "release {release}"
        );
    }
}

/// A chain with a step from the wrong type stops there, and the load says where: the stored
/// version and the type the chain reached.
#[test]
fn a_missing_step_names_the_stored_version_and_the_type_it_stopped_at() {
    #[derive(Reflect, Clone)]
    #[type_path = "game::armor_v2b"]
    struct ArmorV2b(u32);
    impl From<ArmorV2b> for ArmorV3 {
        fn from(old: ArmorV2b) -> Self {
            ArmorV3 {
                rating: old.0 as f32,
                material: String::new(),
            }
        }
    }
    let mut app = App::new();
    app.register_saveable::<Armor>()
        .register_saveable_migration_step::<Armor, ArmorV1, ArmorV2>(1)
        .register_saveable_migration_step::<Armor, ArmorV2b, ArmorV3>(2)
        .register_saveable_migration::<ArmorV3, Armor>(3);
    // Release 1 stored schema version 1, the first.
    let file = std::fs::read(golden(1)).unwrap();
    let error = load(&mut app, &file).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::MigrationStepMissing { found: 1, stopped_at, .. } if stopped_at.ends_with("ArmorV2")),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("register_saveable_migration_step"),
        "{error}"
    );
}

/// A migration names the version it reads, so the calls' order does not matter: the chain
/// registered backwards loads every past release's save the same.
#[test]
fn migrations_registered_in_any_order_load_every_past_layout() {
    let mut app = App::new();
    app.register_saveable::<Armor>()
        .register_saveable_migration::<ArmorV3, Armor>(3)
        .register_saveable_migration_step::<Armor, ArmorV1, ArmorV2>(1)
        .register_saveable_migration_step::<Armor, ArmorV2, ArmorV3>(2);
    for release in 1..=4 {
        let file = std::fs::read(golden(release)).unwrap();
        let mut app = App::new();
        app.register_saveable::<Armor>()
            .register_saveable_migration::<ArmorV3, Armor>(3)
            .register_saveable_migration_step::<Armor, ArmorV1, ArmorV2>(1)
            .register_saveable_migration_step::<Armor, ArmorV2, ArmorV3>(2);
        let loaded = load(&mut app, &file).unwrap_or_else(|e| panic!("release {release}: {e}"));
        assert_eq!(loaded, [expected(release)], "release {release}");
    }
    // And today's saves are written at the version after the highest migrated from.
    app.world_mut().spawn((Saveable, expected(4)));
    let written = format::decode(
        &encode(snapshot::capture(app.world_mut()).unwrap()),
        &DecodeOptions::new(),
    )
    .unwrap();
    let golden = format::decode(&std::fs::read(golden(4)).unwrap(), &DecodeOptions::new()).unwrap();
    let versions = |blob: &[u8]| {
        let table = snapshot::inspect(blob).unwrap();
        format!("{:?}", table.columns)
    };
    assert_eq!(
        versions(&written.bundle.world.ecs_blob),
        versions(&golden.bundle.world.ecs_blob)
    );
}

/// A migration registered before its type, from version 0, or twice from one version is a
/// mistake in the game's setup: the app stops at build naming the types, not a warning a
/// load would pay for later.
#[test]
#[should_panic(expected = "register_saveable for it first")]
fn a_migration_before_its_type_stops_the_build() {
    App::new().register_saveable_migration::<ArmorV3, Armor>(3);
}

#[test]
#[should_panic(expected = "schema versions start at 1")]
fn a_migration_from_version_0_stops_the_build() {
    App::new()
        .register_saveable::<Armor>()
        .register_saveable_migration::<ArmorV3, Armor>(0);
}

#[test]
#[should_panic(expected = "already migrates from that version, stored as game::armor_v1")]
fn two_migrations_from_one_version_stop_the_build() {
    App::new()
        .register_saveable::<Armor>()
        .register_saveable_migration_step::<Armor, ArmorV1, ArmorV2>(1)
        .register_saveable_migration_step::<Armor, ArmorV2, ArmorV3>(1);
}

#[test]
#[should_panic(expected = "call register_saveable::<")]
fn a_rename_before_its_type_stops_the_build() {
    App::new().register_saveable_rename::<Armor>("game::old::Armor");
}

/// Writes the golden saves; run by hand once, when the chain's fixtures are made.
#[test]
#[ignore = "writes tests/golden; run by hand once"]
fn write_migration_chain_golden_saves() {
    for release in 1..=4 {
        std::fs::write(golden(release), release_save(release)).unwrap();
    }
}
