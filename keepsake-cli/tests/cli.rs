//! Runs the built `keepsake` binary on saves made by the library, on the golden file, on damaged
//! copies and on the fuzz corpora, and checks its output and exit codes.

use assert_cmd::Command;
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, Timestamp, WorldState};
use bevy_keepsake::snapshot::{self, LevelKey, Saveable, SaveableAppExt};
use bevy_keepsake::store::{ProfileName, SlotStore, StoreConfig};
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "cli/compat.rs"]
mod compat;
#[path = "cli/seal.rs"]
mod seal;

#[derive(Component, Reflect, Default)]
struct Health(f32);

#[derive(Component, Reflect, Default)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Resource, Reflect, Default)]
struct Score(u32);

/// A component with named fields, an enum, text and a list, for `dump` and `inspect --layouts`.
#[derive(Component, Reflect, Default)]
struct Hero {
    name: String,
    level: u32,
    mood: Mood,
    bag: Vec<Item>,
}

#[derive(Reflect, Default)]
enum Mood {
    #[default]
    Calm,
    Angry(u8),
    Lost {
        days: u16,
    },
}

#[derive(Reflect, Default)]
struct Item {
    id: u16,
    label: String,
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nthumbnail-bytes";

fn keepsake() -> Command {
    let mut command =
        Command::cargo_bin("keepsake").expect("the keepsake binary is built with the tests");
    // A key in the environment of whoever runs the tests must not change what they see.
    command.env_remove("KEEPSAKE_KEY");
    command
}

fn workspace_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative)
}

/// A world of `enemies` entities with health and position and a score, captured.
fn world_bundle(enemies: u32, score: u32) -> SaveBundle {
    let mut app = App::new();
    app.register_saveable::<Health>()
        .register_saveable::<Position>()
        .register_saveable::<Score>()
        .insert_resource(Score(score));
    for i in 0..enemies {
        app.world_mut().spawn((
            Saveable,
            Health(10.0 + i as f32),
            Position {
                x: i as f32,
                y: 2.0,
            },
        ));
    }
    let captured = snapshot::capture(app.world()).expect("capture");
    SaveBundle::new(WorldState {
        tick: u64::from(score),
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    })
}

/// A save (blob layout 2, with layouts) of two heroes, one with health, and a score, written
/// to `<dir>/heroes.ksav`.
fn heroes_save(dir: &Path) -> PathBuf {
    let mut app = App::new();
    app.register_saveable::<Hero>()
        .register_saveable::<Health>()
        .register_saveable::<Score>()
        .insert_resource(Score(7));
    let ann = Hero {
        name: "Ann".into(),
        level: 3,
        mood: Mood::Angry(2),
        bag: vec![
            Item {
                id: 1,
                label: "rope".into(),
            },
            Item {
                id: 2,
                label: "lamp".into(),
            },
        ],
    };
    let bob = Hero {
        name: "Bob".into(),
        level: 1,
        mood: Mood::Lost { days: 12 },
        bag: Vec::new(),
    };
    app.world_mut().spawn((Saveable, ann, Health(9.5)));
    // Bob sits at the camp, a level entity the save references by its key.
    let camp = app.world_mut().spawn(LevelKey::new("camp")).id();
    app.world_mut().spawn((Saveable, bob, ChildOf(camp)));
    app.world_mut().spawn((Saveable, Health(1.0)));
    let captured = snapshot::capture(app.world()).expect("capture");
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    });
    let meta = meta(SlotId::Manual(0), "Heroes", 0, false);
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
    let path = dir.join("heroes.ksav");
    std::fs::write(&path, bytes.to_vec()).unwrap();
    path
}

fn meta(slot: SlotId, title: &str, minute: i64, thumbnail: bool) -> SaveMeta {
    let mut meta = SaveMeta::new(slot).with_title(title);
    meta.save_id = uuid::Uuid::from_u128(0x1234_5678 + minute as u128);
    meta.created_at = Timestamp::from_unix_millis(1_763_700_000_000 + minute * 60_000);
    meta.playtime = Duration::from_secs(600 + minute as u64 * 60);
    meta.game_version = "1.2.0".into();
    meta.thumbnail = thumbnail.then(|| PNG.to_vec());
    meta
}

