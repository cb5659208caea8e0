//! What a listing reports about each slot.

use crate::format::SaveMeta;
use crate::slot::SlotId;
use std::cmp::Reverse;

/// One slot in a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotEntry {
    /// The slot.
    pub slot: SlotId,
    /// What it holds.
    pub status: SlotStatus,
}

/// The state of a slot as seen from its files' headers and metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotStatus {
    /// No save has been written to the slot (or it was deleted).
    Empty,
    /// The newest generation's header and metadata are intact.
    Saved(SavedSlot),
    /// The newest generation's header or metadata is damaged.
    Damaged {
        /// The damaged generation.
        newest_generation: u64,
        /// Why it cannot be read.
        reason: String,
        /// The newest older generation whose header and metadata are intact, if any; loading the
        /// slot will fall back to it.
        backup: Option<SavedSlot>,
    },
}

/// A readable generation of a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedSlot {
    /// Its metadata (without the thumbnail: read it with
    /// [`SlotStore::read_thumbnail`](super::SlotStore::read_thumbnail)).
    pub meta: SaveMeta,
    /// Its generation number.
    pub generation: u64,
    /// How many generations the slot holds in all, this one included.
    pub generations: usize,
    /// Its size on disk.
    pub file_len: u64,
    /// Whether it carries a thumbnail.
    pub has_thumbnail: bool,
    /// Whether it is sealed (format version 3). A listing reads its metadata without the key
    /// and does not check its seal: a load does.
    pub sealed: bool,
}

impl SlotEntry {
    /// The metadata to show for the slot: the newest save's, or the backup's when the newest
    /// is damaged.
    pub fn shown_save(&self) -> Option<&SavedSlot> {
        match &self.status {
            SlotStatus::Empty => None,
            SlotStatus::Saved(saved) => Some(saved),
            SlotStatus::Damaged { backup, .. } => backup.as_ref(),
        }
    }
}

/// Sorts a listing: saves most recent first, then damaged slots without a readable backup,
/// then empty slots; ties keep the layout's order.
pub(crate) fn sort_most_recent_first(entries: &mut [SlotEntry]) {
    entries.sort_by_key(|entry| {
        let group = match &entry.status {
            _ if entry.shown_save().is_some() => 0,
            SlotStatus::Damaged { .. } => 1,
            _ => 2,
        };
        let time = entry.shown_save().map(|saved| saved.meta.created_at);
        (group, Reverse(time))
    });
}
