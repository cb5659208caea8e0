//! Turns request messages into jobs, and advances play time.

use super::events::{DeleteRequest, LoadRequest, RefreshSlotsRequest, SaveRequest};
use super::job::Job;
use super::listing::ListingRefresh;
use super::runner::JobQueue;
use super::settings::Playtime;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;

/// How far the plugin has read each request message. One resource, so the frame's request
/// system and the exit path ([`super::exit`]) share it: no request is read twice or missed.
#[derive(Resource, Default)]
pub(crate) struct RequestCursors {
    saves: MessageCursor<SaveRequest>,
    loads: MessageCursor<LoadRequest>,
    deletes: MessageCursor<DeleteRequest>,
    refreshes: MessageCursor<RefreshSlotsRequest>,
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
        let refreshes = world.resource::<Messages<RefreshSlotsRequest>>();
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

/// Advances play time (the autosave timer is [`AutosavePlugin`](super::AutosavePlugin)'s).
pub(crate) fn tick_playtime(time: Res<Time>, mut playtime: ResMut<Playtime>) {
    playtime.0 += time.delta();
}
