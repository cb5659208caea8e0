//! Background jobs: one per slot at a time, run on `AsyncComputeTaskPool`, polled every frame.
//!
//! The main thread only captures the world (for a save) and applies a decoded snapshot (for a
//! load). Encoding, compression, checksums, the durable write, reading, verifying and decoding
//! all run on the pool.
//!
//! # Busy slots
//!
//! At most one job per slot runs at a time (all autosave slots count as one, the ring). A request
//! for a busy slot waits in a queue and starts once the slot is free; a request identical to one
//! already waiting is coalesced into it (two waiting saves of one slot would both capture the
//! world when they start, so one is enough). Timed autosaves are skipped, not queued, while any
//! save is running or waiting.

use super::error::KeepsakeError;
use super::events::{
    DeleteCompleted, DeleteFailed, LoadCompleted, LoadFailed, SaveCompleted, SaveFailed,
    SaveStarted, SaveTrigger, report,
};
use super::settings::{KeepsakeSettings, Playtime, SaveTitle};
use super::thumbnail::{ThumbnailCapture, ThumbnailWait, ThumbnailWanted, WaitState};
use crate::format::{SaveBundle, SaveMeta, WorldState};
use crate::slot::{SlotId, SlotKind};
use crate::snapshot::{self, DecodedSnapshot, LoadMode, SaveRegistry};
use crate::store::{GenerationFailure, SaveReceipt, SlotEntry, SlotStore, StoreError};
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::tasks::futures::check_ready;
use bevy::tasks::{AsyncComputeTaskPool, Task, TaskPool};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The slot store the plugin writes to, or why it could not be opened.
#[derive(Resource, Clone)]
pub struct KeepsakeStore(pub(crate) Result<Arc<SlotStore>, Arc<StoreError>>);

impl KeepsakeStore {
    /// The open store (for reading thumbnails, for instance), or the error that kept it from
    /// opening.
    pub fn get(&self) -> Result<&Arc<SlotStore>, &StoreError> {
        self.0.as_ref().map_err(|error| error.as_ref())
    }
}

/// What a job works on; at most one job per target runs at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobTarget {
    /// One manual slot, or the quicksave slot.
    Slot(SlotId),
    /// The autosave ring (all autosave slots together).
    AutosaveRing,
}

impl JobTarget {
    /// The target a request for `slot` works on.
    pub fn of(slot: SlotId) -> Self {
        match slot.kind() {
            SlotKind::Auto => JobTarget::AutosaveRing,
            _ => JobTarget::Slot(slot),
        }
    }
}

/// What a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Capture and write a save.
    Save(SaveTrigger),
    /// Read, verify, decode and apply a save.
    Load,
    /// Delete every generation of a slot.
    Delete,
}

/// A save, load or delete, waiting or running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    /// What it does.
    pub kind: JobKind,
    /// What it works on.
    pub target: JobTarget,
    /// For loads and deletes of autosaves: the exact slot.
    pub slot: Option<SlotId>,
}

/// Jobs running and waiting, for menus (spinners, disabled buttons) and for tests.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct KeepsakeStatus {
    /// Jobs started: on the task pool, or (saves) captured and waiting a few frames for their
    /// thumbnail before writing.
    pub running: Vec<Job>,
    /// Jobs waiting for their slot to be free.
    pub waiting: Vec<Job>,
}

impl KeepsakeStatus {
    /// Whether any job (running or waiting) works on `slot`'s target.
    pub fn is_busy(&self, slot: SlotId) -> bool {
        let target = JobTarget::of(slot);
        self.jobs().any(|job| job.target == target)
    }

