//! World → `ecs_blob`.

use super::assets::{CaptureAssets, CaptureProblem, LeftOutHandle, RuntimeAssetHandles};
use super::blob::{BLOB_VERSION, BlobWriter, ColumnKind, state_hash};
use super::error::SnapshotError;
use super::registry::SaveRegistry;
use super::type_ops::{SaveableEntry, TypeOps};
use super::value::{ValueWriter, append_postcard};
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::platform::sync::RwLockReadGuard;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use serde::Serialize;
use std::any::TypeId;
use std::collections::BTreeSet;

/// A captured world: the `ecs_blob` and what went into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The encoded entities, components and resources.
    pub blob: Vec<u8>,
    /// [`state_hash`](super::state_hash) of the blob.
    pub state_hash: u64,
    /// How many entities were captured.
    pub entities: usize,
    /// How many component values were captured.
    pub components: usize,
    /// How many resources were captured.
    pub resources: usize,
    /// Handles to run-time assets saved as the default handle (see
    /// [`RuntimeAssetHandles`]), by field.
    pub handles_left_out: Vec<LeftOutHandle>,
}

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

/// Writes the rows of one column straight into the blob while a type's capture function runs.
pub(crate) struct ColumnSink<'a> {
    index: &'a DenseIndex<'a>,
    writer: ValueWriter<'a>,
    rows: RowWriter<'a>,
}

/// The part of a [`ColumnSink`] that appends rows.
struct RowWriter<'a> {
    type_path: &'static str,
    blob: &'a mut Vec<u8>,
    row_count: u32,
    previous_index: u32,
}

impl ColumnSink<'_> {
    /// The dense index of a saved entity, or `None` if it is not saved.
    pub(crate) fn index_of(&self, entity: Entity) -> Option<u32> {
        self.index.get(entity)
    }

    /// Appends a row encoded through reflection: the entity's dense index (none for a
    /// resource) and the value.
    pub(crate) fn push(
        &mut self,
        entity_index: Option<u32>,
        value: &dyn Reflect,
    ) -> Result<(), SnapshotError> {
        self.rows
            .push_with(entity_index, |out| self.writer.write(value, out))
    }

    /// Appends a row encoded with the value's own serde implementation.
    pub(crate) fn push_serde<T: Serialize>(
        &mut self,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError> {
        let type_path = self.rows.type_path;
        self.rows.push_with(entity_index, |out| {
            append_postcard(value, out).map_err(|reason| CaptureProblem::whole(type_path, reason))
        })
    }
}

impl RowWriter<'_> {
    /// Writes the row header, then the value behind its length.
    fn push_with(
        &mut self,
        entity_index: Option<u32>,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), CaptureProblem>,
    ) -> Result<(), SnapshotError> {
        if let Some(index) = entity_index {
            write_delta(self.blob, self.previous_index.into(), index.into());
            self.previous_index = index;
        }
        push_prefixed(self.blob, write).map_err(|problem| problem.into_error(self.type_path))?;
        self.row_count += 1;
        Ok(())
    }
}

/// Appends a value written by `write` behind its varint length: in place behind a one-byte
/// length that is widened afterwards in the rare case the value is 128 bytes or longer.
pub(crate) fn push_prefixed(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), CaptureProblem>,
) -> Result<(), CaptureProblem> {
    let length_at = out.len();
    out.push(0);
    if let Err(problem) = write(out) {
        out.truncate(length_at);
        return Err(problem);
    }
    let len = out.len() - length_at - 1;
    if len < 0x80 {
        out[length_at] = len as u8;
    } else {
        let mut prefix = BlobWriter::default();
        prefix.varint(len as u64);
        out.splice(length_at..length_at + 1, prefix.bytes.iter().copied());
    }
    Ok(())
}

pub(crate) fn write_delta(out: &mut Vec<u8>, previous: u64, value: u64) {
    let mut writer = BlobWriter {
        bytes: std::mem::take(out),
    };
    writer.delta(previous, value);
    *out = writer.bytes;
}

/// Captures every registered component of the entities chosen by the registry's
/// [`SaveFilter`](super::SaveFilter), and every registered resource, into an `ecs_blob`.
///
/// Only reads the world. Components on saved entities whose types are not registered are
/// skipped and listed once per capture in a debug log line.
pub fn capture(world: &World) -> Result<Snapshot, SnapshotError> {
    capture_with(world, |types, ops, assets| {
        ValueWriter::new(types, ops, assets)
    })
}

/// [`capture`] with every reflection-only type written by Bevy's reflection serializer instead
/// of its reflection plan: the bytes must be the same (tests and benchmarks compare the two).
#[doc(hidden)]
pub fn capture_without_plans(world: &World) -> Result<Snapshot, SnapshotError> {
    capture_with(world, |types, ops, assets| {
        ValueWriter::generic(types, ops, assets)
    })
}

