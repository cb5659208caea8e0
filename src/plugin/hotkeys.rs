//! [`HotkeysPlugin`]: quicksave and quickload keys.

use super::core::{KeepsakeSystems, schedule_of};
use super::job::{Job, SaveTarget};
use super::runner::JobQueue;
use super::settings::KeepsakeSettings;
use crate::SlotId;
use bevy::input::InputSystems;
use bevy::prelude::*;

/// Quicksave on [`KeepsakeSettings::quicksave_key`] (F5) and quickload on
/// [`KeepsakeSettings::quickload_key`] (F9). A member of
/// [`KeepsakePlugins`](super::KeepsakePlugins); disable it for a game that binds its own keys
/// (and sends [`SaveRequest`](super::SaveRequest)s).
#[derive(Clone, Copy, Debug, Default)]
pub struct HotkeysPlugin;

impl Plugin for HotkeysPlugin {
    fn build(&self, app: &mut App) {
        // The core's resources must be there, whatever schedule it runs in.
        schedule_of(app, "HotkeysPlugin");
        // Always `PreUpdate`, where `just_pressed` is true exactly once per press, whichever
        // schedule the rest of the plugin runs in.
        app.add_systems(
            PreUpdate,
            hotkeys
                .after(InputSystems)
                .before(KeepsakeSystems::Requests),
        );
    }
}

/// Queues a quicksave or a quickload for the keys pressed this frame.
fn hotkeys(
    keys: Option<Res<ButtonInput<KeyCode>>>,
    settings: Res<KeepsakeSettings>,
    mut queue: ResMut<JobQueue>,
) {
    let Some(keys) = keys else {
        return; // no input plugin (headless)
    };
    let pressed = |key: Option<KeyCode>| key.is_some_and(|key| keys.just_pressed(key));
    if pressed(settings.quicksave_key) {
        queue.enqueue(Job::save(SaveTarget::Slot(SlotId::Quick)));
    }
    if pressed(settings.quickload_key) {
        queue.enqueue(Job::Load(SlotId::Quick));
    }
}
