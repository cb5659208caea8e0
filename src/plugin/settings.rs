//! The core member's settings that can change while the game runs, the game-provided text
//! saved with a save, and play time.

use super::pool::SavePriority;
use crate::snapshot::LoadMode;
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
    /// [`LoadMode::InPlace`].
    pub load_mode: LoadMode,
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
