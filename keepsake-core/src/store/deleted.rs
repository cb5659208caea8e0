//! What the player deleted: as a delete removes a slot's files, the ids of the saves it
//! held (and of the saves those were made in view of) are added to the slot's record,
//! `<slot>.deleted` beside its saves, one id per line, newest last, the last
//! [`DELETED_KEPT`] kept; then the version vector of what it held (each line's highest count
//! among the saves' vectors, see [`Versions`]), one `@<line>:<count>` entry per line, the
//! line raised last at the end, the last [`DELETED_KEPT`] kept. Cloud sync never places a
//! save this record names, or one its vector holds (a save the deleted ones were made in view
//! of, however far back on its line), so a save the player deleted does not come back from
//! another device or the bucket: after a crash that kept the download but not the sync
//! state's note of it, when a file that does not read makes the slot look damaged, or once
//! the sync state file is lost, and with it the device id that told this device's own saves
//! in the cloud apart. Builds that read only the ids pass over the `@` entries.
//!
//! The record names the saves the player passed over too, by choosing another device's save
//! over them ([`SlotStore::note_passed_over`]): cloud sync shows them as a conflict no more,
//! nor places them again, once the sync state that also says so is lost.
//!
//! A delete never writes the record first and removes second, nor the other way round: cut
//! short between the two, the first left a save in the slot that the record named (the disk
//! destroying it later, sync refused its cloud copy as deleted: simulator seeds 310920,
//! 319869), and the second would leave a removed save unnamed. It renames each generation to
//! its *tomb* (`manual-03.g000007.tomb`) instead: one rename takes the save out of the slot
//! and names it deleted. The record is read with the slot's tombs beside it, and the delete's
//! last step writes the record with them and removes them; a tomb left (that step failed, the
//! process died) counts all the same, and the next write of the record takes it in. A tomb
//! whose save the slot still holds (a second copy of it, which an interrupted promotion
//! leaves) names nothing while that save is there: a delete cut short leaves what it did not
//! bury the player's, as before.
//!
//! Before it renames anything, a delete checks under the slot's lock that every generation
//! reads (or is damaged for good), that the record can be changed, and that no folder holds a
//! tomb's name: a delete refused then changes nothing.

use super::error::StoreError;
use super::fs::FOLDER;
use super::import::{Reading, StoredSave};
use super::layout::{parse_tomb_file, slot_stem, tomb_file_name};
use super::slot_store::SlotStore;
use crate::format::{SaveMeta, Versions};
use crate::slot::SlotId;
use std::collections::HashSet;
use uuid::Uuid;

/// How many deleted save ids a slot's record keeps (the newest), and how many lines of the
/// version vector of what was deleted (the ones raised last).
pub const DELETED_KEPT: usize = 256;

/// What a slot's record holds.
#[derive(Clone, Debug, Default)]
struct Record {
    /// The deleted saves' ids and those they were made in view of, oldest first.
    ids: Vec<Uuid>,
    /// The version vector of what was deleted: each line's highest count, the line raised
    /// last at the end.
    lines: Vec<(String, u64)>,
}

impl Record {
    /// Reads a record's text: ids, and `@` entries of the vector; anything else is passed
    /// over (a line a later build may write).
    fn parse(text: &str) -> Record {
        let mut record = Record::default();
        for line in text.lines() {
            if let Ok(id) = Uuid::try_parse(line) {
                record.ids.push(id);
            } else if let Some(versions) = Versions::parse(line) {
                let (line, count) = versions.own();
                record.raise(line, count);
            }
        }
        record
    }

    /// Adds the saves `held` (a slot about to be deleted): their ids and those they were made
    /// in view of, and their vectors.
    fn add(&mut self, held: &[StoredSave]) {
        for save in held {
            let follows = save.meta.follows().into_iter().flatten();
            self.ids
                .extend(std::iter::once(save.meta.save_id).chain(follows));
            if let Some(versions) = save.meta.versions() {
                versions
                    .entries()
                    .for_each(|(line, count)| self.raise(line, count));
            }
        }
    }

