//! The ring's systems: requests and the timer become points and rewinds. A rewind captures the
//! world (what changed since the last capture) and, when the point's reverse deltas name few
//! rows to compare, restores it in place in the same frame; otherwise the point is put
//! together, decoded and compared on the task pool, and applied on the main thread when ready,
//! as a load is.

use super::events::{
    RewindCompleted, RewindError, RewindFailed, RewindPointCompleted, RewindPointFailed,
    RewindPointRequest, RewindRequest,
};
use super::ring::{RewindRing, RewindTo};
use super::settings::{RewindSettings, RewindTimer};
use crate::plugin::capture::{SaveCaptureCache, capture, settle_later};
use crate::plugin::events::report;
use crate::plugin::pool::task_pool;
use crate::plugin::restored::{RestoredFrom, RewindPointId, WorldRestored};
use crate::plugin::runner::SessionEntities;
use crate::plugin::settings::KeepsakeSettings;
use crate::plugin::unsaved;
use crate::snapshot::{
    self, ApplyReport, DecodedSnapshot, KeptSnapshot, LoadMode, PendingSnapshot, PreparedLoad,
    SameState, SaveRegistry, SnapshotError, UnsavedComponent,
};
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

/// Whether a rewind is being made ready on the pool (for `testing`'s waits).
#[cfg(feature = "testing")]
pub(crate) fn rewind_in_flight(world: &World) -> bool {
    world
        .get_resource::<Rewinding>()
        .is_some_and(|rewinding| rewinding.0.is_some())
}

/// A rewind whose point is made ready on the pool.
pub(super) struct RewindTask {
    rewind: Rewind,
    task: Task<Prepared>,
    /// A point was asked for meanwhile: it is taken once the rewind landed, of the world it
    /// brought back (taken before, it would be forgotten when the rewind lands).
    point_waiting: bool,
}

/// A point made ready on the pool.
type Prepared = Result<Landing, SnapshotError>;

/// How a point made ready on the pool is applied.
enum Landing {
    /// Compared with a capture: in place.
    InPlace(Box<PreparedLoad>),
    /// By respawning ([`LoadMode::Respawn`]).
    Respawn(Box<DecodedSnapshot>),
}

/// One frame of the ring: a finished rewind is applied, a rewind asked for starts, then a point
/// is taken when asked for or due (one asked for waits for a rewind under way to land: taken
/// before it, it would be forgotten when it lands).
pub(crate) fn run_rewind(world: &mut World) {
    let point_waited = finish_rewind(world);
    let (point_asked, rewinds) = read_requests(world);
    let rewound = !rewinds.is_empty();
    for to in rewinds {
        start_rewind(world, to);
    }
    let due = {
        let every = world.resource::<RewindSettings>().every;
        let delta = world.resource::<Time>().delta();
        world.resource_mut::<RewindTimer>().tick(delta, every)
    };
    // Not in a frame that rewound: in frames longer than the timer's period, a held rewind
    // would otherwise keep a point of each world it brings back, and step back to it again.
    let due = due && !rewound;
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
    settle_later(world, pending);
    let capture_time = started.elapsed();
    report(
        world,
        RewindPointCompleted {
            point,
            entities,
            capture_time,
            points,
            memory,
            evicted,
        },
    );
}

/// Rows a rewind may compare in the frame it is asked for (a comparison of a row's bytes costs
/// tens of nanoseconds). Beyond it (a point far back, or much changed since), or beyond the
/// values [`InFrameCost`] lets it write there, the point is put together, decoded and compared
/// on the pool, and the rewind lands a few frames later.
const IN_FRAME_ROWS: usize = 65_536;

/// The main thread's time a rewind may take in its frame to decode and write values.
const IN_FRAME_TIME: Duration = Duration::from_millis(8);

/// Values a rewind always may write in its frame, whatever they cost.
const IN_FRAME_VALUES_MIN: usize = 1024;

