//! States first: before a load puts anything in place, it goes to the saved `States` through
//! their transitions (see `register_saveable_state`), so `OnExit` and `OnEnter` run as when the
//! player changes state, and what they start afresh is then replaced by the save's.

use crate::snapshot::register::SaveableEntry;
use bevy::prelude::*;
use bevy::state::state::StateTransition;

/// Takes the saved states out of `resources` and goes to them ([`enter_states`]); the rest of
/// the resources are applied afterwards, as usual.
pub(super) fn restore_states(
    world: &mut World,
    entries: &[SaveableEntry],
    resources: &mut Vec<(usize, Box<dyn Reflect>)>,
) {
    if !resources.iter().any(|(index, _)| entries[*index].state) {
        return;
    }
    let (states, rest): (Vec<_>, Vec<_>) = std::mem::take(resources)
        .into_iter()
        .partition(|(index, _)| entries[*index].state);
    *resources = rest;
    enter_states(world, entries, states);
}

/// Asks for each saved state (`(entry, State<S>)`) through its `NextState`, and runs the
/// `StateTransition` schedule (when the app has one: `StatesPlugin`). Returns whether there
/// was any state to go to.
pub(super) fn enter_states(
    world: &mut World,
    entries: &[SaveableEntry],
    states: Vec<(usize, Box<dyn Reflect>)>,
) -> bool {
    if states.is_empty() {
        return false;
    }
    for (index, state) in states {
        (entries[index].insert_resource)(world, state);
    }
    // Without StatesPlugin there is no schedule: the NextState waits for one, as in play.
    let _ = world.try_run_schedule(StateTransition);
    true
}
