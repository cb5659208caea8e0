//! A store that seals its saves: a broken seal is handled like damage (the newest intact
//! generation loads), listings need no key, and unsealed files load only when the game says so.

use crate::common::{crc_fixup, fixtures};

use keepsake_core::SlotId;
use keepsake_core::format::{FormatError, SEALED_VERSION, SealKey, UnsealedSaves};
use keepsake_core::store::{SlotStatus, SlotStore, StoreConfig, StoreError};
use std::path::{Path, PathBuf};

const KEY: SealKey = SealKey::from_bytes([0x21; 32]);
const SLOT: SlotId = SlotId::Manual(1);

fn sealed_config(root: &Path) -> StoreConfig {
    StoreConfig::new(root).seal(KEY)
}

/// Saves `count` generations into [`SLOT`], the i-th with seed `i`; returns their paths.
fn save_generations(store: &SlotStore, count: u64) -> Vec<PathBuf> {
    (0..count)
        .map(|seq| {
            let meta = fixtures::meta(SLOT, seq);
            let receipt = store.save(SLOT, meta, &fixtures::bundle(5_000, seq));
            receipt.unwrap().path
        })
        .collect()
}

/// Changes the save's title by one letter and rewrites its CRCs, as a save editor would.
fn edit_title(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.windows(7).position(|w| w == b"Harbour").unwrap();
    bytes[at] = b'B';
    std::fs::write(path, crc_fixup::with_valid_checksums(&bytes).unwrap()).unwrap();
}

fn is_seal_broken(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Format {
            source: FormatError::SealBroken { .. },
            ..
        }
    )
}

#[test]
fn a_sealed_store_writes_version_3_and_lists_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(sealed_config(dir.path())).unwrap();
    let paths = save_generations(&store, 2);
    let bytes = std::fs::read(&paths[1]).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), SEALED_VERSION);
    assert_eq!(store.load(SLOT).unwrap().bundle, fixtures::bundle(5_000, 1));

    let keyless = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    let listed = keyless.list().unwrap();
    let entry = listed.iter().find(|entry| entry.slot == SLOT).unwrap();
    assert!(
        matches!(&entry.status, SlotStatus::Saved(saved) if saved.meta.title == "Harbour — level 1")
    );
    let error = keyless.load(SLOT).unwrap_err();
    assert!(error.to_string().contains("seal key"), "{error}");
}

#[test]
fn a_broken_seal_on_the_newest_generation_loads_the_newest_intact_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(sealed_config(dir.path())).unwrap();
    let paths = save_generations(&store, 3);
    edit_title(&paths[2]);

    let loaded = store.load(SLOT).unwrap();
    assert_eq!(loaded.generation, 2);
    assert_eq!(loaded.bundle, fixtures::bundle(5_000, 1));
    assert!(loaded.restored_from_backup());
    assert!(
        is_seal_broken(&loaded.skipped[0].error),
        "{:?}",
        loaded.skipped
    );

    // The next save supersedes the edited file, as it does a damaged one.
    let next = store.save(SLOT, fixtures::meta(SLOT, 3), &fixtures::bundle(5_000, 3));
    assert_eq!(next.unwrap().generation, 4);
    assert_eq!(store.load(SLOT).unwrap().generation, 4);
}

#[test]
fn without_backups_a_broken_seal_fails_the_load_and_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(sealed_config(dir.path()).backups(0)).unwrap();
    let paths = save_generations(&store, 2);
    assert_eq!(store.generations(SLOT).unwrap(), [2]);
    edit_title(&paths[1]);
    let edited = std::fs::read(&paths[1]).unwrap();

    let error = store.load(SLOT).unwrap_err();
    let StoreError::AllGenerationsDamaged { failures, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(failures.len(), 1);
    assert!(is_seal_broken(&failures[0].error), "{error}");
    assert!(error.to_string().contains("seal is broken"));
    assert_eq!(std::fs::read(&paths[1]).unwrap(), edited);
}

#[test]
fn a_save_sealed_with_another_key_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let other = SlotStore::open(StoreConfig::new(dir.path()).seal(KEY.bound_to(b"other"))).unwrap();
    save_generations(&other, 1);
    let store = SlotStore::open(sealed_config(dir.path())).unwrap();
    let error = store.load(SLOT).unwrap_err();
    let StoreError::AllGenerationsDamaged { failures, .. } = &error else {
        panic!("{error}");
    };
    assert!(is_seal_broken(&failures[0].error), "{error}");
}

