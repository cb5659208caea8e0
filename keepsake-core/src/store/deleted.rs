//! What the player deleted: before a delete removes a slot's files, the ids of the saves it
//! held (and of the saves those were made in view of, and those they were made over that
//! entered the slot here: files that did not read then), and, when a file does not read, of
//! every save that entered the slot here with each line's count there (`entered.rs`), are added
//! to the slot's record, `<slot>.deleted` beside its saves, one id per line, newest last, the
//! last [`DELETED_KEPT`] kept; then the version vector of what it held (each line's highest
//! count among the saves' vectors, see [`Versions`]), one `@<line>:<count>` entry per line, the
//! line raised last at the end, the last [`DELETED_KEPT`] kept. Cloud sync never places a save
//! this record names, or one its vector holds (a save the deleted ones were made in view of,
//! however far back on its line), so a save the player deleted does not come back from another
//! device or the bucket: after a crash that kept the download but not the sync state's note of
//! it, when a file that does not read makes the slot look damaged, or once the sync state file
//! is lost, and with it the device id that told this device's own saves in the cloud apart.
//! Builds that read only the ids pass over the `@` entries.
//!
//! The record names the saves the player passed over too, by choosing another device's save
//! over them ([`SlotStore::promote`]), with what they were made in view of and
//! their own line's count: cloud sync shows them as a conflict no more, nor places them or
//! an older save of their line again, once the sync state that also says so is lost.
//!
//! The record is written durably (temporary file, fsync, rename, folder fsync) under the slot's
//! lock, before the first file is removed: a delete that cannot write it removes nothing. A
//! delete that fails later leaves in the record only what it removed: the saves still in the
//! slot are the player's as before. So does one the process dies in, once the store opens
//! again: a note written before the record says what the delete found (`deleting.rs`).

use super::error::StoreError;
use super::fs::FOLDER;
use super::id_record::IdRecord;
use super::import::StoredSave;
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::format::SaveMeta;
use crate::slot::SlotId;
use std::collections::HashSet;
use uuid::Uuid;

/// How many deleted save ids a slot's record keeps (the newest), and how many lines of the
/// version vector of what was deleted (the ones raised last).
pub const DELETED_KEPT: usize = 256;

/// What a slot's record holds: the deleted saves' ids and those they were made in view of,
/// and the version vector of what was deleted.
type Record = IdRecord;

impl IdRecord {
    /// Adds the saves `held` (a slot about to be deleted): their ids, those they were made in
    /// view of, those they were made over that `entered` names (saves that entered the slot
    /// here and whose files did not read then: the delete empties the slot of them too;
    /// simulator seed 542173) and, by the lines of what they were made over, the saves of
    /// those lines that entered the slot here as far as `entered` counts them (the saves of a
    /// long session past the 16 ids, review 63 F8), and their vectors. What they were made
    /// over elsewhere is left out: a save of another device this one never had still arrives
    /// after the delete.
    pub(super) fn add(&mut self, held: &[StoredSave], entered: &IdRecord) {
        for save in held {
            let follows = save.meta.follows().into_iter().flatten();
            let over = save
                .meta
                .over_unread()
                .filter(|id| entered.ids.contains(id));
            self.ids.extend(
                std::iter::once(save.meta.save_id)
                    .chain(follows)
                    .chain(over),
            );
            let over_lines = save.meta.over_lines();
            for (line, count) in over_lines.iter().flat_map(|lines| lines.entries()) {
                if let Some(entered) = entered.count(line) {
                    self.raise(line, count.min(entered));
                }
            }
            if let Some(versions) = save.meta.versions() {
                versions
                    .entries()
                    .for_each(|(line, count)| self.raise(line, count));
            }
        }
    }

    /// Adds a save the player passed over: its id, the ids it was made in view of, and its
    /// own line's count, not the rest of its vector (a count another build repeated on one of
    /// those lines would be refused for good, repairs included; review 61 F4).
    fn add_line_of(&mut self, meta: &SaveMeta) {
        let follows = meta.follows().into_iter().flatten();
        self.ids
            .extend(std::iter::once(meta.save_id).chain(follows));
        if let Some(versions) = meta.versions() {
            let (line, count) = versions.own();
            self.raise(line, count);
        }
    }

