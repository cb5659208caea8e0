//! Slot store behaviour: generations and fallback, the autosave ring, listings, delete and
//! copy, profile validation and concurrent saves.

use crate::common;

use common::test_fs::{Op, TestFs, snapshot_dir};
use common::{crc_fixup, fixtures};
use keepsake_core::SlotId;
use keepsake_core::format::{FORMAT_VERSION, FormatError, PayloadLayout, SaveMeta, Section};
use keepsake_core::store::{
    ProfileName, SlotLayout, SlotStatus, SlotStore, StoreConfig, StoreError,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn store_in(root: &Path) -> SlotStore {
    SlotStore::open(StoreConfig::new(root)).unwrap()
}

/// Saves `count` generations into `slot`, the i-th with seed `i`.
fn save_generations(store: &SlotStore, slot: SlotId, count: u64) -> Vec<PathBuf> {
    (0..count)
        .map(|seq| {
            store
                .save(
                    slot,
                    fixtures::meta(slot, seq),
                    &fixtures::bundle(3_000, seq),
                )
                .unwrap()
                .path
        })
        .collect()
}

#[test]
fn a_slot_keeps_its_newest_save_plus_the_configured_backups() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let paths = save_generations(&store, SlotId::Manual(4), 6);
    assert_eq!(store.generations(SlotId::Manual(4)).unwrap(), [6, 5, 4, 3]);
    assert!(!paths[0].exists() && !paths[1].exists());
    let loaded = store.load(SlotId::Manual(4)).unwrap();
    assert_eq!(loaded.generation, 6);
    assert_eq!(loaded.bundle, fixtures::bundle(3_000, 5));
    assert!(!loaded.restored_from_backup());
}

/// A named way of damaging a file.
type Damage = (&'static str, fn(&Path));

/// Ways of damaging a file.
fn damages() -> Vec<Damage> {
    vec![
        ("bit flip", |path| {
            let mut bytes = std::fs::read(path).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x04;
            std::fs::write(path, bytes).unwrap();
        }),
        ("truncation", |path| {
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, &bytes[..bytes.len() - 100]).unwrap();
        }),
        ("zero length", |path| std::fs::write(path, b"").unwrap()),
        ("deleted", |path| std::fs::remove_file(path).unwrap()),
    ]
}

#[test]
fn a_damaged_newest_generation_falls_back_to_the_previous_one_and_says_so() {
    for (what, damage) in damages() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let paths = save_generations(&store, SlotId::Quick, 3);
        damage(&paths[2]);
        let before = snapshot_dir(store.dir());

        let loaded = store.load(SlotId::Quick).unwrap();
        assert_eq!(loaded.bundle, fixtures::bundle(3_000, 1), "{what}");
        assert_eq!(loaded.meta.title, fixtures::meta(SlotId::Quick, 1).title);
        if what == "deleted" {
            // A deleted newest file simply is no longer a generation.
            assert_eq!(loaded.generation, 2);
            assert!(!loaded.restored_from_backup());
        } else {
            assert_eq!(loaded.generation, 2, "{what}");
            assert!(loaded.restored_from_backup(), "{what}");
            assert_eq!(loaded.skipped.len(), 1);
            assert_eq!(loaded.skipped[0].generation, 3);
            assert!(!loaded.skipped[0].error.to_string().is_empty());
        }
        assert_eq!(
            before,
            snapshot_dir(store.dir()),
            "{what}: a load must change nothing"
        );
    }
}

#[test]
fn when_every_generation_is_damaged_the_error_lists_each_and_nothing_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let paths = save_generations(&store, SlotId::Auto(1), 3);
    for ((_, damage), path) in damages().into_iter().zip(&paths) {
        damage(path);
    }
    let before = snapshot_dir(store.dir());
    let error = store.load(SlotId::Auto(1)).unwrap_err();
    let StoreError::AllGenerationsDamaged { slot, failures } = &error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(*slot, SlotId::Auto(1));
    assert_eq!(
        failures.iter().map(|f| f.generation).collect::<Vec<_>>(),
        [3, 2, 1]
    );
    let message = error.to_string();
    for generation in 1..=3 {
        assert!(
            message.contains(&format!("generation {generation}: ")),
            "{message}"
        );
    }
    assert_eq!(before, snapshot_dir(store.dir()));
}

