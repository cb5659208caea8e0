//! What menus read: the jobs under way ([`KeepsakeStatus`]) and the listing of the profile's
//! slots ([`SaveSlots`]), refreshed in the background.

use super::job::{Job, JobTarget, SlotAction};
use super::jobs::JobQueue;
use super::pool::task_pool;
use super::store::KeepsakeStore;
use crate::slot::SlotId;
use crate::store::{SlotEntry, StoreError};
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;

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
/// load and delete, and on [`RefreshSlots`](super::RefreshSlots).
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

    fn update(&mut self, result: Result<Vec<SlotEntry>, String>) {
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

/// The background listing: at most one runs; a request while it runs lists again after it.
#[derive(Resource)]
pub(crate) struct ListingRefresh {
    running: Option<Task<Result<Vec<SlotEntry>, StoreError>>>,
    stale: bool,
}

impl Default for ListingRefresh {
    /// Stale from the start, so the first frame lists the slots.
    fn default() -> Self {
        ListingRefresh {
            running: None,
            stale: true,
        }
    }
}

impl ListingRefresh {
    /// Lists the slots again as soon as possible.
    pub(crate) fn request(&mut self) {
        self.stale = true;
    }
}

/// Refreshes [`SaveSlots`] in the background when something may have changed it.
pub(crate) fn refresh_listing(
    mut refresh: ResMut<ListingRefresh>,
    mut slots: ResMut<SaveSlots>,
    store: Res<KeepsakeStore>,
) {
    if let Some(result) = refresh.running.as_mut().and_then(check_ready) {
        refresh.running = None;
        slots.update(result.map_err(|error| error.to_string()));
    }
    if refresh.running.is_some() || !refresh.stale {
        return;
    }
    refresh.stale = false;
    match store.get() {
        Ok(store) => {
            let store = store.clone();
            refresh.running = Some(task_pool().spawn(async move { store.list() }));
        }
        Err(error) => slots.update(Err(error.to_string())),
    }
}

/// Copies the queue into [`KeepsakeStatus`] (only when it changed, so change detection means
/// something to menus).
pub(crate) fn publish_status(queue: Res<JobQueue>, mut status: ResMut<KeepsakeStatus>) {
    let current = KeepsakeStatus {
        running: queue.running_jobs().collect(),
        waiting: queue.waiting_jobs().collect(),
    };
    status.set_if_neq(current);
}
