//! Requests the game sends and results the plugin reports.
//!
//! Every result is both an observer event (`app.add_observer(|saved: On<SaveCompleted>| …)`) and
//! a message (`MessageReader<SaveCompleted>`), so games can use whichever fits.

use super::error::KeepsakeError;
use crate::format::SaveMeta;
use crate::slot::SlotId;
use crate::store::GenerationFailure;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Asks for a save into `slot`. An `Auto(_)` slot means "the autosave ring" (the plugin picks
/// the oldest autosave slot), the same as a [`Checkpoint`].
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaveRequest {
    /// Where to save.
    pub slot: SlotId,
}

/// Asks for the save in `slot` to be loaded (replacing the saved entities).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadRequest {
    /// What to load.
    pub slot: SlotId,
}

/// Asks for every generation of `slot` to be deleted.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeleteRequest {
    /// What to delete.
    pub slot: SlotId,
}

/// Asks for an autosave now (e.g. on entering a new area), into the autosave ring.
#[derive(Message, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint;

/// Asks for [`SaveSlots`](super::SaveSlots) to be listed again, in the background: for save
/// files changed outside the game (another instance, cloud sync, a player copying files). The
/// save menu sends it when it opens; saves, loads and deletes refresh the listing by themselves.
#[derive(Message, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefreshSlots;

/// Why a save was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SaveTrigger {
    /// A [`SaveRequest`] for a manual slot (or `commands.save`).
    Manual,
    /// The quicksave key or a request for [`SlotId::Quick`].
    Quicksave,
    /// The autosave timer or a [`Checkpoint`].
    Autosave,
}

/// A save has captured the world; it is written next, on the task pool, after waiting a few
/// frames at most for its thumbnail (menus show "Saving…").
#[derive(Event, Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaveStarted {
    /// The slot (`None` for the autosave ring, which picks its slot when it writes).
    pub slot: Option<SlotId>,
    /// Why it was requested.
    pub trigger: SaveTrigger,
}

/// A save was written and is durable.
#[derive(Event, Message, Clone, Debug)]
pub struct SaveCompleted {
    /// The slot written.
    pub slot: SlotId,
    /// Why it was made.
    pub trigger: SaveTrigger,
    /// Its generation number within the slot.
    pub generation: u64,
    /// The file written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The metadata stored with it (without the thumbnail).
    pub meta: SaveMeta,
    /// How many entities were saved.
    pub entities: usize,
    /// Time the main thread spent capturing the world.
    pub capture_time: std::time::Duration,
}

/// A save failed; existing saves are untouched.
#[derive(Event, Message, Clone, Debug)]
pub struct SaveFailed {
    /// The slot (`None` when the autosave ring could not even pick one).
    pub slot: Option<SlotId>,
    /// Why it was requested.
    pub trigger: SaveTrigger,
    /// What went wrong.
    pub error: Arc<KeepsakeError>,
}

/// A save was loaded and applied to the world.
#[derive(Event, Message, Clone, Debug)]
pub struct LoadCompleted {
    /// The slot loaded.
    pub slot: SlotId,
    /// The generation that loaded.
    pub generation: u64,
    /// Whether newer generations were damaged and this older one was used instead.
    pub restored_from_backup: bool,
    /// Why newer generations were skipped (empty unless restored from a backup).
    pub skipped_generations: Arc<Vec<GenerationFailure>>,
    /// The loaded save's metadata.
    pub meta: SaveMeta,
    /// Saved entity id → the entity spawned for it.
    pub entity_map: Arc<EntityHashMap<Entity>>,
}

/// A load failed; the world is untouched.
#[derive(Event, Message, Clone, Debug)]
pub struct LoadFailed {
    /// The slot.
    pub slot: SlotId,
    /// What went wrong.
    pub error: Arc<KeepsakeError>,
}

/// A slot was deleted.
#[derive(Event, Message, Clone, Copy, Debug)]
pub struct DeleteCompleted {
    /// The slot.
    pub slot: SlotId,
    /// How many files (generations) were removed.
    pub files: usize,
}

/// Deleting a slot failed.
#[derive(Event, Message, Clone, Debug)]
pub struct DeleteFailed {
    /// The slot.
    pub slot: SlotId,
    /// What went wrong.
    pub error: Arc<KeepsakeError>,
}

/// Fires a result as an observer event and as a message.
pub(crate) fn report<E>(world: &mut World, event: E)
where
    E: Message + Clone + for<'a> Event<Trigger<'a>: Default>,
{
    world.write_message(event.clone());
    world.trigger(event);
}
