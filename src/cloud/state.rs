//! The profile's durable sync state: this installation's device id, which saves are known to be
//! in the cloud, the uploads still to make (the retry queue), refused remote files and
//! unresolved conflicts. One small RON file in the profile folder, replaced durably (temporary
//! file, fsync, rename) through the store after every change.
//!
//! It may be lost (deleted, garbled, an entry in its place that is not a readable file) and it
//! may fail to be written (a full disk, a folder under its name): neither stops sync, let
//! alone the game. Sync goes on with a fresh state in memory, reports why, and writes it when
//! it can. A fresh state has a new device id and learns again from the local saves and the
//! cloud folder what is where; what a player would miss is kept outside it too: the store
//! records the saves the player deleted or passed over (`<slot>.deleted`, with the version
//! vector of what was deleted), and the saves record what they were made in view of. Only the
//! time of a choice between two devices' saves (`chosen`) goes with the file: a save made
//! elsewhere before that choice may then head the slot again, with the chosen one shown as
//! its conflict.

use super::error::CloudError;
use super::remote::{is_device_id, new_device_id};
use crate::SlotId;
use crate::format::{FORMAT_VERSION, Timestamp};
use crate::store::{SlotStore, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use uuid::Uuid;

/// The state file's name in the profile folder. Device-specific: file-level sync tools (Steam
/// Auto-Cloud) must not copy it between machines.
pub const STATE_FILE: &str = "cloud-sync.ron";

/// The longest wait between two attempts at one upload.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// An upload not yet confirmed by the storage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingUpload {
    /// The slot the save was made in (it can move to another generation, never another slot).
    pub(crate) slot: SlotId,
    /// Failed attempts so far.
    pub(crate) attempts: u32,
    /// The earliest time of the next attempt (Unix ms).
    pub(crate) next_attempt_ms: i64,
}

impl PendingUpload {
    /// Schedules the next attempt after a failure: 1 s, 2 s, 4 s, … up to [`MAX_BACKOFF`].
    pub(crate) fn failed(&mut self, now: Timestamp) {
        self.attempts = self.attempts.saturating_add(1);
        let backoff = Duration::from_secs(1u64 << self.attempts.min(16)).min(MAX_BACKOFF);
        self.next_attempt_ms = now.unix_millis() + backoff.as_millis() as i64;
    }
}

/// Two devices saved one slot without seeing each other's save; both are kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The name of the device that made the save which does not head the slot (the older
    /// one), as that save records it.
    pub hidden_device: String,
    /// The id of that save.
    pub hidden_save: Uuid,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SyncState {
    pub(crate) device_id: String,
    /// Save id → when it was known to be in the cloud (Unix ms): uploaded from here, or the
    /// object's upload time for saves found there.
    pub(crate) in_cloud: BTreeMap<Uuid, i64>,
    pub(crate) pending: BTreeMap<Uuid, PendingUpload>,
    /// Remote file name → why it was refused (it is not downloaded again).
    pub(crate) refused: BTreeMap<String, String>,
    /// Slot → the conflict the menu shows: the newest other device's save made apart from the
    /// one heading the slot.
    pub(crate) conflicts: BTreeMap<SlotId, Conflict>,
    /// Slot → further saves made apart from the head, on a third device or more, shown one at
    /// a time once the player settles the first (see [`SyncState::add_conflict`]). Absent
    /// from state files written before it, and passed over by the builds that wrote those.
    #[serde(default)]
    pub(crate) more_conflicts: BTreeMap<SlotId, Vec<Conflict>>,
    /// Remote file name → the newest format version the build that met it reads: a file from a
    /// newer format is not downloaded again until the game is updated (a newer build reads a
    /// newer version). Absent from state files written before it.
    #[serde(default)]
    pub(crate) newer_format: BTreeMap<String, u16>,
    /// Slot → when the player chose the save heading it over another device's (Unix ms, this
    /// device's clock): saves made before then do not take the head from it. Cleared by the
    /// next save of the slot here.
    #[serde(default)]
    pub(crate) chosen: BTreeMap<SlotId, i64>,
    /// Slot → the saves the player passed over by choosing another device's save: settled,
    /// never shown as a conflict again. Cleared by the next save of the slot here.
    #[serde(default)]
    pub(crate) set_aside: BTreeMap<SlotId, BTreeSet<Uuid>>,
}

