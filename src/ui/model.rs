//! What the save menu shows and allows, as plain data built from [`SaveSlots`] and
//! [`KeepsakeStatus`]: sections, rows, badges, enabled actions. No egui here, so all of it is
//! unit-tested without rendering.

use super::text::{format_local_time, format_playtime, relative_time};
use crate::format::{SaveMeta, Timestamp};
use crate::plugin::{KeepsakeStatus, SaveSlots, SlotAction};
use crate::store::{SavedSlot, SlotEntry, SlotStatus};
use crate::{SlotId, SlotKind};
use bevy::prelude::Resource;
use chrono::TimeZone;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The menu's three sections, in the order they are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SectionKind {
    /// The quicksave slot.
    Quick,
    /// The autosave ring, newest first.
    Autosaves,
    /// The manual slots, in slot order.
    Manual,
}

impl SectionKind {
    /// The heading shown above the section.
    pub(crate) fn heading(self) -> &'static str {
        match self {
            SectionKind::Quick => "Quicksave",
            SectionKind::Autosaves => "Autosaves",
            SectionKind::Manual => "Manual saves",
        }
    }
}

/// The badge shown next to a slot's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Badge {
    /// Nothing saved here yet.
    Empty,
    /// The newest save is damaged and no backup is readable.
    Damaged {
        /// Why it cannot be read.
        reason: String,
    },
    /// The newest save is damaged; the row shows the backup that loading will use.
    RestoredFromBackup {
        /// Why the newest save cannot be read.
        reason: String,
    },
}

impl Badge {
    /// The badge's text.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Badge::Empty => "Empty",
            Badge::Damaged { .. } => "Damaged",
            Badge::RestoredFromBackup { .. } => "Restored from backup",
        }
    }
}

/// A slot's cloud state, shown beside its name when cloud saves are on (the `cloud` feature's
/// plugin fills [`SlotSyncBadges`]; without it no row has one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncBadge {
    /// Every save of the slot is in the cloud.
    Synced,
    /// A save is being uploaded.
    Uploading,
    /// A save waits for the storage to answer again.
    Offline,
    /// Two devices saved the slot; the newest heads it and the other save is kept below.
    Conflict {
        /// The device that made the save kept below.
        hidden_device: String,
    },
}

impl SyncBadge {
    /// The badge's text.
    pub fn label(&self) -> &'static str {
        match self {
            SyncBadge::Synced => "In the cloud",
            SyncBadge::Uploading => "Uploading\u{2026}",
            SyncBadge::Offline => "Offline \u{2013} uploads later",
            SyncBadge::Conflict { .. } => "Conflict \u{2013} both saves kept",
        }
    }
}

/// Each slot's cloud state for the save menu. Empty (no badges) unless a cloud plugin keeps it.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotSyncBadges(pub BTreeMap<SlotId, SyncBadge>);

/// Which actions a row's buttons allow right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowActions {
    /// Indexed by [`SlotAction`] in [`SlotAction::ALL`] order.
    allowed: [bool; 3],
}

impl RowActions {
    /// The actions for which `allows` says yes.
    pub(crate) fn from_fn(allows: impl Fn(SlotAction) -> bool) -> Self {
        RowActions {
            allowed: SlotAction::ALL.map(allows),
        }
    }

    /// Whether `action` is allowed.
    pub(crate) fn allows(self, action: SlotAction) -> bool {
        self.allowed[action as usize]
    }

    /// The allowed actions, in button order.
    pub(crate) fn enabled(self) -> impl Iterator<Item = SlotAction> {
        SlotAction::ALL
            .into_iter()
            .filter(move |&action| self.allows(action))
    }
}

/// Identifies one stored thumbnail, so a cached texture is reused only for the same save.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ThumbnailKey {
    /// The slot.
    pub(crate) slot: SlotId,
    /// The generation that carries it.
    pub(crate) generation: u64,
    /// The save it belongs to.
    pub(crate) save_id: Uuid,
}

/// The save a row shows (the newest, or the backup when the newest is damaged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShownSave {
    /// The game's title/location text.
    pub(crate) title: String,
    /// When it was saved.
    pub(crate) saved_at: Timestamp,
    /// Local date and time, e.g. "2026-11-21 14:03".
    pub(crate) local_time: String,
    /// e.g. "3 min ago".
    pub(crate) relative_time: String,
    /// e.g. "1 h 02 min".
    pub(crate) playtime: String,
    /// The name of the device that made it, e.g. "steamdeck"; `None` for a save that recorded
    /// none (cloud sync off, or made before devices were recorded).
    pub(crate) device: Option<String>,
    /// Why the plugin wrote it when the game crashed or was stopped (a crash save); `None` for
    /// every other save.
    pub(crate) crash: Option<crate::format::CrashCause>,
    /// Its thumbnail, when it has one.
    pub(crate) thumbnail: Option<ThumbnailKey>,
}

/// One slot as the menu shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlotRow {
    /// The slot.
    pub(crate) slot: SlotId,
    /// e.g. "Manual 3".
    pub(crate) name: String,
    /// The save shown, if the slot has a readable one.
    pub(crate) save: Option<ShownSave>,
    /// Empty, damaged or restored from backup.
    pub(crate) badge: Option<Badge>,
    /// Its cloud state, when cloud saves are on.
    pub(crate) sync: Option<SyncBadge>,
    /// A save, load or delete of this slot is running or waiting.
    pub(crate) busy: bool,
    /// The enabled buttons.
    pub(crate) actions: RowActions,
}

impl SlotRow {
    /// Whether the slot holds anything (a save, or a damaged file) that an action would replace
    /// or remove.
    pub(crate) fn is_occupied(&self) -> bool {
        self.badge != Some(Badge::Empty)
    }
}

