//! [`ExitSavePlugin`]: the save made when the app exits (see [`super::exit`] for the last
//! frame's path, which finishes the plugin's work whether or not this member is there).

use super::core::schedule_of;
use super::exit::{ExitSaveWait, ExitWork};
use super::job::{Job, SaveReason, SaveTarget};
use super::requests::collect_requests;
use super::runner::JobQueue;
use bevy::app::OnAppExitSystems;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::window::ExitSystems;
use std::time::Duration;

/// The save made when the app is about to exit, armed by [`SaveOnExit`]. A member of
/// [`KeepsakePlugins`](super::KeepsakePlugins), on by default; without it
/// (`.disable::<ExitSavePlugin>()`) there is no exit save, and work already asked still
/// finishes before the app exits.
///
/// The exit save is off until the game arms it ([`save_on_exit`](Self::save_on_exit) gives
/// the starting value of the [`SaveOnExit`] resource): a game turns it on once a play session
/// is under way, so quitting from a title screen does not push a real autosave out of the ring
/// with an empty world. A game with no title screen arms it from the start:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
///
/// let keepsake = KeepsakePlugins::new("my-game").set(ExitSavePlugin {
///     save_on_exit: SaveOnExit::AUTOSAVE,
/// });
/// # let _ = keepsake;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExitSavePlugin {
    /// Whether, and where, the app saves when it exits, until the game changes the
    /// [`SaveOnExit`] resource. Default [`SaveOnExit::Off`].
    pub save_on_exit: SaveOnExit,
}

impl Plugin for ExitSavePlugin {
    fn build(&self, app: &mut App) {
        // The core's resources must be there (its exit path is the one this feeds).
        schedule_of(app, "ExitSavePlugin");
        app.insert_resource(self.save_on_exit)
            .register_type::<SaveOnExit>()
            .add_systems(
                Last,
                queue_exit_save
                    .in_set(OnAppExitSystems)
                    .after(ExitSystems)
                    .before(ExitWork),
            );
    }
}

/// Whether, and where, the app saves when it is about to exit: a resource while
/// [`ExitSavePlugin`] is there, changeable at any time.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
///
/// // Armed once a play session is under way (here: when the level starts).
/// fn start_game(mut save_on_exit: ResMut<SaveOnExit>) {
///     *save_on_exit = SaveOnExit::AUTOSAVE; // an autosave in the last frame, at most 2 s
/// }
/// # let _ = start_game;
/// ```
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub enum SaveOnExit {
    /// No save on exit (the default).
    #[default]
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
    let SaveOnExit::On { target, max_wait } = *world.resource::<SaveOnExit>() else {
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
