//! Issue 49: odd entries under every name the store reads or writes never jam a save or a load
//! (each is passed over or refused with a typed error naming it), and a save from a newer
//! format version is never pruned, wherever it lies in its slot.

use super::fs::{FileSystem, OsFileSystem};
use super::layout::{SlotLayout, lock_file_name, temp_file_name};
use super::testing::Forward;
use super::{SlotStore, StoreConfig, StoreError};
use crate::format::{FORMAT_VERSION, SaveBundle, SaveMeta, WorldState};
use crate::slot::SlotId;
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use uuid::Uuid;

fn bundle(tick: u64) -> SaveBundle {
    SaveBundle::new(WorldState {
        tick,
        ..Default::default()
    })
}

fn save(store: &SlotStore, slot: SlotId, tick: u64) -> Result<PathBuf, StoreError> {
    let meta = SaveMeta::new(slot).with_title(format!("tick {tick}"));
    store.save(slot, meta, &bundle(tick)).map(|r| r.path)
}

fn config(dir: &Path, backups: u16) -> StoreConfig {
    StoreConfig::new(dir)
        .backups(backups)
        .layout(SlotLayout { manual: 2, auto: 3 })
}

/// Every file of the profile folder and its bytes (folders and other entries by name only).
fn snapshot(dir: &Path) -> BTreeMap<OsString, Option<Vec<u8>>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let is_file = entry.file_type().unwrap().is_file();
            let bytes = is_file.then(|| std::fs::read(entry.path()).unwrap());
            (entry.file_name(), bytes)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Odd entries under the store's own names.

/// An entry that is not a usable regular file, as a player's disk, a backup tool or another
/// user can leave one under any name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Odd {
    Folder,
    Fifo,
    DanglingLink,
    /// A file this user may not open: made by [`refusing`], since the root user running the
    /// tests opens any file.
    Forbidden,
}

const ODD: [Odd; 4] = [Odd::Folder, Odd::Fifo, Odd::DanglingLink, Odd::Forbidden];

/// Puts `odd` at `path` (removing what was there); returns the filesystem a store must use so
/// that a forbidden file is refused.
fn place(odd: Odd, path: &Path) -> Arc<dyn FileSystem> {
    let _ = std::fs::remove_file(path);
    match odd {
        Odd::Folder => std::fs::create_dir(path).unwrap(),
        Odd::Fifo => {
            let status = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap();
            assert!(status.success());
        }
        Odd::DanglingLink => {
            std::os::unix::fs::symlink(path.with_extension("gone").join("nowhere"), path).unwrap()
        }
        Odd::Forbidden => std::fs::write(path, b"").unwrap(),
    }
    let refused = (odd == Odd::Forbidden).then(|| path.to_path_buf());
    Arc::new(refusing(
        refused.into_iter().collect(),
        io::ErrorKind::PermissionDenied,
    ))
}

/// The real filesystem, refusing to open or lock `paths` with the error of `kind`:
/// "permission denied", as for a file another user owns with no permission for this one, or
/// an I/O error that may pass.
fn refusing(paths: HashSet<PathBuf>, kind: io::ErrorKind) -> Forward {
    let paths = Arc::new(paths);
    let check = move |path: &Path| {
        if paths.contains(path) {
            return Err(io::Error::from(kind));
        }
        Ok(())
    };
    let (before_open, before_lock) = (check.clone(), check.clone());
    Forward::os()
        .on_open_read(move |fs, path| before_open(path).and_then(|()| fs.open_read(path)))
        .on_lock(move |fs, path| before_lock(path).and_then(|()| fs.lock(path)))
        .on_try_lock(move |fs, path| check(path).and_then(|()| fs.try_lock(path)))
}

#[track_caller]
fn assert_unusable(error: &StoreError, path: &Path, role: &str) {
    assert!(
        matches!(error, StoreError::UnusableEntry { path: named, .. } if named == path),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(role) && message.contains("move it out of the save folder"),
        "{message}"
    );
}

