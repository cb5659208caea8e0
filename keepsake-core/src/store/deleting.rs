//! A delete in flight: `<slot>.deleting` beside the slot's saves says what a delete's record
//! of deleted saves (`deleted.rs`) was before it, and what each generation it is about to
//! remove adds to it. It is written durably before that record, and removed once the delete
//! ends, whichever way.
//!
//! Why: a delete names every save the slot holds before it removes the first file. A delete
//! that fails, in a process that lives on, takes the saves it left out of the record again
//! ([`SlotStore::note_delete_stopped`]); a process that dies part way (killed, a power loss)
//! could not, and its record named the saves it never removed. Sync then took them for saves
//! the player deleted: a conflict among them was never shown (simulator seeds 551742, 582649)
//! and a damaged one left on top was never repaired (526044). The store opened next (the game
//! started again) finds this file and settles the record as a delete that failed would have
//! ([`SlotStore::settle_stopped_delete`]), under the slot's lock: a delete still running in
//! another instance of the game holds that lock, so its file is not taken for a dead one's.
//! So does the next delete of the slot, first (it starts from the record as it should be),
//! and the next choice of a passed-over save there.
//!
//! The file: `= before`, then the record as it was; then, per generation the delete found,
//! `= <generation> <save id>` and what removing it adds to the record (its save's id, those it
//! was made in view of, its version vector), each part in the record's own text format
//! (`id_record.rs`). A generation counts as left where the slot still has it holding that save,
//! or a file under its number that does not read (what a delete leaves may be damaged): a new
//! save of the slot, made after a delete that ended but could not remove this file, is not
//! taken for what the delete left. A delete none of whose generations is left ended: its
//! record stands as it wrote it.

use super::deleted::DELETED_KEPT;
use super::error::StoreError;
use super::id_record::IdRecord;
use super::import::{Reading, StoredSave};
use super::layout::{lock_file_name, parse_slot_stem, slot_stem};
use super::slot_store::SlotStore;
use crate::slot::SlotId;
use std::fmt::Write as _;
use uuid::Uuid;

/// What a delete noted before removing anything: the record as it was, and what removing
/// each generation the slot held adds to it.
pub(super) struct DeleteNote {
    pub(super) before: IdRecord,
    pub(super) generations: Vec<NotedGeneration>,
}

/// One generation a delete is about to remove: its number, its save, and what naming that
/// save adds to the record of deleted saves.
pub(super) struct NotedGeneration {
    generation: u64,
    save_id: Uuid,
    adds: IdRecord,
}

/// What starts each part of the file.
const PART: &str = "= ";
/// The part holding the record as it was before the delete.
const BEFORE: &str = "before";

/// The name of a slot's record of the delete in flight.
fn deleting_name(slot: SlotId) -> String {
    format!("{}.deleting", slot_stem(slot))
}

/// The slot whose record of a delete in flight `name` is, if it is one.
pub(super) fn deleting_slot(name: &str) -> Option<SlotId> {
    name.strip_suffix(".deleting").and_then(parse_slot_stem)
}

impl DeleteNote {
    /// The note of a delete that found `before` and the readable generations `held`.
    pub(super) fn new(before: IdRecord, held: &[StoredSave]) -> DeleteNote {
        let generations = (held.iter())
            .map(|save| NotedGeneration {
                generation: save.generation,
                save_id: save.meta.save_id,
                adds: IdRecord::of_removed(save),
            })
            .collect();
        DeleteNote {
            before,
            generations,
        }
    }

    /// The file's text (see the module docs).
    fn text(&self) -> String {
        let mut text = format!("{PART}{BEFORE}\n{}", self.before.text(DELETED_KEPT));
        for noted in &self.generations {
            let id = noted.save_id.simple();
            let _ = write!(
                text,
                "{PART}{} {id}\n{}",
                noted.generation,
                noted.adds.text(DELETED_KEPT)
            );
        }
        text
    }