/// What decoding and writing one value costs the main thread, as the rewinds in the frame
/// measured it: how many values the next one may write in [`IN_FRAME_TIME`]. A moving
/// average, a quarter the newest, each counted as the lesser of itself and the one before: one
/// slow step (the thread preempted, cold memory) must not send the next step of a held rewind
/// to the pool, where it lands tens of frames later and the steps asked meanwhile are
/// refused; two in a row do. Only rewinds
/// in the frame are measured, so each one sent to the pool for its values takes a quarter of
/// the way back to the first guess: a world whose values got cheaper tries the frame again.
///
/// Measured, not fixed, because it differs twentyfold between worlds: a position costs under
/// half a microsecond, a map of strings over six (the frame benchmark at 100k entities, 10k
/// values a step: 4.4 ms on `real-game`, 66 ms on `strings-maps`). A fixed count either sent
/// every step of a 100k world to the pool (it landed 30-60 frames late, the other steps of a
/// held rewind refused) or froze the frame on costly values.
#[derive(Resource)]
pub(super) struct InFrameCost {
    per_value: Duration,
    /// What the last rewind measured, for the next to count the lesser of the two.
    last: Option<Duration>,
}

/// Before any rewind measured it: about what a small value costs (the first rewind of a world
/// of costly values may take longer than the budget, once).
const FIRST_GUESS: Duration = Duration::from_nanos(500);

impl Default for InFrameCost {
    fn default() -> Self {
        InFrameCost {
            per_value: FIRST_GUESS,
            last: None,
        }
    }
}

impl InFrameCost {
    /// The values a rewind may write in its frame.
    fn values(&self) -> usize {
        let per_value = self.per_value.as_nanos().max(1);
        let within = IN_FRAME_TIME.as_nanos() / per_value;
        usize::try_from(within).map_or(usize::MAX, |n| n.max(IN_FRAME_VALUES_MIN))
    }

    /// Notes what a rewind in the frame cost: `time` for `values` values (too few values say
    /// more of the fixed cost than of theirs, and are not noted).
    fn note(&mut self, values: usize, time: Duration) {
        if let Ok(values @ 256..) = u32::try_from(values) {
            let measured = time / values;
            let counted = self.last.map_or(measured, |last| measured.min(last));
            self.last = Some(measured);
            self.per_value = (self.per_value * 3 + counted) / 4;
        }
    }

    /// Notes a rewind sent to the pool for the values it would write: the average takes a
    /// quarter of the way back to the first guess (see the type's docs).
    fn sent_to_pool(&mut self) {
        self.per_value = (self.per_value * 3 + FIRST_GUESS) / 4;
    }
}

/// The rewind asked for: where to, which point, how old.
#[derive(Clone, Copy)]
struct Rewind {
    to: RewindTo,
    point: RewindPointId,
    age: Duration,
}

impl Rewind {
    /// The rewind as a warning names it.
    fn what(&self) -> String {
        format!("rewind point {}", self.point.0)
    }
}