#[test]
fn unsealed_saves_load_in_a_sealed_game_only_when_it_accepts_them() {
    let dir = tempfile::tempdir().unwrap();
    let before_sealing = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    save_generations(&before_sealing, 1);

    let refusing = SlotStore::open(sealed_config(dir.path())).unwrap();
    let error = refusing.load(SLOT).unwrap_err();
    let StoreError::AllGenerationsDamaged { failures, .. } = &error else {
        panic!("{error}");
    };
    assert!(matches!(
        failures[0].error,
        StoreError::Format {
            source: FormatError::UnsealedRefused,
            ..
        }
    ));

    let accepting = sealed_config(dir.path()).unsealed(UnsealedSaves::Accept);
    let accepting = SlotStore::open(accepting).unwrap();
    assert_eq!(
        accepting.load(SLOT).unwrap().bundle,
        fixtures::bundle(5_000, 0)
    );
    // The slot's next save is sealed: the refusing store loads it.
    let meta = fixtures::meta(SLOT, 1);
    accepting
        .save(SLOT, meta, &fixtures::bundle(5_000, 1))
        .unwrap();
    assert_eq!(refusing.load(SLOT).unwrap().generation, 2);
}

fn is_sealed_for(error: &StoreError, written_for: SlotId, loaded_as: SlotId) -> bool {
    let text = error.to_string();
    matches!(
        error,
        StoreError::SealedForAnotherSlot { written_for: w, loaded_as: l, .. }
            if *w == written_for && *l == loaded_as
    ) && text.contains(&written_for.to_string())
        && text.contains(&loaded_as.to_string())
}

/// A sealed save copied under another slot's file name, on top of that slot's saves: the load
/// refuses it, naming both slots, and falls back to the slot's own newest save, as for a
/// damaged file; the listing shows the slot as damaged with that save as its backup. Under the
/// default backups (3) and 0.
#[test]
fn a_sealed_save_copied_into_another_slot_is_refused_and_the_slot_loads_its_own() {
    let other = SlotId::Manual(2);
    for backups in [3, 0] {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(sealed_config(dir.path()).backups(backups)).unwrap();
        save_generations(&store, 2);
        let foreign = store
            .save(other, fixtures::meta(other, 7), &fixtures::bundle(5_000, 7))
            .unwrap()
            .path;
        let copy = store.path_of(SLOT, 3);
        std::fs::copy(&foreign, &copy).unwrap();

        let loaded = store.load(SLOT).unwrap();
        assert_eq!(loaded.generation, 2, "backups {backups}");
        assert_eq!(loaded.bundle, fixtures::bundle(5_000, 1));
        assert_eq!(loaded.skipped[0].generation, 3);
        let error = &loaded.skipped[0].error;
        assert!(is_sealed_for(error, other, SLOT), "{error}");

        let listed = store.list().unwrap();
        let entry = listed.iter().find(|entry| entry.slot == SLOT).unwrap();
        assert!(
            matches!(
                &entry.status,
                SlotStatus::Damaged { newest_generation: 3, backup: Some(b), .. } if b.generation == 2
            ),
            "{:?}",
            entry.status
        );
        // The slot it was made for still loads it.
        assert_eq!(
            store.load(other).unwrap().bundle,
            fixtures::bundle(5_000, 7)
        );
    }
}

/// Copied into an empty slot, the sealed save does not load there at all; an unsealed save
/// copied the same way still does (nothing authenticates its metadata, and copying files is how
/// players duplicate unsealed saves).
#[test]
fn a_sealed_copy_alone_in_a_slot_fails_its_load_while_an_unsealed_copy_loads() {
    let other = SlotId::Manual(2);
    for sealed in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let config = if sealed {
            sealed_config(dir.path())
        } else {
            StoreConfig::new(dir.path())
        };
        let store = SlotStore::open(config).unwrap();
        let foreign = store
            .save(other, fixtures::meta(other, 7), &fixtures::bundle(5_000, 7))
            .unwrap()
            .path;
        std::fs::copy(&foreign, store.path_of(SLOT, 1)).unwrap();

        let result = store.load(SLOT);
        if !sealed {
            assert_eq!(result.unwrap().meta.slot, other);
            continue;
        }
        let error = result.unwrap_err();
        let StoreError::AllGenerationsDamaged { failures, .. } = &error else {
            panic!("{error}");
        };
        assert!(is_sealed_for(&failures[0].error, other, SLOT), "{error}");
        assert!(error.to_string().contains("written for"), "{error}");
    }
}
