//! The crash image: the newest consistent state of one app, captured at a frame boundary and
//! finished on the pool, held where a panic hook or the signal thread can write it without
//! touching the world.

use crate::format::{CrashCause, SaveBundle, SaveMeta};
use crate::plugin::job::SaveTarget;
use crate::store::{SaveReceipt, SlotStore, StoreError};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

thread_local! {
    /// Set on the thread that writes a crash save: a panic there is the write's own, which the
    /// write catches, and the hook must not try to write again from it.
    static IN_CRASH_WRITE: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is writing a crash save.
pub(crate) fn in_crash_write() -> bool {
    IN_CRASH_WRITE.get()
}

/// One app's crash image and where it goes. Shared between the app (which keeps it up to date)
/// and the process-wide hooks (which write it), through [`super::hook`]'s registry.
pub(crate) struct CrashImage {
    target: SaveTarget,
    /// How long a hook waits for the write before it gives up (the process is dying: a write
    /// that blocks on a lock the crashed thread held must not hang it).
    write_wait: Duration,
    /// Bumped by every load: an image captured before it is of a world the load replaced.
    epoch: AtomicU64,
    state: Mutex<ImageState>,
    /// Woken when a write ends, for hooks that found one under way.
    written: Condvar,
    /// How often a hook found the state's lock held (tests: a hook waits for it).
    #[cfg(test)]
    hook_waited: AtomicU64,
}

/// How long a hook waits for the image's state lock. Everyone else holds it only to look at or
/// swap the state (images are dropped outside it), so it comes free at once unless the thread
/// holding it is the one that crashed.
const HOOK_LOCK_WAIT: Duration = Duration::from_millis(500);

/// Where the image stands. A state, not a set of options: only `Armed` is written.
enum ImageState {
    /// No store yet (before `PreStartup`), or it could not be opened: nothing can be written.
    NoStore,
    /// The state hash of the world the player has not changed since (at start, right after a
    /// load, or what a save or the crash save wrote since): a crash now loses nothing.
    Clean {
        store: Arc<SlotStore>,
        baseline: Option<u64>,
    },
    /// A world the player changed since its baseline, ready to be written.
    Armed {
        store: Arc<SlotStore>,
        baseline: u64,
        image: Box<Ready>,
    },
    /// A hook is writing it; other hooks wait for that write rather than start one.
    Writing,
    /// The app has exited (its exit path ran): nothing more is written for it.
    Closed,
}

/// A finished image: the bundle and the metadata a save of it carries (its slot is set when
/// it is written), when it was captured and in which epoch.
pub(crate) struct Ready {
    pub(crate) bundle: SaveBundle,
    pub(crate) meta: SaveMeta,
    pub(crate) captured: Instant,
    pub(crate) epoch: u64,
}

/// A hook's write, started: wait for it with [`CrashImage::finish`].
pub(crate) enum Begun {
    /// Nothing to write: no change since the baseline, no image yet, or the app has exited.
    Nothing,
    /// Another hook (a second panic, a signal) is writing the image.
    OtherWriting,
    /// This hook's write, on its thread, and how old the image is.
    Started(mpsc::Receiver<Result<SaveReceipt, WriteFailure>>, Duration),
}

/// Why a write did not land.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    /// The store refused or failed it.
    Store(StoreError),
    /// The write itself panicked (a second panic, inside the crash save).
    Panicked,
}

/// What a hook's write came to, for its one line on stderr.
#[derive(Debug)]
pub(crate) enum WriteOutcome {
    /// Nothing to write, or another hook wrote it.
    Nothing,
    /// Written durably, from an image this old.
    Written(Box<SaveReceipt>, Duration),
    /// The store refused or failed the write, or it panicked; every earlier save is as it was.
    Failed(WriteFailure),
    /// The write did not finish within the wait (or its thread died); writes are atomic, so
    /// earlier saves are intact.
    GaveUp,
}

impl CrashImage {
    pub(crate) fn new(target: SaveTarget, write_wait: Duration) -> Self {
        CrashImage {
            target,
            write_wait,
            epoch: AtomicU64::new(0),
            state: Mutex::new(ImageState::NoStore),
            written: Condvar::new(),
            #[cfg(test)]
            hook_waited: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ImageState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state's lock for a hook, waiting for it at most [`HOOK_LOCK_WAIT`].
    fn lock_for_hook(&self) -> Option<MutexGuard<'_, ImageState>> {
        let deadline = Instant::now() + HOOK_LOCK_WAIT;
        loop {
            match self.state.try_lock() {
                Ok(state) => return Some(state),
                Err(TryLockError::Poisoned(poisoned)) => return Some(poisoned.into_inner()),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    #[cfg(test)]
                    self.hook_waited.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TryLockError::WouldBlock) => return None,
            }
        }
    }