/// Rewinds to the point `to` names: in place in this frame when little changed since it,
/// else put together, decoded and compared on the pool (see the module docs).
fn start_rewind(world: &mut World, to: RewindTo) {
    if let Some(running) = &world.resource::<Rewinding>().0 {
        let error = RewindError::InProgress(running.rewind.point);
        return fail(world, to, error);
    }
    let now = world.resource::<Time>().elapsed();
    let ring = world.resource::<RewindRing>();
    let Some(point) = ring.find(to, now) else {
        let points = ring.len();
        return fail(world, to, RewindError::NoPoint { to, points });
    };
    let rewind = Rewind {
        to,
        point: point.id,
        age: now.saturating_sub(point.taken_at),
    };
    let kept = point.kept.clone();
    if world.resource::<KeepsakeSettings>().load_mode == LoadMode::Respawn {
        let task = respawn_task(world, kept);
        return running(world, rewind, task);
    }
    let live = match capture(world) {
        Ok(live) => live,
        Err(error) => return fail(world, to, RewindError::Snapshot(error)),
    };
    let rows = kept.rows_changed_since(&live);
    debug!(
        "keepsake: rewind to point {}: {rows} rows to compare",
        rewind.point.0
    );
    let started = Instant::now();
    let max_values = world.resource::<InFrameCost>().values();
    let restore = |world: &mut World| {
        let restored = (rows <= IN_FRAME_ROWS).then(|| {
            world.resource_scope(|world, mut session: Mut<SessionEntities>| {
                let record = &mut session.this_world;
                snapshot::restore_within(world, &kept, &live, record, max_values)
            })
        });
        restored.transpose()
    };
    let spawned = |restored: &Result<Option<Option<ApplyReport>>, SnapshotError>| match restored {
        Ok(Some(Some(applied))) => unsaved::spawned_by(applied),
        _ => Vec::new(),
    };
    let (restored, missing) = unsaved::apply_noting_losses(world, &rewind.what(), restore, spawned);
    match restored {
        Ok(Some(Some(applied))) => {
            // The capture's patches are put together off the main thread, as a point's are.
            settle_later(world, live);
            let time = started.elapsed();
            let values = applied.written + applied.inserted + applied.spawned;
            world.resource_mut::<InFrameCost>().note(values, time);
            let landed = Landed {
                applied,
                missing,
                time,
                respawned: false,
            };
            land(world, rewind, landed);
        }
        Ok(_) => {
            if rows <= IN_FRAME_ROWS {
                world.resource_mut::<InFrameCost>().sent_to_pool();
            }
            let task = prepare_task(world, kept, live);
            running(world, rewind, task);
        }
        Err(error) => fail(world, to, RewindError::Snapshot(error)),
    }
}

/// The point put together, decoded and compared with `live` on the pool.
fn prepare_task(world: &World, kept: KeptSnapshot, live: PendingSnapshot) -> Task<Prepared> {
    let registries = registries(world);
    let record = world.resource::<SessionEntities>().this_world.clone();
    task_pool().spawn(async move {
        let decoded = decode_point(&kept, &registries)?;
        let prepared = snapshot::prepare(decoded, &live, &record);
        live.settle();
        Ok(Landing::InPlace(Box::new(prepared)))
    })
}

/// The point put together and decoded on the pool, to be respawned.
fn respawn_task(world: &World, kept: KeptSnapshot) -> Task<Prepared> {
    let registries = registries(world);
    task_pool().spawn(async move {
        let decoded = decode_point(&kept, &registries)?;
        Ok(Landing::Respawn(Box::new(decoded)))
    })
}

/// A kept point put together and decoded against the app's types (on the pool).
fn decode_point(
    kept: &KeptSnapshot,
    (registry, types, assets): &(SaveRegistry, AppTypeRegistry, Option<AssetServer>),
) -> Result<DecodedSnapshot, SnapshotError> {
    let snapshot = kept.pending().finish();
    snapshot::decode_with_assets(
        &snapshot.blob,
        snapshot.state_hash,
        registry,
        &types.read(),
        assets.as_ref(),
    )
}

/// What decoding a point needs, for the pool.
fn registries(world: &World) -> (SaveRegistry, AppTypeRegistry, Option<AssetServer>) {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let assets = world.get_resource::<AssetServer>().cloned();
    (registry, types, assets)
}

/// Keeps a rewind under way on the pool.
fn running(world: &mut World, rewind: Rewind, task: Task<Prepared>) {
    world.resource_mut::<Rewinding>().0 = Some(RewindTask {
        rewind,
        task,
        point_waiting: false,
    });
}

/// Applies a rewind whose point is ready, and reports it; returns whether a point was asked
/// for while it was under way.
fn finish_rewind(world: &mut World) -> bool {
    let mut rewinding = world.resource_mut::<Rewinding>();
    let Some(running) = rewinding.0.as_mut() else {
        return false;
    };
    let Some(ready) = check_ready(&mut running.task) else {
        return false;
    };
    let Some(landed) = rewinding.0.take() else {
        return false;
    };
    let rewind = landed.rewind;
    let started = Instant::now();
    let mut ready = ready;
    if let Ok(Landing::InPlace(prepared)) = &mut ready {
        // The saved States first (see `runner::load::enter_states`). A rewind steps back
        // through moments of the same play: a state the game is in is not entered again.
        prepared.enter_saved_states(world, SameState::Stay);
    }
    let (applied, missing) = unsaved::apply_noting_losses(
        world,
        &rewind.what(),
        |world| ready.and_then(|ready| apply_landing(world, ready)),
        |applied| {
            (applied.as_ref()).map_or(Vec::new(), |(applied, _)| unsaved::spawned_by(applied))
        },
    );
    match applied {
        Ok((applied, respawned)) => {
            let landing = Landed {
                applied,
                missing,
                time: started.elapsed(),
                respawned,
            };
            land(world, rewind, landing);
        }
        Err(error) => fail(world, rewind.to, RewindError::Snapshot(error)),
    }
    landed.point_waiting
}

