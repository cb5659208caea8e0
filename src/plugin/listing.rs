//! The background refresh of [`SaveSlots`]: after every save, load and delete (the job runner
//! asks), on [`RefreshSlotsRequest`](super::RefreshSlotsRequest), and when cloud sync brought
//! saves, the profile's slots are listed again on the task pool, at most one listing at a time.

use super::pool::task_pool;
use super::status::SaveSlots;
use super::store::KeepsakeStore;
use crate::store::{SlotEntry, StoreError};
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;

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

    /// Whether a listing runs on the pool or is due (for `testing`'s waits).
    #[cfg(feature = "testing")]
    pub(crate) fn is_busy(&self) -> bool {
        self.running.is_some() || self.stale
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
