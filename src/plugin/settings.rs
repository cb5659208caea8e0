//! The core member's settings that can change while the game runs, the game-provided text
//! saved with a save, and play time.

use super::pool::SavePriority;
use bevy::prelude::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// The core member's settings while the game runs: what every save carries besides the world,
/// how it is written and how loads apply. [`KeepsakeCorePlugin`](super::KeepsakeCorePlugin)'s
/// fields are their starting values; change them at any time.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::KeepsakeSettings;
///
/// fn note_the_mod_list(mut settings: ResMut<KeepsakeSettings>) {
///     settings.save_extras.insert("mods".into(), "hd-textures".into());
/// }
/// # let _ = note_the_mod_list;
/// ```
#[derive(Resource, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Resource, Clone, Debug, PartialEq, Default)]
pub struct KeepsakeSettings {
    /// Stored in each save's metadata, for diagnosing old saves.
    pub game_version: String,
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
