//! What every capture reads from the world first: the saved types and the app's type registry,
//! and a debug line for the components on saved entities that are not registered.

use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::SaveRegistry;
use bevy::ecs::archetype::ArchetypeId;
use bevy::platform::sync::RwLockReadGuard;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::any::TypeId;
use std::collections::BTreeSet;

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

/// Logs the component types on saved entities that are not registered.
pub(super) fn log_unregistered(world: &World, registry: &SaveRegistry, archetypes: &[ArchetypeId]) {
    let registered: Vec<TypeId> = registry.entries().iter().map(|e| e.ops.type_id).collect();
    let quiet = [TypeId::of::<Children>()];
    let mut names = BTreeSet::new();
    for &id in archetypes {
        let Some(archetype) = world.archetypes().get(id) else {
            continue;
        };
        for component in archetype.iter_components() {
            let Some(info) = world.components().get_info(component) else {
                continue;
            };
            let known = info
                .type_id()
                .is_some_and(|t| registered.contains(&t) || quiet.contains(&t));
            if !known {
                names.insert(info.name().to_string());
            }
        }
    }
    if !names.is_empty() {
        debug!(
            "keepsake: components not saved (not registered with register_saveable): {}",
            names.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
}
