//! Slot counts and the file names the store generates from them.
//!
//! Names are built only from a [`SlotId`] and a generation number, never from user text:
//!
//! | file | name |
//! |------|------|
//! | generation 7 of manual slot 3 | `manual-03.g000007.ksav` |
//! | autosave slot 0 | `auto-00.g000012.ksav` |
//! | quicksave | `quick-00.g000001.ksav` |
//! | a save being written | `manual-03.g000008.ksav.<pid>-<n>.tmp` |
//! | the slot's lock | `manual-03.lock` |

use crate::slot::{SlotId, SlotKind};
use std::sync::atomic::{AtomicU64, Ordering};

/// File extension of save files.
pub const SAVE_EXTENSION: &str = "ksav";

const TEMP_SUFFIX: &str = ".tmp";

/// How many slots of each kind a profile has. There is always exactly one quicksave slot.
///
/// ```
/// use keepsake_core::{SlotId, store::SlotLayout};
///
/// let layout = SlotLayout::default();
/// assert_eq!(layout.slots().count(), 16);
/// assert!(layout.contains(SlotId::Manual(9)) && !layout.contains(SlotId::Manual(10)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotLayout {
    /// Manual slots (default 10).
    pub manual: u16,
    /// Autosave slots in the ring (default 5).
    pub auto: u16,
}

impl Default for SlotLayout {
    fn default() -> Self {
        SlotLayout {
            manual: 10,
            auto: 5,
        }
    }
}

impl SlotLayout {
    /// Whether `slot` exists in this layout.
    pub fn contains(&self, slot: SlotId) -> bool {
        match slot {
            SlotId::Manual(index) => index < self.manual,
            SlotId::Auto(index) => index < self.auto,
            SlotId::Quick => true,
        }
    }

    /// How many slots of `kind` there are.
    pub fn count(&self, kind: SlotKind) -> u16 {
        match kind {
            SlotKind::Manual => self.manual,
            SlotKind::Auto => self.auto,
            SlotKind::Quick => 1,
        }
    }

    /// Every slot: quicksave, then the autosaves, then the manual slots.
    pub fn slots(&self) -> impl Iterator<Item = SlotId> + use<> {
        std::iter::once(SlotId::Quick)
            .chain((0..self.auto).map(SlotId::Auto))
            .chain((0..self.manual).map(SlotId::Manual))
    }
}

/// The file-name stem of a slot, e.g. `manual-03`.
pub fn slot_stem(slot: SlotId) -> String {
    let kind = match slot.kind() {
        SlotKind::Manual => "manual",
        SlotKind::Auto => "auto",
        SlotKind::Quick => "quick",
    };
    format!("{kind}-{:02}", slot.index())
}

/// The file name of one generation of a slot.
pub(crate) fn generation_file_name(slot: SlotId, generation: u64) -> String {
    format!("{}.g{generation:06}.{SAVE_EXTENSION}", slot_stem(slot))
}

/// The name of the lock file of a slot.
pub(crate) fn lock_file_name(slot: SlotId) -> String {
    format!("{}.lock", slot_stem(slot))
}

/// A unique temporary name beside `final_name` (unique per process and per call).
pub(crate) fn temp_file_name(final_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{final_name}.{}-{n}{TEMP_SUFFIX}", std::process::id())
}

/// Whether a folder entry is a temporary file left by an interrupted durable write: of a save,
/// or of a side file (the cloud sync state).
pub fn is_temp_file(name: &str) -> bool {
    temp_file_final_name(name).is_some()
}

/// The name a temporary file was being written for (see [`temp_file_name`]); `None` for any
/// other name.
fn temp_file_final_name(name: &str) -> Option<&str> {
    let (final_name, unique) = name.strip_suffix(TEMP_SUFFIX)?.rsplit_once('.')?;
    let (pid, n) = unique.split_once('-')?;
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    (!final_name.is_empty() && digits(pid) && digits(n)).then_some(final_name)
}

/// The slot and generation a temporary file was being written for (see [`temp_file_name`]);
/// `None` for any other name, a side file's temporary file included.
pub(crate) fn temp_file_target(name: &str) -> Option<(SlotId, u64)> {
    parse_generation_file(temp_file_final_name(name)?)
}

/// Parses a save file name back into its slot and generation; `None` for anything else.
pub(crate) fn parse_generation_file(name: &str) -> Option<(SlotId, u64)> {
    let rest = name.strip_suffix(SAVE_EXTENSION)?.strip_suffix('.')?;
    let (stem, generation) = rest.rsplit_once(".g")?;
    if generation.is_empty() || !generation.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let generation = generation.parse().ok()?;
    let slot = parse_slot_stem(stem)?;
    // Only the canonical spelling counts, so one file maps to one name.
    (generation_file_name(slot, generation) == name).then_some((slot, generation))
}

/// Parses a slot's file-name stem (`manual-03`) back into the slot; `None` for anything else,
/// non-canonical spellings included.
pub fn parse_slot_stem(stem: &str) -> Option<SlotId> {
    let (kind, index) = stem.split_once('-')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u16 = index.parse().ok()?;
    let slot = match kind {
        "manual" => SlotId::Manual(index),
        "auto" => SlotId::Auto(index),
        "quick" if index == 0 => SlotId::Quick,
        _ => return None,
    };
    (slot_stem(slot) == stem).then_some(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names_round_trip() {
        for slot in SlotLayout::default().slots() {
            for generation in [1, 42, 999_999, 1_000_000, u64::MAX] {
                let name = generation_file_name(slot, generation);
                assert_eq!(
                    parse_generation_file(&name),
                    Some((slot, generation)),
                    "{name}"
                );
            }
        }
        assert_eq!(
            generation_file_name(SlotId::Manual(3), 7),
            "manual-03.g000007.ksav"
        );
    }

    #[test]
    fn other_names_are_not_generations() {
        for name in [
            "manual-03.lock",
            "manual-03.g000007.ksav.12-0.tmp",
            "manual-3.g000007.ksav",
            "manual-03.g7.ksav",
            "quick-01.g000001.ksav",
            "notes.txt",
            "manual-03.g.ksav",
            "manual-+3.g000001.ksav",
        ] {
            assert_eq!(parse_generation_file(name), None, "{name}");
        }
        assert!(is_temp_file(&temp_file_name("manual-03.g000007.ksav")));
        assert!(!is_temp_file("manual-03.g000007.ksav"));
        // A side file's (the cloud sync state's), which an interrupted write can leave too.
        assert!(is_temp_file(&temp_file_name("cloud-sync.ron")));
        assert!(!is_temp_file("notes.tmp") && !is_temp_file("cloud-sync.ron.1-x.tmp"));
    }
}
