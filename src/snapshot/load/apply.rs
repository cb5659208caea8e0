//! Decoded values → World. [`LoadMode::InPlace`] goes through the in-place apply (see
//! `in_place`); the other modes take these steps, in order: despawn the entities the save
//! filter matches (when replacing), spawn one empty entity per saved entity, look up what each
//! registered type needs in this world, insert each entity's components (entity references
//! remapped, relationships kept only when their target was saved), insert the resources, warn
//! about lost references.

use super::decode::{DecodedColumn, DecodedSnapshot, DroppedField, SkippedType};
use super::dynamic_bundle::DynamicBundle;
use super::entity_mapping::{
    DroppedReference, EntityFieldMappers, ResolvedKeys, SavedEntityMapper,
};
use super::in_place::{self, EntityRecord, SavedIds};
use crate::snapshot::capture::CaptureCache;
use crate::snapshot::register::SaveFilter;
use crate::snapshot::register::SaveableEntry;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::relationship::RelationshipAccessor;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;

/// What a load does with the entities already in the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoadMode {
    /// Despawn every entity the save filter matches (with its children), then spawn the saved
    /// ones: the world's saved state becomes exactly the save's, every saved entity gets a new
    /// id, and hooks and observers see every component added again.
    #[default]
    Replace,
    /// Spawn the saved entities beside the existing ones.
    Merge,
    /// The snapshot was captured from this world: keep each saved entity that is still alive
    /// and saved, writing only the values that differ, inserting and removing only the types
    /// that differ; spawn the rest and despawn the saved entities the snapshot does not hold.
    /// The world's saved state becomes the save's, as with [`Replace`](Self::Replace), and the
    /// entities kept keep their ids. See [`apply_in_place`](crate::snapshot::apply_in_place)
    /// for what hooks and observers see. Through [`apply`], this mode captures the whole world
    /// first to compare it (the plugin compares with its capture cache instead).
    InPlace,
}

/// What applying a snapshot did.
#[derive(Clone, Debug, Default)]
pub struct ApplyReport {
    /// Saved entity id → the entity spawned for it.
    pub entity_map: EntityHashMap<Entity>,
    /// Entities despawned first ([`LoadMode::Replace`]).
    pub despawned: usize,
    /// References to entities that were neither saved nor keyed (see
    /// [`SaveKey`](crate::snapshot::SaveKey)), now pointing at `Entity::PLACEHOLDER`.
    pub unmapped_references: usize,
    /// References to keyed unsaved entities that no single live entity answers to, by type,
    /// field and key: now `Entity::PLACEHOLDER` (a `ChildOf` among them is left out).
    pub dropped_references: Vec<DroppedReference>,
    /// Relationship components (such as `ChildOf`) left out because their target was not
    /// saved: the entity is loaded without that relationship (a child becomes a root).
    pub dropped_relationships: usize,
    /// Stored types that were skipped.
    pub skipped_types: Vec<SkippedType>,
    /// Stored fields their types no longer have, dropped on load.
    pub dropped_fields: Vec<DroppedField>,
    /// Saved entities kept in place (an in-place apply): their ids did not change, and
    /// [`entity_map`](Self::entity_map) leaves them out.
    pub kept: usize,
    /// Values written over a kept entity's different one.
    pub written: usize,
    /// Components inserted into kept entities that lacked them.
    pub inserted: usize,
    /// Components removed from kept entities whose saved ones lack them.
    pub removed: usize,
    /// Saved entities spawned.
    pub spawned: usize,
}

/// Applies a validated snapshot to the world and returns how saved entities were mapped.
///
/// With [`LoadMode::InPlace`], saved entities alive in this world are kept (see the mode), and
/// [`ApplyReport::entity_map`] lists only the saved entities whose id changed.
///
/// Entity references inside values (`Entity` fields of components that map entities, and
/// `ChildOf`) are remapped to the new entities, and references to keyed unsaved entities (see
/// [`SaveKey`](crate::snapshot::SaveKey)) to the live entities with the same keys; a key no
/// single live entity has is listed in [`ApplyReport::dropped_references`] and warned about
/// once. A reference to an entity that was neither saved nor keyed becomes
/// `Entity::PLACEHOLDER`, counted in [`ApplyReport::unmapped_references`] and logged as
/// a warning; a relationship such as `ChildOf` whose target was not saved is left out instead
/// (the child loads as a root), counted in [`ApplyReport::dropped_relationships`]. Relationship
/// targets (`Children`) are never inserted directly: Bevy rebuilds them from the sources.
pub fn apply(world: &mut World, snapshot: DecodedSnapshot, mode: LoadMode) -> ApplyReport {
    if mode == LoadMode::InPlace {
        return apply_in_place_captured(world, snapshot);
    }
    respawn(world, snapshot, mode)
}

/// [`LoadMode::InPlace`] through [`apply`]: the world is captured whole to be compared.
fn apply_in_place_captured(world: &mut World, snapshot: DecodedSnapshot) -> ApplyReport {
    match CaptureCache::default().capture(world) {
        Ok(live) => {
            let mut record = EntityRecord::new(SavedIds::ThisWorld);
            in_place::apply_in_place(world, snapshot, &live, &mut record)
        }
        Err(error) => {
            warn!("keepsake: the world could not be compared ({error}); respawning instead");
            respawn(world, snapshot, LoadMode::Replace)
        }
    }
}