    /// Whether a save is running or waiting.
    pub fn is_saving(&self) -> bool {
        self.jobs().any(|job| matches!(job.kind, JobKind::Save(_)))
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
#[derive(Resource, Clone, Debug, Default)]
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

    /// One entry per slot, most recent first (see [`SlotStore::list`]).
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
}

/// What a finished load hands back to the main thread.
struct LoadOutput {
    slot: SlotId,
    generation: u64,
    meta: SaveMeta,
    skipped: Vec<GenerationFailure>,
    snapshot: DecodedSnapshot,
}

enum Outcome {
    Saved(Result<SaveReceipt, StoreError>),
    Loaded(Result<LoadOutput, KeepsakeError>),
    Deleted(Result<usize, StoreError>),
}

struct RunningJob {
    job: Job,
    work: JobWork,
    capture_time: Duration,
    entities: usize,
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
    meta: SaveMeta,
    bundle: Arc<SaveBundle>,
    store: Arc<SlotStore>,
}

impl RunningJob {
    /// Advances the job by one frame: a waiting save starts writing once its thumbnail is in
    /// (or the wait is over); running work is checked for completion.
    fn poll(&mut self) -> Option<Outcome> {
        match &mut self.work {
            JobWork::AwaitingThumbnail(pending) => {
                if let WaitState::Done(thumbnail) = pending.wait.poll() {
                    let meta = SaveMeta {
                        thumbnail,
                        ..pending.meta.clone()
                    };
                    let task = spawn_write(
                        self.job.target,
                        Arc::clone(&pending.store),
                        meta,
                        Arc::clone(&pending.bundle),
                    );
                    self.work = JobWork::Running(task);
                }
                None
            }
            JobWork::Running(task) => check_ready(task),
        }
    }
}

/// The plugin's private queue.
#[derive(Resource, Default)]
pub(crate) struct JobQueue {
    waiting: VecDeque<Job>,
    running: Vec<RunningJob>,
    listing: Option<Task<Result<Vec<SlotEntry>, StoreError>>>,
    listing_stale: bool,
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
        let is_save = |job: &Job| matches!(job.kind, JobKind::Save(_));
        self.waiting.iter().any(is_save) || self.running.iter().any(|r| is_save(&r.job))
    }

    pub(crate) fn request_listing(&mut self) {
        self.listing_stale = true;
    }
}

/// Polls finished jobs and reports them, then starts waiting jobs whose slot is free.
pub(crate) fn run_jobs(world: &mut World) {
    finish_jobs(world);
    start_jobs(world);
    refresh_listing(world);
    publish_status(world);
}

fn finish_jobs(world: &mut World) {
    let finished: Vec<(RunningJob, Outcome)> = {
        let mut queue = world.resource_mut::<JobQueue>();
        let mut finished = Vec::new();
        let mut index = 0;
        while index < queue.running.len() {
            if let Some(outcome) = queue.running[index].poll() {
                finished.push((queue.running.swap_remove(index), outcome));
            } else {
                index += 1;
            }
        }
        if !finished.is_empty() {
            queue.request_listing();
        }
        finished
    };
    for (running, outcome) in finished {
        match outcome {
            Outcome::Saved(result) => finish_save(world, &running, result),
            Outcome::Loaded(result) => finish_load(world, &running, result),
            Outcome::Deleted(result) => finish_delete(world, &running, result),
        }
    }
}

fn finish_save(world: &mut World, running: &RunningJob, result: Result<SaveReceipt, StoreError>) {
    let JobKind::Save(trigger) = running.job.kind else {
        return;
    };
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
                    trigger,
                    generation: receipt.generation,
                    path: receipt.path,
                    bytes: receipt.bytes,
                    meta: receipt.meta,
                    entities: running.entities,
                    capture_time: running.capture_time,
                },
            );
        }
        Err(error) => {
            let slot = match running.job.target {
                JobTarget::Slot(slot) => Some(slot),
                JobTarget::AutosaveRing => running.job.slot,
            };
            warn!("keepsake: save failed: {error}");
            report(
                world,
                SaveFailed {
                    slot,
                    trigger,
                    error: Arc::new(error.into()),
                },
            );
        }
    }
}

fn finish_load(world: &mut World, running: &RunningJob, result: Result<LoadOutput, KeepsakeError>) {
    match result {
        Ok(output) => {
            let report_data = snapshot::apply(world, output.snapshot, LoadMode::Replace);
            world.resource_mut::<Playtime>().0 = output.meta.playtime;
            let restored_from_backup = !output.skipped.is_empty();
            if restored_from_backup {
                warn!(
                    "keepsake: {} restored from backup generation {}",
                    output.slot, output.generation
                );
            }
            report(
                world,
                LoadCompleted {
                    slot: output.slot,
                    generation: output.generation,
                    restored_from_backup,
                    skipped_generations: Arc::new(output.skipped),
                    meta: output.meta,
                    entity_map: Arc::new(report_data.entity_map),
                },
            );
        }
        Err(error) => {
            let slot = running.job.slot.unwrap_or(SlotId::Quick);
            warn!("keepsake: loading {slot} failed: {error}");
            report(
                world,
                LoadFailed {
                    slot,
                    error: Arc::new(error),
                },
            );
        }
    }
}