impl SyncState {
    fn new() -> Self {
        SyncState {
            device_id: new_device_id(),
            in_cloud: BTreeMap::new(),
            pending: BTreeMap::new(),
            refused: BTreeMap::new(),
            conflicts: BTreeMap::new(),
            more_conflicts: BTreeMap::new(),
            newer_format: BTreeMap::new(),
            chosen: BTreeMap::new(),
            set_aside: BTreeMap::new(),
        }
    }

    /// How many entries the maps that follow the cloud folder hold (to tell whether forgetting
    /// changed anything).
    pub(crate) fn tracked(&self) -> (usize, usize, usize) {
        (
            self.in_cloud.len(),
            self.refused.len(),
            self.newer_format.len(),
        )
    }

    /// Every conflict of `slot`, the one shown first.
    pub(crate) fn conflicts_of(&self, slot: SlotId) -> impl Iterator<Item = &Conflict> {
        let more = self.more_conflicts.get(&slot).into_iter().flatten();
        self.conflicts.get(&slot).into_iter().chain(more)
    }

    /// Records `conflict` as the one `slot` shows, keeping the one it showed before among the
    /// others, and forgets every recorded conflict `settled` says is no longer one (a save the
    /// slot holds was made in view of its hidden save, or it heads the slot now).
    pub(crate) fn add_conflict(
        &mut self,
        slot: SlotId,
        conflict: Conflict,
        settled: impl Fn(&Conflict) -> bool,
    ) {
        let earlier: Vec<Conflict> = self.conflicts_of(slot).cloned().collect();
        let more: Vec<Conflict> = earlier
            .into_iter()
            .filter(|old| old.hidden_save != conflict.hidden_save && !settled(old))
            .collect();
        self.conflicts.insert(slot, conflict);
        self.set_more(slot, more);
    }

    /// Forgets the conflicts of `slot` that `settled` says are no longer ones, showing the
    /// first of those left.
    pub(crate) fn forget_conflicts(&mut self, slot: SlotId, settled: impl Fn(&Conflict) -> bool) {
        let left: Vec<Conflict> = self
            .conflicts_of(slot)
            .filter(|c| !settled(c))
            .cloned()
            .collect();
        self.clear_conflicts(slot);
        let mut left = left.into_iter();
        if let Some(shown) = left.next() {
            self.conflicts.insert(slot, shown);
            self.set_more(slot, left.collect());
        }
    }

    /// Takes the conflict `slot` shows away (the player chose or it is gone), showing the next
    /// one recorded, if any.
    pub(crate) fn settle_shown(&mut self, slot: SlotId) {
        self.conflicts.remove(&slot);
        let mut more = self.more_conflicts.remove(&slot).unwrap_or_default();
        if !more.is_empty() {
            self.conflicts.insert(slot, more.remove(0));
            self.set_more(slot, more);
        }
    }

    /// Forgets every conflict of `slot` (the player saved it anew: the new save heads it, made
    /// in view of them all); whether there was one.
    pub(crate) fn clear_conflicts(&mut self, slot: SlotId) -> bool {
        let more = self.more_conflicts.remove(&slot).is_some();
        self.conflicts.remove(&slot).is_some() || more
    }

    fn set_more(&mut self, slot: SlotId, more: Vec<Conflict>) {
        if more.is_empty() {
            self.more_conflicts.remove(&slot);
        } else {
            self.more_conflicts.insert(slot, more);
        }
    }

    /// Records a remote file from a newer format version than this build reads.
    pub(crate) fn note_newer_format(&mut self, name: String) {
        self.newer_format.insert(name, FORMAT_VERSION);
    }

    /// Whether a remote file is known to be from a newer format version than this build reads
    /// (a build that reads more than the one that met it looks again).
    pub(crate) fn newer_format_known(&self, name: &str) -> bool {
        self.newer_format
            .get(name)
            .is_some_and(|&supported| supported >= FORMAT_VERSION)
    }

    /// Reads the profile's state, or starts a new one (with a new device id) when there is
    /// none or it cannot be used: a file that does not parse, an entry that is not a regular
    /// file (a folder, a FIFO, a device), one this user may not read, a read that fails. None
    /// of that stops sync, nor the game: the fresh state re-learns from the cloud folder what
    /// is there (create-only uploads make that safe), and why the file was not used comes
    /// back beside it. Nothing is written here (see [`Loaded::unwritten`]).
    pub(crate) fn load(store: &SlotStore) -> Loaded {
        let reason = match store.read_profile_file(STATE_FILE) {
            Ok(None) => return Loaded::fresh(None),
            Ok(Some(bytes)) => match parse(&bytes) {
                Ok(state) => return Loaded::kept(state),
                Err(reason) => format!("it is damaged ({reason}); {STARTED_AFRESH}"),
            },
            Err(error) => unreadable(&error),
        };
        let path = store.dir().join(STATE_FILE);
        Loaded::fresh(Some(CloudError::State { path, reason }))
    }

