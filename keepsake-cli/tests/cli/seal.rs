//! Sealed saves through the tool: listed and inspected without the key, checked with the key
//! from a file (`--key-file`) or the environment (`KEEPSAKE_KEY`), a clear "pass --key-file"
//! from the commands that need the payload, and a key that is never printed.

use super::{json_of, keepsake, meta, world_bundle};
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{SealKey, UnsealedSaves};
use bevy_keepsake::store::{ProfileName, SlotStore, StoreConfig};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

const KEY_HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn key() -> SealKey {
    SealKey::from_hex(KEY_HEX).unwrap()
}

/// A file holding `text` (a key, or not), kept as long as the returned folder.
fn key_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.key");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// `<root>/sealed`: manual 0 (two sealed generations) and the quicksave, saved before the game
/// sealed its saves (unsealed). Returns the root, the store and the newest manual save's path.
fn sealed_profile() -> (tempfile::TempDir, SlotStore, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let profile = ProfileName::new("sealed").unwrap();
    let before = StoreConfig::new(root.path()).profile(profile.clone());
    SlotStore::open(before)
        .unwrap()
        .save(
            SlotId::Quick,
            meta(SlotId::Quick, "Old quick", 0, false),
            &world_bundle(1, 1),
        )
        .unwrap();
    let config = StoreConfig::new(root.path())
        .profile(profile)
        .seal(key())
        .unsealed(UnsealedSaves::Accept);
    let store = SlotStore::open(config).unwrap();
    let manual = SlotId::Manual(0);
    store
        .save(manual, meta(manual, "Camp", 1, false), &world_bundle(2, 5))
        .unwrap();
    let newest = store
        .save(
            manual,
            meta(manual, "Harbour", 3, true),
            &world_bundle(3, 9),
        )
        .unwrap();
    (root, store, newest.path)
}

/// A copy of `path` with one letter of its title changed and every CRC rewritten, as a save
/// editor would leave it.
fn edited_title(path: &Path, dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.windows(7).position(|w| w == b"Harbour").unwrap();
    bytes[at] = b'B';
    let meta_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let meta_crc = crc32fast::hash(&bytes[40..40 + meta_len]);
    bytes[24..28].copy_from_slice(&meta_crc.to_le_bytes());
    let header_crc = crc32fast::hash(&bytes[..36]);
    bytes[36..40].copy_from_slice(&header_crc.to_le_bytes());
    let edited = dir.join("edited.ksav");
    std::fs::write(&edited, bytes).unwrap();
    edited
}

#[test]
fn list_and_inspect_show_a_sealed_save_without_the_key() {
    let (root, store, newest) = sealed_profile();
    keepsake()
        .arg("list")
        .arg(store.dir())
        .assert()
        .success()
        .stdout(predicate::str::contains("ok, sealed"))
        .stdout(predicate::str::contains("Harbour"));
    let listed = json_of(
        &keepsake()
            .args(["list", "--json"])
            .arg(root.path())
            .assert()
            .success(),
    );
    let slots = listed[0]["slots"].as_array().unwrap();
    let sealed: Vec<bool> = slots.iter().map(|s| s["shown"]["sealed"] == true).collect();
    assert_eq!(sealed.iter().filter(|&&s| s).count(), 1, "{listed}");

    keepsake()
        .arg("inspect")
        .arg(&newest)
        .assert()
        .success()
        .stdout(predicate::str::contains("format version 3"))
        .stdout(predicate::str::contains(
            "seal not checked (pass --key-file",
        ))
        .stdout(predicate::str::contains("Harbour"));
    let json = json_of(
        &keepsake()
            .args(["inspect", "--json"])
            .arg(&newest)
            .assert()
            .success(),
    );
    assert_eq!(json["seal"], "unchecked");
    assert_eq!(json["status"], "ok");
    assert!(json["bundle"].is_null() && json["chunks"].is_null());

    let json = json_of(
        &keepsake()
            .args(["inspect", "--json"])
            .env("KEEPSAKE_KEY", KEY_HEX)
            .arg(&newest)
            .assert()
            .success(),
    );
    assert_eq!(json["seal"], "checked");
    assert_eq!(json["bundle"]["tick"], 9);
    assert!(json["chunks"]["chunks"].as_u64().unwrap() >= 1);
}

