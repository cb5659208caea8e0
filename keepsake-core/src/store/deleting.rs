//! A delete in flight: what a delete adds to the slot's record of deleted saves
//! (`deleted.rs`) before it removes anything ([`SlotStore::note_deleted`]), and the note that
//! lets a delete cut short settle that record to what it removed. `<slot>.deleting` beside the
//! slot's saves says what the record was before the delete, and what each generation it is
//! about to remove adds to it. It is written durably before the record, and removed once the
//! delete ends, whichever way.
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

use super::deleted::{DELETED_KEPT, record_name};
use super::error::StoreError;
use super::id_record::IdRecord;
use super::import::{Reading, StoredSave};
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::slot::SlotId;
use std::fmt::Write as _;
use uuid::Uuid;

/// What a delete noted before removing anything: the record as it was, and what removing
/// each generation the slot held adds to it.
pub(super) struct DeleteNote {
    pub(super) before: IdRecord,
    /// The CRC-32 of the record the delete writes: a record changed since (a later choice,
    /// an older build's delete) is not rebuilt from `before`, which would undo that change.
    written: u32,
    pub(super) generations: Vec<NotedGeneration>,
}

/// One generation a delete is about to remove: its number, its save, and what naming that
/// save adds to the record of deleted saves.
pub(super) struct NotedGeneration {
    generation: u64,
    save_id: Uuid,
    adds: IdRecord,
}

/// How many generations a note may name besides the slot's backups: more than any slot
/// holds (its backups, the saves kept beside them) by far. A longer note is no delete's: it is
/// passed over (removed, the record left as written), so a hostile one cannot stall a store's
/// opening.
const MAX_NOTED: usize = 1024;

/// What a note that could not be removed once its delete ended is replaced by: no note.
const ENDED: &str = "= ended\n";

/// What starts each part of the file.
const PART: &str = "= ";
/// The part holding the record as it was before the delete.
const BEFORE: &str = "before";

/// The name of a slot's record of the delete in flight.
fn deleting_name(slot: SlotId) -> String {
    format!("{}.deleting", slot_stem(slot))
}

impl DeleteNote {
    /// The note of a delete that found `before`, the readable generations `held`, and the
    /// generations `unread` that did not read, which it named through the slot's record of
    /// what entered it (`entered`: what removing any of them adds); `written` is the record
    /// the delete writes.
    pub(super) fn new(
        (before, written): (IdRecord, &IdRecord),
        held: &[StoredSave],
        unread: &[u64],
        entered: &IdRecord,
    ) -> DeleteNote {
        let readable = (held.iter()).map(|save| NotedGeneration {
            generation: save.generation,
            save_id: save.meta.save_id,
            adds: IdRecord::of_removed(save),
        });
        let unread = (unread.iter()).map(|&generation| NotedGeneration {
            generation,
            save_id: Uuid::nil(),
            adds: entered.clone(),
        });
        DeleteNote {
            before,
            written: crc32fast::hash(written.text(DELETED_KEPT).as_bytes()),
            generations: readable.chain(unread).collect(),
        }
    }

