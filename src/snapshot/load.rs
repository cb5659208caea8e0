//! `ecs_blob` → validated values (off the main thread if wanted) → World.

use super::blob::{BLOB_VERSION, BlobReader, ColumnKind, state_hash};
use super::error::SnapshotError;
use super::registry::{ConvertFn, SaveRegistry, SaveableEntry, TypeKind, TypeOps};
use super::value::ValueReader;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::ecs::relationship::RelationshipAccessor;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::ptr::OwningPtr;
use bevy::reflect::TypeRegistry;
use std::alloc::Layout;
use std::ptr::NonNull;

/// A decoded component value: (entity index, registry entry index, value).
type DecodedValue = (u32, usize, Box<dyn Reflect>);

/// What a load does with the entities already in the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoadMode {
    /// Despawn every entity the save filter matches (with its children), then spawn the saved
    /// ones: the world's saved state becomes exactly the save's.
    #[default]
    Replace,
    /// Spawn the saved entities beside the existing ones.
    Merge,
}

/// A stored column whose type this build does not register; its values were skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedType {
    /// The stored type path.
    pub type_path: String,
    /// How many values were skipped.
    pub values: usize,
}

/// A snapshot decoded and validated against the registry, ready to be applied.
///
/// Holds every value already converted to its registered type, so applying cannot fail.
pub struct DecodedSnapshot {
    registry: SaveRegistry,
    saved_ids: Vec<Entity>,
    /// (entity index, entry index, value), sorted by entity index.
    components: Vec<DecodedValue>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
    skipped: Vec<SkippedType>,
}

impl DecodedSnapshot {
    /// How many entities the snapshot spawns.
    pub fn entity_count(&self) -> usize {
        self.saved_ids.len()
    }

    /// Stored types this build does not register (their values are skipped).
    pub fn skipped_types(&self) -> &[SkippedType] {
        &self.skipped
    }
}

/// What applying a snapshot did.
#[derive(Clone, Debug, Default)]
pub struct ApplyReport {
    /// Saved entity id → the entity spawned for it.
    pub entity_map: EntityHashMap<Entity>,
    /// Entities despawned first ([`LoadMode::Replace`]).
    pub despawned: usize,
    /// References to entities that were not saved, now pointing at `Entity::PLACEHOLDER`.
    pub unmapped_references: usize,
    /// Relationship components (such as `ChildOf`) left out because their target was not
    /// saved: the entity is loaded without that relationship (a child becomes a root).
    pub dropped_relationships: usize,
    /// Stored types that were skipped.
    pub skipped_types: Vec<SkippedType>,
}

