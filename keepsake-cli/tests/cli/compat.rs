//! `keepsake schema` and `keepsake compat` (issue 25, point 4): kept saves of an earlier
//! layout fail the check while a field changed without a migration, and pass once the
//! migration is registered; schema files written by the game's own `SaveSchema::of_app`.

use super::{keepsake, stdout_of};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::compat::SaveSchema;
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// The game's first release: hit points were whole numbers.
mod release1 {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct Stats {
        pub hp: u32,
        pub name: String,
    }
}

/// Today: hit points are fractional (and the first release's layout is kept for its saves).
mod today {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct Stats {
        pub hp: f32,
        pub name: String,
    }

    #[derive(Reflect)]
    #[type_path = "game::stats_v1"]
    #[type_name = "Stats"]
    pub struct StatsV1 {
        pub hp: u32,
        pub name: String,
    }

    impl From<StatsV1> for Stats {
        fn from(old: StatsV1) -> Self {
            Stats {
                hp: old.hp as f32,
                name: old.name,
            }
        }
    }
}

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
#[type_path = "game"]
struct Speed(f32);

/// A save of the first release in `<root>/saves/alice`, two generations of a slot.
fn release1_saves(root: &Path) -> PathBuf {
    let folder = root.join("saves").join("alice");
    std::fs::create_dir_all(&folder).unwrap();
    let mut app = release1_app();
    for generation in 1..=2 {
        app.world_mut().spawn((
            Saveable,
            release1::Stats {
                hp: 10 * generation,
                name: "Ann".into(),
            },
            Speed(2.5),
        ));
        let captured = snapshot::capture(app.world()).unwrap();
        let bundle = SaveBundle::new(WorldState {
            tick: 1,
            ecs_blob: captured.blob,
            state_hash: captured.state_hash,
        });
        let meta = SaveMeta::new(SlotId::Manual(0));
        let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
        let name = format!("manual-00.g{generation:06}.ksav");
        std::fs::write(folder.join(name), bytes.to_vec()).unwrap();
    }
    root.join("saves")
}

fn release1_app() -> App {
    let mut app = App::new();
    app.register_saveable::<release1::Stats>()
        .register_saveable::<Speed>();
    app
}

/// Today's game; with `migration`, the first release's layout is read through `StatsV1`.
fn today_app(migration: bool) -> App {
    let mut app = App::new();
    app.register_saveable::<today::Stats>()
        .register_saveable::<Speed>();
    if migration {
        app.register_saveable_migration::<today::StatsV1, today::Stats>(1);
    }
    app
}

fn write_schema(app: &App, path: &Path) -> PathBuf {
    SaveSchema::of_app(app).write_file(path).unwrap();
    path.to_path_buf()
}

#[test]
fn compat_fails_on_a_changed_field_without_a_migration() {
    let root = tempfile::tempdir().unwrap();
    let saves = release1_saves(root.path());
    let schema = write_schema(&today_app(false), &root.path().join("game.schema"));
    let assert = keepsake()
        .arg("compat")
        .arg(&schema)
        .arg(&saves)
        .assert()
        .code(1);
    let out = stdout_of(&assert, root.path());
    assert!(
        out.contains("game::Stats.hp: u32 in the save, f32 today"),
        "{out}"
    );
    insta::assert_snapshot!("compat_changed_field", out);

    let json = keepsake()
        .args(["--json", "compat"])
        .arg(&schema)
        .arg(&saves)
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(json["problems"], 2, "one per generation: {json:#}");
    let stats = &json["saves"][0]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|column| column["type_path"] == "game::Stats")
        .unwrap()
        .clone();
    assert_eq!(stats["problem"], true);
    assert_eq!(stats["changes"][0]["path"], "game::Stats.hp");
    assert_eq!(stats["changes"][0]["needs_migration"], true);
}

#[test]
fn compat_passes_once_the_migration_is_registered() {
    let root = tempfile::tempdir().unwrap();
    let saves = release1_saves(root.path());
    let schema = write_schema(&today_app(true), &root.path().join("game.schema"));
    let text = std::fs::read_to_string(&schema).unwrap();
    assert!(
        text.contains("type game::Stats\n  kind component\n  version 2\n  encoding reflect\n  migrates-from 1\n"),
        "{text}"
    );
    let assert = keepsake()
        .arg("compat")
        .arg(&schema)
        .arg(&saves)
        .assert()
        .code(0);
    let out = stdout_of(&assert, root.path());
    assert!(
        out.contains("game::Stats v1: migrates to version 2"),
        "{out}"
    );
    assert!(
        out.contains("2 saves in <root>/saves checked against"),
        "{out}"
    );
    insta::assert_snapshot!("compat_migrated", out);
}

#[test]
fn a_malformed_schema_file_is_refused_naming_the_line_and_type() {
    let root = tempfile::tempdir().unwrap();
    let saves = release1_saves(root.path());
    let good = SaveSchema::of_app(&today_app(false)).to_text();
    let cases = [
        (
            good.replace(
                "  version 1\n  encoding reflect\n  layout struct game::Stats",
                "  version one\n  encoding reflect\n  layout struct game::Stats",
            ),
            "(type game::Stats): \"one\" is not a number",
        ),
        (
            good.replace("    hp: f32", "    hp f32"),
            "(type game::Stats): expected `<field>: <layout>`",
        ),
        (
            good.replace("    hp: f32", "      hp: f32"),
            "indented by 6 spaces, expected 4",
        ),
        (
            good.replace("keepsake-schema 1", "keepsake-schema 7"),
            "format version 7 is newer",
        ),
        ("hello\n".to_owned(), "not a keepsake schema file"),
        (
            good.replace("    hp: f32", "    hp: f33"),
            "unknown layout \"f33\"",
        ),
    ];
    for (text, expected) in cases {
        let path = root.path().join("bad.schema");
        std::fs::write(&path, &text).unwrap();
        keepsake()
            .arg("compat")
            .arg(&path)
            .arg(&saves)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(expected));
    }
    keepsake()
        .args(["compat", "/no/such.schema"])
        .arg(&saves)
        .assert()
        .code(2);
    let schema = write_schema(&today_app(true), &root.path().join("game.schema"));
    let empty = tempfile::tempdir().unwrap();
    keepsake()
        .arg("compat")
        .arg(&schema)
        .arg(empty.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains("no save files"));
}

#[test]
fn schema_writes_the_layouts_a_save_records() {
    let root = tempfile::tempdir().unwrap();
    let saves = release1_saves(root.path());
    let save = saves.join("alice").join("manual-00.g000001.ksav");
    let printed = keepsake().arg("schema").arg(&save).assert().code(0);
    let printed = String::from_utf8(printed.get_output().stdout.clone()).unwrap();
    // The release that wrote the save registered no migration, so the save tells all there
    // is of the types it holds (no entity had a parent: no `ChildOf` column).
    let held = SaveSchema::of_app(&release1_app())
        .types()
        .iter()
        .filter(|ty| !ty.type_path.ends_with("ChildOf"))
        .cloned()
        .collect();
    let release1 = SaveSchema::new(held);
    assert_eq!(SaveSchema::parse(&printed).unwrap(), release1);
    assert_eq!(printed, release1.to_text());

    let out = root.path().join("from-save.schema");
    keepsake()
        .arg("schema")
        .arg(&save)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), printed);
    keepsake()
        .arg("compat")
        .arg(&out)
        .arg(&saves)
        .assert()
        .code(0);
    keepsake()
        .arg("schema")
        .arg(super::workspace_file(
            "tests/golden/bevy-0.19-test-world.ksav",
        ))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("before saves recorded layouts"));
}
