//! Turns requests, hotkeys and the autosave timer into jobs.

use super::events::{DeleteRequest, LoadRequest, RefreshSlots, SaveRequest};
use super::job::{Job, SaveTarget};
use super::jobs::JobQueue;
use super::settings::{AutosaveTimer, KeepsakeSettings, Playtime};
use super::status::ListingRefresh;
use crate::slot::SlotId;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

/// The request messages a game (or the save menu) sends.
#[derive(SystemParam)]
pub(crate) struct Requests<'w, 's> {
    saves: MessageReader<'w, 's, SaveRequest>,
    loads: MessageReader<'w, 's, LoadRequest>,
    deletes: MessageReader<'w, 's, DeleteRequest>,
    refreshes: MessageReader<'w, 's, RefreshSlots>,
}

/// Queues the jobs the request messages ask for.
pub(crate) fn collect_requests(
    mut requests: Requests,
    mut queue: ResMut<JobQueue>,
    mut listing: ResMut<ListingRefresh>,
) {
    for request in requests.saves.read() {
        queue.enqueue(Job::save(request.target));
    }
    for request in requests.loads.read() {
        queue.enqueue(Job::Load(request.slot));
    }
    for request in requests.deletes.read() {
        queue.enqueue(Job::Delete(request.slot));
    }
    if requests.refreshes.read().count() > 0 {
        listing.request();
    }
}

/// Quicksave and quickload keys.
pub(crate) fn hotkeys(
    keys: Option<Res<ButtonInput<KeyCode>>>,
    settings: Res<KeepsakeSettings>,
    mut queue: ResMut<JobQueue>,
) {
    let Some(keys) = keys else {
        return; // no input plugin (headless)
    };
    let pressed = |key: Option<KeyCode>| key.is_some_and(|key| keys.just_pressed(key));
    if pressed(settings.quicksave_key) {
        queue.enqueue(Job::save(SaveTarget::Slot(SlotId::Quick)));
    }
    if pressed(settings.quickload_key) {
        queue.enqueue(Job::Load(SlotId::Quick));
    }
}

/// Advances play time and the autosave timer; queues a timed autosave when one is due, unless a
/// save is already running or waiting (it would capture the same world).
pub(crate) fn tick_clocks(
    time: Res<Time>,
    settings: Res<KeepsakeSettings>,
    mut playtime: ResMut<Playtime>,
    mut timer: ResMut<AutosaveTimer>,
    mut queue: ResMut<JobQueue>,
) {
    playtime.0 += time.delta();
    if !timer.tick(time.delta(), settings.autosave_every) {
        return;
    }
    if queue.has_save() {
        debug!("keepsake: autosave skipped, a save is already in flight");
    } else {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}
