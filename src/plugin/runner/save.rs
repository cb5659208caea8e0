//! Saves: the world captured on the main thread, [`SaveStarted`], the thumbnail a provider has
//! at hand, then the write on the task pool, started in the same frame; [`SaveCompleted`] or
//! [`SaveFailed`] once it is durable or failed.
//!
//! The capture is incremental: [`SaveCaptureCache`](crate::plugin::capture::SaveCaptureCache) keeps the encoded rows of the last save, so
//! the main thread re-encodes only the values that changed since and reads the entity table.
//! Joining the cached pieces into the blob, hashing it, encoding, compression, checksums and the
//! durable write all run off the main thread: by default on a thread of its own below the
//! game's threads ([`SavePriority::Low`], see [`crate::plugin::pool`]), else on Bevy's async
//! compute pool. The store keeps the stored chunks of the last saves of its profile
//! ([`ChunkCache`](crate::format::ChunkCache)), so only the chunks around what changed are
//! compressed and checksummed again.

use super::queue::{Outcome, Work};
use crate::SlotId;
use crate::format::{SaveMeta, Timestamp};
use crate::plugin::error::KeepsakeError;
use crate::plugin::events::{SaveCompleted, SaveFailed, SaveStarted, report};
use crate::plugin::job::{SaveReason, SaveTarget};
use crate::plugin::pool::{BackgroundThread, SavePriority, spawn_thread, task_pool};
use crate::plugin::settings::{KeepsakeSettings, Playtime, SaveTitle};
use crate::plugin::thumbnail;
use crate::plugin::unsaved;
use crate::snapshot::{LeftOutHandle, PendingSnapshot, RuntimeAssetHandles, UnsavedComponent};
use crate::store::{SaveReceipt, SlotStore, StoreError};
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::tasks::Task;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Captures the world on the main thread, reports [`SaveStarted`], takes the thumbnail a
/// provider hands over at once (if any), and starts the write on the pool in this same frame;
/// `None` when the capture failed (its [`SaveFailed`] is already reported).
///
/// Nothing waits between the capture and the write: a save that waited for a picture could
/// still be lost (a crash, a window closed, the app killed) after the player saw it start,
/// and at a low frame rate a wait of a few frames was seconds. See [`crate::plugin::thumbnail`].
pub(super) fn start(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
    store: Arc<SlotStore>,
) -> Option<Box<dyn Work>> {
    let save = match capture(world, target, reason) {
        Ok(save) => Arc::new(save),
        Err(error) => {
            failed(target, reason, error).finish(world);
            return None;
        }
    };
    report(world, SaveStarted { target, reason });
    let max_thumbnail = store.config().encode.limits.max_thumbnail;
    let thumbnail = thumbnail::ask(world, target, reason, max_thumbnail);
    Some(Box::new(spawn_write(store, save, thumbnail)))
}

/// The outcome of a save that could not be captured or started.
pub(super) fn failed(
    target: SaveTarget,
    reason: SaveReason,
    error: KeepsakeError,
) -> Box<dyn Outcome> {
    Box::new(Saved {
        target,
        reason,
        capture: CaptureStats::default(),
        unsaved: Arc::default(),
        result: Err(error),
    })
}

// ---------------------------------------------------------------------------------------------
// Capturing, on the main thread

/// What the main thread spent on a save, and what it left out.
#[derive(Clone, Copy, Debug, Default)]
struct CaptureStats {
    entities: usize,
    time: Duration,
    /// Handles to run-time assets saved as the default handle.
    handles_left_out: u32,
}

/// Everything a save records when it captures the world; the autosave ring's slot is only
/// picked when the save is written, on the pool.
struct CapturedSave {
    target: SaveTarget,
    reason: SaveReason,
    capture: CaptureStats,
    /// Component types the saved entities carry that the save leaves out.
    unsaved: Arc<Vec<UnsavedComponent>>,
    /// The captured world, joined into the blob on the pool; taken by the one write of the
    /// save.
    snapshot: Mutex<Option<PendingSnapshot>>,
    created_at: Timestamp,
    playtime: Duration,
    game_tick: u64,
    title: String,
    game_version: String,
    extras: BTreeMap<String, String>,
    /// Where it is written: on a thread of low priority, or on the pool.
    priority: SavePriority,
}