/// Issue 49, defect 2: with `auto-00.lock` a folder, `main` chose the empty `auto-00` for every
/// autosave and every one failed ("could not lock the slot … Is a directory").
#[test]
fn the_autosave_ring_passes_over_a_slot_whose_lock_is_an_odd_entry() {
    for odd in ODD {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 3);
        let lock = config.profile_dir().join(lock_file_name(SlotId::Auto(0)));
        std::fs::create_dir_all(config.profile_dir()).unwrap();
        let fs = place(odd, &lock);
        let store = SlotStore::open_with(config, fs).unwrap();
        let mut used = Vec::new();
        for tick in 0..4 {
            let meta = SaveMeta::new(SlotId::Auto(0));
            let receipt = store.save_autosave(meta, &bundle(tick));
            used.push(receipt.unwrap_or_else(|e| panic!("{odd:?}: {e}")).slot);
        }
        assert!(!used.contains(&SlotId::Auto(0)), "{odd:?}: {used:?}");
        assert!(used.contains(&SlotId::Auto(1)) && used.contains(&SlotId::Auto(2)));

        let manual = save(&store, SlotId::Auto(0), 9).unwrap_err();
        assert_unusable(&manual, &lock, "the slot's lock file");
        assert!(store.generations(SlotId::Auto(0)).unwrap().is_empty());
        assert!(
            !lock.with_extension("gone").exists(),
            "nothing made through a link"
        );
    }
}

/// A slot whose lock file turned odd after it was saved still loads and lists; saves, deletes
/// and copies into it are refused with the error naming the lock file, writing nothing.
#[test]
fn an_odd_lock_file_refuses_writes_with_a_typed_error_and_never_stops_a_load() {
    for odd in ODD {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 3);
        let slot = SlotId::Manual(0);
        let lock = config.profile_dir().join(lock_file_name(slot));
        {
            let store = SlotStore::open(config.clone()).unwrap();
            save(&store, slot, 1).unwrap();
        }
        let fs = place(odd, &lock);
        let store = SlotStore::open_with(config, fs).unwrap();
        let before = snapshot(store.dir());
        assert_eq!(store.load(slot).unwrap().bundle.world.tick, 1, "{odd:?}");
        assert!(store.list().is_ok());
        assert_unusable(&save(&store, slot, 2).unwrap_err(), &lock, "lock file");
        assert_unusable(&store.delete(slot).unwrap_err(), &lock, "lock file");
        let copy = store.copy(slot, SlotId::Manual(0)).unwrap_err();
        assert_unusable(&copy, &lock, "lock file");
        assert_eq!(before, snapshot(store.dir()), "{odd:?}: nothing written");
        // Another slot saves as ever.
        save(&store, SlotId::Manual(1), 3).unwrap();
    }
}

/// A store under `root` with `odd` under the side file `name` of `manual-01`, and two saves of
/// that slot: the store, the side file's path and the saves' ids.
fn two_saves_beside(odd: Odd, name: &str, root: &Path) -> (SlotStore, PathBuf, HashSet<Uuid>) {
    let config = config(root, 3);
    let slot = SlotId::Manual(1);
    let record = config.profile_dir().join(name);
    std::fs::create_dir_all(config.profile_dir()).unwrap();
    let fs = place(odd, &record);
    let store = SlotStore::open_with(config, fs).unwrap();
    save(&store, slot, 1).unwrap();
    save(&store, slot, 2).unwrap();
    assert_eq!(store.load(slot).unwrap().bundle.world.tick, 2, "{odd:?}");
    let saves = store.saves_in(slot).unwrap();
    let held = saves.iter().map(|s| s.meta.save_id).collect();
    (store, record, held)
}