fn finish_delete(world: &mut World, running: &RunningJob, result: Result<usize, StoreError>) {
    let slot = running.job.slot.unwrap_or(SlotId::Quick);
    match result {
        Ok(files) => report(world, DeleteCompleted { slot, files }),
        Err(error) => report(
            world,
            DeleteFailed {
                slot,
                error: Arc::new(error.into()),
            },
        ),
    }
}

fn start_jobs(world: &mut World) {
    let ready: Vec<Job> = {
        let mut queue = world.resource_mut::<JobQueue>();
        let mut busy: Vec<JobTarget> = queue.running.iter().map(|r| r.job.target).collect();
        let mut ready = Vec::new();
        queue.waiting.retain(|job| {
            if busy.contains(&job.target) {
                return true;
            }
            busy.push(job.target);
            ready.push(*job);
            false
        });
        ready
    };
    if ready.is_empty() {
        return;
    }
    let store = world.resource::<KeepsakeStore>().0.clone();
    for job in ready {
        let store = match &store {
            Ok(store) => Arc::clone(store),
            Err(error) => {
                fail_unavailable(world, job, error);
                continue;
            }
        };
        let running = match job.kind {
            JobKind::Save(trigger) => start_save(world, job, trigger, store),
            JobKind::Load => Some(start_load(world, job, store)),
            JobKind::Delete => Some(start_delete(job, store)),
        };
        if let Some(running) = running {
            world.resource_mut::<JobQueue>().running.push(running);
        }
    }
}

fn fail_unavailable(world: &mut World, job: Job, error: &StoreError) {
    let error = Arc::new(KeepsakeError::StoreUnavailable(error.to_string()));
    let slot = job.slot.or(match job.target {
        JobTarget::Slot(slot) => Some(slot),
        JobTarget::AutosaveRing => None,
    });
    match job.kind {
        JobKind::Save(trigger) => report(
            world,
            SaveFailed {
                slot,
                trigger,
                error,
            },
        ),
        JobKind::Load => report(
            world,
            LoadFailed {
                slot: slot.unwrap_or(SlotId::Quick),
                error,
            },
        ),
        JobKind::Delete => report(
            world,
            DeleteFailed {
                slot: slot.unwrap_or(SlotId::Quick),
                error,
            },
        ),
    }
}

/// Bevy's async compute pool (created if the app has no `TaskPoolPlugin`, as in bare tests).
pub(crate) fn task_pool() -> &'static TaskPool {
    AsyncComputeTaskPool::get_or_init(TaskPool::new)
}

/// Captures the world on the main thread, then writes on the pool.
fn start_save(
    world: &mut World,
    job: Job,
    trigger: SaveTrigger,
    store: Arc<SlotStore>,
) -> Option<RunningJob> {
    let started = Instant::now();
    let captured = match snapshot::capture(world) {
        Ok(captured) => captured,
        Err(error) => {
            report(
                world,
                SaveFailed {
                    slot: job.slot,
                    trigger,
                    error: Arc::new(error.into()),
                },
            );
            return None;
        }
    };
    let tick = world
        .get_resource::<FrameCount>()
        .map_or(0, |frames| u64::from(frames.0));
    let placeholder_slot = job.slot.unwrap_or(SlotId::Auto(0));
    let meta = SaveMeta {
        playtime: world.resource::<Playtime>().0,
        game_tick: tick,
        title: world.resource::<SaveTitle>().0.clone(),
        game_version: world.resource::<KeepsakeSettings>().game_version.clone(),
        ..SaveMeta::new(placeholder_slot)
    };
    let entities = captured.entities;
    let bundle = Arc::new(SaveBundle::new(WorldState {
        tick,
        ecs_blob: captured.blob,
        state_hash: captured.state_hash,
    }));
    let capture_time = started.elapsed();
    report(
        world,
        SaveStarted {
            slot: job.slot,
            trigger,
        },
    );
    let work = match world.get_resource::<ThumbnailCapture>().copied() {
        Some(capture) => {
            let (ticket, wait) = ThumbnailWait::new(capture);
            world.trigger(ThumbnailWanted {
                slot: job.slot,
                ticket,
            });
            let mut running = RunningJob {
                job,
                work: JobWork::AwaitingThumbnail(Box::new(PendingWrite {
                    wait,
                    meta,
                    bundle,
                    store,
                })),
                capture_time,
                entities,
            };
            // A provider that declines (e.g. no window) lets the write start this frame; a
            // write only just started cannot have finished, so there is no outcome to keep.
            let _no_outcome_yet = running.poll();
            return Some(running);
        }
        None => JobWork::Running(spawn_write(job.target, store, meta, bundle)),
    };
    Some(RunningJob {
        job,
        work,
        capture_time,
        entities,
    })
}