    /// The file's text (see the module docs).
    fn text(&self) -> String {
        let before = self.before.text(DELETED_KEPT);
        let mut text = format!("{PART}{BEFORE} {:08x}\n{before}", self.written);
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

    /// Reads the file's text; `None` when it is not a note (no `before` part first with the
    /// written record's CRC: a file cut short before it, or something else under the name),
    /// or names more than `most` generations (no slot holds that many).
    fn parse(text: &str, most: usize) -> Option<DeleteNote> {
        let separator = format!("\n{PART}");
        let mut parts = (text.split(&separator)).map(|part| part.trim_start_matches(PART));
        let first = parts.next()?;
        let (header, before) = first.split_once('\n').unwrap_or((first, ""));
        let written = header.strip_prefix(BEFORE)?.trim();
        let written = u32::from_str_radix(written, 16).ok()?;
        let generations = parts.filter_map(|part| {
            let (header, body) = part.split_once('\n').unwrap_or((part, ""));
            let (generation, id) = header.split_once(' ')?;
            Some(NotedGeneration {
                generation: generation.parse().ok()?,
                save_id: Uuid::try_parse(id).ok()?,
                adds: IdRecord::parse(body),
            })
        });
        let generations: Vec<NotedGeneration> = generations.take(most + 1).collect();
        if generations.len() > most {
            return None;
        }
        Some(DeleteNote {
            before: IdRecord::parse(before),
            written,
            generations,
        })
    }
}

impl SlotStore {
    /// Adds the saves `slot` holds, those they were made in view of, and their version
    /// vectors, to its record, and every save that entered the slot here (`entered.rs`) when
    /// a generation does not read. Call it under the slot's lock, before removing anything; give
    /// what it returns to [`note_delete_stopped`](Self::note_delete_stopped) if the delete
    /// fails.
    ///
    /// A generation that cannot be read for a reason that may pass (an I/O error) fails the
    /// delete before anything is removed, as it fails a save: left out, its save would be
    /// removed unnamed, and sync would place it again from the cloud once the sync state (and
    /// with it the device id) is lost (simulator seed 315564).
    pub(super) fn note_deleted(&self, slot: SlotId) -> Result<DeleteNote, StoreError> {
        let listed = self.generations(slot)?;
        let every_one_reads = |held: &[StoredSave]| held.len() == listed.len();
        let held = self.metas_of(slot, listed.clone(), super::import::Reading::View)?;
        let before = self.record_of(slot)?;
        let mut record = before.clone();
        let made_over_unread = held.iter().any(|save| {
            save.meta.over_unread().next().is_some() || save.meta.over_lines().is_some()
        });
        let entered = match !every_one_reads(&held) || made_over_unread {
            true => self.entered(slot)?,
            false => IdRecord::default(),
        };
        // A file that does not read cannot name its save, nor the saves of its line before it:
        // every save that entered the slot here does, and each line's count there (simulator
        // seeds 300824, 439224; 564678: an older save the damaged one was made in view of came
        // back). Where every file reads, they name all the slot holds, and the record keeps its
        // room for older deletes.
        if !every_one_reads(&held) {
            record.ids.extend(entered.ids.iter().copied());
            for (line, count) in &entered.lines {
                record.raise(line, *count);
            }
        }
        record.add(&held, &entered);
        let unread: Vec<u64> = (listed.iter().copied())
            .filter(|generation| !held.iter().any(|save| save.generation == *generation))
            .collect();
        let note = DeleteNote::new((before, &record), &held, &unread, &entered);
        // Before the record names anything: a process that dies in the delete leaves the
        // note, and the next call settles the record by it (`deleting.rs`).
        self.note_delete_in_flight(slot, &note)?;
        if let Err(error) =
            self.write_profile_file(&record_name(slot), record.text(DELETED_KEPT).as_bytes())
        {
            // The write may have put the record in place before it failed (the folder's flush
            // after the rename): a delete that removed nothing must not leave its saves named,
            // or sync counts them deleted and hides a conflict among them (simulator seed
            // 402040). Best effort: should it fail, the note stays and settles it later.
            let _ = self.stop_delete(slot, &note);
            return Err(error);
        }
        Ok(note)
    }

    /// A delete that ended part way (the call failed, or the process died in it: see
    /// `deleting.rs`): the record names only what it removed. What is left is the player's as
    /// before, and cloud sync treats it so (a conflict among the saves left is shown, an
    /// unsynced one uploaded, a damaged one repaired). What a removed file names that the
    /// slot still holds (a second copy of a save, which an interrupted promotion leaves; a
    /// save it was made in view of; by its line, an older save) is left out of the record
    /// too: a save left must not count as deleted. A file that did not read is named through
    /// the slot's record of what entered it, sparing the same. A delete that left none of its
    /// generations ended: its record stands as written. Fails when the slot cannot be listed
    /// or the record written.
    pub(super) fn note_delete_stopped(
        &self,
        slot: SlotId,
        note: &DeleteNote,
    ) -> Result<(), StoreError> {
        let found = self.left_by_delete(slot, note)?;
        if found.left.is_empty() {
            return Ok(());
        }
        let record = match self.read_profile_file(&record_name(slot)) {
            Ok(current) => {
                let current = current.unwrap_or_default();
                match crc32fast::hash(&current) == note.written {
                    true => note.rebuilt(&found),
                    // Changed since the delete wrote it: only what the slot holds is taken
                    // out of it.
                    false => {
                        IdRecord::parse(&String::from_utf8_lossy(&current)).sparing(&found.readable)
                    }
                }
            }
            Err(error) if error.may_pass() => return Err(error),
            // One this user may never read (the delete took it for an empty record, and
            // replaced it, or not) is settled as the delete found it: refused, the note
            // stayed, every write of the slot ran with it unsettled, and sync hid the saves
            // the note's record named (simulator seed 640027).
            Err(_) => note.rebuilt(&found),
        };
        self.write_profile_file(&record_name(slot), record.text(DELETED_KEPT).as_bytes())
    }

