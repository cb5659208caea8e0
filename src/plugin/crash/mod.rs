//! [`CrashSavePlugin`]: a crash of the game costs seconds, not progress.
//!
//! Every [`every`](CrashSavePlugin::every) of real time, at a frame boundary, the plugin
//! captures the world through the capture cache saves use (so only what changed since is
//! encoded on the main thread) and finishes it on the task pool into a **crash image**: a save
//! bundle held in memory. When the game panics (any system, any thread, with `panic = "abort"`
//! too) or receives SIGTERM, SIGINT or SIGHUP, the panic hook or the signal thread writes that
//! image durably, as an autosave, without touching the world that panicked. The save menu
//! labels it ("saved when the game crashed").
//!
//! **The bound:** a crash loses at most `every` plus the time one image takes to finish on the
//! pool (a few milliseconds at 10k entities), against the last autosave interval without it.
//!
//! - Nothing is written when the world is as it was at start, right after the last load (the
//!   title screen, a load and an immediate crash) or as the last save that landed left it, nor
//!   when that save is newer than the image: the image is compared with that baseline by its
//!   state hash (the saved world's, after a save), and an image captured no later than the
//!   save is dropped, so a crash save never pushes a real autosave out of the ring for nothing.
//! - A crash save never heads a slot over a save captured after its image (an autosave in
//!   flight at the crash, which took the slot's lock first): read under the lock, such a head
//!   holds all the image does, and nothing is written. A load during the write leaves nothing
//!   of the image armed, even if the write fails.
//! - A target without a slot in the store's layout (the ring, with no autosave slots) is
//!   warned about at startup, and no image is taken.
//! - The write starts before the panic's message is printed (the hook wraps the one installed
//!   before it), on a thread of its own that the hook waits for at most
//!   [`write_wait`](CrashSavePlugin::write_wait): a panic inside the write itself, a full disk
//!   or a save in flight never hang the dying game, and the write is the store's atomic one,
//!   so a failure leaves every earlier save as it was. A second panic while it is written
//!   waits for that write (under `panic = "abort"` its return would end the process); a second
//!   signal ends the process at once (the first one's write runs on a thread of its own).
//! - A panic the game survives (one caught with `catch_unwind`, a detached task's) writes the
//!   image too: the hook cannot tell. The written state becomes the baseline and protection
//!   goes on. The one panic the plugin catches itself (a load naming an asset type the app never
//!   initialised) writes nothing.
//! - After a signal the image is written first, then every app is sent `AppExit`, so the game's
//!   own exit path (the exit save, cloud uploads) runs as on a window close, after the crash
//!   save (the exit save lands as the newer). An app whose main loop does not get there within
//!   [`grace`](CrashSavePlugin::grace) (the first app's, for the process) is ended by the
//!   signal's default action; so is one that gets a second signal. A signal the process
//!   inherited as ignored (`nohup`) stays ignored.
//! - What it holds: one save bundle (the uncompressed payload of a save) in memory.
//! - The hooks are per process: in a process running several apps (tests), a panic writes the
//!   armed image of each.
//! - Not covered: a panic inside the store's own write of an autosave holds that slot's lock
//!   while the hook runs, so a crash save into the ring may wait out `write_wait` and give up.
//!   On Windows only the panic path exists (no SIGTERM or SIGHUP there; Bevy's Ctrl-C handler
//!   exits through `AppExit`).

mod hook;
mod image;

use super::core::schedule_of;
use super::exit::ExitWork;
use super::job::SaveTarget;
use super::settings::{KeepsakeSettings, Playtime, SaveTitle};
use super::store::KeepsakeStore;
use super::{KeepsakeSystems, LoadCompleted, SaveCompleted};
use crate::format::{SaveMeta, Timestamp};
use crate::plugin::pool::task_pool;
use bevy::app::OnAppExitSystems;
use bevy::diagnostic::FrameCount;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::tasks::Task;
use image::{CrashImage, Ready};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Writes the game's newest state as an autosave when the game panics or is told to stop (see
/// [when the game crashes](crate::_guide::exit_saves)). A member of [`KeepsakePlugins`](super::KeepsakePlugins), on by default;
/// `.set(CrashSavePlugin { every: .., ..default() })` changes it, `.disable::<CrashSavePlugin>()`
/// turns it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashSavePlugin {
    /// Real time between two images; what a crash loses at most (plus one image's finishing on
    /// the pool). Default 5 s: at 10k entities with a tenth changing, one capture is under a
    /// millisecond of the frame it lands in (`benches/frame_time.rs`).
    pub every: Duration,
    /// Where the crash save goes. Default the autosave ring.
    pub target: SaveTarget,
    /// How long the panic hook or signal thread waits for the write. Default 5 s.
    pub write_wait: Duration,
    /// How long, after a signal, the app has to exit through `AppExit` before it is ended.
    /// Default 5 s.
    pub grace: Duration,
}

impl Default for CrashSavePlugin {
    fn default() -> Self {
        CrashSavePlugin {
            every: Duration::from_secs(5),
            target: SaveTarget::AutosaveRing,
            write_wait: Duration::from_secs(5),
            grace: Duration::from_secs(5),
        }
    }
}

/// This app's crash image, shared with the process-wide hooks.
#[derive(Resource, Clone)]
struct CrashImageHandle(Arc<CrashImage>);

/// When the next image is due, and the one being finished on the pool (one at a time, so
/// images are offered in the order they were captured).
#[derive(Resource)]
struct CrashImageTimer {
    every: Duration,
    since: Duration,
    finishing: Option<Task<()>>,
}