/// [`LoadMode::Replace`] and [`LoadMode::Merge`].
fn respawn(world: &mut World, snapshot: DecodedSnapshot, mode: LoadMode) -> ApplyReport {
    let DecodedSnapshot {
        registry,
        saved_ids,
        keys,
        components,
        resources,
        resources_raw: _,
        skipped,
        dropped_fields,
        refused_asset_paths: _,
    } = snapshot;

    let despawned = match mode {
        LoadMode::Replace | LoadMode::InPlace => despawn_saved_entities(world, registry.filter()),
        LoadMode::Merge => 0,
    };
    // Keys are looked up before the spawn: a reference into the level means the level's
    // entity, never one this load brings.
    let keys = ResolvedKeys::resolve(world, registry.entity_keys(), keys);
    let spawned = spawn_empty_entities(world, saved_ids.len());
    let mut mapper = SavedEntityMapper::new(&saved_ids, &spawned, keys);
    let types = WorldTypes::new(world, registry.entries());
    let dropped_relationships = insert_components(world, &types, &spawned, components, &mut mapper);
    insert_resources(world, &types, resources, &mut mapper);
    warn_mapping(dropped_relationships, mapper.unmapped, &mapper.dropped);

    ApplyReport {
        entity_map: mapper.map,
        despawned,
        unmapped_references: mapper.unmapped,
        dropped_references: mapper.dropped,
        dropped_relationships,
        skipped_types: skipped,
        dropped_fields,
        spawned: spawned.len(),
        ..ApplyReport::default()
    }
}

/// The warnings of a load about references it could not keep.
pub(super) fn warn_mapping(relationships: usize, unmapped: usize, dropped: &[DroppedReference]) {
    warn_dropped_relationships(relationships);
    warn_unmapped_references(unmapped);
    warn_dropped_references(dropped);
}

/// Despawns the entities `filter` matches (the ones a save would capture) and returns how many.
fn despawn_saved_entities(world: &mut World, filter: &SaveFilter) -> usize {
    let (existing, _) = filter
        .resolve(world)
        .map(|filter| filter.matching_entities(world))
        .unwrap_or_default();
    let mut despawned = 0;
    for entity in existing {
        // A child may already be gone with its parent.
        if world.get_entity(entity).is_ok() && world.despawn(entity) {
            despawned += 1;
        }
    }
    despawned
}

/// Spawns one empty entity per saved entity, in entity table order.
fn spawn_empty_entities(world: &mut World, count: usize) -> Vec<Entity> {
    (0..count).map(|_| world.spawn_empty().id()).collect()
}

/// Inserts the component values into the spawned entities, each entity's in one archetype
/// move, taking them from the front of every column in turn (each is sorted by entity). Returns
/// how many relationships were left out.
fn insert_components(
    world: &mut World,
    types: &WorldTypes<'_>,
    spawned: &[Entity],
    components: Vec<DecodedColumn>,
    mapper: &mut SavedEntityMapper<'_>,
) -> usize {
    let mut dropped_relationships = 0;
    let mut bundle = DynamicBundle::default();
    let mut columns: Vec<_> = components
        .into_iter()
        .map(|column| (column.entry, column.rows.into_iter().peekable()))
        .collect();
    for (entity_index, &entity) in (0u32..).zip(spawned) {
        let values = columns.iter_mut().filter_map(|(entry, rows)| {
            let (_, value) = rows.next_if(|&(index, _)| index == entity_index)?;
            Some((*entry, value))
        });
        let mut entity = world.entity_mut(entity);
        dropped_relationships +=
            insert_entity_components(&mut entity, values, types, mapper, &mut bundle);
    }
    dropped_relationships
}

/// Remaps one entity's values and inserts them. Returns how many relationships were left out.
fn insert_entity_components(
    entity: &mut EntityWorldMut,
    values: impl Iterator<Item = (usize, Box<dyn Reflect>)>,
    types: &WorldTypes<'_>,
    mapper: &mut SavedEntityMapper<'_>,
    bundle: &mut DynamicBundle,
) -> usize {
    let mut dropped_relationships = 0;
    for (entry_index, mut value) in values {
        types.field_mappers.map(entry_index, value.as_mut(), mapper);
        match types.placement(entry_index, value.as_ref(), entity.world()) {
            Placement::Typed => (types.entries[entry_index].insert)(entity, value),
            Placement::Bundle => bundle.push(types.component_ids[entry_index], value),
            Placement::RebuiltByBevy => {}
            Placement::DroppedRelationship => dropped_relationships += 1,
        }
    }
    bundle.insert_into(entity);
    dropped_relationships
}

/// Remaps the resources' entity references and inserts them.
fn insert_resources(
    world: &mut World,
    types: &WorldTypes<'_>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
    mapper: &mut SavedEntityMapper<'_>,
) {
    for (entry_index, mut value) in resources {
        types.field_mappers.map(entry_index, value.as_mut(), mapper);
        (types.entries[entry_index].insert_resource)(world, value);
    }
}

fn warn_dropped_relationships(dropped: usize) {
    if dropped > 0 {
        warn!(
            "keepsake: {dropped} relationship(s) (such as ChildOf) pointed at entities that were not saved and were left out"
        );
    }
}

/// One warning for the whole load, listing every dropped keyed reference.
fn warn_dropped_references(dropped: &[DroppedReference]) {
    if dropped.is_empty() {
        return;
    }
    let list: Vec<String> = dropped.iter().map(ToString::to_string).collect();
    warn!(
        "keepsake: {} reference(s) into the level found no entity and now point at Entity::PLACEHOLDER: {}",
        dropped.len(),
        list.join("; ")
    );
}

fn warn_unmapped_references(unmapped: usize) {
    if unmapped > 0 {
        warn!(
            "keepsake: {unmapped} reference(s) to entities that were not saved now point at Entity::PLACEHOLDER"
        );
    }
}

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
