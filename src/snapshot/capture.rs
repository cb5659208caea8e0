//! World → `ecs_blob`.

use super::blob::{BLOB_VERSION, BlobWriter, ColumnKind, state_hash};
use super::error::SnapshotError;
use super::registry::{SaveRegistry, TypeKind};
use super::value::ValueWriter;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;
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
}

/// Collects the rows of one column while a type's capture function runs.
pub(crate) struct ColumnSink<'a> {
    index: &'a EntityHashMap<u32>,
    writer: ValueWriter<'a>,
    type_path: &'static str,
    rows: BlobWriter,
    row_count: usize,
    previous_index: u32,
    scratch: Vec<u8>,
}

impl ColumnSink<'_> {
    /// The dense index of a saved entity, or `None` if it is not saved.
    pub(crate) fn index_of(&self, entity: Entity) -> Option<u32> {
        self.index.get(&entity).copied()
    }

    /// Appends a row: the entity's dense index (none for a resource) and the encoded value.
    pub(crate) fn push(
        &mut self,
        entity_index: Option<u32>,
        value: &dyn Reflect,
    ) -> Result<(), SnapshotError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        self.scratch =
            self.writer
                .write(value, scratch)
                .map_err(|reason| SnapshotError::Capture {
                    type_path: self.type_path.to_owned(),
                    reason,
                })?;
        if let Some(index) = entity_index {
            self.rows.delta(self.previous_index.into(), index.into());
            self.previous_index = index;
        }
        self.rows.bytes_with_len(&self.scratch);
        self.row_count += 1;
        Ok(())
    }
}

/// Captures every registered component of the entities chosen by the registry's
/// [`SaveFilter`](super::SaveFilter), and every registered resource, into an `ecs_blob`.
///
/// Only reads the world. Components on saved entities whose types are not registered are
/// skipped and listed once per capture in a debug log line.
pub fn capture(world: &World) -> Result<Snapshot, SnapshotError> {
    let registry = world
        .get_resource::<SaveRegistry>()
        .ok_or(SnapshotError::NotSetUp("SaveRegistry"))?;
    let types = world
        .get_resource::<AppTypeRegistry>()
        .ok_or(SnapshotError::NotSetUp("AppTypeRegistry"))?
        .read();

    let matched = registry
        .filter()
        .resolve(world)
        .map(|filter| filter.matching_entities(world))
        .unwrap_or_default();
    log_unregistered(world, registry, &matched);
    let entities = hierarchy_order(world, matched);
    let index: EntityHashMap<u32> = entities
        .iter()
        .enumerate()
        .map(|(i, &entity)| (entity, i as u32))
        .collect();

    let mut blob = BlobWriter::default();
    blob.byte(BLOB_VERSION);
    blob.varint(entities.len() as u64);
    let mut previous = 0;
    for entity in &entities {
        blob.delta(previous, entity.to_bits());
        previous = entity.to_bits();
    }

    let mut columns = BlobWriter::default();
    let (mut column_count, mut components, mut resources) = (0u64, 0, 0);
    let mut scratch = Vec::new();
    let mut rows = BlobWriter::default();
    for entry in registry.entries() {
        rows.bytes.clear();
        let mut sink = ColumnSink {
            index: &index,
            writer: ValueWriter::new(&types, entry.ops.type_id),
            type_path: entry.ops.type_path,
            rows,
            row_count: 0,
            previous_index: 0,
            scratch,
        };
        (entry.capture)(world, &mut sink)?;
        (rows, scratch) = (sink.rows, sink.scratch);
        if sink.row_count == 0 {
            continue;
        }
        let kind = match entry.kind {
            TypeKind::Component => {
                components += sink.row_count;
                ColumnKind::Component
            }
            TypeKind::Resource => {
                resources += sink.row_count;
                ColumnKind::Resource
            }
        };
        columns.bytes_with_len(entry.ops.type_path.as_bytes());
        columns.varint(entry.version.into());
        columns.byte(kind as u8);
        columns.varint(sink.row_count as u64);
        columns.bytes.extend_from_slice(&rows.bytes);
        column_count += 1;
    }
    blob.varint(column_count);
    blob.bytes.extend_from_slice(&columns.bytes);

    let hash = state_hash(&blob.bytes);
    Ok(Snapshot {
        blob: blob.bytes,
        state_hash: hash,
        entities: entities.len(),
        components,
        resources,
    })
}

/// Orders saved entities so that every parent comes before its children and siblings keep
/// their order, which lets a load rebuild each `Children` list exactly.
fn hierarchy_order(world: &World, matched: Vec<Entity>) -> Vec<Entity> {
    let saved: EntityHashSet = matched.iter().copied().collect();
    let mut ordered = Vec::with_capacity(matched.len());
    let mut stack = Vec::new();
    for &root in &matched {
        let has_saved_parent = world
            .get::<ChildOf>(root)
            .is_some_and(|child_of| saved.contains(&child_of.parent()));
        if has_saved_parent {
            continue;
        }
        stack.push(root);
        while let Some(entity) = stack.pop() {
            ordered.push(entity);
            if let Some(children) = world.get::<Children>(entity) {
                stack.extend(children.iter().rev().filter(|child| saved.contains(child)));
            }
        }
    }
    ordered
}

/// Logs, once per capture, the component types on saved entities that are not registered.
fn log_unregistered(world: &World, registry: &SaveRegistry, matched: &[Entity]) {
    let registered: Vec<TypeId> = registry.entries().iter().map(|e| e.ops.type_id).collect();
    let quiet = [TypeId::of::<Children>()];
    let mut seen_archetypes = BTreeSet::new();
    let mut names = BTreeSet::new();
    for &entity in matched {
        let entity_ref = world.entity(entity);
        let archetype = entity_ref.archetype();
        if !seen_archetypes.insert(archetype.id()) {
            continue;
        }
        for id in archetype.iter_components() {
            let Some(info) = world.components().get_info(id) else {
                continue;
            };
            let type_id = info.type_id();
            let known = type_id.is_some_and(|t| registered.contains(&t) || quiet.contains(&t));
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