impl Plugin for CrashSavePlugin {
    fn build(&self, app: &mut App) {
        let schedule = schedule_of(app, "CrashSavePlugin");
        let image = Arc::new(CrashImage::new(self.target, self.write_wait));
        app.insert_resource(CrashImageHandle(image))
            .insert_resource(CrashImageTimer {
                every: self.every,
                // The first frame takes the baseline.
                since: self.every,
                finishing: None,
            })
            .add_systems(
                PreStartup,
                hand_store_to_image.after(super::store::open_store),
            )
            .add_systems(First, exit_on_signal)
            .add_systems(
                Last,
                close_at_exit.in_set(OnAppExitSystems).before(ExitWork),
            )
            .add_systems(
                schedule,
                keep_image
                    .in_set(KeepsakeSystems::Jobs)
                    .run_if(resource_exists::<CrashImageTimer>),
            )
            .add_observer(follow_saves)
            .add_observer(follow_loads);
    }

    /// The hooks go in once every plugin is built, so the panic hook wraps the one Bevy's
    /// plugins installed (a hook a game sets later, without calling the one it replaces,
    /// turns the crash save's panic path off).
    fn finish(&self, app: &mut App) {
        let image = &app.world().resource::<CrashImageHandle>().0;
        hook::register(image, self.grace);
    }
}

/// Gives the image the store. A target the store has no slot for (the autosave ring of a
/// game without autosave slots) could never be written: that is said now, and no image is
/// taken (they would cost a capture every `every` for nothing).
fn hand_store_to_image(
    mut commands: Commands,
    store: Res<KeepsakeStore>,
    image: Res<CrashImageHandle>,
) {
    let Ok(store) = store.get() else {
        return;
    };
    if let Err(error) = image.0.set_store(Arc::clone(store)) {
        warn!(
            "keepsake: no crash save: its target has no slot ({error}); give the game \
             autosave slots, or set CrashSavePlugin::target to a slot it has, or disable \
             CrashSavePlugin"
        );
        commands.remove_resource::<CrashImageTimer>();
    }
}

/// A save that lands is the world a crash then loses nothing of: its state is the baseline,
/// and it disarms an image it is newer than.
fn follow_saves(saved: On<SaveCompleted>, image: Res<CrashImageHandle>) {
    image.0.saved_at(saved.meta.game_tick, saved.state_hash);
}

/// After a load lands, the world is a save's again: the next image is its baseline, and it is
/// taken at once. A rewind is part of playing: what was armed before it stays armed.
fn follow_loads(
    _: On<LoadCompleted>,
    image: Res<CrashImageHandle>,
    frames: Option<Res<FrameCount>>,
    timer: Option<ResMut<CrashImageTimer>>,
) {
    image
        .0
        .rebase(frames.map_or(0, |frames| u64::from(frames.0)));
    if let Some(mut timer) = timer {
        timer.since = timer.every;
    }
}

/// As the app exits: waits for a crash save a signal started (so the exit save lands after
/// it, as the newer), then closes the image: the exit save holds what it would.
fn close_at_exit(world: &mut World, mut exits: Local<MessageCursor<AppExit>>) {
    let Some(messages) = world.get_resource::<Messages<AppExit>>() else {
        return;
    };
    if exits.read(messages).count() == 0 {
        return;
    }
    let image = &world.resource::<CrashImageHandle>().0;
    image.wait_for_writer();
    image.close();
}

/// Takes an image when one is due and none is being finished.
fn keep_image(world: &mut World) {
    let delta = world.resource::<Time<Real>>().delta();
    let mut timer = world.resource_mut::<CrashImageTimer>();
    timer.since += delta;
    if let Some(task) = &timer.finishing {
        if !task.is_finished() {
            return;
        }
        timer.finishing = None;
    }
    if timer.since < timer.every {
        return;
    }
    timer.since = Duration::ZERO;
    let task = start_image(world);
    world.resource_mut::<CrashImageTimer>().finishing = task;
}

/// Captures the world and finishes the image on the pool; `None` when the capture failed (the
/// next save reports why).
fn start_image(world: &mut World) -> Option<Task<()>> {
    let _span = info_span!("keepsake::crash_image").entered();
    let pending = super::capture::capture(world).ok()?;
    let meta = image_meta(world);
    let tick = meta.game_tick;
    let image = Arc::clone(&world.resource::<CrashImageHandle>().0);
    let (captured, epoch) = (Instant::now(), image.epoch());
    Some(task_pool().spawn(async move {
        let bundle = pending.finish().into_bundle(tick);
        image.offer(Ready {
            bundle,
            meta,
            captured,
            epoch,
        });
    }))
}

/// The metadata a crash save of the world as it is now carries (the slot is set when written).
fn image_meta(world: &World) -> SaveMeta {
    let settings = world.resource::<KeepsakeSettings>();
    let mut meta =
        SaveMeta::new(crate::SlotId::Auto(0)).with_title(&world.resource::<SaveTitle>().0);
    meta.created_at = Timestamp::now();
    meta.playtime = world.resource::<Playtime>().0;
    meta.game_tick = world
        .get_resource::<FrameCount>()
        .map_or(0, |frames| u64::from(frames.0));
    meta.game_version = settings.game_version.clone();
    meta.extras = settings.save_extras.clone();
    meta
}

/// Sends `AppExit` once a signal asked the process to stop and its image is written.
fn exit_on_signal(mut exits: MessageWriter<AppExit>, mut sent: Local<bool>) {
    if let Some(code) = hook::signal_saved().filter(|_| !*sent) {
        *sent = true;
        exits.write(AppExit::from_code(code));
    }
}

/// Whether this app's crash image is armed: a panic or a signal now would write it. For tests
/// and diagnostics.
pub fn crash_image_armed(world: &World) -> bool {
    world
        .get_resource::<CrashImageHandle>()
        .is_some_and(|image| image.0.is_armed())
}
