//! A full capture's column: the sink that writes each value straight into the blob, with no
//! pieces kept. It shares the typed walk with the cache's column and the blob writer with
//! [`PendingSnapshot::finish`](super::PendingSnapshot::finish), so the two write the same bytes;
//! it exists because a capture through a fresh cache measured 24–38 % slower (pieces built,
//! recorded and then copied into the blob).

use super::column::{SavedTables, TableSaved};
use super::encode::{RowJob, SAMPLE_ROWS, WriterRecipe, encode_spread, pool_worth_it};
use super::hierarchy::DenseIndex;
use super::piece::{PIECE_ROWS, Rows};
use crate::snapshot::blob::{BlobWriter, OpenColumn};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{ColumnSink, EncodeResource, EncodeRow};
use crate::snapshot::value::ValueWriter;
use bevy::ecs::change_detection::Tick;
use bevy::ecs::storage::TableId;
use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use std::cell::UnsafeCell;
use std::time::Instant;

/// One registered type's column during a full capture.
pub(super) struct DirectColumn<'a, 'w> {
    pub(super) world: &'w World,
    pub(super) saved: &'a SavedTables,
    pub(super) index: &'a DenseIndex<'a>,
    pub(super) writer: &'a ValueWriter<'w>,
    /// To encode a large table's rows on the compute pool too (see `encode.rs`).
    pub(super) recipe: WriterRecipe<'a>,
    pub(super) blob: &'a mut BlobWriter,
    pub(super) column: &'a mut OpenColumn,
}

impl DirectColumn<'_, '_> {
    /// Writes `entities[row]`'s value when the entity is saved.
    fn row(
        &mut self,
        entities: &[Entity],
        row: usize,
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let Some(dense) = self.index.get(entities[row]) else {
            return Ok(());
        };
        let writer = self.writer;
        self.blob
            .row_with(self.column, Some(dense), |out| encode(writer, row, out))
            .map_err(|problem| problem.into_error(writer.type_path()))
    }

    /// A large table's saved rows from `first` on: encoded in pieces spread over the compute
    /// pool, then copied into the blob in order (a copy the sequential path does not make,
    /// paid for when the encoding is shared: see `encode.rs`).
    fn rows_in_parallel(
        &mut self,
        pool: &ComputeTaskPool,
        entities: &[Entity],
        first: usize,
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let (rows, dense): (Vec<usize>, Vec<u32>) = (first..entities.len())
            .filter_map(|row| Some((row, self.index.get(entities[row])?)))
            .unzip();
        let jobs: Vec<RowJob<'_>> = rows
            .chunks(PIECE_ROWS)
            .map(|offsets| RowJob { first: 0, offsets })
            .collect();
        let encoded: Vec<Rows> = encode_spread(pool, &jobs, self.recipe, encode)
            .map_err(|problem| problem.into_error(self.writer.type_path()))?;
        let values = encoded
            .iter()
            .flat_map(|rows| (0..rows.len()).map(|k| rows.row(k)));
        for (dense, value) in dense.into_iter().zip(values) {
            self.blob.row(self.column, Some(dense), value);
        }
        Ok(())
    }
}

impl ColumnSink for DirectColumn<'_, '_> {
    fn is_saved(&self, entity: Entity) -> bool {
        self.saved.entity(self.world, entity)
    }

    fn fresh_rows(
        &mut self,
        entities: &[Entity],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        (0..entities.len()).try_for_each(|row| self.row(entities, row, encode))
    }

    fn table(
        &mut self,
        table: TableId,
        entities: &[Entity],
        _ticks: &[UnsafeCell<Tick>],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        if self.saved.table(table) == TableSaved::None {
            return Ok(());
        }
        let sample = SAMPLE_ROWS.min(entities.len());
        let started = Instant::now();
        (0..sample).try_for_each(|row| self.row(entities, row, encode))?;
        let took = (sample, started.elapsed());
        match pool_worth_it(took, entities.len() - sample, self.writer) {
            Some(pool) => self.rows_in_parallel(pool, entities, sample, encode),
            None => (sample..entities.len()).try_for_each(|row| self.row(entities, row, encode)),
        }
    }

    fn resource(
        &mut self,
        _entity: Entity,
        _changed: Tick,
        encode: &mut EncodeResource<'_>,
    ) -> Result<(), SnapshotError> {
        let writer = self.writer;
        self.blob
            .row_with(self.column, None, |out| encode(writer, out))
            .map_err(|problem| problem.into_error(writer.type_path()))
    }
}
