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
//! Everything runs in `PreUpdate`, after Bevy's input systems, in the [`KeepsakeSystems`] sets:
//!
//! 1. [`KeepsakeSystems::Requests`]: request messages, the quicksave/quickload keys and the
//!    autosave timer become jobs; play time advances.
//! 2. [`KeepsakeSystems::Jobs`]: finished jobs are reported (a finished load is applied to the
//!    world first), then waiting jobs whose slot is free start (a save captures the world here,
//!    reports [`SaveStarted`] and, with a [`ThumbnailCapture`] provider, waits a few frames for
//!    its thumbnail before writing), and the [`SaveSlots`] listing refreshes in the background.
//!
//! A load's result is therefore visible to `Update` systems of the frame it completes in, and a
//! save captures the world as the previous frame left it.

mod commands;
mod error;
mod events;
pub(crate) mod jobs;
mod requests;
mod settings;
pub(crate) mod thumbnail;

pub use commands::KeepsakeCommandsExt;
pub use error::KeepsakeError;
pub use events::{
    Checkpoint, DeleteCompleted, DeleteFailed, DeleteRequest, LoadCompleted, LoadFailed,
    LoadRequest, RefreshSlots, SaveCompleted, SaveFailed, SaveRequest, SaveStarted, SaveTrigger,
};
pub use jobs::{Job, JobKind, JobTarget, KeepsakeStatus, KeepsakeStore, SaveSlots};
pub use settings::{KeepsakeSettings, Playtime, SaveTitle};
pub use thumbnail::{ThumbnailCapture, ThumbnailTicket, ThumbnailWanted};

use crate::format::{Compression, EncodeOptions, Limits};
use crate::snapshot::ensure_registry;
use crate::store::{
    FileSystem, OsFileSystem, ProfileName, SlotLayout, SlotStore, StoreConfig, StoreError,
    default_save_root,
};
use bevy::input::InputSystems;
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The plugin's system sets, in the order they run in `PreUpdate`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeepsakeSystems {
    /// Requests, hotkeys, autosave timer, play time.
    Requests,
    /// Finishing, applying and starting jobs; refreshing the listing.
    Jobs,
}

/// Crash-safe save slots for a Bevy game: add it with a game id, register what is saved with
/// [`register_saveable`](crate::snapshot::SaveableAppExt::register_saveable), and send
/// [`SaveRequest`]s and [`LoadRequest`]s (or press F5 / F9).
///
/// Works under `MinimalPlugins` (no window) and `DefaultPlugins`.
#[derive(Clone)]
pub struct KeepsakePlugin {
    game_id: String,
    save_root: Option<PathBuf>,
    profile: String,
    settings: KeepsakeSettings,
    backups: u16,
    layout: SlotLayout,
    encode: EncodeOptions,
    filesystem: Arc<dyn FileSystem>,
}

impl KeepsakePlugin {
    /// Saves under the platform's data directory for `game_id` (see
    /// [`default_save_root`]), profile `default`, autosave every 60 s, F5 / F9.
    pub fn new(game_id: impl Into<String>) -> Self {
        KeepsakePlugin {
            game_id: game_id.into(),
            save_root: None,
            profile: ProfileName::default().as_str().to_owned(),
            settings: KeepsakeSettings::default(),
            backups: 3,
            layout: SlotLayout::default(),
            encode: EncodeOptions::default(),
            filesystem: Arc::new(OsFileSystem),
        }
    }

    /// Saves under `root` instead of the platform's data directory.
    #[must_use]
    pub fn save_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.save_root = Some(root.into());
        self
    }

    /// Uses profile `name` (a folder under the save root; validated when the plugin starts).
    #[must_use]
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.profile = name.into();
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
        self.backups = generations;
        self
    }

    /// The largest save payload, uncompressed, that is written or read. Default 256 MiB.
    #[must_use]
    pub fn max_save_size(mut self, bytes: u32) -> Self {
        self.encode.limits = Limits {
            max_payload_uncompressed: bytes,
            ..self.encode.limits
        };
        self
    }

    /// How many manual and autosave slots there are. Default 10 and 5.
    #[must_use]
    pub fn slots(mut self, manual: u16, auto: u16) -> Self {
        self.layout = SlotLayout { manual, auto };
        self
    }

    /// Whether payloads are LZ4-compressed. Default yes.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.encode.compression = compression;
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
        self.filesystem = filesystem;
        self
    }

    fn open_store(&self) -> Result<SlotStore, StoreError> {
        let root = match &self.save_root {
            Some(root) => root.clone(),
            None => default_save_root(&self.game_id)?,
        };
        let config = StoreConfig {
            root,
            profile: ProfileName::new(self.profile.clone())?,
            layout: self.layout,
            backups: self.backups,
            encode: self.encode,
        };
        SlotStore::open_with(config, Arc::clone(&self.filesystem))
    }
}

impl Plugin for KeepsakePlugin {
    fn build(&self, app: &mut App) {
        ensure_registry(app);
        let store = self.open_store().map(Arc::new).map_err(|error| {
            error!("keepsake: saving is unavailable: {error}");
            Arc::new(error)
        });
        let mut queue = jobs::JobQueue::default();
        queue.request_listing();

        app.insert_resource(self.settings.clone())
            .insert_resource(jobs::KeepsakeStore(store))
            .insert_resource(queue)
            .init_resource::<KeepsakeStatus>()
            .init_resource::<SaveSlots>()
            .init_resource::<SaveTitle>()
            .init_resource::<Playtime>()
            .add_message::<SaveRequest>()
            .add_message::<LoadRequest>()
            .add_message::<DeleteRequest>()
            .add_message::<Checkpoint>()
            .add_message::<RefreshSlots>()
            .add_message::<SaveStarted>()
            .add_message::<SaveCompleted>()
            .add_message::<SaveFailed>()
            .add_message::<LoadCompleted>()
            .add_message::<LoadFailed>()
            .add_message::<DeleteCompleted>()
            .add_message::<DeleteFailed>()
            .configure_sets(
                PreUpdate,
                (KeepsakeSystems::Requests, KeepsakeSystems::Jobs)
                    .chain()
                    .after(InputSystems),
            )
            .add_systems(
                PreUpdate,
                (
                    requests::collect_requests.in_set(KeepsakeSystems::Requests),
                    jobs::run_jobs.in_set(KeepsakeSystems::Jobs),
                ),
            );
    }
}
