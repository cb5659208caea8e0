//! `Commands` shortcuts for the request messages.

use super::events::{Checkpoint, DeleteRequest, LoadRequest, SaveRequest};
use crate::slot::SlotId;
use bevy::prelude::*;

/// Save, load and delete from any system through `Commands`.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::{SlotId, plugin::KeepsakeCommandsExt};
///
/// fn save_on_exit(mut commands: Commands) {
///     commands.save(SlotId::Manual(3));
/// }
/// # let _ = save_on_exit;
/// ```
pub trait KeepsakeCommandsExt {
    /// Requests a save into `slot` (see [`SaveRequest`]).
    fn save(&mut self, slot: SlotId);
    /// Requests a load of `slot` (see [`LoadRequest`]).
    fn load(&mut self, slot: SlotId);
    /// Requests deleting `slot` (see [`DeleteRequest`]).
    fn delete_save(&mut self, slot: SlotId);
    /// Requests an autosave into the ring now (see [`Checkpoint`]).
    fn checkpoint(&mut self);
}

impl KeepsakeCommandsExt for Commands<'_, '_> {
    fn save(&mut self, slot: SlotId) {
        self.queue(move |world: &mut World| {
            world.write_message(SaveRequest { slot });
        });
    }

    fn load(&mut self, slot: SlotId) {
        self.queue(move |world: &mut World| {
            world.write_message(LoadRequest { slot });
        });
    }

    fn delete_save(&mut self, slot: SlotId) {
        self.queue(move |world: &mut World| {
            world.write_message(DeleteRequest { slot });
        });
    }

    fn checkpoint(&mut self) {
        self.queue(|world: &mut World| {
            world.write_message(Checkpoint);
        });
    }
}