#[test]
fn an_empty_slot_and_an_unknown_slot_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    assert!(matches!(
        store.load(SlotId::Manual(0)),
        Err(StoreError::EmptySlot(SlotId::Manual(0)))
    ));
    let error = store
        .save(
            SlotId::Manual(10),
            SaveMeta::new(SlotId::Manual(10)),
            &fixtures::bundle(10, 1),
        )
        .unwrap_err();
    assert!(matches!(error, StoreError::NoSuchSlot { .. }));
    assert!(
        error.to_string().contains("10 manual and 5 autosave slots"),
        "{error}"
    );
}

#[test]
fn a_save_from_a_newer_format_is_neither_overwritten_nor_replaced_by_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let paths = save_generations(&store, SlotId::Manual(0), 2);
    claim_newer_version(&paths[1], FORMAT_VERSION + 1);
    let before = snapshot_dir(store.dir());

    let load = store.load(SlotId::Manual(0)).unwrap_err();
    assert!(matches!(load, StoreError::NewerFormat { found, .. } if found == FORMAT_VERSION + 1));
    let save = store
        .save(
            SlotId::Manual(0),
            fixtures::meta(SlotId::Manual(0), 7),
            &fixtures::bundle(10, 7),
        )
        .unwrap_err();
    assert!(save.to_string().contains("update the game"), "{save}");
    assert_eq!(before, snapshot_dir(store.dir()));
}

/// Makes `path` a genuine save of format `version`: the version field set and the header
/// checksum recomputed, as a newer build writing that version would have left it.
fn claim_newer_version(path: &Path, version: u16) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[4..6].copy_from_slice(&version.to_le_bytes());
    std::fs::write(path, crc_fixup::with_valid_checksums(&bytes).unwrap()).unwrap();
}

#[test]
fn a_genuine_save_from_any_newer_format_is_refused_and_never_overwritten() {
    for version in [FORMAT_VERSION + 1, 9, 0x0101, u16::MAX] {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let paths = save_generations(&store, SlotId::Quick, 2);
        claim_newer_version(&paths[1], version);
        let before = snapshot_dir(store.dir());

        let load = store.load(SlotId::Quick).unwrap_err();
        assert!(
            matches!(load, StoreError::NewerFormat { found, supported: FORMAT_VERSION, .. } if found == version),
            "version {version}: {load}"
        );
        let save = store
            .save(
                SlotId::Quick,
                fixtures::meta(SlotId::Quick, 7),
                &fixtures::bundle(10, 7),
            )
            .unwrap_err();
        assert!(
            matches!(save, StoreError::NewerFormat { found, .. } if found == version),
            "version {version}: {save}"
        );
        assert!(save.to_string().contains("update the game"), "{save}");
        assert_eq!(before, snapshot_dir(store.dir()), "version {version}");
    }
}

/// The error a load reports for the newest generation once bit `bit` of its first 8 bytes is
/// flipped, as `src/format/mod.rs` documents: magic damage is "not a save file", the version written
/// turned into 0 is an unknown version, and every other flip (including those that claim a
/// newer version) fails the header checksum, which every format version keeps.
fn is_expected_flip_error(bit: usize, error: &StoreError) -> bool {
    let StoreError::Format { source, .. } = error else {
        return false;
    };
    match (bit / 8, source) {
        (0..4, FormatError::NotASaveFile { .. }) => true,
        // The flip that turns the version written (the low byte; an unsealed store writes the
        // chunked layout's version, not the newest version read) into 0.
        (4, FormatError::UnknownVersion { found: 0 }) => {
            u16::from(1u8 << (bit % 8)) == PayloadLayout::Chunked.format_version()
        }
        (4..8, FormatError::ChecksumMismatch { section, .. }) => *section == Section::Header,
        _ => false,
    }
}

