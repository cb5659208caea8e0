//! A choice in flight: the player choosing a save below the slot's head (another device's,
//! shown as a conflict) to head it ([`SlotStore::promote`]). The save it passes over goes
//! into the slot's record of deleted saves (`deleted.rs`), settled for good like a deleted
//! save though it stays loadable one generation below.
//!
//! Why a note: the choice is two writes, the chosen save's copy on top and the record, and
//! a process that died between them (killed, a power loss) left the choice made and the
//! save it passed over unnamed. Should the disk then destroy the save the player made over
//! their choice, the slot fell back to the save they had turned down, brought back from the
//! cloud and heading by the clocks (simulator seeds 614680, 592801). `<slot>.choosing` beside
//! the slot's saves is written durably before the copy: `= chosen <save id> <generation of the
//! copy>`, then the record as the choice writes it, in the record's own text format
//! (`id_record.rs`). The next store opened (the game started again), and the next write of
//! the slot, settle it under the slot's lock ([`SlotStore::settle_stopped_choice`]): where
//! the copy's generation holds the chosen save, the choice landed and its record is written;
//! otherwise it did not; either way the note goes.

use super::deleted::{DELETED_KEPT, record_name};
use super::error::StoreError;
use super::fs::FOLDER;
use super::id_record::IdRecord;
use super::import::Reading;
use super::layout::{lock_file_name, parse_slot_stem, slot_stem};
use super::slot_store::SlotStore;
use crate::format::SaveMeta;
use crate::slot::SlotId;
use std::io::ErrorKind;
use uuid::Uuid;

/// What starts the note; the chosen save's id follows on the same line.
const CHOSEN: &str = "= chosen ";

/// The name of a slot's note of the choice in flight.
fn choosing_name(slot: SlotId) -> String {
    format!("{}.choosing", slot_stem(slot))
}

/// A choice the store is making: the save chosen, the generation its copy takes on top, and
/// the record of deleted saves with the save it passes over added.
struct ChoiceNote {
    chosen: Uuid,
    top: u64,
    record: IdRecord,
}

impl ChoiceNote {
    fn text(&self) -> String {
        let record = self.record.text(DELETED_KEPT);
        format!("{CHOSEN}{} {}\n{record}", self.chosen, self.top)
    }

    /// The note in `text`, or `None` for one that is no note (hostile, cut short, or the
    /// mark of an ended choice whose file could not be removed).
    fn parse(text: &str) -> Option<ChoiceNote> {
        let (first, record) = text.split_once('\n')?;
        let (chosen, top) = first.strip_prefix(CHOSEN)?.split_once(' ')?;
        Some(ChoiceNote {
            chosen: Uuid::parse_str(chosen).ok()?,
            top: top.trim().parse().ok()?,
            record: IdRecord::parse(record),
        })
    }
}

impl SlotStore {
    /// Makes `generation` head its slot (for a player choosing the save made on another
    /// device): its bytes are written on top as a new generation and its old file removed, so
    /// the previous head stays, one generation below. Returns the new generation number.
    ///
    /// `passed_over` is the save the player saw heading the slot when they chose (`None`
    /// when none read). Unless it is the chosen save, it is added to the slot's record of
    /// deleted saves, with what it was made in view of (see `deleted.rs`), so cloud sync
    /// neither shows it as a conflict again nor heads the slot with it or an older save of
    /// its line, once its own state file is lost; so it is when the chosen save heads the
    /// slot already (placed on top again as it was downloaded for the choice). A process that
    /// dies part way leaves a note the next store opened settles (`choosing.rs`). A record
    /// that cannot be read leaves the choice unrecorded here, as before records were kept.
    pub fn promote(
        &self,
        slot: SlotId,
        generation: u64,
        passed_over: Option<&SaveMeta>,
    ) -> Result<u64, StoreError> {
        self.check_slot(slot)?;
        self.flush_folder_chain()?;
        let _lock = self.lock(slot)?;
        // A record a dead write left unsettled is not built on.
        self.settle_stopped_writes(slot)?;
        let Some(&newest) = self.generations(slot)?.first() else {
            return Err(StoreError::EmptySlot(slot));
        };
        if newest != generation {
            self.refuse_newer_format(slot, newest)?;
        }
        let top = match newest == generation {
            true => newest,
            false => self.above(slot, newest)?,
        };
        let Some(note) = self.choice_note(slot, generation, top, passed_over) else {
            return self.choose(slot, generation, newest);
        };
        if newest == generation {
            self.land_choice(slot, &note)?;
            return Ok(newest);
        }
        let noted = self.note_choice_in_flight(slot, &note)?;
        let moved = self.choose(slot, generation, newest);
        // Whether the copy landed or not, the generation it took says (a failed removal of
        // the old file still made the choice). What is not written now, the note settles.
        if self.land_choice(slot, &note).is_ok() && noted {
            let _ = self.end_choice_in_flight(slot);
        }
        moved
    }

