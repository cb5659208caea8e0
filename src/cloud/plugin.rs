//! [`CloudPlugin`]: connects the sync thread to [`KeepsakePlugins`]'s saves, listing and menu.

use super::exit::{
    CloudExitUploadEnded, ExitUploadOutcome, SessionSaves, exit_report, flush, uploads_in,
};
use super::listing::ListingLimits;
use super::redact::RedactedUrl;
use super::remote::{Remote, RequestPolicy};
use super::sync::{Connection, SlotSync, SyncCore, SyncRound};
use super::worker::{SyncCommand, SyncReport, SyncWorker};
use crate::SlotId;
use crate::format::{DEVICE_ID_EXTRA, DEVICE_NAME_EXTRA};
#[cfg(doc)]
use crate::plugin::KeepsakePlugins;
use crate::plugin::{
    ExitDeadline, ExitWork, KeepsakeSettings, KeepsakeStore, KeepsakeSystems, ListingRefresh,
    RefreshSlotsRequest, StoreOpener, report,
};
use bevy::app::OnAppExitSystems;
use bevy::prelude::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Cloud saves for a game using [`KeepsakePlugins`] (add it after that plugin).
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_keepsake::{cloud::CloudPlugin, prelude::*};
///
/// App::new()
///     .add_plugins(MinimalPlugins)
///     .add_plugins(KeepsakePlugins::new("my-game"))
///     .add_plugins(CloudPlugin::new("s3://my-bucket/saves?region=eu-west-1"))
///     .run();
/// ```
///
/// Saves go to `<prefix>/<game id>/<profile>/` (see [`remote`](super::remote)). The sync
/// thread syncs at start, on [`RefreshSlotsRequest`] and every
/// [`sync_every`](Self::sync_every), and uploads each save as soon as it is durable.
/// [`CloudStatus`] tells menus the state of each slot; [`CloudSaveArrived`],
/// [`CloudSaveRefused`] and [`CloudSaveUploaded`] (observer events) report the work.
///
/// When the app exits, the saves made this session (the exit save included) are uploaded
/// before it closes, within the exit's wait (`max_wait` of
/// [`SaveOnExit::On`](crate::plugin::SaveOnExit::On), else
/// [`PENDING_WORK_WAIT`](crate::plugin::PENDING_WORK_WAIT)); [`CloudExitUploadEnded`] and the
/// log say what could not be, which the next start uploads.
#[derive(Clone)]
pub struct CloudPlugin {
    url: String,
    device_name: Option<String>,
    sync_every: Option<Duration>,
    policy: RequestPolicy,
    listing: ListingLimits,
}

/// The URL's credentials stay out of `Debug` output (see [`RedactedUrl`]).
impl std::fmt::Debug for CloudPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudPlugin")
            .field("url", &RedactedUrl::new(&self.url))
            .field("device_name", &self.device_name)
            .field("sync_every", &self.sync_every)
            .field("policy", &self.policy)
            .field("listing", &self.listing)
            .finish()
    }
}

impl CloudPlugin {
    /// Syncs with the storage at `url` (see [`Remote::open`] for the forms it takes).
    pub fn new(url: impl Into<String>) -> Self {
        CloudPlugin {
            url: url.into(),
            device_name: None,
            sync_every: Some(Duration::from_secs(300)),
            policy: RequestPolicy::default(),
            listing: ListingLimits::default(),
        }
    }

    /// The device name stored with this device's saves (default: the machine's host name).
    #[must_use]
    pub fn device_name(mut self, name: impl Into<String>) -> Self {
        self.device_name = Some(name.into());
        self
    }

    /// How often the cloud folder is listed for other devices' saves (`None`: only at start
    /// and on [`RefreshSlotsRequest`]). Default 5 minutes.
    #[must_use]
    pub fn sync_every(mut self, interval: Option<Duration>) -> Self {
        self.sync_every = interval;
        self
    }

