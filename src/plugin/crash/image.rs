//! The crash image: the newest consistent state of one app, captured at a frame boundary and
//! finished on the pool, held where a panic hook or the signal thread can write it without
//! touching the world.

use crate::format::{CrashCause, SaveBundle, SaveMeta};
use crate::plugin::job::SaveTarget;
use crate::store::{SaveOrSuperseded, SaveReceipt, SlotStore, StoreError};
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
    shared: Mutex<Shared>,
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

/// What the image's lock guards: its state, and the game ticks that order images against the
/// saves and loads of the app.
struct Shared {
    state: ImageState,
    /// The game tick of the newest save of the current world that landed: an image captured
    /// at or before it (finished late on the pool) holds nothing that save lacks.
    saved_tick: Option<u64>,
    /// The game tick at which the last load landed: a save captured at or before it is of the
    /// world the load replaced, and says nothing of the world now.
    loaded_tick: Option<u64>,
}

/// A save that landed: the game tick it was captured at and its world's state hash.
#[derive(Clone, Copy, Debug)]
struct SavedWorld {
    tick: u64,
    hash: u64,
}

/// Where the image stands. A state, not a set of options: only `Armed` is written.
enum ImageState {
    /// No store yet (before `PreStartup`), or it could not be opened, or the target has no
    /// slot: nothing can be written.
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
    /// A hook is writing it; other hooks wait for that write rather than start one. A save
    /// of the current world that lands meanwhile is kept here for the writer to settle with
    /// (a load clears it and bumps the epoch: the writer then sees the world was replaced).
    Writing { saved: Option<SavedWorld> },
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
    Started(
        mpsc::Receiver<Result<SaveOrSuperseded, WriteFailure>>,
        Duration,
    ),
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
    /// Not written: the slot's newest save (an autosave in flight at the crash, which took the
    /// slot's lock first) was captured after the image and holds everything it holds.
    Superseded(Box<SaveMeta>),
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
            shared: Mutex::new(Shared {
                state: ImageState::NoStore,
                saved_tick: None,
                loaded_tick: None,
            }),
            written: Condvar::new(),
            #[cfg(test)]
            hook_waited: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state's lock for a hook, waiting for it at most [`HOOK_LOCK_WAIT`].
    fn lock_for_hook(&self) -> Option<MutexGuard<'_, Shared>> {
        let deadline = Instant::now() + HOOK_LOCK_WAIT;
        loop {
            match self.shared.try_lock() {
                Ok(shared) => return Some(shared),
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

    /// The store is open: images can be written from now on, if the target has a slot in it.
    /// A target without one (the autosave ring of a store without autosave slots) refuses
    /// every crash save: the image stays without a store and nothing is written.
    pub(crate) fn set_store(&self, store: Arc<SlotStore>) -> Result<(), StoreError> {
        let layout = store.config().layout;
        let slot = match self.target {
            SaveTarget::Slot(slot) => slot,
            SaveTarget::AutosaveRing => crate::SlotId::Auto(0),
        };
        if !layout.contains(slot) {
            return Err(StoreError::NoSuchSlot {
                slot,
                manual: layout.manual,
                auto: layout.auto,
            });
        }
        self.lock().state = ImageState::Clean {
            store,
            baseline: None,
        };
        Ok(())
    }

    /// A new image of the world. The first of an epoch (after start or a load) becomes the
    /// baseline; a later one arms the image only when its state differs from the baseline. An
    /// image from an epoch a load has ended is dropped, and so is one captured no later than
    /// a save that landed (finished on the pool after the save, it holds nothing it lacks).
    pub(crate) fn offer(&self, ready: Ready) {
        if ready.epoch != self.epoch() {
            return;
        }
        let hash = ready.bundle.world.state_hash;
        let mut shared = self.lock();
        if shared
            .saved_tick
            .is_some_and(|saved| ready.meta.game_tick <= saved)
        {
            drop(shared);
            return;
        }
        let (store, baseline) = match &shared.state {
            ImageState::Clean { store, baseline } => (Arc::clone(store), *baseline),
            ImageState::Armed {
                store, baseline, ..
            } => (Arc::clone(store), Some(*baseline)),
            ImageState::NoStore | ImageState::Writing { .. } | ImageState::Closed => return,
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
        let replaced = std::mem::replace(&mut shared.state, new);
        drop(shared);
        // An image replaced is dropped once the lock is free (a large world takes a while to
        // free): a hook never waits on a drop.
        drop(replaced);
    }

    /// The world was just loaded, at game tick `tick`: the next image is its new baseline,
    /// what was armed is dropped (it belongs to the timeline the load left), and so is any
    /// image captured before. A write under way learns of it from the epoch when it ends.
    pub(crate) fn rebase(&self, tick: u64) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        let mut shared = self.lock();
        shared.loaded_tick = Some(tick);
        shared.saved_tick = None;
        let store = match &mut shared.state {
            ImageState::Clean { store, .. } | ImageState::Armed { store, .. } => Arc::clone(store),
            // A save that landed during the write was of the world the load replaced.
            ImageState::Writing { saved } => {
                *saved = None;
                return;
            }
            // Nothing to write yet, or exited: as it was.
            ImageState::NoStore | ImageState::Closed => return,
        };
        let clean = ImageState::Clean {
            store,
            baseline: None,
        };
        let replaced = std::mem::replace(&mut shared.state, clean);
        drop(shared);
        drop(replaced);
    }

    /// A save of the world at game tick `tick`, whose state hashes to `hash`, is durable. The
    /// saved world is the baseline from now on (a crash loses nothing while the world stays
    /// as saved), an image taken at or before `tick` is disarmed (it holds nothing the save
    /// lacks) and one finished later is dropped. A save captured before the last load, or
    /// before a newer save that landed first, changes nothing.
    pub(crate) fn saved_at(&self, tick: u64, hash: u64) {
        let mut shared = self.lock();
        let stale = |newer: Option<u64>, at_or_before: bool| {
            newer.is_some_and(|newer| tick < newer || (at_or_before && tick == newer))
        };
        if stale(shared.loaded_tick, true) || stale(shared.saved_tick, false) {
            return;
        }
        shared.saved_tick = Some(tick);
        let covered = match &mut shared.state {
            ImageState::Clean { baseline, .. } => {
                *baseline = Some(hash);
                false
            }
            ImageState::Armed {
                baseline, image, ..
            } => {
                *baseline = hash;
                image.meta.game_tick <= tick || image.bundle.world.state_hash == hash
            }
            ImageState::Writing { saved } => {
                *saved = Some(SavedWorld { tick, hash });
                false
            }
            ImageState::NoStore | ImageState::Closed => false,
        };
        let replaced = covered.then(|| disarm(&mut shared.state, hash)).flatten();
        drop(shared);
        drop(replaced);
    }

    /// The app has exited: its exit save (if any) holds what the image would.
    pub(crate) fn close(&self) {
        let mut shared = self.lock();
        if !matches!(shared.state, ImageState::Writing { .. }) {
            shared.state = ImageState::Closed;
        }
    }

    /// Whether an image is armed (a crash now would write it).
    pub(crate) fn is_armed(&self) -> bool {
        matches!(self.lock().state, ImageState::Armed { .. })
    }

    /// Starts writing the armed image for `cause` on a thread of its own: the thread that
    /// crashed may hold locks the store needs, and a panic inside the write must not reach the
    /// hook that called it. Waits for the state's lock only [`HOOK_LOCK_WAIT`]: it is held
    /// for moments by the app and the pool, but a hook may run on the thread that holds it (a
    /// panic inside [`Self::offer`]), and must then write nothing rather than hang.
    pub(crate) fn begin(self: &Arc<Self>, cause: CrashCause) -> Begun {
        let Some(mut shared) = self.lock_for_hook() else {
            return Begun::Nothing;
        };
        let writing = ImageState::Writing { saved: None };
        let (store, baseline, image) = match std::mem::replace(&mut shared.state, writing) {
            ImageState::Armed {
                store,
                baseline,
                image,
            } => (store, baseline, image),
            other @ ImageState::Writing { .. } => {
                shared.state = other;
                return Begun::OtherWriting;
            }
            other => {
                shared.state = other;
                return Begun::Nothing;
            }
        };
        drop(shared);
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

    /// The write itself; afterwards the state is settled by [`Self::settle`] (the game may go
    /// on, if the panic was caught).
    fn write(
        &self,
        store: Arc<SlotStore>,
        baseline: u64,
        image: Ready,
        cause: CrashCause,
    ) -> Result<SaveOrSuperseded, WriteFailure> {
        // A panic here (a bug, a filesystem layer that panics) must not leave the image
        // `Writing` for good: caught, it counts as a failed write.
        let write = || write_image(&store, self.target, &image, cause);
        let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(write)) {
            Ok(result) => result.map_err(WriteFailure::Store),
            Err(_) => Err(WriteFailure::Panicked),
        };
        let mut shared = self.lock();
        let dropped = match &shared.state {
            ImageState::Writing { saved } => {
                let saved = *saved;
                let (state, dropped) = self.settle(store, baseline, image, saved, result.is_ok());
                shared.state = state;
                dropped
            }
            _ => Some(image),
        };
        self.written.notify_all();
        drop(shared);
        drop(dropped);
        result
    }

    /// The state after a write of `image` (`landed`: written, or found superseded), and the
    /// image when it is not kept. A load during the write replaced the world the image is
    /// of: nothing of it is kept, and the next image (or a save since the load) is the
    /// baseline. A save at or after the image's tick that landed meanwhile holds all it holds:
    /// its world is the baseline. Otherwise a written image is the baseline, and a failed one
    /// is armed again for a later crash (against the newest save's world, if one landed).
    fn settle(
        &self,
        store: Arc<SlotStore>,
        baseline: u64,
        image: Ready,
        saved: Option<SavedWorld>,
        landed: bool,
    ) -> (ImageState, Option<Ready>) {
        let hash = image.bundle.world.state_hash;
        let clean = |store, baseline| ImageState::Clean { store, baseline };
        if image.epoch != self.epoch() {
            return (clean(store, saved.map(|s| s.hash)), Some(image));
        }
        if let Some(saved) = saved.filter(|s| s.tick >= image.meta.game_tick) {
            return (clean(store, Some(saved.hash)), Some(image));
        }
        let baseline = saved.map_or(baseline, |s| s.hash);
        if landed || baseline == hash {
            return (clean(store, Some(hash)), Some(image));
        }
        let armed = ImageState::Armed {
            store,
            baseline,
            image: Box::new(image),
        };
        (armed, None)
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
                Ok(Ok(SaveOrSuperseded::Saved(receipt))) => WriteOutcome::Written(receipt, age),
                Ok(Ok(SaveOrSuperseded::Superseded(head))) => WriteOutcome::Superseded(head),
                Ok(Err(failure)) => WriteOutcome::Failed(failure),
                Err(RecvTimeoutError::Disconnected) => WriteOutcome::Failed(WriteFailure::Panicked),
                Err(RecvTimeoutError::Timeout) => WriteOutcome::GaveUp,
            },
        }
    }

