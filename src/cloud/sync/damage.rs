//! What this device lost to damage: saves whose copies here do not verify, and cloud saves a
//! damaged or unreadable file here may have been, fetched again to repair the slot.

use super::SyncCore;
use crate::SlotId;
use crate::cloud::error::CloudError;
use crate::cloud::remote::RemoteName;
use crate::store::StoredSave;
use object_store::ObjectMeta;
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;

impl SyncCore {
    /// The local saves whose newest copy here does not verify: damaged on this disk at rest
    /// where a load meets it (an older duplicate an interrupted import left does not count:
    /// the slot loads past it). Each generation is read in full once a session (a read that
    /// fails for a reason that may pass counts as intact until the next round).
    pub(super) fn damaged_locally(&mut self, local: &[StoredSave]) -> HashSet<Uuid> {
        let mut newest: HashMap<Uuid, &StoredSave> = HashMap::new();
        for save in local {
            let copy = newest.entry(save.meta.save_id).or_insert(save);
            if save.generation > copy.generation {
                *copy = save;
            }
        }
        let mut damaged = HashSet::new();
        for save in newest.into_values() {
            let key = (save.meta.save_id, save.generation);
            if self.verified_here.contains(&key) {
                continue;
            }
            match self.store.verify(save.slot, save.generation) {
                Ok(_) => {
                    self.verified_here.insert(key);
                }
                Err(error) if error.may_pass() => {}
                Err(_) => {
                    damaged.insert(save.meta.save_id);
                }
            }
        }
        damaged
    }

    /// The saves in the cloud that this device's slots may have lost to damage: not held here
    /// intact, no intact save here was made in view of them (pruning removes only what a newer
    /// save supersedes), and either a save here that does not verify (`damaged`) and that the
    /// cloud does not hold was made in view of them, or their slot holds a file that does not read for good (a save damaged
    /// past its metadata, or something that is not a file under a save's name, whose id and
    /// record cannot be told). A slot the player deleted holds no such file, so its saves are
    /// not brought back.
    pub(super) fn lost_locally(
        &self,
        listing: &[(RemoteName, ObjectMeta)],
        local: &[StoredSave],
        damaged: &HashSet<Uuid>,
    ) -> Result<HashSet<Uuid>, CloudError> {
        let (harmed, intact): (Vec<&StoredSave>, Vec<&StoredSave>) =
            (local.iter()).partition(|save| damaged.contains(&save.meta.save_id));
        // A damaged save the cloud holds is fetched itself; what it was made in view of is
        // fetched only when it cannot be (fetched too, an older save would be placed over the
        // damaged copy, and a crash before the repair landed would leave the older one alone).
        let in_cloud: HashSet<Uuid> = listing.iter().map(|(name, _)| name.save_id).collect();
        let harmed: Vec<&StoredSave> = (harmed.into_iter())
            .filter(|save| !in_cloud.contains(&save.meta.save_id))
            .collect();
        let names = |saves: &[&StoredSave], name: &RemoteName| {
            saves.iter().any(|save| {
                save.meta.save_id == name.save_id
                    || (save.slot == name.slot && save.meta.made_in_view_of(name.save_id))
            })
        };
        let mut lost = HashSet::new();
        let mut unreadable: BTreeMap<SlotId, bool> = BTreeMap::new();
        for (name, _) in listing {
            if names(&intact, name) {
                continue;
            }
            let slot_unreadable = match unreadable.get(&name.slot) {
                Some(&slot_unreadable) => slot_unreadable,
                None => {
                    let slot_unreadable = self.holds_unreadable_file(name.slot, local)?;
                    *unreadable.entry(name.slot).or_insert(slot_unreadable)
                }
            };
            if slot_unreadable || names(&harmed, name) {
                lost.insert(name.save_id);
            }
        }
        Ok(lost)
    }

    /// Whether `slot` holds a file no save was listed from that does not read for a reason
    /// that will not pass (a read that failed with EIO now is tried again next round).
    pub(super) fn holds_unreadable_file(
        &self,
        slot: SlotId,
        local: &[StoredSave],
    ) -> Result<bool, CloudError> {
        let listed = |generation: &u64| {
            (local.iter()).any(|save| save.slot == slot && save.generation == *generation)
        };
        let unlisted = self.store.generations(slot)?.into_iter();
        let unreadable = unlisted
            .filter(|generation| !listed(generation))
            .any(|generation| (self.store.verify(slot, generation)).is_err_and(|e| !e.may_pass()));
        Ok(unreadable)
    }
}