    /// Timeouts and retries of storage requests.
    #[must_use]
    pub fn requests(mut self, policy: RequestPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How much of the cloud folder one sync round lists (default: pages of 1000 keys,
    /// 20,000 keys and 200 requests a round; see [`listing`](super::listing)).
    #[must_use]
    pub fn listing(mut self, limits: ListingLimits) -> Self {
        self.listing = limits;
        self
    }
}

/// Asks for the save that the slot's conflict keeps below the head to head the slot instead
/// (the player chose the other device's save, or their own). The other save stays, one
/// generation below.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseHiddenSaveRequest {
    /// The slot in conflict.
    pub slot: SlotId,
}

/// A save made on another device arrived and is now a local generation.
#[derive(Event, Clone, Debug, PartialEq, Eq)]
pub struct CloudSaveArrived {
    /// Its slot.
    pub slot: SlotId,
    /// Its generation.
    pub generation: u64,
    /// Whether it heads the slot (it is the most recent save of the slot).
    pub heads_slot: bool,
    /// The device that made it, as its metadata says.
    pub device_name: Option<String>,
}

/// A file in the cloud folder was refused (damaged, forged, renamed); no local save changed.
#[derive(Event, Clone, Debug, PartialEq, Eq)]
pub struct CloudSaveRefused {
    /// The file's name in the cloud folder.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// A save of this device reached the cloud.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloudSaveUploaded {
    /// Its slot.
    pub slot: SlotId,
    /// Its save id.
    pub save_id: Uuid,
    /// Bytes sent.
    pub bytes: u64,
}

/// The cloud state for menus: the connection, and each slot's sync state.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct CloudStatus {
    /// Why cloud sync is not running, when it is not (local saving is unaffected).
    pub stopped: Option<String>,
    /// Whether the storage answered last time.
    pub connection: Connection,
    /// Each slot holding saves, with its sync state.
    pub slots: BTreeMap<SlotId, SlotSync>,
    /// Uploads waiting.
    pub pending: usize,
    /// The last round's error, if it stopped early.
    pub last_error: Option<String>,
    /// Why the sync state file cannot be written, while it cannot (sync runs on, keeping the
    /// state in memory; see [`SyncRound::state_error`]).
    pub state_error: Option<String>,
    /// Completed rounds (changes whenever the state may have).
    pub rounds: u64,
}

impl CloudStatus {
    /// The sync state of `slot`, when it holds saves and cloud sync runs.
    pub fn slot(&self, slot: SlotId) -> Option<&SlotSync> {
        self.slots.get(&slot)
    }
}

/// The game id the remote folder is named after, kept from build time (the store opener is
/// gone once the store is open).
#[derive(Resource, Clone)]
struct CloudSetup {
    plugin: CloudPlugin,
    game_id: String,
}

/// The running sync thread.
#[derive(Resource)]
struct CloudWorker(SyncWorker);

impl Plugin for CloudPlugin {
    fn build(&self, app: &mut App) {
        let Some(opener) = app.world().get_resource::<StoreOpener>() else {
            panic!("CloudPlugin needs KeepsakePlugins: add KeepsakePlugins first");
        };
        let setup = CloudSetup {
            plugin: self.clone(),
            game_id: opener.game_id.clone(),
        };
        app.insert_resource(setup)
            .init_resource::<CloudStatus>()
            .add_message::<UseHiddenSaveRequest>()
            .init_resource::<SessionSaves>()
            .add_observer(SessionSaves::note_save)
            .add_systems(Startup, start_sync)
            .add_systems(
                Last,
                upload_before_exit.in_set(OnAppExitSystems).after(ExitWork),
            )
            .add_systems(
                PreUpdate,
                (forward_commands, receive_reports)
                    .chain()
                    .after(KeepsakeSystems::Jobs),
            );
    }
}