#[test]
fn any_bit_flip_in_the_first_8_bytes_leaves_the_slot_loadable_from_its_backup_and_saveable() {
    for bit in 0..64 {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let slot = SlotId::Manual(1);
        let paths = save_generations(&store, slot, 2);
        let mut bytes = std::fs::read(&paths[1]).unwrap();
        bytes[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&paths[1], &bytes).unwrap();

        let loaded = store.load(slot).unwrap();
        assert_eq!(loaded.generation, 1, "bit {bit}");
        assert_eq!(loaded.bundle, fixtures::bundle(3_000, 0), "bit {bit}");
        assert_eq!(loaded.skipped.len(), 1, "bit {bit}");
        let error = &loaded.skipped[0].error;
        assert!(is_expected_flip_error(bit, error), "bit {bit}: {error}");

        let listing = store.list().unwrap();
        let entry = listing.iter().find(|e| e.slot == slot).unwrap();
        assert!(
            matches!(&entry.status, SlotStatus::Damaged { newest_generation: 2, backup: Some(b), .. } if b.generation == 1),
            "bit {bit}: {entry:?}"
        );

        let receipt = store
            .save(slot, fixtures::meta(slot, 9), &fixtures::bundle(3_000, 9))
            .unwrap_or_else(|e| panic!("bit {bit}: {e}"));
        assert_eq!(receipt.generation, 3);
        let reloaded = store.load(slot).unwrap();
        assert_eq!(reloaded.generation, 3);
        assert_eq!(reloaded.bundle, fixtures::bundle(3_000, 9));
        assert_eq!(std::fs::read(&paths[1]).unwrap(), bytes, "bit {bit}");
    }
}

#[test]
fn a_folder_in_place_of_the_newest_generation_is_treated_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let slot = SlotId::Quick;
    let paths = save_generations(&store, slot, 2);
    let originals: Vec<_> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let folder = store.path_of(slot, 3);
    std::fs::create_dir(&folder).unwrap();

    let loaded = store.load(slot).unwrap();
    assert_eq!((loaded.generation, loaded.skipped[0].generation), (2, 3));
    assert!(matches!(
        &store.list().unwrap()[0].status,
        SlotStatus::Damaged { newest_generation: 3, backup: Some(b), .. } if b.generation == 2
    ));

    let receipt = store
        .save(slot, fixtures::meta(slot, 8), &fixtures::bundle(3_000, 8))
        .unwrap();
    assert_eq!(receipt.generation, 4);
    let loaded = store.load(slot).unwrap();
    assert_eq!(loaded.generation, 4);
    assert_eq!(loaded.bundle, fixtures::bundle(3_000, 8));
    assert!(!loaded.restored_from_backup());
    assert!(matches!(
        &store.list().unwrap()[0].status,
        SlotStatus::Saved(saved) if saved.generation == 4 && saved.generations == 4
    ));
    for (path, original) in paths.iter().zip(&originals) {
        assert_eq!(&std::fs::read(path).unwrap(), original);
    }

    // Once the folder is the oldest generation to prune, removing it fails: the save still
    // completes and says so.
    let receipts: Vec<_> = (0..3)
        .map(|seq| {
            store
                .save(slot, fixtures::meta(slot, seq), &fixtures::bundle(10, seq))
                .unwrap()
        })
        .collect();
    let last = receipts.last().unwrap();
    assert!(
        matches!(&last.prune_error, Some(StoreError::Io { path, .. }) if *path == folder),
        "{:?}",
        last.prune_error
    );
    assert!(folder.is_dir());
    assert_eq!(store.load(slot).unwrap().generation, 7);
}

