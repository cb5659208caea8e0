//! [`KeepsakePlugin`]: saves on the task pool, loads, autosave, F5/F9 and result events.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use std::time::Duration;
//!
//! #[derive(Component, Reflect, Default)]
//! struct Health(f32);
//!
//! App::new()
//!     .add_plugins(MinimalPlugins)
//!     .add_plugins(KeepsakePlugin::new("my-game").autosave_every(Duration::from_secs(30)))
//!     .register_saveable::<Health>()
//!     .add_observer(|saved: On<SaveCompleted>| info!("saved to {}", saved.slot))
//!     .run();
//! ```
//!
//! # Schedule
//!
//! Everything runs in `PreUpdate` (or the schedule given to [`KeepsakePlugin::schedule`]), after
//! Bevy's input systems, in the [`KeepsakeSystems`] sets:
//!
//! 1. [`KeepsakeSystems::Requests`]: request messages, window focus loss and the autosave timer
//!    ([`AutosaveTimer`]) become jobs; play time advances. (The quicksave and quickload keys are
//!    read in `PreUpdate` just before, whatever the schedule, so each press counts once.)
//! 2. [`KeepsakeSystems::Jobs`]: finished jobs are reported (a finished load is applied to the
//!    world first), then waiting jobs whose slot is free start (a save captures the world here,
//!    incrementally: a [`CaptureCache`](crate::snapshot::CaptureCache), a resource created with
//!    the plugin and kept between saves, re-encodes only what changed since the last one, and
//!    the blob is joined and hashed on the task pool; [`SaveCompleted::capture_time`] is what
//!    stayed on the main thread; it then reports [`SaveStarted`] and, with a
//!    [`ThumbnailCapture`] provider, waits a few frames for its thumbnail before writing), the
//!    [`SaveSlots`] listing refreshes in the background and [`KeepsakeStatus`] is brought up to
//!    date.
//!
//! The store is opened in `PreStartup`: building the app touches no files. On `AppExit`, the
//! plugin finishes its work and makes the exit save ([`SaveOnExit`]) in `Last`, in Bevy's
//! [`OnAppExitSystems`] set, after the window exit systems (see the
//! `exit` module); with cloud sync, the uploads of the session's saves follow within the same
//! wait.
//!
//! A load's result is therefore visible to `Update` systems of the frame it completes in, and a
//! save captures the world as the previous frame left it.
//!
//! # Where each step lives
//!
//! In the order above: `requests` turns requests, hotkeys and the timer into [`Job`]s (`job` is
//! the vocabulary every module speaks: [`Job`], [`JobTarget`], [`SaveTarget`], [`SaveReason`],
//! [`SlotAction`]); the `runner` folder runs them: `runner::queue` decides which wait, run and
//! start and publishes [`KeepsakeStatus`], `runner::save` captures, waits for the thumbnail
//! (`thumbnail`), writes and reports, and `runner::load` and `runner::delete` do the same for
//! theirs; `listing` refreshes [`SaveSlots`] in the background; `status` holds the two
//! resources menus read; the `rewind` folder keeps rewind points in memory and rewinds to them
//! (after the runner in [`KeepsakeSystems::Jobs`], through the same capture cache as saves);
//! `unsaved` says what saves leave out of saved entities and what loads bring back without,
//! and `restored` reports [`WorldRestored`] after every load and rewind.
//! Every background part spawns on the task pool of `pool`; `store` opens
//! the slot store in `PreStartup`; `exit` is the last frame's path, through the same runner.

mod commands;
mod error;
mod events;
mod exit;
mod job;
mod listing;
pub(crate) mod pool;
mod requests;
mod restored;
mod rewind;
mod runner;
mod settings;
mod status;
mod store;
pub(crate) mod thumbnail;
mod unsaved;

pub use crate::snapshot::RuntimeAssetHandles;
pub use commands::KeepsakeCommandsExt;
pub use error::KeepsakeError;
pub use events::{
    DeleteCompleted, DeleteFailed, DeleteRequest, LoadCompleted, LoadFailed, LoadRequest,
    RefreshSlots, SaveCompleted, SaveFailed, SaveRequest, SaveStarted,
};
pub use exit::PENDING_WORK_WAIT;
pub use job::{Job, JobTarget, SaveReason, SaveTarget, SlotAction};
pub use pool::SavePriority;
pub use restored::{RestoredFrom, WorldRestored};
pub use rewind::{
    Evicted, RewindCompleted, RewindError, RewindFailed, RewindPoint, RewindPointFailed,
    RewindPointId, RewindPointRequest, RewindPointTaken, RewindRequest, RewindRing, RewindSettings,
    RewindTimer, RewindTo,
};
pub use settings::{AutosaveTimer, KeepsakeSettings, LoadApply, Playtime, SaveOnExit, SaveTitle};
pub use status::{KeepsakeStatus, SaveSlots};
pub use store::KeepsakeStore;
pub use thumbnail::{ThumbnailCapture, ThumbnailTicket, ThumbnailWanted};
#[cfg(feature = "cloud")]
pub(crate) use {
    events::report,
    exit::{ExitDeadline, ExitWork},
    listing::ListingRefresh,
    store::StoreOpener,
};

