//! Issue 25, point 4: the compatibility guard from a game's side. `SaveSchema::of_app` records
//! what the app registers (versions, complete migration chains, renames, encodings), and
//! `check_kept_saves` fails on whatever a load of a kept save would refuse: by layout, and by a
//! real decode for what layouts cannot tell (an added field without a default).

use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::compat::{self, Encoding, SaveSchema, Verdict};
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The game's first release.
mod release1 {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Quest"]
    pub struct Quest {
        pub step: u32,
    }
}

/// Later: a quest also names its giver, a value with no default.
mod today {
    use bevy::prelude::*;

    #[derive(Reflect, Clone, Debug, PartialEq)]
    pub enum Giver {
        Mayor,
        Smith,
    }

    #[derive(Component, Reflect)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Quest"]
    pub struct Quest {
        pub step: u32,
        pub giver: Giver,
    }

    #[derive(Reflect)]
    #[type_path = "game::quest_v1"]
    #[type_name = "Quest"]
    pub struct QuestV1 {
        pub step: u32,
    }

    impl From<QuestV1> for Quest {
        fn from(old: QuestV1) -> Self {
            Quest {
                step: old.step,
                giver: Giver::Mayor,
            }
        }
    }
}

#[derive(Component, Reflect, Serialize, Deserialize, Default)]
#[reflect(Component, Serialize, Deserialize)]
#[type_path = "game"]
struct Gold(u64);

#[derive(Reflect)]
struct GoldV1(u32);
#[derive(Reflect)]
struct GoldV2(u32);

impl From<GoldV1> for GoldV2 {
    fn from(old: GoldV1) -> Self {
        GoldV2(old.0)
    }
}

/// A step no later step starts from: the chain of its version is broken.
#[derive(Reflect)]
struct GoldV3(u32);
#[derive(Reflect)]
struct GoldV4(u32);

impl From<GoldV3> for GoldV4 {
    fn from(old: GoldV3) -> Self {
        GoldV4(old.0)
    }
}

impl From<GoldV2> for Gold {
    fn from(old: GoldV2) -> Self {
        Gold(old.0.into())
    }
}

#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
#[type_path = "game"]
struct Weather(u8);

/// Writes one save of `app`'s world (after `spawn`) to `<folder>/<name>.ksav`.
fn write_save(app: &mut App, folder: &Path, name: &str, spawn: impl FnOnce(&mut World)) {
    spawn(app.world_mut());
    let captured = snapshot::capture(app.world()).unwrap();
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    });
    let meta = SaveMeta::new(SlotId::Quick);
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join(format!("{name}.ksav")), bytes.to_vec()).unwrap();
}

fn release1_saves(folder: &Path) {
    let mut app = App::new();
    app.register_saveable::<release1::Quest>();
    write_save(&mut app, folder, "quick-00.g000001", |world| {
        world.spawn((Saveable, release1::Quest { step: 3 }));
    });
}

fn today_app(migration: bool) -> App {
    let mut app = App::new();
    app.register_saveable::<today::Quest>();
    if migration {
        app.register_saveable_migration::<today::QuestV1, today::Quest>(1);
    }
    app
}

