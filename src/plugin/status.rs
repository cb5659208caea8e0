//! What menus read: the jobs under way ([`KeepsakeStatus`], published by the job runner) and the
//! listing of the profile's slots ([`SaveSlots`], refreshed in the background by the `listing`
//! module). Plain data: it imports neither of them.

use super::job::{Job, JobTarget, SlotAction};
use crate::SlotId;
use crate::store::SlotEntry;
use bevy::prelude::*;

/// Jobs running and waiting, for menus (spinners, disabled buttons) and for tests.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct KeepsakeStatus {
    /// Jobs started: on the task pool, or (saves) captured and waiting a few frames for their
    /// thumbnail before writing.
    pub running: Vec<Job>,
    /// Jobs waiting for their target to be free.
    pub waiting: Vec<Job>,
}

impl KeepsakeStatus {
    /// Whether any job (running or waiting) keeps `slot`'s target busy.
    pub fn is_busy(&self, slot: SlotId) -> bool {
        let target = JobTarget::of(slot);
        self.jobs().any(|job| job.target() == target)
    }

    /// Whether a save is running or waiting.
    pub fn is_saving(&self) -> bool {
        self.jobs().any(|job| job.action() == SlotAction::Save)
    }

    /// Whether nothing is running or waiting.
    pub fn is_idle(&self) -> bool {
        self.running.is_empty() && self.waiting.is_empty()
    }

    fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.running.iter().chain(&self.waiting)
    }
}

/// The current listing of the profile's slots, refreshed in the background after every save,
/// load and delete, and on [`RefreshSlotsRequest`](super::RefreshSlotsRequest).
#[derive(Resource, Clone, Debug, Default, Reflect)]
#[reflect(opaque, Resource, Clone, Debug, Default)]
pub struct SaveSlots {
    entries: Vec<SlotEntry>,
    error: Option<String>,
    refreshes: u64,
}

impl SaveSlots {
    /// A listing made of `entries` (for tests, previews and custom menus; the plugin keeps its
    /// own up to date).
    pub fn from_entries(entries: Vec<SlotEntry>) -> Self {
        SaveSlots {
            entries,
            error: None,
            refreshes: 0,
        }
    }

    /// One entry per slot, most recent first (see [`SlotStore::list`](crate::store::SlotStore::list)).
    pub fn entries(&self) -> &[SlotEntry] {
        &self.entries
    }

    /// The entry of one slot.
    pub fn get(&self, slot: SlotId) -> Option<&SlotEntry> {
        self.entries.iter().find(|entry| entry.slot == slot)
    }

    /// Why the last refresh failed, if it did (the entries are then the previous ones).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many refreshes have completed (changes whenever the listing may have changed).
    pub fn refreshes(&self) -> u64 {
        self.refreshes
    }

    /// Takes a finished listing: its entries, or why it failed (keeping the previous entries).
    pub(super) fn update(&mut self, result: Result<Vec<SlotEntry>, String>) {
        match result {
            Ok(entries) => {
                self.entries = entries;
                self.error = None;
            }
            Err(error) => self.error = Some(error),
        }
        self.refreshes += 1;
    }
}