use crate::format::{Compression, EncodeOptions, Limits, SealKey, Sealing, UnsealedSaves};
use crate::snapshot::{SaveRegistry, SnapshotError, ensure_registry};
use crate::store::{FileSystem, OsFileSystem, ProfileName, SlotLayout};
use bevy::app::OnAppExitSystems;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::input::InputSystems;
use bevy::prelude::*;
use bevy::window::{ExitSystems, WindowFocused};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The plugin's system sets, in the order they run (in `PreUpdate` unless the game chose
/// another schedule with [`KeepsakePlugin::schedule`]).
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeepsakeSystems {
    /// Hotkeys, requests, autosave timer, play time.
    Requests,
    /// Finishing, applying and starting jobs; refreshing the listing and the status.
    Jobs,
}

/// Crash-safe save slots for a Bevy game: add it with a game id, register what is saved with
/// [`register_saveable`](crate::snapshot::SaveableAppExt::register_saveable), and send
/// [`SaveRequest`]s and [`LoadRequest`]s (or press F5 / F9).
///
/// Works under `MinimalPlugins` (no window) and `DefaultPlugins`.
#[derive(Clone)]
pub struct KeepsakePlugin {
    store: store::StoreOpener,
    settings: KeepsakeSettings,
    runtime_handles: RuntimeAssetHandles,
    rewind: RewindSettings,
    schedule: InternedScheduleLabel,
}

impl KeepsakePlugin {
    /// Saves under the platform's data directory for `game_id` (see
    /// [`default_save_root`](crate::store::default_save_root)), profile `default`, autosave
    /// every 60 s, F5 / F9, systems in `PreUpdate`.
    pub fn new(game_id: impl Into<String>) -> Self {
        KeepsakePlugin {
            store: store::StoreOpener {
                game_id: game_id.into(),
                save_root: None,
                profile: ProfileName::default().as_str().to_owned(),
                backups: 3,
                layout: SlotLayout::default(),
                encode: EncodeOptions::default(),
                unsealed: UnsealedSaves::default(),
                filesystem: Arc::new(OsFileSystem),
            },
            settings: KeepsakeSettings::default(),
            runtime_handles: RuntimeAssetHandles::default(),
            rewind: RewindSettings::default(),
            schedule: PreUpdate.intern(),
        }
    }

