//! A full capture: the entity and key tables first, then every registered type's walk writing
//! straight into the blob through a [`DirectColumn`] (no pieces kept).

use super::column::SavedTables;
use super::direct::DirectColumn;
use super::encode::{WriterFn, WriterRecipe};
use super::hierarchy::{DenseIndex, Hierarchy};
use super::keys::KeyTable;
use super::pending::Snapshot;
use super::world::{log_unregistered, registries};
use crate::format::BlobPieces;
use crate::snapshot::blob::{BlobWriter, ColumnKind, state_hash};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{SaveRegistry, bevy_made_assets};
use crate::snapshot::value::ValueWriter;
use crate::snapshot::value::assets::CaptureAssets;
use crate::snapshot::value::assets::RuntimeAssetHandles;
use bevy::prelude::*;

/// Captures every registered component of the entities chosen by the registry's
/// [`SaveFilter`](crate::snapshot::SaveFilter), and every registered resource, into an `ecs_blob`.
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
pub fn capture_without_plans(world: &World) -> Result<Snapshot, SnapshotError> {
    capture_with(world, |types, ops, assets| {
        ValueWriter::generic(types, ops, assets)
    })
}

/// Orders the entity table first (the rows need their entity indices), then walks every
/// registered type straight into the blob.
fn capture_with(world: &World, writer_fn: WriterFn) -> Result<Snapshot, SnapshotError> {
    let (registry, types) = registries(world)?;
    let (matched, archetypes) = registry
        .filter()
        .resolve(world)
        .map(|filter| filter.matching_entities(world))
        .unwrap_or_default();
    log_unregistered(world);
    let entities = Hierarchy::collect(world, &archetypes).order(matched);
    let index = DenseIndex::new(&entities);
    let saved = SavedTables::new(world, &archetypes);
    let keys = KeyTable::collect(world, registry, &saved)?;
    let policy = world.get_resource::<RuntimeAssetHandles>().copied();
    let assets = CaptureAssets::new(policy.unwrap_or_default(), bevy_made_assets(world));
    let ids = entities.iter().map(|entity| entity.to_bits());
    let mut blob = BlobWriter::new(ids, &keys.stored(), registry.size_hint());
    let (mut components, mut resources) = (0, 0);
    for entry in registry.entries() {
        let writer = writer_fn(&types, &entry.ops, &assets);
        let layout = entry.layout_bytes(&types);
        let mut open = blob.open_column(entry.ops.type_path, entry.version, entry.kind, &layout);
        let recipe = WriterRecipe {
            types: &types,
            ops: &entry.ops,
            policy: assets.policy(),
            build: writer_fn,
        };
        let mut column = DirectColumn {
            world,
            saved: &saved,
            index: &index,
            writer: &writer,
            recipe,
            blob: &mut blob,
            column: &mut open,
        };
        (entry.refresh)(world, &mut column)?;
        let rows = blob.close_column(open) as usize;
        match entry.kind {
            ColumnKind::Component => components += rows,
            ColumnKind::Resource => resources += rows,
        }
    }
    let blob = blob.finish();
    registry.record_size(blob.len());
    Ok(Snapshot {
        state_hash: state_hash(&blob),
        blob,
        entities: entities.len(),
        components,
        resources,
        handles_left_out: assets.into_left_out(),
        pieces: BlobPieces::default(),
    })
}

/// The registered types whose values [`capture`] writes with a reflection plan (the others use
/// their serde implementation or Bevy's reflection serializer).
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
