//! What a capture keeps between captures: chunks (the encoded rows of up to [`CHUNK_ROWS`]
//! table rows of one type, which a capture reuses, patches or rebuilds), each type's chunks by
//! table, and each table's entities.

use crate::snapshot::blob::push_prefixed;
use crate::snapshot::value::assets::CaptureProblem;
use bevy::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Table rows per chunk: small enough that a change re-encodes or copies little, large enough
/// that a world of 100 000 entities has only about a hundred chunks per type to check.
pub const CHUNK_ROWS: usize = 1024;

/// Encoded rows: each row's entity (none for a resource) and its value behind its varint length,
/// back to back — the blob's bytes for these rows without the entity index deltas.
#[derive(Default)]
pub(crate) struct Chunk {
    pub(super) entities: Vec<Entity>,
    /// Where each row's bytes end in `values`.
    pub(super) ends: Vec<u32>,
    pub(super) values: Vec<u8>,
}

impl Chunk {
    pub(super) fn rows(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn start(&self, row: usize) -> usize {
        row.checked_sub(1)
            .map_or(0, |previous| self.ends[previous] as usize)
    }

    pub(super) fn row(&self, row: usize) -> &[u8] {
        &self.values[self.start(row)..self.ends[row] as usize]
    }

    pub(super) fn push(
        &mut self,
        entity: Option<Entity>,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), CaptureProblem>,
    ) -> Result<(), CaptureProblem> {
        push_prefixed(&mut self.values, write)?;
        self.ends.push(self.values.len() as u32);
        self.entities.extend(entity);
        Ok(())
    }
}

/// The row ranges of the chunks of a table of `len` rows.
pub(super) fn chunk_ranges(len: usize) -> impl Iterator<Item = Range<usize>> {
    (0..len)
        .step_by(CHUNK_ROWS)
        .map(move |start| start..(start + CHUNK_ROWS).min(len))
}

/// One table's entities at the last capture, and which chunks still hold the same ones.
#[derive(Default)]
pub(super) struct TableRows {
    pub(super) entities: Vec<Entity>,
    /// The capture that last compared them.
    pub(super) checked: u64,
    /// Per chunk: whether its rows hold the same entities as at the last capture.
    pub(super) same: Vec<bool>,
}

/// The cached chunks of one registered type.
#[derive(Default)]
pub(super) struct ColumnCache {
    /// Whether values can be cached (not when writing them reports left-out asset handles);
    /// worked out at the first capture that encodes one.
    pub(super) cacheable: Option<bool>,
    /// By table index.
    pub(super) tables: Vec<Vec<Arc<Chunk>>>,
    /// A resource's entity and value.
    pub(super) resource: Option<(Entity, Arc<Chunk>)>,
}
