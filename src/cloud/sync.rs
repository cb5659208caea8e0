//! [`SyncCore`]: one profile's uploads, downloads and conflicts, engine-free and async.

use super::error::{CloudError, Rejection};
use super::listing::{Listing, list_folder};
use super::remote::{Remote, RemoteName};
use super::state::{Conflict, PendingUpload, SyncState};
use super::verify::verify_remote_save;
use crate::SlotId;
use crate::format::{Lineage, SaveMeta, Timestamp};
use crate::store::{ImportOutcome, ImportReceipt, ImportRules, SlotStore, StoredSave};
use bytes::Bytes;
use futures_util::StreamExt;
use object_store::path::Path as RemotePath;
use object_store::{ObjectMeta, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// Whether the storage answered the last request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Connection {
    /// Nothing was asked yet.
    #[default]
    NotYetTried,
    /// The last request succeeded.
    Online,
    /// The last request failed; work is retried later.
    Offline {
        /// Why, as the storage client reported it.
        reason: String,
    },
}

/// The cloud state of one slot holding saves, for menus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotSync {
    /// Every save of the slot is in the cloud.
    Synced,
    /// A save of the slot is waiting to be uploaded, and the storage answers.
    Uploading,
    /// A save of the slot is waiting to be uploaded, and the storage does not answer.
    Offline,
    /// Two devices saved the slot without seeing each other's save: the newest heads the slot,
    /// the other is the generation below it.
    Conflict(Conflict),
}

/// A save of this device that reached the cloud.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uploaded {
    /// Its slot.
    pub slot: SlotId,
    /// Its save id.
    pub save_id: Uuid,
    /// Bytes sent.
    pub bytes: u64,
}

/// A file not carried between this device and the cloud: a remote file not placed among the
/// local saves, or a local save not uploaded because its file is damaged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Its name in the profile's cloud folder.
    pub name: String,
    /// Why ([`Rejection`] as text).
    pub reason: String,
}

/// What one round of work did, and the state afterwards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncRound {
    /// Whether the storage answered.
    pub connection: Connection,
    /// Saves uploaded in this round.
    pub uploaded: Vec<Uploaded>,
    /// Saves from other devices placed as local generations in this round.
    pub arrived: Vec<ImportReceipt>,
    /// Remote files refused in this round.
    pub refused: Vec<Refused>,
    /// Every slot holding saves, with its cloud state.
    pub slots: BTreeMap<SlotId, SlotSync>,
    /// Uploads still waiting.
    pub pending: usize,
    /// Why the round stopped early, if it did (the connection says whether it was the network).
    pub error: Option<String>,
    /// Why the sync state file could not be written, while it cannot: the round went on with
    /// the state in memory, and the next one tries again. No save is affected.
    pub state_error: Option<String>,
}

/// What became of one upload.
enum Sent {
    /// The file is in the cloud, sent now: its size.
    Uploaded(u64),
    /// The file was in the cloud already, byte for byte: its size and when it was put there
    /// (Unix ms).
    Found(u64, i64),
    /// The local file no longer decodes; why.
    Damaged(String),
    /// The cloud holds another device's different file under the save's name; why.
    Mismatch(String),
}

/// One profile's cloud sync: the local [`SlotStore`], the profile's folder in the storage, and
/// the durable sync state (see [`STATE_FILE`](super::STATE_FILE)).
///
/// Driven by one task at a time (`&mut self`); the plugin runs it on its own thread, tests and
/// tools can drive it directly on any async runtime.
pub struct SyncCore {
    store: Arc<SlotStore>,
    remote: Remote,
    device_name: String,
    state: SyncState,
    connection: Connection,
    /// Local saves found damaged when about to be uploaded: not queued again this session (the
    /// next start checks them once more).
    damaged_here: HashSet<Uuid>,
    /// Local generations (save id, generation) whose every checksum verified this session:
    /// each file is read in full once a session, to find saves damaged at rest here that the
    /// cloud can give back.
    verified_here: HashSet<(Uuid, u64)>,
    /// The state changed since the state file was last written.
    dirty: bool,
    /// Why the last write of the state file failed, until one succeeds.
    unwritten: Option<CloudError>,
    /// The slots holding saves at the last look (rounds report their state without reading
    /// every slot's files again).
    slots_with_saves: BTreeSet<SlotId>,
    /// Where the next round's listing starts, when the last one stopped at its limit.
    resume_listing_after: Option<String>,
}

