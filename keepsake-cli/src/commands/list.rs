//! `keepsake list <folder>`: the slots as the game's save menu lists them.

use crate::folders::{holds_saves, open_profile, subfolders};
use crate::output::{Outcome, print_json};
use crate::text::{self, Table};
use crate::views::MetaView;
use keepsake_core::store::{SavedSlot, SlotEntry, SlotStatus};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Serialize)]
struct Profile {
    folder: String,
    /// Why the folder could not be listed (then `slots` is empty).
    error: Option<String>,
    slots: Vec<SlotView>,
}

#[derive(Debug, Serialize)]
struct SlotView {
    slot: String,
    /// `ok`, or `damaged` when the newest generation's header or metadata cannot be read.
    status: &'static str,
    /// Damaged, and an older generation is readable: loading the slot uses it.
    restored_from_backup: bool,
    /// The damaged newest generation and why, when damaged.
    damaged_generation: Option<u64>,
    reason: Option<String>,
    /// The save shown for the slot: the newest, or the backup a load falls back to.
    shown: Option<SavedView>,
}

#[derive(Debug, Serialize)]
struct SavedView {
    generation: u64,
    generations: usize,
    file_len: u64,
    has_thumbnail: bool,
    /// Sealed (format version 3): its metadata is read without the key, its seal not checked
    /// (`keepsake verify --key-file` checks it). Absent for unsealed saves.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    sealed: bool,
    /// The device that made the save (cloud sync records it); `null` when it recorded none.
    /// Also in `meta.extras`, under its key; here so a reader need not know the key.
    device: Option<String>,
    meta: MetaView,
}

impl From<&SavedSlot> for SavedView {
    fn from(saved: &SavedSlot) -> Self {
        SavedView {
            generation: saved.generation,
            generations: saved.generations,
            file_len: saved.file_len,
            has_thumbnail: saved.has_thumbnail,
            sealed: saved.sealed,
            // A blank name would print as an empty cell; it says no more than none.
            device: saved
                .meta
                .device_name()
                .filter(|name| !name.trim().is_empty())
                .map(str::to_owned),
            meta: MetaView::from(&saved.meta),
        }
    }
}

impl SlotView {
    fn new(entry: &SlotEntry) -> Option<Self> {
        let (damaged_generation, reason) = match &entry.status {
            SlotStatus::Empty => return None,
            SlotStatus::Saved(_) => (None, None),
            SlotStatus::Damaged {
                newest_generation,
                reason,
                ..
            } => (Some(*newest_generation), Some(reason.clone())),
        };
        let shown = entry.shown_save().map(SavedView::from);
        Some(SlotView {
            slot: entry.slot.to_string(),
            status: if reason.is_some() { "damaged" } else { "ok" },
            restored_from_backup: reason.is_some() && shown.is_some(),
            damaged_generation,
            reason,
            shown,
        })
    }

    fn status_text(&self) -> String {
        let status = match (&self.damaged_generation, self.restored_from_backup) {
            (None, _) => "ok".into(),
            (Some(g), true) => format!("damaged (g{g}), restored from backup"),
            (Some(g), false) => format!("damaged (g{g}), no readable backup"),
        };
        match &self.shown {
            Some(shown) if shown.sealed => status + ", sealed",
            _ => status,
        }
    }
}

pub fn run(folder: &Path, json: bool) -> Outcome {
    let profiles = if holds_saves(folder) {
        vec![folder.to_path_buf()]
    } else {
        match subfolders(folder) {
            Ok(folders) => folders.into_iter().filter(|f| holds_saves(f)).collect(),
            Err(error) => {
                eprintln!("keepsake: cannot list {}: {error}", folder.display());
                return Outcome::Trouble;
            }
        }
    };
    let listed: Vec<Profile> = profiles.iter().map(|p| list_profile(p)).collect();
    if json {
        print_json(&listed);
    } else if listed.is_empty() {
        println!("no save files in {}", folder.display());
    } else {
        print!("{}", render(&listed));
    }
    if listed.iter().any(|p| p.error.is_some()) {
        Outcome::Trouble
    } else if listed
        .iter()
        .flat_map(|p| &p.slots)
        .any(|s| s.damaged_generation.is_some())
    {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

fn list_profile(folder: &Path) -> Profile {
    let listing = open_profile(folder)
        .map_err(|error| error.0)
        .and_then(|store| store.list().map_err(|error| error.to_string()));
    let (slots, error) = match listing {
        Ok(entries) => (entries.iter().filter_map(SlotView::new).collect(), None),
        Err(error) => (Vec::new(), Some(error)),
    };
    Profile {
        folder: folder.display().to_string(),
        error,
        slots,
    }
}

fn render(profiles: &[Profile]) -> String {
    let mut out = String::new();
    for (i, profile) in profiles.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", profile.folder);
        if let Some(error) = &profile.error {
            let _ = writeln!(out, "cannot list: {}", text::clean(error));
            continue;
        }
        let mut table = Table::new(&[
            "SLOT",
            "TITLE",
            "TIME",
            "DEVICE",
            "PLAY TIME",
            "VERSION",
            "GEN",
            "SIZE",
            "THUMB",
            "STATUS",
        ]);
        for slot in &profile.slots {
            let mut cells = vec![slot.slot.clone()];
            match &slot.shown {
                Some(saved) => cells.extend(saved_cells(saved)),
                None => cells.extend(std::iter::repeat_n("-".to_owned(), SAVED_CELLS)),
            }
            cells.push(slot.status_text());
            table.row(cells);
        }
        out.push_str(&table.render());
        for slot in &profile.slots {
            if let Some(reason) = &slot.reason {
                let _ = writeln!(out, "{}: {}", slot.slot, text::clean(reason));
            }
        }
    }
    out
}

/// How many cells [`saved_cells`] fills (a slot without a save shows as many dashes).
const SAVED_CELLS: usize = 8;

/// The table's cells for the save a slot shows, TITLE to THUMB.
fn saved_cells(saved: &SavedView) -> [String; SAVED_CELLS] {
    let meta = &saved.meta;
    [
        text::clean(&meta.title),
        meta.created_at.clone(),
        saved
            .device
            .as_deref()
            .map_or_else(|| "-".to_owned(), text::clean),
        text::play_time(std::time::Duration::from_secs_f64(
            meta.play_time_secs.clamp(0.0, 1e15),
        )),
        text::clean(&meta.game_version),
        format!("{}/{}", saved.generation, saved.generations),
        text::size(saved.file_len),
        if saved.has_thumbnail { "yes" } else { "no" }.into(),
    ]
}