#[test]
fn verify_checks_crcs_without_the_key_and_the_seal_with_it() {
    let (_root, store, newest) = sealed_profile();
    edited_title(&newest, store.dir());
    let status_of = |json: &serde_json::Value, name: &str| {
        let files = json["files"].as_array().unwrap();
        let file = files
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name));
        file.unwrap().clone()
    };

    // Without the key the edit is not seen: its CRCs are right. Nothing is called damaged.
    let json = json_of(
        &keepsake()
            .args(["verify", "--json"])
            .arg(store.dir())
            .assert()
            .success(),
    );
    assert_eq!(json["damaged"], 0, "{json}");
    assert_eq!(status_of(&json, "edited.ksav")["seal"], "unchecked");

    let (_keys, key_path) = key_file(KEY_HEX);
    let json = json_of(
        &keepsake()
            .args(["verify", "--json", "--key-file"])
            .arg(&key_path)
            .arg(store.dir())
            .assert()
            .code(1),
    );
    assert_eq!(json["damaged"], 1, "{json}");
    let file = status_of(&json, "edited.ksav");
    assert_eq!(file["section"], "seal");
    assert!(file["message"].as_str().unwrap().contains("seal is broken"));
    assert_eq!(
        status_of(&json, &newest.file_name().unwrap().to_string_lossy())["status"],
        "ok"
    );
    let quick = store.path_of(SlotId::Quick, 1);
    let quick = status_of(&json, &quick.file_name().unwrap().to_string_lossy());
    assert_eq!(quick["status"], "ok");
    assert_eq!(quick["seal"], "none");
    assert!(quick["message"].as_str().unwrap().starts_with("not sealed"));

    // A wrong key breaks every sealed file's seal; the unsealed quicksave still verifies.
    let wrong = KEY_HEX.replace("00", "01");
    let json = json_of(
        &keepsake()
            .args(["verify", "--json"])
            .env("KEEPSAKE_KEY", &wrong)
            .arg(store.dir())
            .assert()
            .code(1),
    );
    assert_eq!(json["damaged"], 3, "{json}");
}

#[test]
fn dump_and_diff_of_a_sealed_save_without_the_key_say_to_pass_it() {
    let (_root, store, newest) = sealed_profile();
    let older = store.path_of(SlotId::Manual(0), 1);
    for args in [vec!["dump"], vec!["diff"], vec!["schema"]] {
        let mut command = keepsake();
        command.args(&args).arg(&newest);
        if args[0] == "diff" {
            command.arg(&older);
        }
        command
            .assert()
            .code(2)
            .stderr(predicate::str::contains("sealed save"))
            .stderr(predicate::str::contains("pass --key-file"))
            .stderr(predicate::str::contains("KEEPSAKE_KEY"));
    }
    let (_keys, key_path) = key_file(KEY_HEX);
    keepsake()
        .args(["dump", "--key-file"])
        .arg(&key_path)
        .arg(&newest)
        .assert()
        .success()
        .stdout(predicate::str::contains("Health"));
    keepsake()
        .args(["diff"])
        .env("KEEPSAKE_KEY", KEY_HEX)
        .arg(&older)
        .arg(&newest)
        .assert()
        .code(1);
}

#[test]
fn the_key_reads_from_a_file_or_the_environment_and_a_bad_key_is_a_usage_error() {
    let (_root, _store, newest) = sealed_profile();
    let (_hex, hex_file) = key_file(&format!("{KEY_HEX}\n"));
    let raw_dir = tempfile::tempdir().unwrap();
    let raw_file = raw_dir.path().join("key.bin");
    std::fs::write(&raw_file, hex_bytes()).unwrap();
    for file in [&hex_file, &raw_file] {
        keepsake()
            .args(["verify", "--key-file"])
            .arg(file)
            .arg(&newest)
            .assert()
            .success();
    }
    keepsake()
        .arg("verify")
        .env("KEEPSAKE_KEY", KEY_HEX)
        .arg(&newest)
        .assert()
        .success();
    // The file wins over the environment.
    let wrong = KEY_HEX.replace("00", "01");
    keepsake()
        .args(["verify", "--key-file"])
        .arg(&hex_file)
        .env("KEEPSAKE_KEY", &wrong)
        .arg(&newest)
        .assert()
        .success();
    let (_short, short_file) = key_file("abc");
    keepsake()
        .args(["verify", "--key-file"])
        .arg(&short_file)
        .arg(&newest)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("64 hexadecimal digits"));
}

/// A malformed key, wherever it was given, is never printed, in whole or in part; the old
/// `--key` is refused (exit 2) with what to use instead, without repeating its value.
#[test]
fn a_key_is_never_printed() {
    let (_root, _store, newest) = sealed_profile();
    // Almost a key: one character too many, and one that is not a digit.
    let secret = format!("{}Q", &KEY_HEX[..63].replace("00", "9f"));
    let assert_unprinted = |output: &std::process::Output, what: &str| {
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(!text.contains(&secret[..16]), "{what}: {text}");
            assert!(!text.contains("'Q'"), "{what}: {text}");
        }
    };

    let (_bad, bad_file) = key_file(&secret);
    let output = keepsake()
        .args(["verify", "--key-file"])
        .arg(&bad_file)
        .arg(&newest)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_unprinted(&output, "--key-file");

    let output = keepsake()
        .arg("verify")
        .env("KEEPSAKE_KEY", &secret)
        .arg(&newest)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("KEEPSAKE_KEY"));
    assert_unprinted(&output, "KEEPSAKE_KEY");

    for value in [secret.as_str(), KEY_HEX] {
        let output = keepsake()
            .args(["verify", "--key", value])
            .arg(&newest)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--key-file"), "{stderr}");
        assert!(!stderr.contains(&value[..16]), "{stderr}");
        assert_unprinted(&output, "--key");
    }
}

fn hex_bytes() -> Vec<u8> {
    (0..32)
        .map(|i| u8::from_str_radix(&KEY_HEX[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}