    /// Reads the file's text; `None` when it is not a note (no `before` part first: a file
    /// cut short before it, or something else under the name).
    fn parse(text: &str) -> Option<DeleteNote> {
        let separator = format!("\n{PART}");
        let mut parts = (text.split(&separator)).map(|part| part.trim_start_matches(PART));
        let before = parts.next()?.strip_prefix(BEFORE)?;
        let generations = parts.filter_map(|part| {
            let (header, body) = part.split_once('\n').unwrap_or((part, ""));
            let (generation, id) = header.split_once(' ')?;
            Some(NotedGeneration {
                generation: generation.parse().ok()?,
                save_id: Uuid::try_parse(id).ok()?,
                adds: IdRecord::parse(body),
            })
        });
        let generations = generations.collect();
        let before = IdRecord::parse(before);
        Some(DeleteNote {
            before,
            generations,
        })
    }
}

impl SlotStore {
    /// Writes `note` as `slot`'s delete in flight, durably, before the delete changes the
    /// record. Call it under the slot's lock.
    pub(super) fn note_delete_in_flight(
        &self,
        slot: SlotId,
        note: &DeleteNote,
    ) -> Result<(), StoreError> {
        self.write_profile_file(&deleting_name(slot), note.text().as_bytes())
    }

    /// The delete ended (its record says what it removed): its file goes. Not flushed: a power
    /// loss that brings it back brings a note a later call settles the same way.
    pub(super) fn end_delete_in_flight(&self, slot: SlotId) {
        let _ = self.fs.remove_file(&self.dir.join(deleting_name(slot)));
    }

    /// Settles the record of a delete that died part way in `slot`, if its file is there: the
    /// record keeps only what the delete removed ([`note_delete_stopped`]), and the file goes.
    /// Call it under the slot's lock. Best effort: a note that cannot be read, or a slot that
    /// cannot be listed, is left for a later call.
    ///
    /// [`note_delete_stopped`]: Self::note_delete_stopped
    pub(super) fn settle_stopped_delete(&self, slot: SlotId) {
        let Ok(Some(bytes)) = self.read_profile_file(&deleting_name(slot)) else {
            return;
        };
        let Some(note) = DeleteNote::parse(&String::from_utf8_lossy(&bytes)) else {
            return self.end_delete_in_flight(slot);
        };
        self.stop_delete(slot, &note);
    }

    /// A delete that ended part way (failed, or died): its record keeps only what it removed
    /// ([`note_delete_stopped`](Self::note_delete_stopped)), and its file goes once that is
    /// written; otherwise the file stays, for a later call to settle.
    pub(super) fn stop_delete(&self, slot: SlotId, note: &DeleteNote) {
        if self.note_delete_stopped(slot, note).is_ok() {
            self.end_delete_in_flight(slot);
        }
    }

    /// As [`settle_stopped_delete`](Self::settle_stopped_delete), for a store opening (which
    /// holds no lock): only when the slot's lock can be had now (a delete still running in
    /// another instance of the game holds it, and its note is no dead delete's).
    pub(super) fn settle_dead_delete(&self, slot: SlotId) {
        let lock = self.dir.join(lock_file_name(slot));
        if let Ok(Some(_lock)) = self.fs.try_lock(&lock) {
            self.settle_stopped_delete(slot);
        }
    }

    /// Which of the generations `note` names the slot still holds (the same save under its
    /// number, or a file there that does not read), and the slot's readable generations.
    pub(super) fn left_by_delete(
        &self,
        slot: SlotId,
        note: &DeleteNote,
    ) -> Result<(Vec<u64>, Vec<StoredSave>), StoreError> {
        let listed = self.generations(slot)?;
        let readable = self.metas_of(slot, listed.clone(), Reading::View)?;
        let left = (note.generations.iter())
            .filter(|noted| listed.contains(&noted.generation))
            .filter(|noted| {
                let there = readable.iter().find(|s| s.generation == noted.generation);
                there.is_none_or(|save| save.meta.save_id == noted.save_id)
            })
            .map(|noted| noted.generation)
            .collect();
        Ok((left, readable))
    }
}