/// `<root>/alice`: manual 1 with two generations (a thumbnail on the newest), the quicksave, and
/// autosave 1 whose newest generation has a damaged header over an intact backup.
fn profile() -> (tempfile::TempDir, SlotStore) {
    let root = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(root.path()).profile(ProfileName::new("alice").unwrap());
    let store = SlotStore::open(config).unwrap();
    let manual = SlotId::Manual(0);
    store
        .save(manual, meta(manual, "Camp", 1, false), &world_bundle(2, 5))
        .unwrap();
    store
        .save(
            manual,
            meta(manual, "Harbour", 3, true),
            &world_bundle(3, 9),
        )
        .unwrap();
    store
        .save(
            SlotId::Quick,
            meta(SlotId::Quick, "Quick", 2, false),
            &world_bundle(1, 1),
        )
        .unwrap();
    let auto = SlotId::Auto(0);
    store
        .save(auto, meta(auto, "Auto old", 0, false), &world_bundle(1, 0))
        .unwrap();
    let newest = store
        .save(auto, meta(auto, "Auto new", 4, false), &world_bundle(1, 0))
        .unwrap();
    damage(&newest.path, 10);
    (root, store)
}

fn damage(path: &Path, offset: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset] ^= 0x55;
    std::fs::write(path, bytes).unwrap();
}

/// Output with the temporary folder's path replaced, for snapshots.
fn stdout_of(assert: &assert_cmd::assert::Assert, root: &Path) -> String {
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    out.replace(&root.display().to_string(), "<root>")
}

fn json_of(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("valid JSON on stdout")
}

#[test]
fn list_reports_slots_as_the_game_does() {
    let (root, store) = profile();
    let assert = keepsake().arg("list").arg(store.dir()).assert().code(1);
    insta::assert_snapshot!("list_profile", stdout_of(&assert, root.path()));

    let json = json_of(
        &keepsake()
            .args(["list", "--json"])
            .arg(store.dir())
            .assert()
            .code(1),
    );
    let slots = json[0]["slots"].as_array().unwrap();
    assert_eq!(slots.len(), 3, "{json:#}");
    let by_slot = |name: &str| slots.iter().find(|s| s["slot"] == name).unwrap().clone();
    let manual = by_slot("Manual 1");
    assert_eq!(manual["status"], "ok");
    assert_eq!(manual["shown"]["generation"], 2);
    assert_eq!(manual["shown"]["generations"], 2);
    assert_eq!(manual["shown"]["has_thumbnail"], true);
    assert_eq!(manual["shown"]["meta"]["title"], "Harbour");
    let auto = by_slot("Autosave 1");
    assert_eq!(auto["status"], "damaged");
    assert_eq!(auto["restored_from_backup"], true);
    assert_eq!(auto["damaged_generation"], 2);
    assert_eq!(auto["shown"]["meta"]["title"], "Auto old");

    // The save root lists every profile; the listing changed nothing.
    let before = std::fs::read_dir(store.dir()).unwrap().count();
    keepsake()
        .arg("list")
        .arg(root.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("alice").and(predicate::str::contains("Harbour")));
    assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), before);
}

#[test]
fn list_names_the_device_that_made_each_save() {
    let root = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(root.path()).profile(ProfileName::new("bob").unwrap());
    let store = SlotStore::open(config).unwrap();
    let (deck, desk) = (SlotId::Manual(0), SlotId::Manual(1));
    let synced = meta(deck, "Harbour", 1, false).with_device("4f0c-install", "Steam Deck");
    store.save(deck, synced, &world_bundle(1, 1)).unwrap();
    // Made with cloud sync off: no device recorded.
    store
        .save(desk, meta(desk, "Camp", 2, false), &world_bundle(1, 2))
        .unwrap();

    let assert = keepsake().arg("list").arg(store.dir()).assert().success();
    insta::assert_snapshot!("list_devices", stdout_of(&assert, root.path()));

    let json = json_of(
        &keepsake()
            .args(["list", "--json"])
            .arg(store.dir())
            .assert()
            .success(),
    );
    let slots = json[0]["slots"].as_array().unwrap();
    let device = |name: &str| {
        let slot = slots.iter().find(|s| s["slot"] == name).unwrap();
        slot["shown"]["device"].clone()
    };
    assert_eq!(device("Manual 1"), "Steam Deck", "{json:#}");
    assert_eq!(device("Manual 2"), Value::Null, "{json:#}");
}

