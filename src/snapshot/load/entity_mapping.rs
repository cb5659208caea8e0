//! Remapping the `Entity` fields of loaded values from the saving world's ids to the entities
//! a load spawned: the id map itself, and how each registered type's fields are reached.

use crate::snapshot::register::SaveableEntry;
use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

/// How each registered type's `Entity` fields are remapped: through `ReflectMapEntities` when
/// the type registers it (`#[reflect(MapEntities)]`, the way for resources), otherwise through
/// the component's own `#[entities]` fields. Never both, which would map twice.
pub(super) struct EntityFieldMappers<'a> {
    entries: &'a [SaveableEntry],
    reflected: Vec<Option<ReflectMapEntities>>,
}

impl<'a> EntityFieldMappers<'a> {
    pub(super) fn new(world: &World, entries: &'a [SaveableEntry]) -> Self {
        let reflected = match world.get_resource::<AppTypeRegistry>() {
            Some(types) => {
                let types = types.read();
                entries
                    .iter()
                    .map(|entry| {
                        types
                            .get_type_data::<ReflectMapEntities>(entry.ops.type_id)
                            .cloned()
                    })
                    .collect()
            }
            None => vec![None; entries.len()],
        };
        EntityFieldMappers { entries, reflected }
    }

    pub(super) fn map(
        &self,
        entry_index: usize,
        value: &mut dyn Reflect,
        mapper: &mut SavedEntityMapper,
    ) {
        match &self.reflected[entry_index] {
            Some(reflected) => reflected.map_entities(value.as_partial_reflect_mut(), mapper),
            None => (self.entries[entry_index].map_entities)(value, mapper),
        }
    }
}

/// Maps saved entity ids to the entities spawned for them.
pub(super) struct SavedEntityMapper {
    pub(super) map: EntityHashMap<Entity>,
    /// How many references pointed at entities that were not saved.
    pub(super) unmapped: usize,
}

impl SavedEntityMapper {
    /// Maps `saved_ids[i]` to `spawned[i]`.
    pub(super) fn new(saved_ids: &[Entity], spawned: &[Entity]) -> Self {
        SavedEntityMapper {
            map: saved_ids
                .iter()
                .copied()
                .zip(spawned.iter().copied())
                .collect(),
            unmapped: 0,
        }
    }
}

impl EntityMapper for SavedEntityMapper {
    fn get_mapped(&mut self, source: Entity) -> Entity {
        if source == Entity::PLACEHOLDER {
            return source;
        }
        self.map.get(&source).copied().unwrap_or_else(|| {
            self.unmapped += 1;
            Entity::PLACEHOLDER
        })
    }

    fn set_mapped(&mut self, source: Entity, target: Entity) {
        self.map.insert(source, target);
    }
}