#[test]
fn the_schema_records_versions_chains_renames_and_encodings() {
    let mut app = App::new();
    app.register_saveable::<Gold>()
        .register_saveable::<Weather>()
        .register_saveable_rename::<Weather>("game::old::Weather")
        .register_saveable_rename::<Weather>("game::Climate")
        // Version 1 reads through V1 → V2 → Gold; version 2's step leads to a type no later
        // step starts from, so a save of version 2 would not load and the schema leaves it out.
        .register_saveable_migration_step::<Gold, GoldV1, GoldV2>(1)
        .register_saveable_migration_step::<Gold, GoldV3, GoldV4>(2)
        .register_saveable_migration::<GoldV2, Gold>(3);
    let schema = SaveSchema::of_app(&app);
    // The same from every way a game holds its app or world.
    let world: &mut World = app.world_mut();
    assert_eq!(SaveSchema::of_world(&world), schema);
    assert_eq!(SaveSchema::of_world(&*world), schema);
    let app_ref: &mut App = &mut app;
    assert_eq!(SaveSchema::of_app(&app_ref), schema);
    let gold = schema.lookup("game::Gold").unwrap();
    assert_eq!((gold.version, gold.encoding()), (4, Encoding::Serde));
    assert_eq!(gold.migrates_from, [1, 3]);
    let weather = schema.lookup("game::Climate").unwrap();
    assert_eq!(weather.type_path, "game::Weather");
    assert_eq!(
        weather.renamed_from,
        ["game::Climate", "game::old::Weather"]
    );
    assert_eq!(weather.kind, snapshot::ColumnKind::Resource);
    let paths: Vec<&str> = schema
        .types()
        .iter()
        .map(|t| t.type_path.as_str())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    assert!(paths.contains(&"bevy_ecs::hierarchy::ChildOf"), "{paths:?}");
    assert_eq!(SaveSchema::parse(&schema.to_text()).unwrap(), schema);
}

#[test]
fn kept_saves_fail_on_an_added_field_without_default_until_migrated() {
    let dir = tempfile::tempdir().unwrap();
    release1_saves(dir.path());

    // Layouts alone say the save loads by name (a field was added) ...
    let layouts_only = compat::check_folder(&SaveSchema::of_app(&today_app(false)), dir.path());
    assert!(layouts_only.passed(), "{layouts_only}");
    let quest = &layouts_only.saves[0]
        .columns
        .iter()
        .find(|c| c.type_path == "game::Quest");
    assert!(matches!(quest.unwrap().verdict, Verdict::ReadsByName(_)));

    // ... and the decode with the game's real types finds that `giver` has no default.
    let report = compat::check_kept_saves(&today_app(false), dir.path());
    assert!(!report.passed());
    let text = report.to_string();
    assert!(text.contains("does not load with today's types"), "{text}");
    assert!(text.contains("giver"), "{text}");
    let failed = std::panic::catch_unwind(|| {
        compat::assert_kept_saves_load(&today_app(false), dir.path());
    });
    assert!(failed.is_err());

    let migrated = compat::check_kept_saves(&today_app(true), dir.path());
    assert!(migrated.passed(), "{migrated}");
    assert!(
        migrated
            .to_string()
            .contains("game::Quest v1: migrates to version 2")
    );
    compat::assert_kept_saves_load(&today_app(true), dir.path());
}

#[test]
fn an_empty_or_missing_folder_and_a_damaged_save_fail() {
    let app = today_app(true);
    let empty = tempfile::tempdir().unwrap();
    assert!(!compat::check_kept_saves(&app, empty.path()).passed());
    assert!(!compat::check_kept_saves(&app, empty.path().join("gone")).passed());
    release1_saves(empty.path());
    let file = empty.path().join("quick-00.g000001.ksav");
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&file, bytes).unwrap();
    let report = compat::check_kept_saves(&app, empty.path());
    assert_eq!(report.problems(), 1, "{report}");
    assert!(report.saves[0].error.is_some());
}

#[test]
fn versions_newer_than_today_and_unregistered_types_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut newer = today_app(true);
    newer
        .register_saveable::<Weather>()
        .insert_resource(Weather(2));
    write_save(&mut newer, dir.path(), "manual-00.g000001", |world| {
        world.spawn((
            Saveable,
            today::Quest {
                step: 1,
                giver: today::Giver::Smith,
            },
        ));
    });
    // An older build: Quest at version 1, no Weather.
    let report = compat::check_folder(&SaveSchema::of_app(&today_app(false)), dir.path());
    let verdicts: Vec<(&str, &Verdict)> = report.saves[0]
        .columns
        .iter()
        .map(|c| (c.type_path.as_str(), &c.verdict))
        .collect();
    assert!(
        verdicts.contains(&("game::Quest", &Verdict::Newer { today: 1 })),
        "{report}"
    );
    assert!(
        verdicts.contains(&("game::Weather", &Verdict::NotRegistered)),
        "{report}"
    );
    assert_eq!(report.problems(), 1, "{report}");
}