#[test]
fn list_leaves_temporary_files_and_foreign_files_alone() {
    let (_root, store) = profile();
    let temp = store.dir().join("manual-00.g000003.ksav.999-0.tmp");
    std::fs::write(&temp, b"half a save").unwrap();
    std::fs::write(store.dir().join("notes.txt"), b"hello").unwrap();
    std::fs::write(store.dir().join("manual-40.g000001.ksav"), b"KPSK garbage").unwrap();
    let json = json_of(
        &keepsake()
            .args(["list", "--json"])
            .arg(store.dir())
            .assert()
            .code(1),
    );
    assert!(temp.exists(), "a listing never removes files");
    let slots = json[0]["slots"].as_array().unwrap();
    let far = slots
        .iter()
        .find(|s| s["slot"] == "Manual 41")
        .expect("slot beyond the default layout");
    assert_eq!(far["status"], "damaged");
    assert_eq!(far["restored_from_backup"], false);
}

#[test]
fn inspect_shows_header_sections_metadata_and_the_blob_table() {
    let (root, store) = profile();
    let path = store.path_of(SlotId::Manual(0), 2);
    let assert = keepsake().arg("inspect").arg(&path).assert().success();
    insta::assert_snapshot!("inspect_manual", stdout_of(&assert, root.path()));

    let json = json_of(
        &keepsake()
            .args(["inspect", "--json", "--values", "--rows", "2"])
            .arg(&path)
            .assert()
            .success(),
    );
    assert_eq!(json["status"], "ok");
    assert_eq!(json["blob"]["entities"], 3);
    let columns = json["blob"]["columns"].as_array().unwrap();
    let health = columns
        .iter()
        .find(|c| c["type_path"].as_str().unwrap().ends_with("::Health"))
        .unwrap();
    assert_eq!(health["rows"], 3);
    assert_eq!(health["kind"], "component");
    let values = health["values"].as_array().unwrap();
    assert_eq!(values.len(), 2, "capped by --rows");
    // Health(10.0) through reflection: the f32 in postcard, little-endian.
    assert_eq!(values[0]["hex"], "00002041");
    let score = columns.iter().find(|c| c["kind"] == "resource").unwrap();
    assert_eq!(score["rows"], 1);
    assert!(
        json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["crc_stored"] == s["crc_computed"])
    );
}

#[test]
fn inspect_the_golden_file() {
    let golden = workspace_file("tests/golden/v1.ksav");
    // Its ecs_blob is game-shaped bytes under a placeholder hash, not a world snapshot: the
    // format layer reads it, the world would not load.
    let assert = keepsake()
        .current_dir(workspace_file(""))
        .args(["inspect", "tests/golden/v1.ksav"])
        .assert()
        .code(1);
    insta::assert_snapshot!("inspect_golden", stdout_of(&assert, Path::new("/unused")));
    let json = json_of(
        &keepsake()
            .args(["inspect", "--json"])
            .arg(&golden)
            .assert()
            .code(1),
    );
    assert_eq!(
        json["metadata"]["title"],
        "Sunken Harbour · Level 4 · 1,250 pts"
    );
    assert_eq!(json["damage"]["section"], "ecs_blob");
    assert_eq!(json["header"]["payload_uncompressed_len"], 4140);
}

