//! What applying needs to know about each registered type in the world it applies to: its
//! component id, how its entity references are remapped, and its side of a relationship (which
//! decides how a value is inserted).

use super::entity_mapping::EntityFieldMappers;
use crate::snapshot::register::SaveableEntry;
use bevy::ecs::component::ComponentId;
use bevy::ecs::relationship::RelationshipAccessor;
use bevy::prelude::*;

/// What applying needs to know about each registered type in this world, by entry index.
pub(super) struct WorldTypes<'a> {
    pub(super) entries: &'a [SaveableEntry],
    pub(super) field_mappers: EntityFieldMappers<'a>,
    pub(super) component_ids: Vec<ComponentId>,
    relationships: Vec<RelationshipKind>,
}

/// How one decoded component value is inserted.
pub(super) enum Placement {
    /// With the other components of its entity, in one archetype move.
    Bundle,
    /// On its own, through the type's typed insert (a value whose concrete type is not the
    /// component's, which the untyped bundle cannot hold).
    Typed,
    /// Not at all: a relationship target (`Children`), which Bevy rebuilds from the sources.
    RebuiltByBevy,
    /// Not at all: a relationship (`ChildOf`) whose target was not saved.
    DroppedRelationship,
}

impl<'a> WorldTypes<'a> {
    /// Registers every entry's component in `world` (so ids exist) and reads its relationship
    /// role.
    pub(super) fn new(world: &mut World, entries: &'a [SaveableEntry]) -> Self {
        let field_mappers = EntityFieldMappers::new(world, entries);
        let component_ids: Vec<ComponentId> = entries
            .iter()
            .map(|entry| (entry.component_id)(world))
            .collect();
        // Bevy describes a relationship only once both of its sides are registered.
        world.register_component::<Children>();
        let relationships = component_ids
            .iter()
            .map(|&id| RelationshipKind::of(world, id))
            .collect();
        WorldTypes {
            entries,
            field_mappers,
            component_ids,
            relationships,
        }
    }

    /// Whether entry `entry_index` is a relationship target (`Children`), which Bevy keeps
    /// right from the sources and which is never inserted or removed directly.
    pub(super) fn rebuilt_by_bevy(&self, entry_index: usize) -> bool {
        matches!(self.relationships[entry_index], RelationshipKind::Target)
    }

    /// How a value of entry `entry_index`, already remapped, is inserted into `world`.
    pub(super) fn placement(
        &self,
        entry_index: usize,
        value: &dyn Reflect,
        world: &World,
    ) -> Placement {
        if value.as_any().type_id() != self.entries[entry_index].ops.type_id {
            return Placement::Typed;
        }
        match self.relationships[entry_index] {
            RelationshipKind::Target => Placement::RebuiltByBevy,
            RelationshipKind::Source { entity_offset } => {
                // SAFETY: the value's concrete type is the component's type (checked above),
                // and Bevy reports `entity_offset` as the offset of its `Entity` field.
                let target = unsafe {
                    (value as *const dyn Reflect)
                        .cast::<u8>()
                        .add(entity_offset)
                        .cast::<Entity>()
                        .read_unaligned()
                };
                if target == Entity::PLACEHOLDER || world.get_entity(target).is_err() {
                    Placement::DroppedRelationship
                } else {
                    Placement::Bundle
                }
            }
            RelationshipKind::None => Placement::Bundle,
        }
    }
}

/// Whether a component is one side of a relationship (`ChildOf` / `Children` and the like).
#[derive(Clone, Copy)]
enum RelationshipKind {
    None,
    /// Holds the target entity at this byte offset; inserting it updates the target.
    Source {
        entity_offset: usize,
    },
    /// The collection side, maintained by Bevy from the sources.
    Target,
}

impl RelationshipKind {
    fn of(world: &World, id: ComponentId) -> Self {
        match world
            .components()
            .get_info(id)
            .and_then(|info| info.relationship_accessor())
        {
            Some(RelationshipAccessor::Relationship {
                entity_field_offset,
                ..
            }) => RelationshipKind::Source {
                entity_offset: *entity_field_offset,
            },
            Some(RelationshipAccessor::RelationshipTarget { .. }) => RelationshipKind::Target,
            None => RelationshipKind::None,
        }
    }
}