#[test]
fn a_newest_generation_without_read_permission_is_treated_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let fs = TestFs::new();
    let store = SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs.clone())).unwrap();
    let slot = SlotId::Auto(2);
    let paths = save_generations(&store, slot, 2);
    fs.deny_read(&paths[1]);
    let before = snapshot_dir(store.dir());

    let loaded = store.load(slot).unwrap();
    assert_eq!(loaded.generation, 1);
    let error = &loaded.skipped[0].error;
    assert!(
        matches!(error, StoreError::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied),
        "{error}"
    );
    let listing = store.list().unwrap();
    let status = |listing: &[keepsake_core::store::SlotEntry]| {
        listing
            .iter()
            .find(|e| e.slot == slot)
            .unwrap()
            .status
            .clone()
    };
    assert!(matches!(
        status(&listing),
        SlotStatus::Damaged { newest_generation: 2, backup: Some(b), reason } if b.generation == 1 && reason.contains("could not open")
    ));

    let receipt = store
        .save(slot, fixtures::meta(slot, 5), &fixtures::bundle(3_000, 5))
        .unwrap();
    assert_eq!(receipt.generation, 3);
    let loaded = store.load(slot).unwrap();
    assert_eq!((loaded.generation, loaded.skipped.len()), (3, 0));
    assert_eq!(loaded.bundle, fixtures::bundle(3_000, 5));
    assert!(matches!(
        status(&store.list().unwrap()),
        SlotStatus::Saved(saved) if saved.generation == 3 && saved.generations == 3
    ));
    // Every file as it was, but the slot's record of the saves that entered it, which names
    // the new one.
    let after = snapshot_dir(store.dir());
    for file in before
        .iter()
        .filter(|(name, _)| !name.ends_with(".entered"))
    {
        assert!(after.contains(file), "{} changed", file.0);
    }
}

#[test]
fn a_file_at_the_largest_generation_refuses_the_next_save_and_stays_loadable() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let slot = SlotId::Manual(8);
    let paths = save_generations(&store, slot, 2);
    let top = store.path_of(slot, u64::MAX);
    std::fs::rename(&paths[1], &top).unwrap();
    let before = snapshot_dir(store.dir());

    let error = store
        .save(slot, fixtures::meta(slot, 4), &fixtures::bundle(3_000, 4))
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::GenerationsExhausted { slot: s, path } if *s == slot && *path == top),
        "{error}"
    );
    let message = error.to_string();
    let file_name = top.file_name().unwrap().to_str().unwrap();
    for part in [
        "Manual 9",
        file_name,
        "rename that file",
        "nothing was written",
    ] {
        assert!(message.contains(part), "{part:?} missing from {message}");
    }
    assert_eq!(before, snapshot_dir(store.dir()));

    let loaded = store.load(slot).unwrap();
    assert_eq!(loaded.generation, u64::MAX);
    assert_eq!(loaded.bundle, fixtures::bundle(3_000, 1));
    assert!(matches!(
        &store.list().unwrap()[0].status,
        SlotStatus::Saved(saved) if saved.generation == u64::MAX
    ));
}

#[test]
fn twelve_autosaves_leave_the_five_most_recent_listed_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let mut slots_used = Vec::new();
    for seq in 0..12 {
        let receipt = store
            .save_autosave(
                fixtures::meta(SlotId::Auto(0), seq),
                &fixtures::bundle(500, seq),
            )
            .unwrap();
        slots_used.push(receipt.slot);
    }
    let expected_ring: Vec<_> = (0..12).map(|i| SlotId::Auto(i % 5)).collect();
    assert_eq!(slots_used, expected_ring);

    let autosaves: Vec<_> = store
        .list()
        .unwrap()
        .into_iter()
        .filter(|entry| matches!(entry.slot, SlotId::Auto(_)))
        .collect();
    let titles: Vec<_> = autosaves
        .iter()
        .map(|entry| entry.shown_save().unwrap().meta.title.clone())
        .collect();
    let expected: Vec<_> = (7..12)
        .rev()
        .map(|seq| fixtures::meta(SlotId::Auto(0), seq).title)
        .collect();
    assert_eq!(titles, expected);
    for entry in &autosaves {
        let SlotStatus::Saved(saved) = &entry.status else {
            panic!()
        };
        assert_eq!(
            saved.meta.slot, entry.slot,
            "the store records the slot it wrote"
        );
    }
}