#[test]
fn dump_prints_values_with_field_names_through_the_saves_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let path = heroes_save(dir.path());
    let assert = keepsake().arg("dump").arg(&path).assert().success();
    let out = stdout_of(&assert, dir.path());
    insta::assert_snapshot!("dump_heroes", out);
    assert!(
        out.contains(r#"name: "Ann", level: 3, mood: Angry(2), bag: [Item(id: 1, label: "rope")"#),
        "{out}"
    );
    assert!(out.contains("mood: Lost(days: 12), bag: []"), "{out}");
    assert!(out.contains("Score(7)"), "{out}");

    // --type keeps the types whose path contains the text, and the entities that have one.
    let assert = keepsake()
        .args(["dump", "--type", "Health"])
        .arg(&path)
        .assert()
        .success();
    let out = stdout_of(&assert, dir.path());
    assert!(
        out.contains("Health(9.5)") && out.contains("Health(1.0)"),
        "{out}"
    );
    assert!(!out.contains("Hero(") && !out.contains("Score"), "{out}");
    assert_eq!(out.matches("  #").count(), 2, "{out}");
    keepsake()
        .args(["dump", "--type", "NoSuchType"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "no values of a type whose path contains \"NoSuchType\"",
        ));

    // --entity, --rows.
    let assert = keepsake()
        .args(["dump", "--entity", "1"])
        .arg(&path)
        .assert()
        .success();
    let out = stdout_of(&assert, dir.path());
    assert!(
        out.contains(r#"#1 ("#) && out.contains(r#"name: "Bob""#),
        "{out}"
    );
    assert!(!out.contains("Ann") && !out.contains("Score"), "{out}");
    keepsake()
        .args(["dump", "--rows", "1"])
        .arg(&path)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("… 2 more entities")
                .and(predicate::str::contains("Bob").not()),
        );
    keepsake()
        .args(["dump", "--entity", "3"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("there is no entity #3"));

    // --json: the same structure.
    let json = json_of(
        &keepsake()
            .args(["dump", "--json"])
            .arg(&path)
            .assert()
            .success(),
    );
    assert_eq!(json["layout_version"], snapshot::BLOB_VERSION);
    assert_eq!(json["entity_count"], 3);
    assert_eq!(json["unreadable"], 0);
    assert_eq!(json["resources"][0]["value"], "Score(7)");
    let ann = &json["entities"][0];
    assert_eq!(ann["index"], 0);
    assert!(ann["id"].as_str().unwrap().starts_with("0x"));
    let hero = ann["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["type_path"] == "cli::Hero")
        .unwrap();
    assert_eq!(hero["layout"], "cli::Hero");
    assert!(
        hero["value"].as_str().unwrap().contains(r#"name: "Ann""#),
        "{hero}"
    );
}

/// A value whose bytes do not match its layout shows the reason in its place; the rest of the
/// dump goes on, and the exit code says something was found.
#[test]
fn dump_shows_a_value_it_cannot_read_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new();
    app.register_saveable::<Hero>()
        .register_saveable::<Health>();
    app.world_mut()
        .spawn((Saveable, Hero::default(), Health(4.0)));
    let captured = snapshot::capture(app.world()).expect("capture");
    let mut blob = captured.blob;
    // Hero::default() ends with its empty bag, a length of 0: claim 100 items where no byte
    // is left.
    let table = snapshot::inspect(&blob).unwrap();
    let hero = table
        .columns
        .iter()
        .find(|c| c.type_path == "cli::Hero")
        .unwrap();
    let value = hero.rows.first().unwrap().value;
    let at = value.as_ptr() as usize - blob.as_ptr() as usize + value.len() - 1;
    blob[at] = 100;
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        state_hash: snapshot::state_hash(&blob),
        ecs_blob: blob,
    });
    let meta = meta(SlotId::Manual(0), "Broken hero", 0, false);
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
    let path = dir.path().join("broken.ksav");
    std::fs::write(&path, bytes.to_vec()).unwrap();
    let assert = keepsake().arg("dump").arg(&path).assert().code(1);
    let out = stdout_of(&assert, dir.path());
    assert!(
        out.contains("Hero <cli::Hero.bag: a length of 100 items"),
        "{out}"
    );
    assert!(out.contains("Health(4.0)"), "{out}");
    assert!(out.contains("1 values could not be read"), "{out}");
}

