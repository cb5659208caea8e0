//! Settings that can change while the game runs, and the game-provided text saved with a save.

use bevy::prelude::*;
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
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct KeepsakeSettings {
    /// Play time between autosaves (`Duration::ZERO`: no timed autosaves).
    pub autosave_every: Duration,
    /// The quicksave key (`None`: disabled).
    pub quicksave_key: Option<KeyCode>,
    /// The quickload key (`None`: disabled).
    pub quickload_key: Option<KeyCode>,
    /// Stored in each save's metadata, for diagnosing old saves.
    pub game_version: String,
}

impl Default for KeepsakeSettings {
    fn default() -> Self {
        KeepsakeSettings {
            autosave_every: Duration::from_secs(60),
            quicksave_key: Some(KeyCode::F5),
            quickload_key: Some(KeyCode::F9),
            game_version: String::new(),
        }
    }
}

/// The title/location text stored with the next save and shown in the save menu, e.g.
/// "Harbour — Level 3". Set it whenever it changes.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveTitle(pub String);

/// Total time played (virtual time, so it stops while the game is paused). Stored in each save
/// and restored by a load.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Playtime(pub Duration);
