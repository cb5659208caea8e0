//! The pool's part of a capture: the entity table put in order, the pieces joined into the
//! blob, the blob hashed. Needs no world.

use super::hierarchy::{Hierarchy, OrderMemo};
use super::join::{JoinMemo, Joiner};
use super::keys::KeyTable;
use super::piece::Piece;
use crate::format::{BlobPieces, SaveBundle, WorldState};
use crate::snapshot::blob::{BlobWriter, ColumnKind, state_hash};
use crate::snapshot::register::SaveableEntry;
use crate::snapshot::value::assets::LeftOutHandle;
use bevy::prelude::*;
use keepsake_core::__private::{PieceCuts, with_blob_pieces};
use std::sync::Arc;

/// A captured world: the `ecs_blob` and what went into it.
#[derive(Clone, Debug)]
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
    /// Where the blob may be cut into the save file's chunks, and each piece's hash: made by
    /// [`PendingSnapshot::finish`]; empty from a full [`capture`](crate::snapshot::capture()),
    /// whose blob the save file cuts by content.
    pub pieces: BlobPieces,
}

/// Two snapshots are equal when they captured the same: their pieces (how the blob was made)
/// are not compared, so an incremental capture equals the full capture of the same world.
impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        self.captured() == other.captured()
    }
}

impl Eq for Snapshot {}

/// What a snapshot captured, its pieces left out.
type Captured<'a> = (&'a [u8], u64, usize, usize, usize, &'a [LeftOutHandle]);

impl Snapshot {
    /// Everything but the pieces (a field added to `Snapshot` must be sorted in or out here).
    fn captured(&self) -> Captured<'_> {
        let Snapshot {
            blob,
            state_hash,
            entities,
            components,
            resources,
            handles_left_out,
            pieces: _,
        } = self;
        (
            blob,
            *state_hash,
            *entities,
            *components,
            *resources,
            handles_left_out,
        )
    }

    /// A save bundle around this snapshot taken at game tick `tick`, its blob's pieces with it
    /// (so the save's encoder neither scans nor hashes the chunks that did not change).
    pub fn into_bundle(self, tick: u64) -> SaveBundle {
        let bundle = SaveBundle::new(WorldState {
            tick,
            ecs_blob: self.blob,
            state_hash: self.state_hash,
        });
        with_blob_pieces(bundle, self.pieces)
    }
}

/// The main thread's part of an incremental capture: everything [`PendingSnapshot::finish`]
/// needs to write the blob, without the world.
pub struct PendingSnapshot {
    pub(super) matched: Vec<Entity>,
    pub(super) hierarchy: Hierarchy,
    /// The last capture's ordered entity table, to take over when nothing it depends on
    /// changed.
    pub(super) order: OrderMemo,
    /// The rows the last capture's blob joined, to take over for the pieces that did not
    /// change.
    pub(super) joins: JoinMemo,
    pub(super) keys: KeyTable,
    pub(super) columns: Vec<(ColumnId, Vec<Arc<Piece>>)>,
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

    /// The saved entities, archetype by archetype (not yet in entity-table order).
    pub(crate) fn matched(&self) -> &[Entity] {
        &self.matched
    }

    /// The saved entities' hierarchy as the capture read it.
    pub(crate) fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// Each registered type's column: its header and its pieces, in registry order.
    pub(crate) fn columns(&self) -> &[(ColumnId, Vec<Arc<Piece>>)] {
        &self.columns
    }

    /// Puts every patched piece together, as [`finish`](Self::finish) would first, without
    /// writing the blob: for a capture that is kept but not written (a rewind point), off the
    /// main thread, so that later captures never put long chains of patches together there.
    pub fn settle(&self) {
        for (_, pieces) in &self.columns {
            for piece in pieces {
                piece.bytes();
            }
        }
    }

    /// Orders the entity table (or takes over the last capture's order, when nothing it
    /// depends on changed), gives every row its entity index and joins the pieces into the
    /// blob (taking over the last blob's rows for the pieces that did not change, see
    /// `join.rs`), then hashes it. Needs no world: the plugin runs it on the task pool.
    pub fn finish(self) -> Snapshot {
        let entities = self.order.order(&self.hierarchy, self.matched);
        let values: usize = self
            .columns
            .iter()
            .flat_map(|(_, pieces)| pieces)
            .map(|piece| piece.bytes().byte_len() + piece.rows() * 2)
            .sum();
        let capacity = values + entities.len() * 4 + 1024;
        let ids = entities.iter().map(|entity| entity.to_bits());
        let mut blob = BlobWriter::new(ids, &self.keys.stored(), capacity);
        let pieces: usize = self.columns.iter().map(|(_, pieces)| pieces.len()).sum();
        let mut cuts = PieceCuts::with_capacity(pieces + 2 * self.columns.len() + 1);
        // The entity and key tables are written anew every save: cut by content.
        cuts.content_defined(blob.bytes.len());
        let mut joiner = Joiner::new(&self.joins, &entities);
        let (mut components, mut resources) = (0, 0);
        for (column, pieces) in &self.columns {
            let cuts_before = cuts.len();
            let mut open = blob.open_column(
                column.type_path,
                column.version,
                column.kind,
                &column.layout,
            );
            // The header's row count is filled in when the column closes: hashed later.
            cuts.hashed_later(blob.bytes.len());
            joiner.write_rows(&mut blob, &mut open, pieces, &mut cuts);
            let rows = blob.close_column(open) as usize;
            if rows == 0 {
                cuts.truncate(cuts_before);
            }
            match column.kind {
                ColumnKind::Component => components += rows,
                ColumnKind::Resource => resources += rows,
            }
        }
        joiner.keep();
        let blob = blob.finish();
        let state_hash = state_hash(&blob);
        Snapshot {
            pieces: cuts.finish(&blob, state_hash),
            state_hash,
            blob,
            entities: entities.len(),
            components,
            resources,
            handles_left_out: self.handles_left_out,
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