/// `<slot>.deleted`: a folder under the name refuses the slot's delete (typed, nothing
/// removed); any other odd entry is replaced by the new record. Saves and loads never notice.
#[test]
fn an_odd_record_of_deleted_saves_never_jams_a_save_load_or_delete() {
    for odd in ODD {
        let dir = tempfile::tempdir().unwrap();
        let (store, record, held) = two_saves_beside(odd, "manual-01.deleted", dir.path());
        let slot = SlotId::Manual(1);
        assert!(store.deleted_saves().unwrap().is_empty(), "{odd:?}");
        match (odd, store.delete(slot)) {
            (Odd::Folder, Err(error)) => {
                assert_unusable(&error, &record, "record of deleted saves");
                assert_eq!(store.generations(slot).unwrap().len(), 2, "nothing removed");
            }
            (Odd::Folder, Ok(_)) => panic!("a folder cannot be replaced by the record"),
            (_, deleted) => {
                assert_eq!(deleted.unwrap(), 2, "{odd:?}");
                // A forbidden record was replaced, but still cannot be read by this user.
                if odd != Odd::Forbidden {
                    assert!(held.is_subset(&store.deleted_saves().unwrap()), "{odd:?}");
                }
            }
        }
        save(&store, slot, 3).unwrap();
        assert_eq!(store.load(slot).unwrap().bundle.world.tick, 3, "{odd:?}");
    }
}

/// `<slot>.choosing` and `<slot>.deleting`, the notes of a choice and of a delete in flight
/// (review 64 H7, review 63b G2): under any odd entry there, the store opens, a choice names
/// the save it passes over, and a delete and a save go on.
#[test]
fn odd_entries_under_the_notes_of_writes_in_flight_never_jam_a_choice_or_a_delete() {
    for name in ["manual-01.choosing", "manual-01.deleting"] {
        for odd in ODD {
            let dir = tempfile::tempdir().unwrap();
            let (store, _, _) = two_saves_beside(odd, name, dir.path());
            let slot = SlotId::Manual(1);
            let saves = store.saves_in(slot).unwrap();
            let (head, older) = (&saves[0], &saves[1]);
            let chosen = store.promote(slot, older.generation, Some(&head.meta));
            chosen.unwrap_or_else(|error| panic!("{name}, {odd:?}: {error}"));
            assert_eq!(
                store.load(slot).unwrap().bundle.world.tick,
                1,
                "{name}, {odd:?}"
            );
            assert!(store.is_deleted(&head.meta).unwrap(), "{name}, {odd:?}");
            assert_eq!(store.delete(slot).unwrap(), 2, "{name}, {odd:?}");
            save(&store, slot, 3).unwrap();
            assert_eq!(
                store.load(slot).unwrap().bundle.world.tick,
                3,
                "{name}, {odd:?}"
            );
        }
    }
}

/// A record of deleted saves that cannot be read now (an I/O error that may pass) refuses the
/// delete, removing nothing and keeping the record: replacing it would forget the saves it
/// names, and sync would bring them back.
#[test]
fn a_record_of_deleted_saves_that_fails_to_read_for_now_refuses_the_delete() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 3);
    let slot = SlotId::Manual(1);
    let record = config.profile_dir().join("manual-01.deleted");
    let plain = SlotStore::open(config.clone()).unwrap();
    save(&plain, slot, 1).unwrap();
    plain.delete(slot).unwrap();
    let recorded = std::fs::read(&record).unwrap();
    save(&plain, slot, 2).unwrap();
    let failing = Arc::new(refusing([record.clone()].into(), io::ErrorKind::Other));
    let store = SlotStore::open_with(config, failing).unwrap();
    let error = store.delete(slot).unwrap_err();
    assert!(error.may_pass(), "{error}");
    assert_eq!(store.generations(slot).unwrap().len(), 1, "nothing removed");
    assert_eq!(
        std::fs::read(&record).unwrap(),
        recorded,
        "the record is as it was"
    );
}

