//! The queue of jobs, waiting and running: which may start (one per target), which finished,
//! and [`KeepsakeStatus`] for menus. It knows a job by its vocabulary ([`Job`], [`JobTarget`]);
//! what a started job does is its [`Work`], polled once a frame until it hands back its
//! [`Outcome`], so the queue never looks inside a save or a load.

use crate::plugin::job::{Job, JobTarget, SaveTarget};
use crate::plugin::status::KeepsakeStatus;
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;
use std::collections::VecDeque;

/// What a finished job hands back to the main thread.
pub(super) trait Outcome: Send + 'static {
    /// Applies the result to the world (a load) and reports it.
    fn finish(self: Box<Self>, world: &mut World);
}

/// What a started job does until it finishes.
pub(super) trait Work: Send + Sync + 'static {
    /// Advances the work by one frame; its outcome once it finished.
    fn poll(&mut self) -> Option<Box<dyn Outcome>>;
}

/// Work on the task pool is done when its task is.
impl Work for Task<Box<dyn Outcome>> {
    fn poll(&mut self) -> Option<Box<dyn Outcome>> {
        check_ready(self)
    }
}

/// A job started this or an earlier frame.
struct RunningJob {
    job: Job,
    work: Box<dyn Work>,
}

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
    pub(super) fn take_startable(&mut self) -> Vec<Job> {
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

    /// Keeps `job` running, doing `work`, until its work hands back its outcome.
    pub(super) fn add_running(&mut self, job: Job, work: Box<dyn Work>) {
        self.running.push(RunningJob { job, work });
    }

    /// Advances every running job by one frame; removes and returns the outcomes of those
    /// that finished.
    pub(super) fn take_finished(&mut self) -> Vec<Box<dyn Outcome>> {
        let mut finished = Vec::new();
        let mut index = 0;
        while index < self.running.len() {
            match self.running[index].work.poll() {
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

/// Copies the queue into [`KeepsakeStatus`] (only when it changed, so change detection means
/// something to menus).
pub(crate) fn publish_status(queue: Res<JobQueue>, mut status: ResMut<KeepsakeStatus>) {
    let current = KeepsakeStatus {
        running: queue.running_jobs().collect(),
        waiting: queue.waiting_jobs().collect(),
    };
    status.set_if_neq(current);
}