/// Decodes and validates a blob completely, without touching any world.
///
/// Checks the hash, the layout, every entity index and every value against the registered
/// types (running migrations for older schema versions). Stored types that are no longer
/// registered are skipped with a warning. Any other problem is an error naming the type and the
/// entity index.
pub fn decode(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
) -> Result<DecodedSnapshot, SnapshotError> {
    let computed = state_hash(blob);
    if computed != expected_hash {
        return Err(SnapshotError::HashMismatch {
            stored: expected_hash,
            computed,
        });
    }
    let mut reader = BlobReader::new(blob);
    let version = reader.byte("layout version")?;
    if version > BLOB_VERSION {
        return Err(SnapshotError::NewerLayout {
            found: version,
            supported: BLOB_VERSION,
        });
    }
    if version == 0 {
        return Err(malformed(0, "layout version 0 does not exist"));
    }

    let saved_ids = read_entity_table(&mut reader)?;
    let entity_count = saved_ids.len() as u32;
    let mut decoded = DecodedSnapshot {
        registry: registry.clone(),
        saved_ids,
        components: Vec::new(),
        resources: Vec::new(),
        skipped: Vec::new(),
    };

    let column_count = reader.u32_count("column count")?;
    // For each entity, the last column that stored a value for it (to catch duplicates).
    let mut last_column_of = vec![u32::MAX; entity_count as usize];
    let mut seen_entries = Vec::with_capacity(column_count);
    for _ in 0..column_count {
        let type_path = reader.str_with_len("type path")?;
        let version = reader.varint_u32("type version")?;
        let kind_offset = reader.offset();
        let kind = match reader.byte("column kind")? {
            0 => ColumnKind::Component,
            1 => ColumnKind::Resource,
            other => return Err(malformed(kind_offset, format!("column kind {other}"))),
        };
        let rows = reader.u32_count("row count")?;

        let Some((entry_index, entry)) = registry.lookup(type_path) else {
            skip_rows(&mut reader, kind, rows)?;
            warn!(
                "keepsake: skipped {rows} stored value(s) of {type_path}, which is not registered"
            );
            decoded.skipped.push(SkippedType {
                type_path: type_path.to_owned(),
                values: rows,
            });
            continue;
        };
        if seen_entries.contains(&entry_index) {
            return Err(SnapshotError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: None,
            });
        }
        seen_entries.push(entry_index);
        let value_error = |entity_index, reason: String| SnapshotError::Value {
            type_path: type_path.to_owned(),
            entity_index,
            reason,
        };
        let expected_kind = match entry.kind {
            TypeKind::Component => ColumnKind::Component,
            TypeKind::Resource => ColumnKind::Resource,
        };
        if kind != expected_kind {
            return Err(value_error(
                None,
                format!("stored as a {kind:?} but registered as a {:?}", entry.kind),
            ));
        }
        let decoder = ColumnDecoder::new(entry, type_path, version, types)?;

        match kind {
            ColumnKind::Resource => {
                if rows != 1 {
                    return Err(value_error(
                        None,
                        format!("{rows} values stored for a resource"),
                    ));
                }
                let bytes = reader.bytes_with_len("resource value")?;
                let value = decoder
                    .read(bytes)
                    .map_err(|reason| value_error(None, reason))?;
                decoded.resources.push((entry_index, value));
            }
            ColumnKind::Component => {
                decoded.components.reserve(rows);
                let column = seen_entries.len() as u32;
                let mut previous = 0u64;
                for _ in 0..rows {
                    previous = reader.delta(previous, "entity index")?;
                    let entity_index = u32::try_from(previous).unwrap_or(u32::MAX);
                    if previous >= u64::from(entity_count) {
                        return Err(SnapshotError::EntityIndexOutOfRange {
                            type_path: type_path.to_owned(),
                            entity_index,
                            entity_count,
                        });
                    }
                    let last_column = &mut last_column_of[entity_index as usize];
                    if *last_column == column {
                        return Err(SnapshotError::Duplicate {
                            type_path: type_path.to_owned(),
                            entity_index: Some(entity_index),
                        });
                    }
                    *last_column = column;
                    let bytes = reader.bytes_with_len("component value")?;
                    let value = decoder
                        .read(bytes)
                        .map_err(|reason| value_error(Some(entity_index), reason))?;
                    decoded.components.push((entity_index, entry_index, value));
                }
            }
        }
    }
    if !reader.is_empty() {
        return Err(malformed(
            reader.offset(),
            format!(
                "{} unexpected bytes after the last column",
                reader.remaining()
            ),
        ));
    }

    decoded.components = group_by_entity(
        std::mem::take(&mut decoded.components),
        entity_count as usize,
    );
    Ok(decoded)
}

/// Orders values by entity (a stable counting sort: each entity's values keep column order).
fn group_by_entity(values: Vec<DecodedValue>, entity_count: usize) -> Vec<DecodedValue> {
    let mut next = vec![0usize; entity_count + 1];
    for &(entity, _, _) in &values {
        next[entity as usize + 1] += 1;
    }
    for i in 1..next.len() {
        next[i] += next[i - 1];
    }
    let mut slots: Vec<Option<DecodedValue>> =
        std::iter::repeat_with(|| None).take(values.len()).collect();
    for value in values {
        let position = &mut next[value.0 as usize];
        slots[*position] = Some(value);
        *position += 1;
    }
    slots.into_iter().flatten().collect()
}

