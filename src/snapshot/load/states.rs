//! States first: before a load puts its entities in place, it goes to the saved `States`
//! through their transitions (see `register_saveable_state`), so `OnExit` and `OnEnter` run
//! as when the player changes state. In order:
//!
//! 1. each saved state is asked for through its `NextState` ([`StateOps::enter`]): a state
//!    that differs from the game's with `set_if_different`; the state the game is in again
//!    with `set` (its `OnExit` and `OnEnter` run again) when the load re-enters states
//!    ([`SameState::Reenter`]) and one of its `OnEnter` systems reads a resource the load
//!    changes, so what it builds (a settings screen) shows the saved values;
//! 2. when a transition is to run: the saved resources that differ from the world's are put
//!    in place first, so the transition systems read the saved values (not the resources that
//!    hold entities: their entities are not in place yet), then the `StateTransition`
//!    schedule runs;
//! 3. a change of a saved state that the transition systems asked for meanwhile (a menu's
//!    `OnEnter` that opens its first screen) is dropped: the saved state stands.
//!
//! The apply that follows puts the saved entities and resources in place over what the
//! transitions made: the saved values win over what `OnEnter` reset, and what it spawned that
//! the save does not hold is despawned with the other saved entities.

use crate::snapshot::register::{Entering, EntityMapping, SaveableEntry};
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use bevy::state::state::StateTransition;

/// Whether a load enters again a saved state the game is already in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SameState {
    /// When one of the state's `OnEnter` systems reads a resource the load changes: `OnExit`
    /// and `OnEnter` run again (Bevy's `NextState::set`), so what `OnEnter` builds from saved
    /// resources (a settings screen's checked button) shows the loaded values, and
    /// `DespawnOnExit` entities are despawned and built again. The default, for loads.
    #[default]
    Reenter,
    /// Never: a state the game is in runs no transition (`NextState::set_if_different`). For
    /// rewinds, which step back through moments of the same play and would otherwise build a
    /// level again at every step.
    Stay,
}

/// A saved resource and its value, as the states step reads it.
pub(super) type SavedResource<'a> = (usize, &'a dyn Reflect);

/// Takes the saved states out of `resources` and goes to them ([`enter_states`]); the rest of
/// the resources are applied afterwards, as usual.
pub(super) fn restore_states(
    world: &mut World,
    entries: &[SaveableEntry],
    resources: &mut Vec<(usize, Box<dyn Reflect>)>,
    same: SameState,
) {
    if !resources
        .iter()
        .any(|(index, _)| entries[*index].state.is_some())
    {
        return;
    }
    let (states, rest): (Vec<_>, Vec<_>) = std::mem::take(resources)
        .into_iter()
        .partition(|(index, _)| entries[*index].state.is_some());
    *resources = rest;
    let saved: Vec<SavedResource> = (resources.iter())
        .map(|(index, value)| (*index, value.as_ref()))
        .collect();
    enter_states(world, entries, states, &saved, same);
}

/// Goes to the saved states (`(entry, State<S>)`), the saved `resources` (the others) put in
/// place first when a transition runs (see the [module docs](self)). Returns whether a
/// transition ran (then the world changed).
pub(super) fn enter_states(
    world: &mut World,
    entries: &[SaveableEntry],
    states: Vec<(usize, Box<dyn Reflect>)>,
    resources: &[SavedResource],
    same: SameState,
) -> bool {
    if states.is_empty() {
        return false;
    }
    let changed = changed_resources(world, entries, resources);
    let reenter_on: Vec<ComponentId> = match same {
        SameState::Reenter => changed.iter().map(|&(_, id)| id).collect(),
        SameState::Stay => Vec::new(),
    };
    let state_entries: Vec<usize> = states.iter().map(|(index, _)| *index).collect();
    let mut transition = false;
    for (index, state) in states {
        let entry = &entries[index];
        let Some(ops) = entry.state else { continue };
        let entering = (ops.enter)(world, state, &reenter_on);
        if let Entering::Reenters { reader } = &entering {
            debug!(
                "keepsake: the load enters {} again: its OnEnter system {reader} reads a \
                 resource the load changes",
                entry.ops.type_path
            );
        }
        transition |= entering.runs_a_transition();
    }
    if !transition {
        return false;
    }
    put_in_place_first(world, entries, resources, &changed);
    // Without StatesPlugin there is no schedule: the NextState waits for one, as in play.
    let _ = world.try_run_schedule(StateTransition);
    keep_saved_states(world, entries, &state_entries);
    true
}

/// The saved resources whose values differ from the world's (or that it lacks), with their
/// component ids.
fn changed_resources(
    world: &mut World,
    entries: &[SaveableEntry],
    resources: &[SavedResource],
) -> Vec<(usize, ComponentId)> {
    let mut changed = Vec::new();
    for &(index, saved) in resources {
        let entry = &entries[index];
        let id = (entry.component_id)(world);
        if differs(world, entry, id, saved) {
            changed.push((index, id));
        }
    }
    changed
}

/// Whether the world's value of resource `id` differs from `saved`. A value reflection cannot
/// compare counts as differing.
fn differs(world: &World, entry: &SaveableEntry, id: ComponentId, saved: &dyn Reflect) -> bool {
    let Some(entity) = world.resource_entities().get(id) else {
        return true;
    };
    let Ok(entity) = world.get_entity(entity) else {
        return true;
    };
    (entry.get)(&entity)
        .is_none_or(|live| saved.reflect_partial_eq(live.as_partial_reflect()) != Some(true))
}

/// Writes copies of the `changed` resources into the world before the transitions, but the
/// ones that may hold entities: those come with their entities, in the apply.
fn put_in_place_first(
    world: &mut World,
    entries: &[SaveableEntry],
    resources: &[SavedResource],
    changed: &[(usize, ComponentId)],
) {
    let Some(types) = world.get_resource::<AppTypeRegistry>().cloned() else {
        return; // no reflection to tell which hold entities: all come in the apply
    };
    let types = types.read();
    for &(index, saved) in resources {
        let entry = &entries[index];
        let holds_entities = EntityMapping::of(Some(&types), entry).holds_entities();
        if !changed.iter().any(|&(at, _)| at == index) || holds_entities {
            continue;
        }
        match saved.reflect_clone() {
            Ok(copy) => (entry.insert_resource)(world, copy),
            // Comes in the apply, after the transitions.
            Err(error) => debug!(
                "keepsake: {} is put in place after the transitions: it cannot be copied \
                 ({error})",
                entry.ops.type_path
            ),
        }
    }
}

/// Drops the changes of the saved states that the transition systems asked for while the load
/// entered them: the saved states stand.
fn keep_saved_states(world: &mut World, entries: &[SaveableEntry], states: &[usize]) {
    for &index in states {
        let Some(ops) = entries[index].state else {
            continue;
        };
        if let Some(asked) = (ops.drop_pending)(world) {
            debug!(
                "keepsake: the load's {} stands: {asked}, asked for by a transition system \
                 while the load entered its states, is dropped",
                entries[index].ops.type_path
            );
        }
    }
}