    /// Writes `note` as `slot`'s delete in flight, durably, before the delete changes the
    /// record. Call it under the slot's lock, once [`settle_stopped_delete`] has settled any
    /// note there. An odd entry under its name (a folder) leaves the delete without a note,
    /// as before notes were written, rather than refuse every delete of the slot.
    ///
    /// [`settle_stopped_delete`]: Self::settle_stopped_delete
    pub(super) fn note_delete_in_flight(
        &self,
        slot: SlotId,
        note: &DeleteNote,
    ) -> Result<(), StoreError> {
        let name = deleting_name(slot);
        if let Err(StoreError::NotAFile { .. }) = self.read_profile_file(&name) {
            return Ok(());
        }
        self.write_profile_file(&name, note.text().as_bytes())
    }

    /// The delete ended (its record says what it removed): its file goes. Not flushed: a power
    /// loss that brings it back brings a note a later call settles the same way. A file that
    /// cannot be removed is replaced by one that is no note (no `before` part), which the
    /// next call removes: kept, it would be settled later against generations the slot may
    /// hold again by then (review 63 F4).
    pub(super) fn end_delete_in_flight(&self, slot: SlotId) {
        let name = deleting_name(slot);
        match self.fs.remove_file(&self.dir.join(&name)) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                let _ = self.write_profile_file(&name, ENDED.as_bytes());
            }
            _ => {}
        }
    }

    /// Settles the record of a delete that died part way in `slot`, if its file is there: the
    /// record keeps only what the delete removed ([`note_delete_stopped`]), and the file goes.
    /// Call it under the slot's lock, before the slot's files change (a save, an import, a
    /// choice, a delete): what the note says is left is found by save id, and by number for a
    /// file that does not read. A note that does not read as one goes, the record left as
    /// the delete wrote it (the safe side: nothing comes back); an odd entry under its name is
    /// left alone. Fails when a note is there and the record cannot be settled now: a delete
    /// then refuses (its own note would replace this one), a save goes on.
    ///
    /// [`note_delete_stopped`]: Self::note_delete_stopped
    pub(super) fn settle_stopped_delete(&self, slot: SlotId) -> Result<(), StoreError> {
        let bytes = match self.read_profile_file(&deleting_name(slot)) {
            Ok(Some(bytes)) => bytes,
            Ok(None) | Err(StoreError::NotAFile { .. }) => return Ok(()),
            Err(error) if error.may_pass() => return Err(error),
            // One that can never be read (this user may not open it, past the size limit) is
            // no note to settle by: it goes, or every delete of the slot would wait for it.
            Err(_) => {
                self.end_delete_in_flight(slot);
                return Ok(());
            }
        };
        let most = usize::from(self.config().backups) + MAX_NOTED;
        match DeleteNote::parse(&String::from_utf8_lossy(&bytes), most) {
            Some(note) => self.stop_delete(slot, &note),
            None => {
                self.end_delete_in_flight(slot);
                Ok(())
            }
        }
    }

    /// A delete that ended part way (failed, or died): its record keeps only what it removed
    /// ([`note_delete_stopped`](Self::note_delete_stopped)), and its file goes once that is
    /// written; otherwise the file stays, for a later call to settle.
    pub(super) fn stop_delete(&self, slot: SlotId, note: &DeleteNote) -> Result<(), StoreError> {
        self.note_delete_stopped(slot, note)?;
        self.end_delete_in_flight(slot);
        Ok(())
    }

    /// Which of the generations `note` names the slot still holds, and the slot's readable
    /// generations: a noted save is left when the slot holds it under any number (a promotion
    /// or an import may have moved it), and a noted generation when its number holds a file
    /// that does not read now (its save, if the note names it, cannot be told apart there).
    pub(super) fn left_by_delete(
        &self,
        slot: SlotId,
        note: &DeleteNote,
    ) -> Result<LeftByDelete, StoreError> {
        let listed = self.generations(slot)?;
        let readable = self.metas_of(slot, listed.clone(), Reading::View)?;
        let reads = |generation: u64| readable.iter().any(|s| s.generation == generation);
        let unread_there = |generation: u64| listed.contains(&generation) && !reads(generation);
        let held = |id: Uuid| !id.is_nil() && readable.iter().any(|s| s.meta.save_id == id);
        let mut found = LeftByDelete::default();
        for noted in &note.generations {
            if held(noted.save_id) {
                found.left.push(noted.generation);
            } else if unread_there(noted.generation) {
                found.left.push(noted.generation);
                found.unread_left.push(noted.save_id);
            }
        }
        found.readable = readable;
        Ok(found)
    }
}

