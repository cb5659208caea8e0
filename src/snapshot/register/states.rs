//! `States` in saves ([`register_saveable_state`](crate::snapshot::SaveableAppExt::register_saveable_state)):
//! the current state is saved as the `State<S>` resource, and a load (or a rewind) goes back to
//! it through `NextState<S>`, as play does, so `OnExit` / `OnEnter` run and `DespawnOnExit`
//! entities go. Writing `State<S>` itself would change the state without its transitions: the
//! game would read `Playing` with the menu still on screen.
//!
//! What a load does around the transitions (the saved resources first, the saved states
//! standing over what the transition systems ask for, when a state the game is in is entered
//! again) is `snapshot::load::states`; this file holds the typed operations it calls through
//! the registry entry ([`StateOps`]).
//!
//! `DespawnOnExit<S>` and `DespawnOnEnter<S>` are registered with it: saved entities scoped to
//! a state come back scoped to it.

use super::entry::{Entering, SaveableEntry, StateOps};
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::value::ViaReflect;
use bevy::ecs::component::ComponentId;
use bevy::ecs::schedule::Schedules;
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
    // Where a state is written as a plain resource (never, when a load enters its states
    // first; this keeps the transitions if it ever is).
    entry.insert_resource = |world, value| {
        enter_state::<S>(world, value, &[]);
    };
    entry.state = Some(StateOps {
        enter: enter_state::<S>,
        drop_pending: drop_pending::<S>,
    });
    entry
}

/// [`StateOps::enter`] for `S`.
fn enter_state<S>(world: &mut World, value: Box<dyn Reflect>, changed: &[ComponentId]) -> Entering
where
    S: FreelyMutableState,
    State<S>: Reflect,
{
    let Ok(state) = value.take::<State<S>>() else {
        return Entering::Stays;
    };
    let saved = state.get().clone();
    if !world.contains_resource::<NextState<S>>() {
        warn!(
            "keepsake: the save holds the state {saved:?}, but the app has no NextState<{}> (is \
             the state added with app.init_state, and StatesPlugin in the app?); the state is \
             left as it is",
            std::any::type_name::<S>()
        );
        return Entering::Stays;
    }
    let current = world.get_resource::<State<S>>().map(|s| s.get().clone());
    let entering = match current {
        Some(current) if current == saved => match reader_on_enter(world, &saved, changed) {
            Some(reader) => Entering::Reenters { reader },
            None => Entering::Stays,
        },
        _ => Entering::Changes,
    };
    let mut next = world.resource_mut::<NextState<S>>();
    match entering {
        Entering::Reenters { .. } => next.set(saved),
        // Also when staying: it replaces a change the game asked for before the load landed.
        Entering::Changes | Entering::Stays => next.set_if_different(saved),
    }
    entering
}

/// The first `OnEnter(state)` system that reads one of `resources`, by name. Bevy's access
/// model says what a system reads: an exclusive system (`&mut World`) reads everything. A
/// schedule never run has no access yet and counts as reading nothing; the game is in
/// `state`, so its `OnEnter` has run unless the state was set without a transition.
fn reader_on_enter<S: States>(
    world: &World,
    state: &S,
    resources: &[ComponentId],
) -> Option<String> {
    if resources.is_empty() {
        return None;
    }
    let schedule = world
        .get_resource::<Schedules>()?
        .get(OnEnter(state.clone()))?;
    let mut systems = schedule.systems_with_access().ok()?;
    let reader = systems.find(|(_, system)| {
        let access = system.access().to_filtered_access_set();
        let reads = access.combined_access();
        resources.iter().any(|&resource| reads.has_read(resource))
    })?;
    Some(reader.1.system().name().to_string())
}

/// [`StateOps::drop_pending`] for `S`.
fn drop_pending<S: FreelyMutableState>(world: &mut World) -> Option<String> {
    let mut next = world.get_resource_mut::<NextState<S>>()?;
    let asked = match &*next {
        NextState::Unchanged => return None,
        NextState::Pending(state) | NextState::PendingIfDifferent(state) => format!("{state:?}"),
    };
    next.reset();
    Some(asked)
}

/// Whether `type_path` is Bevy's `State<S>`, which `register_saveable` would write without
/// its transitions.
pub(super) fn is_state_resource(type_path: &str) -> bool {
    type_path.starts_with("bevy_state::state::resources::State<")
}
