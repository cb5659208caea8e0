//! Slot identities shared by the file format and the slot store.
//!
//! This module is engine-free: it imports nothing from Bevy.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which save slot a file belongs to.
///
/// Indices are zero-based in code (`Manual(0)` is the first manual slot); the [`Display`](fmt::Display)
/// form is the one-based label a player sees ("Manual 1").
///
/// ```
/// use keepsake_core::SlotId;
///
/// assert_eq!(SlotId::Manual(2).to_string(), "Manual 3");
/// assert_eq!(SlotId::Quick.to_string(), "Quicksave");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SlotId {
    /// A slot the player saves into by hand from the menu.
    Manual(u16),
    /// One slot of the rotating autosave ring.
    Auto(u16),
    /// The single quicksave slot (F5 / F9).
    Quick,
}

impl SlotId {
    /// The kind of slot, without its index.
    pub fn kind(self) -> SlotKind {
        match self {
            SlotId::Manual(_) => SlotKind::Manual,
            SlotId::Auto(_) => SlotKind::Auto,
            SlotId::Quick => SlotKind::Quick,
        }
    }

    /// The zero-based index within its kind (`0` for [`SlotId::Quick`]).
    pub fn index(self) -> u16 {
        match self {
            SlotId::Manual(index) | SlotId::Auto(index) => index,
            SlotId::Quick => 0,
        }
    }
}

impl fmt::Display for SlotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotId::Manual(index) => write!(f, "Manual {}", u32::from(*index) + 1),
            SlotId::Auto(index) => write!(f, "Autosave {}", u32::from(*index) + 1),
            SlotId::Quick => f.write_str("Quicksave"),
        }
    }
}

/// The three kinds of slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlotKind {
    /// Saved by hand.
    Manual,
    /// Written by the autosave ring.
    Auto,
    /// The quicksave slot.
    Quick,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_based_and_kind_and_index_round_trip() {
        assert_eq!(SlotId::Auto(0).to_string(), "Autosave 1");
        assert_eq!(SlotId::Manual(u16::MAX).to_string(), "Manual 65536");
        assert_eq!(SlotId::Auto(4).kind(), SlotKind::Auto);
        assert_eq!(SlotId::Auto(4).index(), 4);
        assert_eq!(SlotId::Quick.index(), 0);
    }
}
