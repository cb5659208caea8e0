//! The capture function of each registered type, monomorphised at registration: reads the
//! type's values out of the world (one query for a component, the resource's entity for a
//! resource) and pushes them into the [`ColumnSink`] that [`capture`](super::capture) opened for
//! its column, encoded through reflection or with the type's own serde implementation.

use super::blob::ColumnKind;
use super::capture::ColumnSink;
use super::error::SnapshotError;
use bevy::ecs::resource::IsResource;
use bevy::prelude::*;
use serde::Serialize;

/// Captures the values of one type into a column.
pub(crate) type CaptureFn = fn(&World, &mut ColumnSink<'_>) -> Result<(), SnapshotError>;

/// The capture function for `T` stored as `kind`, encoding values with `E`.
pub(crate) fn capture_fn<T: Component, E: ValueEncoding<T>>(kind: ColumnKind) -> CaptureFn {
    match kind {
        ColumnKind::Component => capture_components::<T, E>,
        ColumnKind::Resource => capture_resource::<T, E>,
    }
}

/// How captured values are encoded: through reflection or with the type's serde implementation.
pub(crate) trait ValueEncoding<T> {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError>;
}

/// Through reflection (`ReflectSerialize` when registered, field by field otherwise).
pub(crate) struct ViaReflect;

impl<T: Reflect> ValueEncoding<T> for ViaReflect {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError> {
        sink.push(entity_index, value)
    }
}

/// With `T`'s own `Serialize`, statically dispatched (same bytes as `ReflectSerialize`).
pub(crate) struct ViaSerde;

impl<T: Serialize> ValueEncoding<T> for ViaSerde {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError> {
        sink.push_serde(entity_index, value)
    }
}

fn capture_components<T: Component, E: ValueEncoding<T>>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let Some(mut query) = world.try_query_filtered::<(Entity, &T), Without<IsResource>>() else {
        return Ok(());
    };
    for (entity, value) in query.iter(world) {
        if let Some(index) = sink.index_of(entity) {
            E::push(sink, Some(index), value)?;
        }
    }
    Ok(())
}

fn capture_resource<T: Component, E: ValueEncoding<T>>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let value = world
        .component_id::<T>()
        .and_then(|id| world.resource_entities().get(id))
        .and_then(|entity| world.get::<T>(entity));
    match value {
        Some(value) => E::push(sink, None, value),
        None => Ok(()),
    }
}