#[test]
fn inspect_layouts_shows_each_types_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = heroes_save(dir.path());
    let assert = keepsake()
        .args(["inspect", "--layouts"])
        .arg(&path)
        .assert()
        .success();
    let out = stdout_of(&assert, dir.path());
    let expected = "
    struct cli::Hero {
        name: String,
        level: u32,
        mood: enum cli::Mood {
            Calm,
            Angry(u8),
            Lost { days: u16 },
        },
        bag: Vec<struct cli::Item {
            id: u16,
            label: String,
        }>,
    }
";
    assert!(out.contains(expected), "{out}");
    // The table's own line for it: the fields one level deep.
    assert!(
        out.contains("struct { name: String, level: u32, mood: Mood, bag: Vec<Item> }"),
        "{out}"
    );
    let json = json_of(
        &keepsake()
            .args(["inspect", "--json", "--layouts"])
            .arg(&path)
            .assert()
            .success(),
    );
    let columns = json["blob"]["columns"].as_array().unwrap();
    let hero = columns
        .iter()
        .find(|c| c["type_path"] == "cli::Hero")
        .unwrap();
    assert!(
        hero["layout_pretty"]
            .as_str()
            .unwrap()
            .starts_with("struct cli::Hero {")
    );
}

/// A save from before layouts (blob layout 1) still dumps: a note says the game's types are
/// needed to read its values, and each value shows its size.
#[test]
fn a_save_from_before_layouts_dumps_with_a_note() {
    let golden = workspace_file("tests/golden/bevy-0.20-test-world.ksav");
    let assert = keepsake().arg("dump").arg(&golden).assert().success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(out.contains("layout 1, 4 entities"), "{out}");
    assert_eq!(
        out.matches("this save predates layouts: use the game's types (snapshot::dump)")
            .count(),
        1,
        "{out}"
    );
    assert!(
        out.contains("  #1 (0x") && out.contains("Transform <40 bytes>"),
        "{out}"
    );
    keepsake()
        .arg("inspect")
        .arg(&golden)
        .assert()
        .success()
        .stdout(predicate::str::contains("no layout (saved before layouts)"));
    let json = json_of(
        &keepsake()
            .args(["dump", "--json"])
            .arg(&golden)
            .assert()
            .success(),
    );
    assert!(json["note"].as_str().unwrap().contains("predates layouts"));
    let first = &json["entities"][0]["values"][0];
    assert_eq!(first["layout"], Value::Null);
    assert_eq!(first["value"], Value::Null);
}

#[test]
fn verify_names_each_damaged_file_and_section_and_goes_on() {
    let (root, store) = profile();
    let dir = store.dir().to_path_buf();
    // Intact files only: exit 0.
    std::fs::remove_file(store.path_of(SlotId::Auto(0), 2)).unwrap();
    keepsake()
        .arg("verify")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("4 checked: 4 ok, 0 damaged"));

    // One damaged copy per section, a truncated one, a forged length, a foreign .ksav.
    let good = std::fs::read(store.path_of(SlotId::Manual(0), 2)).unwrap();
    let header = format::read_header(&mut &good[..]).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("header.ksav", flipped(&good, 5), "header"),
        ("metadata.ksav", flipped(&good, 45), "metadata"),
        (
            "thumbnail.ksav",
            flipped(&good, header.thumbnail_offset() as usize + 2),
            "thumbnail",
        ),
        ("payload.ksav", flipped(&good, good.len() - 3), "payload"),
        (
            "truncated.ksav",
            good[..good.len() - 10].to_vec(),
            "payload",
        ),
        ("forged.ksav", forged_length(&good), "payload"),
        ("foreign.ksav", b"PK\x03\x04 a zip file".to_vec(), "header"),
        ("empty.ksav", Vec::new(), "header"),
    ];
    for (name, bytes, _) in &cases {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    for i in 0..2000 {
        std::fs::write(dir.join(format!("screenshot-{i}.txt")), b"x").unwrap();
    }
    let json = json_of(
        &keepsake()
            .args(["verify", "--json"])
            .arg(&dir)
            .assert()
            .code(1),
    );
    assert_eq!(json["checked"], 4 + cases.len());
    assert_eq!(json["damaged"], cases.len());
    assert_eq!(
        json["ignored"],
        2000 + 3 + 3,
        "foreign files, the slots' lock files and their records of the saves that entered them"
    );
    for (name, _, section) in &cases {
        let file = json["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .unwrap();
        assert_eq!(file["status"], "damaged", "{name}");
        assert_eq!(file["section"], *section, "{name}: {file}");
    }
    let assert = keepsake()
        .current_dir(&dir)
        .args(["verify", "payload.ksav"])
        .assert()
        .code(1);
    insta::assert_snapshot!("verify_payload", stdout_of(&assert, root.path()));
}

fn flipped(bytes: &[u8], offset: usize) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[offset] ^= 0x01;
    bytes
}

