//! [`KeepsakePlugins`]: the plugin group a game adds, its builder, and its members.
//!
//! | member | what it adds | without it |
//! |---|---|---|
//! | [`KeepsakeCorePlugin`] | the store (opened in `PreStartup`), requests → jobs on the task pool, loads, the listing ([`SaveSlots`]), [`KeepsakeStatus`], result events, play time, and at exit the end of the work already asked | nothing saves (required by every other member) |
//! | [`AutosavePlugin`] | the autosave timer ([`KeepsakeSettings::autosave_every`]) and the autosave on focus loss ([`KeepsakeSettings::autosave_on_focus_loss`]) | no autosave; requests still save |
//! | [`HotkeysPlugin`] | F5 / F9 ([`KeepsakeSettings::quicksave_key`], [`KeepsakeSettings::quickload_key`]) | no quicksave or quickload keys |
//! | [`ExitSavePlugin`] | the exit save ([`KeepsakeSettings::save_on_exit`]) | no save on exit; work already asked still finishes |
//! | [`CrashSavePlugin`] | the crash save: the newest state kept in memory every 5 s and written as an autosave when the game panics or gets SIGTERM, SIGINT or SIGHUP | a crash loses everything since the last save |
//! | [`RewindPlugin`] | the rewind ring ([`RewindRing`], [`RewindRequest`]) | no rewind points; captures do not feed a ring |
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     // Everything but the F5 / F9 keys (the game binds its own).
//!     .add_plugins(KeepsakePlugins::new("my-game").build().disable::<HotkeysPlugin>())
//!     .run();
//! ```

use super::autosave::AutosavePlugin;
use super::core::KeepsakeCorePlugin;
use super::crash::CrashSavePlugin;
use super::exit_save::ExitSavePlugin;
use super::hotkeys::HotkeysPlugin;
use super::rewind::{RewindPlugin, RewindSettings};
use super::settings::{KeepsakeSettings, SaveOnExit};
use super::store::StoreOpener;
#[cfg(doc)]
use super::{
    KeepsakeStatus, LoadRequest, RewindRequest, RewindRing, SaveCompleted, SaveRequest, SaveSlots,
};
use super::{LoadApply, SavePriority};
use crate::format::{Compression, EncodeOptions, Limits, SealKey, Sealing, UnsealedSaves};
use crate::snapshot::RuntimeAssetHandles;
use crate::store::{FileSystem, OsFileSystem, ProfileName, SlotLayout};
use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Crash-safe save slots for a Bevy game: add the group with a game id, register what is saved
/// with [`register_saveable`](crate::snapshot::SaveableAppExt::register_saveable), and send
/// [`SaveRequest`]s and [`LoadRequest`]s (or press F5 / F9).
///
/// Works under `MinimalPlugins` (no window) and `DefaultPlugins`. The builder's settings go to
/// the members (see the [module](self) for the table); a game turns a member off with
/// `KeepsakePlugins::new("my-game").build().disable::<AutosavePlugin>()`.
#[derive(Clone)]
pub struct KeepsakePlugins {
    store: StoreOpener,
    settings: KeepsakeSettings,
    runtime_handles: RuntimeAssetHandles,
    rewind: RewindSettings,
    schedule: InternedScheduleLabel,
}

impl KeepsakePlugins {
    /// Saves under the platform's data directory for `game_id` (see
    /// [`default_save_root`](crate::store::default_save_root)), profile `default`, autosave
    /// every 60 s, F5 / F9, systems in `PreUpdate`.
    pub fn new(game_id: impl Into<String>) -> Self {
        KeepsakePlugins {
            store: StoreOpener {
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

impl PluginGroup for KeepsakePlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(KeepsakeCorePlugin {
                store: self.store,
                settings: self.settings,
                runtime_handles: self.runtime_handles,
                schedule: self.schedule,
            })
            .add(AutosavePlugin)
            .add(HotkeysPlugin)
            .add(ExitSavePlugin)
            .add(CrashSavePlugin::default())
            .add(RewindPlugin::new(self.rewind))
    }
}