    /// Records `count` on `line`, unless the record holds a higher one there.
    fn raise(&mut self, line: &str, count: u64) {
        let held = self.lines.iter().position(|(seen, _)| seen == line);
        let highest = held.map_or(count, |at| self.lines.remove(at).1.max(count));
        self.lines.push((line.to_owned(), highest));
    }

    /// The record's text: the newest [`DELETED_KEPT`] ids (each once, at its newest place),
    /// then the [`DELETED_KEPT`] lines raised last.
    fn text(&self) -> String {
        let mut seen = HashSet::new();
        let newest_first = self.ids.iter().rev().filter(|id| seen.insert(**id));
        let mut ids: Vec<String> = newest_first
            .take(DELETED_KEPT)
            .map(|id| id.simple().to_string())
            .collect();
        ids.reverse();
        let kept = self.lines.len().saturating_sub(DELETED_KEPT);
        let lines = self.lines[kept..]
            .iter()
            .map(|(line, count)| format!("@{line}:{count}"));
        ids.into_iter()
            .chain(lines)
            .map(|line| line + "\n")
            .collect()
    }

    /// Whether the record names `meta`'s save, or its vector holds the save's own count.
    fn covers(&self, meta: &SaveMeta) -> bool {
        let by_vector = meta.versions().is_some_and(|versions| {
            let (line, count) = versions.own();
            (self.lines.iter()).any(|(seen, highest)| seen == line && *highest >= count)
        });
        by_vector || self.ids.contains(&meta.save_id)
    }
}

/// The name of a slot's record of deleted saves.
fn record_name(slot: SlotId) -> String {
    format!("{}.deleted", slot_stem(slot))
}

impl SlotStore {
    /// The saves the player deleted from any slot of this profile, as far as the slots' records
    /// and tombs go (see the module docs in `deleted.rs`). A record that does not read for
    /// good counts as empty; one that fails for a reason that may pass (an I/O error) fails
    /// the call, so that no caller takes a deleted save for one never deleted.
    pub fn deleted_saves(&self) -> Result<HashSet<Uuid>, StoreError> {
        let mut deleted = HashSet::new();
        for slot in self.config().layout.slots() {
            deleted.extend(self.read_record(slot)?.ids);
        }
        Ok(deleted)
    }

    /// Whether the player deleted `meta`'s save here, or a save made in view of it: its slot's
    /// record or a tomb names it, or the record holds its own count in the vector of what was
    /// deleted (see the module docs in `deleted.rs`). Cloud sync does not place such a save
    /// again, however it learns of it. Fails as [`deleted_saves`](Self::deleted_saves) does.
    pub fn is_deleted(&self, meta: &SaveMeta) -> Result<bool, StoreError> {
        Ok(self.read_record(meta.slot)?.covers(meta))
    }

    /// `slot`'s record with its tombs taken in, to check a save against. A record that does
    /// not read for good (missing, a folder, a FIFO, damaged bytes) holds nothing; a read that
    /// fails for a reason that may pass fails the call. The tombs are read first: a delete
    /// finishing meanwhile writes the record before it removes a tomb.
    fn read_record(&self, slot: SlotId) -> Result<Record, StoreError> {
        let tombs = self.tombs(slot)?;
        let mut record = match self.read_profile_file(&record_name(slot)) {
            Ok(Some(bytes)) => Record::parse(&String::from_utf8_lossy(&bytes)),
            Err(error) if error.may_pass() => return Err(error),
            Ok(None) | Err(_) => Record::default(),
        };
        record.add(&tombs);
        Ok(record)
    }