#[test]
fn the_listing_shows_saved_damaged_and_empty_slots() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let newest = fixtures::meta(SlotId::Manual(1), 5);
    store
        .save(SlotId::Manual(1), newest, &fixtures::bundle(100, 5))
        .unwrap();
    let damaged = save_generations(&store, SlotId::Manual(2), 2);
    let hopeless = save_generations(&store, SlotId::Manual(3), 1);
    let mut bytes = std::fs::read(&damaged[1]).unwrap();
    bytes[45] ^= 1; // inside the metadata
    std::fs::write(&damaged[1], bytes).unwrap();
    std::fs::write(&hopeless[0], b"garbage").unwrap();

    let listing = store.list().unwrap();
    assert_eq!(listing.len(), 16);
    let status = |slot| &listing.iter().find(|e| e.slot == slot).unwrap().status;
    assert!(matches!(status(SlotId::Manual(1)), SlotStatus::Saved(saved) if saved.generation == 1));
    match status(SlotId::Manual(2)) {
        SlotStatus::Damaged {
            newest_generation: 2,
            reason,
            backup: Some(backup),
        } => {
            assert!(
                reason.contains("checksum mismatch in the metadata"),
                "{reason}"
            );
            assert_eq!(backup.generation, 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        status(SlotId::Manual(3)),
        SlotStatus::Damaged { backup: None, .. }
    ));
    assert!(matches!(status(SlotId::Manual(0)), SlotStatus::Empty));
    // Saves first (newest first; Manual 2 shows its backup, seq 0), then the hopeless slot,
    // then the 13 empty slots.
    let order: Vec<_> = listing.iter().take(3).map(|e| e.slot).collect();
    assert_eq!(
        order,
        [SlotId::Manual(1), SlotId::Manual(2), SlotId::Manual(3)]
    );
    assert!(listing[3..].iter().all(|e| e.status == SlotStatus::Empty));
}

#[test]
fn listing_16_slots_reads_only_headers_whatever_the_save_size() {
    let mut read_per_size = Vec::new();
    for blob_len in [10_000, 5 << 20] {
        let dir = tempfile::tempdir().unwrap();
        let fs = TestFs::new();
        let store =
            SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs.clone())).unwrap();
        let bundle = fixtures::bundle(blob_len, 3);
        for slot in store.config().layout.slots() {
            store.save(slot, fixtures::meta(slot, 1), &bundle).unwrap();
        }
        fs.arm(None);
        let listing = store.list().unwrap();
        assert!(
            listing
                .iter()
                .all(|e| matches!(e.status, SlotStatus::Saved(_)))
        );
        let opened = fs
            .calls()
            .iter()
            .filter(|(op, _)| *op == Op::OpenRead)
            .count();
        assert_eq!(opened, 16);
        read_per_size.push(fs.bytes_read());
    }
    println!("listing 16 slots read {read_per_size:?} bytes for 10 KB vs 5 MB saves");
    assert_eq!(
        read_per_size[0], read_per_size[1],
        "listing cost must not depend on payload size"
    );
    assert!(read_per_size[1] < 16 * 1024);
}

#[test]
fn delete_removes_every_generation_and_copy_makes_a_new_save() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    save_generations(&store, SlotId::Manual(5), 3);

    let receipt = store.copy(SlotId::Manual(5), SlotId::Manual(6)).unwrap();
    let original = store.load(SlotId::Manual(5)).unwrap();
    let copy = store.load(SlotId::Manual(6)).unwrap();
    assert_eq!(receipt.slot, SlotId::Manual(6));
    assert_eq!(copy.bundle, original.bundle);
    assert_eq!(copy.meta.slot, SlotId::Manual(6));
    assert_eq!(copy.meta.title, original.meta.title);
    assert_ne!(copy.meta.save_id, original.meta.save_id);

    assert_eq!(store.delete(SlotId::Manual(5)).unwrap(), 3);
    assert!(store.generations(SlotId::Manual(5)).unwrap().is_empty());
    assert!(matches!(
        store.load(SlotId::Manual(5)),
        Err(StoreError::EmptySlot(_))
    ));
    assert!(
        store.load(SlotId::Manual(6)).is_ok(),
        "other slots are untouched"
    );
}

