//! Running an app until something happened: frames counted, real time only while the plugin's
//! work runs in the background.

use crate::plugin::KeepsakeStatus;
use bevy::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long one wait lets the plugin's background work run (a save's write, a load's read, a
/// rewind being prepared, the slots' listing, cloud sync) before it fails, naming what it waited for.
pub const BACKGROUND_WAIT: Duration = Duration::from_secs(30);

/// Runs `app` one frame at a time until it triggers an `E` (the plugin's results are observer
/// events: `SaveCompleted`, `LoadCompleted`, …), and returns the first one triggered after the
/// call. The observer it adds for the wait is removed before it returns.
///
/// `max_frames` bounds the frames run while none of the plugin's work is in the background;
/// frames run while it is (a save being written, a load being read, a rewind being prepared, the
/// slots' listing, cloud sync) are bounded by [`BACKGROUND_WAIT`] of real time instead, so a slow
/// disk or a busy machine does not fail the wait, and a result that never comes fails it promptly.
///
/// # Panics
///
/// When no `E` came within those bounds, naming `E`.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::testing::run_until;
///
/// #[derive(Event, Clone)]
/// struct Ping(u32);
///
/// let mut app = App::new();
/// app.add_systems(Update, |mut commands: Commands, mut frame: Local<u32>| {
///     *frame += 1;
///     if *frame == 3 {
///         commands.trigger(Ping(*frame));
///     }
/// });
/// let ping: Ping = run_until(&mut app, 5);
/// assert_eq!(ping.0, 3);
/// ```
#[track_caller]
pub fn run_until<E: Event + Clone>(app: &mut App, max_frames: u32) -> E {
    let seen: Arc<Mutex<Option<E>>> = Arc::default();
    let keep = Arc::clone(&seen);
    let observer = (app.world_mut())
        .add_observer(move |event: On<E>| {
            keep.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| event.event().clone());
        })
        .id();
    let found = |_: &World| seen.lock().is_ok_and(|seen| seen.is_some());
    update_until(app, &format!("a {}", type_name::<E>()), max_frames, found);
    app.world_mut().despawn(observer);
    let event = seen.lock().unwrap_or_else(PoisonError::into_inner).take();
    event.expect("update_until returns once the event came")
}

/// Runs `app` one frame at a time until `done` holds for its world (checked before each frame,
/// so it runs no frame when `done` holds already).
///
/// `max_frames` bounds the frames run while none of the plugin's work is in the background;
/// frames run while it is are bounded by [`BACKGROUND_WAIT`] of real time (see
/// [`run_until`]). While work runs in the background the wait sleeps a millisecond between
/// frames, so the save thread (of low priority) gets a core.
///
/// # Panics
///
/// When `done` did not hold within those bounds, with a message naming `what`.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::testing::update_until;
///
/// #[derive(Resource, Default)]
/// struct Frames(u32);
///
/// let mut app = App::new();
/// app.init_resource::<Frames>()
///     .add_systems(Update, |mut frames: ResMut<Frames>| frames.0 += 1);
/// update_until(&mut app, "the fourth frame", 10, |world| {
///     world.resource::<Frames>().0 == 4
/// });
/// ```
#[track_caller]
pub fn update_until(
    app: &mut App,
    what: &str,
    max_frames: u32,
    mut done: impl FnMut(&World) -> bool,
) {
    let started = Instant::now();
    let mut frames = 0;
    while !done(app.world()) {
        match background_work(app.world()) {
            Some(work) => {
                let waited = started.elapsed();
                assert!(
                    waited < BACKGROUND_WAIT,
                    "timed out waiting for {what}: {work} still running after {waited:.1?}"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            None => {
                assert!(
                    frames < max_frames,
                    "{what} did not happen within {max_frames} frames"
                );
                frames += 1;
            }
        }
        app.update();
    }
}

/// The plugin's work running in the background now, in words, if any.
fn background_work(world: &World) -> Option<&'static str> {
    let status = world.get_resource::<KeepsakeStatus>();
    if status.is_some_and(|status| !status.running.is_empty()) {
        return Some("a save, load or delete");
    }
    if crate::plugin::rewind_in_flight(world) {
        return Some("a rewind");
    }
    let listing = world.get_resource::<crate::plugin::ListingRefresh>();
    if listing.is_some_and(|listing| listing.is_busy()) {
        return Some("the slots' listing");
    }
    cloud_round(world)
}

/// Cloud sync at work: its first round after start, or this session's saves not yet known to
/// be uploaded.
#[cfg(feature = "cloud")]
fn cloud_round(world: &World) -> Option<&'static str> {
    let status = world.get_resource::<crate::cloud::CloudStatus>()?;
    let session = world.get_resource::<crate::cloud::SessionSaves>()?;
    let running = status.stopped.is_none() && (status.rounds == 0 || !session.all_confirmed());
    running.then_some("cloud sync")
}

#[cfg(not(feature = "cloud"))]
fn cloud_round(_: &World) -> Option<&'static str> {
    None
}

/// `T`'s path without its modules (`SaveCompleted`, not `bevy_keepsake::plugin::…`).
fn type_name<T>() -> String {
    bevy::utils::prelude::ShortName::of::<T>().to_string()
}