    /// Saves under `root` instead of the platform's data directory.
    #[must_use]
    pub fn save_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.store.save_root = Some(root.into());
        self
    }

    /// Uses profile `name` (a folder under the save root; validated when the store opens).
    #[must_use]
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.store.profile = name.into();
        self
    }

    /// Autosaves after this much play time (`Duration::ZERO`: never on a timer).
    #[must_use]
    pub fn autosave_every(mut self, interval: Duration) -> Self {
        self.settings.autosave_every = interval;
        self
    }

    /// The quicksave key (`None` disables it). Default F5.
    #[must_use]
    pub fn quicksave_key(mut self, key: Option<KeyCode>) -> Self {
        self.settings.quicksave_key = key;
        self
    }

    /// The quickload key (`None` disables it). Default F9.
    #[must_use]
    pub fn quickload_key(mut self, key: Option<KeyCode>) -> Self {
        self.settings.quickload_key = key;
        self
    }

    /// How many older generations each slot keeps as backups. Default 3.
    #[must_use]
    pub fn backups(mut self, generations: u16) -> Self {
        self.store.backups = generations;
        self
    }

    /// The largest save payload, uncompressed, that is written or read. Default 256 MiB.
    #[must_use]
    pub fn max_save_size(mut self, bytes: u32) -> Self {
        self.store.encode.limits = Limits {
            max_payload_uncompressed: bytes,
            ..self.store.encode.limits
        };
        self
    }

    /// How many manual and autosave slots there are. Default 10 and 5.
    #[must_use]
    pub fn slots(mut self, manual: u16, auto: u16) -> Self {
        self.store.layout = SlotLayout { manual, auto };
        self
    }

    /// Whether payloads are LZ4-compressed. Default yes.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.store.encode.compression = compression;
        self
    }

    /// Seals every save under `key`: its payload is encrypted and, with its metadata and
    /// thumbnail, authenticated (AES-256-GCM, format version 3). A save edited by hand, sealed
    /// by another game or with another key does not load (a slot loads its newest intact
    /// backup instead); menus and listings still read its metadata. Unsealed saves (made before
    /// the game sealed its saves) are refused unless [`unsealed_saves`](Self::unsealed_saves)
    /// accepts them.
    ///
    /// The key is in the game's binary: this stops casual editing, and with a key bound to
    /// the player ([`SealKey::bound_to`]) saves copied between players; not a player with a
    /// debugger (see the README's "Sealed saves").
    #[must_use]
    pub fn seal(mut self, key: SealKey) -> Self {
        self.store.encode.seal = Sealing::Key(key);
        self
    }

    /// Whether a game that [`seal`](Self::seal)s its saves still loads (and imports through
    /// cloud sync) unsealed ones. Default [`UnsealedSaves::Refuse`]; choose
    /// [`UnsealedSaves::Accept`] when turning sealing on in a released game, so its players'
    /// existing saves keep loading (each slot's next save is sealed).
    #[must_use]
    pub fn unsealed_saves(mut self, unsealed: UnsealedSaves) -> Self {
        self.store.unsealed = unsealed;
        self
    }

    /// The game's version, stored in every save.
    #[must_use]
    pub fn game_version(mut self, version: impl Into<String>) -> Self {
        self.settings.game_version = version.into();
        self
    }

    /// Sends every filesystem call through `filesystem` (for tests: counting, fault injection).
    #[must_use]
    pub fn filesystem(mut self, filesystem: Arc<dyn FileSystem>) -> Self {
        self.store.filesystem = filesystem;
        self
    }

    /// Whether the app saves when it is about to exit (see [`SaveOnExit`]). Default off; games
    /// usually turn it on at run time through [`KeepsakeSettings::save_on_exit`] once a play
    /// session has started.
    #[must_use]
    pub fn save_on_exit(mut self, save: SaveOnExit) -> Self {
        self.settings.save_on_exit = save;
        self
    }

    /// What saves do with handles to assets made at run time (`Assets::add`), which have no path
    /// to be saved by. Default [`RuntimeAssetHandles::Skip`]: the default handle in their place,
    /// a warning once per field, and a count in [`SaveCompleted::handles_left_out`].
    #[must_use]
    pub fn runtime_asset_handles(mut self, policy: RuntimeAssetHandles) -> Self {
        self.runtime_handles = policy;
        self
    }

    /// Whether an autosave is made when the primary window loses focus. Default no.
    #[must_use]
    pub fn autosave_on_focus_loss(mut self, autosave: bool) -> Self {
        self.settings.autosave_on_focus_loss = autosave;
        self
    }

    /// The priority of the thread that encodes, compresses and writes each save (default
    /// [`SavePriority::Low`]; also a field of [`KeepsakeSettings`]).
    #[must_use]
    pub fn save_priority(mut self, priority: SavePriority) -> Self {
        self.settings.save_priority = priority;
        self
    }

    /// The rewind ring's settings (see [`RewindSettings`]; also a resource, changeable at run
    /// time). Default: 60 points, taken only on request, 64 MiB.
    #[must_use]
    pub fn rewind(mut self, settings: RewindSettings) -> Self {
        self.rewind = settings;
        self
    }

    /// How loads and rewinds change the saved entities already in the world (default
    /// [`LoadApply::InPlace`]; also a field of [`KeepsakeSettings`]).
    #[must_use]
    pub fn load_apply(mut self, apply: LoadApply) -> Self {
        self.settings.load_apply = apply;
        self
    }

    /// Runs the plugin's systems in `schedule` instead of `PreUpdate` (for games that drive
    /// their simulation from a schedule of their own). Saves capture and loads apply there.
    #[must_use]
    pub fn schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = schedule.intern();
        self
    }
}

impl Plugin for KeepsakePlugin {
    fn build(&self, app: &mut App) {
        ensure_registry(app);
        self.insert_resources(app);
        add_messages(app);
        self.add_systems(app);
        register_reflected_types(app);
        rewind::build(app, self.rewind.clone());
        app.add_observer(runner::note_own_save);
    }