    /// The epoch an image captured now belongs to.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The store is open: images can be written from now on.
    pub(crate) fn set_store(&self, store: Arc<SlotStore>) {
        *self.lock() = ImageState::Clean {
            store,
            baseline: None,
        };
    }

    /// A new image of the world. The first of an epoch (after start or a load) becomes the
    /// baseline; a later one arms the image only when its state differs from the baseline. An
    /// image from an epoch a load has ended is dropped.
    pub(crate) fn offer(&self, ready: Ready) {
        if ready.epoch != self.epoch() {
            return;
        }
        let hash = ready.bundle.world.state_hash;
        let mut state = self.lock();
        let (store, baseline) = match &*state {
            ImageState::Clean { store, baseline } => (Arc::clone(store), *baseline),
            ImageState::Armed {
                store, baseline, ..
            } => (Arc::clone(store), Some(*baseline)),
            ImageState::NoStore | ImageState::Writing | ImageState::Closed => return,
        };
        let new = match baseline {
            Some(base) if base != hash => ImageState::Armed {
                store,
                baseline: base,
                image: Box::new(ready),
            },
            _ => ImageState::Clean {
                store,
                baseline: Some(baseline.unwrap_or(hash)),
            },
        };
        let replaced = std::mem::replace(&mut *state, new);
        drop(state);
        // An image replaced is dropped once the lock is free (a large world takes a while to
        // free): a hook never waits on a drop.
        drop(replaced);
    }

    /// The world was just loaded: the next image is its new baseline, what was armed is dropped
    /// (it belongs to the timeline the load left), and so is any image captured before.
    pub(crate) fn rebase(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        let mut state = self.lock();
        let store = match &*state {
            ImageState::Clean { store, .. } | ImageState::Armed { store, .. } => Arc::clone(store),
            // Nothing to write yet, being written, or exited: as it was.
            ImageState::NoStore | ImageState::Writing | ImageState::Closed => return,
        };
        let clean = ImageState::Clean {
            store,
            baseline: None,
        };
        let replaced = std::mem::replace(&mut *state, clean);
        drop(state);
        drop(replaced);
    }

    /// A save of the world at game tick `tick` is durable: an image taken at or before that
    /// tick holds nothing the save lacks, so it is disarmed (its state becomes the baseline).
    pub(crate) fn saved_at(&self, tick: u64) {
        let mut state = self.lock();
        let ImageState::Armed { store, image, .. } = &*state else {
            return;
        };
        if image.meta.game_tick > tick {
            return;
        }
        let clean = ImageState::Clean {
            store: Arc::clone(store),
            baseline: Some(image.bundle.world.state_hash),
        };
        let replaced = std::mem::replace(&mut *state, clean);
        drop(state);
        drop(replaced);
    }

