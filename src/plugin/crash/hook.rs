//! The process-wide paths a crash takes: the panic hook and the signal thread. Both are
//! installed once per process and write the crash image of every app alive in it (a game has
//! one; a test binary may have many).

use super::image::{Begun, CrashImage, WriteFailure, WriteOutcome, in_crash_write};
use crate::format::CrashCause;
use crate::snapshot::assets::panic_is_caught_here;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError, TryLockError, Weak};
use std::time::{Duration, Instant};

/// The crash images of the apps alive in this process.
static IMAGES: Mutex<Vec<Weak<CrashImage>>> = Mutex::new(Vec::new());

/// The exit status a signal asked for (0: none yet); a second signal ends the process at once.
static STOP_SIGNAL: AtomicU8 = AtomicU8::new(0);

/// Set once the images were written after a signal: each app's
/// [`super::exit_on_signal`] then sends `AppExit` (not before: the exit must not end the
/// process while the crash save is being written).
static SIGNAL_SAVED: AtomicBool = AtomicBool::new(false);

/// Adds `image` to those the hooks write, installing the hooks the first time (with the first
/// app's `grace`: the signal path is one per process).
pub(super) fn register(image: &Arc<CrashImage>, grace: Duration) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        install_panic_hook();
        signals::install(grace);
    });
    let mut images = IMAGES.lock().unwrap_or_else(PoisonError::into_inner);
    images.retain(|image| image.strong_count() > 0);
    images.push(Arc::downgrade(image));
}

/// Chains a hook around the one installed now (the default message, or Bevy's): the writes
/// start first (so a crash reporter that exits or blocks in the earlier hook cannot stop
/// them), then the earlier hook prints the panic's message, then the hook waits for the writes.
/// With `panic = "abort"` the hook runs too, before the abort, so the same path covers both.
/// A panic a load catches on purpose (an asset type never initialised) writes nothing, nor
/// does one inside the crash save's own write (which catches it).
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if panic_is_caught_here() || in_crash_write() {
            previous(info);
            return;
        }
        let begun = begin_all(CrashCause::Panic);
        previous(info);
        finish_all(begun, CrashCause::Panic);
    }));
}