/// A titled group of rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MenuSection {
    /// Which section.
    pub(crate) kind: SectionKind,
    /// Its rows, in display order.
    pub(crate) rows: Vec<SlotRow>,
}

/// Everything the menu shows, rebuilt whenever the listing or the job status changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MenuModel {
    /// Quick, Autosaves, Manual (sections without slots are left out).
    pub(crate) sections: Vec<MenuSection>,
    /// Why the listing could not be refreshed, if it could not.
    pub(crate) listing_error: Option<String>,
}

impl MenuModel {
    /// Builds the model. `now` and `zone` make times deterministic in tests; the menu passes
    /// the wall clock and the local time zone.
    pub(crate) fn build<Tz: TimeZone>(
        slots: &SaveSlots,
        status: &KeepsakeStatus,
        now: Timestamp,
        zone: &Tz,
    ) -> Self
    where
        Tz::Offset: std::fmt::Display,
    {
        let row = |entry: &SlotEntry| slot_row(entry, status, now, zone);
        let of_kind = |kind: SlotKind| {
            slots
                .entries()
                .iter()
                .filter(move |e| e.slot.kind() == kind)
        };

        let quick: Vec<SlotRow> = of_kind(SlotKind::Quick).map(row).collect();
        let mut autosaves: Vec<&SlotEntry> = of_kind(SlotKind::Auto).collect();
        // Newest first; empty and unreadable autosaves after, in ring order.
        autosaves.sort_by_key(|entry| {
            let time = entry.shown_save().map(|saved| saved.meta.created_at);
            (std::cmp::Reverse(time), entry.slot)
        });
        let autosaves: Vec<SlotRow> = autosaves.into_iter().map(row).collect();
        let mut manual: Vec<SlotRow> = of_kind(SlotKind::Manual).map(row).collect();
        manual.sort_by_key(|row| row.slot);

        let sections = [
            (SectionKind::Quick, quick),
            (SectionKind::Autosaves, autosaves),
            (SectionKind::Manual, manual),
        ]
        .into_iter()
        .filter(|(_, rows)| !rows.is_empty())
        .map(|(kind, rows)| MenuSection { kind, rows })
        .collect();
        MenuModel {
            sections,
            listing_error: slots.error().map(str::to_owned),
        }
    }

    /// The same model with each row's cloud state from `badges` (slots it lacks get none).
    pub(crate) fn with_sync(mut self, badges: &SlotSyncBadges) -> Self {
        for row in self
            .sections
            .iter_mut()
            .flat_map(|section| &mut section.rows)
        {
            row.sync = badges.0.get(&row.slot).cloned();
        }
        self
    }

    /// All rows, in display order (the order keyboard navigation walks).
    pub(crate) fn rows(&self) -> impl Iterator<Item = &SlotRow> {
        self.sections.iter().flat_map(|section| &section.rows)
    }

    /// The row at flat index `index` (see [`MenuModel::rows`]).
    pub(crate) fn row(&self, index: usize) -> Option<&SlotRow> {
        self.rows().nth(index)
    }

    /// The row of `slot`.
    #[cfg(test)]
    pub(crate) fn row_of(&self, slot: SlotId) -> Option<&SlotRow> {
        self.rows().find(|row| row.slot == slot)
    }

    /// How many rows there are.
    pub(crate) fn row_count(&self) -> usize {
        self.sections.iter().map(|section| section.rows.len()).sum()
    }
}

fn slot_row<Tz: TimeZone>(
    entry: &SlotEntry,
    status: &KeepsakeStatus,
    now: Timestamp,
    zone: &Tz,
) -> SlotRow
where
    Tz::Offset: std::fmt::Display,
{
    let badge = match &entry.status {
        SlotStatus::Empty => Some(Badge::Empty),
        SlotStatus::Saved(_) => None,
        SlotStatus::Damaged {
            reason,
            backup: Some(_),
            ..
        } => Some(Badge::RestoredFromBackup {
            reason: reason.clone(),
        }),
        SlotStatus::Damaged {
            reason,
            backup: None,
            ..
        } => Some(Badge::Damaged {
            reason: reason.clone(),
        }),
    };
    let save = entry
        .shown_save()
        .map(|saved| shown_save(entry.slot, saved, now, zone));
    let busy = status.is_busy(entry.slot);
    let actions = RowActions::from_fn(|action| {
        !busy
            && match action {
                SlotAction::Save => entry.slot.kind() == SlotKind::Manual,
                SlotAction::Load => save.is_some(),
                SlotAction::Delete => badge != Some(Badge::Empty),
            }
    });
    SlotRow {
        slot: entry.slot,
        name: entry.slot.to_string(),
        save,
        badge,
        sync: None,
        busy,
        actions,
    }
}

fn shown_save<Tz: TimeZone>(slot: SlotId, saved: &SavedSlot, now: Timestamp, zone: &Tz) -> ShownSave
where
    Tz::Offset: std::fmt::Display,
{
    let meta = &saved.meta;
    ShownSave {
        title: meta.title.clone(),
        saved_at: meta.created_at,
        local_time: format_local_time(meta.created_at, zone),
        relative_time: relative_time(now, meta.created_at),
        playtime: format_playtime(meta.playtime),
        device: device_name(meta),
        crash: meta.crash(),
        thumbnail: saved.has_thumbnail.then_some(ThumbnailKey {
            slot,
            generation: saved.generation,
            save_id: meta.save_id,
        }),
    }
}

/// The device name a row shows. A blank name (the extras are the game's to fill, and a file's
/// to forge) would read as a dangling "on", so it counts as none.
fn device_name(meta: &SaveMeta) -> Option<String> {
    meta.device_name()
        .filter(|name| !name.trim().is_empty())
        .map(str::to_owned)
}