    /// The app has exited: its exit save (if any) holds what the image would.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        if !matches!(*state, ImageState::Writing) {
            *state = ImageState::Closed;
        }
    }

    /// Whether an image is armed (a crash now would write it).
    pub(crate) fn is_armed(&self) -> bool {
        matches!(*self.lock(), ImageState::Armed { .. })
    }

    /// Starts writing the armed image for `cause` on a thread of its own: the thread that
    /// crashed may hold locks the store needs, and a panic inside the write must not reach the
    /// hook that called it. Waits for the state's lock only [`HOOK_LOCK_WAIT`]: it is held
    /// for moments by the app and the pool, but a hook may run on the thread that holds it (a
    /// panic inside [`Self::offer`]), and must then write nothing rather than hang.
    pub(crate) fn begin(self: &Arc<Self>, cause: CrashCause) -> Begun {
        let Some(mut state) = self.lock_for_hook() else {
            return Begun::Nothing;
        };
        let (store, baseline, image) = match std::mem::replace(&mut *state, ImageState::Writing) {
            ImageState::Armed {
                store,
                baseline,
                image,
            } => (store, baseline, image),
            ImageState::Writing => return Begun::OtherWriting,
            other => {
                *state = other;
                return Begun::Nothing;
            }
        };
        drop(state);
        let age = image.captured.elapsed();
        let (sender, receiver) = mpsc::channel();
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("keepsake crash save".into())
            .spawn(move || {
                IN_CRASH_WRITE.set(true);
                let result = this.write(store, baseline, *image, cause);
                let _ = sender.send(result);
            });
        match spawned {
            Ok(_) => Begun::Started(receiver, age),
            Err(_) => Begun::Nothing,
        }
    }

    /// The write itself; afterwards the written state is the baseline (the game may go on, if
    /// the panic was caught), or, when it failed, the image is armed again for a later crash.
    fn write(
        &self,
        store: Arc<SlotStore>,
        baseline: u64,
        image: Ready,
        cause: CrashCause,
    ) -> Result<SaveReceipt, WriteFailure> {
        // A panic here (a bug, a filesystem layer that panics) must not leave the image
        // `Writing` for good: caught, it counts as a failed write.
        let write = || write_image(&store, self.target, &image, cause);
        let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(write)) {
            Ok(result) => result.map_err(WriteFailure::Store),
            Err(_) => Err(WriteFailure::Panicked),
        };
        let mut state = self.lock();
        if matches!(*state, ImageState::Writing) {
            *state = match &result {
                Ok(_) => ImageState::Clean {
                    store,
                    baseline: Some(image.bundle.world.state_hash),
                },
                Err(_) => ImageState::Armed {
                    store,
                    baseline,
                    image: Box::new(image),
                },
            };
        }
        self.written.notify_all();
        result
    }

    /// Waits, at most the write wait, for what [`Self::begin`] started.
    pub(crate) fn finish(&self, begun: Begun) -> WriteOutcome {
        match begun {
            Begun::Nothing => WriteOutcome::Nothing,
            Begun::OtherWriting => {
                self.wait_for_writer();
                WriteOutcome::Nothing
            }
            Begun::Started(receiver, age) => match receiver.recv_timeout(self.write_wait) {
                Ok(Ok(receipt)) => WriteOutcome::Written(Box::new(receipt), age),
                Ok(Err(failure)) => WriteOutcome::Failed(failure),
                Err(RecvTimeoutError::Disconnected) => WriteOutcome::Failed(WriteFailure::Panicked),
                Err(RecvTimeoutError::Timeout) => WriteOutcome::GaveUp,
            },
        }
    }

    /// Waits, at most the write wait, while a hook writes the image: the app's exit path, and a
    /// second panic whose process may abort when its hook returns.
    pub(crate) fn wait_for_writer(&self) {
        let state = self.lock();
        let _ = self
            .written
            .wait_timeout_while(state, self.write_wait, |state| {
                matches!(state, ImageState::Writing)
            });
    }
}

