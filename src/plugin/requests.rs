//! Turns requests, hotkeys and the autosave timer into jobs.

use super::events::{DeleteRequest, LoadRequest, RefreshSlots, SaveRequest};
use super::job::{Job, SaveTarget};
use super::listing::ListingRefresh;
use super::runner::JobQueue;
use super::settings::{AutosaveTimer, KeepsakeSettings, Playtime};
use crate::SlotId;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;

/// How far the plugin has read each request message. One resource, so the frame's request
/// system and the exit path ([`super::exit`]) share it: no request is read twice or missed.
#[derive(Resource, Default)]
pub(crate) struct RequestCursors {
    saves: MessageCursor<SaveRequest>,
    loads: MessageCursor<LoadRequest>,
    deletes: MessageCursor<DeleteRequest>,
    refreshes: MessageCursor<RefreshSlots>,
}

/// Queues the jobs the request messages ask for.
pub(crate) fn collect_requests(world: &mut World) {
    world.resource_scope(|world, mut cursors: Mut<RequestCursors>| {
        let mut jobs = Vec::new();
        let saves = world.resource::<Messages<SaveRequest>>();
        jobs.extend(cursors.saves.read(saves).map(|r| Job::save(r.target)));
        let loads = world.resource::<Messages<LoadRequest>>();
        jobs.extend(cursors.loads.read(loads).map(|r| Job::Load(r.slot)));
        let deletes = world.resource::<Messages<DeleteRequest>>();
        jobs.extend(cursors.deletes.read(deletes).map(|r| Job::Delete(r.slot)));
        let refreshes = world.resource::<Messages<RefreshSlots>>();
        let relist = cursors.refreshes.read(refreshes).count() > 0;

        let mut queue = world.resource_mut::<JobQueue>();
        for job in jobs {
            queue.enqueue(job);
        }
        if relist {
            world.resource_mut::<ListingRefresh>().request();
        }
    });
}

/// Quicksave and quickload keys (always in `PreUpdate`, where `just_pressed` is true exactly
/// once per press, whichever schedule the rest of the plugin runs in).
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