    /// Waits, at most the write wait, while a hook writes the image: the app's exit path, and a
    /// second panic whose process may abort when its hook returns.
    pub(crate) fn wait_for_writer(&self) {
        let shared = self.lock();
        let _ = self
            .written
            .wait_timeout_while(shared, self.write_wait, |shared| {
                matches!(shared.state, ImageState::Writing { .. })
            });
    }
}

/// `state`, if armed, made clean with `baseline`; returns what it replaced (to drop outside
/// the lock).
fn disarm(state: &mut ImageState, baseline: u64) -> Option<ImageState> {
    let ImageState::Armed { store, .. } = &*state else {
        return None;
    };
    let clean = ImageState::Clean {
        store: Arc::clone(store),
        baseline: Some(baseline),
    };
    Some(std::mem::replace(state, clean))
}

/// The durable write of one image, into its target (the autosave ring picks its slot now).
/// The slot's newest save, read under its lock, may be newer than the image: an autosave in
/// flight at the crash picked the same slot and took its lock first. The image must never
/// head the slot over it (the slot would load the older world), and that save holds all the
/// image holds, so nothing is written then.
fn write_image(
    store: &SlotStore,
    target: SaveTarget,
    image: &Ready,
    cause: CrashCause,
) -> Result<SaveOrSuperseded, StoreError> {
    let slot = match target {
        SaveTarget::Slot(slot) => slot,
        SaveTarget::AutosaveRing => store.next_autosave_slot()?,
    };
    let meta = image.meta.clone().with_crash(cause);
    store.save_unless_superseded(slot, meta, &image.bundle, |head| {
        supersedes(head, &image.meta)
    })
}