/// The images of the apps alive now. The registry's lock is held only to add an image, so it
/// is waited for, but at most [`REGISTRY_WAIT`]: a panic on the thread holding it (while it
/// registers an app) must not wait on itself.
fn live_images() -> Vec<Arc<CrashImage>> {
    let upgrade = |images: &Vec<Weak<CrashImage>>| -> Vec<Arc<CrashImage>> {
        images.iter().filter_map(Weak::upgrade).collect()
    };
    let deadline = Instant::now() + REGISTRY_WAIT;
    loop {
        match IMAGES.try_lock() {
            Ok(images) => return upgrade(&images),
            Err(TryLockError::Poisoned(images)) => return upgrade(&images.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(TryLockError::WouldBlock) => return Vec::new(),
        }
    }
}

/// How long a hook waits for the registry of images (see [`live_images`]).
const REGISTRY_WAIT: Duration = Duration::from_millis(500);

/// Starts writing every armed image of the process.
fn begin_all(cause: CrashCause) -> Vec<(Arc<CrashImage>, Begun)> {
    live_images()
        .into_iter()
        .map(|image| {
            let begun = image.begin(cause);
            (image, begun)
        })
        .collect()
}

/// Waits for the writes [`begin_all`] started and says on stderr what became of each (the log
/// may be gone with the app).
fn finish_all(begun: Vec<(Arc<CrashImage>, Begun)>, cause: CrashCause) {
    for (image, begun) in begun {
        match image.finish(begun) {
            WriteOutcome::Nothing => {}
            WriteOutcome::Written(receipt, age) => eprintln!(
                "keepsake: {} — the game's state of {:.1} s before was saved to {} ({})",
                cause.label(),
                age.as_secs_f64(),
                receipt.slot,
                receipt.path.display()
            ),
            WriteOutcome::Superseded(head) => eprintln!(
                "keepsake: {} — {} holds a save newer than the game's state in memory; \
                 nothing more to save",
                cause.label(),
                head.slot
            ),
            WriteOutcome::Failed(WriteFailure::Store(error)) => {
                eprintln!("keepsake: the crash save failed ({error}); earlier saves are intact")
            }
            WriteOutcome::Failed(WriteFailure::Panicked) => {
                eprintln!("keepsake: the crash save's write panicked; earlier saves are intact")
            }
            WriteOutcome::GaveUp => eprintln!(
                "keepsake: the crash save did not finish in time; earlier saves are intact"
            ),
        }
    }
}

/// Whether the images were written after a signal, so the apps should exit now.
pub(super) fn signal_saved() -> Option<u8> {
    SIGNAL_SAVED
        .load(Ordering::SeqCst)
        .then(|| STOP_SIGNAL.load(Ordering::SeqCst))
}

#[cfg(unix)]
mod signals {
    //! SIGTERM, SIGINT and SIGHUP: a thread waits for them (nothing runs inside the signal
    //! handler but signal-hook's own async-signal-safe wake-up), writes every armed image, then
    //! asks every app to exit through `AppExit`, so the game's own exit path (the exit save,
    //! cloud uploads) runs as on a window close. An app that does not exit within the grace
    //! period (its main loop hung) is ended by the signal's default action, as it would have
    //! been without us; so is one that gets a second signal. A signal the process inherited as
    //! ignored (`nohup`, a background job) stays ignored.

    use super::{SIGNAL_SAVED, STOP_SIGNAL, begin_all, finish_all};
    use crate::format::CrashCause;
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    use signal_hook::low_level::emulate_default_handler;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    pub(super) fn install(grace: Duration) {
        let wanted: Vec<i32> = [SIGTERM, SIGINT, SIGHUP]
            .into_iter()
            .filter(|&signal| !ignored(signal))
            .collect();
        let mut signals = match Signals::new(&wanted) {
            Ok(signals) => signals,
            Err(error) => {
                bevy::log::warn!("keepsake: no crash save on signals ({error})");
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("keepsake signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    on_signal(signal, grace);
                }
            });
        if let Err(error) = spawned {
            bevy::log::warn!("keepsake: no crash save on signals ({error})");
        }
    }

    /// Whether `signal` is ignored now (inherited as `SIG_IGN`).
    fn ignored(signal: i32) -> bool {
        // SAFETY: sigaction with a null new action only reads the current one into `current`,
        // a zeroed, properly aligned `libc::sigaction` this function owns.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                && current.sa_sigaction == libc::SIG_IGN
        }
    }

    /// The first signal's saves are written on a thread of their own, so this thread is free
    /// to end the process at once on a second signal (writes are atomic: earlier saves stay
    /// intact).
    fn on_signal(signal: i32, grace: Duration) {
        let code = (128 + signal) as u8;
        let first = STOP_SIGNAL
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if !first {
            end_now(signal);
        }
        let spawned = std::thread::Builder::new()
            .name("keepsake signal save".into())
            .spawn(move || save_then_exit(signal, grace));
        if spawned.is_err() {
            save_then_exit(signal, grace);
        }
    }

    /// Writes every armed image, then lets the apps exit, with a watchdog for those that do
    /// not.
    fn save_then_exit(signal: i32, grace: Duration) {
        let begun = begin_all(CrashCause::Signal);
        finish_all(begun, CrashCause::Signal);
        SIGNAL_SAVED.store(true, Ordering::SeqCst);
        // The apps see the flag at their next frame; one that never gets there is ended.
        let _watchdog = std::thread::Builder::new()
            .name("keepsake exit watchdog".into())
            .spawn(move || {
                std::thread::sleep(grace);
                eprintln!("keepsake: the game did not exit {grace:?} after signal {signal}");
                end_now(signal);
            });
    }

    /// Ends the process as the signal would have without a handler.
    fn end_now(signal: i32) {
        if emulate_default_handler(signal).is_err() {
            std::process::exit(128 + signal);
        }
    }
}

#[cfg(not(unix))]
mod signals {
    //! No signal path here: Windows sends no SIGTERM or SIGHUP, and Bevy's own Ctrl-C handler
    //! exits through `AppExit` (and the exit save). Panics are covered by the panic hook.
    pub(super) fn install(_grace: std::time::Duration) {}
}
