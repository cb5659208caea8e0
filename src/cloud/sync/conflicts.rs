//! Conflicts: saves two devices made apart, recorded when one lands below the other, found
//! again from the slots themselves, and settled by the player's choice.

use super::SyncCore;
use crate::SlotId;
use crate::cloud::error::CloudError;
use crate::cloud::remote::RemoteName;
use crate::cloud::state::Conflict;
use crate::format::{Lineage, SaveMeta};
use crate::store::{ImportOutcome, ImportReceipt, StoredSave};
use std::collections::{BTreeMap, HashSet};
use uuid::Uuid;

impl SyncCore {
    /// Makes the save hidden by the slot's conflict head the slot (the player chose it), and
    /// clears the conflict; `None` when the slot has no conflict. The other save stays, one
    /// generation below. The choice is written to the state file before this returns.
    ///
    /// A hidden save no longer among the local saves (damaged on this disk, or removed by hand)
    /// is downloaded again. One the cloud does not have either (or no longer verifies) cannot
    /// be chosen: the conflict is cleared and [`CloudError::HiddenSaveGone`] says so. A
    /// network error leaves the conflict for a later try.
    pub async fn use_hidden_save(&mut self, slot: SlotId) -> Result<Option<u64>, CloudError> {
        let Some(conflict) = self.state.conflicts.get(&slot).cloned() else {
            return Ok(None);
        };
        let here = self.store.saves_in(slot)?;
        let hidden = match here.iter().find(|s| s.meta.save_id == conflict.hidden_save) {
            Some(hidden) => hidden.generation,
            None => self.download_hidden(slot, &conflict).await?,
        };
        // The head the player saw: the store records it as passed over (`choosing.rs`), so a
        // lost state file does not show it as a conflict again.
        let passed_over = here.first();
        let generation = (self.store).promote(slot, hidden, passed_over.map(|head| &head.meta))?;
        self.state.settle_shown(slot);
        let passed_over = passed_over.filter(|head| head.meta.save_id != conflict.hidden_save);
        if let Some(passed_over) = passed_over {
            let aside = self.state.set_aside.entry(slot).or_default();
            aside.insert(passed_over.meta.save_id);
        }
        let now = self.now().unix_millis();
        self.state.chosen.insert(slot, now);
        self.dirty = true;
        self.persist();
        Ok(Some(generation))
    }

    /// Downloads the hidden save of `slot`'s conflict again and returns its generation, or
    /// clears the conflict and says why it cannot be had.
    pub(super) async fn download_hidden(
        &mut self,
        slot: SlotId,
        conflict: &Conflict,
    ) -> Result<u64, CloudError> {
        let listing = self.list_remote().await?;
        let wanted = |name: &RemoteName| name.slot == slot && name.save_id == conflict.hidden_save;
        let reason = match listing.kept.iter().find(|(name, _)| wanted(name)) {
            // The player's choice: placed whatever they did here before (never `None`).
            Some((name, object)) => match self.download(name, object, None).await? {
                Ok(Some(ImportOutcome::Placed(receipt))) => return Ok(receipt.generation),
                Ok(Some(ImportOutcome::AlreadyPresent { generation, .. })) => {
                    return Ok(generation);
                }
                Ok(Some(ImportOutcome::Deleted { .. })) => {
                    "the player deleted it here, or a save made after it".to_owned()
                }
                Ok(Some(ImportOutcome::Superseded { by, .. })) => {
                    format!("the save {by} here was made after it, in view of it")
                }
                Ok(None) => "the player moved past it here".to_owned(),
                Err(rejection) => format!("the cloud's copy is refused: {rejection}"),
            },
            None => "neither this device nor the cloud has it any more".to_owned(),
        };
        self.state.settle_shown(slot);
        self.dirty = true;
        self.persist();
        Err(CloudError::HiddenSaveGone {
            slot,
            device: conflict.hidden_device.clone(),
            save_id: conflict.hidden_save,
            reason,
        })
    }

    /// Records the conflicts the slots hold but no record names: another device's save made
    /// apart from the one heading its slot (see [`unseen`]), that no save here was made in view
    /// of and the player did not pass over. An import that landed just before a crash, whose
    /// state write did not, is found this way in the next round; so is a conflict two imports
    /// of one round made between saves the slot already held.
    ///
    /// `settled`: what the player deleted or passed over, as the store records it (a lost
    /// state file takes its own record of the saves passed over with it).
    pub(super) fn reconcile_conflicts(&mut self, local: &[StoredSave], settled: &HashSet<Uuid>) {
        let mut slots: BTreeMap<SlotId, Vec<&StoredSave>> = BTreeMap::new();
        for save in local {
            slots.entry(save.slot).or_default().push(save);
        }
        for (slot, saves) in slots {
            let Some((head, below)) = saves.split_first() else {
                continue;
            };
            for save in below {
                let id = save.meta.save_id;
                let recorded = self.state.conflicts_of(slot).any(|c| c.hidden_save == id);
                let aside = settled.contains(&id)
                    || (self.state.set_aside.get(&slot)).is_some_and(|a| a.contains(&id));
                let followed = followed_in(saves.iter().copied(), &save.meta);
                let reached = self.state.in_cloud.get(&id).copied();
                if id == head.meta.save_id || recorded || aside || followed {
                    continue;
                }
                if unseen(&save.meta, &head.meta, reached) {
                    let conflict = Conflict {
                        hidden_device: save
                            .meta
                            .device_name()
                            .unwrap_or("another device")
                            .to_owned(),
                        hidden_save: id,
                    };
                    self.state.add_conflict(slot, conflict, |_| false);
                    self.dirty = true;
                }
            }
        }
    }

