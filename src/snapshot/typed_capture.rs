//! The capture function of each registered type, monomorphised at registration: reads the
//! type's values out of the world (one query for a component, the resource's entity for a
//! resource) and pushes them into the [`ColumnSink`] that [`capture`](super::capture) opened for
//! its column, encoded through reflection or with the type's own serde implementation.

use super::assets::CaptureProblem;
use super::blob::ColumnKind;
use super::capture::ColumnSink;
use super::error::SnapshotError;
use super::incremental::ColumnRefresh;
use super::value::{ValueWriter, append_postcard};
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::{ComponentId, StorageType};
use bevy::ecs::resource::IsResource;
use bevy::ecs::storage::TableId;
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

/// Brings the cached encoding of one type's column up to date with the world.
pub(crate) type RefreshFn = fn(&World, &mut ColumnRefresh<'_>) -> Result<(), SnapshotError>;

/// The incremental capture function for `T` stored as `kind`, encoding values with `E`.
pub(crate) fn refresh_fn<T: Component, E: ValueEncoding<T>>(kind: ColumnKind) -> RefreshFn {
    match kind {
        ColumnKind::Component => refresh_components::<T, E>,
        ColumnKind::Resource => refresh_resource::<T, E>,
    }
}

/// How captured values are encoded: through reflection or with the type's serde implementation.
pub(crate) trait ValueEncoding<T> {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError>;

    /// Appends the encoding of `value` to `out` (the bytes [`ValueEncoding::push`] writes
    /// after the row's length).
    fn encode(writer: &ValueWriter<'_>, value: &T, out: &mut Vec<u8>)
    -> Result<(), CaptureProblem>;
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

    fn encode(
        writer: &ValueWriter<'_>,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        writer.write(value, out)
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

    fn encode(
        writer: &ValueWriter<'_>,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        append_postcard(value, out)
            .map_err(|reason| CaptureProblem::whole(writer.type_path(), reason))
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

/// The tables of the archetypes a fresh dense query of `component` matches, in the order the
/// query visits them. A query with a required component collects its archetypes from Bevy's
/// component index (a hash map from archetype to column) in that map's order, and each table
/// at its first matching archetype; neither archetype nor table ids give that order.
fn tables_in_query_order(
    world: &World,
    component: ComponentId,
    matched: impl Iterator<Item = ArchetypeId>,
) -> Vec<TableId> {
    let mut is_matched = vec![false; world.archetypes().len()];
    for id in matched {
        is_matched[id.index()] = true;
    }
    let mut tables: Vec<TableId> = Vec::new();
    let Some(archetypes) = world.archetypes().component_index().get(&component) else {
        return tables;
    };
    for archetype in archetypes
        .keys()
        .filter(|id| is_matched.get(id.index()) == Some(&true))
        .filter_map(|&id| world.archetypes().get(id))
    {
        if !tables.contains(&archetype.table_id()) {
            tables.push(archetype.table_id());
        }
    }
    tables
}

/// Walks `T`'s column table by table, in the order [`capture_components`] visits the rows (a
/// dense query visits its tables in [`tables_in_query_order`], each from its first row), handing each table's
/// entities, change ticks and values to the column cache. Sparse-set components, which a query
/// visits by archetype, are encoded afresh in the query's own order.
fn refresh_components<T: Component, E: ValueEncoding<T>>(
    world: &World,
    column: &mut ColumnRefresh<'_>,
) -> Result<(), SnapshotError> {
    let (Some(id), Some(mut query)) = (
        world.component_id::<T>(),
        world.try_query_filtered::<(Entity, &T), Without<IsResource>>(),
    ) else {
        return Ok(());
    };
    let sparse = world
        .components()
        .get_info(id)
        .is_none_or(|info| info.storage_type() == StorageType::SparseSet);
    if sparse || !column.dense_query(world) {
        let rows = query
            .iter(world)
            .filter(|(entity, _)| column.is_saved(*entity))
            .collect::<Vec<_>>();
        return column.fresh_rows(&rows, &mut |writer, row, out| {
            E::encode(writer, rows[row].1, out)
        });
    }
    for table_id in tables_in_query_order(world, id, query.matched_archetypes()) {
        let Some(table) = world.storages().tables.get(table_id) else {
            continue;
        };
        // SAFETY: the column of `id` holds `T` values, and the shared borrow of the world keeps
        // anything from writing to it while the slice is in use.
        let Some(values) = (unsafe { table.get_data_slice_for::<T>(id) }) else {
            continue;
        };
        let Some(ticks) = table.get_changed_ticks_slice_for(id) else {
            continue;
        };
        column.table(
            table_id,
            table.entities(),
            ticks,
            &mut |writer, row, out| {
                // SAFETY: as above: no `&mut T` to this row can exist while the world is borrowed.
                let value = unsafe { &*values[row].get() };
                E::encode(writer, value, out)
            },
        )?;
    }
    Ok(())
}

/// Re-encodes the resource if it changed since the last capture (or moved to another entity).
fn refresh_resource<T: Component, E: ValueEncoding<T>>(
    world: &World,
    column: &mut ColumnRefresh<'_>,
) -> Result<(), SnapshotError> {
    let found = world
        .component_id::<T>()
        .and_then(|id| world.resource_entities().get(id))
        .and_then(|entity| world.get_entity(entity).ok())
        .and_then(|entity| {
            Some((
                entity.id(),
                entity.get::<T>()?,
                entity.get_change_ticks::<T>()?,
            ))
        });
    match found {
        Some((entity, value, ticks)) => {
            column.resource(entity, ticks.changed, &mut |writer, out| {
                E::encode(writer, value, out)
            })
        }
        None => Ok(()),
    }
}