/// Opens the remote and the sync state and starts the thread (at `Startup`, once the store is
/// open). Failures leave local saving as it is and are shown in [`CloudStatus::stopped`].
fn start_sync(world: &mut World) {
    let Some(setup) = world.remove_resource::<CloudSetup>() else {
        return;
    };
    match start_worker(world, &setup) {
        Ok((worker, device_id, device_name)) => {
            let mut settings = world.resource_mut::<KeepsakeSettings>();
            settings
                .save_extras
                .insert(DEVICE_ID_EXTRA.to_owned(), device_id);
            settings
                .save_extras
                .insert(DEVICE_NAME_EXTRA.to_owned(), device_name);
            world.insert_resource(CloudWorker(worker));
        }
        Err(reason) => {
            error!("keepsake: cloud sync is off: {reason}");
            world.resource_mut::<CloudStatus>().stopped = Some(reason);
        }
    }
}

fn start_worker(world: &World, setup: &CloudSetup) -> Result<(SyncWorker, String, String), String> {
    let store = world
        .resource::<KeepsakeStore>()
        .get()
        .map_err(|e| e.to_string())?;
    let profile = store.config().profile.as_str();
    let plugin = &setup.plugin;
    let remote = Remote::open(&plugin.url, &setup.game_id, profile, &plugin.policy)
        .map_err(|error| error.to_string())?
        .with_listing(plugin.listing);
    let name = plugin
        .device_name
        .clone()
        .unwrap_or_else(default_device_name);
    let (core, unusable) = SyncCore::open(store.clone(), remote, name.clone());
    if let Some(unusable) = unusable {
        warn!("keepsake: {unusable}");
    }
    let device_id = core.device_id().to_owned();
    let worker = SyncWorker::spawn(core, plugin.sync_every).map_err(|e| e.to_string())?;
    Ok((worker, device_id, name))
}

/// Sends the sync thread each new durable save, refresh request and conflict choice.
fn forward_commands(
    worker: Option<Res<CloudWorker>>,
    mut session: ResMut<SessionSaves>,
    mut refreshes: MessageReader<RefreshSlotsRequest>,
    mut choices: MessageReader<UseHiddenSaveRequest>,
) {
    // Read even with sync off: the exit reports this session's saves as not uploaded.
    let made = session.take_new();
    let Some(worker) = worker else {
        return;
    };
    send_saves(&worker.0, made);
    if refreshes.read().count() > 0 {
        worker.0.send(SyncCommand::SyncNow);
    }
    for choice in choices.read() {
        worker.0.send(SyncCommand::UseHiddenSave(choice.slot));
    }
}

/// Asks the sync thread to upload `saves` (slot, save id), new durable saves.
fn send_saves(worker: &SyncWorker, saves: Vec<(SlotId, Uuid)>) {
    for (slot, save_id) in saves {
        worker.send(SyncCommand::SaveMade { slot, save_id });
    }
}

/// Applies the sync thread's reports: the status, the events, and a new listing when saves
/// arrived or changed places.
fn receive_reports(world: &mut World) {
    let reports: Vec<SyncReport> = match world.get_resource::<CloudWorker>() {
        Some(worker) => std::iter::from_fn(|| worker.0.try_report()).collect(),
        None => return,
    };
    for report in reports {
        apply_report(world, report);
    }
}

fn apply_report(world: &mut World, report: SyncReport) {
    match report {
        SyncReport::Round(round) | SyncReport::Flushed { round, .. } => apply_round(world, round),
        SyncReport::HiddenSaveUsed { slot, result } => {
            if let Err(error) = result {
                warn!("keepsake: could not switch {slot} to its other save: {error}");
            }
            world.resource_mut::<ListingRefresh>().request();
            world.resource_mut::<CloudStatus>().slots.remove(&slot);
        }
        SyncReport::Stopped(reason) => {
            error!("keepsake: cloud sync stopped: {reason}");
            world.resource_mut::<CloudStatus>().stopped = Some(reason);
        }
    }
}

