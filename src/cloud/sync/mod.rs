//! [`SyncCore`]: one profile's uploads, downloads and conflicts, engine-free and async.
//!
//! A round ([`SyncCore::sync`], here) lists the cloud folder, uploads what is queued
//! (`upload`), finds what this device lost to damage (`damage`), downloads and places what it
//! misses (`download`), and records the conflicts the slots hold (`conflicts`).

mod conflicts;
mod damage;
mod download;
mod upload;

use super::error::CloudError;
use super::listing::{Listing, list_folder};
use super::remote::{Remote, RemoteName};
use super::state::{Conflict, PendingUpload, SyncState};
use crate::SlotId;
use crate::format::{SaveMeta, Timestamp};
use crate::store::{ImportReceipt, SlotStore, StoredSave};
use object_store::ObjectMeta;
use std::collections::{BTreeMap, BTreeSet, HashSet};
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
    /// Why ([`Rejection`](super::error::Rejection) as text).
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
        let deleted = self.store.deleted_saves()?;
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