/// Applies a point prepared on the pool: in place against a capture taken now, or by
/// respawning. Returns the report and whether it respawned.
fn apply_landing(world: &mut World, ready: Landing) -> Result<(ApplyReport, bool), SnapshotError> {
    match ready {
        Landing::Respawn(decoded) => {
            let applied =
                snapshot::apply_entering(world, *decoded, LoadMode::Respawn, SameState::Stay);
            Ok((applied, true))
        }
        Landing::InPlace(prepared) => {
            // The saved States were entered: the capture sees what their OnExit and OnEnter
            // did, and the apply compares again what they changed.
            let live = capture(world)?;
            let applied = world.resource_scope(|world, mut session: Mut<SessionEntities>| {
                snapshot::apply_prepared(world, *prepared, &live, &mut session.this_world)
            });
            settle_later(world, live);
            Ok((applied, false))
        }
    }
}

/// What applying a rewind's point did.
struct Landed {
    applied: ApplyReport,
    /// What the restored entities came back without (see `unsaved::apply_noting_losses`).
    missing: Arc<Vec<UnsavedComponent>>,
    /// The main thread's part.
    time: Duration,
    /// Whether the point was respawned rather than applied in place.
    respawned: bool,
}

/// A rewind landed: newer points forgotten, the timer started again, [`RewindCompleted`] and
/// [`WorldRestored`](crate::plugin::WorldRestored).
fn land(world: &mut World, rewind: Rewind, landed: Landed) {
    let Landed {
        applied,
        missing,
        time,
        respawned,
    } = landed;
    let forgotten = (world.resource_mut::<RewindRing>()).forget_after(rewind.point, respawned);
    world.resource_mut::<RewindTimer>().reset();
    let rewound = RewindCompleted {
        point: rewind.point,
        age: rewind.age,
        forgotten,
        entity_map: Arc::new(applied.entity_map),
        dropped_references: Arc::new(applied.dropped_references),
        dropped_fields: Arc::new(applied.dropped_fields),
        missing_components: missing,
        apply_time: time,
    };
    report(world, rewound.clone());
    after_rewind(world, &rewound);
}

fn fail(world: &mut World, to: RewindTo, error: RewindError) {
    warn!("keepsake: rewind ({to}) failed: {error}");
    let error = Arc::new(error);
    report(world, RewindFailed { to, error });
}

/// A slot loaded: the points are of another timeline, which a rewind must not bring back; a
/// rewind being put together on the pool is dropped (it would land over the loaded world).
pub(super) fn clear_on_load(
    _loaded: On<crate::plugin::LoadCompleted>,
    mut ring: ResMut<RewindRing>,
    mut rewinding: ResMut<Rewinding>,
    mut commands: Commands,
) {
    ring.clear();
    if let Some(dropped) = rewinding.0.take() {
        let rewind = dropped.rewind;
        let error = Arc::new(RewindError::SupersededByLoad(rewind.point));
        let failed = RewindFailed {
            to: rewind.to,
            error,
        };
        commands.queue(move |world: &mut World| report(world, failed));
    }
}

