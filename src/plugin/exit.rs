//! The last frame before the app exits.
//!
//! On `AppExit` (which closing the primary window sends too), the plugin finishes its work in
//! that same frame, in `Last`, in Bevy's [`OnAppExitSystems`](bevy::app::OnAppExitSystems) set:
//! after the window exit systems ([`ExitSystems`](bevy::window::ExitSystems)), before winit
//! takes the windows down and before the runner acts on the exit. A game puts its last-moment
//! changes before the exit save with `.after(ExitSystems).before(OnAppExitSystems)`.
//!
//! It reads the requests sent this frame (so "save and quit" saves), takes the exit save
//! [`ExitSavePlugin`](super::ExitSavePlugin) queued just before it (if
//! [`SaveOnExit`](super::SaveOnExit) is on), and runs every job until it is done or the wait is
//! over (`max_wait` of [`SaveOnExit::On`](super::SaveOnExit::On), or [`PENDING_WORK_WAIT`]
//! without an exit save). Writes are atomic, so giving up leaves the earlier saves intact.
//!
//! The wait is measured from the start of the exit and shared: it leaves [`ExitDeadline`] for
//! the work ordered after [`ExitWork`] in the same frame (the cloud plugin's uploads of this
//! session's saves), so the app never waits longer than the one `max_wait` in all.

use super::requests::collect_requests;
use super::runner::{JobQueue, run_until_idle};
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use std::time::{Duration, Instant};

/// How long the last frame waits for saves, loads and deletes already requested when the app
/// exits without an exit save of its own.
pub const PENDING_WORK_WAIT: Duration = Duration::from_secs(2);

/// When the exit's wait ends: left by [`finish_before_exit`] for the work that runs after it in
/// the same frame, which shares the wait.
#[derive(Resource, Clone, Copy, Debug)]
#[cfg_attr(
    not(feature = "cloud"),
    expect(dead_code, reason = "only the cloud plugin's exit work reads it")
)]
pub(crate) struct ExitDeadline(pub(crate) Instant);

/// How long the exit save ([`ExitSavePlugin`](super::ExitSavePlugin)) lets the last frame wait,
/// left for [`finish_before_exit`] when it queued one.
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct ExitSaveWait(pub(crate) Duration);

/// The plugin's exit work, in `Last` inside [`OnAppExitSystems`](bevy::app::OnAppExitSystems):
/// work on the saves it makes (cloud uploads) is ordered after it.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ExitWork;

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
    let started = Instant::now();
    collect_requests(world);
    let wait = world
        .remove_resource::<ExitSaveWait>()
        .map_or(PENDING_WORK_WAIT, |wait| wait.0);
    world.insert_resource(ExitDeadline(started + wait));
    if world.resource::<JobQueue>().is_idle() {
        return;
    }
    if !run_until_idle(world, started + wait) {
        warn!(
            "keepsake: the app exits before its saves finished ({wait:?} waited); \
             the earlier saves are intact"
        );
    }
}
