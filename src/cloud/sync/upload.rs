//! Uploads: which local saves are queued, how each is sent (or found in the cloud already),
//! and what is recorded of it.

use super::download::read_bounded;
use super::{Connection, Refused, Sent, SyncCore, SyncRound, Uploaded};
use crate::SlotId;
use crate::cloud::error::CloudError;
use crate::cloud::remote::RemoteName;
use crate::cloud::state::PendingUpload;
use crate::store::StoredSave;
use bytes::Bytes;
use object_store::path::Path as RemotePath;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

impl SyncCore {
    /// Queues every local save the cloud is not known to have.
    pub(super) fn queue_unsynced(&mut self, local: &[StoredSave]) {
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
    pub(super) async fn upload_pending(
        &mut self,
        round: &mut SyncRound,
        all: bool,
    ) -> Result<(), CloudError> {
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
    pub(super) fn record_upload(
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
    pub(super) async fn upload(&mut self, save: &StoredSave) -> Result<Sent, CloudError> {
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
    pub(super) async fn settle_existing(
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
    pub(super) async fn put(
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
}