/// `<slot>.entered`: any odd entry under the name counts as an empty record, and saves, loads,
/// imports and deletes go on (the delete names what it reads, as before the record existed);
/// the next save replaces it where it can (a folder stays). An import whose entry cannot be
/// written fails, except over such an entry: it would never be placed.
#[test]
fn an_odd_record_of_the_saves_that_entered_a_slot_never_jams_a_save_load_import_or_delete() {
    let other = tempfile::tempdir().unwrap();
    let laptop = SlotStore::open(config(other.path(), 3)).unwrap();
    let slot = SlotId::Manual(1);
    let meta = SaveMeta::new(slot).with_device("laptop", "laptop");
    laptop.save(slot, meta, &bundle(9)).unwrap();
    let arriving = laptop.read_generation_bytes(slot, 1).unwrap();
    for odd in ODD {
        let dir = tempfile::tempdir().unwrap();
        let (store, _record, mut held) = two_saves_beside(odd, "manual-01.entered", dir.path());
        let outcome = store.import(store.decode_import(&arriving).unwrap());
        let Ok(super::ImportOutcome::Placed(placed)) = outcome else {
            panic!("{odd:?}: {outcome:?}");
        };
        held.insert(placed.meta.save_id);
        assert_eq!(store.delete(slot).unwrap(), 3, "{odd:?}");
        assert!(held.is_subset(&store.deleted_saves().unwrap()), "{odd:?}");
        save(&store, slot, 3).unwrap();
        assert_eq!(store.load(slot).unwrap().bundle.world.tick, 3, "{odd:?}");
    }
}

/// A record of the saves that entered a slot that cannot be read now (an I/O error that may
/// pass) refuses a delete over a file that does not read, removing nothing (the record may
/// name that file's save), and a save leaves it as it was (rewritten, it would forget what it
/// holds) and goes on.
#[test]
fn a_record_of_entered_saves_that_fails_to_read_for_now_refuses_the_delete() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 3);
    let slot = SlotId::Manual(1);
    let record = config.profile_dir().join("manual-01.entered");
    let plain = SlotStore::open(config.clone()).unwrap();
    let first = save(&plain, slot, 1).unwrap();
    std::fs::write(first, b"damaged").unwrap();
    let recorded = std::fs::read(&record).unwrap();
    let failing = Arc::new(refusing([record.clone()].into(), io::ErrorKind::Other));
    let store = SlotStore::open_with(config, failing).unwrap();
    save(&store, slot, 2).unwrap();
    let error = store.delete(slot).unwrap_err();
    assert!(error.may_pass(), "{error}");
    assert_eq!(store.generations(slot).unwrap().len(), 2, "nothing removed");
    assert_eq!(
        std::fs::read(&record).unwrap(),
        recorded,
        "the record is as it was"
    );
}

/// Entries under temporary names (an interrupted save's) neither stop
/// the store from opening nor a save from being written.
#[test]
fn odd_entries_under_temporary_names_never_jam_an_open_or_a_save() {
    for odd in ODD {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), 3);
        let profile = config.profile_dir();
        std::fs::create_dir_all(&profile).unwrap();
        // A name of this process's (as a sandbox that always gives the game one process id
        // makes it), which the cleanup at open cannot remove when it is a folder. Passing
        // over the names a write draws next is `durable.rs`'s test: other tests of this
        // binary draw names from the same counter meanwhile.
        let left = profile.join(temp_file_name("manual-00.g000001.ksav"));
        let fs = place(odd, &left);
        let store = SlotStore::open_with(config, fs).unwrap();
        save(&store, SlotId::Manual(0), 1).unwrap_or_else(|e| panic!("{odd:?}: {e}"));
        assert_eq!(store.load(SlotId::Manual(0)).unwrap().bundle.world.tick, 1);
    }
}