/// Applies a validated snapshot to the world and returns how saved entities were mapped.
///
/// Entity references inside values (`Entity` fields of components that map entities, and
/// `ChildOf`) are remapped to the new entities. A reference to an entity that was not saved
/// becomes `Entity::PLACEHOLDER`, counted in [`ApplyReport::unmapped_references`] and logged as
/// a warning; a relationship such as `ChildOf` whose target was not saved is left out instead
/// (the child loads as a root), counted in [`ApplyReport::dropped_relationships`]. Relationship
/// targets (`Children`) are never inserted directly: Bevy rebuilds them from the sources.
pub fn apply(world: &mut World, snapshot: DecodedSnapshot, mode: LoadMode) -> ApplyReport {
    let DecodedSnapshot {
        registry,
        saved_ids,
        components,
        resources,
        skipped,
    } = snapshot;

    let mut despawned = 0;
    if mode == LoadMode::Replace {
        let (existing, _) = registry
            .filter()
            .resolve(world)
            .map(|filter| filter.matching_entities(world))
            .unwrap_or_default();
        for entity in existing {
            // A child may already be gone with its parent.
            if world.get_entity(entity).is_ok() && world.despawn(entity) {
                despawned += 1;
            }
        }
    }

    let spawned: Vec<Entity> = saved_ids.iter().map(|_| world.spawn_empty().id()).collect();
    let mut mapper = SavedEntityMapper {
        map: saved_ids
            .iter()
            .copied()
            .zip(spawned.iter().copied())
            .collect(),
        unmapped: 0,
    };

    let entries = registry.entries();
    let mappers = EntityFieldMappers::new(world, entries);
    let component_ids: Vec<ComponentId> = entries
        .iter()
        .map(|entry| (entry.component_id)(world))
        .collect();
    // Bevy describes a relationship only once both of its sides are registered.
    world.register_component::<Children>();
    let relationships: Vec<RelationshipKind> = component_ids
        .iter()
        .map(|&id| RelationshipKind::of(world, id))
        .collect();
    let mut dropped_relationships = 0;
    let mut bundle = DynamicBundle::default();
    let mut components = components.into_iter().peekable();
    while let Some(&(entity_index, _, _)) = components.peek() {
        let mut entity = world.entity_mut(spawned[entity_index as usize]);
        while let Some((_, entry_index, mut value)) =
            components.next_if(|(index, _, _)| *index == entity_index)
        {
            mappers.map(entry_index, value.as_mut(), &mut mapper);
            let entry = &entries[entry_index];
            if value.as_any().type_id() != entry.ops.type_id {
                (entry.insert)(&mut entity, value);
                continue;
            }
            match relationships[entry_index] {
                // Rebuilt from the relationship components themselves.
                RelationshipKind::Target => continue,
                RelationshipKind::Source { entity_offset } => {
                    // SAFETY: the value's concrete type is the component's type (checked above),
                    // and Bevy reports `entity_offset` as the offset of its `Entity` field.
                    let target = unsafe {
                        (value.as_ref() as *const dyn Reflect)
                            .cast::<u8>()
                            .add(entity_offset)
                            .cast::<Entity>()
                            .read_unaligned()
                    };
                    if target == Entity::PLACEHOLDER || entity.world().get_entity(target).is_err() {
                        dropped_relationships += 1;
                        continue;
                    }
                }
                RelationshipKind::None => {}
            }
            bundle.push(component_ids[entry_index], value);
        }
        bundle.insert_into(&mut entity);
    }
    if dropped_relationships > 0 {
        warn!(
            "keepsake: {dropped_relationships} relationship(s) (such as ChildOf) pointed at entities that were not saved and were left out"
        );
    }
    for (entry_index, mut value) in resources {
        mappers.map(entry_index, value.as_mut(), &mut mapper);
        (entries[entry_index].insert_resource)(world, value);
    }

    if mapper.unmapped > 0 {
        warn!(
            "keepsake: {} reference(s) to entities that were not saved now point at Entity::PLACEHOLDER",
            mapper.unmapped
        );
    }
    ApplyReport {
        entity_map: mapper.map,
        despawned,
        unmapped_references: mapper.unmapped,
        dropped_relationships,
        skipped_types: skipped,
    }
}

/// How each registered type's `Entity` fields are remapped: through `ReflectMapEntities` when
/// the type registers it (`#[reflect(MapEntities)]`, the way for resources), otherwise through
/// the component's own `#[entities]` fields. Never both, which would map twice.
struct EntityFieldMappers<'a> {
    entries: &'a [SaveableEntry],
    reflected: Vec<Option<ReflectMapEntities>>,
}