/// Encodes, compresses and durably writes a captured save on the pool.
fn spawn_write(
    target: JobTarget,
    store: Arc<SlotStore>,
    meta: SaveMeta,
    bundle: Arc<SaveBundle>,
) -> Task<Outcome> {
    task_pool().spawn(async move {
        Outcome::Saved(match target {
            JobTarget::AutosaveRing => store.save_autosave(meta, &bundle),
            JobTarget::Slot(slot) => store.save(slot, meta, &bundle),
        })
    })
}

/// Reads, verifies and decodes on the pool; the world is only touched when the job finishes.
fn start_load(world: &mut World, job: Job, store: Arc<SlotStore>) -> RunningJob {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let slot = job.slot.unwrap_or(SlotId::Quick);
    let task = task_pool().spawn(async move {
        let load = || -> Result<LoadOutput, KeepsakeError> {
            let loaded = store.load(slot)?;
            let world_state = &loaded.bundle.world;
            let snapshot = snapshot::decode(
                &world_state.ecs_blob,
                world_state.state_hash,
                &registry,
                &types.read(),
            )?;
            Ok(LoadOutput {
                slot,
                generation: loaded.generation,
                meta: loaded.meta,
                skipped: loaded.skipped,
                snapshot,
            })
        };
        Outcome::Loaded(load())
    });
    RunningJob {
        job,
        work: JobWork::Running(task),
        capture_time: Duration::ZERO,
        entities: 0,
    }
}

fn start_delete(job: Job, store: Arc<SlotStore>) -> RunningJob {
    let slot = job.slot.unwrap_or(SlotId::Quick);
    let task = task_pool().spawn(async move { Outcome::Deleted(store.delete(slot)) });
    RunningJob {
        job,
        work: JobWork::Running(task),
        capture_time: Duration::ZERO,
        entities: 0,
    }
}

/// Refreshes [`SaveSlots`] in the background when something may have changed it.
fn refresh_listing(world: &mut World) {
    let finished = {
        let mut queue = world.resource_mut::<JobQueue>();
        let finished = queue.listing.as_mut().and_then(check_ready);
        if finished.is_some() {
            queue.listing = None;
        }
        finished
    };
    if let Some(result) = finished {
        let mut slots = world.resource_mut::<SaveSlots>();
        match result {
            Ok(entries) => {
                slots.entries = entries;
                slots.error = None;
            }
            Err(error) => slots.error = Some(error.to_string()),
        }
        slots.refreshes += 1;
    }

    let start = {
        let mut queue = world.resource_mut::<JobQueue>();
        let start = queue.listing.is_none() && queue.listing_stale;
        queue.listing_stale &= !start;
        start
    };
    if !start {
        return;
    }
    match world.resource::<KeepsakeStore>().0.clone() {
        Ok(store) => {
            world.resource_mut::<JobQueue>().listing =
                Some(task_pool().spawn(async move { store.list() }));
        }
        Err(error) => {
            let mut slots = world.resource_mut::<SaveSlots>();
            slots.error = Some(error.to_string());
            slots.refreshes += 1;
        }
    }
}

fn publish_status(world: &mut World) {
    let queue = world.resource::<JobQueue>();
    let status = KeepsakeStatus {
        running: queue.running.iter().map(|r| r.job).collect(),
        waiting: queue.waiting.iter().copied().collect(),
    };
    let mut current = world.resource_mut::<KeepsakeStatus>();
    if *current != status {
        *current = status;
    }
}