impl CapturedSave {
    /// The metadata stored with the save once its slot is known.
    fn meta(&self, slot: SlotId, thumbnail: Option<Vec<u8>>) -> SaveMeta {
        SaveMeta {
            created_at: self.created_at,
            playtime: self.playtime,
            game_tick: self.game_tick,
            title: self.title.clone(),
            game_version: self.game_version.clone(),
            extras: self.extras.clone(),
            thumbnail,
            ..SaveMeta::new(slot)
        }
    }
}

/// The main thread's part of a save: the world into a bundle, and the game's text and clocks.
fn capture(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
) -> Result<CapturedSave, KeepsakeError> {
    // The save's phases are spans (`capture` here, `write` on the pool) a tracing subscriber
    // or Bevy's `trace` feature shows on a timeline.
    let _span = info_span!("keepsake::capture", ?target, ?reason).entered();
    let started = Instant::now();
    let pending = crate::plugin::capture::capture(world)?;
    let unsaved = unsaved::check_save(world, pending.entities());
    let time = started.elapsed();
    let handles_left_out = warn_left_out_handles(world, pending.handles_left_out());
    let game_tick = world
        .get_resource::<FrameCount>()
        .map_or(0, |frames| u64::from(frames.0));
    Ok(CapturedSave {
        target,
        reason,
        capture: CaptureStats {
            entities: pending.entities(),
            time,
            handles_left_out,
        },
        unsaved,
        snapshot: Mutex::new(Some(pending)),
        created_at: Timestamp::now(),
        playtime: world.resource::<Playtime>().0,
        game_tick,
        title: world.resource::<SaveTitle>().0.clone(),
        game_version: world.resource::<KeepsakeSettings>().game_version.clone(),
        extras: world.resource::<KeepsakeSettings>().save_extras.clone(),
        // At exit nothing waits but the save: it must not yield to anything.
        priority: match reason {
            SaveReason::Exit => SavePriority::Normal,
            _ => world.resource::<KeepsakeSettings>().save_priority,
        },
    })
}

/// Warns once per field (for the life of the app) about handles to run-time assets saved as
/// the default handle, unless the policy is silent; returns how many there were.
fn warn_left_out_handles(world: &mut World, left_out: &[LeftOutHandle]) -> u32 {
    let silent = world.get_resource::<RuntimeAssetHandles>() == Some(&RuntimeAssetHandles::Silent);
    let mut warned = world.resource_mut::<WarnedHandleFields>();
    for handle in left_out {
        if !silent && warned.0.insert(handle.field.clone()) {
            warn!(
                "keepsake: {} holds a handle to an asset made at run time (Assets::add), which \
                 has no path to be saved by: the save holds the default handle there. Make the \
                 asset again when the entity appears (an observer on Add of the component, \
                 with insert_if_new), and if the component holds nothing else, leave it out of \
                 the save: do not register it, and declare it with \
                 app.rebuilt_after_load::<T>(). Assets loaded from files are saved by path. \
                 RuntimeAssetHandles::Silent hides this warning",
                handle.field
            );
        }
    }
    left_out.iter().map(|handle| handle.count).sum()
}

/// The fields already warned about by [`warn_left_out_handles`]; created when the plugin is
/// built.
#[derive(Resource, Default)]
pub(crate) struct WarnedHandleFields(std::collections::HashSet<String>);

// ---------------------------------------------------------------------------------------------
// Writing on the pool

/// A write under way, where [`SavePriority`] put it.
enum Writing {
    /// On Bevy's async compute pool.
    Pool(Task<Box<dyn Outcome>>),
    /// On a thread of its own, of lower priority.
    Thread(BackgroundThread<Box<dyn Outcome>>),
}