/// A slot's lock kept by another holder (a stuck process, a second copy of the game) makes a
/// save fail with `SlotBusy` after the configured wait, never hang, and changes nothing; a
/// load still reads the slot; once the lock is let go, saves work again.
#[test]
fn a_lock_another_holder_keeps_fails_a_save_in_time_and_never_blocks_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 3).lock_wait(std::time::Duration::from_millis(20));
    let store = SlotStore::open(config).unwrap();
    let slot = SlotId::Manual(0);
    save(&store, slot, 1).unwrap();
    let lock = store.dir().join(lock_file_name(slot));
    // Another open file description, as another process has: the lock excludes it.
    let held = OsFileSystem.lock(&lock).unwrap();
    let before = snapshot(store.dir());
    let error = save(&store, slot, 2).unwrap_err();
    assert!(
        matches!(&error, StoreError::SlotBusy { path, .. } if *path == lock),
        "{error}"
    );
    assert!(
        error.to_string().contains("another copy of the game"),
        "{error}"
    );
    assert_eq!(snapshot(store.dir()), before, "nothing written or removed");
    assert_eq!(store.load(slot).unwrap().bundle.world.tick, 1);
    drop(held);
    save(&store, slot, 3).unwrap();
    assert_eq!(store.load(slot).unwrap().bundle.world.tick, 3);
}

// ---------------------------------------------------------------------------------------------
// Saves from a newer format version.

/// What one generation of a slot is, as an older build finds it after a newer one wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gen {
    /// A save this build wrote.
    Ours,
    /// A save in a newer format version, its header intact.
    Newer,
    /// A newer-format save with a bit flipped in its header: it reads as damage.
    NewerDamaged,
}

const GENS: [Gen; 3] = [Gen::Ours, Gen::Newer, Gen::NewerDamaged];

/// Every assignment of `GENS` to `len` generations, oldest first.
fn every_slot(len: usize) -> Vec<Vec<Gen>> {
    let mut slots = vec![Vec::new()];
    for _ in 0..len {
        slots = slots
            .into_iter()
            .flat_map(|slot| {
                GENS.iter().map(move |&g| {
                    let mut next = slot.clone();
                    next.push(g);
                    next
                })
            })
            .collect();
    }
    slots
}

