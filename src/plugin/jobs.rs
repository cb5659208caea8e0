//! Background jobs: one per slot at a time, run on `AsyncComputeTaskPool`, polled every frame.
//!
//! The main thread only captures the world (for a save) and applies a decoded snapshot (for a
//! load). A save's capture is incremental ([`CaptureCache`], kept in a resource between saves):
//! the main thread re-encodes only the values that changed since the last save and reads the
//! entity table; joining the cached chunks into the blob, hashing it, encoding, compression,
//! checksums, the durable write, reading, verifying and decoding all run on the pool.
//!
//! # Busy slots
//!
//! At most one job per [`JobTarget`] runs at a time (all autosave slots count as one, the
//! ring). A request for a busy target waits in a queue and starts once the target is free; a
//! request identical to one already waiting is coalesced into it (two waiting saves of one slot
//! would both capture the world when they start, so one is enough). Timed autosaves are
//! skipped, not queued, while any save is running or waiting.

use super::error::KeepsakeError;
use super::events::{
    DeleteCompleted, DeleteFailed, LoadCompleted, LoadFailed, SaveCompleted, SaveFailed,
    SaveStarted, report,
};
use super::job::{Job, JobTarget, SaveReason, SaveTarget};
use super::listing::ListingRefresh;
use super::pool::task_pool;
use super::settings::{AutosaveTimer, KeepsakeSettings, Playtime, SaveTitle};
use super::status::KeepsakeStatus;
use super::store::KeepsakeStore;
use super::thumbnail::{ThumbnailCapture, ThumbnailWait, ThumbnailWanted, WaitState};
use crate::format::{SaveBundle, SaveMeta, Timestamp, WorldState};
use crate::slot::SlotId;
use crate::snapshot::{
    self, CaptureCache, DecodedSnapshot, LeftOutHandle, LoadMode, PendingSnapshot,
    RuntimeAssetHandles, SaveRegistry,
};
use crate::store::{GenerationFailure, SaveReceipt, SlotStore};
use bevy::asset::AssetServer;
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The encoded rows of the last save, so the next one re-encodes only what changed. In a mutex
/// so a capture can borrow it next to the world it reads.
#[derive(Resource, Default)]
pub(crate) struct SaveCaptureCache(Mutex<CaptureCache>);

/// The plugin's queue of jobs, waiting and running.
#[derive(Resource, Default)]
pub(crate) struct JobQueue {
    waiting: VecDeque<Job>,
    running: Vec<RunningJob>,
}

impl JobQueue {
    /// Adds a job unless an identical one is already waiting.
    pub(crate) fn enqueue(&mut self, job: Job) {
        if !self.waiting.contains(&job) {
            self.waiting.push_back(job);
        }
    }

    /// Whether a save is running or waiting.
    pub(crate) fn has_save(&self) -> bool {
        self.jobs().any(|job| matches!(job, Job::Save { .. }))
    }

    /// Whether a save of `target` waits to start (and so will capture the world as it is then).
    pub(crate) fn has_waiting_save_to(&self, target: SaveTarget) -> bool {
        self.waiting_jobs()
            .any(|job| matches!(job, Job::Save { target: t, .. } if t == target))
    }

    /// Whether nothing runs or waits.
    pub(crate) fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running.is_empty()
    }

    /// Every job, running first.
    pub(crate) fn jobs(&self) -> impl Iterator<Item = Job> + '_ {
        self.running_jobs().chain(self.waiting_jobs())
    }

    pub(crate) fn running_jobs(&self) -> impl Iterator<Item = Job> + '_ {
        self.running.iter().map(|running| running.job)
    }

    pub(crate) fn waiting_jobs(&self) -> impl Iterator<Item = Job> + '_ {
        self.waiting.iter().copied()
    }

    /// Takes the waiting jobs whose target is free, at most one per target, in queue order.
    fn take_startable(&mut self) -> Vec<Job> {
        let mut busy: Vec<JobTarget> = self.running_jobs().map(Job::target).collect();
        let mut ready = Vec::new();
        self.waiting.retain(|job| {
            if busy.contains(&job.target()) {
                return true;
            }
            busy.push(job.target());
            ready.push(*job);
            false
        });
        ready
    }

    /// Removes and returns the running jobs that finished.
    fn take_finished(&mut self) -> Vec<Outcome> {
        let mut finished = Vec::new();
        let mut index = 0;
        while index < self.running.len() {
            match self.running[index].poll() {
                Some(outcome) => {
                    self.running.swap_remove(index);
                    finished.push(outcome);
                }
                None => index += 1,
            }
        }
        finished
    }
}

