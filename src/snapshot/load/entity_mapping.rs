//! Remapping the `Entity` fields of loaded values from the saving world's ids to the entities
//! a load spawned, or, for references to keyed unsaved entities, to the live entities with
//! the same keys: the id map itself, and how each registered type's fields are reached.

use crate::snapshot::register::{EntityMapping, LevelKeys, SaveableEntry};
use crate::snapshot::value::reflect_walk::{Walk, walk};
use bevy::ecs::entity::{Entities, EntityHashMap};
use bevy::prelude::*;
use std::collections::HashMap;

/// A saved reference to an unsaved keyed entity that a load could not point at a live entity:
/// the reference now holds `Entity::PLACEHOLDER` (a relationship such as `ChildOf` is left
/// out).
#[derive(Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct DroppedReference {
    /// The type whose value held the reference.
    pub type_path: String,
    /// The field, from the type: `my_game::Opens.door`, `bevy_ecs::hierarchy::ChildOf.0`.
    pub field: String,
    /// The key of the entity it referenced.
    pub key: String,
    /// Why no live entity was found.
    pub reason: LevelKeyMiss,
}

/// Why a saved key reference found no live entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub enum LevelKeyMiss {
    /// No live entity has the key (the level changed, or was not spawned before the load).
    NoEntity,
    /// Several live entities have the key, so none was chosen.
    SeveralEntities,
}

impl std::fmt::Display for DroppedReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.reason {
            LevelKeyMiss::NoEntity => "no live entity has that level key",
            LevelKeyMiss::SeveralEntities => "several live entities have that level key",
        };
        write!(f, "{} → level key {:?}: {why}", self.field, self.key)
    }
}

/// How each registered type's `Entity` fields are remapped (see [`EntityMapping`]), by entry
/// index.
pub(super) struct EntityFieldMappers<'a> {
    entries: &'a [SaveableEntry],
    mappings: Vec<EntityMapping>,
}

impl<'a> EntityFieldMappers<'a> {
    pub(super) fn new(world: &World, entries: &'a [SaveableEntry]) -> Self {
        let types = world
            .get_resource::<AppTypeRegistry>()
            .map(|types| types.read());
        let mappings = (entries.iter())
            .map(|entry| EntityMapping::of(types.as_deref(), entry))
            .collect();
        EntityFieldMappers { entries, mappings }
    }

    /// Whether values of entry `entry_index`'s type can hold an `Entity`.
    pub(super) fn holds_entities(&self, entry_index: usize) -> bool {
        self.mappings[entry_index].holds_entities()
    }

    /// Remaps `value`'s entity references; records the ones to keys no live entity has.
    pub(super) fn map(
        &self,
        entry_index: usize,
        value: &mut dyn Reflect,
        mapper: &mut SavedEntityMapper<'_>,
    ) {
        // Most types hold no entity: nothing to map (a million values at 100k entities).
        if !self.holds_entities(entry_index) {
            return;
        }
        if !mapper.unresolved.is_empty() {
            let type_path = self.entries[entry_index].ops.type_path;
            mapper.note_unresolved(type_path, value.as_partial_reflect());
        }
        self.mappings[entry_index].map(value, mapper);
    }
}

/// Maps saved entity ids to the entities spawned for them, and keyed unsaved entities' ids to
/// the live entities with their keys.
pub(super) struct SavedEntityMapper<'w> {
    pub(super) map: EntityHashMap<Entity>,
    /// How many references pointed at entities that were neither saved nor keyed.
    pub(super) unmapped: usize,
    /// Keyed entities no single live entity answers to, by saved id.
    unresolved: EntityHashMap<(String, LevelKeyMiss)>,
    /// The references to them met so far.
    pub(super) dropped: Vec<DroppedReference>,
    /// For a snapshot of this world applied in place: its live entities, which an id the map
    /// does not hold still names (the saved entities kept in place among them).
    alive: Option<&'w Entities>,
}

