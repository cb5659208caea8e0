//! The app's last frame: the saves made this session, the exit save included, go to the cloud
//! before the app closes, within the exit's wait (`max_wait` of
//! [`SaveOnExit::On`](crate::plugin::SaveOnExit::On), measured from the start of the exit).
//!
//! Without this the exit save never left the device: it became durable in the last frame,
//! after the frame's forwarding to the sync thread, and the thread ended with the app. What
//! could not be uploaded in time stays on disk, and the next start's first round uploads it
//! (every round queues the local saves the cloud is not known to have).

use super::sync::{SyncRound, Uploaded};
use super::worker::{SyncCommand, SyncReport, SyncWorker};
use crate::SlotId;
use crate::plugin::SaveCompleted;
use bevy::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;
use uuid::Uuid;

/// What the exit did to bring this session's saves to the cloud: an observer event, triggered
/// in the app's last frame, after the exit save; the same is logged (a warning when a save was
/// left behind).
#[derive(Event, Clone, Debug, PartialEq, Eq)]
pub struct CloudExitUploadEnded {
    /// The saves whose upload was confirmed while the app waited to close.
    pub uploaded: Vec<Uploaded>,
    /// The saves known not to be in the cloud yet, as (slot, save id): this session's, and
    /// when the sync thread answered, every earlier one still queued. The next start uploads
    /// them.
    pub not_uploaded: Vec<(SlotId, Uuid)>,
    /// Whether everything was uploaded, and if not, why.
    pub outcome: ExitUploadOutcome,
}

/// How the exit's upload ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitUploadOutcome {
    /// Every save of this session is in the cloud.
    Done,
    /// The storage refused or could not be reached (why, as the storage client said).
    Failed(String),
    /// The exit's wait ran out before the sync thread answered.
    TimedOut,
    /// Cloud sync is not running this session (why).
    SyncOff(String),
}

impl CloudExitUploadEnded {
    /// The warning to log, when a save was left behind.
    pub(crate) fn warning(&self) -> Option<String> {
        if self.not_uploaded.is_empty() {
            return None;
        }
        let why = match &self.outcome {
            ExitUploadOutcome::Done => "uploads still queued".to_owned(),
            ExitUploadOutcome::Failed(reason) => format!("the storage failed: {reason}"),
            ExitUploadOutcome::TimedOut => "the exit's wait ran out".to_owned(),
            ExitUploadOutcome::SyncOff(reason) => format!("cloud sync is off: {reason}"),
        };
        let saves: Vec<String> = self
            .not_uploaded
            .iter()
            .map(|(slot, id)| format!("{slot} ({id})"))
            .collect();
        Some(format!(
            "keepsake: {} save(s) did not reach the cloud before the app closed ({why}): {}; \
             they will upload at the next start",
            saves.len(),
            saves.join(", ")
        ))
    }
}

/// The saves made this session whose upload is not confirmed yet, and those not yet sent to
/// the sync thread: shared by the per-frame forwarding and the exit, so each save reaches the
/// sync thread once, the exit save included.
#[derive(Resource, Default)]
pub(crate) struct SessionSaves {
    new: Vec<(SlotId, Uuid)>,
    unconfirmed: BTreeMap<Uuid, SlotId>,
}

impl SessionSaves {
    /// Keeps each [`SaveCompleted`] (as slot, save id) for the next
    /// [`take_new`](Self::take_new).
    pub(crate) fn note_save(saved: On<SaveCompleted>, mut session: ResMut<SessionSaves>) {
        session.new.push((saved.slot, saved.meta.save_id));
    }

    /// The saves completed since the last call (as slot, save id), now awaiting upload.
    pub(crate) fn take_new(&mut self) -> Vec<(SlotId, Uuid)> {
        let made = std::mem::take(&mut self.new);
        for &(slot, save_id) in &made {
            self.unconfirmed.insert(save_id, slot);
        }
        made
    }

    /// Marks saves the sync thread reported uploaded.
    pub(crate) fn confirm(&mut self, uploaded: &[Uploaded]) {
        for upload in uploaded {
            self.unconfirmed.remove(&upload.save_id);
        }
    }

    /// Whether every save of this session is known to be in the cloud.
    pub(crate) fn all_confirmed(&self) -> bool {
        self.unconfirmed.is_empty()
    }

    /// The saves of this session not known to be in the cloud, as (slot, save id).
    pub(crate) fn unconfirmed(&self) -> Vec<(SlotId, Uuid)> {
        let saves = self.unconfirmed.iter();
        saves.map(|(id, slot)| (*slot, *id)).collect()
    }
}

/// How the wait for the sync thread's answer to [`SyncCommand::Flush`] ended.
pub(crate) enum FlushEnd {
    /// It answered: the saves still queued, and the error that stopped the uploads.
    Answered {
        pending: Vec<(SlotId, Uuid)>,
        error: Option<String>,
    },
    /// The deadline passed first (the thread is still working, or stuck on the network).
    TimedOut,
    /// The thread stopped: why.
    Stopped(String),
}

/// Asks the sync thread to upload everything queued now, and waits for its answer until
/// `deadline`. Every report that arrives meanwhile, the answer's round included, goes to
/// `apply` (it is the game's to show), as the frames would have done.
pub(crate) fn flush(
    worker: &SyncWorker,
    deadline: Instant,
    mut apply: impl FnMut(SyncReport),
) -> FlushEnd {
    worker.send(SyncCommand::Flush);
    loop {
        // Past the deadline this waits zero: the reports already there are still taken.
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(report) = worker.wait_report(left) else {
            return FlushEnd::TimedOut;
        };
        match report {
            SyncReport::Flushed { round, pending } => {
                let error = round.error.clone();
                apply(SyncReport::Round(round));
                return FlushEnd::Answered { pending, error };
            }
            SyncReport::Stopped(reason) => {
                apply(SyncReport::Stopped(reason.clone()));
                return FlushEnd::Stopped(reason);
            }
            other => apply(other),
        }
    }
}

/// The exit's report, from how the wait ended, the uploads confirmed during it, and the
/// session's saves still unconfirmed (all that is known when the thread did not answer).
pub(crate) fn exit_report(
    end: FlushEnd,
    uploaded: Vec<Uploaded>,
    session: &SessionSaves,
) -> CloudExitUploadEnded {
    let (not_uploaded, outcome) = match end {
        FlushEnd::Answered { pending, .. } if pending.is_empty() => {
            (pending, ExitUploadOutcome::Done)
        }
        FlushEnd::Answered { pending, error } => {
            let reason = error.unwrap_or_else(|| "uploads still queued".to_owned());
            (pending, ExitUploadOutcome::Failed(reason))
        }
        FlushEnd::TimedOut => (session.unconfirmed(), ExitUploadOutcome::TimedOut),
        FlushEnd::Stopped(reason) => (session.unconfirmed(), ExitUploadOutcome::SyncOff(reason)),
    };
    CloudExitUploadEnded {
        uploaded,
        not_uploaded,
        outcome,
    }
}

/// The uploads a report confirms.
pub(crate) fn uploads_in(report: &SyncReport) -> &[Uploaded] {
    match report {
        SyncReport::Round(SyncRound { uploaded, .. }) => uploaded,
        _ => &[],
    }
}
