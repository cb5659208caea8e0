//! Requests the game sends and results the plugin reports, each on one channel.
//!
//! The rule, Bevy 0.20's own: a **request** is a [`Message`] and a **result** an observer
//! [`Event`], triggered once.
//!
//! - Requests ([`SaveRequest`], [`LoadRequest`], [`DeleteRequest`], [`RefreshSlotsRequest`],
//!   the rewind ring's and the cloud's) are written by any system, any number a frame
//!   (`commands.save(slot)` writes one), and read in bulk by the plugin's systems once a
//!   frame, as Bevy's `AppExit` and input messages are.
//! - Results (`Save*`, `Load*`, `Delete*`, the rewind ring's,
//!   [`WorldRestored`](super::WorldRestored), the cloud's) are few, and each calls for an
//!   answer at once: a toast, a sound, rebuilding what follows from the restored world before
//!   the next system sees it. They are triggered once, in the frame they happen, for
//!   observers (`app.add_observer(|saved: On<SaveCompleted>| …)`), as Bevy's
//!   `ScreenshotCaptured` and `WorldInstanceReady` are. A system that wants them in bulk keeps
//!   them from an observer in a resource of its own.
//!
//! Names follow the channel: a request ends in `Request`; the result of one is the operation
//! and how it ended (`SaveStarted`, `SaveCompleted`, `SaveFailed`, `RewindPointCompleted`);
//! what happens without a request of its own is named for what happened (`WorldRestored`,
//! `CloudSaveArrived`, `CloudSaveUploaded`).

use super::error::KeepsakeError;
use super::job::{SaveReason, SaveTarget, SlotIdReflect};
use crate::SlotId;
use crate::format::SaveMeta;
#[cfg(doc)]
use crate::snapshot::RuntimeAssetHandles;
use crate::snapshot::{DroppedField, DroppedReference, RefusedAssetPath, UnsavedComponent};
use crate::store::GenerationFailure;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Asks for a save. [`SaveRequest::slot`] saves into one slot; [`SaveRequest::autosave`] into
/// the autosave ring, as the autosave timer does (e.g. on entering a new area).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct SaveRequest {
    /// Where to save.
    pub target: SaveTarget,
}

impl SaveRequest {
    /// A save into exactly `slot` (a manual slot, the quicksave slot, or one autosave slot).
    pub fn slot(slot: SlotId) -> Self {
        SaveRequest {
            target: SaveTarget::Slot(slot),
        }
    }

    /// A save into the autosave ring: the oldest autosave slot is overwritten.
    pub fn autosave() -> Self {
        SaveRequest {
            target: SaveTarget::AutosaveRing,
        }
    }
}

/// Asks for the save in `slot` to be loaded (replacing the saved entities).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct LoadRequest {
    /// What to load.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
}

/// Asks for every generation of `slot` to be deleted.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct DeleteRequest {
    /// What to delete.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
}

/// Asks for [`SaveSlots`](super::SaveSlots) to be listed again, in the background: for save
/// files changed outside the game (another instance, cloud sync, a player copying files). The
/// save menu sends it when it opens; saves, loads and deletes refresh the listing by themselves.
#[derive(Message, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq)]
pub struct RefreshSlotsRequest;

/// A save has captured the world; it is written next, on the task pool, after waiting a few
/// frames at most for its thumbnail (menus show "Saving…").
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct SaveStarted {
    /// Where it goes.
    pub target: SaveTarget,
    /// Why it was made.
    pub reason: SaveReason,
}

/// A save was written and is durable.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct SaveCompleted {
    /// The slot written.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
    /// Why it was made.
    pub reason: SaveReason,
    /// Its generation number within the slot.
    pub generation: u64,
    /// The file written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The metadata stored with it (without the thumbnail).
    #[reflect(ignore)]
    pub meta: SaveMeta,
    /// The saved world's state hash ([`WorldState::state_hash`](crate::format::WorldState)):
    /// equal for two saves of the same state.
    pub state_hash: u64,
    /// How many entities were saved.
    pub entities: usize,
    /// Time the main thread spent capturing the world: re-encoding what changed since the last
    /// save and reading the entity table (joining the blob and hashing it run on the pool). The
    /// first save of a session encodes everything.
    pub capture_time: std::time::Duration,
    /// Handles to assets made at run time (no path) that were saved as the default handle,
    /// under [`RuntimeAssetHandles::Skip`] or `Silent` (Bevy's own, such as the quad mesh it
    /// gives every `Sprite`, not counted).
    pub handles_left_out: u32,
    /// Component types the saved entities carry that the save left out: neither registered
    /// for saving, nor declared rebuilt by the game
    /// ([`rebuilt_after_load`](crate::snapshot::SaveableAppExt::rebuilt_after_load)), nor
    /// made by Bevy itself (see
    /// [`register_saveable_bevy_types`](crate::snapshot::SaveableAppExt::register_saveable_bevy_types)).
    /// A load brings those entities back without them. The first save that
    /// meets a type also names it in a warning. Empty when the save holds everything.
    #[reflect(ignore)]
    pub unsaved_components: Arc<Vec<UnsavedComponent>>,
}

