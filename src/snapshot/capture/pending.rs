//! The pool's part of a capture: the entity table put in order, the chunks joined into the
//! blob, the blob hashed. Needs no world.

use super::chunk::Chunk;
use super::hierarchy::{DenseIndex, Hierarchy, OrderMemo};
use super::keys::KeyTable;
use crate::snapshot::blob::{BlobWriter, ColumnKind, OpenColumn, state_hash};
use crate::snapshot::register::SaveableEntry;
use crate::snapshot::value::assets::LeftOutHandle;
use bevy::prelude::*;
use std::sync::Arc;

/// A captured world: the `ecs_blob` and what went into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The encoded entities, components and resources.
    pub blob: Vec<u8>,
    /// [`state_hash`](crate::snapshot::state_hash) of the blob.
    pub state_hash: u64,
    /// How many entities were captured.
    pub entities: usize,
    /// How many component values were captured.
    pub components: usize,
    /// How many resources were captured.
    pub resources: usize,
    /// Handles to run-time assets saved as the default handle (see
    /// [`RuntimeAssetHandles`](crate::snapshot::RuntimeAssetHandles)), by field.
    pub handles_left_out: Vec<LeftOutHandle>,
}

/// The main thread's part of an incremental capture: everything [`PendingSnapshot::finish`]
/// needs to write the blob, without the world.
pub struct PendingSnapshot {
    pub(super) matched: Vec<Entity>,
    pub(super) hierarchy: Hierarchy,
    /// The last capture's ordered entity table, to take over when nothing it depends on
    /// changed.
    pub(super) order: OrderMemo,
    pub(super) keys: KeyTable,
    pub(super) columns: Vec<(ColumnId, Vec<Arc<Chunk>>)>,
    pub(super) handles_left_out: Vec<LeftOutHandle>,
}

impl PendingSnapshot {
    /// How many entities the snapshot holds.
    pub fn entities(&self) -> usize {
        self.matched.len()
    }

    /// Handles to run-time assets saved as the default handle (see [`RuntimeAssetHandles`](crate::snapshot::RuntimeAssetHandles)).
    pub fn handles_left_out(&self) -> &[LeftOutHandle] {
        &self.handles_left_out
    }

    /// Puts every patched chunk together, as [`finish`](Self::finish) would first, without
    /// writing the blob: for a capture that is kept but not written (a rewind point), off the
    /// main thread, so that later captures never put long chains of patches together there.
    pub fn settle(&self) {
        for (_, chunks) in &self.columns {
            for chunk in chunks {
                chunk.bytes();
            }
        }
    }

    /// Orders the entity table (or takes over the last capture's order, when nothing it
    /// depends on changed), gives every row its entity index and joins the chunks into the
    /// blob, then hashes it. Needs no world: the plugin runs it on the task pool.
    pub fn finish(self) -> Snapshot {
        let entities = self.order.order(&self.hierarchy, self.matched);
        let index = DenseIndex::new(&entities);
        let values: usize = self
            .columns
            .iter()
            .flat_map(|(_, chunks)| chunks)
            .map(|chunk| chunk.bytes().byte_len() + chunk.rows() * 2)
            .sum();
        let capacity = values + entities.len() * 4 + 1024;
        let ids = entities.iter().map(|entity| entity.to_bits());
        let mut blob = BlobWriter::new(ids, &self.keys.stored(), capacity);
        let (mut components, mut resources) = (0, 0);
        for (column, chunks) in &self.columns {
            let mut open = blob.open_column(
                column.type_path,
                column.version,
                column.kind,
                &column.layout,
            );
            write_rows(&mut blob, &mut open, chunks, &index);
            let rows = blob.close_column(open) as usize;
            match column.kind {
                ColumnKind::Component => components += rows,
                ColumnKind::Resource => resources += rows,
            }
        }
        let blob = blob.finish();
        Snapshot {
            state_hash: state_hash(&blob),
            blob,
            entities: entities.len(),
            components,
            resources,
            handles_left_out: self.handles_left_out,
        }
    }
}

/// Writes the rows of a column's chunks, each with its entity's index.
fn write_rows(
    blob: &mut BlobWriter,
    column: &mut OpenColumn,
    chunks: &[Arc<Chunk>],
    index: &DenseIndex<'_>,
) {
    for chunk in chunks {
        let bytes = chunk.bytes();
        if chunk.entities.is_empty() {
            // A resource: its value, without an entity.
            for row in 0..chunk.rows() {
                blob.row(column, None, bytes.row(row));
            }
            continue;
        }
        for (row, &entity) in chunk.entities.iter().enumerate() {
            // Chunks hold saved entities only, which all have an index.
            let Some(dense) = index.get(entity) else {
                debug_assert!(false, "{entity} is in a chunk but not saved");
                continue;
            };
            blob.row(column, Some(dense), bytes.row(row));
        }
    }
}

/// What a column's header says about its type.
#[derive(Clone, Debug)]
pub(crate) struct ColumnId {
    pub(crate) type_path: &'static str,
    pub(crate) version: u32,
    pub(crate) kind: ColumnKind,
    /// The type's layout, encoded.
    pub(crate) layout: Arc<[u8]>,
}

impl ColumnId {
    pub(crate) fn of(entry: &SaveableEntry, layout: Arc<[u8]>) -> Self {
        ColumnId {
            type_path: entry.ops.type_path,
            version: entry.version,
            kind: entry.kind,
            layout,
        }
    }
}
