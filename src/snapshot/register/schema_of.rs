//! A game's [`SaveSchema`], built from its [`SaveRegistry`] and type registry: what
//! `keepsake compat` checks kept saves against.

use super::registry::SaveRegistry;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use keepsake_core::compat::{SaveSchema, SchemaSource, SchemaType};

impl SaveRegistry {
    /// The schema of every type this registry saves, with the layouts `types` gives them today.
    pub fn schema(&self, types: &TypeRegistry) -> SaveSchema {
        let entries = self.entries().iter().enumerate();
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
                renamed_from: self.renames_of(index),
                layout: entry.ops.layout(types),
            })
            .collect();
        SaveSchema::new(types)
    }
}

/// The marker that lets [`SaveSchema::of_app`] and [`SaveSchema::of_world`] take a Bevy `App`
/// or `World` (the schema type lives in the engine-free core; see [`SchemaSource`]).
pub struct BevySchema;

/// The types `world` saves (its [`SaveRegistry`] and `AppTypeRegistry`); empty when nothing
/// is registered.
impl SchemaSource<BevySchema> for World {
    fn save_schema(&self) -> SaveSchema {
        let Some(registry) = self.get_resource::<SaveRegistry>() else {
            return SaveSchema::default();
        };
        let types = self.resource::<AppTypeRegistry>().read();
        registry.schema(&types)
    }
}

/// The types `app` saves: `SaveSchema::of_app(&app).write_file("saves.schema")`.
impl SchemaSource<BevySchema> for App {
    fn save_schema(&self) -> SaveSchema {
        self.world().save_schema()
    }
}

/// `SaveSchema::of_world(&world)` where `world` is a `&mut World` (a system's or a test's).
impl SchemaSource<BevySchema> for &mut World {
    fn save_schema(&self) -> SaveSchema {
        (**self).save_schema()
    }
}

/// `SaveSchema::of_app(&app)` where `app` is a `&mut App`.
impl SchemaSource<BevySchema> for &mut App {
    fn save_schema(&self) -> SaveSchema {
        (**self).save_schema()
    }
}