    /// `slot`'s record, for a change about to replace it: as [`read_record`](Self::read_record)
    /// reads it, but a folder under its name is refused ([`StoreError::UnusableEntry`]) before
    /// anything is written or removed: the record is replaced by a rename, which no folder
    /// gives way to. Any other entry there (a FIFO, a link, a file that does not read for
    /// good) is replaced: whatever ids it held cannot be read anyway. A read that fails for a
    /// reason that may pass refuses the change: replacing the record then would forget the
    /// ids it holds, and sync would bring those deleted saves back.
    fn record_to_change(&self, slot: SlotId) -> Result<Record, StoreError> {
        let role = "the slot's record of deleted saves";
        self.refuse_folder(slot, &record_name(slot), role)?;
        self.read_record(slot)
    }

    /// Refuses ([`StoreError::UnusableEntry`]) a folder under `name`, which a rename cannot
    /// replace: found before anything is written or removed.
    fn refuse_folder(
        &self,
        slot: SlotId,
        name: &str,
        role: &'static str,
    ) -> Result<(), StoreError> {
        let path = self.dir.join(name);
        match self.fs.open_read(&path).map_err(StoreError::open(&path)) {
            Err(StoreError::NotAFile { what, path }) if what == FOLDER => {
                Err(StoreError::UnusableEntry {
                    slot,
                    path,
                    what,
                    role,
                })
            }
            _ => Ok(()),
        }
    }

    /// The saves `slot`'s tombs name (generations a delete renamed, see the module docs). A
    /// tomb that does not read for good names nothing; one that fails for a reason that may
    /// pass fails the call. A tomb whose save the slot still holds (a second copy of it, which
    /// an interrupted promotion leaves, or a save made in view of it: a delete cut short
    /// buried the copy below) names nothing while that save is there.
    fn tombs(&self, slot: SlotId) -> Result<Vec<StoredSave>, StoreError> {
        let generations = self.tomb_generations(slot)?;
        if generations.is_empty() {
            return Ok(Vec::new());
        }
        let mut tombs = Vec::new();
        for generation in generations {
            let path = self.dir.join(tomb_file_name(slot, generation));
            match self.read_summary(&path) {
                Ok(summary) => tombs.push(StoredSave {
                    slot,
                    generation,
                    meta: summary.meta,
                }),
                Err(error) if error.may_pass() => return Err(error),
                Err(_) => {}
            }
        }
        let (left, _) = self.held_in_view(slot)?;
        tombs.retain(|tomb| !left.iter().any(|save| names(tomb, &save.meta)));
        Ok(tombs)
    }

    /// The generation numbers of `slot`'s tombs in the folder.
    fn tomb_generations(&self, slot: SlotId) -> Result<Vec<u64>, StoreError> {
        let names = self.list_folder()?;
        let tombs = names
            .iter()
            .filter_map(|name| name.to_str().and_then(parse_tomb_file));
        Ok(tombs
            .filter_map(|(of, generation)| (of == slot).then_some(generation))
            .collect())
    }

    /// Writes `slot`'s record, then removes the tombs it names now (best effort: a tomb left
    /// still counts).
    fn write_record(&self, slot: SlotId, record: &Record) -> Result<(), StoreError> {
        self.write_profile_file(&record_name(slot), record.text().as_bytes())?;
        for tomb in self.tombs(slot).unwrap_or_default() {
            if record.covers(&tomb.meta) {
                let path = self.dir.join(tomb_file_name(slot, tomb.generation));
                let _ = self.fs.remove_file(&path);
            }
        }
        Ok(())
    }

    /// Adds `passed_over` to `slot`'s record: saves the player passed over there by choosing
    /// another device's save (cloud sync's choice of a conflict's hidden save), settled for
    /// good like a deleted save though they stay loadable as the slot's older generations.
    /// Cloud sync keeps the same in its own state file; this record outlives that file.
    pub fn note_passed_over(
        &self,
        slot: SlotId,
        passed_over: impl IntoIterator<Item = Uuid>,
    ) -> Result<(), StoreError> {
        self.check_slot(slot)?;
        let _lock = self.lock(slot)?;
        let mut record = self.record_to_change(slot)?;
        record.ids.extend(passed_over);
        self.write_record(slot, &record)
    }