#[test]
fn thumbnails_are_read_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let png = b"\x89PNG\r\n\x1a\nthumbnail".to_vec();
    let meta = SaveMeta {
        thumbnail: Some(png.clone()),
        ..fixtures::meta(SlotId::Quick, 1)
    };
    let receipt = store
        .save(SlotId::Quick, meta, &fixtures::bundle(100, 1))
        .unwrap();
    assert_eq!(
        store
            .read_thumbnail(SlotId::Quick, receipt.generation)
            .unwrap(),
        Some(png)
    );
    let listing = store.list().unwrap();
    let SlotStatus::Saved(saved) = &listing[0].status else {
        panic!()
    };
    assert!(saved.has_thumbnail && saved.meta.thumbnail.is_none());
}

#[test]
fn profiles_are_separate_folders_and_unsafe_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let alice =
        SlotStore::open(StoreConfig::new(dir.path()).profile(ProfileName::new("alice").unwrap()))
            .unwrap();
    let bob =
        SlotStore::open(StoreConfig::new(dir.path()).profile(ProfileName::new("bob").unwrap()))
            .unwrap();
    save_generations(&alice, SlotId::Quick, 1);
    assert!(matches!(
        bob.load(SlotId::Quick),
        Err(StoreError::EmptySlot(_))
    ));
    assert_eq!(alice.dir(), dir.path().join("alice"));

    for name in [
        "..",
        "../bob",
        "/etc",
        "a/../../b",
        "C:\\Windows",
        "aux",
        "x\0y",
        "",
    ] {
        let error = ProfileName::new(name).unwrap_err();
        assert!(
            error.to_string().starts_with("invalid profile name"),
            "{error}"
        );
    }
    assert!(keepsake_core::store::default_save_root("../escape").is_err());
    let root = keepsake_core::store::default_save_root("my-game");
    if let Ok(root) = root {
        assert!(root.ends_with("my-game/saves"));
    }
}

#[test]
fn custom_layouts_change_the_slot_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        SlotStore::open(StoreConfig::new(dir.path()).layout(SlotLayout { manual: 2, auto: 3 }))
            .unwrap();
    assert_eq!(store.list().unwrap().len(), 6);
    assert!(
        store
            .save(
                SlotId::Manual(2),
                SaveMeta::new(SlotId::Manual(2)),
                &fixtures::bundle(1, 1)
            )
            .is_err()
    );
    for seq in 0..4 {
        store
            .save_autosave(
                fixtures::meta(SlotId::Auto(0), seq),
                &fixtures::bundle(1, seq),
            )
            .unwrap();
    }
    assert_eq!(store.generations(SlotId::Auto(0)).unwrap(), [2, 1]);
}

#[test]
fn a_missing_root_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("not/yet/there");
    let store = SlotStore::open(StoreConfig::new(&root)).unwrap();
    assert!(store.dir().is_dir());
    save_generations(&store, SlotId::Quick, 1);
    assert!(store.load(SlotId::Quick).is_ok());
}

#[test]
fn the_root_being_a_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let error = SlotStore::open(StoreConfig::new(&file)).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("could not create the save folder"),
        "{error}"
    );
}