/// What a delete cut short left of what its note names (see
/// [`SlotStore::left_by_delete`]).
#[derive(Default)]
pub(super) struct LeftByDelete {
    /// The noted generations left.
    left: Vec<u64>,
    /// The noted saves left whose files do not read now (the nil id for a generation that
    /// did not read when the delete began).
    unread_left: Vec<Uuid>,
    /// The slot's readable generations.
    readable: Vec<StoredSave>,
}

impl DeleteNote {
    /// The record as the delete should have left it, having removed only what `found` says it
    /// did not leave: `before`, and what each removed generation adds, sparing every save left.
    /// Where a file left does not read, what it holds cannot be spared by its metadata: only
    /// ids are added (its own taken out), no line counts, and nothing through the slot's
    /// record of what entered it (review 63b G1: that named the save left). A save left
    /// unnamed is the safe side: a deleted one coming back loses nothing.
    fn rebuilt(&self, found: &LeftByDelete) -> IdRecord {
        let mut record = self.before.clone();
        let removed =
            (self.generations.iter()).filter(|noted| !found.left.contains(&noted.generation));
        for noted in removed {
            let mut adds = noted.adds.sparing(&found.readable);
            if !found.unread_left.is_empty() {
                if noted.save_id.is_nil() {
                    continue;
                }
                adds.lines.clear();
                adds.ids.retain(|id| !found.unread_left.contains(id));
            }
            record.merge(&adds);
        }
        record
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::format::{SaveBundle, SaveMeta, WorldState};
    use crate::slot::SlotId;
    use crate::store::testing::Forward;
    use crate::store::{SlotStore, StoreConfig};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    const SLOT: SlotId = SlotId::Manual(3);

    fn save(store: &SlotStore, tick: u64) -> SaveMeta {
        let meta = SaveMeta::new(SLOT).with_device("desk", "desk");
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..Default::default()
        });
        store.save(SLOT, meta, &bundle).unwrap().meta
    }

    /// A store in `dir` whose process dies at the first removal of `dies_at`.
    pub(in crate::store) fn store_dying_at(dir: &Path, dies_at: PathBuf) -> SlotStore {
        let fs = Forward::dying_at_removal_of(dies_at);
        SlotStore::open_with(StoreConfig::new(dir), Arc::new(fs)).unwrap()
    }

    /// The store the game opens when it starts again, on a healthy disk.
    pub(in crate::store) fn restart(dir: &Path) -> SlotStore {
        SlotStore::open(StoreConfig::new(dir)).unwrap()
    }

    /// Three saves in the slot, in a store in `dir` whose process dies at the removal of
    /// generation `dies_at` (see [`store_dying_at`]), and that generation's path.
    fn three_saves_dying_at(dir: &Path, dies_at: u64) -> (SlotStore, Vec<SaveMeta>, PathBuf) {
        let path = dir.join(format!("default/manual-03.g{dies_at:06}.ksav"));
        let dying = store_dying_at(dir, path.clone());
        let metas: Vec<SaveMeta> = (0..3).map(|tick| save(&dying, tick)).collect();
        assert!(path.exists(), "the test names a file of the slot");
        (dying, metas, path)
    }

    /// Simulator seeds 582649, 526044: the process died in a delete after it removed the
    /// older generations, before the head. The record named all three saves; the next start
    /// took the head left for a save the player deleted (sync hid its conflict and never
    /// repaired it). The store opened next settles it by the delete's note: the save left is
    /// the player's, the ones removed stay deleted, and the note goes.
    #[test]
    fn a_delete_the_process_died_in_names_only_what_it_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (dying, metas, _) = three_saves_dying_at(dir.path(), 3);
        dying.delete(SLOT).unwrap_err();
        drop(dying);
        let note = dir.path().join("default/manual-03.deleting");
        assert!(note.exists(), "the dead delete left its note");

        let restarted = restart(dir.path());
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
        // The new save, under the number of a deleted one, is damaged past its metadata: no
        // note may take it for what the delete left.
        std::fs::write(
            dir.path().join("default/manual-03.g000001.ksav"),
            b"damaged",
        )
        .unwrap();

        let restarted = restart(dir.path());
        assert!(old.iter().all(|old| restarted.is_deleted(old).unwrap()));
        assert!(!restarted.is_deleted(&new).unwrap());
        assert!(!note.exists());
    }

    /// Review 63 F3: the delete named the save of a file that did not read through the slot's
    /// record of what entered it, and died after removing that file, before the head. The
    /// settled record still names that save (its file is gone), not the head left.
    #[test]
    fn a_dead_delete_keeps_naming_the_unread_file_it_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (dying, metas, head) = three_saves_dying_at(dir.path(), 2);
        let newest = dir.path().join("default/manual-03.g000003.ksav");
        std::fs::write(&newest, b"damaged past its metadata").unwrap();
        dying.delete(SLOT).unwrap_err();
        drop(dying);
        assert!(
            head.exists() && !newest.exists(),
            "the test removes the unread file"
        );

        let restarted = restart(dir.path());
        assert!(
            restarted.is_deleted(&metas[2]).unwrap(),
            "the unread file's save"
        );
        assert!(restarted.is_deleted(&metas[0]).unwrap());
        assert!(!restarted.is_deleted(&metas[1]).unwrap(), "the head left");
    }

    /// Review 63b G1: two files did not read (the oldest and the newest, damaged); the delete
    /// removed the oldest and died removing the newest. The damaged file left may hold any
    /// save that entered the slot: the record names none of them through that record (it
    /// named the newest save, still in the slot, which sync then never repaired), nor the
    /// head left.
    #[test]
    fn a_dead_delete_names_nothing_an_unread_file_left_may_hold() {
        let dir = tempfile::tempdir().unwrap();
        let (dying, metas, newest) = three_saves_dying_at(dir.path(), 3);
        let oldest = dir.path().join("default/manual-03.g000001.ksav");
        for damaged in [&oldest, &newest] {
            std::fs::write(damaged, b"damaged past its metadata").unwrap();
        }
        dying.delete(SLOT).unwrap_err();
        drop(dying);
        assert!(
            newest.exists() && !oldest.exists(),
            "died removing the newest"
        );

        let restarted = restart(dir.path());
        assert!(
            !restarted.is_deleted(&metas[2]).unwrap(),
            "the unread file's save"
        );
        assert!(!restarted.is_deleted(&metas[1]).unwrap(), "the head left");
    }

    /// Review 63b G2: a note this user may not read can never be settled: it goes, and the
    /// delete goes on (it would wait for it for good).
    #[test]
    fn a_note_that_can_never_be_read_does_not_jam_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let note = dir.path().join("default/manual-03.deleting");
        let refused = note.clone();
        let fs = Forward::os().on_open_read(move |fs, path| match path == refused {
            true => Err(std::io::ErrorKind::PermissionDenied.into()),
            false => fs.open_read(path),
        });
        let store = SlotStore::open_with(StoreConfig::new(dir.path()), Arc::new(fs)).unwrap();
        let meta = save(&store, 0);
        std::fs::write(&note, "= before 00000000\n").unwrap();
        assert_eq!(store.delete(SLOT).unwrap(), 1);
        assert!(store.is_deleted(&meta).unwrap());
    }

    /// Review 63 F6: a folder under the note's name leaves deletes as they were before notes
    /// (no note), rather than refuse every delete of the slot.
    #[test]
    fn a_folder_under_the_notes_name_does_not_jam_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let meta = save(&store, 0);
        std::fs::create_dir(dir.path().join("default/manual-03.deleting")).unwrap();
        assert_eq!(store.delete(SLOT).unwrap(), 1);
        assert!(store.is_deleted(&meta).unwrap());
        drop(store);
        SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    }

    /// Review 63 F5: a note naming more generations than any slot holds is no delete's: the
    /// store opens without settling it (the record stays as written) and removes it.
    #[test]
    fn a_hostile_note_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
        let meta = save(&store, 0);
        store.delete(SLOT).unwrap();
        let kept = save(&store, 1);
        drop(store);
        let mut text = String::from("= before\n");
        for generation in 0..5_000u64 {
            text += &format!("= {generation} {}\n", uuid::Uuid::new_v4().simple());
        }
        text += &format!("= 1 {}\n", kept.save_id.simple());
        let note = dir.path().join("default/manual-03.deleting");
        std::fs::write(&note, text).unwrap();

        let restarted = restart(dir.path());
        assert!(restarted.is_deleted(&meta).unwrap());
        assert!(!restarted.is_deleted(&kept).unwrap());
        assert!(!note.exists());
    }
}
