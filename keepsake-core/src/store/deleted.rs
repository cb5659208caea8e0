//! What the player deleted: before a delete removes a slot's files, the ids of the saves it
//! held (and of the saves those were made in view of) are added to the slot's record,
//! `<slot>.deleted` beside its saves, one id per line, newest last, the last
//! [`DELETED_KEPT`] kept. Cloud sync never downloads a save this record names, so a save the
//! player deleted does not come back from another device or the bucket: after a crash that
//! kept the download but not the sync state's note of it, or when a file that does not read
//! makes the slot look damaged.
//!
//! The record is written durably (temporary file, fsync, rename, folder fsync) under the slot's
//! lock, before the first file is removed: a delete that cannot write it removes nothing.

use super::error::StoreError;
use super::fs::FOLDER;
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::slot::SlotId;
use std::collections::HashSet;
use uuid::Uuid;

/// How many deleted save ids a slot's record keeps (the newest).
pub const DELETED_KEPT: usize = 256;

/// The name of a slot's record of deleted saves.
fn record_name(slot: SlotId) -> String {
    format!("{}.deleted", slot_stem(slot))
}

impl SlotStore {
    /// The saves the player deleted from any slot of this profile, as far as the slots' records
    /// go (see the module docs in `deleted.rs`). A record that cannot be read counts as empty.
    pub fn deleted_saves(&self) -> HashSet<Uuid> {
        let slots = self.config().layout.slots();
        slots.flat_map(|slot| self.deleted_in(slot)).collect()
    }

    /// The ids in `slot`'s record, oldest first; none when it cannot be read.
    fn deleted_in(&self, slot: SlotId) -> Vec<Uuid> {
        self.record_of(slot).unwrap_or_default()
    }

    /// The ids in `slot`'s record, oldest first, for a delete about to replace the record. A
    /// record that cannot be read counts as empty, except a folder under its name, which is
    /// refused ([`StoreError::UnusableEntry`]) before anything is written or removed: the
    /// record is replaced by a rename, which no folder gives way to. Any other entry there (a
    /// FIFO, a link, a file that does not read for good) is replaced: whatever ids it held
    /// cannot be read anyway. A read that fails for a reason that may pass refuses the delete.
    fn record_of(&self, slot: SlotId) -> Result<Vec<Uuid>, StoreError> {
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
            Ok(None) | Err(_) => return Ok(Vec::new()),
        };
        let text = String::from_utf8_lossy(&bytes);
        Ok(text
            .lines()
            .filter_map(|line| Uuid::try_parse(line).ok())
            .collect())
    }

    /// Adds the saves `slot` holds, and those they were made in view of, to its record. Call
    /// it under the slot's lock, before removing anything.
    pub(super) fn note_deleted(&self, slot: SlotId) -> Result<(), StoreError> {
        let held = self.saves_in(slot)?;
        let deleted = held.iter().flat_map(|save| {
            let follows = save.meta.follows().into_iter().flatten();
            std::iter::once(save.meta.save_id).chain(follows)
        });
        let mut ids = self.record_of(slot)?;
        ids.extend(deleted);
        let mut seen = HashSet::new();
        let mut newest_first: Vec<Uuid> = ids
            .into_iter()
            .rev()
            .filter(|id| seen.insert(*id))
            .collect();
        newest_first.truncate(DELETED_KEPT);
        let lines: Vec<String> = newest_first
            .iter()
            .rev()
            .map(|id| id.simple().to_string())
            .collect();
        self.write_profile_file(&record_name(slot), (lines.join("\n") + "\n").as_bytes())
    }
}
