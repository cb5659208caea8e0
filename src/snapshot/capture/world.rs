//! What every capture reads from the world first: the saved types and the app's type registry,
//! and a debug line for the components on saved entities that saves leave out.

use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{SaveRegistry, unsaved_components};
use bevy::platform::sync::RwLockReadGuard;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;

/// What every capture reads first: the saved types and the app's type registry (read-locked).
pub(super) fn registries(
    world: &World,
) -> Result<(&SaveRegistry, RwLockReadGuard<'_, TypeRegistry>), SnapshotError> {
    let registry = world
        .get_resource::<SaveRegistry>()
        .ok_or(SnapshotError::NotSetUp("SaveRegistry"))?;
    if let Some(component) = registry.unsaved_filter_component() {
        return Err(SnapshotError::FilterNotSaved { component });
    }
    let types = world
        .get_resource::<AppTypeRegistry>()
        .ok_or(SnapshotError::NotSetUp("AppTypeRegistry"))?
        .read();
    Ok((registry, types))
}

/// Logs the component types on saved entities that saves leave out (the plugin warns about
/// them; a capture without the plugin only says so at debug level).
pub(super) fn log_unregistered(world: &World) {
    // Every full capture calls this (the benchmarks among them): look only when it is shown.
    if !bevy::log::tracing::enabled!(bevy::log::Level::DEBUG) {
        return;
    }
    let unsaved = unsaved_components(world);
    if !unsaved.is_empty() {
        let names: Vec<String> = (unsaved.iter())
            .map(|(_, unsaved)| unsaved.short_name())
            .collect();
        debug!(
            "keepsake: components not saved (not registered with register_saveable): {}",
            names.join(", ")
        );
    }
}