/// The header announcing a 4 GiB payload, with its own CRC fixed so the lie gets past it.
fn forged_length(bytes: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    let crc = crc32(&bytes[..36]);
    bytes[36..40].copy_from_slice(&crc.to_le_bytes());
    bytes
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (!(crc & 1)).wrapping_add(1));
        }
    }
    !crc
}

#[cfg(unix)]
#[test]
fn verify_survives_odd_names_unreadable_files_and_fifos() {
    use std::os::unix::ffi::OsStrExt;
    let (_root, store) = profile();
    let dir = store.dir();
    let odd = dir.join(std::ffi::OsStr::from_bytes(b"odd-\xff\xfe.ksav"));
    std::fs::write(&odd, b"KPSK").unwrap();
    std::os::unix::fs::symlink(dir.join("missing"), dir.join("dangling.ksav")).unwrap();
    let fifo = dir.join("pipe.ksav");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let json = json_of(
        &keepsake()
            .args(["verify", "--json"])
            .arg(dir)
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2),
    );
    let status_of = |suffix: &str| {
        json["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().contains(suffix))
            .unwrap_or_else(|| panic!("{suffix} in {json:#}"))["status"]
            .clone()
    };
    assert_eq!(status_of("dangling.ksav"), "unreadable");
    if made.is_ok_and(|s| s.success()) {
        assert_eq!(status_of("pipe.ksav"), "unreadable");
    }
    assert_eq!(status_of("odd-"), "damaged");
    // The intact saves were still checked.
    assert_eq!(status_of("manual-00.g000002.ksav"), "ok");
    // And the listing reads around them too.
    keepsake()
        .arg("list")
        .arg(dir)
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1);
}

#[test]
fn thumbnail_writes_the_png_or_says_why_not() {
    let (_root, store) = profile();
    let out = tempfile::tempdir().unwrap();
    let png = out.path().join("shot.png");
    keepsake()
        .arg("thumbnail")
        .arg(store.path_of(SlotId::Manual(0), 2))
        .arg("-o")
        .arg(&png)
        .assert()
        .success()
        .stdout(predicate::str::contains("PNG"));
    assert_eq!(std::fs::read(&png).unwrap(), PNG);

    keepsake()
        .arg("thumbnail")
        .arg(store.path_of(SlotId::Manual(0), 1))
        .arg("-o")
        .arg(&png)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("has no thumbnail"));
    let json = json_of(
        &keepsake()
            .args(["thumbnail", "--json"])
            .arg(store.path_of(SlotId::Auto(0), 2))
            .arg("-o")
            .arg(&png)
            .assert()
            .code(1),
    );
    assert_eq!(json["status"], "damaged");
    assert_eq!(json["section"], "header");
}

