//! The job runner: each frame it reports the jobs that finished and starts the waiting jobs
//! whose slot is free, one job per slot at a time, the work itself on the task pool.
//!
//! The main thread only captures the world (for a save) and applies a decoded snapshot (for a
//! load); everything else (joining and hashing the captured blob, encoding, compression,
//! checksums, the durable write, reading, verifying and decoding) runs on the pool. One module
//! per thing it runs:
//!
//! - `queue`: the jobs waiting and running, which may start, and [`KeepsakeStatus`];
//! - `save`: capture, the thumbnail at hand, write, [`SaveCompleted`] / [`SaveFailed`];
//! - `load`: read, verify, decode, apply, [`LoadCompleted`] / [`LoadFailed`];
//! - `delete`: delete, [`DeleteCompleted`] / [`DeleteFailed`].
//!
//! # Busy slots
//!
//! At most one job per [`JobTarget`] runs at a time (all autosave slots count as one, the
//! ring). A request for a busy target waits in a queue and starts once the target is free; a
//! request identical to one already waiting is coalesced into it (two waiting saves of one slot
//! would both capture the world when they start, so one is enough). Timed autosaves are
//! skipped, not queued, while any save is running or waiting.
//!
//! [`KeepsakeStatus`]: crate::plugin::KeepsakeStatus
//! [`SaveCompleted`]: crate::plugin::SaveCompleted
//! [`SaveFailed`]: crate::plugin::SaveFailed
//! [`LoadCompleted`]: crate::plugin::LoadCompleted
//! [`LoadFailed`]: crate::plugin::LoadFailed
//! [`DeleteCompleted`]: crate::plugin::DeleteCompleted
//! [`DeleteFailed`]: crate::plugin::DeleteFailed
//! [`JobTarget`]: crate::plugin::JobTarget

mod delete;
mod load;
mod queue;
mod save;

pub(crate) use load::{SessionEntities, note_own_save};
pub(crate) use queue::{JobQueue, publish_status};
pub(crate) use save::WarnedHandleFields;

use crate::plugin::error::KeepsakeError;
use crate::plugin::job::Job;
use crate::plugin::listing::ListingRefresh;
use crate::plugin::store::KeepsakeStore;
use bevy::prelude::*;
use queue::{Outcome, Work};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reports finished jobs, then starts waiting jobs whose target is free.
pub(crate) fn run_jobs(world: &mut World) {
    let finished = world.resource_mut::<JobQueue>().take_finished();
    if !finished.is_empty() {
        world.resource_mut::<ListingRefresh>().request();
    }
    for outcome in finished {
        outcome.finish(world);
    }
    let ready = world.resource_mut::<JobQueue>().take_startable();
    for job in ready {
        if let Some(work) = start(world, job) {
            world.resource_mut::<JobQueue>().add_running(job, work);
        }
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

/// Starts `job`; `None` when it finished at once (its result is already reported).
fn start(world: &mut World, job: Job) -> Option<Box<dyn Work>> {
    let store = match world.resource::<KeepsakeStore>().get() {
        Ok(store) => Arc::clone(store),
        Err(error) => {
            let error = KeepsakeError::StoreUnavailable(error.to_string());
            failed(job, error).finish(world);
            return None;
        }
    };
    match job {
        Job::Save { target, reason } => save::start(world, target, reason, store),
        Job::Load(slot) => Some(load::start(world, slot, store)),
        Job::Delete(slot) => Some(delete::start(slot, store)),
    }
}

/// The outcome of a job that could not even start.
fn failed(job: Job, error: KeepsakeError) -> Box<dyn Outcome> {
    match job {
        Job::Save { target, reason } => save::failed(target, reason, error),
        Job::Load(slot) => load::failed(slot, error),
        Job::Delete(slot) => delete::failed(slot, error),
    }
}