/// A save failed; existing saves are untouched.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct SaveFailed {
    /// Where it was to go.
    pub target: SaveTarget,
    /// Why it was made.
    pub reason: SaveReason,
    /// What went wrong.
    #[reflect(ignore)]
    pub error: Arc<KeepsakeError>,
}

/// A save was loaded and applied to the world.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct LoadCompleted {
    /// The slot loaded.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
    /// The generation that loaded.
    pub generation: u64,
    /// Whether newer generations were damaged and this older one was used instead.
    pub restored_from_backup: bool,
    /// Why newer generations were skipped (empty unless restored from a backup).
    #[reflect(ignore)]
    pub skipped_generations: Arc<Vec<GenerationFailure>>,
    /// The loaded save's metadata.
    #[reflect(ignore)]
    pub meta: SaveMeta,
    /// Saved entity id → the entity now standing for it, for the saved entities whose id
    /// changed: those spawned (all of them with [`LoadMode::Respawn`](crate::plugin::LoadMode),
    /// or for a save from another session), and those kept that an earlier load spawned. A
    /// saved id the map does not hold is the same entity as before the load (kept in place).
    #[reflect(ignore)]
    pub entity_map: Arc<EntityHashMap<Entity>>,
    /// Saved asset paths that were not loaded (absolute, leaving the asset folder, an unknown
    /// asset source, too long); those handles are at their default.
    #[reflect(ignore)]
    pub refused_asset_paths: Arc<Vec<RefusedAssetPath>>,
    /// Saved fields their types no longer have (the game removed them since the save was
    /// written): read and dropped, by type and field.
    #[reflect(ignore)]
    pub dropped_fields: Arc<Vec<DroppedField>>,
    /// References from saved entities to keyed level entities
    /// ([`LevelKey`](crate::snapshot::LevelKey)) that found no live entity with their key, by
    /// type, field and key: now `Entity::PLACEHOLDER` (a `ChildOf` among them is left out,
    /// so that entity loads as a root). Empty when every key was found.
    #[reflect(ignore)]
    pub dropped_references: Arc<Vec<DroppedReference>>,
    /// Time the main thread spent applying the save to the world: comparing it with what
    /// changed since the load started and changing what differs (reading, checking and
    /// decoding the save ran on the pool before).
    pub apply_time: std::time::Duration,
    /// Component types that live saved entities carried before the load and the loaded
    /// entities with the same saved types came back without (the save does not hold them),
    /// with how many loaded entities lack each; also warned about, and said by the save menu's
    /// toast. Components put back by the game's `On<Add>` observers during the load count as
    /// back. Empty when nothing was lost, and when no saved entity was live before the load
    /// (nothing to compare with: the save's warning tells then).
    #[reflect(ignore)]
    pub missing_components: Arc<Vec<UnsavedComponent>>,
}

/// A load failed; the world is untouched.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct LoadFailed {
    /// The slot.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
    /// What went wrong.
    #[reflect(ignore)]
    pub error: Arc<KeepsakeError>,
}

/// A slot was deleted.
#[derive(Event, Clone, Copy, Debug, Reflect)]
#[reflect(Clone, Debug)]
pub struct DeleteCompleted {
    /// The slot.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
    /// How many files (generations) were removed.
    pub files: usize,
}

/// Deleting a slot failed.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct DeleteFailed {
    /// The slot.
    #[reflect(remote = SlotIdReflect)]
    pub slot: SlotId,
    /// What went wrong.
    #[reflect(ignore)]
    pub error: Arc<KeepsakeError>,
}

/// Reports a result: triggers it once, for observers.
pub(crate) fn report<E>(world: &mut World, event: E)
where
    E: for<'a> Event<Trigger<'a>: Default>,
{
    world.trigger(event);
}