#[test]
fn concurrent_saves_to_one_slot_never_tear_or_share_a_generation() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(StoreConfig::new(dir.path()).backups(100)).unwrap();
    let slot = SlotId::Manual(7);
    let receipts: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u64)
            .map(|thread| {
                let store = &store;
                scope.spawn(move || {
                    (0..10u64)
                        .map(|i| {
                            let seq = thread * 100 + i;
                            let receipt = store
                                .save(
                                    slot,
                                    fixtures::meta(slot, seq),
                                    &fixtures::bundle(40_000, seq),
                                )
                                .unwrap();
                            (receipt.generation, seq)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let mut generations: Vec<_> = receipts.iter().map(|(g, _)| *g).collect();
    generations.sort_unstable();
    assert_eq!(
        generations,
        (1..=40).collect::<Vec<_>>(),
        "each save got its own generation"
    );

    // Every generation holds exactly the save that was reported for it, complete.
    for (generation, seq) in receipts {
        let bytes = std::fs::read(store.path_of(slot, generation)).unwrap();
        let decoded = keepsake_core::format::decode(&bytes, &Default::default()).unwrap();
        assert_eq!(decoded.bundle, fixtures::bundle(40_000, seq));
    }
}

/// Issue 23, finding 4: an autosave slot the ring would pick but a save is refused in (headed
/// by a save from a newer format version, after a downgrade) is passed over, every time, for
/// the next slot; before, the ring picked it and every autosave failed.
#[test]
fn the_autosave_ring_passes_over_a_slot_it_cannot_save_in() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let jammed = save_generations(&store, SlotId::Auto(0), 1);
    claim_newer_version(&jammed[0], FORMAT_VERSION + 1);
    let mut used = Vec::new();
    for seq in 0..8 {
        let receipt = store
            .save_autosave(
                fixtures::meta(SlotId::Auto(0), 10 + seq),
                &fixtures::bundle(10, seq),
            )
            .unwrap();
        used.push(receipt.slot);
    }
    assert!(!used.contains(&SlotId::Auto(0)), "{used:?}");
    // The other four slots take turns.
    assert_eq!(&used[..4], &[1, 2, 3, 4].map(SlotId::Auto));
    assert_eq!(&used[4..], &[1, 2, 3, 4].map(SlotId::Auto));
}

/// Issue 23, finding 3: an autosave dated far past this device's clock (copied from a device
/// whose clock runs ahead) does not stay "the most recent" and freeze the ring on the slot
/// after it; before, every autosave went to that one slot.
#[test]
fn a_far_future_autosave_does_not_freeze_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let now = keepsake_core::format::Timestamp::now().unix_millis();
    for index in 0..5u16 {
        let slot = SlotId::Auto(index);
        let minutes_ago = i64::from(10 - index);
        let mut meta = fixtures::meta(slot, u64::from(index));
        meta.created_at = keepsake_core::format::Timestamp::from_unix_millis(match index {
            2 => now + 86_400_000,
            _ => now - minutes_ago * 60_000,
        });
        store.save(slot, meta, &fixtures::bundle(10, 1)).unwrap();
    }
    let mut used = Vec::new();
    for seq in 0..5 {
        let meta = SaveMeta::new(SlotId::Auto(0));
        let receipt = store
            .save_autosave(meta, &fixtures::bundle(10, seq))
            .unwrap();
        used.push(receipt.slot);
    }
    used.sort();
    assert_eq!(used, (0..5).map(SlotId::Auto).collect::<Vec<_>>());
}

/// Two devices saved one slot in the same millisecond: each imports the other's save, and both
/// end with the same head (before, the save that arrived second took the head on each device,
/// so the two devices disagreed for good).
#[test]
fn saves_of_one_millisecond_head_the_slot_the_same_way_on_every_device() {
    let slot = SlotId::Manual(0);
    let made_at = fixtures::meta(slot, 5).created_at;
    let save = |seq: u64| SaveMeta {
        created_at: made_at,
        ..fixtures::meta(slot, seq)
    };
    let (first, second) = (save(1), save(2));
    let file_of = |meta: &SaveMeta| {
        let options = keepsake_core::format::EncodeOptions::default();
        keepsake_core::format::encode(meta, &fixtures::bundle(2_000, 1), &options)
            .unwrap()
            .to_vec()
    };
    let mut heads = Vec::new();
    for (local, arriving) in [(&first, &second), (&second, &first)] {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        store
            .save(slot, local.clone(), &fixtures::bundle(2_000, 1))
            .unwrap();
        let bytes = file_of(arriving);
        store.import(store.decode_import(&bytes).unwrap()).unwrap();
        heads.push(store.load(slot).unwrap().meta.save_id);
    }
    assert_eq!(heads[0], heads[1]);
    assert_eq!(heads[0], first.save_id.max(second.save_id));
}

#[test]
fn a_delete_records_what_the_slot_held_before_removing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let slot = SlotId::Manual(0);
    save_generations(&store, slot, 3);
    let held: Vec<_> = store.saves_in(slot).unwrap();
    let held: std::collections::HashSet<_> = held.iter().map(|s| s.meta.save_id).collect();
    assert_eq!(held.len(), 3);
    assert!(store.deleted_saves().unwrap().is_empty());

    store.delete(slot).unwrap();
    assert!(store.saves_in(slot).unwrap().is_empty());
    assert_eq!(
        store.deleted_saves().unwrap(),
        held,
        "every save the slot held is recorded"
    );
    // Another delete of the emptied slot records nothing more; a new save's delete adds it.
    store.delete(slot).unwrap();
    save_generations(&store, SlotId::Quick, 1);
    let quick = store.saves_in(SlotId::Quick).unwrap()[0].meta.save_id;
    store.delete(SlotId::Quick).unwrap();
    let deleted = store.deleted_saves().unwrap();
    assert!(deleted.contains(&quick) && held.is_subset(&deleted));
}

/// Issue 49: a save the slot's saves were made in view of further back than their lists of
/// ids reach (pruned long ago here) counts as deleted with them, by the version vector the
/// record keeps; a save made on a line after the delete does not. Builds that read only the
/// ids still read the record.
#[test]
fn a_delete_records_the_version_vector_of_what_the_slot_held() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let slot = SlotId::Manual(0);
    let stamped = |seq: u64| fixtures::meta(slot, seq).with_device("aaaaaaaaaaaa", "desk");
    let save = |seq: u64| {
        let receipt = store.save(slot, stamped(seq), &fixtures::bundle(3_000, seq));
        receipt.unwrap().meta
    };
    let first = save(0);
    for seq in 1..=keepsake_core::format::MAX_FOLLOWS as u64 + 4 {
        save(seq);
    }
    // The slot's record of what entered it, which names every one, lost (or never written,
    // by a build before it): the vector alone.
    std::fs::remove_file(
        store
            .dir()
            .join(keepsake_core::store::entered_record_name(slot)),
    )
    .unwrap();
    store.delete(slot).unwrap();
    assert!(!store.deleted_saves().unwrap().contains(&first.save_id));
    assert!(store.is_deleted(&first).unwrap(), "the vector covers it");

    // Another device's save made later, on a line the deleted saves never held a count of.
    let other = SaveMeta::new(slot).with_device("bbbbbbbbbbbb", "laptop");
    let other = other.with_follows([]).with_versions("e2", []);
    assert!(!store.is_deleted(&other).unwrap());

    let record = StoreConfig::new(dir.path())
        .profile_dir()
        .join("manual-00.deleted");
    let text = std::fs::read_to_string(&record).unwrap();
    let (ids, vector): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| !l.starts_with('@'));
    assert!(
        text.lines().take(ids.len()).all(|l| !l.starts_with('@')),
        "ids first: {text}"
    );
    assert!(!vector.is_empty(), "{text}");
    // A record an earlier build wrote (ids only) is read as ever.
    std::fs::write(&record, format!("{}\n", first.save_id.simple())).unwrap();
    assert!(store.is_deleted(&first).unwrap());
    assert_eq!(store.deleted_saves().unwrap(), [first.save_id].into());
}

#[test]
fn a_delete_that_cannot_record_what_it_deletes_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let slot = SlotId::Manual(0);
    save_generations(&store, slot, 2);
    let profile = StoreConfig::new(dir.path()).profile_dir();
    // A folder where the slot's record goes: the record cannot be replaced.
    std::fs::create_dir(profile.join("manual-00.deleted")).unwrap();
    let saves = |profile: &Path| {
        let mut files: Vec<(PathBuf, Vec<u8>)> = (std::fs::read_dir(profile).unwrap())
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "ksav"))
            .map(|path| (path.clone(), std::fs::read(&path).unwrap()))
            .collect();
        files.sort();
        files
    };
    let before = saves(&profile);
    let error = store.delete(slot).unwrap_err();
    assert!(error.to_string().contains("manual-00.deleted"), "{error}");
    assert_eq!(saves(&profile), before, "nothing removed");
    assert_eq!(store.saves_in(slot).unwrap().len(), 2);
}
