//! Downloads: which cloud saves a round fetches, how each is read (bounded), verified and
//! placed, and what is recorded of it.

use super::conflicts::{crossed_below, unseen};
use super::{Refused, SyncCore, SyncRound};
use crate::SlotId;
use crate::cloud::error::{CloudError, Rejection};
use crate::cloud::remote::{RemoteName, UploadClock};
use crate::cloud::verify::verify_remote_save;
use crate::format::{SaveMeta, Timestamp};
use crate::store::{ImportOutcome, ImportRules};
use futures_util::StreamExt;
use object_store::{ObjectMeta, ObjectStoreExt};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

impl SyncCore {
    /// Downloads, verifies and places every listed save this device does not `have` (hold
    /// intact, or moved past) or holds `damaged`. A file that
    /// cannot be fetched or placed now is skipped for this round (the next round tries it
    /// again) and never stops the others; the first such error is returned at the end.
    pub(super) async fn download_missing(
        &mut self,
        listing: &[(RemoteName, ObjectMeta)],
        (have, damaged): (&HashSet<Uuid>, &HashSet<Uuid>),
        round: &mut SyncRound,
    ) -> Option<CloudError> {
        let mut first_error = None;
        let mut frozen = HashMap::new();
        // Repairs first, newest first: a round cut short (a crash, the network) then leaves
        // the newest save it fetched heading a slot whose copies here were damaged, never an
        // older one over the player's last save; older ones arriving after it go below it,
        // or are not placed at all (a save here was made in view of them).
        let repairs = listing
            .iter()
            .filter(|(name, _)| damaged.contains(&name.save_id));
        let others = listing
            .iter()
            .filter(|(name, _)| !damaged.contains(&name.save_id));
        for (name, object) in repairs.rev().chain(others) {
            let text = name.to_string();
            // A save damaged here is fetched again, its own device's included. Otherwise a save
            // this device made and no longer holds was deleted or pruned here: it is not brought
            // back (whether or not the state file recorded its upload before a crash). Made
            // under an id a lost state file took with it, it is fetched, and not placed: see
            // `moved_past_here`.
            let own = name.device_id == self.device_id();
            let repair = damaged.contains(&name.save_id);
            let known = !repair
                && (own
                    || have.contains(&name.save_id)
                    || self.state.in_cloud.contains_key(&name.save_id))
                || self.state.refused.contains_key(&text)
                || self.state.newer_format_known(&text);
            if known {
                // A save passed over because a save here moved past it is recorded as known, so
                // it is not fetched once no save here names it any more (a delete, or more
                // saves than a record holds).
                let unrecorded = !self.state.in_cloud.contains_key(&name.save_id);
                if !own && unrecorded && have.contains(&name.save_id) {
                    let uploaded = object.last_modified.timestamp_millis();
                    self.state.in_cloud.insert(name.save_id, uploaded);
                    self.dirty = true;
                }
                continue;
            }
            if self.frozen_here(name.slot, &mut frozen) {
                continue;
            }
            match self.download(name, object, Some(damaged)).await {
                // Written as each import lands, so a crash later in the round loses no
                // conflict it recorded.
                Ok(outcome) => {
                    self.record_download(name, object, outcome, round);
                    self.persist();
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        first_error
    }

    /// Whether `slot` here holds a newer build's save, which takes no import (asked once a
    /// round per slot, in `asked`): its remote saves are not fetched now, nor recorded as
    /// refused, since what stops them is this slot, not the files. Once the player deletes the
    /// slot (or the newer build's file leaves it), the next round fetches them. A slot that
    /// cannot be asked now counts as free: the import decides.
    pub(super) fn frozen_here(&self, slot: SlotId, asked: &mut HashMap<SlotId, bool>) -> bool {
        let holds = || self.store.holds_newer_format(slot).unwrap_or(false);
        *asked.entry(slot).or_insert_with(holds)
    }

    /// Records what became of one downloaded file (`None`: not placed, the player moved past
    /// it here; known from now on, as a save held here is).
    pub(super) fn record_download(
        &mut self,
        name: &RemoteName,
        object: &ObjectMeta,
        outcome: Result<Option<ImportOutcome>, Rejection>,
        round: &mut SyncRound,
    ) {
        let text = name.to_string();
        match outcome {
            Ok(outcome) => {
                let uploaded = object.last_modified.timestamp_millis();
                self.state.in_cloud.insert(name.save_id, uploaded);
                if let Some(ImportOutcome::Placed(receipt)) = outcome {
                    self.note_conflict(&receipt, uploaded);
                    round.arrived.push(*receipt);
                }
            }
            // The file itself is from a newer format: not fetched again until an update.
            Err(Rejection::NewerFormat { .. }) => {
                self.state.note_newer_format(text);
            }
            // The local slot refused it (a newer build's save came there since the round
            // looked): nothing about the file is recorded, so it is fetched once the slot
            // takes saves again (see `frozen_here`). Remembered under the file's name, it
            // would never come, though the player deleted the slot.
            Err(Rejection::SlotHoldsNewerFormat(_)) => {}
            Err(rejection) => {
                let reason = rejection.to_string();
                self.state.refused.insert(text.clone(), reason.clone());
                round.refused.push(Refused { name: text, reason });
            }
        }
        self.dirty = true;
    }

    /// Fetches, verifies and places one remote save. The outer error is the network's or the
    /// local store's (retried later); the inner one refuses the file for good.
    ///
    /// A round's download (`damaged`: the saves damaged here) is not placed, and comes back
    /// `None`, when the player moved past it here ([`moved_past_here`](Self::moved_past_here));
    /// a save the player chose (`None`) is placed all the same.
    pub(super) async fn download(
        &mut self,
        name: &RemoteName,
        object: &ObjectMeta,
        damaged: Option<&HashSet<Uuid>>,
    ) -> Result<Result<Option<ImportOutcome>, Rejection>, CloudError> {
        let limit = self.store.config().decode_options().limits.max_file_len();
        if object.size > limit {
            let len = object.size;
            return Ok(Err(Rejection::TooLarge { len, limit }));
        }
        let location = self.remote.path_of(name);
        let remote_error = |source| CloudError::Remote {
            action: "download",
            location: location.to_string(),
            source,
        };
        let result = self
            .remote
            .store
            .get(&location)
            .await
            .map_err(remote_error)?;
        let bytes = match read_bounded(result, limit).await.map_err(remote_error)? {
            Ok(bytes) => bytes,
            Err(len) => return Ok(Err(Rejection::TooLarge { len, limit })),
        };
        let verified = match verify_remote_save(name, &bytes, &self.store) {
            Ok(verified) => verified,
            Err(rejection) => return Ok(Err(rejection)),
        };
        if let Some(damaged) = damaged
            && self.moved_past_here(verified.meta(), damaged)?
        {
            return Ok(Ok(None));
        }
        let uploaded_ms = object.last_modified.timestamp_millis();
        let rules = self.import_rules(verified.meta(), uploaded_ms)?;
        match self.store.import_with(verified.into_import(), &rules) {
            Ok(outcome) => Ok(Ok(Some(outcome))),
            Err(error) if error.is_newer_format() => {
                Ok(Err(Rejection::SlotHoldsNewerFormat(name.slot)))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Whether the player here has moved past `arriving` for good, so a round does not place
    /// it: they deleted it or a save made in view of it (the store's record of deletes keeps
    /// ids and version vectors), or, unless it comes to repair a save `damaged` here, an intact
    /// save of its slot here was made in view of it. Placed, it would come back into a slot the
    /// player emptied, or below the player's newer saves in the place of a backup.
    ///
    /// This device's own saves are told apart in the cloud by its id, and the saves found
    /// there by the state file's record, only while the state file lasts: lost, garbled or
    /// unreadable, a fresh state knows neither. What the saves and the store record does not
    /// depend on it.
    pub(super) fn moved_past_here(
        &self,
        arriving: &SaveMeta,
        damaged: &HashSet<Uuid>,
    ) -> Result<bool, CloudError> {
        if self.store.is_deleted(arriving)? {
            return Ok(true);
        }
        if damaged.contains(&arriving.save_id) {
            return Ok(false);
        }
        let held = self.store.saves_in(arriving.slot)?;
        let mut intact = (held.iter()).filter(|save| !damaged.contains(&save.meta.save_id));
        Ok(intact.any(|save| save.meta.made_in_view_of_save(arriving)))
    }

    /// What the import of `arriving` (which reached the cloud at `uploaded_ms`) must respect:
    /// every save the player may be shown as a conflict's hidden save is kept whatever the
    /// backups, and the player's choice of the slot's head, if any, stands against saves made
    /// before it.
    ///
    /// Kept: the slot's saves `arriving`'s device could not have seen (they are in conflict
    /// with it until the player chooses), the hidden save of a recorded conflict, and
    /// `arriving` itself when it may land below a save it crossed (see
    /// [`crossed_below`]). Which generation heads the slot is the import's
    /// to decide, so `arriving` is kept when any local save could be that head; should it head
    /// the slot instead, keeping it changes nothing.
    pub(super) fn import_rules(
        &self,
        arriving: &SaveMeta,
        uploaded_ms: i64,
    ) -> Result<ImportRules, CloudError> {
        let slot = arriving.slot;
        let local = self.store.saves_in(slot)?;
        let mut keep: HashSet<Uuid> = local
            .iter()
            .filter(|save| self.unseen_by(&save.meta, arriving))
            .map(|save| save.meta.save_id)
            .collect();
        // A conflict the arriving save settles (it was made in view of the hidden save, by
        // its id) no longer keeps its hidden save, which is then a backup as any older save
        // is; `note_conflict` forgets the conflict once the save is placed. Kept past the
        // backups, it outlived the saves made after it, and when the disk destroyed the head
        // the slot loaded it, below the player's confirmed save (simulator seed 402638).
        keep.extend(
            (self.state.conflicts_of(slot).map(|c| c.hidden_save))
                .filter(|&hidden| !arriving.made_in_view_of(hidden)),
        );
        if local
            .iter()
            .any(|save| crossed_below(&save.meta, arriving, uploaded_ms))
        {
            keep.insert(arriving.save_id);
        }
        let chosen_at = self.state.chosen.get(&slot).copied();
        let uploaded_at = (self.remote.upload_clock == UploadClock::Storage)
            .then(|| Timestamp::from_unix_millis(uploaded_ms));
        Ok(ImportRules {
            keep,
            chosen_at: chosen_at.map(Timestamp::from_unix_millis),
            uploaded_at,
        })
    }

    /// Whether `arriving`'s device could not have seen `local` (see [`unseen`]).
    pub(super) fn unseen_by(&self, local: &SaveMeta, arriving: &SaveMeta) -> bool {
        let reached = self.state.in_cloud.get(&local.save_id).copied();
        unseen(local, arriving, reached)
    }
}

/// Reads a downloaded object's body, stopping before it passes `limit` bytes: a storage whose
/// listing understated an object's size (or whose answer is hostile) never makes this device
/// hold more than the limit, nor reserve more (the buffer grows by doubling, capped at the
/// limit). The inner error is the length reached when it stopped.
pub(super) async fn read_bounded(
    result: object_store::GetResult,
    limit: u64,
) -> Result<Result<Vec<u8>, u64>, object_store::Error> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut stream = result.into_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let reached = bytes.len().saturating_add(chunk.len());
        if reached > limit {
            return Ok(Err(reached as u64));
        }
        grow_within(&mut bytes, reached, limit);
        bytes.extend_from_slice(&chunk);
    }
    Ok(Ok(bytes))
}

/// Makes room for `needed` bytes in `bytes`, doubling its capacity as a `Vec` would, but never
/// past `limit` (`needed <= limit`).
pub(super) fn grow_within(bytes: &mut Vec<u8>, needed: usize, limit: usize) {
    if needed > bytes.capacity() {
        let target = needed.max(bytes.capacity().saturating_mul(2)).min(limit);
        bytes.reserve_exact(target - bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::grow_within;

    /// A body read in small chunks up to the limit never reserves past the limit (a `Vec`
    /// left to itself doubles to nearly twice it), and still grows in few steps.
    #[test]
    fn a_bounded_read_reserves_no_more_than_its_limit() {
        let limit = 1_000_003;
        let mut bytes = Vec::new();
        let mut grown = 0;
        while bytes.len() < limit {
            let chunk = vec![7u8; 4096.min(limit - bytes.len())];
            let before = bytes.capacity();
            let needed = bytes.len() + chunk.len();
            grow_within(&mut bytes, needed, limit);
            bytes.extend_from_slice(&chunk);
            grown += usize::from(bytes.capacity() != before);
            assert!(bytes.capacity() <= limit, "{} > {limit}", bytes.capacity());
        }
        assert!(grown <= 20, "{grown} reallocations");
    }
}
