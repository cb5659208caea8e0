//! The ring's systems: requests and the timer become points and rewinds; a rewind's point is
//! put together and decoded on the task pool and applied on the main thread, as a load is.

use super::events::{
    RewindCompleted, RewindError, RewindFailed, RewindPointFailed, RewindPointRequest,
    RewindPointTaken, RewindRequest,
};
use super::ring::{RewindPointId, RewindRing, RewindTo};
use super::settings::{RewindSettings, RewindTimer};
use crate::plugin::events::report;
use crate::plugin::pool::task_pool;
use crate::plugin::runner::SaveCaptureCache;
use crate::plugin::{restored, unsaved};
use crate::snapshot::{self, DecodedSnapshot, LoadMode, SaveRegistry, SnapshotError};
use bevy::asset::AssetServer;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far the ring has read its request messages.
#[derive(Resource, Default)]
pub(super) struct RewindCursors {
    points: MessageCursor<RewindPointRequest>,
    rewinds: MessageCursor<RewindRequest>,
}

/// The rewind being put together on the pool, if any.
#[derive(Resource, Default)]
pub(super) struct Rewinding(Option<RewindTask>);

pub(super) struct RewindTask {
    to: RewindTo,
    point: RewindPointId,
    age: Duration,
    task: Task<Result<DecodedSnapshot, SnapshotError>>,
    /// A point was asked for meanwhile: it is taken once the rewind landed, of the world it
    /// brought back (taken before, it would be forgotten when the rewind lands).
    point_waiting: bool,
}

/// One frame of the ring: a finished rewind is applied, a rewind asked for starts, then a point
/// is taken when asked for or due (one asked for waits for a rewind under way to land: taken
/// before it, it would be forgotten when it lands).
pub(crate) fn run_rewind(world: &mut World) {
    let point_waited = finish_rewind(world);
    let (point_asked, rewinds) = read_requests(world);
    for to in rewinds {
        start_rewind(world, to);
    }
    let due = {
        let every = world.resource::<RewindSettings>().every;
        let delta = world.resource::<Time>().delta();
        world.resource_mut::<RewindTimer>().tick(delta, every)
    };
    match world.resource_mut::<Rewinding>().0.as_mut() {
        // A point due by the timer is skipped: the timer starts again when the rewind lands.
        Some(running) => running.point_waiting |= point_asked,
        None if point_asked || point_waited || due => take_point(world),
        None => {}
    }
}

/// The requests of this frame: whether a point is asked for, and the rewinds asked for.
fn read_requests(world: &mut World) -> (bool, Vec<RewindTo>) {
    world.resource_scope(|world, mut cursors: Mut<RewindCursors>| {
        let points = world.resource::<Messages<RewindPointRequest>>();
        let point_wanted = cursors.points.read(points).count() > 0;
        let rewinds = world.resource::<Messages<RewindRequest>>();
        let rewinds = cursors.rewinds.read(rewinds).map(|r| r.to).collect();
        (point_wanted, rewinds)
    })
}

/// Captures the world through the plugin's capture cache (what changed since the last save or
/// point is encoded) and keeps it as the ring's newest point.
fn take_point(world: &mut World) {
    let started = Instant::now();
    let captured = world.resource::<SaveCaptureCache>().lock().capture(world);
    let pending = match captured {
        Ok(pending) => pending,
        Err(error) => {
            warn!("keepsake: no rewind point: {error}");
            let error = Arc::new(error);
            return report(world, RewindPointFailed { error });
        }
    };
    let now = world.resource::<Time>().elapsed();
    let settings = world.resource::<RewindSettings>().clone();
    let mut ring = world.resource_mut::<RewindRing>();
    let (point, evicted) = ring.keep(&pending, now, &settings);
    let (points, memory) = (ring.len(), ring.memory());
    if evicted.for_memory > 0 && points == 1 {
        // Once: it would be true of every point from now on.
        warn_once!(
            "keepsake: one rewind point holds {memory} bytes, more than the budget of {} \
             bytes: the ring keeps only the newest point",
            settings.memory_budget
        );
    }
    world.resource_mut::<RewindTimer>().reset();
    let entities = pending.entities();
    // The patches this capture made are put together off the main thread, so the next
    // captures never have to.
    task_pool().spawn(async move { pending.settle() }).detach();
    let capture_time = started.elapsed();
    report(
        world,
        RewindPointTaken {
            point,
            entities,
            capture_time,
            points,
            memory,
            evicted,
        },
    );
}

/// Starts putting the point `to` names together and decoding it on the pool.
fn start_rewind(world: &mut World, to: RewindTo) {
    if let Some(running) = &world.resource::<Rewinding>().0 {
        let error = RewindError::InProgress(running.point);
        return fail(world, to, error);
    }
    let now = world.resource::<Time>().elapsed();
    let ring = world.resource::<RewindRing>();
    let Some(point) = ring.find(to, now) else {
        let points = ring.len();
        return fail(world, to, RewindError::NoPoint { to, points });
    };
    let age = now.saturating_sub(point.taken_at);
    let (kept, id) = (point.kept.clone(), point.id);
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let assets = world.get_resource::<AssetServer>().cloned();
    let task = task_pool().spawn(async move {
        let snapshot = kept.pending().finish();
        snapshot::decode_with_assets(
            &snapshot.blob,
            snapshot.state_hash,
            &registry,
            &types.read(),
            assets.as_ref(),
        )
    });
    world.resource_mut::<Rewinding>().0 = Some(RewindTask {
        to,
        point: id,
        age,
        task,
        point_waiting: false,
    });
}

/// Applies a rewind whose point is decoded, and reports it; returns whether a point was asked
/// for while it was under way.
fn finish_rewind(world: &mut World) -> bool {
    let mut rewinding = world.resource_mut::<Rewinding>();
    let Some(running) = rewinding.0.as_mut() else {
        return false;
    };
    let Some(decoded) = check_ready(&mut running.task) else {
        return false;
    };
    let Some(landed) = rewinding.0.take() else {
        return false;
    };
    let (to, point, age) = (landed.to, landed.point, landed.age);
    let decoded = match decoded {
        Ok(decoded) => decoded,
        Err(error) => {
            fail(world, to, RewindError::Snapshot(error));
            return landed.point_waiting;
        }
    };
    let started = Instant::now();
    let what = format!("rewind point {}", point.0);
    let (applied, missing_components) = unsaved::apply_noting_losses(world, &what, |world| {
        snapshot::apply(world, decoded, LoadMode::Replace)
    });
    let load_time = started.elapsed();
    let forgotten = world.resource_mut::<RewindRing>().forget_after(point);
    world.resource_mut::<RewindTimer>().reset();
    let rewound = RewindCompleted {
        point,
        age,
        forgotten,
        entity_map: Arc::new(applied.entity_map),
        dropped_references: Arc::new(applied.dropped_references),
        dropped_fields: Arc::new(applied.dropped_fields),
        missing_components,
    };
    report(world, rewound.clone());
    restored::after_rewind(world, &rewound, load_time);
    landed.point_waiting
}

fn fail(world: &mut World, to: RewindTo, error: RewindError) {
    warn!("keepsake: rewind ({to}) failed: {error}");
    let error = Arc::new(error);
    report(world, RewindFailed { to, error });
}

/// A slot loaded: the points are of another timeline, which a rewind must not bring back.
pub(super) fn clear_on_load(
    _loaded: On<crate::plugin::LoadCompleted>,
    mut ring: ResMut<RewindRing>,
) {
    ring.clear();
}