impl NotedGeneration {
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    pub(super) fn adds(&self) -> &IdRecord {
        &self.adds
    }
}

#[cfg(test)]
mod tests {
    use crate::format::{SaveBundle, SaveMeta, WorldState};
    use crate::slot::SlotId;
    use crate::store::testing::Forward;
    use crate::store::{SlotStore, StoreConfig};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    const SLOT: SlotId = SlotId::Manual(3);

    fn save(store: &SlotStore, tick: u64) -> SaveMeta {
        let meta = SaveMeta::new(SLOT).with_device("desk", "desk");
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..Default::default()
        });
        store.save(SLOT, meta, &bundle).unwrap().meta
    }

    /// A store in `dir` whose process dies at the first removal of `dies_at`: that removal
    /// fails, and so does every write and removal after it (nothing it does lands).
    fn store_dying_at(dir: &Path, dies_at: PathBuf) -> SlotStore {
        let dead = Arc::new(AtomicBool::new(false));
        let dying = dead.clone();
        let fs = Forward::os()
            .on_remove_file(move |fs, path| {
                if path == dies_at {
                    dying.store(true, Ordering::SeqCst);
                }
                match dying.load(Ordering::SeqCst) {
                    true => Err(std::io::Error::other("the process is dead")),
                    false => fs.remove_file(path),
                }
            })
            .on_create_new(move |fs, path| match dead.load(Ordering::SeqCst) {
                true => Err(std::io::Error::other("the process is dead")),
                false => fs.create_new(path),
            });
        SlotStore::open_with(StoreConfig::new(dir), Arc::new(fs)).unwrap()
    }

    /// Simulator seeds 582649, 526044: the process died in a delete after it removed the
    /// older generations, before the head. The record named all three saves; the next start
    /// took the head left for a save the player deleted (sync hid its conflict and never
    /// repaired it). The next call that reads the record settles it by the delete's note: the
    /// save left is the player's, the ones removed stay deleted, and the note goes.
    #[test]
    fn a_delete_the_process_died_in_names_only_what_it_removed() {
        let dir = tempfile::tempdir().unwrap();
        let head = dir.path().join("default/manual-03.g000003.ksav");
        let dying = store_dying_at(dir.path(), head.clone());
        let metas: Vec<SaveMeta> = (0..3).map(|tick| save(&dying, tick)).collect();
        assert!(head.exists(), "the test names the head's file");
        dying.delete(SLOT).unwrap_err();
        drop(dying);
        let note = dir.path().join("default/manual-03.deleting");
        assert!(note.exists(), "the dead delete left its note");

        let restarted = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        assert_eq!(restarted.generations(SLOT).unwrap(), [3]);
        assert!(!restarted.is_deleted(&metas[2]).unwrap(), "the save left");
        let deleted = restarted.deleted_saves().unwrap();
        assert!(!deleted.contains(&metas[2].save_id));
        assert!(deleted.contains(&metas[0].save_id) && deleted.contains(&metas[1].save_id));
        assert!(!note.exists(), "settled, the note goes");
    }

    /// A delete that ended but could not remove its note, and a new save in the emptied slot
    /// under the number of a deleted one: the note is no dead delete's (none of its saves is
    /// left), so the record stands as the delete wrote it, and the new save is not named.
    #[test]
    fn a_note_left_by_a_delete_that_ended_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let note = dir.path().join("default/manual-03.deleting");
        let kept = note.clone();
        let fs = Forward::os().on_remove_file(move |fs, path| match path == kept {
            true => Err(std::io::Error::other("EIO")),
            false => fs.remove_file(path),
        });
        let store = SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs)).unwrap();
        let old = [save(&store, 0), save(&store, 1)];
        assert_eq!(store.delete(SLOT).unwrap(), 2);
        assert!(note.exists(), "the test leaves the note");
        let new = save(&store, 2);
        drop(store);

        let restarted = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        assert!(old.iter().all(|old| restarted.is_deleted(old).unwrap()));
        assert!(!restarted.is_deleted(&new).unwrap());
        assert!(!note.exists());
    }
}