    /// Moves `generation` on top, unless it is there already.
    fn choose(&self, slot: SlotId, generation: u64, newest: u64) -> Result<u64, StoreError> {
        match newest == generation {
            true => Ok(newest),
            false => self.move_to_top(slot, generation, newest),
        }
    }

    /// The note of choosing `generation` (its copy taking `top`) over `passed_over`: `None`
    /// when nothing is passed over (none, or the chosen save itself), when the chosen save
    /// does not read, or when the record does not.
    fn choice_note(
        &self,
        slot: SlotId,
        generation: u64,
        top: u64,
        passed_over: Option<&SaveMeta>,
    ) -> Option<ChoiceNote> {
        let held = self.metas_of(slot, vec![generation], Reading::View).ok()?;
        let chosen = held.first()?;
        let passed_over = passed_over.filter(|over| over.save_id != chosen.meta.save_id)?;
        let record = self.record_of(slot).ok()?;
        let record = record.passing_over(passed_over, chosen);
        let chosen = chosen.meta.save_id;
        Some(ChoiceNote {
            chosen,
            top,
            record,
        })
    }

    /// Writes the note before the choice changes anything; whether it did. Under a folder by
    /// the note's name the choice goes on without one, as before notes were written, rather
    /// than refuse every choice of the slot.
    fn note_choice_in_flight(&self, slot: SlotId, note: &ChoiceNote) -> Result<bool, StoreError> {
        let name = choosing_name(slot);
        // Anything else there (a FIFO, a link to a device) the note's rename replaces
        // (review 64 H7).
        if let Err(StoreError::NotAFile { what, .. }) = self.read_profile_file(&name)
            && what == FOLDER
        {
            return Ok(false);
        }
        self.write_profile_file(&name, note.text().as_bytes())?;
        Ok(true)
    }

    /// Writes the record `note` holds if the choice landed: the generation its copy takes
    /// holds the chosen save. Decided by that generation, not by what reads first: a head that
    /// does not read now is no sign the copy did not land, nor one the copy did (review 64
    /// H2, H3). A read of it that may pass fails the call, and the note stays.
    fn land_choice(&self, slot: SlotId, note: &ChoiceNote) -> Result<(), StoreError> {
        if !self.generations(slot)?.contains(&note.top) {
            return Ok(());
        }
        let at_top = self.metas_of(slot, vec![note.top], Reading::View)?;
        if !at_top.iter().any(|save| save.meta.save_id == note.chosen) {
            return Ok(());
        }
        let record = note.record.text(DELETED_KEPT);
        self.write_profile_file(&record_name(slot), record.as_bytes())
    }

    /// Settles a choice that died part way in `slot`, if its note is there: where the
    /// generation its copy took holds the save it chose, the record it noted is written; then
    /// the note goes. Call it
    /// under the slot's lock, before the slot's files or record change. A note that does not
    /// read as one goes; one that cannot be read now for a reason that may pass stays, and
    /// the call fails.
    pub(super) fn settle_stopped_choice(&self, slot: SlotId) -> Result<(), StoreError> {
        let name = choosing_name(slot);
        let bytes = match self.read_profile_file(&name) {
            Ok(Some(bytes)) => bytes,
            Ok(None) | Err(StoreError::NotAFile { .. }) => return Ok(()),
            Err(error) if error.may_pass() => return Err(error),
            Err(_) => return self.end_choice_in_flight(slot),
        };
        let Some(note) = ChoiceNote::parse(&String::from_utf8_lossy(&bytes)) else {
            return self.end_choice_in_flight(slot);
        };
        self.land_choice(slot, &note)?;
        self.end_choice_in_flight(slot)
    }

