//! Saving when the app is about to exit, and autosaving when the window loses focus.
//!
//! The exit save runs in `Last`, after Bevy's window exit systems: an `AppExit` sent by the game,
//! or by closing the primary window, is seen in the frame it was sent, and the runner only
//! checks for it once that frame is over. The save is captured and written then and there, and
//! the frame waits for the durable write (at most [`SaveOnExit::On::max_wait`]), so the app
//! closes with the save on disk.

use super::job::{Job, SaveReason, SaveTarget};
use super::jobs::{JobQueue, save_now};
use super::settings::{KeepsakeSettings, SaveOnExit};
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowFocused};

/// Saves once, when the app is about to exit and [`KeepsakeSettings::save_on_exit`] is on.
pub(crate) fn save_before_exit(
    world: &mut World,
    mut exits: Local<MessageCursor<AppExit>>,
    mut saved: Local<bool>,
) {
    let Some(messages) = world.get_resource::<Messages<AppExit>>() else {
        return;
    };
    let exiting = exits.read(messages).count() > 0;
    if !exiting || *saved {
        return;
    }
    let SaveOnExit::On { target, max_wait } = world.resource::<KeepsakeSettings>().save_on_exit
    else {
        return;
    };
    *saved = true;
    save_now(world, target, SaveReason::Exit, max_wait);
}

/// Queues an autosave when the primary window loses focus, if
/// [`KeepsakeSettings::autosave_on_focus_loss`] is on (and no save is already under way).
pub(crate) fn autosave_on_focus_loss(
    mut focus: MessageReader<WindowFocused>,
    primary: Query<(), With<PrimaryWindow>>,
    settings: Res<KeepsakeSettings>,
    mut queue: ResMut<JobQueue>,
) {
    let lost = focus
        .read()
        .any(|event| !event.focused && primary.contains(event.window));
    if lost && settings.autosave_on_focus_loss && !queue.has_save() {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}