    /// Checks, under the slot's lock and before anything is removed, that a delete of
    /// `generations` can bury them all: every generation reads or is damaged for good (one that
    /// cannot be read for a reason that may pass would be buried unnamed until it reads, as it
    /// fails a save; simulator seed 315564), the record can be changed, and no folder holds a
    /// tomb's name.
    pub(super) fn check_delete(&self, slot: SlotId, generations: &[u64]) -> Result<(), StoreError> {
        self.metas_of(slot, generations.to_vec(), Reading::View)?;
        self.record_to_change(slot)?;
        let role = "a name a delete renames a save to";
        (generations.iter()).try_for_each(|&generation| {
            self.refuse_folder(slot, &tomb_file_name(slot, generation), role)
        })
    }

    /// Takes one generation out of the slot and names it deleted in one step: a rename to its
    /// tomb (see the module docs).
    pub(super) fn bury(&self, slot: SlotId, generation: u64) -> Result<(), StoreError> {
        let from = self.path_of(slot, generation);
        let to = self.dir.join(tomb_file_name(slot, generation));
        (self.fs.rename(&from, &to)).map_err(StoreError::io("delete", &from))
    }

    /// Takes the slot's tombs into its record and removes them (the last step of a delete,
    /// see the module docs). Best effort: a tomb left counts all the same.
    pub(super) fn fold_tombs(&self, slot: SlotId) {
        if let Ok(record) = self.record_to_change(slot) {
            let _ = self.write_record(slot, &record);
        }
    }
}

/// Whether a tomb's save names `meta`'s: the same save, or one made in view of it.
fn names(tomb: &StoredSave, meta: &SaveMeta) -> bool {
    let mut record = Record::default();
    record.add(std::slice::from_ref(tomb));
    record.covers(meta)
}

#[cfg(test)]
mod tests {
    use crate::format::{SaveBundle, SaveMeta, WorldState};
    use crate::slot::SlotId;
    use crate::store::{ImportOutcome, SlotStore, StoreConfig};

