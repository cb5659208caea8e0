//! What the player deleted: before a delete removes a slot's files, the ids of the saves it
//! held (and of the saves those were made in view of) are added to the slot's record,
//! `<slot>.deleted` beside its saves, one id per line, newest last, the last
//! [`DELETED_KEPT`] kept; then one line with the union of the deleted saves' version vectors
//! ([`Versions::union`]), which names every save they were made in view of however far back
//! along its line (the ids stop at what each save's record lists). Cloud sync never downloads
//! a save this record names, and an import places no save it covers
//! ([`SlotStore::deleted_here`]), so a save the player deleted does not come back from another
//! device or the bucket: after a crash that kept the download but not the sync state's note
//! of it, when a file that does not read makes the slot look damaged, or when the sync state
//! was lost and this device's own older saves in the cloud look like another device's.
//! Builds before the vector line read the ids and pass over it.
//!
//! The record is written durably (temporary file, fsync, rename, folder fsync) under the slot's
//! lock, before the first file is removed: a delete that cannot write it removes nothing.

use super::error::StoreError;
use super::fs::FOLDER;
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::format::{SaveMeta, VERSION_MARK, Versions};
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
        self.record_of(slot).unwrap_or_default().ids
    }

    /// Whether the player deleted the save `meta` describes from its slot here, or a save made
    /// in view of it: the slot's record names it, or the union of the deleted saves' version
    /// vectors holds its own count (a save further back along a deleted save's line than the
    /// ids a record lists, such as this device's own older save in the cloud under the device
    /// id it had before its sync state was lost). An import does not place such a save
    /// ([`ImportOutcome::Deleted`](super::ImportOutcome::Deleted)). A record that cannot be
    /// read names nothing.
    pub fn deleted_here(&self, meta: &SaveMeta) -> bool {
        let Ok(record) = self.record_of(meta.slot) else {
            return false;
        };
        record.ids.contains(&meta.save_id)
            || (record.versions.zip(meta.versions()))
                .is_some_and(|(deleted, versions)| deleted.includes(&versions))
    }

    /// The ids in `slot`'s record, oldest first, for a delete about to replace the record. A
    /// record that cannot be read counts as empty, except a folder under its name, which is
    /// refused ([`StoreError::UnusableEntry`]) before anything is written or removed: the
    /// record is replaced by a rename, which no folder gives way to. Any other entry there (a
    /// FIFO, a link, a file that does not read for good) is replaced: whatever ids it held
    /// cannot be read anyway. A read that fails for a reason that may pass refuses the delete.
    fn record_of(&self, slot: SlotId) -> Result<Record, StoreError> {
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
        Ok(Record::parse(&bytes))
    }

    /// Adds the saves `slot` holds, and those they were made in view of, to its record. Call
    /// it under the slot's lock, before removing anything.
    pub(super) fn note_deleted(&self, slot: SlotId) -> Result<(), StoreError> {
        let held = self.saves_in(slot)?;
        let deleted = held.iter().flat_map(|save| {
            let follows = save.meta.follows().into_iter().flatten();
            std::iter::once(save.meta.save_id).chain(follows)
        });
        let Record { mut ids, versions } = self.record_of(slot)?;
        ids.extend(deleted);
        // The saves deleted now first: past the limit of lines, the oldest deletes' go.
        let vectors: Vec<Versions> = held
            .iter()
            .filter_map(|save| save.meta.versions())
            .collect();
        let versions = Versions::union(vectors.iter().chain(&versions));
        let mut seen = HashSet::new();
        let mut newest_first: Vec<Uuid> = ids
            .into_iter()
            .rev()
            .filter(|id| seen.insert(*id))
            .collect();
        newest_first.truncate(DELETED_KEPT);
        let ids = newest_first.iter().rev().map(|id| id.simple().to_string());
        let lines: Vec<String> = ids.chain(versions.map(|v| v.to_string())).collect();
        self.write_profile_file(&record_name(slot), (lines.join("\n") + "\n").as_bytes())
    }
}

/// A slot's record of deleted saves, as read.
#[derive(Debug, Default)]
struct Record {
    /// The deleted saves and those they were made in view of, oldest first.
    ids: Vec<Uuid>,
    /// The union of the deleted saves' version vectors, if any recorded one.
    versions: Option<Versions>,
}

impl Record {
    /// Reads a record's lines: save ids, and the line of version vector entries (which
    /// starts with [`VERSION_MARK`]); anything else is passed over.
    fn parse(bytes: &[u8]) -> Self {
        let text = String::from_utf8_lossy(bytes);
        let ids = text.lines().filter_map(|line| Uuid::try_parse(line).ok());
        let mut vectors = text.lines().filter(|line| line.starts_with(VERSION_MARK));
        Record {
            ids: ids.collect(),
            versions: vectors.find_map(Versions::parse),
        }
    }
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
        assert!(!store.deleted_saves().contains(&old.meta().save_id));
        assert!(store.deleted_here(old.meta()));
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
}
