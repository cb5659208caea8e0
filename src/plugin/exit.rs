//! The last frame before the app exits, and autosaving when the window loses focus.
//!
//! On `AppExit` (which closing the primary window sends too), the plugin finishes its work in
//! that same frame, in `Last`, in Bevy's [`OnAppExitSystems`](bevy::app::OnAppExitSystems) set:
//! after the window exit systems ([`ExitSystems`](bevy::window::ExitSystems)), before winit
//! takes the windows down and before the runner acts on the exit. A game puts its last-moment
//! changes before the exit save with `.after(ExitSystems).before(OnAppExitSystems)`.
//!
//! It reads the requests sent this frame (so "save and quit" saves), adds the exit save if
//! [`KeepsakeSettings::save_on_exit`] is on, and runs every job until it is done or the wait is
//! over (`max_wait` of [`SaveOnExit::On`], or [`PENDING_WORK_WAIT`] without an exit save). Writes
//! are atomic, so giving up leaves the earlier saves intact.

use super::job::{Job, SaveReason, SaveTarget};
use super::requests::collect_requests;
use super::runner::{JobQueue, run_until_idle};
use super::settings::{KeepsakeSettings, SaveOnExit};
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowFocused};
use std::time::{Duration, Instant};

/// How long the last frame waits for saves, loads and deletes already requested when the app
/// exits without an exit save of its own.
pub const PENDING_WORK_WAIT: Duration = Duration::from_secs(2);

/// Finishes the plugin's work, and makes the exit save, when the app is about to exit.
pub(crate) fn finish_before_exit(
    world: &mut World,
    mut exits: Local<MessageCursor<AppExit>>,
    mut finished: Local<bool>,
) {
    let Some(messages) = world.get_resource::<Messages<AppExit>>() else {
        return;
    };
    let exiting = exits.read(messages).count() > 0;
    if !exiting || *finished {
        return;
    }
    *finished = true;
    collect_requests(world);
    let wait = queue_exit_save(world);
    if world.resource::<JobQueue>().is_idle() {
        return;
    }
    if !run_until_idle(world, Instant::now() + wait) {
        warn!(
            "keepsake: the app exits before its saves finished ({wait:?} waited); \
             the earlier saves are intact"
        );
    }
}

/// Queues the exit save, if it is on and no save of the same target waits already (that one
/// captures the world as it is now too); returns how long to wait.
fn queue_exit_save(world: &mut World) -> Duration {
    let SaveOnExit::On { target, max_wait } = world.resource::<KeepsakeSettings>().save_on_exit
    else {
        return PENDING_WORK_WAIT;
    };
    let mut queue = world.resource_mut::<JobQueue>();
    if !queue.has_waiting_save_to(target) {
        queue.enqueue(Job::Save {
            target,
            reason: SaveReason::Exit,
        });
    }
    max_wait
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