#[test]
fn the_committed_schema_must_be_todays() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.schema");
    SaveSchema::of_app(&today_app(false))
        .write_file(&file)
        .unwrap();
    compat::assert_schema_file(&today_app(false), &file);
    let changed = std::panic::catch_unwind(|| compat::assert_schema_file(&today_app(true), &file));
    let message = *changed.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("game::Quest changed"), "{message}");
    assert!(message.contains(compat::WRITE_SCHEMA_VAR), "{message}");
}

/// An earlier release whose types changed in the ways only a migration (or a rename) covers.
mod release0 {
    use bevy::prelude::*;
    use serde::{Deserialize, Serialize};

    /// Written by its serde code: any change to its layout changes its bytes.
    #[derive(Component, Reflect, Serialize, Deserialize, Default)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Gold"]
    pub struct Gold(pub u32);

    /// A component then; a resource today.
    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Weather"]
    pub struct Weather(pub u8);

    /// Saved under an old module path.
    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    #[type_path = "game::old"]
    #[type_name = "Badge"]
    pub struct Badge {
        pub rank: u8,
    }
}

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
#[type_path = "game"]
struct Badge {
    rank: u16,
}

#[test]
fn serde_changes_kind_changes_and_renames_are_judged_as_a_load_would() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = App::new();
    old.register_saveable::<release0::Gold>()
        .register_saveable::<release0::Weather>()
        .register_saveable::<release0::Badge>();
    write_save(&mut old, dir.path(), "auto-00.g000001", |world| {
        world.spawn((Saveable, release0::Gold(5), release0::Weather(1)));
        world.spawn((Saveable, release0::Badge { rank: 2 }));
    });
    let mut today = App::new();
    today
        .register_saveable::<Gold>()
        .register_saveable::<Weather>()
        .register_saveable::<Badge>()
        .register_saveable_rename::<Badge>("game::old::Badge");
    let report = compat::check_folder(&SaveSchema::of_app(&today), dir.path());
    let column = |path: &str| {
        let columns = &report.saves[0].columns;
        columns
            .iter()
            .find(|c| c.type_path == path)
            .unwrap()
            .clone()
    };
    // u32 → u64 widens for a reflected type, but serde bytes are the type's own.
    let Verdict::NeedsMigration(changes) = column("game::Gold").verdict else {
        panic!("{report}");
    };
    assert!(
        changes[0]
            .to_string()
            .contains("written by its own serde code"),
        "{report}"
    );
    assert_eq!(
        column("game::Weather").verdict,
        Verdict::KindChanged {
            stored: snapshot::ColumnKind::Component,
            today: snapshot::ColumnKind::Resource
        }
    );
    let badge = column("game::old::Badge");
    assert_eq!(badge.loads_as.as_deref(), Some("game::Badge"));
    assert!(matches!(badge.verdict, Verdict::ReadsByName(_)), "{report}");
    assert_eq!(report.problems(), 2, "{report}");
    // The decode agrees: both problems are load errors too.
    assert!(
        compat::check_kept_saves(&today, dir.path()).saves[0]
            .load_error
            .is_some()
    );
}

