//! `States` in saves ([`register_saveable_state`](crate::snapshot::SaveableAppExt::register_saveable_state)):
//! the current state is saved as the `State<S>` resource, and a load (or a rewind) goes back to
//! it through `NextState<S>`, as play does, so `OnExit` / `OnEnter` run and `DespawnOnExit`
//! entities go. Writing `State<S>` itself would change the state without its transitions: the
//! game would read `Playing` with the menu still on screen.
//!
//! The transition is [`NextState::set_if_different`]: a load that brings the state the game is
//! in runs none (as in play, where nobody leaves the state they stay in). A load goes to the
//! saved states *first* (`snapshot::apply` runs the `StateTransition` schedule before it
//! touches anything else), then puts the saved entities and resources in place: `OnEnter`
//! runs as when the player enters the state, and whatever it starts afresh (a level, a
//! timer) is then replaced by the save's, as a load replaces what play made. What `OnEnter`
//! built from the data the load replaces (UI from a resource) the game rebuilds after the
//! load, as it does after a load into the same state (see
//! [`WorldRestored`](crate::plugin::WorldRestored)).
//!
//! `DespawnOnExit<S>` and `DespawnOnEnter<S>` are registered with it: saved entities scoped to
//! a state come back scoped to it.

use super::entry::SaveableEntry;
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::value::ViaReflect;
use bevy::prelude::*;
use bevy::reflect::TypePath;
use bevy::state::state::FreelyMutableState;

/// The registry entry of `State<S>`: saved like any resource, loaded through `NextState<S>`.
pub(super) fn state_entry<S>() -> SaveableEntry
where
    S: FreelyMutableState,
    State<S>: Component + Reflect + FromReflect + TypePath,
{
    let mut entry = SaveableEntry::new::<State<S>, ViaReflect>(ColumnKind::Resource);
    entry.insert_resource = restore_state::<S>;
    entry.state = true;
    entry
}

/// Asks for the loaded state through `NextState<S>` instead of writing `State<S>`.
fn restore_state<S>(world: &mut World, value: Box<dyn Reflect>)
where
    S: FreelyMutableState,
    State<S>: Reflect,
{
    let Ok(state) = value.take::<State<S>>() else {
        return;
    };
    match world.get_resource_mut::<NextState<S>>() {
        Some(mut next) => next.set_if_different(state.get().clone()),
        None => warn!(
            "keepsake: the save holds the state {:?}, but the app has no NextState<{}> (is the \
             state added with app.init_state, and StatesPlugin in the app?); the state is left \
             as it is",
            state.get(),
            std::any::type_name::<S>()
        ),
    }
}

/// Whether `type_path` is Bevy's `State<S>`, which `register_saveable` would write without
/// its transitions.
pub(super) fn is_state_resource(type_path: &str) -> bool {
    type_path.starts_with("bevy_state::state::resources::State<")
}