/// The registered types whose values [`capture`] writes with a reflection plan (the others use
/// their serde implementation or Bevy's reflection serializer).
#[doc(hidden)]
pub fn planned_type_paths(world: &World) -> Vec<&'static str> {
    let (Some(registry), Some(types)) = (
        world.get_resource::<SaveRegistry>(),
        world.get_resource::<AppTypeRegistry>(),
    ) else {
        return Vec::new();
    };
    let types = types.read();
    registry
        .entries()
        .iter()
        .filter(|entry| {
            let assets = CaptureAssets::default();
            ValueWriter::new(&types, &entry.ops, &assets).uses_plan()
        })
        .map(|entry| entry.ops.type_path)
        .collect()
}

/// What every capture reads first: the saved types and the app's type registry (read-locked).
pub(super) fn registries(
    world: &World,
) -> Result<(&SaveRegistry, RwLockReadGuard<'_, TypeRegistry>), SnapshotError> {
    let registry = world
        .get_resource::<SaveRegistry>()
        .ok_or(SnapshotError::NotSetUp("SaveRegistry"))?;
    let types = world
        .get_resource::<AppTypeRegistry>()
        .ok_or(SnapshotError::NotSetUp("AppTypeRegistry"))?
        .read();
    Ok((registry, types))
}

fn capture_with(
    world: &World,
    writer: for<'a> fn(&'a TypeRegistry, &TypeOps, &'a CaptureAssets) -> ValueWriter<'a>,
) -> Result<Snapshot, SnapshotError> {
    let (registry, types) = registries(world)?;

    let (matched, archetypes) = registry
        .filter()
        .resolve(world)
        .map(|filter| filter.matching_entities(world))
        .unwrap_or_default();
    log_unregistered(world, registry, &archetypes);
    let entities = Hierarchy::collect(world, &archetypes).order(matched);
    let index = DenseIndex::new(&entities);
    let policy = world.get_resource::<RuntimeAssetHandles>().copied();
    let assets = CaptureAssets::new(policy.unwrap_or_default());

    let mut blob = entity_table(&entities, registry.size_hint());
    let (mut components, mut resources, mut columns) = (0, 0, 0u32);
    let column_count_at = blob.len();
    blob.extend_from_slice(&[0; 4]);
    for entry in registry.entries() {
        let column_start = blob.len();
        let kind = entry.kind;
        let count_at = column_header(&mut blob, &ColumnId::of(entry));

        let mut sink = ColumnSink {
            index: &index,
            writer: writer(&types, &entry.ops, &assets),
            rows: RowWriter {
                type_path: entry.ops.type_path,
                blob: &mut blob,
                row_count: 0,
                previous_index: 0,
            },
        };
        (entry.capture)(world, &mut sink)?;
        let rows = sink.rows.row_count;
        if rows == 0 {
            blob.truncate(column_start);
            continue;
        }
        blob[count_at..count_at + 4].copy_from_slice(&rows.to_le_bytes());
        columns += 1;
        match kind {
            ColumnKind::Component => components += rows as usize,
            ColumnKind::Resource => resources += rows as usize,
        }
    }
    blob[column_count_at..column_count_at + 4].copy_from_slice(&columns.to_le_bytes());
    registry.record_size(blob.len());

    let hash = state_hash(&blob);
    Ok(Snapshot {
        blob,
        state_hash: hash,
        entities: entities.len(),
        components,
        resources,
        handles_left_out: assets.into_left_out(),
    })
}

/// The start of a blob: the layout version and the entity table, with room reserved for
/// `capacity` bytes in all.
pub(crate) fn entity_table(entities: &[Entity], capacity: usize) -> Vec<u8> {
    let mut blob = BlobWriter {
        bytes: Vec::with_capacity(capacity),
    };
    blob.byte(BLOB_VERSION);
    blob.varint(entities.len() as u64);
    let mut previous = 0;
    for entity in entities {
        blob.delta(previous, entity.to_bits());
        previous = entity.to_bits();
    }
    blob.bytes
}

/// Writes a column's header with a zero row count, and returns where the count is to be
/// filled in.
pub(crate) fn column_header(blob: &mut Vec<u8>, column: &ColumnId) -> usize {
    let mut header = BlobWriter {
        bytes: std::mem::take(blob),
    };
    header.bytes_with_len(column.type_path.as_bytes());
    header.varint(column.version.into());
    header.byte(column.kind as u8);
    *blob = header.bytes;
    let count_at = blob.len();
    blob.extend_from_slice(&[0; 4]);
    count_at
}

/// What a column's header says about its type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnId {
    pub(crate) type_path: &'static str,
    pub(crate) version: u32,
    pub(crate) kind: ColumnKind,
}

impl ColumnId {
    pub(crate) fn of(entry: &SaveableEntry) -> Self {
        ColumnId {
            type_path: entry.ops.type_path,
            version: entry.version,
            kind: entry.kind,
        }
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

/// Logs, once per capture, the component types on saved entities that are not registered.
fn log_unregistered(world: &World, registry: &SaveRegistry, archetypes: &[ArchetypeId]) {
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