/// Issue 43: the guard and the load ask one rule (`schema::resolve`), so for every ordered
/// pair of these releases of one component (and of one enum), the guard calls a column a
/// problem exactly when a load of its saved values fails. Each release is its own Rust type
/// under one reflected path (`game::Unit`, `game::Mode`), with sample values covering every
/// stored variant.
mod releases {
    use bevy::prelude::*;
    use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};
    use serde::{Deserialize, Serialize};

    /// Bytes only their own serde code reads (an opaque part).
    #[derive(Reflect, Clone, Default, Serialize, Deserialize)]
    #[reflect(opaque, Serialize, Deserialize, Default)]
    #[type_path = "game"]
    pub struct Blob(pub Vec<u8>);

    macro_rules! release {
        ($module:ident, $register:ident, { $($item:item)* } $(spawn $value:expr;)+) => {
            pub mod $module {
                #[allow(unused_imports)]
                use super::*;
                $($item)*
                pub fn app() -> App {
                    let mut app = App::new();
                    app.$register::<Release>();
                    app
                }
                pub fn spawn(world: &mut World) {
                    $(world.spawn((Saveable, $value));)+
                }
            }
        };
    }

    macro_rules! unit {
        ($module:ident { $($field:tt)* } $(spawn $value:expr;)+) => {
            release!($module, register_saveable, {
                #[derive(Component, Reflect)]
                #[reflect(Component)]
                #[type_path = "game"]
                #[type_name = "Unit"]
                pub struct Release { $($field)* }
            } $(spawn $value;)+);
        };
    }

    macro_rules! mode {
        ($module:ident { $($variant:tt)* } $(spawn $value:expr;)+) => {
            release!($module, register_saveable, {
                #[derive(Component, Reflect)]
                #[reflect(Component)]
                #[type_path = "game"]
                #[type_name = "Mode"]
                pub enum Release { $($variant)* }
            } $(spawn $value;)+);
        };
    }

    unit!(base { pub hp: u32, pub name: String }
        spawn Release { hp: 70_000, name: "Ann".into() };);
    unit!(reordered { pub name: String, pub hp: u32 }
        spawn Release { name: "Bo".into(), hp: 3 };);
    unit!(widened { pub hp: u64, pub name: String }
        spawn Release { hp: 1 << 40, name: "Cy".into() };);
    unit!(narrowed { pub hp: u16, pub name: String }
        spawn Release { hp: 7, name: "Di".into() };);
    unit!(removed { pub hp: u32 }
        spawn Release { hp: 5 };);
    unit!(added { pub hp: u32, pub name: String, #[reflect(default)] pub mana: u8 }
        spawn Release { hp: 2, name: "Ed".into(), mana: 9 };);
    unit!(wrapped { pub hp: Option<u32>, pub name: String }
        spawn Release { hp: Some(4), name: "Fi".into() };
        spawn Release { hp: None, name: "Gu".into() };);
    unit!(pair { pub hp: u32, pub name: String, #[reflect(default)] pub at: (u8, u8) }
        spawn Release { hp: 1, name: "Ha".into(), at: (1, 2) };);
    unit!(triple { pub hp: u32, pub name: String, #[reflect(default)] pub at: (u8, u8, u8) }
        spawn Release { hp: 1, name: "Io".into(), at: (1, 2, 3) };);
    unit!(opaque { pub hp: u32, pub name: String, #[reflect(default)] pub blob: Blob }
        spawn Release { hp: 8, name: "Jo".into(), blob: Blob(vec![1, 2, 3]) };);
    release!(serde_coded, register_saveable, {
        #[derive(Component, Reflect, Serialize, Deserialize)]
        #[reflect(Component, Serialize, Deserialize)]
        #[type_path = "game"]
        #[type_name = "Unit"]
        pub struct Release { pub hp: u32, pub name: String }
    } spawn Release { hp: 6, name: "Ka".into() };);
    release!(tuple, register_saveable, {
        #[derive(Component, Reflect)]
        #[reflect(Component)]
        #[type_path = "game"]
        #[type_name = "Unit"]
        pub struct Release(pub u32, pub String);
    } spawn Release(9, "Lu".into()););

    mode!(modes { A, B(u32) } spawn Release::A; spawn Release::B(300););
    mode!(modes_reordered { B(u32), A } spawn Release::B(1); spawn Release::A;);
    mode!(modes_appended { A, B(u32), C } spawn Release::C; spawn Release::B(2););
    mode!(modes_removed { A } spawn Release::A;);
    mode!(modes_empty_struct { B(u32), A {} } spawn Release::A {}; spawn Release::B(3););
    mode!(modes_widened { A, B(u64) } spawn Release::A; spawn Release::B(1 << 40););

    /// A release: its app (registering its type) and its sample values.
    pub type Release = (&'static str, fn() -> App, fn(&mut World));

    pub const UNITS: [Release; 12] = [
        ("base", base::app, base::spawn),
        ("reordered", reordered::app, reordered::spawn),
        ("widened", widened::app, widened::spawn),
        ("narrowed", narrowed::app, narrowed::spawn),
        ("removed", removed::app, removed::spawn),
        ("added", added::app, added::spawn),
        ("wrapped", wrapped::app, wrapped::spawn),
        ("pair", pair::app, pair::spawn),
        ("triple", triple::app, triple::spawn),
        ("opaque", opaque::app, opaque::spawn),
        ("serde", serde_coded::app, serde_coded::spawn),
        ("tuple", tuple::app, tuple::spawn),
    ];

    pub const MODES: [Release; 6] = [
        ("modes", modes::app, modes::spawn),
        ("reordered", modes_reordered::app, modes_reordered::spawn),
        ("appended", modes_appended::app, modes_appended::spawn),
        ("removed", modes_removed::app, modes_removed::spawn),
        (
            "empty struct",
            modes_empty_struct::app,
            modes_empty_struct::spawn,
        ),
        ("widened", modes_widened::app, modes_widened::spawn),
    ];
}

/// For every ordered pair of releases: the guard's verdict on the column, and whether a load
/// of the saved values with today's types failed.
fn verdicts_and_loads(releases: &[releases::Release], type_path: &str) -> Vec<String> {
    let mut disagreements = Vec::new();
    for (stored_name, stored_app, spawn) in releases {
        for (today_name, today_app, _) in releases {
            let dir = tempfile::tempdir().unwrap();
            write_save(&mut stored_app(), dir.path(), "quick-00.g000001", spawn);
            let report = compat::check_kept_saves(&today_app(), dir.path());
            let save = &report.saves[0];
            let column = save.columns.iter().find(|c| c.type_path == type_path);
            let verdict = &column.expect("the column is checked").verdict;
            if verdict.is_problem() != save.load_error.is_some() {
                disagreements.push(format!(
                    "{stored_name} -> {today_name}: guard {verdict:?}, load {:?}",
                    save.load_error
                ));
            }
        }
    }
    disagreements
}

#[test]
fn the_guard_calls_a_column_a_problem_exactly_when_its_load_fails() {
    let mut disagreements = verdicts_and_loads(&releases::UNITS, "game::Unit");
    disagreements.extend(verdicts_and_loads(&releases::MODES, "game::Mode"));
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// D2: a unit variant saved, read as today's variant of no fields of another kind (`A {}`),
/// in an enum that needs resolving for another change (the variants moved). Refused before.
#[test]
fn a_unit_variant_loads_as_an_empty_struct_variant() {
    let dir = tempfile::tempdir().unwrap();
    write_save(
        &mut releases::modes::app(),
        dir.path(),
        "quick-00.g000001",
        releases::modes::spawn,
    );
    let report = compat::check_kept_saves(&releases::modes_empty_struct::app(), dir.path());
    assert!(report.passed(), "{report}");
}

/// D3: a removed field whose bytes only its serde code reads cannot be skipped: the guard says
/// so (it said "reads by name"), and the load refuses the column before reading (it failed
/// on each value).
#[test]
fn a_removed_field_that_cannot_be_skipped_is_a_problem_for_the_guard_too() {
    let dir = tempfile::tempdir().unwrap();
    write_save(
        &mut releases::opaque::app(),
        dir.path(),
        "quick-00.g000001",
        releases::opaque::spawn,
    );
    let report = compat::check_kept_saves(&releases::base::app(), dir.path());
    let save = &report.saves[0];
    let unit = save.columns.iter().find(|c| c.type_path == "game::Unit");
    let Verdict::NeedsMigration(changes) = &unit.unwrap().verdict else {
        panic!("{report}");
    };
    assert_eq!(changes[0].path, "game::Unit.blob", "{report}");
    let load = save.load_error.as_deref().unwrap_or_default();
    assert!(load.contains("cannot be skipped"), "{load}");
}