impl SavedEntityMapper<'static> {
    /// Maps `saved_ids[i]` to `spawned[i]`, and each keyed id to the live entity `live` finds
    /// for its key.
    pub(super) fn new(saved_ids: &[Entity], spawned: &[Entity], keys: ResolvedKeys) -> Self {
        let mut map = EntityHashMap::default();
        map.extend(saved_ids.iter().copied().zip(spawned.iter().copied()));
        SavedEntityMapper::with_map(map, keys, None)
    }
}

impl<'w> SavedEntityMapper<'w> {
    /// Maps through `map`, then the keys; with `alive`, an id neither maps is kept when it
    /// names a live entity of this world.
    pub(super) fn with_map(
        mut map: EntityHashMap<Entity>,
        keys: ResolvedKeys,
        alive: Option<&'w Entities>,
    ) -> Self {
        map.extend(keys.found);
        SavedEntityMapper {
            map,
            unmapped: 0,
            unresolved: keys.missing,
            dropped: Vec::new(),
            alive,
        }
    }

    /// Records the fields of `value` that reference unresolved keyed entities.
    fn note_unresolved(&mut self, type_path: &str, value: &dyn PartialReflect) {
        walk(type_path.to_owned(), value, &mut |path, part| {
            let Some(entity) = part.try_downcast_ref::<Entity>() else {
                return Walk::Into;
            };
            if let Some((key, reason)) = self.unresolved.get(entity) {
                self.dropped.push(DroppedReference {
                    type_path: type_path.to_owned(),
                    field: path.to_owned(),
                    key: key.clone(),
                    reason: *reason,
                });
            }
            Walk::Skip
        });
    }
}

impl EntityMapper for SavedEntityMapper<'_> {
    fn get_mapped(&mut self, source: Entity) -> Entity {
        if source == Entity::PLACEHOLDER {
            return source;
        }
        if let Some(&mapped) = self.map.get(&source) {
            return mapped;
        }
        if self
            .alive
            .is_some_and(|alive| alive.contains_spawned(source))
        {
            return source;
        }
        // References to unresolved keys are listed by field (`note_unresolved`), not counted.
        if !self.unresolved.contains_key(&source) {
            self.unmapped += 1;
        }
        Entity::PLACEHOLDER
    }

    fn set_mapped(&mut self, source: Entity, target: Entity) {
        self.map.insert(source, target);
    }
}

/// The key table resolved against the live world.
#[derive(Default)]
pub(super) struct ResolvedKeys {
    /// Saved id → the one live entity with its key.
    found: EntityHashMap<Entity>,
    /// Saved id → its key and why no entity answers to it.
    missing: EntityHashMap<(String, LevelKeyMiss)>,
}

impl ResolvedKeys {
    /// The saved ids of keyed entities that now name another entity, or none.
    pub(super) fn moved(&self) -> impl Iterator<Item = Entity> + '_ {
        let found = self.found.iter().filter(|(saved, live)| saved != live);
        let found = found.map(|(saved, _)| *saved);
        found.chain(self.missing.keys().copied())
    }

    /// Finds, for each stored key, the one live entity of `world` that has it.
    pub(super) fn resolve(world: &World, source: LevelKeys, keys: Vec<(Entity, String)>) -> Self {
        let mut resolved = ResolvedKeys::default();
        if keys.is_empty() {
            return resolved;
        }
        let mut live: HashMap<&str, Result<Entity, LevelKeyMiss>> = HashMap::new();
        for keyed in source.collect(world, |_| true) {
            live.entry(keyed.key)
                .and_modify(|found| *found = Err(LevelKeyMiss::SeveralEntities))
                .or_insert(Ok(keyed.entity));
        }
        for (saved, key) in keys {
            match live
                .get(key.as_str())
                .copied()
                .unwrap_or(Err(LevelKeyMiss::NoEntity))
            {
                Ok(entity) => {
                    resolved.found.insert(saved, entity);
                }
                Err(miss) => {
                    resolved.missing.insert(saved, (key, miss));
                }
            }
        }
        resolved
    }
}