#[test]
fn diff_reports_rows_per_type_and_metadata() {
    let (root, store) = profile();
    let (a, b) = (
        store.path_of(SlotId::Manual(0), 1),
        store.path_of(SlotId::Manual(0), 2),
    );
    let assert = keepsake().arg("diff").arg(&a).arg(&b).assert().code(1);
    insta::assert_snapshot!("diff_generations", stdout_of(&assert, root.path()));
    let json = json_of(
        &keepsake()
            .args(["diff", "--json"])
            .arg(&a)
            .arg(&b)
            .assert()
            .code(1),
    );
    let health = json["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type_path"].as_str().unwrap().ends_with("::Health"))
        .unwrap()
        .clone();
    assert_eq!(health["only_in_b"], serde_json::json!([2]));
    assert_eq!(health["same"], 2);
    let score = json["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "resource")
        .unwrap()
        .clone();
    assert_eq!(score["changed"], serde_json::json!([null]));
    assert!(
        json["fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["field"] == "title")
    );

    keepsake()
        .arg("diff")
        .arg(&b)
        .arg(&b)
        .assert()
        .success()
        .stdout(predicate::str::contains("the saves are equal"));
    // A damaged save cannot be compared.
    keepsake()
        .arg("diff")
        .arg(&a)
        .arg(store.path_of(SlotId::Auto(0), 2))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("damaged in the header"));
}

#[test]
fn usage_and_io_errors_exit_2_and_help_documents_exit_codes() {
    keepsake().arg("frobnicate").assert().code(2);
    keepsake().args(["verify"]).assert().code(2);
    keepsake()
        .args(["inspect", "/no/such/file.ksav"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
    keepsake()
        .args(["verify", "/no/such/folder"])
        .assert()
        .code(2);
    keepsake().arg("--help").assert().success().stdout(
        predicate::str::contains("Exit codes:").and(predicate::str::contains("2  usage error")),
    );
}

/// Every input the file fuzzer has, and every blob input wrapped into a save: no command panics,
/// each reports and exits 0, 1 or 2.
#[test]
fn the_fuzz_corpora_never_crash_a_command() {
    let file_inputs = corpus("decode_file");
    assert!(file_inputs.len() >= 10, "the corpus is committed");
    let blob_dir = tempfile::tempdir().unwrap();
    for (i, path) in corpus("decode_blob").iter().enumerate() {
        let blob = std::fs::read(path).unwrap();
        let bundle = SaveBundle::new(WorldState {
            tick: 1,
            state_hash: snapshot::state_hash(&blob),
            ecs_blob: blob,
        });
        let meta = meta(SlotId::Manual(0), "fuzz", 0, false);
        let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())
            .unwrap()
            .to_vec();
        std::fs::write(blob_dir.path().join(format!("blob-{i:04}.ksav")), bytes).unwrap();
    }

    let verify_files = keepsake()
        .args(["verify", "--json"])
        .args(&file_inputs)
        .assert();
    let json = json_of(&verify_files);
    assert_eq!(json["checked"], file_inputs.len());
    assert_no_panic(&verify_files);
    let verify_blobs = keepsake()
        .args(["verify", "--json"])
        .arg(blob_dir.path())
        .assert();
    assert_no_panic(&verify_blobs);
    assert!(json_of(&verify_blobs)["checked"].as_u64().unwrap() >= 10);

    // Every command on a sample of both (one process per input is slow in debug builds).
    let blobs: Vec<PathBuf> = std::fs::read_dir(blob_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let out = tempfile::tempdir().unwrap();
    for input in file_inputs
        .iter()
        .step_by(25)
        .chain(blobs.iter().step_by(25))
    {
        for args in [
            vec!["inspect", "--values", "--json"],
            vec!["inspect", "--layouts"],
            vec!["dump"],
            vec!["dump", "--json", "--type", "a"],
        ] {
            let assert = keepsake().args(&args).arg(input).assert();
            assert_no_panic(&assert);
        }
        let assert = keepsake()
            .arg("thumbnail")
            .arg(input)
            .arg("-o")
            .arg(out.path().join("t.png"))
            .assert();
        assert_no_panic(&assert);
        let assert = keepsake().arg("diff").arg(input).arg(&blobs[0]).assert();
        assert_no_panic(&assert);
    }
}

fn corpus(target: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for folder in ["corpus", "artifacts"] {
        let dir = workspace_file("fuzz").join(folder).join(target);
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        paths.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
    }
    paths.sort();
    paths
}

fn assert_no_panic(assert: &assert_cmd::assert::Assert) {
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let code = output.status.code();
    assert!(matches!(code, Some(0..=2)), "exit {code:?}: {stderr}");
}