fn apply_round(world: &mut World, round: SyncRound) {
    world
        .resource_mut::<SessionSaves>()
        .confirm(&round.uploaded);
    if !round.arrived.is_empty() {
        world.resource_mut::<ListingRefresh>().request();
    }
    for receipt in &round.arrived {
        let event = CloudSaveArrived {
            slot: receipt.slot,
            generation: receipt.generation,
            heads_slot: receipt.heads_slot,
            device_name: receipt.meta.device_name().map(str::to_owned),
        };
        report(world, event);
    }
    for refused in &round.refused {
        warn!(
            "keepsake: cloud save {} refused: {}",
            refused.name, refused.reason
        );
        let event = CloudSaveRefused {
            name: refused.name.clone(),
            reason: refused.reason.clone(),
        };
        report(world, event);
    }
    for uploaded in &round.uploaded {
        let event = CloudSaveUploaded {
            slot: uploaded.slot,
            save_id: uploaded.save_id,
            bytes: uploaded.bytes,
        };
        report(world, event);
    }
    let mut status = world.resource_mut::<CloudStatus>();
    status.connection = round.connection;
    status.slots = round.slots;
    status.pending = round.pending;
    status.last_error = round.error;
    // Logged once, not at every round it goes on.
    if let Some(error) = round
        .state_error
        .as_ref()
        .filter(|e| status.state_error.as_ref() != Some(*e))
    {
        warn!("keepsake: {error}");
    }
    status.state_error = round.state_error;
    status.rounds += 1;
}

/// In the app's last frame, after the exit save: sends the sync thread the saves it has not
/// been sent (the exit save), waits for this session's uploads until the exit's deadline, and
/// reports and logs what did not make it.
fn upload_before_exit(world: &mut World) {
    // The core's exit work leaves the deadline once, in the exit frame.
    let Some(ExitDeadline(deadline)) = world.remove_resource::<ExitDeadline>() else {
        return;
    };
    let made = world.resource_mut::<SessionSaves>().take_new();
    if let Some(worker) = world.get_resource::<CloudWorker>() {
        send_saves(&worker.0, made);
    }
    let event = exit_upload(world, deadline);
    match event.warning() {
        Some(warning) => warn!("{warning}"),
        None if !event.uploaded.is_empty() => {
            info!(
                "keepsake: {} save(s) uploaded before exit",
                event.uploaded.len()
            );
        }
        None => {}
    }
    report(world, event);
}

/// Waits, until `deadline`, for the sync thread to upload what is queued; never waits when
/// sync is off or this session's saves are all in the cloud already.
fn exit_upload(world: &mut World, deadline: Instant) -> CloudExitUploadEnded {
    if let Some(reason) = sync_off(world) {
        return CloudExitUploadEnded {
            uploaded: Vec::new(),
            not_uploaded: world.resource::<SessionSaves>().unconfirmed(),
            outcome: ExitUploadOutcome::SyncOff(reason),
        };
    }
    if world.resource::<SessionSaves>().all_confirmed() {
        return CloudExitUploadEnded {
            uploaded: Vec::new(),
            not_uploaded: Vec::new(),
            outcome: ExitUploadOutcome::Done,
        };
    }
    let mut uploaded = Vec::new();
    let end = world.resource_scope(|world, worker: Mut<CloudWorker>| {
        flush(&worker.0, deadline, |report| {
            uploaded.extend_from_slice(uploads_in(&report));
            apply_report(world, report);
        })
    });
    exit_report(end, uploaded, world.resource::<SessionSaves>())
}

/// Why cloud sync is not running, if it is not.
fn sync_off(world: &World) -> Option<String> {
    let stopped = world.resource::<CloudStatus>().stopped.clone();
    match world.get_resource::<CloudWorker>() {
        None => Some(stopped.unwrap_or_else(|| "the sync thread did not start".to_owned())),
        Some(_) => stopped,
    }
}

/// This machine's name as the operating system reports it (`HOSTNAME`, `COMPUTERNAME` or
/// `/etc/hostname`), or `"this device"`: the default device name stored with saves.
pub fn default_device_name() -> String {
    let from_env = ["HOSTNAME", "COMPUTERNAME"]
        .into_iter()
        .find_map(|key| std::env::var(key).ok());
    from_env
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "this device".to_owned())
}