    /// The choice ended: its note goes. Not flushed: a power loss that brings it back brings
    /// a note settled the same way (its record again: a later write of the record flushes the
    /// folder, and with it this removal). A note that cannot be removed is replaced by one
    /// that is no note.
    fn end_choice_in_flight(&self, slot: SlotId) -> Result<(), StoreError> {
        let name = choosing_name(slot);
        match self.fs.remove_file(&self.dir.join(&name)) {
            Err(error) if error.kind() != ErrorKind::NotFound => {
                self.write_profile_file(&name, b"= ended\n")
            }
            _ => Ok(()),
        }
    }

    /// At the store's opening: settles what a write that died part way left in the slot of
    /// the note `name` (a choice's, then a delete's, in that order whichever name the folder
    /// lists first: review 64 H4), unless the slot's lock is held (a write running in
    /// another instance of the game).
    pub(super) fn settle_dead_writes(&self, name: &str) {
        let stem = name
            .strip_suffix(".choosing")
            .or_else(|| name.strip_suffix(".deleting"));
        let Some(slot) = stem.and_then(parse_slot_stem) else {
            return;
        };
        let lock = self.dir.join(lock_file_name(slot));
        if let Ok(Some(_lock)) = self.fs.try_lock(&lock) {
            let _ = self.settle_stopped_writes(slot);
        }
    }

    /// Settles what writes of `slot` that died part way left (a choice's note, then a
    /// delete's), before the slot's files or record change; the first error, after both.
    pub(super) fn settle_stopped_writes(&self, slot: SlotId) -> Result<(), StoreError> {
        let choice = self.settle_stopped_choice(slot);
        let delete = self.settle_stopped_delete(slot);
        choice.and(delete)
    }
}

#[cfg(test)]
mod tests {
    use crate::format::{SaveBundle, SaveMeta, Timestamp, WorldState};
    use crate::slot::SlotId;
    use crate::store::deleting::tests::{restart, store_dying_at};
    use crate::store::{ImportOutcome, SlotStore};
    use std::path::Path;

    const SLOT: SlotId = SlotId::Manual(3);

    /// A save of `device`, dated `at` by its clock.
    fn save(store: &SlotStore, device: &str, at: Timestamp) -> SaveMeta {
        let mut meta = SaveMeta::new(SLOT).with_device(device, device);
        meta.created_at = at;
        let bundle = SaveBundle::new(WorldState::default());
        store.save(SLOT, meta, &bundle).unwrap().meta
    }

    /// The desk's save C in generation 1 of `desk`, under the laptop's save Y made a minute
    /// later, which heads it (imported at generation 2): the conflict a player settles by
    /// choosing C.
    fn conflict(desk: &SlotStore, laptop_dir: &Path) -> (SaveMeta, SaveMeta) {
        let now = Timestamp::now().unix_millis();
        let chosen = save(desk, "desk", Timestamp::from_unix_millis(now));
        let laptop = restart(laptop_dir);
        let passed_over = save(&laptop, "laptop", Timestamp::from_unix_millis(now + 60_000));
        let bytes = laptop.read_generation_bytes(SLOT, 1).unwrap();
        let placed = desk.import(desk.decode_import(&bytes).unwrap()).unwrap();
        assert!(
            matches!(&placed, ImportOutcome::Placed(receipt) if receipt.heads_slot),
            "{placed:?}"
        );
        (chosen, passed_over)
    }