    /// Records a conflict when a placed save and the slot's previous head were made on two
    /// devices that could not have seen each other's save (see [`unseen`]). The hidden side
    /// is the older one, unless a save the slot holds was made in view of it: then it is not
    /// the other device's newest, and the conflict already recorded (with that newer save, or
    /// with a save it will bring) stands.
    pub(super) fn note_conflict(&mut self, receipt: &ImportReceipt, arrived_uploaded_ms: i64) {
        // The conflicts the placed save settles (see `import_rules`, which no longer kept
        // their hidden saves): shown, they would offer a save the import may have pruned.
        let arrived = &receipt.meta;
        (self.state).forget_conflicts(receipt.slot, |c| arrived.made_in_view_of(c.hidden_save));
        let Some(previous) = &receipt.previous_head else {
            return;
        };
        let (older, newer, older_reached_cloud) = if receipt.heads_slot {
            let reached = self.state.in_cloud.get(&previous.save_id).copied();
            (previous, &receipt.meta, reached)
        } else {
            (&receipt.meta, previous, Some(arrived_uploaded_ms))
        };
        if !unseen(older, newer, older_reached_cloud) || self.passed_over(receipt.slot, older) {
            return;
        }
        let held = self.store.saves_in(receipt.slot).unwrap_or_default();
        let head = if receipt.heads_slot {
            receipt.meta.save_id
        } else {
            previous.save_id
        };
        // A save the slot holds that was made in view of the hidden one settles it: by its id,
        // or, the hidden save being held here too, by the version vectors of the two.
        let settled = |hidden: &Uuid| {
            let meta = held.iter().find(|save| save.meta.save_id == *hidden);
            *hidden == head
                || held.iter().any(|save| save.meta.made_in_view_of(*hidden))
                || meta.is_some_and(|hidden| followed_in(held.iter(), &hidden.meta))
        };
        if settled(&older.save_id) {
            return;
        }
        let conflict = Conflict {
            hidden_device: older.device_name().unwrap_or("another device").to_owned(),
            hidden_save: older.save_id,
        };
        self.state
            .add_conflict(receipt.slot, conflict, |old| settled(&old.hidden_save));
    }

    /// Whether the player passed `save` over in `slot` (the store's record of settled saves,
    /// or this state's): a repaired choice placed back over it does not show it as a
    /// conflict again (review 61b G2). A record that cannot be read counts as not settled.
    fn passed_over(&self, slot: SlotId, save: &SaveMeta) -> bool {
        let aside = self.state.set_aside.get(&slot);
        aside.is_some_and(|aside| aside.contains(&save.save_id))
            || self.store.is_deleted(save).unwrap_or(false)
    }

    /// Every conflict of `slot`, the one the menu shows first: the saves of other devices made
    /// apart from the one heading the slot, which the player has not yet settled.
    pub fn conflicts(&self, slot: SlotId) -> Vec<Conflict> {
        self.state.conflicts_of(slot).cloned().collect()
    }
}

/// Whether one of `saves` (other than `save` itself) was made in view of `save`, by its list of
/// ids or its version vector ([`SaveMeta::made_in_view_of_save`]).
pub(super) fn followed_in<'a>(
    saves: impl IntoIterator<Item = &'a StoredSave>,
    save: &SaveMeta,
) -> bool {
    let mut others = saves
        .into_iter()
        .filter(|other| other.meta.save_id != save.save_id);
    others.any(|other| other.meta.made_in_view_of_save(save))
}

/// Whether two saves were made on one device (as far as their metadata tells).
pub(super) fn same_device(one: &SaveMeta, other: &SaveMeta) -> bool {
    one.device_id().is_some() && one.device_id() == other.device_id()
}

/// Whether `arriving`, placed below `local`, would be the hidden side of a conflict with it
/// (as [`SyncCore::note_conflict`] decides once it is placed): `local`'s device could not have
/// seen it, having reached the cloud (at `uploaded_ms`) only after `local` was made.
pub(super) fn crossed_below(local: &SaveMeta, arriving: &SaveMeta, uploaded_ms: i64) -> bool {
    unseen(arriving, local, Some(uploaded_ms))
}

/// Whether the device that made `by` could not have had `save` in view: the two were made
/// apart, on two devices, and one of them is a conflict the player must see.
///
/// What the saves record decides ([`SaveMeta::lineage`]): made in view of each other one way or
/// the other, they are not apart, whatever the clocks say; recorded apart, they are, even when
/// one device made both (the player deleted the first in between, and another device still
/// holds it: which of the two the player wants there, only the player knows). For saves that
/// record nothing (from builds before [`FOLLOWS_EXTRA`](crate::format::FOLLOWS_EXTRA)), one
/// device's saves are taken to follow each other, and otherwise the cloud's times stand in:
/// `save` counts as seen when it reached the cloud (`save_reached_ms`) before `by` was made.
/// That guess is wrong for a device that was offline or did not sync in between, which is why
/// saves record what they were made in view of.
pub(super) fn unseen(save: &SaveMeta, by: &SaveMeta, save_reached_ms: Option<i64>) -> bool {
    match by.lineage(save) {
        Lineage::Follows | Lineage::Precedes => false,
        Lineage::Concurrent => true,
        Lineage::Unrecorded => {
            !same_device(save, by)
                && save_reached_ms.is_none_or(|ms| ms > by.created_at.unix_millis())
        }
    }
}