/// Reports finished jobs, then starts waiting jobs whose target is free.
pub(crate) fn run_jobs(world: &mut World) {
    let finished = world.resource_mut::<JobQueue>().take_finished();
    if !finished.is_empty() {
        world.resource_mut::<ListingRefresh>().request();
    }
    for outcome in finished {
        finish(world, outcome);
    }
    let ready = world.resource_mut::<JobQueue>().take_startable();
    for job in ready {
        if let Some(running) = start(world, job) {
            world.resource_mut::<JobQueue>().running.push(running);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running jobs

/// A job started this or an earlier frame.
struct RunningJob {
    job: Job,
    work: JobWork,
}

enum JobWork {
    /// A captured save waiting (a few frames at most) for its thumbnail.
    AwaitingThumbnail(Box<PendingWrite>),
    /// Work on the task pool.
    Running(Task<Outcome>),
}

/// A captured save, not yet handed to the pool.
struct PendingWrite {
    wait: ThumbnailWait,
    save: Arc<CapturedSave>,
    store: Arc<SlotStore>,
}

impl RunningJob {
    /// Advances the job by one frame: a waiting save starts writing once its thumbnail is in
    /// (or the wait is over); running work is checked for completion.
    fn poll(&mut self) -> Option<Outcome> {
        match &mut self.work {
            JobWork::AwaitingThumbnail(pending) => {
                if let WaitState::Done(thumbnail) = pending.wait.poll() {
                    let store = Arc::clone(&pending.store);
                    let task = spawn_write(store, Arc::clone(&pending.save), thumbnail);
                    self.work = JobWork::Running(task);
                }
                None
            }
            JobWork::Running(task) => check_ready(task),
        }
    }
}

/// What a finished job hands back to the main thread, with what its event needs.
enum Outcome {
    Saved {
        target: SaveTarget,
        reason: SaveReason,
        capture: CaptureStats,
        result: Result<SaveReceipt, KeepsakeError>,
    },
    Loaded {
        slot: SlotId,
        result: Result<LoadOutput, KeepsakeError>,
    },
    Deleted {
        slot: SlotId,
        result: Result<usize, KeepsakeError>,
    },
}

impl Outcome {
    /// The outcome of a job that could not even start.
    fn failed(job: Job, error: KeepsakeError) -> Self {
        match job {
            Job::Save { target, reason } => Outcome::Saved {
                target,
                reason,
                capture: CaptureStats::default(),
                result: Err(error),
            },
            Job::Load(slot) => Outcome::Loaded {
                slot,
                result: Err(error),
            },
            Job::Delete(slot) => Outcome::Deleted {
                slot,
                result: Err(error),
            },
        }
    }
}

/// What the main thread spent on a save, and what it left out.
#[derive(Clone, Copy, Debug, Default)]
struct CaptureStats {
    entities: usize,
    time: Duration,
    /// Handles to run-time assets saved as the default handle.
    handles_left_out: u32,
}

/// What a finished load hands back to the main thread.
struct LoadOutput {
    generation: u64,
    meta: SaveMeta,
    skipped: Vec<GenerationFailure>,
    snapshot: DecodedSnapshot,
}

// ---------------------------------------------------------------------------------------------
// Finishing

fn finish(world: &mut World, outcome: Outcome) {
    match outcome {
        Outcome::Saved {
            target,
            reason,
            capture,
            result,
        } => finish_save(world, target, reason, capture, result),
        Outcome::Loaded { slot, result } => finish_load(world, slot, result),
        Outcome::Deleted { slot, result } => finish_delete(world, slot, result),
    }
}

fn finish_save(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
    capture: CaptureStats,
    result: Result<SaveReceipt, KeepsakeError>,
) {
    match result {
        Ok(receipt) => {
            if let Some(error) = &receipt.prune_error {
                warn!(
                    "keepsake: saved {}, but an old generation stays: {error}",
                    receipt.slot
                );
            }
            report(
                world,
                SaveCompleted {
                    slot: receipt.slot,
                    reason,
                    generation: receipt.generation,
                    path: receipt.path,
                    bytes: receipt.bytes,
                    meta: receipt.meta,
                    entities: capture.entities,
                    capture_time: capture.time,
                    handles_left_out: capture.handles_left_out,
                },
            );
        }
        Err(error) => {
            warn!("keepsake: save failed: {error}");
            let error = Arc::new(error);
            report(
                world,
                SaveFailed {
                    target,
                    reason,
                    error,
                },
            );
        }
    }
}

fn finish_load(world: &mut World, slot: SlotId, result: Result<LoadOutput, KeepsakeError>) {
    let output = match result {
        Ok(output) => output,
        Err(error) => {
            warn!("keepsake: loading {slot} failed: {error}");
            let error = Arc::new(error);
            report(world, LoadFailed { slot, error });
            return;
        }
    };
    let refused_asset_paths = Arc::new(output.snapshot.refused_asset_paths().to_vec());
    for refused in refused_asset_paths.iter() {
        warn!(
            "keepsake: {slot} names the asset {:?}, which was not loaded: {}",
            refused.path, refused.reason
        );
    }
    let applied = snapshot::apply(world, output.snapshot, LoadMode::Replace);
    world.resource_mut::<Playtime>().0 = output.meta.playtime;
    // A timed autosave right after a load would spend a ring slot on the state just loaded.
    world.resource_mut::<AutosaveTimer>().reset();
    let restored_from_backup = !output.skipped.is_empty();
    if restored_from_backup {
        warn!(
            "keepsake: {slot} restored from backup generation {}",
            output.generation
        );
    }
    report(
        world,
        LoadCompleted {
            slot,
            generation: output.generation,
            restored_from_backup,
            skipped_generations: Arc::new(output.skipped),
            meta: output.meta,
            entity_map: Arc::new(applied.entity_map),
            refused_asset_paths,
        },
    );
}

fn finish_delete(world: &mut World, slot: SlotId, result: Result<usize, KeepsakeError>) {
    match result {
        Ok(files) => report(world, DeleteCompleted { slot, files }),
        Err(error) => {
            let error = Arc::new(error);
            report(world, DeleteFailed { slot, error });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Starting

/// Starts `job`; `None` when it finished at once (its result is already reported).
fn start(world: &mut World, job: Job) -> Option<RunningJob> {
    let store = match world.resource::<KeepsakeStore>().get() {
        Ok(store) => Arc::clone(store),
        Err(error) => {
            let error = KeepsakeError::StoreUnavailable(error.to_string());
            finish(world, Outcome::failed(job, error));
            return None;
        }
    };
    let work = match job {
        Job::Save { target, reason } => start_save(world, target, reason, store)?,
        Job::Load(slot) => start_load(world, slot, store),
        Job::Delete(slot) => {
            let task = task_pool().spawn(async move {
                let result = store.delete(slot).map_err(KeepsakeError::from);
                Outcome::Deleted { slot, result }
            });
            JobWork::Running(task)
        }
    };
    Some(RunningJob { job, work })
}

/// Everything a save records when it captures the world; the autosave ring's slot is only
/// picked when the save is written, on the pool.
struct CapturedSave {
    target: SaveTarget,
    reason: SaveReason,
    capture: CaptureStats,
    /// The captured world, joined into the blob on the pool; taken by the one write of the
    /// save (the save is shared with the thumbnail wait until then).
    snapshot: Mutex<Option<PendingSnapshot>>,
    created_at: Timestamp,
    playtime: Duration,
    game_tick: u64,
    title: String,
    game_version: String,
    extras: BTreeMap<String, String>,
}

impl CapturedSave {
    /// The metadata stored with the save once its slot is known.
    fn meta(&self, slot: SlotId, thumbnail: Option<Vec<u8>>) -> SaveMeta {
        SaveMeta {
            created_at: self.created_at,
            playtime: self.playtime,
            game_tick: self.game_tick,
            title: self.title.clone(),
            game_version: self.game_version.clone(),
            extras: self.extras.clone(),
            thumbnail,
            ..SaveMeta::new(slot)
        }
    }
}

/// Captures the world on the main thread, reports [`SaveStarted`], then writes on the pool
/// (after waiting for a thumbnail when a provider is present).
fn start_save(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
    store: Arc<SlotStore>,
) -> Option<JobWork> {
    let save = match capture(world, target, reason) {
        Ok(save) => Arc::new(save),
        Err(error) => {
            let job = Job::Save { target, reason };
            finish(world, Outcome::failed(job, error));
            return None;
        }
    };
    report(world, SaveStarted { target, reason });
    let Some(capture) = world.get_resource::<ThumbnailCapture>().copied() else {
        return Some(JobWork::Running(spawn_write(store, save, None)));
    };
    let (ticket, wait) = ThumbnailWait::new(capture);
    world.trigger(ThumbnailWanted { target, ticket });
    let mut running = RunningJob {
        job: Job::Save { target, reason },
        work: JobWork::AwaitingThumbnail(Box::new(PendingWrite { wait, save, store })),
    };
    // A provider that declines (e.g. no window) lets the write start this frame; a write only
    // just started cannot have finished, so there is no outcome to keep.
    let _no_outcome_yet = running.poll();
    Some(running.work)
}

/// The main thread's part of a save: the world into a bundle, and the game's text and clocks.
fn capture(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
) -> Result<CapturedSave, KeepsakeError> {
    let started = Instant::now();
    world.init_resource::<SaveCaptureCache>();
    let pending = world
        .resource::<SaveCaptureCache>()
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .capture(world)?;
    let time = started.elapsed();
    let handles_left_out = warn_left_out_handles(world, pending.handles_left_out());
    let game_tick = world
        .get_resource::<FrameCount>()
        .map_or(0, |frames| u64::from(frames.0));
    Ok(CapturedSave {
        target,
        reason,
        capture: CaptureStats {
            entities: pending.entities(),
            time,
            handles_left_out,
        },
        snapshot: Mutex::new(Some(pending)),
        created_at: Timestamp::now(),
        playtime: world.resource::<Playtime>().0,
        game_tick,
        title: world.resource::<SaveTitle>().0.clone(),
        game_version: world.resource::<KeepsakeSettings>().game_version.clone(),
        extras: world.resource::<KeepsakeSettings>().save_extras.clone(),
    })
}

/// Writes a captured save on the pool.
fn spawn_write(
    store: Arc<SlotStore>,
    save: Arc<CapturedSave>,
    thumbnail: Option<Vec<u8>>,
) -> Task<Outcome> {
    task_pool().spawn(async move { write_outcome(&store, &save, thumbnail) })
}

/// Warns once per field (for the life of the app) about handles to run-time assets saved as
/// the default handle, unless the policy is silent; returns how many there were.
fn warn_left_out_handles(world: &mut World, left_out: &[LeftOutHandle]) -> u32 {
    let silent = world.get_resource::<RuntimeAssetHandles>() == Some(&RuntimeAssetHandles::Silent);
    let mut warned = world.get_resource_or_init::<WarnedHandleFields>();
    for handle in left_out {
        if !silent && warned.0.insert(handle.field.clone()) {
            warn!(
                "keepsake: {} holds a handle to an asset made at run time (Assets::add), which \
                 has no path to be saved by; it is saved as the default handle. Load the asset \
                 from a file, or set RuntimeAssetHandles::Silent to hide this warning",
                handle.field
            );
        }
    }
    left_out.iter().map(|handle| handle.count).sum()
}

/// The fields already warned about by [`warn_left_out_handles`].
#[derive(Resource, Default)]
struct WarnedHandleFields(std::collections::HashSet<String>);

/// Picks the slot (the ring's oldest autosave slot), then encodes, compresses and durably
/// writes.
fn write_outcome(store: &SlotStore, save: &CapturedSave, thumbnail: Option<Vec<u8>>) -> Outcome {
    let result = write(store, save, thumbnail).map_err(KeepsakeError::from);
    Outcome::Saved {
        target: save.target,
        reason: save.reason,
        capture: save.capture,
        result,
    }
}

/// Runs jobs, frame-less, until none is left or `deadline` passes (the last frame before the
/// app exits); returns whether they all finished. Saves waiting for a thumbnail stop waiting
/// after their time bound, as every poll here counts as a frame.
pub(crate) fn run_until_idle(world: &mut World, deadline: Instant) -> bool {
    loop {
        run_jobs(world);
        if world.resource::<JobQueue>().is_idle() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn write(
    store: &SlotStore,
    save: &CapturedSave,
    thumbnail: Option<Vec<u8>>,
) -> Result<SaveReceipt, crate::store::StoreError> {
    let pending = save
        .snapshot
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(pending) = pending else {
        unreachable!("a captured save is written once");
    };
    let snapshot = pending.finish();
    let bundle = SaveBundle::new(WorldState {
        tick: save.game_tick,
        ecs_blob: snapshot.blob,
        state_hash: snapshot.state_hash,
    });
    let slot = match save.target {
        SaveTarget::Slot(slot) => slot,
        SaveTarget::AutosaveRing => store.next_autosave_slot()?,
    };
    store.save(slot, save.meta(slot, thumbnail), &bundle)
}

/// Reads, verifies and decodes on the pool; the world is only touched when the job finishes.
fn start_load(world: &mut World, slot: SlotId, store: Arc<SlotStore>) -> JobWork {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let assets = world.get_resource::<AssetServer>().cloned();
    let task = task_pool().spawn(async move {
        let read = || -> Result<LoadOutput, KeepsakeError> {
            let loaded = store.load(slot)?;
            let world_state = &loaded.bundle.world;
            let snapshot = snapshot::decode_with_assets(
                &world_state.ecs_blob,
                world_state.state_hash,
                &registry,
                &types.read(),
                assets.as_ref(),
            )?;
            Ok(LoadOutput {
                generation: loaded.generation,
                meta: loaded.meta,
                skipped: loaded.skipped,
                snapshot,
            })
        };
        Outcome::Loaded {
            slot,
            result: read(),
        }
    });
    JobWork::Running(task)
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