/// Rewrites the save at `path` as `what`: a newer format version's header, with its checksum
/// recomputed (as a newer build writes it), then maybe one bit flipped.
fn make(path: &Path, what: Gen) {
    if what == Gen::Ours {
        return;
    }
    let mut bytes = std::fs::read(path).unwrap();
    bytes[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let crc = crc32fast::hash(&bytes[..36]);
    bytes[36..40].copy_from_slice(&crc.to_le_bytes());
    if what == Gen::NewerDamaged {
        bytes[9] ^= 0x10;
    }
    std::fs::write(path, bytes).unwrap();
}

/// A slot of `gens` (oldest first) in a profile under `dir`; the paths, oldest first.
fn slot_of(dir: &Path, slot: SlotId, gens: &[Gen]) -> Vec<PathBuf> {
    let writer = SlotStore::open(config(dir, u16::MAX)).unwrap();
    let paths: Vec<PathBuf> = (0..gens.len())
        .map(|tick| save(&writer, slot, tick as u64).unwrap())
        .collect();
    for (path, &what) in paths.iter().zip(gens) {
        make(path, what);
    }
    paths
}

/// The intact newer-format files among `paths` with their bytes.
fn newer_files(paths: &[PathBuf], gens: &[Gen]) -> Vec<(PathBuf, Vec<u8>)> {
    paths
        .iter()
        .zip(gens)
        .filter(|(_, g)| **g == Gen::Newer)
        .map(|(path, _)| (path.clone(), std::fs::read(path).unwrap()))
        .collect()
}

#[track_caller]
fn assert_kept(kept: &[(PathBuf, Vec<u8>)], case: &str) {
    for (path, bytes) in kept {
        let now = std::fs::read(path);
        assert!(
            now.as_ref().is_ok_and(|now| now == bytes),
            "{case}: the newer build's save {} was lost",
            path.display()
        );
    }
}

/// Issue 49, defect 3: an older build saving repeatedly into a slot with newer-format saves at
/// any position (g1..gN, any of them damaged in its header or not), with 0, 1 and 3 backups:
/// no intact newer-format save is ever deleted, and a slot holding one takes no save.
#[test]
fn an_older_build_never_loses_a_newer_format_save_wherever_it_lies() {
    let mut cases = 0;
    for backups in [0u16, 1, 3] {
        for len in 1..=usize::from(backups) + 2 {
            for gens in every_slot(len) {
                let case = format!("{backups} backups, {gens:?}");
                let dir = tempfile::tempdir().unwrap();
                let slot = SlotId::Manual(0);
                let paths = slot_of(dir.path(), slot, &gens);
                let kept = newer_files(&paths, &gens);
                let store = SlotStore::open(config(dir.path(), backups)).unwrap();
                let before = snapshot(store.dir());
                for tick in 100..100 + u64::from(backups) + 3 {
                    match save(&store, slot, tick) {
                        Err(StoreError::NewerFormat { found, .. }) if !kept.is_empty() => {
                            assert_eq!(found, FORMAT_VERSION + 1, "{case}");
                            assert_eq!(before, snapshot(store.dir()), "{case}");
                        }
                        Ok(_) if kept.is_empty() => {
                            assert_eq!(store.load(slot).unwrap().bundle.world.tick, tick);
                        }
                        other => panic!("{case}: save {tick}: {other:?}"),
                    }
                    assert_kept(&kept, &case);
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 12 + 39 + 363);
}

/// The autosave ring passes over a slot holding a newer-format save anywhere in it, and never
/// touches that slot's files.
#[test]
fn the_autosave_ring_passes_over_a_slot_holding_a_newer_format_save_anywhere() {
    for gens in every_slot(3) {
        let dir = tempfile::tempdir().unwrap();
        let paths = slot_of(dir.path(), SlotId::Auto(0), &gens);
        let kept = newer_files(&paths, &gens);
        let store = SlotStore::open(config(dir.path(), 1)).unwrap();
        for tick in 0..5 {
            let meta = SaveMeta::new(SlotId::Auto(0));
            let slot = store.save_autosave(meta, &bundle(tick)).unwrap().slot;
            assert!(kept.is_empty() || slot != SlotId::Auto(0), "{gens:?}");
        }
        assert_kept(&kept, &format!("{gens:?}"));
    }
}

/// The prune itself, under every save's feet: with newer-format saves at every position of
/// the generations below a new save, with 0, 1 and 3 backups, it removes no intact one (the
/// refusal above stops saves before they get there; this holds should one slip in, as through
/// another device's rename into the folder while the slot is locked).
#[test]
fn a_prune_never_removes_an_intact_newer_format_save() {
    for backups in [0u16, 1, 3] {
        for len in 1..=usize::from(backups) + 3 {
            for gens in every_slot(len) {
                let case = format!("{backups} backups, {gens:?}");
                let dir = tempfile::tempdir().unwrap();
                let slot = SlotId::Quick;
                let paths = slot_of(dir.path(), slot, &gens);
                let kept = newer_files(&paths, &gens);
                let store = SlotStore::open(config(dir.path(), backups)).unwrap();
                let older = store.generations(slot).unwrap();
                let (_, error) = store.prune(slot, &older, &HashSet::new());
                assert!(error.is_none(), "{case}: {error:?}");
                assert_kept(&kept, &case);
                // Otherwise the prune is the one it was: damaged files, damaged newer ones
                // included, count for nothing and go once the backups are found.
                let survivors: Vec<bool> = paths.iter().map(|path| path.exists()).collect();
                assert_eq!(survivors, expected_survivors(&gens, backups), "{case}");
            }
        }
    }
}

/// Which of `gens` (oldest first, all below a new save) a prune keeps: all while they are no
/// more than the backups; else, newest first, each until `backups` of ours (the intact ones)
/// are found, then only intact newer-format saves.
fn expected_survivors(gens: &[Gen], backups: u16) -> Vec<bool> {
    if gens.len() <= usize::from(backups) {
        return vec![true; gens.len()];
    }
    let mut intact = 0;
    let mut kept: Vec<bool> = gens
        .iter()
        .rev()
        .map(|&g| {
            if intact < backups {
                intact += u16::from(g == Gen::Ours);
                true
            } else {
                g == Gen::Newer
            }
        })
        .collect();
    kept.reverse();
    kept
}
