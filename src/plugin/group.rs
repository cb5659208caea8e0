//! [`KeepsakePlugins`]: the plugin group a game adds, its builder, and its members.
//!
//! The group's builder sets what every member shares: the store (where, which profile, how
//! many slots and backups, how files are encoded and sealed) and the schedule. Each member
//! carries its own settings as public fields: `.set(Member { .., ..default() })` changes them,
//! `.disable::<Member>()` turns the member off (one switch per behaviour).
//!
//! | member | what it adds | its fields | without it |
//! |---|---|---|---|
//! | [`KeepsakeCorePlugin`] | the store (opened in `PreStartup`), requests → jobs on the task pool, loads, the listing ([`SaveSlots`]), [`KeepsakeStatus`], result events, play time, and at exit the end of the work already asked | the game version and extras in each save, the save thread's priority, how loads apply, run-time asset handles ([`KeepsakeSettings`] at run time) | nothing saves (required by every other member) |
//! | [`AutosavePlugin`] | autosaves on a timer of play time and, if asked, on focus loss | `every` (60 s), `on_focus_loss` ([`AutosaveTimer`] at run time: pause, reset, interval) | no autosave; requests still save |
//! | [`HotkeysPlugin`] | quicksave and quickload keys | `quicksave` (F5), `quickload` (F9) | no quicksave or quickload keys |
//! | [`ExitSavePlugin`] | the exit save, once armed | `save_on_exit` (off; [`SaveOnExit`] at run time) | no save on exit; work already asked still finishes |
//! | [`CrashSavePlugin`] | the crash save: the newest state kept in memory and written as an autosave when the game panics or gets SIGTERM, SIGINT or SIGHUP | `every` (5 s), `target`, `write_wait`, `grace` | a crash loses everything since the last save |
//! | [`RewindPlugin`] | the rewind ring ([`RewindRing`], [`RewindRequest`]) | `points`, `every`, `memory_budget` ([`RewindSettings`] at run time) | no rewind points; captures do not feed a ring |
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use std::time::Duration;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(
//!         KeepsakePlugins::new("my-game")
//!             .set(AutosavePlugin {
//!                 every: Duration::from_secs(120),
//!                 ..default()
//!             })
//!             // The game binds its own keys.
//!             .disable::<HotkeysPlugin>(),
//!     )
//!     .run();
//! ```

use super::autosave::AutosavePlugin;
use super::core::{KeepsakeCorePlugin, KeepsakeSchedule};
use super::crash::CrashSavePlugin;
use super::exit_save::ExitSavePlugin;
use super::hotkeys::HotkeysPlugin;
use super::rewind::RewindPlugin;
use super::store::StoreOpener;
#[cfg(doc)]
use super::{
    AutosaveTimer, KeepsakeSettings, KeepsakeStatus, LoadRequest, RewindRequest, RewindRing,
    RewindSettings, SaveOnExit, SaveRequest, SaveSlots,
};
use crate::format::{Compression, EncodeOptions, Limits, SealKey, Sealing, UnsealedSaves};
use crate::store::{FileSystem, OsFileSystem, ProfileName, SlotLayout};
use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Crash-safe save slots for a Bevy game: add the group with a game id, register what is saved
/// with [`register_saveable`](crate::snapshot::SaveableAppExt::register_saveable), and send
/// [`SaveRequest`]s and [`LoadRequest`]s (or press F5 / F9).
///
/// Works under `MinimalPlugins` (no window) and `DefaultPlugins`. The builder sets the store and
/// the schedule, which every member shares; each member's own settings are its fields (see the
/// [module](self) for the table): `KeepsakePlugins::new("my-game").set(AutosavePlugin { .. })`
/// changes a member, `.build().disable::<AutosavePlugin>()` turns it off.
#[derive(Clone)]
pub struct KeepsakePlugins {
    shared: SharedSettings,
}

/// What every member shares, set through the group's builder. The group hands it to the app
/// through a member of its own that a game can neither set nor disable, so that
/// `.set(KeepsakeCorePlugin { .. })` cannot drop the game id or the save root.
#[derive(Clone)]
struct SharedSettings {
    store: StoreOpener,
    schedule: InternedScheduleLabel,
}

impl Plugin for SharedSettings {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.store.clone())
            .insert_resource(KeepsakeSchedule(self.schedule));
    }
}

impl KeepsakePlugins {
    /// Saves under the platform's data directory for `game_id` (see
    /// [`default_save_root`](crate::store::default_save_root)), profile `default`, 10 manual
    /// slots, 5 autosaves and 3 backups, systems in `PreUpdate`; each member with its defaults.
    pub fn new(game_id: impl Into<String>) -> Self {
        KeepsakePlugins {
            shared: SharedSettings {
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
                schedule: PreUpdate.intern(),
            },
        }
    }

    /// Saves under `root` instead of the platform's data directory.
    #[must_use]
    pub fn save_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.shared.store.save_root = Some(root.into());
        self
    }

    /// Uses profile `name` (a folder under the save root; validated when the store opens).
    #[must_use]
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.shared.store.profile = name.into();
        self
    }

    /// How many older generations each slot keeps as backups. Default 3.
    #[must_use]
    pub fn backups(mut self, backups: u16) -> Self {
        self.shared.store.backups = backups;
        self
    }

    /// The largest save payload, uncompressed, that is written or read. Default 256 MiB.
    #[must_use]
    pub fn max_save_size(mut self, bytes: u32) -> Self {
        self.shared.store.encode.limits = Limits {
            max_payload_uncompressed: bytes,
            ..self.shared.store.encode.limits
        };
        self
    }

    /// How many manual and autosave slots there are. Default 10 and 5.
    #[must_use]
    pub fn slots(mut self, manual: u16, auto: u16) -> Self {
        self.shared.store.layout = SlotLayout { manual, auto };
        self
    }

    /// Whether payloads are LZ4-compressed. Default yes.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.shared.store.encode.compression = compression;
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
        self.shared.store.encode.seal = Sealing::Key(key);
        self
    }

    /// Whether a game that [`seal`](Self::seal)s its saves still loads (and imports through
    /// cloud sync) unsealed ones. Default [`UnsealedSaves::Refuse`]; choose
    /// [`UnsealedSaves::Accept`] when turning sealing on in a released game, so its players'
    /// existing saves keep loading (each slot's next save is sealed).
    #[must_use]
    pub fn unsealed_saves(mut self, unsealed: UnsealedSaves) -> Self {
        self.shared.store.unsealed = unsealed;
        self
    }

    /// Sends every filesystem call through `filesystem` (for tests: counting, fault injection).
    #[must_use]
    pub fn filesystem(mut self, filesystem: Arc<dyn FileSystem>) -> Self {
        self.shared.store.filesystem = filesystem;
        self
    }

    /// Runs the plugin's systems in `schedule` instead of `PreUpdate` (for games that drive
    /// their simulation from a schedule of their own). Saves capture and loads apply there.
    #[must_use]
    pub fn schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.shared.schedule = schedule.intern();
        self
    }
}

impl PluginGroup for KeepsakePlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(self.shared)
            .add(KeepsakeCorePlugin::default())
            .add(AutosavePlugin::default())
            .add(HotkeysPlugin::default())
            .add(ExitSavePlugin::default())
            .add(CrashSavePlugin::default())
            .add(RewindPlugin::default())
    }
}