/// Whether `head`, a slot's newest save, was captured at or after the image whose metadata is
/// `image`: later by the game's tick and by the clock both. The tick alone orders the saves of
/// one run of the game (a save from an earlier run may carry any tick), the clock alone could
/// have been set back; a save of an earlier run is older by the clock and the image goes on
/// top of it.
fn supersedes(head: &SaveMeta, image: &SaveMeta) -> bool {
    head.game_tick >= image.game_tick && head.created_at >= image.created_at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotId;
    use crate::format::{Timestamp, WorldState};
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
        image.set_store(store(dir)).unwrap();
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
        image.set_store(store(dir.path())).unwrap();
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
        image.rebase(3);
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
        image.saved_at(1, 1);
        assert!(
            image.is_armed(),
            "a save older than the image leaves it armed"
        );
        image.saved_at(2, 2);
        assert!(
            !image.is_armed(),
            "a save at the image's tick holds all it holds"
        );
        image.offer(ready(&image, 2, 3));
        assert!(!image.is_armed(), "the saved state is the baseline now");
    }

    /// Finding 2 beside the app-level test: the saved world, not the armed image, is the
    /// baseline, also when no image was armed at the save.
    #[test]
    fn the_saved_world_is_the_baseline() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        image.saved_at(3, 3);
        image.offer(ready(&image, 3, 4));
        assert!(!image.is_armed(), "the world as saved: nothing to lose");
        image.saved_at(5, 5);
        image.offer(ready(&image, 5, 6));
        assert!(
            !image.is_armed(),
            "a save while clean moves the baseline too"
        );
        image.offer(ready(&image, 3, 7));
        assert!(image.is_armed(), "a change from the saved world arms");
    }

    /// Finding 3: an image captured before a save but finished on the pool after the save
    /// landed holds nothing the save lacks, whatever its state.
    #[test]
    fn an_image_finished_after_a_newer_save_does_not_arm() {
        let dir = tempfile::tempdir().unwrap();
        let image = CrashImage::new(SaveTarget::AutosaveRing, Duration::from_secs(5));
        image.set_store(store(dir.path())).unwrap();
        image.offer(ready(&image, 1, 1));
        let captured_before = ready(&image, 2, 5);
        image.saved_at(6, 3);
        image.offer(captured_before);
        assert!(!image.is_armed(), "an image older than the save arms");
        image.offer(ready(&image, 4, 7));
        assert!(image.is_armed(), "an image newer than the save arms");
    }

    /// A save captured before the last load, or before a newer save that landed first, is not
    /// the world now: it moves no baseline.
    #[test]
    fn a_save_older_than_a_load_or_a_newer_save_moves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let image = armed_image(dir.path());
        image.rebase(10);
        image.offer(ready(&image, 7, 11));
        image.saved_at(9, 2);
        image.offer(ready(&image, 7, 12));
        assert!(!image.is_armed(), "the loaded world is the baseline still");
        image.saved_at(20, 8);
        image.saved_at(15, 7);
        image.offer(ready(&image, 8, 21));
        assert!(!image.is_armed(), "the newest save's world is the baseline");
    }

    /// Finding 1 beside the app-level test: the slot's newest save, captured after the image
    /// (an autosave in flight that took the slot's lock first), keeps heading it; a save of an
    /// earlier run (older by the clock, whatever its tick) gets the image on top.
    #[test]
    fn a_newer_save_in_the_slot_keeps_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let slot = SlotId::Auto(0);
        let image = Arc::new(CrashImage::new(
            SaveTarget::Slot(slot),
            Duration::from_secs(5),
        ));
        let store = store(dir.path());
        image.set_store(Arc::clone(&store)).unwrap();
        image.offer(ready(&image, 1, 1));
        let armed = ready(&image, 2, 5);
        let (tick, created_at) = (armed.meta.game_tick, armed.meta.created_at);
        image.offer(armed);
        let save = |title: &str, tick: u64, created_at: Timestamp| {
            let mut meta = SaveMeta::new(slot).with_title(title);
            meta.game_tick = tick;
            meta.created_at = created_at;
            store
                .save(slot, meta, &ready(&image, 9, tick).bundle)
                .unwrap();
        };
        let a_minute_before = Timestamp::from_unix_millis(created_at.unix_millis() - 60_000);
        save("earlier run", tick + 100, a_minute_before);
        let WriteOutcome::Written(..) = write(&image) else {
            panic!("over a save of an earlier run, the image is written");
        };
        let armed = ready(&image, 3, 6);
        let (tick, created_at) = (armed.meta.game_tick, armed.meta.created_at);
        image.offer(armed);
        save("autosave in flight", tick + 1, created_at);
        let outcome = write(&image);
        assert!(
            matches!(outcome, WriteOutcome::Superseded(_)),
            "{outcome:?}"
        );
        let head = store.load(slot).unwrap();
        assert_eq!(head.meta.title, "autosave in flight");
        assert!(!image.is_armed(), "the newer save holds the image");
    }

    /// What can land while a crash save is written, for [`what_lands_during_a_write_settles_it`].
    #[derive(Clone, Copy, Debug)]
    enum During {
        Load,
        /// A save captured before the image (tick 1; the image is at tick 2), of state 7.
        OlderSave,
        /// A save captured after it, of state 8.
        NewerSave,
    }

    /// What the state should be after the write, by the rules in the guide: after a load
    /// nothing of the image is kept (the baseline is a save since the load, if any); a save
    /// at or after the image is the baseline; otherwise a written image is, and a failed one
    /// is armed against the newest save's world (or the baseline it had, state 1).
    fn expected(during: &[During], landed: bool) -> (bool, Option<u64>) {
        let (mut loaded, mut newest) = (false, None::<(u64, u64)>);
        for (at, event) in during.iter().enumerate() {
            let at = 10 + at as u64;
            match event {
                During::Load => (loaded, newest) = (true, None),
                During::OlderSave if !loaded && newest.is_none_or(|(tick, _)| tick <= 1) => {
                    newest = Some((1, 7));
                }
                During::OlderSave => {}
                During::NewerSave => newest = Some((at, 8)),
            }
        }
        match (loaded, newest) {
            (true, _) => (false, newest.map(|(_, hash)| hash)),
            (false, Some((tick, hash))) if tick >= 2 => (false, Some(hash)),
            _ if landed => (false, Some(2)),
            _ => (true, Some(newest.map_or(1, |(_, hash)| hash))),
        }
    }

    /// Finding 8 beside the app-level test, and every order of up to two of what can land
    /// while a crash save is written (a load, a save older or newer than the image), the
    /// write landing or failing: the writer settles as the rules say. Fails on a writer that
    /// re-arms whatever failed.
    #[test]
    fn what_lands_during_a_write_settles_it() {
        let all = [During::Load, During::OlderSave, During::NewerSave];
        let mut sequences = vec![vec![]];
        for first in all {
            sequences.push(vec![first]);
            sequences.extend(all.map(|second| vec![first, second]));
        }
        for during in &sequences {
            for landed in [true, false] {
                let dir = tempfile::tempdir().unwrap();
                let image = armed_image(dir.path());
                // As `begin` does: the writer holds the image, the state says `Writing`.
                let writing = ImageState::Writing { saved: None };
                let taken = std::mem::replace(&mut image.lock().state, writing);
                let ImageState::Armed {
                    store,
                    baseline,
                    image: ready,
                } = taken
                else {
                    panic!("armed_image arms it");
                };
                for (at, event) in during.iter().enumerate() {
                    let at = 10 + at as u64;
                    match event {
                        During::Load => image.rebase(at),
                        During::OlderSave => image.saved_at(1, 7),
                        During::NewerSave => image.saved_at(at, 8),
                    }
                }
                let ImageState::Writing { saved } = image.lock().state else {
                    panic!("only the writer leaves `Writing`");
                };
                let (state, _) = image.settle(store, baseline, *ready, saved, landed);
                let settled = match state {
                    ImageState::Armed { baseline, .. } => (true, Some(baseline)),
                    ImageState::Clean { baseline, .. } => (false, baseline),
                    _ => panic!("a write settles clean or armed"),
                };
                let case = format!("{during:?}, landed: {landed}");
                assert_eq!(settled, expected(during, landed), "{case}");
            }
        }
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
            SaveTarget::Slot(SlotId::Manual(0)),
            Duration::from_secs(5),
        ));
        let store = store(dir.path());
        // A folder under the slot's lock name: every save of the slot is refused.
        std::fs::create_dir(store.dir().join("manual-00.lock")).unwrap();
        image.set_store(store).unwrap();
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
