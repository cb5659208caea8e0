//! [`ExitSavePlugin`]: the save made when the app exits (see [`super::exit`] for the last
//! frame's path, which finishes the plugin's work whether or not this member is there).

use super::core::schedule_of;
use super::exit::{ExitSaveWait, ExitWork};
use super::job::{Job, SaveReason};
use super::requests::collect_requests;
use super::runner::JobQueue;
use super::settings::{KeepsakeSettings, SaveOnExit};
use bevy::app::OnAppExitSystems;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::window::ExitSystems;

/// Saves when the app is about to exit, if [`KeepsakeSettings::save_on_exit`] is on. A member
/// of [`KeepsakePlugins`](super::KeepsakePlugins); without it the setting does nothing, and
/// work already asked still finishes before the app exits.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExitSavePlugin;

impl Plugin for ExitSavePlugin {
    fn build(&self, app: &mut App) {
        // The core's resources must be there (its exit path is the one this feeds).
        schedule_of(app, "ExitSavePlugin");
        app.add_systems(
            Last,
            queue_exit_save
                .in_set(OnAppExitSystems)
                .after(ExitSystems)
                .before(ExitWork),
        );
    }
}

/// Queues the exit save, if it is on and no save of the same target waits already (that one
/// captures the world as it is now too), and leaves its wait for the exit path. The frame's
/// requests are read first, so "save and quit" is that one save.
fn queue_exit_save(
    world: &mut World,
    mut exits: Local<MessageCursor<AppExit>>,
    mut done: Local<bool>,
) {
    let Some(messages) = world.get_resource::<Messages<AppExit>>() else {
        return;
    };
    if exits.read(messages).count() == 0 || *done {
        return;
    }
    *done = true;
    let SaveOnExit::On { target, max_wait } = world.resource::<KeepsakeSettings>().save_on_exit
    else {
        return;
    };
    collect_requests(world);
    let mut queue = world.resource_mut::<JobQueue>();
    if !queue.has_waiting_save_to(target) {
        queue.enqueue(Job::Save {
            target,
            reason: SaveReason::Exit,
        });
    }
    world.insert_resource(ExitSaveWait(max_wait));
}
