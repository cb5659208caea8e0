//! The typed walk of each registered type's column, monomorphised at registration: reads the
//! type's values and change ticks out of the world (table by table for a component, the
//! resource's entity for a resource) and hands them to a [`ColumnSink`], which decides what to
//! encode. The capture cache is the sink; this module knows nothing of it.

use crate::snapshot::blob::ColumnKind;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::value::ValueEncoding;
use crate::snapshot::value::ValueWriter;
use crate::snapshot::value::assets::CaptureProblem;
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::change_detection::Tick;
use bevy::ecs::component::{ComponentId, StorageType};
use bevy::ecs::entity_disabling::DefaultQueryFilters;
use bevy::ecs::resource::IsResource;
use bevy::ecs::storage::TableId;
use bevy::prelude::*;
use std::cell::UnsafeCell;

/// Encodes one value of the column's type into `out`: the `row`-th of what was handed over.
/// Shared between threads, so a capture may encode a table's rows in parallel.
pub(crate) type EncodeRow<'e> =
    dyn Fn(&ValueWriter<'_>, usize, &mut Vec<u8>) -> Result<(), CaptureProblem> + Sync + 'e;

/// Encodes the resource's value into `out`.
pub(crate) type EncodeResource<'e> =
    dyn FnMut(&ValueWriter<'_>, &mut Vec<u8>) -> Result<(), CaptureProblem> + 'e;

/// Where a column's walk hands its values.
pub(crate) trait ColumnSink {
    /// Whether `entity` is saved.
    fn is_saved(&self, entity: Entity) -> bool;

    /// Rows with no table to cache them by (sparse-set components): `entities[row]`'s value is
    /// encoded by `encode(.., row, ..)`.
    fn fresh_rows(
        &mut self,
        entities: &[Entity],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError>;

    /// One table of the column: its entities, the column's change ticks and how to encode a
    /// row.
    fn table(
        &mut self,
        table: TableId,
        entities: &[Entity],
        ticks: &[UnsafeCell<Tick>],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError>;

    /// The resource, on `entity`, last changed at `changed`.
    fn resource(
        &mut self,
        entity: Entity,
        changed: Tick,
        encode: &mut EncodeResource<'_>,
    ) -> Result<(), SnapshotError>;
}

/// Brings one type's column up to date with the world, through a sink.
pub(crate) type RefreshFn = fn(&World, &mut dyn ColumnSink) -> Result<(), SnapshotError>;

/// The walk for `T` stored as `kind`, encoding values with `E`.
pub(crate) fn refresh_fn<T: Component, E: ValueEncoding<T>>(kind: ColumnKind) -> RefreshFn {
    match kind {
        ColumnKind::Component => refresh_components::<T, E>,
        ColumnKind::Resource => refresh_resource::<T, E>,
    }
}

/// Whether a query visits tables in the order [`tables_in_query_order`] gives: true unless a
/// disabling component is a sparse-set one (the query then walks archetypes).
fn dense_query(world: &World) -> bool {
    world
        .get_resource::<DefaultQueryFilters>()
        .is_none_or(|filters| {
            filters.disabling_ids().all(|id| {
                world
                    .components()
                    .get_info(id)
                    .is_some_and(|info| info.storage_type() == StorageType::Table)
            })
        })
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

/// Walks `T`'s column table by table, in the order a query of `T` visits the rows (a dense
/// query visits its tables in [`tables_in_query_order`], each from its first row), handing each
/// table's entities, change ticks and values to the column cache. Sparse-set components, which a
/// query visits by archetype, are encoded afresh in the query's own order.
fn refresh_components<T: Component, E: ValueEncoding<T>>(
    world: &World,
    column: &mut dyn ColumnSink,
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
    if sparse || !dense_query(world) {
        let (entities, values): (Vec<Entity>, Vec<&T>) = query
            .iter(world)
            .filter(|(entity, _)| column.is_saved(*entity))
            .unzip();
        return column.fresh_rows(&entities, &|writer, row, out| {
            E::encode(writer, values[row], out)
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
        let values = SharedValues(values);
        column.table(table_id, table.entities(), ticks, &|writer, row, out| {
            E::encode(writer, values.get(row), out)
        })?;
    }
    Ok(())
}

/// A table column's values, read from any thread while the world is borrowed shared.
struct SharedValues<'w, T>(&'w [UnsafeCell<T>]);

// SAFETY: the values are only read, through `get`, while the shared borrow of the world keeps
// anything from writing to them; `T` is a component, so `Sync`, and reading it from several
// threads at once is sound.
unsafe impl<T: Component> Sync for SharedValues<'_, T> {}

impl<T> SharedValues<'_, T> {
    fn get(&self, row: usize) -> &T {
        // SAFETY: as above: no `&mut T` to this row can exist while the world is borrowed.
        unsafe { &*self.0[row].get() }
    }
}

/// Re-encodes the resource if it changed since the last capture (or moved to another entity).
fn refresh_resource<T: Component, E: ValueEncoding<T>>(
    world: &World,
    column: &mut dyn ColumnSink,
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
