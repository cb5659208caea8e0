//! The one capture of the world the plugin's features share. Saves, in-session loads (the live
//! world a save is matched against) and rewinds all capture through [`SaveCaptureCache`], which
//! keeps the encoded rows of the last capture, so each one re-encodes only what changed since.
//!
//! A feature that must see every capture registers a hook ([`CaptureHooks`]): the rewind ring
//! notes what changed across each one, so its points keep only their own rows. The hook is
//! what keeps this module below both the job runner and the rewind ring: neither names the
//! other.

use crate::plugin::pool::task_pool;
use crate::snapshot::{CaptureCache, PendingSnapshot, SnapshotError};
use bevy::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The encoded rows of the last capture, so the next one re-encodes only what changed. Created
/// empty when the plugin is built (the first save encodes everything) and kept for the life of
/// the app. In a mutex so a capture can borrow it next to the world it reads.
#[derive(Resource, Default)]
pub(crate) struct SaveCaptureCache(Mutex<CaptureCache>);

impl SaveCaptureCache {
    pub(crate) fn lock(&self) -> MutexGuard<'_, CaptureCache> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Captures kept but not written (rewind points, the live world a load or rewind compared
/// with), whose patched pieces are put together on the pool so that later captures never do it
/// on the main thread ([`PendingSnapshot::settle`]).
///
/// One task at a time settles the newest capture handed over: a newer capture's pieces patch
/// the older one's, so settling it settles those too, and an older capture not settled yet is
/// dropped. A task per capture (a rewind point every frame at 100k entities leaves about 30 ms
/// of pool work each) queued the pool up for seconds, and a rewind prepared there waited
/// behind them all (60 frames in the frame benchmark).
#[derive(Resource, Default)]
pub(crate) struct Settling(Arc<Mutex<SettleQueue>>);

#[derive(Default)]
struct SettleQueue {
    /// The newest capture not settled yet.
    next: Option<PendingSnapshot>,
    /// Whether a task is settling (it takes `next` before it stops).
    running: bool,
}

impl Settling {
    fn queue(queue: &Mutex<SettleQueue>) -> MutexGuard<'_, SettleQueue> {
        queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands `pending` to the pool to be settled, after the capture being settled there, if any;
/// a capture handed over before it and not settled yet is dropped unsettled (see
/// [`Settling`]).
pub(crate) fn settle_later(world: &World, pending: PendingSnapshot) {
    let shared = Arc::clone(&world.resource::<Settling>().0);
    let mut queue = Settling::queue(&shared);
    queue.next = Some(pending);
    if std::mem::replace(&mut queue.running, true) {
        return;
    }
    drop(queue);
    task_pool().spawn(settle_all(shared)).detach();
}

/// Settles the captures handed over until none is left. It yields to the pool's other tasks
/// after each: with a capture handed over every frame it may run for as long as they come,
/// and on a pool of one thread (Bevy's below 8 cores) a load or a delete spawned meanwhile
/// would otherwise wait for all of them.
async fn settle_all(shared: Arc<Mutex<SettleQueue>>) {
    // Should a settle panic, the next capture handed over starts a task again.
    let mut unwinding = StopOnUnwind(Some(Arc::clone(&shared)));
    loop {
        let next = {
            let mut queue = Settling::queue(&shared);
            let next = queue.next.take();
            // Under the same lock that found nothing: a capture handed over after this starts
            // a task of its own.
            queue.running = next.is_some();
            next
        };
        let Some(pending) = next else {
            unwinding.0 = None;
            return;
        };
        pending.settle();
        bevy::tasks::futures_lite::future::yield_now().await;
    }
}

/// Marks the settling task stopped if it unwinds (a task that returns did so itself).
struct StopOnUnwind(Option<Arc<Mutex<SettleQueue>>>);

impl Drop for StopOnUnwind {
    fn drop(&mut self) {
        if let Some(shared) = &self.0 {
            Settling::queue(shared).running = false;
        }
    }
}

/// What runs after each [`capture`], in the order registered.
#[derive(Resource, Default)]
pub(crate) struct CaptureHooks(Vec<fn(&mut World, &PendingSnapshot)>);

impl CaptureHooks {
    /// Runs `hook` after every capture from now on.
    pub(crate) fn add(&mut self, hook: fn(&mut World, &PendingSnapshot)) {
        self.0.push(hook);
    }
}

/// Captures the world through the plugin's capture cache and shows the capture to the hooks.
pub(crate) fn capture(world: &mut World) -> Result<PendingSnapshot, SnapshotError> {
    let pending = world.resource::<SaveCaptureCache>().lock().capture(world)?;
    let hooks = world
        .get_resource::<CaptureHooks>()
        .map(|hooks| hooks.0.clone())
        .unwrap_or_default();
    for hook in hooks {
        hook(world, &pending);
    }
    Ok(pending)
}