/// Reports [`WorldRestored`] after a rewind's [`RewindCompleted`].
fn after_rewind(world: &mut World, rewound: &RewindCompleted) {
    let from = RestoredFrom::Rewind(rewound.point);
    report(world, WorldRestored { from });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotId;
    use crate::format::SaveMeta;
    use crate::plugin::LoadCompleted;
    use bevy::tasks::TaskPool;

    fn loaded() -> LoadCompleted {
        LoadCompleted {
            slot: SlotId::Quick,
            generation: 1,
            restored_from_backup: false,
            skipped_generations: Arc::default(),
            meta: SaveMeta::new(SlotId::Quick),
            entity_map: Arc::default(),
            refused_asset_paths: Arc::default(),
            dropped_fields: Arc::default(),
            dropped_references: Arc::default(),
            apply_time: Duration::ZERO,
            missing_components: Arc::default(),
        }
    }

    #[test]
    fn a_rewind_in_the_frame_may_write_as_many_values_as_the_ones_before_measured_fit() {
        let mut cost = InFrameCost::default();
        assert_eq!(
            cost.values(),
            16_000,
            "0.5 µs a value before any was measured"
        );
        // `real-game` at 100k: 10k values in 4.4 ms, then 6.4 ms, then a step 50 times
        // slower (the thread preempted long): the next step lands in its frame too.
        cost.note(10_000, Duration::from_micros(4400));
        assert_eq!(cost.per_value, Duration::from_nanos(485));
        cost.note(10_000, Duration::from_micros(6400));
        cost.note(10_000, Duration::from_millis(300));
        assert!(cost.values() > 10_000, "{}", cost.values());
        // Two slow steps in a row count: the next goes to the pool; each step sent there
        // brings the frame nearer again.
        cost.note(10_000, Duration::from_millis(30));
        assert!(cost.values() < 10_000, "{}", cost.values());
        let mut trips = 0;
        while cost.values() < 10_000 {
            cost.sent_to_pool();
            trips += 1;
        }
        assert!(trips <= 4, "{trips} steps sent to the pool");
        // `strings-maps` at 100k: 10k values in 66 ms. The next 10k go to the pool; a small
        // rewind still lands in place.
        let mut cost = InFrameCost::default();
        cost.note(10_000, Duration::from_millis(66));
        assert!(cost.values() < 10_000, "{}", cost.values());
        for _ in 0..20 {
            cost.note(10_000, Duration::from_millis(66));
        }
        assert!((1_200..1_400).contains(&cost.values()), "{}", cost.values());
        // However costly the values, a small rewind lands in place.
        for _ in 0..20 {
            cost.note(1_000, Duration::from_secs(1));
        }
        assert_eq!(cost.values(), IN_FRAME_VALUES_MIN);
        // A rewind of few values says little of what a value costs.
        let before = cost.per_value;
        cost.note(10, Duration::from_millis(5));
        assert_eq!(cost.per_value, before);
        // Rewinds sent to the pool bring the frame back in reach: the world may have changed.
        for _ in 0..40 {
            cost.sent_to_pool();
        }
        assert!(cost.values() > 15_000, "{}", cost.values());
    }

    /// Every [`RewindFailed`] triggered.
    #[derive(Resource, Default)]
    struct Failed(Vec<RewindFailed>);

    #[test]
    fn a_load_drops_the_rewind_being_put_together_and_says_so() {
        let mut app = App::new();
        app.init_resource::<RewindRing>()
            .init_resource::<Rewinding>()
            .init_resource::<Failed>()
            .add_observer(clear_on_load)
            .add_observer(|failed: On<RewindFailed>, mut all: ResMut<Failed>| {
                all.0.push(failed.event().clone());
            });
        let point = RewindPointId(7);
        // A task that never finishes: the rewind is still on the pool when the load lands.
        let task = TaskPool::new().spawn(std::future::pending::<Prepared>());
        app.world_mut().resource_mut::<Rewinding>().0 = Some(RewindTask {
            rewind: Rewind {
                to: RewindTo::Back(1),
                point,
                age: Duration::ZERO,
            },
            task,
            point_waiting: false,
        });

        app.world_mut().trigger(loaded());
        app.world_mut().flush();

        assert!(app.world().resource::<Rewinding>().0.is_none());
        let failed = &app.world().resource::<Failed>().0;
        assert_eq!(failed.len(), 1);
        assert!(matches!(
            *failed[0].error,
            RewindError::SupersededByLoad(p) if p == point
        ));
    }
}
