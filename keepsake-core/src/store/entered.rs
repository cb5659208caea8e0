//! What entered each slot: `<slot>.entered` beside its saves names every save placed in the
//! slot here (a save made here, an import from the cloud), one id per line, newest last, the
//! last [`ENTERED_KEPT`] kept, then each line's highest count among them (`@<line>:<count>`,
//! the format of the record of deleted saves, see `id_record.rs`).
//!
//! Why the ids: a delete names what it removes by reading each generation's metadata, and a
//! generation that does not read when the player deletes the slot (damaged past its metadata,
//! a file a newer build wrote in a format this build cannot read, an odd entry in its place)
//! cannot be named from its file. Unnamed, its save came back from the cloud into the slot the
//! player had emptied: by the repair of a slot that holds a file that does not read, or once
//! the sync state, which knew the save, was lost (simulator seeds 300824, 400541, 439224). A
//! delete over such a file names every id of this record too (`deleted.rs`).
//!
//! Why the counts: a save goes on counting its device's line only where no save of the slot
//! may hold a later count of it. A file that does not read may: the record says how far the
//! line went (`SlotStore::with_versions`).
//!
//! A save's entry is written before its file (the id of a file a power loss may bring back
//! after a failed save is no harm to name, and its count must not be given again); an import's
//! after its file is placed (an import that failed must not count as entered: a delete would
//! name another device's save that never came, and it never would), and again when the same
//! save arrives once more and the record lacks it (a crash between the file and the entry).
//! Each write also names the saves the slot holds that the record lacks (an earlier entry
//! that could not be written). The record is flushed (fsync) and renamed into place; a save's
//! folder flush that follows makes the rename durable, and an import flushes the folder after
//! it. A record that cannot be written does not fail a save (a hint there: the next entry
//! names it), but fails an import, which takes its file out again to arrive again (simulator
//! seed 545099). One that does not read counts as empty, except for a reason that may pass,
//! which refuses a delete that needs it before anything is removed, as a generation that
//! cannot be read now does, and fails an import; an odd entry under its name (a folder) that
//! the record cannot replace leaves the slot without it rather than jam its imports.

use super::durable::replace_flushed_later;
use super::error::StoreError;
use super::id_record::IdRecord;
use super::import::StoredSave;
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::format::SaveMeta;
use crate::slot::SlotId;

/// How many ids, and lines, a slot's record of what entered it keeps (the newest) besides
/// those of the saves the slot holds.
pub const ENTERED_KEPT: usize = 64;

/// The name of a slot's record of the saves that entered it.
pub fn entered_record_name(slot: SlotId) -> String {
    format!("{}.entered", slot_stem(slot))
}

impl IdRecord {
    /// Whether the record names `meta`'s save and holds its own count.
    fn names(&self, meta: &SaveMeta) -> bool {
        let counted = meta.versions().is_none_or(|versions| {
            let (line, count) = versions.own();
            self.count(line).is_some_and(|held| held >= count)
        });
        counted && self.ids.contains(&meta.save_id)
    }

    /// Adds `meta`'s save: its id (at the newest place) and its own count.
    fn enter(&mut self, meta: &SaveMeta) {
        self.ids.push(meta.save_id);
        self.raise_own(meta);
    }

    /// Whether [`enter_held`](Self::enter_held) would add to the record.
    fn lacks_held(&self, meta: &SaveMeta) -> bool {
        let behind = meta.versions().is_some_and(|versions| {
            let (line, count) = versions.own();
            self.count(line).is_some_and(|held| held < count)
        });
        behind || !self.ids.contains(&meta.save_id)
    }

    /// Adds a save the slot holds: its id where the record lacks it (one it names keeps its
    /// place: it entered then), and its own count only on a line the record holds. A held
    /// save's count is a floor of how far its line went here, not the count: a record with
    /// no line for it lets a save of this device start a new line rather than repeat a count
    /// a newer save, damaged now, may hold (`SlotStore::with_versions`).
    fn enter_held(&mut self, meta: &SaveMeta) {
        if !self.ids.contains(&meta.save_id) {
            self.ids.push(meta.save_id);
        }
        if let Some(versions) = meta.versions() {
            let (line, count) = versions.own();
            if self.count(line).is_some() {
                self.raise(line, count);
            }
        }
    }

    /// Raises `meta`'s own line to its count.
    fn raise_own(&mut self, meta: &SaveMeta) {
        if let Some(versions) = meta.versions() {
            let (line, count) = versions.own();
            self.raise(line, count);
        }
    }
}

impl SlotStore {
    /// The saves that entered `slot` here, as far as its record goes (see the module docs in
    /// `entered.rs`): empty when the record does not read for good; an error when it fails
    /// for a reason that may pass (an I/O error).
    pub(super) fn entered(&self, slot: SlotId) -> Result<IdRecord, StoreError> {
        Ok(self.read_entered(slot)?.unwrap_or_default())
    }

    /// As [`entered`](Self::entered), with `None` where an odd entry (a folder, a FIFO, a
    /// device) holds the record's name.
    fn read_entered(&self, slot: SlotId) -> Result<Option<IdRecord>, StoreError> {
        match self.read_profile_file(&entered_record_name(slot)) {
            Ok(Some(bytes)) => Ok(Some(IdRecord::parse(&String::from_utf8_lossy(&bytes)))),
            Err(StoreError::NotAFile { .. }) => Ok(None),
            Err(error) if error.may_pass() => Err(error),
            Ok(None) | Err(_) => Ok(Some(IdRecord::default())),
        }
    }

    /// Adds `meta`'s save to `slot`'s record of what entered it, and every save of `held` (what
    /// the slot holds, read under its lock) the record does not name yet, before it. Call it
    /// under the slot's lock. A record that cannot be read now is left as it is (rewritten, it
    /// would lose what it holds) and the error returned, as is one that cannot be written: a
    /// save goes on without its entry (a hint, named by the next entry), an import does not.
    ///
    /// Why the held saves: a save's entry that could not be written (a disk fault) left its
    /// save unnamed, and should its file stop reading, a delete would not name it and the
    /// cloud would bring it back into the slot the player emptied (simulator seed 531876).
    /// Every later write of the record names it while its file still reads.
    pub(super) fn note_entered(
        &self,
        slot: SlotId,
        meta: &SaveMeta,
        held: &[StoredSave],
    ) -> Result<(), StoreError> {
        let read = self.read_entered(slot)?;
        let odd = read.is_none();
        let mut record = read.unwrap_or_default();
        let unnamed_held: Vec<&SaveMeta> = (held.iter().rev())
            .map(|save| &save.meta)
            .filter(|held| record.lacks_held(held))
            .collect();
        if unnamed_held.is_empty() && record.names(meta) {
            return Ok(());
        }
        for held in unnamed_held {
            record.enter_held(held);
        }
        if !record.names(meta) {
            record.enter(meta);
        }
        // The held saves' ids besides the newest others: with many backups, held ids pushed
        // again would otherwise evict the ids only this record names (files that do not read).
        let text = record.text(ENTERED_KEPT + held.len());
        let name = entered_record_name(slot);
        match replace_flushed_later(self.fs.as_ref(), &self.dir, &name, &[text.as_bytes()]) {
            // An odd entry the record cannot replace (a folder) leaves the slot without it, as
            // before the record existed, rather than jam every import into the slot.
            Err(_) if odd => Ok(()),
            written => written.map(|_| ()),
        }
    }
}