    /// Replaces the state file durably. The error says what the player can do about a state
    /// that cannot be written; the caller keeps the state in memory and tries again later.
    pub(crate) fn save(&self, store: &SlotStore) -> Result<(), CloudError> {
        let path = store.dir().join(STATE_FILE);
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).map_err(
            |error| CloudError::State {
                path: path.clone(),
                reason: error.to_string(),
            },
        )?;
        store
            .write_profile_file(STATE_FILE, text.as_bytes())
            .map_err(|error| CloudError::State {
                path,
                reason: unwritable(&error),
            })
    }
}

/// What [`SyncState::load`] found.
pub(crate) struct Loaded {
    pub(crate) state: SyncState,
    /// Why the state file could not be used, when it could not (the state is a fresh one).
    pub(crate) unusable: Option<CloudError>,
    /// The state is not what the file holds (a fresh one): it is to be written, before any
    /// save is stamped with its device id, so the next start finds the same id.
    pub(crate) unwritten: bool,
}

impl Loaded {
    fn kept(state: SyncState) -> Self {
        Loaded {
            state,
            unusable: None,
            unwritten: false,
        }
    }

    fn fresh(unusable: Option<CloudError>) -> Self {
        Loaded {
            state: SyncState::new(),
            unusable,
            unwritten: true,
        }
    }
}

/// What a player reads after each reason a state file was not used.
const STARTED_AFRESH: &str = "cloud sync started a fresh state (a new device id for this \
    installation) and learns again from the cloud what it holds; no save is affected";

/// The state file's text read as a state, or why it cannot be.
fn parse(bytes: &[u8]) -> Result<SyncState, String> {
    let text = std::str::from_utf8(bytes).map_err(|error| error.to_string())?;
    let state = ron::from_str::<SyncState>(text).map_err(|error| error.to_string())?;
    match is_device_id(&state.device_id) {
        true => Ok(state),
        false => Err(format!(
            "device id {:?} is not 12 hex digits",
            state.device_id
        )),
    }
}

/// Why a state file that could not be read was not used, and what the player can do.
fn unreadable(error: &StoreError) -> String {
    match error {
        StoreError::NotAFile { what, .. } => format!(
            "it is {what}, not a regular file; {STARTED_AFRESH}, and writes it in the entry's \
             place (a folder does not give way: move it out of the profile folder, or each \
             start of the game begins afresh)"
        ),
        StoreError::Io { source, .. } => format!(
            "it could not be read ({source}); {STARTED_AFRESH}; if this repeats, check the \
             file's permissions and the disk"
        ),
        other => format!("it could not be read ({other}); {STARTED_AFRESH}"),
    }
}

/// Why the state could not be written, and what the player can do.
fn unwritable(error: &StoreError) -> String {
    format!(
        "the state could not be written ({error}); cloud sync keeps it in memory and tries \
         again at each round (saves are not affected, though a restart before it is written \
         starts a fresh state); free some disk space, or move what is in the way out of the \
         profile folder"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(id: u128) -> Conflict {
        Conflict {
            hidden_device: format!("device {id}"),
            hidden_save: Uuid::from_u128(id),
        }
    }

    /// Review of issue 49's seed 402638 fix: an import that settles a recorded conflict no
    /// longer keeps its hidden save, so the conflict must go too, or the menu offers a save the
    /// import pruned. The first left is shown; a slot with none left shows none.
    #[test]
    fn forgetting_settled_conflicts_shows_the_first_one_left() {
        let slot = SlotId::Manual(1);
        let mut state = SyncState::new();
        for id in 1..=3 {
            state.add_conflict(slot, conflict(id), |_| false);
        }
        let shown = |state: &SyncState| state.conflicts_of(slot).cloned().collect::<Vec<_>>();
        assert_eq!(shown(&state), [conflict(3), conflict(2), conflict(1)]);

        state.forget_conflicts(slot, |c| c.hidden_save == Uuid::from_u128(3));
        assert_eq!(shown(&state), [conflict(2), conflict(1)]);
        assert_eq!(state.conflicts.get(&slot), Some(&conflict(2)));

        state.forget_conflicts(slot, |_| true);
        assert!(shown(&state).is_empty());
        assert!(state.conflicts.is_empty() && state.more_conflicts.is_empty());
    }
}