    fn save(store: &SlotStore, slot: SlotId, device: &str, tick: u64) -> SaveMeta {
        let meta = SaveMeta::new(slot).with_device(device, device);
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..Default::default()
        });
        store.save(slot, meta, &bundle).unwrap().meta
    }

    /// Issue 49 (simulator seed 77): a device lost its sync state, and with it its device id;
    /// its old saves in the cloud then looked like another device's. The player saved the
    /// slot many times more and deleted it: the record named the saves the slot held and the
    /// 16 each listed, not the old ones further back, and a sync round brought the oldest
    /// back into the deleted slot. The deleted saves' version vectors name the whole line.
    #[test]
    fn a_save_far_back_along_a_deleted_line_is_not_placed_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let slot = SlotId::Manual(2);
        save(&store, slot, "desk", 0);
        let first = store.read_generation_bytes(slot, 1).unwrap();
        for tick in 1..30 {
            save(&store, slot, "desk", tick);
        }
        store.delete(slot).unwrap();
        let old = store.decode_import(&first).unwrap();
        assert!(!store.deleted_saves().unwrap().contains(&old.meta().save_id));
        assert!(store.is_deleted(old.meta()).unwrap());
        let outcome = store.import(old).unwrap();
        assert_eq!(outcome, ImportOutcome::Deleted { slot });
        assert!(
            store.generations(slot).unwrap().is_empty(),
            "nothing placed"
        );

        // A save made apart from the deleted ones (another device's, never seen here) and
        // one made after the delete still arrive.
        let other = tempfile::tempdir().unwrap();
        let laptop = SlotStore::open(StoreConfig::new(other.path())).unwrap();
        save(&laptop, slot, "laptop", 1);
        let apart = laptop.read_generation_bytes(slot, 1).unwrap();
        let arrived = store.import(store.decode_import(&apart).unwrap()).unwrap();
        assert!(matches!(arrived, ImportOutcome::Placed(_)), "{arrived:?}");
        save(&store, slot, "desk", 40);
        assert_eq!(store.generations(slot).unwrap().len(), 2);
    }

    /// Simulator seed 300824: the slot's newest save did not read (a file the player may not
    /// open) when the player deleted the slot, so the record could not name it; the sync
    /// state was lost, and sync placed it again from the cloud. The record covers the count
    /// it would hold on the line of the newest save read; another device's save and this
    /// device's next save still arrive.
    #[test]
    #[ignore = "seed 300824 is open: its fix (a delete reserving the next count on the line of \
                the newest save it read, per unread generation above it) took other devices' \
                next saves for deleted in 11 of 3,000 long-run seeds; kept to reproduce it"]
    fn a_deleted_save_whose_file_did_not_read_is_not_placed_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let slot = SlotId::Manual(2);
        for tick in 0..3 {
            save(&store, slot, "desk", tick);
        }
        let newest = store.read_generation_bytes(slot, 3).unwrap();
        std::fs::write(store.path_of(slot, 3), b"not a save").unwrap();
        assert_eq!(
            store.saves_in(slot).unwrap().len(),
            2,
            "the newest does not read"
        );
        store.delete(slot).unwrap();

        let lost = store.decode_import(&newest).unwrap();
        assert!(store.is_deleted(lost.meta()).unwrap());
        let outcome = store.import(lost).unwrap();
        assert_eq!(outcome, ImportOutcome::Deleted { slot });

        let other = tempfile::tempdir().unwrap();
        let laptop = SlotStore::open(StoreConfig::new(other.path())).unwrap();
        save(&laptop, slot, "laptop", 1);
        let apart = laptop.read_generation_bytes(slot, 1).unwrap();
        let arrived = store.import(store.decode_import(&apart).unwrap()).unwrap();
        assert!(matches!(arrived, ImportOutcome::Placed(_)), "{arrived:?}");
        let next = save(&store, slot, "desk", 4);
        assert!(
            !store.is_deleted(&next).unwrap(),
            "a save made after the delete"
        );
    }

    /// Issue 49 (simulator seeds 101136, 101764): a delete that failed part way left the
    /// saves it could not remove named in the record, so a conflict between two of them was
    /// never shown again (the sync state that showed it was lost). What a failed delete leaves
    /// is the player's as before: the record names only what it removed.
    #[test]
    fn a_delete_that_fails_part_way_leaves_only_what_it_removed_in_the_record() {
        use crate::store::testing::Forward;
        use std::io;
        let dir = tempfile::tempdir().unwrap();
        let newest = dir.path().join("default/manual-03.g000003.ksav");
        let failing = newest.clone();
        let fs = Forward::os().on_rename(move |fs, from, to| {
            if from == failing {
                return Err(io::Error::other("EIO"));
            }
            fs.rename(from, to)
        });
        let config = StoreConfig::new(dir.path());
        let store = SlotStore::open_with(config, std::sync::Arc::new(fs)).unwrap();
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();
        assert!(newest.exists(), "the test names the newest file");

        store.delete(slot).unwrap_err();

        assert_eq!(
            store.generations(slot).unwrap(),
            [3],
            "only the newest is left"
        );
        let deleted = store.deleted_saves().unwrap();
        assert!(
            !deleted.contains(&metas[2].save_id),
            "the save left is not deleted"
        );
        assert!(!store.is_deleted(&metas[2]).unwrap());
        assert!(deleted.contains(&metas[0].save_id) && deleted.contains(&metas[1].save_id));
        assert!(store.is_deleted(&metas[0]).unwrap() && store.is_deleted(&metas[1]).unwrap());
    }

    /// A slot may hold two copies of one save (an interrupted promotion copies first and
    /// removes last). A failed delete that removed one copy must not name the save, whose
    /// other copy is left.
    #[test]
    fn a_delete_that_fails_after_removing_one_copy_of_a_save_leaves_it_undeleted() {
        use crate::store::testing::Forward;
        use std::io;
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("default");
        let failing = profile.join("manual-03.g000002.ksav");
        let fs = Forward::os().on_rename(move |fs, from, to| {
            if from == failing {
                return Err(io::Error::other("EIO"));
            }
            fs.rename(from, to)
        });
        let config = StoreConfig::new(dir.path());
        let store = SlotStore::open_with(config, std::sync::Arc::new(fs)).unwrap();
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();
        let copy = profile.join("manual-03.g000004.ksav");
        std::fs::copy(profile.join("manual-03.g000001.ksav"), &copy).unwrap();
        assert_eq!(store.generations(slot).unwrap(), [4, 3, 2, 1]);

        store.delete(slot).unwrap_err();

        assert_eq!(store.generations(slot).unwrap(), [4, 3, 2]);
        assert!(
            !store.is_deleted(&metas[0]).unwrap(),
            "its second copy is left"
        );
        assert!(!store.deleted_saves().unwrap().contains(&metas[0].save_id));
    }

    /// A store whose disk "dies" at the first touch of `manual-03`'s newest save
    /// (generation 3): that call and every rename after it fail, so nothing the delete writes
    /// after that point lands, as when the process dies there.
    fn dying_at_the_newest(dir: &std::path::Path) -> SlotStore {
        use crate::store::testing::Forward;
        use std::io;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let newest = dir.join("default/manual-03.g000003.ksav");
        let dead = Arc::new(AtomicBool::new(false));
        let (dead_too, newest_too) = (dead.clone(), newest.clone());
        let fs = Forward::os()
            .on_remove_file(move |fs, path| {
                if path == newest_too {
                    dead_too.store(true, Ordering::SeqCst);
                }
                match dead_too.load(Ordering::SeqCst) {
                    true => Err(io::Error::other("the process died")),
                    false => fs.remove_file(path),
                }
            })
            .on_rename(move |fs, from, to| {
                if from == newest {
                    dead.store(true, Ordering::SeqCst);
                }
                match dead.load(Ordering::SeqCst) {
                    true => Err(io::Error::other("the process died")),
                    false => fs.rename(from, to),
                }
            });
        SlotStore::open_with(StoreConfig::new(dir), Arc::new(fs)).unwrap()
    }

    /// Simulator seeds 310920, 319869: a delete wrote its record naming every save, then
    /// stopped before removing the newest (the process died; the fsync failed and so did the
    /// correction). The disk later destroyed that save, and sync refused its cloud copy as
    /// deleted: a confirmed save lost to a delete that never happened. The record never names
    /// the save on top while it is there.
    #[test]
    fn a_delete_cut_short_never_names_the_save_it_left_on_top() {
        let dir = tempfile::tempdir().unwrap();
        let store = dying_at_the_newest(dir.path());
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();
        let newest = store.read_generation_bytes(slot, 3).unwrap();

        store.delete(slot).unwrap_err();

        assert_eq!(store.generations(slot).unwrap(), [3], "the newest is left");
        assert!(
            !store.is_deleted(&metas[2]).unwrap(),
            "the save left on top"
        );
        assert!(store.is_deleted(&metas[0]).unwrap() && store.is_deleted(&metas[1]).unwrap());
        // After a restart, the disk destroys it; its cloud copy comes back.
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        std::fs::remove_file(store.path_of(slot, 3)).unwrap();
        let copy = store.decode_import(&newest).unwrap();
        let outcome = store.import(copy).unwrap();
        assert!(matches!(outcome, ImportOutcome::Placed(_)), "{outcome:?}");
    }

    /// A delete whose last step, writing the record, did not land (the process died, the disk
    /// failed): the newest save's tomb names it deleted all the same, and the next write of
    /// the record takes it in.
    #[test]
    fn a_tomb_names_the_newest_save_until_the_record_does() {
        use crate::store::testing::Forward;
        use std::io;
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("default/manual-03.deleted");
        let tomb = dir.path().join("default/manual-03.g000003.tomb");
        let tomb_too = tomb.clone();
        let fs = Forward::os().on_rename(move |fs, from, to| {
            if to == record && tomb_too.exists() {
                return Err(io::Error::other("the process died"));
            }
            fs.rename(from, to)
        });
        let config = StoreConfig::new(dir.path());
        let store = SlotStore::open_with(config.clone(), Arc::new(fs)).unwrap();
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();
        let newest = store.read_generation_bytes(slot, 3).unwrap();

        assert_eq!(store.delete(slot).unwrap(), 3, "the delete happened");

        assert!(tomb.exists() && store.generations(slot).unwrap().is_empty());
        assert!(metas.iter().all(|meta| store.is_deleted(meta).unwrap()));
        let copy = store.decode_import(&newest).unwrap();
        assert_eq!(store.import(copy).unwrap(), ImportOutcome::Deleted { slot });

        // A healthy start: the next write of the record takes the tomb in.
        let store = SlotStore::open(config).unwrap();
        store.note_passed_over(slot, []).unwrap();
        assert!(!tomb.exists(), "the record took the tomb in");
        assert!(store.deleted_saves().unwrap().contains(&metas[2].save_id));
        let copy = store.decode_import(&newest).unwrap();
        assert_eq!(store.import(copy).unwrap(), ImportOutcome::Deleted { slot });
    }

    /// Review of the tomb: a folder under a tomb's name made every delete of the slot fail
    /// at its last rename, after the backups were gone. It is refused before anything is
    /// renamed, naming the entry.
    #[test]
    fn a_folder_under_a_tomb_name_refuses_the_delete_before_anything_goes() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let slot = SlotId::Manual(3);
        for tick in 0..3 {
            save(&store, slot, "desk", tick);
        }
        let folder = dir.path().join("default/manual-03.g000003.tomb");
        std::fs::create_dir(&folder).unwrap();

        let error = store.delete(slot).unwrap_err();

        assert!(
            matches!(&error, crate::store::StoreError::UnusableEntry { path, .. } if *path == folder),
            "{error}"
        );
        assert_eq!(
            store.generations(slot).unwrap(),
            [3, 2, 1],
            "nothing removed"
        );
        assert!(store.deleted_saves().unwrap().is_empty());
    }

    /// Review of the tomb: the folder flush after the newest save's rename failed, and the
    /// delete wrote the record naming it; a power loss could then undo the rename and keep the
    /// record, naming a save left on top. After a failed flush the record is not written: the
    /// tomb names the save while its rename stands.
    #[test]
    fn a_failed_flush_after_the_last_rename_leaves_the_record_as_it_was() {
        use crate::store::testing::Forward;
        use std::io;
        let dir = tempfile::tempdir().unwrap();
        let tomb = dir.path().join("default/manual-03.g000003.tomb");
        let tomb_too = tomb.clone();
        let fs = Forward::os().on_sync_dir(move |fs, path| match tomb_too.exists() {
            true => Err(io::Error::other("EIO")),
            false => fs.sync_dir(path),
        });
        let store = SlotStore::open_with(StoreConfig::new(dir.path()), std::sync::Arc::new(fs));
        let store = store.unwrap();
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();

        store.delete(slot).unwrap_err();

        let record = store.read_profile_file("manual-03.deleted").unwrap();
        let record = String::from_utf8(record.unwrap_or_default()).unwrap();
        assert!(
            !record.contains(&metas[2].save_id.simple().to_string()),
            "{record}"
        );
        assert!(tomb.exists());
        assert!(store.is_deleted(&metas[2]).unwrap(), "the tomb names it");
    }
}