/// The durable write of one image, into its target (the autosave ring picks its slot now).
fn write_image(
    store: &SlotStore,
    target: SaveTarget,
    image: &Ready,
    cause: CrashCause,
) -> Result<SaveReceipt, StoreError> {
    let slot = match target {
        SaveTarget::Slot(slot) => slot,
        SaveTarget::AutosaveRing => store.next_autosave_slot()?,
    };
    store.save(slot, image.meta.clone().with_crash(cause), &image.bundle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotId;
    use crate::format::WorldState;
    use crate::store::StoreConfig;

    fn store(dir: &std::path::Path) -> Arc<SlotStore> {
        Arc::new(SlotStore::open(StoreConfig::new(dir)).unwrap())
    }

    /// An image of a world whose state hashes to `hash`, taken at game tick `tick`.
    fn ready(image: &CrashImage, hash: u64, tick: u64) -> Ready {
        let mut meta = SaveMeta::new(SlotId::Auto(0)).with_title(format!("state {hash}"));
        meta.game_tick = tick;
        Ready {
            bundle: SaveBundle::new(WorldState {
                tick,
                ecs_blob: vec![hash as u8; 16],
                state_hash: hash,
            }),
            meta,
            captured: Instant::now(),
            epoch: image.epoch(),
        }
    }

    fn armed_image(dir: &std::path::Path) -> Arc<CrashImage> {
        let image = Arc::new(CrashImage::new(
            SaveTarget::AutosaveRing,
            Duration::from_secs(5),
        ));
        image.set_store(store(dir));
        image.offer(ready(&image, 1, 1));
        image.offer(ready(&image, 2, 2));
        assert!(image.is_armed());
        image
    }

    fn write(image: &Arc<CrashImage>) -> WriteOutcome {
        let begun = image.begin(CrashCause::Panic);
        image.finish(begun)
    }

    #[test]
    fn the_first_image_is_the_baseline_and_only_a_change_arms() {
        let dir = tempfile::tempdir().unwrap();
        let image = CrashImage::new(SaveTarget::AutosaveRing, Duration::from_secs(5));
        image.offer(ready(&image, 1, 1));
        assert!(!image.is_armed(), "no store yet: nothing can be written");
        image.set_store(store(dir.path()));
        image.offer(ready(&image, 1, 1));
        assert!(!image.is_armed(), "the world at start is the baseline");
        image.offer(ready(&image, 1, 2));
        assert!(
            !image.is_armed(),
            "the same state later is still the baseline"
        );
        image.offer(ready(&image, 2, 3));
        assert!(image.is_armed());
        image.offer(ready(&image, 1, 4));
        assert!(!image.is_armed(), "back to the baseline: nothing to lose");
    }

    #[test]
    fn a_load_drops_the_armed_image_and_images_captured_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        let before_load = ready(&image, 3, 3);
        image.rebase();
        assert!(!image.is_armed());
        image.offer(before_load);
        image.offer(ready(&image, 4, 4));
        assert!(
            !image.is_armed(),
            "the first image after the load is its baseline"
        );
        image.offer(ready(&image, 5, 5));
        assert!(image.is_armed());
    }

    #[test]
    fn a_newer_save_disarms_and_an_older_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        image.saved_at(1);
        assert!(
            image.is_armed(),
            "a save older than the image leaves it armed"
        );
        image.saved_at(2);
        assert!(
            !image.is_armed(),
            "a save at the image's tick holds all it holds"
        );
        image.offer(ready(&image, 2, 3));
        assert!(!image.is_armed(), "the saved state is the baseline now");
    }

    #[test]
    fn a_crash_writes_the_image_once_as_a_crash_save_and_protection_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        let WriteOutcome::Written(receipt, _) = write(&image) else {
            panic!("the armed image is written");
        };
        let loaded = store(dir.path()).load(receipt.slot).unwrap();
        assert_eq!(loaded.meta.crash(), Some(CrashCause::Panic));
        assert_eq!(loaded.meta.title, "state 2");
        assert_eq!(loaded.bundle.world.state_hash, 2);
        assert!(
            matches!(write(&image), WriteOutcome::Nothing),
            "written once"
        );
        image.offer(ready(&image, 2, 3));
        assert!(!image.is_armed(), "what was written is the baseline");
        image.offer(ready(&image, 3, 4));
        assert!(image.is_armed(), "a caught panic leaves the game protected");
    }

    #[test]
    fn a_failed_write_arms_the_image_again() {
        let dir = tempfile::tempdir().unwrap();
        let image = Arc::new(CrashImage::new(
            SaveTarget::Slot(SlotId::Manual(99)),
            Duration::from_secs(5),
        ));
        image.set_store(store(dir.path()));
        image.offer(ready(&image, 1, 1));
        image.offer(ready(&image, 2, 2));
        assert!(matches!(
            write(&image),
            WriteOutcome::Failed(WriteFailure::Store(_))
        ));
        assert!(image.is_armed(), "a later crash tries again");
    }

    #[test]
    fn an_exited_app_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        image.close();
        assert!(matches!(write(&image), WriteOutcome::Nothing));
        assert_eq!(
            store(dir.path())
                .list()
                .unwrap()
                .iter()
                .filter(|e| e.shown_save().is_some())
                .count(),
            0
        );
    }

    /// A hook that finds the state's lock held by another thread (the app offering an image,
    /// a pool thread) waits for it and writes, rather than writing nothing.
    #[test]
    fn a_hook_waits_for_the_lock_another_thread_holds() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        let held = image.lock();
        let hook = {
            let image = Arc::clone(&image);
            std::thread::spawn(move || write(&image))
        };
        while image.hook_waited.load(Ordering::SeqCst) == 0 && !hook.is_finished() {
            std::thread::yield_now();
        }
        drop(held);
        let outcome = hook.join().unwrap();
        assert!(matches!(outcome, WriteOutcome::Written(..)), "{outcome:?}");
    }

    /// A hook on the thread that holds the lock (a panic while offering an image) gives up
    /// after its wait and writes nothing: it must not hang the dying process.
    #[test]
    fn a_hook_on_the_thread_holding_the_lock_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        let held = image.lock();
        assert!(matches!(write(&image), WriteOutcome::Nothing));
        drop(held);
        assert!(image.is_armed(), "the image is left for a later crash");
    }
}
