//! The one capture of the world the plugin's features share. Saves, in-session loads (the live
//! world a save is matched against) and rewinds all capture through [`SaveCaptureCache`], which
//! keeps the encoded rows of the last capture, so each one re-encodes only what changed since.
//!
//! A feature that must see every capture registers a hook ([`CaptureHooks`]): the rewind ring
//! notes what changed across each one, so its points keep only their own rows. The hook is
//! what keeps this module below both the job runner and the rewind ring: neither names the
//! other.

use crate::snapshot::{CaptureCache, PendingSnapshot, SnapshotError};
use bevy::prelude::*;
use std::sync::{Mutex, MutexGuard, PoisonError};

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