impl Work for Writing {
    /// Checks the write for completion.
    fn poll(&mut self) -> Option<Box<dyn Outcome>> {
        match self {
            Writing::Pool(task) => task.poll(),
            Writing::Thread(thread) => thread.poll(),
        }
    }
}

/// Writes a captured save on a thread of low priority, or on the pool (when the save's
/// priority is normal, or no thread could be created).
fn spawn_write(
    store: Arc<SlotStore>,
    save: Arc<CapturedSave>,
    thumbnail: Option<Vec<u8>>,
) -> Writing {
    if save.priority == SavePriority::Low {
        let (store, save, thumbnail) = (Arc::clone(&store), Arc::clone(&save), thumbnail.clone());
        match spawn_thread(SavePriority::Low, move || {
            write_outcome(&store, &save, thumbnail)
        }) {
            Ok(thread) => return Writing::Thread(thread),
            Err(error) => warn!("keepsake: no save thread ({error}); saving on the task pool"),
        }
    }
    Writing::Pool(task_pool().spawn(async move { write_outcome(&store, &save, thumbnail) }))
}

/// Picks the slot (the ring's oldest autosave slot), then encodes, compresses and durably
/// writes.
fn write_outcome(
    store: &SlotStore,
    save: &CapturedSave,
    thumbnail: Option<Vec<u8>>,
) -> Box<dyn Outcome> {
    let span = info_span!("keepsake::write", target = ?save.target, reason = ?save.reason);
    let result = span.in_scope(|| write(store, save, thumbnail).map_err(KeepsakeError::from));
    Box::new(Saved {
        target: save.target,
        reason: save.reason,
        capture: save.capture,
        unsaved: Arc::clone(&save.unsaved),
        result,
    })
}

fn write(
    store: &SlotStore,
    save: &CapturedSave,
    thumbnail: Option<Vec<u8>>,
) -> Result<(SaveReceipt, u64), StoreError> {
    let pending = save
        .snapshot
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(pending) = pending else {
        unreachable!("a captured save is written once");
    };
    let bundle = pending.finish().into_bundle(save.game_tick);
    let slot = match save.target {
        SaveTarget::Slot(slot) => slot,
        SaveTarget::AutosaveRing => store.next_autosave_slot()?,
    };
    let receipt = store.save(slot, save.meta(slot, thumbnail), &bundle)?;
    Ok((receipt, bundle.world.state_hash))
}

// ---------------------------------------------------------------------------------------------
// Finishing, on the main thread

/// A finished save, with what its event needs.
struct Saved {
    target: SaveTarget,
    reason: SaveReason,
    capture: CaptureStats,
    unsaved: Arc<Vec<UnsavedComponent>>,
    result: Result<(SaveReceipt, u64), KeepsakeError>,
}

impl Outcome for Saved {
    fn finish(self: Box<Self>, world: &mut World) {
        let Saved {
            target,
            reason,
            capture,
            unsaved,
            result,
        } = *self;
        match result {
            Ok((receipt, state_hash)) => {
                report_saved(world, reason, (capture, unsaved), (receipt, state_hash))
            }
            Err(error) => {
                warn!("keepsake: save failed: {error}");
                let error = Arc::new(error);
                report(
                    world,
                    SaveFailed {
                        target,
                        reason,
                        error,
                    },
                );
            }
        }
    }
}

/// Reports a durable save (warning when an old generation could not be pruned).
fn report_saved(
    world: &mut World,
    reason: SaveReason,
    (capture, unsaved): (CaptureStats, Arc<Vec<UnsavedComponent>>),
    (receipt, state_hash): (SaveReceipt, u64),
) {
    if let Some(error) = &receipt.prune_error {
        warn!(
            "keepsake: saved {}, but an old generation stays: {error}",
            receipt.slot
        );
    }
    report(
        world,
        SaveCompleted {
            slot: receipt.slot,
            reason,
            generation: receipt.generation,
            path: receipt.path,
            bytes: receipt.bytes,
            meta: receipt.meta,
            state_hash,
            entities: capture.entities,
            capture_time: capture.time,
            handles_left_out: capture.handles_left_out,
            unsaved_components: unsaved,
        },
    );
}