impl<'a> EntityFieldMappers<'a> {
    fn new(world: &World, entries: &'a [SaveableEntry]) -> Self {
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

    fn map(&self, entry_index: usize, value: &mut dyn Reflect, mapper: &mut SavedEntityMapper) {
        match &self.reflected[entry_index] {
            Some(reflected) => reflected.map_entities(value.as_partial_reflect_mut(), mapper),
            None => (self.entries[entry_index].map_entities)(value, mapper),
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

/// The components of one entity, inserted together (one archetype move instead of one per
/// component).
#[derive(Default)]
struct DynamicBundle {
    ids: Vec<ComponentId>,
    values: Vec<(*mut dyn Reflect, Layout)>,
}

impl DynamicBundle {
    /// Adds a value whose concrete type is the component `id`'s type (checked by the caller).
    fn push(&mut self, id: ComponentId, value: Box<dyn Reflect>) {
        let layout = Layout::for_value(&*value);
        self.ids.push(id);
        self.values.push((Box::into_raw(value), layout));
    }

    fn insert_into(&mut self, entity: &mut EntityWorldMut) {
        if self.ids.is_empty() {
            return;
        }
        let pointers = self.values.iter().map(|&(raw, _)| {
            // SAFETY: `raw` comes from `Box::into_raw`, so it is non-null and aligned for its
            // type.
            unsafe { OwningPtr::new(NonNull::new_unchecked(raw.cast::<u8>())) }
        });
        // SAFETY: every id was registered in this world for the value's concrete type (`push`
        // callers check the type id), ids are unique per entity (`decode` refuses duplicates),
        // and each value is moved out exactly once: its box is freed below without dropping it.
        unsafe { entity.insert_by_ids(&self.ids, pointers) };
        for (raw, layout) in self.values.drain(..) {
            if layout.size() != 0 {
                // SAFETY: allocated by `Box` with this layout; the value was moved out above.
                unsafe { std::alloc::dealloc(raw.cast::<u8>(), layout) };
            }
        }
        self.ids.clear();
    }
}

/// Maps saved entity ids to the entities spawned for them.
struct SavedEntityMapper {
    map: EntityHashMap<Entity>,
    unmapped: usize,
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

/// Decodes one column's values: with the current type, or with a legacy type and a conversion.
struct ColumnDecoder<'a> {
    reader: ValueReader<'a>,
    convert: Option<ConvertFn>,
    target: &'static str,
}

impl<'a> ColumnDecoder<'a> {
    fn new(
        entry: &SaveableEntry,
        type_path: &str,
        version: u32,
        types: &'a TypeRegistry,
    ) -> Result<Self, SnapshotError> {
        let (ops, convert): (TypeOps, _) = if version == entry.version {
            (entry.ops, None)
        } else if let Some(legacy) = entry.legacy.iter().find(|l| l.version == version) {
            (legacy.ops, Some(legacy.convert))
        } else {
            return Err(SnapshotError::UnknownTypeVersion {
                type_path: type_path.to_owned(),
                found: version,
                current: entry.version,
            });
        };
        let reader = ValueReader::new(types, ops).ok_or_else(|| SnapshotError::Value {
            type_path: type_path.to_owned(),
            entity_index: None,
            reason: format!("{} is missing from the type registry", ops.type_path),
        })?;
        Ok(ColumnDecoder {
            reader,
            convert,
            target: entry.ops.type_path,
        })
    }

    fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let value = self.reader.read(bytes)?;
        match self.convert {
            None => Ok(value),
            Some(convert) => {
                convert(value).ok_or_else(|| format!("the migration to {} failed", self.target))
            }
        }
    }
}

fn read_entity_table(reader: &mut BlobReader<'_>) -> Result<Vec<Entity>, SnapshotError> {
    let count = reader.count("entity count")?;
    if count > u32::MAX as usize {
        return Err(malformed(reader.offset(), "more than 2^32 entities"));
    }
    let mut ids = Vec::with_capacity(count);
    let mut unique = EntityHashSet::default();
    let mut bits = 0;
    for _ in 0..count {
        let offset = reader.offset();
        bits = reader.delta(bits, "entity id")?;
        let entity = Entity::try_from_bits(bits)
            .ok_or_else(|| malformed(offset, format!("{bits:#x} is not a valid entity id")))?;
        if !unique.insert(entity) {
            return Err(malformed(
                offset,
                format!("entity {entity} is listed twice"),
            ));
        }
        ids.push(entity);
    }
    Ok(ids)
}

/// Steps over the rows of a column whose type is not registered.
fn skip_rows(
    reader: &mut BlobReader<'_>,
    kind: ColumnKind,
    rows: usize,
) -> Result<(), SnapshotError> {
    for _ in 0..rows {
        if kind == ColumnKind::Component {
            reader.varint("entity index delta")?;
        }
        reader.bytes_with_len("skipped value")?;
    }
    Ok(())
}

fn malformed(offset: usize, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Malformed {
        offset,
        reason: reason.into(),
    }
}