    /// Refuses a save filter that requires a component no save holds (every registration is
    /// done by now): the game would lose its saved entities at the second save, silently.
    fn finish(&self, app: &mut App) {
        let registry = app.world().resource::<SaveRegistry>();
        if let Some(component) = registry.unsaved_filter_component() {
            panic!("keepsake: {}", SnapshotError::FilterNotSaved { component });
        }
    }
}

impl KeepsakePlugin {
    /// The settings, the store opener and every resource the systems use, all created here so
    /// no system creates one lazily (the capture cache starts empty: the first save encodes
    /// everything).
    fn insert_resources(&self, app: &mut App) {
        app.insert_resource(self.settings.clone())
            .insert_resource(self.runtime_handles)
            .insert_resource(self.store.clone())
            .init_resource::<runner::JobQueue>()
            .init_resource::<runner::SaveCaptureCache>()
            .init_resource::<runner::SessionEntities>()
            .init_resource::<runner::WarnedHandleFields>()
            .init_resource::<unsaved::WarnedUnsaved>()
            .init_resource::<listing::ListingRefresh>()
            .init_resource::<KeepsakeStatus>()
            .init_resource::<SaveSlots>()
            .init_resource::<SaveTitle>()
            .init_resource::<Playtime>()
            .init_resource::<AutosaveTimer>()
            .init_resource::<requests::RequestCursors>();
    }

    /// The store opens in `PreStartup`, the exit path runs in `Last`, the hotkeys in
    /// `PreUpdate`, and the rest in the plugin's schedule, in [`KeepsakeSystems`] order.
    fn add_systems(&self, app: &mut App) {
        app.add_systems(PreStartup, store::open_store)
            .add_systems(
                Last,
                exit::finish_before_exit
                    .in_set(OnAppExitSystems)
                    .in_set(exit::ExitWork)
                    .after(ExitSystems),
            )
            .add_systems(
                PreUpdate,
                requests::hotkeys
                    .after(InputSystems)
                    .before(KeepsakeSystems::Requests),
            )
            .configure_sets(
                self.schedule,
                (KeepsakeSystems::Requests, KeepsakeSystems::Jobs)
                    .chain()
                    .after(InputSystems),
            )
            .add_systems(
                self.schedule,
                (
                    (
                        requests::collect_requests,
                        exit::autosave_on_focus_loss,
                        requests::tick_clocks,
                    )
                        .chain()
                        .in_set(KeepsakeSystems::Requests),
                    (
                        runner::run_jobs,
                        rewind::run_rewind,
                        listing::refresh_listing,
                        runner::publish_status,
                    )
                        .chain()
                        .in_set(KeepsakeSystems::Jobs),
                ),
            );
    }
}

/// The requests the plugin reads and the results it reports (and the window focus messages it
/// reads, added here for apps without a window plugin).
fn add_messages(app: &mut App) {
    app.add_message::<SaveRequest>()
        .add_message::<LoadRequest>()
        .add_message::<DeleteRequest>()
        .add_message::<RefreshSlots>()
        .add_message::<SaveStarted>()
        .add_message::<SaveCompleted>()
        .add_message::<SaveFailed>()
        .add_message::<LoadCompleted>()
        .add_message::<LoadFailed>()
        .add_message::<DeleteCompleted>()
        .add_message::<DeleteFailed>()
        .add_message::<WorldRestored>()
        .add_message::<WindowFocused>();
}

/// Makes the plugin's resources, requests and results visible to inspectors and scripts.
fn register_reflected_types(app: &mut App) {
    app.register_type::<KeepsakeSettings>()
        .register_type::<KeepsakeStatus>()
        .register_type::<SaveSlots>()
        .register_type::<SaveTitle>()
        .register_type::<LoadApply>()
        .register_type::<Playtime>()
        .register_type::<AutosaveTimer>()
        .register_type::<RuntimeAssetHandles>()
        .register_type::<ThumbnailCapture>()
        .register_type::<SaveRequest>()
        .register_type::<LoadRequest>()
        .register_type::<DeleteRequest>()
        .register_type::<RefreshSlots>()
        .register_type::<SaveStarted>()
        .register_type::<SaveCompleted>()
        .register_type::<SaveFailed>()
        .register_type::<LoadCompleted>()
        .register_type::<LoadFailed>()
        .register_type::<DeleteCompleted>()
        .register_type::<DeleteFailed>()
        .register_type::<WorldRestored>();
}
