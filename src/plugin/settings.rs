//! Settings that can change while the game runs, and the game-provided text saved with a save.

use super::job::SaveTarget;
use super::pool::SavePriority;
use bevy::prelude::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// Runtime settings of the plugin; change them at any time.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::KeepsakeSettings;
/// use std::time::Duration;
///
/// fn disable_autosave_in_menus(mut settings: ResMut<KeepsakeSettings>) {
///     settings.autosave_every = Duration::ZERO;
/// }
/// # let _ = disable_autosave_in_menus;
/// ```
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource, Clone, Debug, PartialEq, Default)]
pub struct KeepsakeSettings {
    /// Play time between autosaves (`Duration::ZERO`: no timed autosaves).
    pub autosave_every: Duration,
    /// The quicksave key (`None`: disabled).
    pub quicksave_key: Option<KeyCode>,
    /// The quickload key (`None`: disabled).
    pub quickload_key: Option<KeyCode>,
    /// Stored in each save's metadata, for diagnosing old saves.
    pub game_version: String,
    /// Whether the app saves when it is about to exit. Default [`SaveOnExit::Off`]: turn it on
    /// once a play session is under way, so quitting from the title screen does not push a real
    /// autosave out of the ring with an empty world.
    pub save_on_exit: SaveOnExit,
    /// Whether an autosave is made when the primary window loses focus (alt-tab, a laptop lid, a
    /// handheld's suspend button). Default no.
    pub autosave_on_focus_loss: bool,
    /// Key/value pairs written into every save's [`SaveMeta::extras`](crate::format::SaveMeta)
    /// (cloud sync records the device here; games can add their own).
    pub save_extras: BTreeMap<String, String>,
    /// The priority of the thread that encodes, compresses and writes each save. Default
    /// [`SavePriority::Low`]: below the game's threads (`SCHED_IDLE` on Linux, below normal on
    /// Windows), so a save never takes a core from the frame. A save made as the app exits
    /// always runs at normal priority: nothing is left to wait for but the save.
    pub save_priority: SavePriority,
    /// How loads and rewinds change the saved entities already in the world. Default
    /// [`LoadApply::InPlace`].
    pub load_apply: LoadApply,
}

/// How a load or a rewind changes the saved entities already in the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq, Hash)]
pub enum LoadApply {
    /// Keep the saved entities still alive (a rewind, or a load of a save this session wrote
    /// or loaded): only the values that differ are written, the types that differ inserted or
    /// removed, the rest spawned or despawned. Entity ids of kept entities do not change;
    /// observers see only what changed (`Changed<T>` for a rewritten value, `On<Add>` and
    /// `On<Remove>` only for what was added or removed: see
    /// [`apply_in_place`](crate::snapshot::apply_in_place)). A save from another session spawns
    /// everything, as [`Respawn`](Self::Respawn) does.
    #[default]
    InPlace,
    /// Despawn every saved entity and spawn the save's again, at every load and rewind: every
    /// saved entity gets a new id and `On<Add>` observers see every saved component again.
    /// For games whose observers rebuild state when a saved entity appears.
    Respawn,
}

/// Whether, and where, the app saves when it is about to exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub enum SaveOnExit {
    /// No save on exit.
    Off,
    /// On `AppExit` (which closing the primary window sends too), capture the world and write it
    /// to `target`; the app closes once the save is durable, or after `max_wait` with a warning
    /// (the previous saves are intact either way: writes are atomic). With cloud sync
    /// (`CloudPlugin`, feature `cloud`) the same `max_wait` also covers uploading the saves of
    /// this session, the exit save included.
    On {
        /// Where the save goes.
        target: SaveTarget,
        /// The longest the last frame waits, from the start of the exit, for the write (and
        /// with cloud sync for the uploads).
        max_wait: Duration,
    },
}

impl SaveOnExit {
    /// Into the autosave ring, waiting at most 2 s.
    pub const AUTOSAVE: SaveOnExit = SaveOnExit::On {
        target: SaveTarget::AutosaveRing,
        max_wait: Duration::from_secs(2),
    };
}

impl Default for KeepsakeSettings {
    fn default() -> Self {
        KeepsakeSettings {
            autosave_every: Duration::from_secs(60),
            quicksave_key: Some(KeyCode::F5),
            quickload_key: Some(KeyCode::F9),
            game_version: String::new(),
            save_on_exit: SaveOnExit::Off,
            autosave_on_focus_loss: false,
            save_extras: BTreeMap::new(),
            save_priority: SavePriority::Low,
            load_apply: LoadApply::InPlace,
        }
    }
}

/// The title/location text stored with the next save and shown in the save menu, e.g.
/// "Harbour — Level 3". Set it whenever it changes.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct SaveTitle(pub String);

/// Total time played (virtual time, so it stops while the game is paused). Stored in each save
/// and restored by a load.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct Playtime(pub Duration);

/// Play time since the last timed autosave (or load). The plugin advances it with virtual time
/// and autosaves into the ring when it reaches [`KeepsakeSettings::autosave_every`]; a load
/// starts it over. A game can read it (a "next autosave in 20 s" hint) or
/// [`reset`](Self::reset) it, for instance after the player saved by hand.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
///
/// fn no_autosave_right_after_a_manual_save(
///     mut saved: MessageReader<SaveCompleted>,
///     mut timer: ResMut<AutosaveTimer>,
/// ) {
///     if saved.read().any(|save| save.reason == SaveReason::Manual) {
///         timer.reset();
///     }
/// }
/// # let _ = no_autosave_right_after_a_manual_save;
/// ```
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct AutosaveTimer {
    elapsed: Duration,
}

impl AutosaveTimer {
    /// Play time since the last timed autosave (or the last reset).
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Play time left until the next timed autosave (`None`: timed autosaves are off).
    pub fn remaining(&self, settings: &KeepsakeSettings) -> Option<Duration> {
        (!settings.autosave_every.is_zero())
            .then(|| settings.autosave_every.saturating_sub(self.elapsed))
    }

    /// Starts counting again from zero.
    pub fn reset(&mut self) {
        self.elapsed = Duration::ZERO;
    }

    /// Advances by `delta`; returns whether a timed autosave is due (and starts over if so).
    /// With `every` zero, timed autosaves are off and the timer stays at zero.
    pub(crate) fn tick(&mut self, delta: Duration, every: Duration) -> bool {
        self.elapsed += delta;
        let due = !every.is_zero() && self.elapsed >= every;
        if due || every.is_zero() {
            self.reset();
        }
        due
    }
}