impl SyncCore {
    /// Opens the sync state of `store`'s profile (creating it, with a new device id, on first
    /// use). The second value reports a state file that could not be used ([`CloudError::State`]:
    /// damaged, not a regular file, unreadable; sync starts a fresh state in its place) or
    /// written (sync keeps the state in memory and writes it at the next round).
    ///
    /// Whatever is at [`STATE_FILE`](super::STATE_FILE), sync runs.
    pub fn open(
        store: Arc<SlotStore>,
        remote: Remote,
        device_name: impl Into<String>,
    ) -> (Self, Option<CloudError>) {
        let loaded = SyncState::load(&store);
        let mut core = SyncCore {
            store,
            remote,
            device_name: device_name.into(),
            state: loaded.state,
            connection: Connection::NotYetTried,
            damaged_here: HashSet::new(),
            verified_here: HashSet::new(),
            dirty: loaded.unwritten,
            unwritten: None,
            slots_with_saves: BTreeSet::new(),
            resume_listing_after: None,
        };
        // A fresh state is written at once: saves are stamped with its device id from now on.
        core.persist();
        // The first round reports a failed write again, should it fail again.
        let report = loaded.unusable.or_else(|| core.unwritten.take());
        (core, report)
    }

    /// This installation's random device id (12 hex digits), stored with its saves.
    pub fn device_id(&self) -> &str {
        &self.state.device_id
    }

    /// The device name stored with this device's saves.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The local store.
    pub fn store(&self) -> &Arc<SlotStore> {
        &self.store
    }

    /// The current time on the store's clock ([`StoreConfig::clock`]), which every time sync
    /// records or schedules is read from.
    ///
    /// [`StoreConfig::clock`]: crate::store::StoreConfig::clock
    pub fn now(&self) -> Timestamp {
        self.store.config().now()
    }

    /// Metadata for a new save on this device (the device recorded in its extras).
    pub fn stamp(&self, meta: SaveMeta) -> SaveMeta {
        meta.with_device(self.device_id(), self.device_name.clone())
    }

    /// Records a new durable save as an upload to make, and clears the slot's conflict: the
    /// player has moved on from it.
    ///
    /// Nothing is written yet: the save file is itself the durable record of the upload to make
    /// (every round queues the local saves the cloud is not known to have, so a game that quits
    /// first uploads it on its next start). The queue file is written when an upload fails, with
    /// its backoff, and at the end of each round that changed something.
    pub fn note_save(&mut self, slot: SlotId, save_id: Uuid) -> Result<(), CloudError> {
        if self.state.in_cloud.contains_key(&save_id) {
            return Ok(());
        }
        let pending = PendingUpload {
            slot,
            attempts: 0,
            next_attempt_ms: 0,
        };
        self.state.pending.insert(save_id, pending);
        self.slots_with_saves.insert(slot);
        // A pending entry need not be written (see above); a cleared conflict or choice
        // should be: the new save heads the slot by being made last.
        self.dirty |= self.state.clear_conflicts(slot);
        self.dirty |= self.state.chosen.remove(&slot).is_some();
        self.dirty |= self.state.set_aside.remove(&slot).is_some();
        Ok(())
    }

    /// Writes the state file if it changed since it was last written. A write that fails does
    /// not stop what the caller was doing: the state stays in memory, still to be written (the
    /// next call tries again), and every round reports why until a write succeeds.
    fn persist(&mut self) {
        if !self.dirty {
            return;
        }
        match self.state.save(&self.store) {
            Ok(()) => {
                self.dirty = false;
                self.unwritten = None;
            }
            Err(error) => self.unwritten = Some(error),
        }
    }

    /// When the next queued upload is due, if any is queued.
    pub fn next_upload_due(&self) -> Option<Timestamp> {
        let due = self
            .state
            .pending
            .values()
            .map(|p| p.next_attempt_ms)
            .min()?;
        Some(Timestamp::from_unix_millis(due))
    }

    /// Uploads the queued saves that are due.
    pub async fn upload_due(&mut self) -> SyncRound {
        let mut round = SyncRound::default();
        let result = self.upload_pending(&mut round, false).await;
        self.finish(round, result)
    }

