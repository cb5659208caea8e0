//! A game's [`SaveSchema`], built from its [`SaveRegistry`] and type registry: what
//! `keepsake compat` checks kept saves against.

use super::registry::SaveRegistry;
use crate::snapshot::schema::file::{SaveSchema, SchemaType};
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;

impl SaveSchema {
    /// The schema of every type `registry` saves, with the layouts `types` gives them today.
    pub fn of_registry(registry: &SaveRegistry, types: &TypeRegistry) -> Self {
        let entries = registry.entries().iter().enumerate();
        let types = entries
            .map(|(index, entry)| SchemaType {
                type_path: entry.ops.type_path.to_owned(),
                kind: entry.kind,
                version: entry.version,
                // A version whose chain misses a step does not load: it is left out, so a
                // save of it is reported.
                migrates_from: (1..entry.version)
                    .filter(|version| matches!(entry.migration_path(*version), Some(Ok(_))))
                    .collect(),
                renamed_from: registry.renames_of(index),
                layout: entry.ops.layout(types),
            })
            .collect();
        SaveSchema::new(types)
    }

    /// The schema of the types `world` saves (its [`SaveRegistry`] and `AppTypeRegistry`);
    /// empty when nothing is registered.
    pub fn of_world(world: &World) -> Self {
        let Some(registry) = world.get_resource::<SaveRegistry>() else {
            return SaveSchema::default();
        };
        let types = world.resource::<AppTypeRegistry>().read();
        SaveSchema::of_registry(registry, &types)
    }

    /// The schema of the types `app` saves: `SaveSchema::of_app(&app).write_file("saves.schema")`.
    pub fn of_app(app: &App) -> Self {
        SaveSchema::of_world(app.world())
    }
}