    /// What naming `save` adds to an empty record, as a delete that removed its file names
    /// it: not what it was made over (such a save's damaged file may be among those left).
    pub(super) fn of_removed(save: &StoredSave) -> IdRecord {
        let mut record = IdRecord::default();
        record.add(std::slice::from_ref(save), &IdRecord::default());
        record
    }

    /// This record without what would cover any of `held`: their ids left out, and each
    /// line's count kept below the lowest own count a held save has on it (a delete that left
    /// a save must not name it, nor, by its line, the older saves the slot still holds).
    pub(super) fn sparing(&self, held: &[StoredSave]) -> IdRecord {
        let is_held = |id: &Uuid| held.iter().any(|save| save.meta.save_id == *id);
        let lowest_held = |line: &str| {
            let counts = held.iter().filter_map(|save| save.meta.versions());
            let own = counts.filter_map(|v| (v.own().0 == line).then_some(v.own().1));
            own.min()
        };
        let mut spared = IdRecord {
            ids: self.ids.iter().copied().filter(|id| !is_held(id)).collect(),
            lines: Vec::new(),
        };
        for (line, count) in &self.lines {
            let below = lowest_held(line).map_or(*count, |held| (*count).min(held - 1));
            if below > 0 {
                spared.raise(line, below);
            }
        }
        spared
    }

    /// Whether the record names `meta`'s save, or its vector holds the save's own count.
    pub(super) fn covers(&self, meta: &SaveMeta) -> bool {
        let by_vector = meta.versions().is_some_and(|versions| {
            let (line, count) = versions.own();
            (self.lines.iter()).any(|(seen, highest)| seen == line && *highest >= count)
        });
        by_vector || self.ids.contains(&meta.save_id)
    }
}

/// The name of a slot's record of deleted saves.
pub(super) fn record_name(slot: SlotId) -> String {
    format!("{}.deleted", slot_stem(slot))
}

impl SlotStore {
    /// The saves the player deleted from any slot of this profile, as far as the slots' records
    /// go (see the module docs in `deleted.rs`). A record that does not read for good (missing,
    /// a folder, damaged bytes) counts as empty; one that fails for a reason that may pass (an
    /// I/O error) fails the call, so that no caller takes a deleted save for one never deleted.
    pub fn deleted_saves(&self) -> Result<HashSet<Uuid>, StoreError> {
        let mut deleted = HashSet::new();
        for slot in self.config().layout.slots() {
            deleted.extend(self.read_record(slot)?.ids);
        }
        Ok(deleted)
    }

    /// Whether the player deleted `meta`'s save here, or a save made in view of it: its slot's
    /// record names it, or holds its own count in the vector of what was deleted (see the
    /// module docs in `deleted.rs`). Cloud sync does not place such a save again, however it
    /// learns of it. Fails as [`deleted_saves`](Self::deleted_saves) does.
    pub fn is_deleted(&self, meta: &SaveMeta) -> Result<bool, StoreError> {
        Ok(self.read_record(meta.slot)?.covers(meta))
    }

    /// `slot`'s record, to check a save against: as [`record_of`](Self::record_of) reads it,
    /// but a folder under its name holds nothing (no record was written there).
    pub(super) fn read_record(&self, slot: SlotId) -> Result<Record, StoreError> {
        match self.record_of(slot) {
            Err(StoreError::UnusableEntry { .. }) => Ok(Record::default()),
            read => read,
        }
    }

    /// `slot`'s record, for a change about to replace it. A record that cannot be read counts
    /// as empty, except a folder under its name, which is refused
    /// ([`StoreError::UnusableEntry`]) before anything is written or removed: the record is
    /// replaced by a rename, which no folder gives way to. Any other entry there (a
    /// FIFO, a link, a file that does not read for good) is replaced: whatever ids it held
    /// cannot be read anyway. A read that fails for a reason that may pass refuses the delete.
    pub(super) fn record_of(&self, slot: SlotId) -> Result<Record, StoreError> {
        let name = record_name(slot);
        let bytes = match self.read_profile_file(&name) {
            Ok(Some(bytes)) => bytes,
            Err(StoreError::NotAFile { what, path }) if what == FOLDER => {
                return Err(StoreError::UnusableEntry {
                    slot,
                    path,
                    what,
                    role: "the slot's record of deleted saves",
                });
            }
            // A read that may pass (EIO, a lock held elsewhere) refuses the delete, removing
            // nothing: replacing the record now would forget the ids it holds, and sync would
            // bring those deleted saves back.
            Err(error) if error.may_pass() => return Err(error),
            Ok(None) | Err(_) => return Ok(Record::default()),
        };
        Ok(Record::parse(&String::from_utf8_lossy(&bytes)))
    }
}

