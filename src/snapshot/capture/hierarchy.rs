//! The order of the entity table: parents before children, siblings in order, and the dense
//! index each saved entity gets in it.

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;

/// Dense indices of the saved entities, looked up by entity index without hashing.
pub(crate) struct DenseIndex<'a> {
    entities: &'a [Entity],
    by_entity_index: Vec<u32>,
}

impl<'a> DenseIndex<'a> {
    pub(crate) fn new(entities: &'a [Entity]) -> Self {
        let len = entities
            .iter()
            .map(|entity| entity.index_u32() as usize + 1)
            .max()
            .unwrap_or(0);
        let mut by_entity_index = vec![u32::MAX; len];
        for (dense, entity) in entities.iter().enumerate() {
            by_entity_index[entity.index_u32() as usize] = dense as u32;
        }
        DenseIndex {
            entities,
            by_entity_index,
        }
    }

    pub(crate) fn get(&self, entity: Entity) -> Option<u32> {
        let dense = *self.by_entity_index.get(entity.index_u32() as usize)?;
        (self.entities.get(dense as usize) == Some(&entity)).then_some(dense)
    }
}

/// The parent and children of the saved entities that have any, read out of the world so the
/// order can be worked out without it (on the task pool, for an incremental capture).
#[derive(Default)]
pub(crate) struct Hierarchy {
    parents: EntityHashMap<Entity>,
    children: EntityHashMap<Vec<Entity>>,
}

impl Hierarchy {
    /// Reads `ChildOf` and `Children` of the entities of the saved archetypes that have them.
    pub(crate) fn collect(world: &World, archetypes: &[ArchetypeId]) -> Self {
        let mut hierarchy = Hierarchy::default();
        let ids = (
            world.component_id::<ChildOf>(),
            world.component_id::<Children>(),
        );
        for archetype in archetypes
            .iter()
            .filter_map(|&id| world.archetypes().get(id))
        {
            let has = |id: Option<ComponentId>| id.is_some_and(|id| archetype.contains(id));
            let (parents, children) = (has(ids.0), has(ids.1));
            if !parents && !children {
                continue;
            }
            for entity in archetype.entities().iter().map(|entity| entity.id()) {
                if let Some(child_of) = world.get::<ChildOf>(entity).filter(|_| parents) {
                    hierarchy.parents.insert(entity, child_of.parent());
                }
                if let Some(list) = world.get::<Children>(entity).filter(|_| children) {
                    hierarchy.children.insert(entity, list.to_vec());
                }
            }
        }
        hierarchy
    }

    /// Orders saved entities so that every parent comes before its children and siblings keep
    /// their order, which lets a load rebuild each `Children` list exactly.
    pub(crate) fn order(&self, matched: Vec<Entity>) -> Vec<Entity> {
        if self.parents.is_empty() && self.children.is_empty() {
            return matched;
        }
        let saved: EntityHashSet = matched.iter().copied().collect();
        let mut ordered = Vec::with_capacity(matched.len());
        let mut stack = Vec::new();
        for &root in &matched {
            let has_saved_parent = self
                .parents
                .get(&root)
                .is_some_and(|parent| saved.contains(parent));
            if has_saved_parent {
                continue;
            }
            stack.push(root);
            while let Some(entity) = stack.pop() {
                ordered.push(entity);
                if let Some(children) = self.children.get(&entity) {
                    stack.extend(children.iter().rev().filter(|child| saved.contains(*child)));
                }
            }
        }
        ordered
    }
}
