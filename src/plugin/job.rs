//! The plugin's vocabulary: what can be done to a slot, where a save goes, why it was made, and
//! the jobs that carry them out. Requests, jobs, result events and the save menu all speak it,
//! so each case is spelled once.

use crate::{SlotId, SlotKind};
use bevy::prelude::*;

/// The reflection of [`SlotId`], which lives in the engine-free core (no Bevy there, so no
/// `Reflect` either): reflected types name their `SlotId` fields with
/// `#[reflect(remote = SlotIdReflect)]`, so inspectors show the plugin's requests, jobs and
/// events whole.
#[bevy::reflect::reflect_remote(SlotId)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotIdReflect {
    /// [`SlotId::Manual`].
    Manual(u16),
    /// [`SlotId::Auto`].
    Auto(u16),
    /// [`SlotId::Quick`].
    Quick,
}

/// Something done to a slot. The one action type used by requests, jobs, results and the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum SlotAction {
    /// Capture the world and write it into the slot.
    Save,
    /// Read, verify and decode the slot's save and apply it to the world.
    Load,
    /// Delete every generation of the slot.
    Delete,
}

impl SlotAction {
    /// Every action, in the order a menu shows its buttons.
    pub const ALL: [SlotAction; 3] = [SlotAction::Save, SlotAction::Load, SlotAction::Delete];

    /// The action's name as a button shows it.
    pub fn label(self) -> &'static str {
        match self {
            SlotAction::Save => "Save",
            SlotAction::Load => "Load",
            SlotAction::Delete => "Delete",
        }
    }
}

/// Where a save goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum SaveTarget {
    /// Exactly this slot: a manual slot, the quicksave slot, or one given autosave slot (which,
    /// like every autosave slot, keeps the whole ring busy while it is written).
    Slot(#[reflect(remote = SlotIdReflect)] SlotId),
    /// The autosave ring: the plugin overwrites the oldest (or first empty) autosave slot, which
    /// it picks when it writes.
    AutosaveRing,
}

impl SaveTarget {
    /// The slot, when it is known before writing (every target but the ring).
    pub fn slot(self) -> Option<SlotId> {
        match self {
            SaveTarget::Slot(slot) => Some(slot),
            SaveTarget::AutosaveRing => None,
        }
    }

    /// Why a save of this target is made when nothing else says so.
    pub fn reason(self) -> SaveReason {
        match self {
            SaveTarget::Slot(slot) => match slot.kind() {
                SlotKind::Manual => SaveReason::Manual,
                SlotKind::Quick => SaveReason::Quicksave,
                SlotKind::Auto => SaveReason::Autosave,
            },
            SaveTarget::AutosaveRing => SaveReason::Autosave,
        }
    }

    /// What a save of this target keeps busy.
    pub fn job_target(self) -> JobTarget {
        match self {
            SaveTarget::Slot(slot) => JobTarget::of(slot),
            SaveTarget::AutosaveRing => JobTarget::AutosaveRing,
        }
    }
}

impl From<SlotId> for SaveTarget {
    fn from(slot: SlotId) -> Self {
        SaveTarget::Slot(slot)
    }
}

/// Why a save was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum SaveReason {
    /// A save into a manual slot (the menu, [`SaveRequest::slot`](super::SaveRequest::slot)).
    Manual,
    /// The quicksave hotkey, or a save into [`SlotId::Quick`].
    Quicksave,
    /// The autosave timer, [`SaveRequest::autosave`](super::SaveRequest::autosave), a save
    /// into one autosave slot, or the window losing focus.
    Autosave,
    /// The app was about to exit ([`SaveOnExit`](super::SaveOnExit)).
    Exit,
}

/// What a job keeps busy; at most one job per target runs at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum JobTarget {
    /// One manual slot, or the quicksave slot.
    Slot(#[reflect(remote = SlotIdReflect)] SlotId),
    /// The autosave ring (all autosave slots together: the ring picks its slot by looking at
    /// all of them).
    AutosaveRing,
}

impl JobTarget {
    /// The target a job on `slot` keeps busy.
    pub fn of(slot: SlotId) -> Self {
        match slot.kind() {
            SlotKind::Auto => JobTarget::AutosaveRing,
            SlotKind::Manual | SlotKind::Quick => JobTarget::Slot(slot),
        }
    }
}

/// A save, load or delete, waiting or running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum Job {
    /// Capture the world and write it.
    Save {
        /// Where it goes.
        target: SaveTarget,
        /// Why it was made.
        reason: SaveReason,
    },
    /// Load a slot.
    Load(#[reflect(remote = SlotIdReflect)] SlotId),
    /// Delete a slot.
    Delete(#[reflect(remote = SlotIdReflect)] SlotId),
}

impl Job {
    /// A save of `target` for the reason its target implies.
    pub fn save(target: SaveTarget) -> Self {
        Job::Save {
            target,
            reason: target.reason(),
        }
    }

    /// `action` on `slot`.
    pub fn on_slot(action: SlotAction, slot: SlotId) -> Self {
        match action {
            SlotAction::Save => Job::save(SaveTarget::Slot(slot)),
            SlotAction::Load => Job::Load(slot),
            SlotAction::Delete => Job::Delete(slot),
        }
    }

    /// What it does.
    pub fn action(self) -> SlotAction {
        match self {
            Job::Save { .. } => SlotAction::Save,
            Job::Load(_) => SlotAction::Load,
            Job::Delete(_) => SlotAction::Delete,
        }
    }

    /// What it keeps busy.
    pub fn target(self) -> JobTarget {
        match self {
            Job::Save { target, .. } => target.job_target(),
            Job::Load(slot) | Job::Delete(slot) => JobTarget::of(slot),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_autosave_slot_and_the_ring_share_one_job_target() {
        assert_eq!(Job::Load(SlotId::Auto(3)).target(), JobTarget::AutosaveRing);
        assert_eq!(
            Job::save(SaveTarget::AutosaveRing).target(),
            JobTarget::AutosaveRing
        );
        assert_eq!(
            Job::Delete(SlotId::Manual(2)).target(),
            JobTarget::Slot(SlotId::Manual(2))
        );
    }

    #[test]
    fn a_save_reason_follows_from_its_target() {
        let reason = |target: SaveTarget| match Job::save(target) {
            Job::Save { reason, .. } => reason,
            other => panic!("not a save: {other:?}"),
        };
        assert_eq!(reason(SlotId::Manual(0).into()), SaveReason::Manual);
        assert_eq!(reason(SlotId::Quick.into()), SaveReason::Quicksave);
        assert_eq!(reason(SlotId::Auto(4).into()), SaveReason::Autosave);
        assert_eq!(reason(SaveTarget::AutosaveRing), SaveReason::Autosave);
    }

    #[test]
    fn on_slot_and_action_agree_for_every_action() {
        for action in SlotAction::ALL {
            assert_eq!(Job::on_slot(action, SlotId::Quick).action(), action);
        }
    }
}
