//! A full capture: a capture through a fresh [`CaptureCache`], the one capture engine; and what
//! every capture reads first.

use super::cache::CaptureCache;
use super::pending::Snapshot;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::SaveRegistry;
use crate::snapshot::value::ValueWriter;
use crate::snapshot::value::assets::CaptureAssets;
use bevy::prelude::*;

/// Captures every registered component of the entities chosen by the registry's
/// [`SaveFilter`](crate::snapshot::SaveFilter), and every registered resource, into an `ecs_blob`.
///
/// Only reads the world. Components on saved entities whose types are not registered are
/// skipped and listed once per capture in a debug log line.
pub fn capture(world: &World) -> Result<Snapshot, SnapshotError> {
    Ok(CaptureCache::default().capture(world)?.finish())
}

/// [`capture`] with every reflection-only type written by Bevy's reflection serializer instead
/// of its reflection plan: the bytes must be the same (tests and benchmarks compare the two).
#[doc(hidden)]
pub fn capture_without_plans(world: &World) -> Result<Snapshot, SnapshotError> {
    Ok(CaptureCache::without_plans().capture(world)?.finish())
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