impl IdRecord {
    /// The record with `passed_over` added: a save the player passed over by choosing
    /// another device's save (`chosen`: cloud sync's choice of a conflict's hidden save, see
    /// `choosing.rs`), settled for good like a deleted save though it stays loadable as the
    /// slot's older generation. What it was made in view of is settled with it (those ids,
    /// and its own line's count), as a delete settles what a deleted save was made over: an
    /// older save of the line the player turned down, arriving later, would otherwise head
    /// the slot over their choice (simulator seed 501703). Only its id, should that cover
    /// `chosen`. Cloud sync keeps the id in its own state file; this record outlives that file.
    pub(super) fn passing_over(&self, passed_over: &SaveMeta, chosen: &StoredSave) -> IdRecord {
        // A save chosen back is the player's again (review 64 H6): the record spares it, by
        // id and by line, as a delete that left a save does.
        let record = self.sparing(std::slice::from_ref(chosen));
        let mut with_lineage = record.clone();
        with_lineage.add_line_of(passed_over);
        if with_lineage.covers(&chosen.meta) {
            let mut record = record;
            record.ids.push(passed_over.save_id);
            return record;
        }
        with_lineage
    }
}

#[cfg(test)]
mod tests {
    use crate::format::{SaveBundle, SaveMeta, Timestamp, WorldState};
    use crate::slot::SlotId;
    use crate::store::{ImportOutcome, SlotStore, StoreConfig};

    fn save(store: &SlotStore, slot: SlotId, device: &str, tick: u64) -> SaveMeta {
        save_made_at(store, slot, device, tick, Timestamp::now())
    }

