//! `Commands` shortcuts for the request messages.

use super::events::{DeleteRequest, LoadRequest, SaveRequest};
use super::job::SlotAction;
use super::rewind::{RewindPointRequest, RewindRequest, RewindTo};
use crate::SlotId;
use bevy::prelude::*;

/// Save, load and delete from any system through `Commands`.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::{SlotId, plugin::KeepsakeCommandsExt};
///
/// fn save_at_the_shrine(mut commands: Commands) {
///     commands.save(SlotId::Manual(3));
/// }
/// # let _ = save_at_the_shrine;
/// ```
pub trait KeepsakeCommandsExt {
    /// Requests a save into `slot` (see [`SaveRequest::slot`]).
    fn save(&mut self, slot: SlotId);
    /// Requests a save into the autosave ring now (see [`SaveRequest::autosave`]).
    fn autosave(&mut self);
    /// Requests a load of `slot` (see [`LoadRequest`]).
    fn load(&mut self, slot: SlotId);
    /// Requests deleting `slot` (see [`DeleteRequest`]).
    fn delete_save(&mut self, slot: SlotId);
    /// Requests a rewind point (see [`RewindPointRequest`]).
    fn rewind_point(&mut self);
    /// Requests a rewind `steps` points back: `rewind(1)` goes back to the newest point (see
    /// [`RewindTo::Back`]).
    fn rewind(&mut self, steps: usize);
    /// Requests a rewind to the point `to` names (see [`RewindRequest`]).
    fn rewind_to(&mut self, to: RewindTo);
    /// Requests `action` on `slot`: the same as [`save`](Self::save), [`load`](Self::load) or
    /// [`delete_save`](Self::delete_save), for menus that hold the action as data.
    fn request(&mut self, action: SlotAction, slot: SlotId);
}

impl KeepsakeCommandsExt for Commands<'_, '_> {
    fn save(&mut self, slot: SlotId) {
        self.write_message(SaveRequest::slot(slot));
    }

    fn autosave(&mut self) {
        self.write_message(SaveRequest::autosave());
    }

    fn load(&mut self, slot: SlotId) {
        self.write_message(LoadRequest { slot });
    }

    fn delete_save(&mut self, slot: SlotId) {
        self.write_message(DeleteRequest { slot });
    }

    fn rewind_point(&mut self) {
        self.write_message(RewindPointRequest);
    }

    fn rewind(&mut self, steps: usize) {
        self.rewind_to(RewindTo::Back(steps));
    }

    fn rewind_to(&mut self, to: RewindTo) {
        self.write_message(RewindRequest { to });
    }

    fn request(&mut self, action: SlotAction, slot: SlotId) {
        match action {
            SlotAction::Save => self.save(slot),
            SlotAction::Load => self.load(slot),
            SlotAction::Delete => self.delete_save(slot),
        }
    }
}