    /// Simulator seeds 614680, 592801: the process died in a choice after the chosen save's
    /// copy landed on top, before the save it passed over was named. Once the disk destroyed
    /// the save the player made over their choice, the slot fell back to the save they had
    /// turned down. The store opened next names it by the choice's note.
    #[test]
    fn a_choice_the_process_died_in_names_the_save_it_passed_over() {
        let (dir, laptop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let old_copy = dir.path().join("default/manual-03.g000001.ksav");
        let dying = store_dying_at(dir.path(), old_copy);
        let (chosen, passed_over) = conflict(&dying, laptop_dir.path());
        dying.promote(SLOT, 1, Some(&passed_over)).unwrap_err();
        drop(dying);
        let note = dir.path().join("default/manual-03.choosing");
        assert!(note.exists(), "the dead choice left its note");

        let restarted = restart(dir.path());
        assert_eq!(restarted.load(SLOT).unwrap().meta.save_id, chosen.save_id);
        assert!(restarted.is_deleted(&passed_over).unwrap(), "passed over");
        assert!(!restarted.is_deleted(&chosen).unwrap());
        assert!(!note.exists(), "settled, the note goes");
    }

    /// A choice that died before its copy landed chose nothing: the head it would have
    /// passed over is the player's as before, though the generation the copy would have
    /// taken is there by now, holding another save; and the note goes.
    #[test]
    fn a_choice_that_did_not_land_names_nothing() {
        let (dir, laptop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let desk = restart(dir.path());
        let (chosen, head) = conflict(&desk, laptop_dir.path());
        drop(desk);
        let note = dir.path().join("default/manual-03.choosing");
        let text = format!("= chosen {} 3\n{}\n", chosen.save_id, head.save_id);
        std::fs::write(&note, &text).unwrap();
        let g2 = dir.path().join("default/manual-03.g000002.ksav");
        std::fs::copy(&g2, dir.path().join("default/manual-03.g000003.ksav")).unwrap();

        let restarted = restart(dir.path());
        assert_eq!(restarted.load(SLOT).unwrap().meta.save_id, head.save_id);
        assert!(!restarted.is_deleted(&head).unwrap());
        assert!(!note.exists());
    }

    /// Review 64 H1: the save chosen heads already (downloaded again for the choice, and
    /// placed on top): the save the player saw heading is named all the same.
    #[test]
    fn a_choice_of_the_save_on_top_names_the_head_the_player_saw() {
        let (dir, laptop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let desk = restart(dir.path());
        // The player saw the desk's save heading; the laptop's, chosen, is on top by now.
        let (seen, laptops) = conflict(&desk, laptop_dir.path());
        assert_eq!(desk.promote(SLOT, 2, Some(&seen)).unwrap(), 2);
        assert_eq!(desk.load(SLOT).unwrap().meta.save_id, laptops.save_id);
        assert!(desk.is_deleted(&seen).unwrap(), "passed over");
        assert!(!desk.is_deleted(&laptops).unwrap());

        // Review 64 H6: chosen back, the save is the player's again, by id and by line.
        let generation = desk.saves_in(SLOT).unwrap()[1].generation;
        desk.promote(SLOT, generation, Some(&laptops)).unwrap();
        assert_eq!(desk.load(SLOT).unwrap().meta.save_id, seen.save_id);
        assert!(!desk.is_deleted(&seen).unwrap(), "chosen back");
        assert!(desk.is_deleted(&laptops).unwrap());
    }

    /// A note that is no note (damaged, or hostile) goes and names nothing; a choice made
    /// with a folder under the note's name goes on without one, and names what it passed
    /// over all the same.
    #[test]
    fn odd_entries_under_the_notes_name_do_not_jam_choices() {
        let (dir, laptop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let desk = restart(dir.path());
        let (chosen, head) = conflict(&desk, laptop_dir.path());
        drop(desk);
        let note = dir.path().join("default/manual-03.choosing");
        std::fs::write(&note, b"= chosen \xff 3\n").unwrap();
        let restarted = restart(dir.path());
        assert!(!note.exists(), "no note, it goes");
        assert!(!restarted.is_deleted(&head).unwrap());

        std::fs::create_dir(&note).unwrap();
        restarted.promote(SLOT, 1, Some(&head)).unwrap();
        assert_eq!(restarted.load(SLOT).unwrap().meta.save_id, chosen.save_id);
        assert!(restarted.is_deleted(&head).unwrap());
        assert!(note.is_dir(), "the folder is left as it was");
    }
}
