//! The sync thread: a small single-threaded tokio runtime that owns the [`SyncCore`] and takes
//! commands from the game through a channel, so no frame ever waits on the network.

use super::error::CloudError;
use super::sync::{SyncCore, SyncRound};
use crate::SlotId;
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;
use uuid::Uuid;

/// What the game asks of the sync thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncCommand {
    /// A save became durable: queue its upload and try it now.
    SaveMade {
        /// Its slot.
        slot: SlotId,
        /// Its save id.
        save_id: Uuid,
    },
    /// List the cloud folder now (downloads and retries).
    SyncNow,
    /// Let the save hidden by the slot's conflict head the slot.
    UseHiddenSave(SlotId),
    /// The game is about to exit: upload every queued save now, due or not, and answer with
    /// [`SyncReport::Flushed`].
    Flush,
}

/// What the sync thread reports back.
#[derive(Debug)]
pub enum SyncReport {
    /// A round of work finished.
    Round(SyncRound),
    /// [`SyncCommand::UseHiddenSave`] finished: the generation now heading the slot, if the
    /// conflict's save was still there.
    HiddenSaveUsed {
        /// The slot.
        slot: SlotId,
        /// The outcome.
        result: Result<Option<u64>, String>,
    },
    /// [`SyncCommand::Flush`] finished.
    Flushed {
        /// The uploads it made, and the state afterwards.
        round: SyncRound,
        /// The saves still queued (as slot, save id): the next start uploads them.
        pending: Vec<(SlotId, Uuid)>,
    },
    /// The runtime could not start; nothing syncs this session.
    Stopped(String),
}

/// The handle of a running sync thread. Dropping it closes the channel: the thread finishes
/// the request in flight and ends (queued uploads stay in the durable queue for next time).
pub struct SyncWorker {
    commands: UnboundedSender<SyncCommand>,
    // In a mutex only so the handle can be shared (a Bevy resource); one reader polls it.
    reports: Mutex<mpsc::Receiver<SyncReport>>,
    _thread: JoinHandle<()>,
}

impl SyncWorker {
    /// Starts the thread. It syncs at once, then every `interval` (`None`: only on
    /// [`SyncCommand::SyncNow`]), and retries queued uploads when their backoff ends.
    pub fn spawn(core: SyncCore, interval: Option<Duration>) -> Result<Self, CloudError> {
        let (commands, receiver) = unbounded_channel();
        let (sender, reports) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("keepsake-cloud".to_owned())
            .spawn(move || run(core, interval, receiver, sender))
            .map_err(CloudError::Thread)?;
        Ok(SyncWorker {
            commands,
            reports: Mutex::new(reports),
            _thread: thread,
        })
    }

    /// Sends a command; never blocks.
    pub fn send(&self, command: SyncCommand) {
        // The thread only stops when its runtime failed, which it reported.
        let _ = self.commands.send(command);
    }

    /// The next report if one is ready; never blocks.
    pub fn try_report(&self) -> Option<SyncReport> {
        self.reports.lock().ok()?.try_recv().ok()
    }

    /// Waits up to `timeout` for the next report (for tests, tools and the app's last frame,
    /// never for an ordinary frame).
    pub fn wait_report(&self, timeout: Duration) -> Option<SyncReport> {
        self.reports.lock().ok()?.recv_timeout(timeout).ok()
    }
}

fn run(
    mut core: SyncCore,
    interval: Option<Duration>,
    mut commands: UnboundedReceiver<SyncCommand>,
    reports: mpsc::Sender<SyncReport>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = reports.send(SyncReport::Stopped(error.to_string()));
            return;
        }
    };
    runtime.block_on(async move {
        let _ = reports.send(SyncReport::Round(core.sync().await));
        let mut next_sync = interval.map(|every| Instant::now() + every);
        loop {
            let wake = earliest(next_sync, upload_due(&core));
            let command = match wake {
                Some(at) => match tokio::time::timeout_at(at, commands.recv()).await {
                    Ok(None) => return,
                    Ok(Some(command)) => Some(command),
                    Err(_elapsed) => None,
                },
                None => match commands.recv().await {
                    None => return,
                    Some(command) => Some(command),
                },
            };
            let report = match command {
                Some(command) => answer(&mut core, command).await,
                None if next_sync.is_some_and(|at| at <= Instant::now()) => {
                    next_sync = interval.map(|every| Instant::now() + every);
                    SyncReport::Round(core.sync().await)
                }
                None => SyncReport::Round(core.upload_due().await),
            };
            if reports.send(report).is_err() {
                return;
            }
        }
    });
}

/// Does what the game asked.
async fn answer(core: &mut SyncCore, command: SyncCommand) -> SyncReport {
    match command {
        SyncCommand::SaveMade { slot, save_id } => match core.note_save(slot, save_id) {
            Ok(()) => SyncReport::Round(core.upload_due().await),
            Err(error) => SyncReport::Round(SyncRound {
                error: Some(error.to_string()),
                ..SyncRound::default()
            }),
        },
        SyncCommand::UseHiddenSave(slot) => SyncReport::HiddenSaveUsed {
            slot,
            result: core.use_hidden_save(slot).await.map_err(|e| e.to_string()),
        },
        SyncCommand::SyncNow => SyncReport::Round(core.sync().await),
        SyncCommand::Flush => SyncReport::Flushed {
            round: core.upload_all().await,
            pending: core.pending_uploads(),
        },
    }
}

/// When the earliest queued upload is due, on the runtime's clock.
fn upload_due(core: &SyncCore) -> Option<Instant> {
    let due = core.next_upload_due()?;
    let wait = due.unix_millis().saturating_sub(core.now().unix_millis());
    Some(Instant::now() + Duration::from_millis(wait.max(0) as u64))
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
