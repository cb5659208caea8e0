//! [`HotkeysPlugin`]: quicksave and quickload keys.

use super::core::{KeepsakeSystems, schedule_of};
use super::job::{Job, SaveTarget};
use super::runner::JobQueue;
use crate::SlotId;
use bevy::input::InputSystems;
use bevy::prelude::*;

/// Quicksave on [`quicksave`](Self::quicksave) (F5) and quickload on
/// [`quickload`](Self::quickload) (F9). A member of [`KeepsakePlugins`](super::KeepsakePlugins),
/// on by default; a game that binds its own keys (or lets players rebind them) disables it and
/// sends [`SaveRequest`](super::SaveRequest)s and [`LoadRequest`](super::LoadRequest)s.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
///
/// let keepsake = KeepsakePlugins::new("my-game").set(HotkeysPlugin {
///     quicksave: KeyCode::F6,
///     quickload: KeyCode::F10,
/// });
/// # let _ = keepsake;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotkeysPlugin {
    /// The keyboard key that quicksaves (into [`SlotId::Quick`]). Default F5.
    pub quicksave: KeyCode,
    /// The keyboard key that loads the quicksave. Default F9.
    pub quickload: KeyCode,
}

impl Default for HotkeysPlugin {
    fn default() -> Self {
        HotkeysPlugin {
            quicksave: KeyCode::F5,
            quickload: KeyCode::F9,
        }
    }
}

impl Plugin for HotkeysPlugin {
    fn build(&self, app: &mut App) {
        // The core's resources must be there, whatever schedule it runs in.
        schedule_of(app, "HotkeysPlugin");
        let keys = *self;
        // Always `PreUpdate`, where `just_pressed` is true exactly once per press, whichever
        // schedule the rest of the plugin runs in.
        app.add_systems(
            PreUpdate,
            (move |input: Option<Res<ButtonInput<KeyCode>>>, queue: ResMut<JobQueue>| {
                hotkeys(keys, input, queue);
            })
            .after(InputSystems)
            .before(KeepsakeSystems::Requests),
        );
    }
}

/// Queues a quicksave or a quickload for the keys pressed this frame.
fn hotkeys(
    keys: HotkeysPlugin,
    input: Option<Res<ButtonInput<KeyCode>>>,
    mut queue: ResMut<JobQueue>,
) {
    let Some(input) = input else {
        return; // no input plugin (headless)
    };
    if input.just_pressed(keys.quicksave) {
        queue.enqueue(Job::save(SaveTarget::Slot(SlotId::Quick)));
    }
    if input.just_pressed(keys.quickload) {
        queue.enqueue(Job::Load(SlotId::Quick));
    }
}