    /// A full round: lists the profile's cloud folder, downloads, verifies and places the saves
    /// this device does not have, queues local saves the cloud does not have, and uploads every
    /// queued save (due or not: a round is the moment to retry).
    pub async fn sync(&mut self) -> SyncRound {
        let mut round = SyncRound::default();
        let result = self.sync_inner(&mut round).await;
        self.finish(round, result)
    }

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
        let generation = self.store.promote(slot, hidden)?;
        self.state.settle_shown(slot);
        let passed_over = here.first().map(|head| head.meta.save_id);
        let passed_over = passed_over.filter(|id| *id != conflict.hidden_save);
        if let Some(passed_over) = passed_over {
            // The store records it too, so a lost state file does not show it as a conflict
            // again. Should that record not take it, the state file still says it.
            let _ = self.store.note_passed_over(slot, [passed_over]);
            let aside = self.state.set_aside.entry(slot).or_default();
            aside.insert(passed_over);
        }
        let now = self.now().unix_millis();
        self.state.chosen.insert(slot, now);
        self.dirty = true;
        self.persist();
        Ok(Some(generation))
    }

    /// Downloads the hidden save of `slot`'s conflict again and returns its generation, or
    /// clears the conflict and says why it cannot be had.
    async fn download_hidden(
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

    /// The cloud state of every slot holding saves.
    pub fn slot_states(&self) -> Result<BTreeMap<SlotId, SlotSync>, CloudError> {
        let saves = self.store.saves()?;
        Ok(self.states_of(saves.iter().map(|s| s.slot)))
    }

    /// A full round. Uploads come before downloads: an upload never changes the local saves,
    /// while each import may push older generations of its slot out, and a save made here
    /// offline must reach the cloud before saves arriving from elsewhere could crowd it out.
    async fn sync_inner(&mut self, round: &mut SyncRound) -> Result<(), CloudError> {
        let Listing {
            kept: listing,
            unreadable,
            whole,
            ..
        } = self.list_remote().await?;
        self.note_unreadable(&unreadable, round);
        let local = self.store.saves()?;
        let local_ids: HashSet<Uuid> = local.iter().map(|s| s.meta.save_id).collect();
        for (name, object) in &listing {
            // This device's own saves are uploaded (or found there and compared, see
            // `settle_existing`) before they count as in the cloud: an object under the
            // save's name is not necessarily the file, if an earlier upload was torn.
            let own = name.device_id == self.device_id();
            if local_ids.contains(&name.save_id) && !own {
                let uploaded = object.last_modified.timestamp_millis();
                self.state.in_cloud.entry(name.save_id).or_insert(uploaded);
                self.state.pending.remove(&name.save_id);
            }
        }
        self.queue_unsynced(&local);
        self.persist();
        self.upload_pending(round, true).await?;
        // What the player deleted or passed over here never comes back, whatever else a slot
        // looks like.
        let deleted = self.store.deleted_saves();
        let mut damaged = self.damaged_locally(&local);
        damaged.extend(self.lost_locally(&listing, &local, &damaged)?);
        damaged.retain(|id| !deleted.contains(id));
        let mut have: HashSet<Uuid> = local_ids.difference(&damaged).copied().collect();
        have.extend(superseded_here(&listing, &local, &damaged));
        have.extend(deleted.iter().copied());
        let failed = self
            .download_missing(&listing, (&have, &damaged), round)
            .await;
        let local = self.store.saves()?;
        self.slots_with_saves = local.iter().map(|s| s.slot).collect();
        self.reconcile_conflicts(&local, &deleted);
        if whole {
            self.forget_what_is_gone(&listing, &unreadable, &local);
        }
        failed.map_or(Ok(()), Err)
    }

    /// The local saves whose newest copy here does not verify: damaged on this disk at rest
    /// where a load meets it (an older duplicate an interrupted import left does not count:
    /// the slot loads past it). Each generation is read in full once a session (a read that
    /// fails for a reason that may pass counts as intact until the next round).
    fn damaged_locally(&mut self, local: &[StoredSave]) -> HashSet<Uuid> {
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
    fn lost_locally(
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
    fn holds_unreadable_file(
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

    /// Records the conflicts the slots hold but no record names: another device's save made
    /// apart from the one heading its slot (see [`unseen`]), that no save here was made in view
    /// of and the player did not pass over. An import that landed just before a crash, whose
    /// state write did not, is found this way in the next round; so is a conflict two imports
    /// of one round made between saves the slot already held.
    ///
    /// `settled`: what the player deleted or passed over, as the store records it (a lost
    /// state file takes its own record of the saves passed over with it).
    fn reconcile_conflicts(&mut self, local: &[StoredSave], settled: &HashSet<Uuid>) {
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

    /// Reports each key of the folder the storage client cannot read as a path, once: it is
    /// remembered as refused (and forgotten when it leaves the folder).
    fn note_unreadable(&mut self, keys: &[String], round: &mut SyncRound) {
        for key in keys {
            if self.state.refused.contains_key(key) {
                continue;
            }
            let reason = "its key is not a path the storage client reads (an empty, `.` or `..` part); skipped".to_owned();
            self.state.refused.insert(key.clone(), reason.clone());
            round.refused.push(Refused {
                name: key.clone(),
                reason,
            });
            self.dirty = true;
        }
    }

    /// Keeps the state file's maps bounded: a save id neither here nor in the cloud folder, and
    /// a refused or newer-format file no longer in the cloud folder, are forgotten. Only after
    /// a listing of the whole folder: a partial one does not show what is gone.
    fn forget_what_is_gone(
        &mut self,
        listing: &[(RemoteName, ObjectMeta)],
        unreadable: &[String],
        local: &[StoredSave],
    ) {
        let remote_ids: HashSet<Uuid> = listing.iter().map(|(name, _)| name.save_id).collect();
        let names = listing.iter().map(|(name, _)| name.to_string());
        let remote_names: HashSet<String> = names.chain(unreadable.iter().cloned()).collect();
        let local_ids: HashSet<Uuid> = local.iter().map(|s| s.meta.save_id).collect();
        let before = self.state.tracked();
        self.state
            .in_cloud
            .retain(|id, _| remote_ids.contains(id) || local_ids.contains(id));
        self.state
            .refused
            .retain(|name, _| remote_names.contains(name));
        self.state
            .newer_format
            .retain(|name, _| remote_names.contains(name));
        self.dirty |= self.state.tracked() != before;
    }

    /// Lists the profile folder (on from where the last round stopped, if it stopped at the
    /// listing's limit): files with a name cloud sync writes, oldest first, and the keys the
    /// storage client cannot read (see [`listing`](super::listing)).
    async fn list_remote(&mut self) -> Result<Listing<(RemoteName, ObjectMeta)>, CloudError> {
        let start = self.resume_listing_after.clone();
        let remote = (&self.remote.lister, &self.remote.folder);
        let keep = |name: &str, object| Some((RemoteName::parse(name)?, object));
        let mut listing = list_folder(remote, self.remote.listing, start, keep)
            .await
            .map_err(|source| CloudError::Remote {
                action: "list",
                location: self.remote.folder.to_string(),
                source,
            })?;
        self.connection = Connection::Online;
        self.resume_listing_after = listing.resume_after.clone();
        listing
            .kept
            .sort_by_key(|(name, _)| (name.created_ms, name.save_id));
        Ok(listing)
    }

    /// Downloads, verifies and places every listed save this device does not `have` (hold
    /// intact, or moved past) or holds `damaged`. A file that
    /// cannot be fetched or placed now is skipped for this round (the next round tries it
    /// again) and never stops the others; the first such error is returned at the end.
    async fn download_missing(
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
    fn frozen_here(&self, slot: SlotId, asked: &mut HashMap<SlotId, bool>) -> bool {
        let holds = || self.store.holds_newer_format(slot).unwrap_or(false);
        *asked.entry(slot).or_insert_with(holds)
    }

    /// Records what became of one downloaded file (`None`: not placed, the player moved past
    /// it here; known from now on, as a save held here is).
    fn record_download(
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
    async fn download(
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
    fn moved_past_here(
        &self,
        arriving: &SaveMeta,
        damaged: &HashSet<Uuid>,
    ) -> Result<bool, CloudError> {
        if self.store.is_deleted(arriving) {
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
    fn import_rules(
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
        keep.extend(self.state.conflicts_of(slot).map(|c| c.hidden_save));
        if local
            .iter()
            .any(|save| crossed_below(&save.meta, arriving, uploaded_ms))
        {
            keep.insert(arriving.save_id);
        }
        let chosen_at = self.state.chosen.get(&slot).copied();
        Ok(ImportRules {
            keep,
            chosen_at: chosen_at.map(Timestamp::from_unix_millis),
        })
    }

    /// Whether `arriving`'s device could not have seen `local` (see [`unseen`]).
    fn unseen_by(&self, local: &SaveMeta, arriving: &SaveMeta) -> bool {
        let reached = self.state.in_cloud.get(&local.save_id).copied();
        unseen(local, arriving, reached)
    }

    /// Records a conflict when a placed save and the slot's previous head were made on two
    /// devices that could not have seen each other's save (see [`unseen`]). The hidden side
    /// is the older one, unless a save the slot holds was made in view of it: then it is not
    /// the other device's newest, and the conflict already recorded (with that newer save, or
    /// with a save it will bring) stands.
    fn note_conflict(&mut self, receipt: &ImportReceipt, arrived_uploaded_ms: i64) {
        let Some(previous) = &receipt.previous_head else {
            return;
        };
        let (older, newer, older_reached_cloud) = if receipt.heads_slot {
            let reached = self.state.in_cloud.get(&previous.save_id).copied();
            (previous, &receipt.meta, reached)
        } else {
            (&receipt.meta, previous, Some(arrived_uploaded_ms))
        };
        if !unseen(older, newer, older_reached_cloud) {
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

    /// Every conflict of `slot`, the one the menu shows first: the saves of other devices made
    /// apart from the one heading the slot, which the player has not yet settled.
    pub fn conflicts(&self, slot: SlotId) -> Vec<Conflict> {
        self.state.conflicts_of(slot).cloned().collect()
    }

    /// Queues every local save the cloud is not known to have.
    fn queue_unsynced(&mut self, local: &[StoredSave]) {
        for save in local {
            let id = save.meta.save_id;
            if !self.state.in_cloud.contains_key(&id) && !self.damaged_here.contains(&id) {
                self.state.pending.entry(id).or_insert(PendingUpload {
                    slot: save.slot,
                    attempts: 0,
                    next_attempt_ms: 0,
                });
            }
        }
    }

    /// Uploads queued saves (only those due unless `all`), stopping at the first network error.
    async fn upload_pending(&mut self, round: &mut SyncRound, all: bool) -> Result<(), CloudError> {
        let now = self.now().unix_millis();
        let due: Vec<Uuid> = self
            .state
            .pending
            .iter()
            .filter(|(_, p)| all || p.next_attempt_ms <= now)
            .map(|(id, _)| *id)
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        // Only the slots with uploads due are read.
        let slots: BTreeSet<SlotId> = due.iter().map(|id| self.state.pending[id].slot).collect();
        let mut local = Vec::new();
        for slot in slots {
            let saves = self.store.saves_in(slot)?;
            if saves.is_empty() {
                // Deleted, or left with damaged files only: no save whose cloud state to show
                // (rounds that list the remote folder recount the slots anyway).
                self.slots_with_saves.remove(&slot);
            }
            local.extend(saves);
        }
        let by_id: HashMap<Uuid, &StoredSave> = local.iter().map(|s| (s.meta.save_id, s)).collect();
        for id in due {
            let Some(save) = by_id.get(&id) else {
                // Pruned (or deleted) before it could be uploaded: nothing is left to send.
                self.state.pending.remove(&id);
                continue;
            };
            match self.upload(save).await {
                Ok(Sent::Damaged(reason) | Sent::Mismatch(reason)) => {
                    // Not retried this session: neither the file here nor the one in the
                    // cloud will mend by itself (a load here falls back past a damaged one).
                    self.state.pending.remove(&id);
                    self.damaged_here.insert(id);
                    self.dirty = true;
                    let name = RemoteName::for_save(&save.meta, self.device_id()).to_string();
                    let reason = format!("not uploaded: {reason}");
                    round.refused.push(Refused { name, reason });
                }
                Ok(Sent::Uploaded(bytes)) => {
                    let now = self.now().unix_millis();
                    self.record_upload(save, bytes, now, round);
                }
                Ok(Sent::Found(bytes, uploaded_ms)) => {
                    self.record_upload(save, bytes, uploaded_ms, round);
                }
                Err(error) => {
                    let now = self.now();
                    for pending in self.state.pending.values_mut() {
                        pending.failed(now);
                    }
                    self.dirty = true;
                    self.persist();
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Records a save that reached the cloud at `uploaded_ms`.
    ///
    /// Not written down at once: should the game quit first, the next start uploads the save
    /// again, the storage answers that the (create-only) object exists, it is compared with
    /// the file and found the same, and that counts as done. The next state write records it.
    fn record_upload(
        &mut self,
        save: &StoredSave,
        bytes: u64,
        uploaded_ms: i64,
        round: &mut SyncRound,
    ) {
        let save_id = save.meta.save_id;
        self.state.pending.remove(&save_id);
        self.state.in_cloud.insert(save_id, uploaded_ms);
        round.uploaded.push(Uploaded {
            slot: save.slot,
            save_id,
            bytes,
        });
    }

    /// Uploads one save's file unchanged, create-only. The file is checked in full first
    /// (checksums, decompression, metadata): a file damaged on this disk since it was written
    /// is not sent for other devices to refuse.
    ///
    /// An object already under the save's name is usually this very file, sent by an earlier
    /// attempt whose answer (or whose record in the state file) was lost; it is fetched and
    /// compared, since counting it as uploaded unseen would leave other devices a torn or
    /// foreign file in its place for good (see [`settle_existing`](Self::settle_existing)).
    async fn upload(&mut self, save: &StoredSave) -> Result<Sent, CloudError> {
        let bytes = self
            .store
            .read_generation_bytes(save.slot, save.generation)?;
        if let Err(error) = self.store.decode_import(&bytes) {
            return Ok(Sent::Damaged(format!("the file here is damaged: {error}")));
        }
        let bytes = Bytes::from(bytes);
        let name = RemoteName::for_save(&save.meta, self.device_id());
        let location = self.remote.path_of(&name);
        let sent = self.put(&location, &bytes, PutMode::Create).await;
        if matches!(
            sent,
            Ok(()) | Err(object_store::Error::AlreadyExists { .. })
        ) {
            self.connection = Connection::Online;
        }
        match sent {
            Err(object_store::Error::AlreadyExists { .. }) => {
                self.settle_existing(&name, &location, &bytes).await
            }
            Err(source) => Err(CloudError::Remote {
                action: "upload",
                location: location.to_string(),
                source,
            }),
            Ok(()) => Ok(Sent::Uploaded(bytes.len() as u64)),
        }
    }

    /// What became of an upload the storage answered with "already exists": the object is
    /// fetched and compared with the local file. The same bytes: uploaded. Other bytes under a
    /// name that carries this device's id (and the save's id, unique to it) can only be this
    /// device's own earlier upload gone wrong (torn by a power loss on a store that did not
    /// flush it) or garbage: it is replaced by the local file, the one object of that name no
    /// other device writes. Other bytes under another device's name (a save of that device
    /// imported here some other way) are that device's to fix: not uploaded, and reported.
    async fn settle_existing(
        &mut self,
        name: &RemoteName,
        location: &RemotePath,
        bytes: &Bytes,
    ) -> Result<Sent, CloudError> {
        let remote_error = |action, source| CloudError::Remote {
            action,
            location: location.to_string(),
            source,
        };
        let limit = self.store.config().decode_options().limits.max_file_len();
        let found = self.remote.store.get(location).await;
        let found = found.map_err(|source| remote_error("fetch the existing object", source))?;
        let found_at = found.meta.last_modified;
        let existing = read_bounded(found, limit)
            .await
            .map_err(|source| remote_error("fetch the existing object", source))?;
        if existing.as_deref() == Ok(&bytes[..]) {
            let uploaded_ms = found_at.timestamp_millis();
            return Ok(Sent::Found(bytes.len() as u64, uploaded_ms));
        }
        if name.device_id != self.device_id() {
            return Ok(Sent::Mismatch(format!(
                "the cloud holds a different file under this save's name, which is device {}'s",
                name.device_id
            )));
        }
        self.put(location, bytes, PutMode::Overwrite)
            .await
            .map_err(|source| remote_error("replace the damaged object", source))?;
        Ok(Sent::Uploaded(bytes.len() as u64))
    }

    /// Sends `bytes` to `location` as `mode` says.
    async fn put(
        &self,
        location: &RemotePath,
        bytes: &Bytes,
        mode: PutMode,
    ) -> Result<(), object_store::Error> {
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let payload = PutPayload::from(bytes.clone());
        let sent = self.remote.store.put_opts(location, payload, options).await;
        sent.map(|_| ())
    }

    fn finish(&mut self, mut round: SyncRound, result: Result<(), CloudError>) -> SyncRound {
        self.persist();
        round.state_error = self.unwritten.as_ref().map(CloudError::to_string);
        if let Err(error) = result {
            if let CloudError::Remote { .. } = error {
                self.connection = Connection::Offline {
                    reason: error.to_string(),
                };
            }
            round.error = Some(error.to_string());
        }
        round.connection = self.connection.clone();
        round.pending = self.state.pending.len();
        round.slots = self.states_of(self.slots_with_saves.iter().copied());
        round
    }

    fn states_of(&self, slots: impl Iterator<Item = SlotId>) -> BTreeMap<SlotId, SlotSync> {
        let pending_slots: HashSet<SlotId> = self.state.pending.values().map(|p| p.slot).collect();
        let state_of = |slot: SlotId| {
            if let Some(conflict) = self.state.conflicts.get(&slot) {
                SlotSync::Conflict(conflict.clone())
            } else if !pending_slots.contains(&slot) {
                SlotSync::Synced
            } else if let Connection::Offline { .. } = self.connection {
                SlotSync::Offline
            } else {
                SlotSync::Uploading
            }
        };
        slots.map(|slot| (slot, state_of(slot))).collect()
    }
}

/// The app's exit: its last chance this session to upload.
impl SyncCore {
    /// Uploads every queued save now, due or not (a backoff would outlast the session; the
    /// next start retries whatever this leaves).
    pub async fn upload_all(&mut self) -> SyncRound {
        let mut round = SyncRound::default();
        let result = self.upload_pending(&mut round, true).await;
        self.finish(round, result)
    }

    /// The saves queued for upload, as (slot, save id).
    pub fn pending_uploads(&self) -> Vec<(SlotId, Uuid)> {
        let pending = self.state.pending.iter();
        pending.map(|(id, upload)| (upload.slot, *id)).collect()
    }
}

/// Whether one of `saves` (other than `save` itself) was made in view of `save`, by its list of
/// ids or its version vector ([`SaveMeta::made_in_view_of_save`]).
fn followed_in<'a>(saves: impl IntoIterator<Item = &'a StoredSave>, save: &SaveMeta) -> bool {
    let mut others = saves
        .into_iter()
        .filter(|other| other.meta.save_id != save.save_id);
    others.any(|other| other.meta.made_in_view_of_save(save))
}

/// Whether two saves were made on one device (as far as their metadata tells).
fn same_device(one: &SaveMeta, other: &SaveMeta) -> bool {
    one.device_id().is_some() && one.device_id() == other.device_id()
}

/// Whether `arriving`, placed below `local`, would be the hidden side of a conflict with it
/// (as [`SyncCore::note_conflict`] decides once it is placed): `local`'s device could not have
/// seen it, having reached the cloud (at `uploaded_ms`) only after `local` was made.
fn crossed_below(local: &SaveMeta, arriving: &SaveMeta, uploaded_ms: i64) -> bool {
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
fn unseen(save: &SaveMeta, by: &SaveMeta, save_reached_ms: Option<i64>) -> bool {
    match by.lineage(save) {
        Lineage::Follows | Lineage::Precedes => false,
        Lineage::Concurrent => true,
        Lineage::Unrecorded => {
            !same_device(save, by)
                && save_reached_ms.is_none_or(|ms| ms > by.created_at.unix_millis())
        }
    }
}

/// Reads a downloaded object's body, stopping before it passes `limit` bytes: a storage whose
/// listing understated an object's size (or whose answer is hostile) never makes this device
/// hold more than the limit, nor reserve more (the buffer grows by doubling, capped at the
/// limit). The inner error is the length reached when it stopped.
async fn read_bounded(
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
fn grow_within(bytes: &mut Vec<u8>, needed: usize, limit: usize) {
    if needed > bytes.capacity() {
        let target = needed.max(bytes.capacity().saturating_mul(2)).min(limit);
        bytes.reserve_exact(target - bytes.len());
    }
}

/// The saves in the cloud that an intact save here was made in view of: the slot moved past
/// them here, so they are not downloaded (an import would place them below the head, in the
/// place of the backup the player made last).
fn superseded_here(
    listing: &[(RemoteName, ObjectMeta)],
    local: &[StoredSave],
    damaged: &HashSet<Uuid>,
) -> HashSet<Uuid> {
    let intact = || {
        local
            .iter()
            .filter(|save| !damaged.contains(&save.meta.save_id))
    };
    listing
        .iter()
        .filter(|(name, _)| {
            intact().any(|save| save.slot == name.slot && save.meta.made_in_view_of(name.save_id))
        })
        .map(|(name, _)| name.save_id)
        .collect()
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