    /// As [`save`], dated `at` by its device's clock.
    fn save_made_at(
        store: &SlotStore,
        slot: SlotId,
        device: &str,
        tick: u64,
        at: Timestamp,
    ) -> SaveMeta {
        let mut meta = SaveMeta::new(slot).with_device(device, device);
        meta.created_at = at;
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..Default::default()
        });
        store.save(slot, meta, &bundle).unwrap().meta
    }

    /// Simulator seed 501703: the player chose their save over the laptop's newest (Y). An
    /// older save of the laptop's line (W, which Y was made over) arriving later is settled
    /// with Y: placed, it would head the slot over the player's choice. A save the laptop
    /// makes after Y still arrives.
    #[test]
    fn an_older_save_of_a_line_the_player_passed_over_is_not_placed_again() {
        let (desk_dir, laptop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let desk = SlotStore::open(StoreConfig::new(desk_dir.path())).unwrap();
        let laptop = SlotStore::open(StoreConfig::new(laptop_dir.path())).unwrap();
        let slot = SlotId::Manual(0);
        let chosen = save(&desk, slot, "desk", 1);
        let bytes_of = |generation| laptop.read_generation_bytes(slot, generation).unwrap();
        // A minute after the desk's by the clocks (two saves in one millisecond tie).
        let after = Timestamp::from_unix_millis(chosen.created_at.unix_millis() + 60_000);
        save_made_at(&laptop, slot, "laptop", 2, after);
        let older = bytes_of(1);
        save(&laptop, slot, "laptop", 3);
        let passed_over = desk
            .import(desk.decode_import(&bytes_of(2)).unwrap())
            .unwrap();
        assert!(
            matches!(passed_over, ImportOutcome::Placed(_)),
            "{passed_over:?}"
        );
        let held = desk.saves_in(slot).unwrap();
        assert_ne!(
            held[0].meta.save_id, chosen.save_id,
            "the laptop's save heads"
        );
        let mine = held
            .iter()
            .find(|s| s.meta.save_id == chosen.save_id)
            .unwrap();
        desk.promote(slot, mine.generation, Some(&held[0].meta))
            .unwrap();
        // Y's file is damaged here: no save held says W is older.
        let passed_over = desk.saves_in(slot).unwrap();
        let passed_over = passed_over
            .iter()
            .find(|s| s.meta.save_id == held[0].meta.save_id);
        std::fs::write(desk.path_of(slot, passed_over.unwrap().generation), b"rot").unwrap();

        let arrived = desk.import(desk.decode_import(&older).unwrap()).unwrap();
        assert_eq!(arrived, ImportOutcome::Deleted { slot });
        assert_eq!(desk.load(slot).unwrap().meta.save_id, chosen.save_id);
        save(&laptop, slot, "laptop", 4);
        let later = desk
            .import(desk.decode_import(&bytes_of(3)).unwrap())
            .unwrap();
        assert!(matches!(later, ImportOutcome::Placed(_)), "{later:?}");
    }

    /// Simulator seed 520967 and review 61b G1: the player chose their save C over the
    /// laptop's Y, and the disk damaged C's copy, so Y, passed over, is the head an import
    /// compares against. A phone's save that never entered the slot is ordered by the clocks
    /// as any other (older than Y, it goes below); C, placed again from the cloud, takes the
    /// head back whatever the clocks say.
    #[test]
    fn only_the_save_placed_again_takes_the_head_back_from_a_passed_over_one() {
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let open = |dir: &tempfile::TempDir| SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let (desk, laptop, phone) = (open(&dirs[0]), open(&dirs[1]), open(&dirs[2]));
        let slot = SlotId::Manual(0);
        let chosen = save(&desk, slot, "desk", 1);
        // A minute after the desk's by the clocks (two saves in one millisecond tie).
        let after = Timestamp::from_unix_millis(chosen.created_at.unix_millis() + 60_000);
        let laptops = save_made_at(&laptop, slot, "laptop", 3, after);
        // A minute before the laptop's by the clocks (two saves in one millisecond tie).
        let before = Timestamp::from_unix_millis(laptops.created_at.unix_millis() - 60_000);
        save_made_at(&phone, slot, "phone", 2, before);
        let import = |store: &SlotStore, bytes: &[u8]| match store
            .import(store.decode_import(bytes).unwrap())
            .unwrap()
        {
            ImportOutcome::Placed(receipt) => receipt,
            other => panic!("{other:?}"),
        };
        let passed_over = import(&desk, &laptop.read_generation_bytes(slot, 1).unwrap());
        assert!(passed_over.heads_slot);
        let held = desk.saves_in(slot).unwrap();
        let mine = held.iter().find(|s| s.meta.save_id == chosen.save_id);
        let top = desk
            .promote(slot, mine.unwrap().generation, Some(&held[0].meta))
            .unwrap();
        let chosen_bytes = desk.read_generation_bytes(slot, top).unwrap();
        std::fs::write(desk.path_of(slot, top), b"rot").unwrap();

        let stranger = import(&desk, &phone.read_generation_bytes(slot, 1).unwrap());
        assert!(!stranger.heads_slot, "older by the clocks than the head");
        let back = import(&desk, &chosen_bytes);
        assert!(back.heads_slot);
        assert_eq!(desk.load(slot).unwrap().meta.save_id, chosen.save_id);
    }

    /// A store in `dir` whose removal of the file `failing` fails (an I/O error), as a delete
    /// cut short by the disk meets it.
    fn store_failing_removal_of(dir: &std::path::Path, failing: std::path::PathBuf) -> SlotStore {
        use crate::store::testing::Forward;
        let fs = Forward::os().on_remove_file(move |fs, path| match path == failing {
            true => Err(std::io::Error::other("EIO")),
            false => fs.remove_file(path),
        });
        SlotStore::open_with(StoreConfig::new(dir), std::sync::Arc::new(fs)).unwrap()
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

    /// Simulator seeds 300824, 400541, 439224: the slot's newest save did not read (a file
    /// damaged past its metadata) when the player deleted the slot, so the delete could not
    /// name it from its file; the sync state was lost, and sync placed it again from the
    /// cloud. The slot's record of what entered it names it. Another device's save, never
    /// in the slot here, and this device's next save still arrive.
    #[test]
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

    /// A store in `dir` whose writes of a slot's record of what entered it fail (`error`) while
    /// the flag it returns is set.
    fn store_failing_entries(
        dir: &std::path::Path,
        error: fn() -> std::io::Error,
    ) -> (SlotStore, std::sync::Arc<std::sync::atomic::AtomicBool>) {
        use crate::store::testing::Forward;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let failing = Arc::new(AtomicBool::new(false));
        let fails = failing.clone();
        let fs = Forward::os().on_rename(move |fs, from, to| {
            let entry = to.extension().is_some_and(|ext| ext == "entered");
            match entry && fails.load(Ordering::SeqCst) {
                true => Err(error()),
                false => fs.rename(from, to),
            }
        });
        let store = SlotStore::open_with(StoreConfig::new(dir), Arc::new(fs)).unwrap();
        (store, failing)
    }

    /// A save of `slot` made by `device` on a store of its own: its metadata and file bytes.
    fn saved_elsewhere(slot: SlotId, device: &str, tick: u64) -> (SaveMeta, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let meta = save(&store, slot, device, tick);
        (meta, store.read_generation_bytes(slot, 1).unwrap())
    }

    /// Imports `bytes` into `store`, which must place it.
    fn import_placed(store: &SlotStore, bytes: &[u8]) -> crate::store::ImportReceipt {
        match store.import(store.decode_import(bytes).unwrap()).unwrap() {
            ImportOutcome::Placed(placed) => *placed,
            outcome => panic!("not placed: {outcome:?}"),
        }
    }

    /// The save in `bytes` counts as deleted in `slot` of `store`, and an import refuses it.
    fn assert_stays_deleted(store: &SlotStore, slot: SlotId, bytes: &[u8]) {
        let back = store.decode_import(bytes).unwrap();
        assert!(store.is_deleted(back.meta()).unwrap());
        assert_eq!(store.import(back).unwrap(), ImportOutcome::Deleted { slot });
    }

    /// Simulator seed 531876: a save's entry in the slot's record could not be written (a disk
    /// fault); the save's file later stopped reading, the player deleted the slot, and the
    /// delete, which names a file it cannot read only through the record, did not name it: the
    /// cloud brought it back. The next write of the record (here an import) names what the slot
    /// holds.
    #[test]
    fn a_save_whose_entry_failed_is_named_by_the_next_entry_and_stays_deleted() {
        use std::sync::atomic::Ordering;
        let dir = tempfile::tempdir().unwrap();
        let (store, failing) = store_failing_entries(dir.path(), || std::io::Error::other("EIO"));
        let slot = SlotId::Manual(2);
        failing.store(true, Ordering::SeqCst);
        let desk = save(&store, slot, "desk", 0);
        failing.store(false, Ordering::SeqCst);
        let unnamed = store.read_generation_bytes(slot, 1).unwrap();
        // The next entry: the laptop's save arrives.
        import_placed(&store, &saved_elsewhere(slot, "laptop", 1).1);

        let held = store.saves_in(slot).unwrap();
        let desk = held
            .iter()
            .find(|s| s.meta.save_id == desk.save_id)
            .unwrap();
        std::fs::write(store.path_of(slot, desk.generation), b"not a save").unwrap();
        store.delete(slot).unwrap();
        assert_stays_deleted(&store, slot, &unnamed);
    }

    /// Simulator seed 542173: the laptop's save arrived, its file here was damaged, the player
    /// saved over it (the slot's save then names it as a save it was made over, unread) and a
    /// later save pruned the damaged file. The player deleted the slot, every file of it
    /// reading: the delete named what the held saves were made in view of, not what they were
    /// made over, and the cloud brought the laptop's save back into the emptied slot.
    #[test]
    fn a_save_the_slot_held_unread_stays_deleted_once_its_file_is_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path()).backups(0)).unwrap();
        let slot = SlotId::Manual(2);
        let (_, arriving) = saved_elsewhere(slot, "laptop", 1);
        let placed = import_placed(&store, &arriving);
        std::fs::write(store.path_of(slot, placed.generation), b"not a save").unwrap();
        let over = save(&store, slot, "desk", 2);
        assert!(over.over_unread().any(|id| id == placed.meta.save_id));
        save(&store, slot, "desk", 3);
        let left = store.generations(slot).unwrap();
        assert_eq!(left.len(), 1, "the damaged file pruned");

        store.delete(slot).unwrap();
        assert_stays_deleted(&store, slot, &arriving);
    }

    /// Review 62: a save made over another device's unread save names it in
    /// `keepsake.over_unread`, and that list travels with it. A delete here names only what
    /// it lists of the saves that entered this slot: another device's save this one never had
    /// still arrives after the delete.
    #[test]
    fn a_delete_does_not_name_what_an_arrived_save_was_made_over_elsewhere() {
        let slot = SlotId::Manual(2);
        let [laptop, desk] = [(); 2].map(|()| tempfile::tempdir().unwrap());
        let [laptop, desk] =
            [&laptop, &desk].map(|dir| SlotStore::open(StoreConfig::new(dir.path())).unwrap());
        let (_, unread_there) = saved_elsewhere(slot, "phone", 1);
        import_placed(&laptop, &unread_there);
        std::fs::write(laptop.path_of(slot, 1), b"not a save").unwrap();
        let over = save(&laptop, slot, "laptop", 2);
        assert_eq!(over.over_unread().count(), 1);
        import_placed(&desk, &laptop.read_generation_bytes(slot, 2).unwrap());

        desk.delete(slot).unwrap();
        assert!(desk.is_deleted(&over).unwrap());
        let never_here = desk.decode_import(&unread_there).unwrap();
        assert!(!desk.is_deleted(never_here.meta()).unwrap());
        import_placed(&desk, &unread_there);
    }

    /// Simulator seed 564678: the laptop's newer save arrived (its older one, which it was made
    /// in view of, was not placed: superseded), its file here was then damaged, and the player
    /// deleted the slot. The delete named the damaged file's save through the slot's record of
    /// what entered it, not the older save of its line, and the cloud brought that one back.
    /// The record's line counts go into the record of deleted saves too.
    #[test]
    fn an_older_save_of_a_deleted_unread_saves_line_stays_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let slot = SlotId::Manual(2);
        let other = tempfile::tempdir().unwrap();
        let laptop = SlotStore::open(StoreConfig::new(other.path())).unwrap();
        save(&laptop, slot, "laptop", 1);
        save(&laptop, slot, "laptop", 2);
        let older = laptop.read_generation_bytes(slot, 1).unwrap();
        let placed = import_placed(&store, &laptop.read_generation_bytes(slot, 2).unwrap());
        std::fs::write(store.path_of(slot, placed.generation), b"not a save").unwrap();

        store.delete(slot).unwrap();
        assert_stays_deleted(&store, slot, &older);
    }

    /// Simulator seed 545099: an import's entry could not be written (the disk full), its file
    /// was later damaged past its metadata, and a delete before any later entry could not name
    /// it: the cloud brought it back. An import whose entry fails now takes its file out and
    /// fails; the next arrival places and names it.
    #[test]
    fn an_import_whose_entry_cannot_be_written_fails_and_leaves_the_slot_as_it_was() {
        use std::sync::atomic::Ordering;
        let dir = tempfile::tempdir().unwrap();
        let full = || std::io::Error::new(std::io::ErrorKind::StorageFull, "ENOSPC");
        let (store, failing) = store_failing_entries(dir.path(), full);
        let slot = SlotId::Manual(2);
        let (arriving, bytes) = saved_elsewhere(slot, "laptop", 1);

        failing.store(true, Ordering::SeqCst);
        store
            .import(store.decode_import(&bytes).unwrap())
            .unwrap_err();
        assert!(
            store.generations(slot).unwrap().is_empty(),
            "its file taken out"
        );

        failing.store(false, Ordering::SeqCst);
        let placed = import_placed(&store, &bytes);
        std::fs::write(store.path_of(slot, placed.generation), b"not a save").unwrap();
        store.delete(slot).unwrap();
        assert!(store.is_deleted(&arriving).unwrap());
    }

    /// Issue 49 (simulator seeds 101136, 101764): a delete that failed part way left the
    /// saves it could not remove named in the record, so a conflict between two of them was
    /// never shown again (the sync state that showed it was lost). What a failed delete leaves
    /// is the player's as before: the record names only what it removed.
    #[test]
    fn a_delete_that_fails_part_way_leaves_only_what_it_removed_in_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let newest = dir.path().join("default/manual-03.g000003.ksav");
        let store = store_failing_removal_of(dir.path(), newest.clone());
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
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("default");
        let store = store_failing_removal_of(dir.path(), profile.join("manual-03.g000002.ksav"));
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

    /// Review of this stop: a record of deleted saves that could not be read for now (an I/O
    /// error) counted as empty, so an import in that moment placed a save the player had
    /// deleted. The check fails instead, and the import with it (the round tries again).
    #[test]
    fn a_record_that_cannot_be_read_for_now_fails_the_import_of_a_deleted_save() {
        use crate::store::testing::Forward;
        use std::io;
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let slot = SlotId::Manual(2);
        save(&store, slot, "desk", 0);
        let deleted = store.read_generation_bytes(slot, 1).unwrap();
        store.delete(slot).unwrap();

        let record = dir.path().join("default/manual-02.deleted");
        let fs = Forward::os().on_open_read(move |fs, path| match path == record {
            true => Err(io::Error::other("EIO")),
            false => fs.open_read(path),
        });
        let store = SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs)).unwrap();
        let file = store.decode_import(&deleted).unwrap();
        assert!(store.is_deleted(file.meta()).is_err());
        assert!(store.deleted_saves().is_err());
        let outcome = store.import(file);
        assert!(outcome.is_err(), "{outcome:?}");
        assert!(
            store.generations(slot).unwrap().is_empty(),
            "nothing placed"
        );
    }

    /// Simulator seed 402040: the record's write put it in place and then failed to flush
    /// its folder, so the delete failed before it removed anything, with every save it held
    /// named in the record: sync then counted one of them deleted and never showed the
    /// conflict it was in again. A delete that removed nothing leaves the record as it was.
    #[test]
    fn a_delete_whose_record_did_not_flush_leaves_no_save_named() {
        use crate::store::testing::Forward;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let renamed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&renamed);
        let fs = Forward::os()
            .on_rename(move |fs, from, to| {
                fs.rename(from, to)?;
                let record = to.extension().is_some_and(|ext| ext == "deleted");
                flag.fetch_or(record, Ordering::SeqCst);
                Ok(())
            })
            .on_sync_dir(
                move |fs, path| match renamed.swap(false, Ordering::SeqCst) {
                    true => Err(std::io::Error::other("EIO")),
                    false => fs.sync_dir(path),
                },
            );
        let store = SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs)).unwrap();
        let slot = SlotId::Quick;
        let metas: Vec<SaveMeta> = (0..2)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();

        store.delete(slot).unwrap_err();

        assert_eq!(store.generations(slot).unwrap(), [2, 1], "nothing removed");
        assert!(store.deleted_saves().unwrap().is_empty());
        for meta in &metas {
            assert!(!store.is_deleted(meta).unwrap(), "{meta:?}");
        }
    }

    /// Simulator seed 336720: the slot's newest file was damaged, so a load returned the save
    /// below it, the player's confirmed save. A delete removed the older generations first
    /// (that save among them), then failed on the damaged one: the confirmed save was gone
    /// though the delete said it failed. The save a load returns is removed last.
    #[test]
    fn a_delete_that_fails_keeps_the_save_a_load_returns_below_a_damaged_newest() {
        let dir = tempfile::tempdir().unwrap();
        let damaged = dir.path().join("default/manual-03.g000003.ksav");
        let store = store_failing_removal_of(dir.path(), damaged.clone());
        let slot = SlotId::Manual(3);
        let metas: Vec<SaveMeta> = (0..3)
            .map(|tick| save(&store, slot, "desk", tick))
            .collect();
        let mut bytes = std::fs::read(&damaged).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&damaged, bytes).unwrap();
        assert_eq!(store.load(slot).unwrap().meta.save_id, metas[1].save_id);

        store.delete(slot).unwrap_err();

        let loaded = store.load(slot).map(|loaded| loaded.meta.save_id);
        assert_eq!(
            loaded.ok(),
            Some(metas[1].save_id),
            "the save a load returned"
        );
    }
}
