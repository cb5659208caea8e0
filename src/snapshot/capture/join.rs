//! Joining a column's pieces into the blob, each row behind its entity index delta, and taking
//! over what the last finished blob joined for the pieces that did not change.
//!
//! A piece the capture reused is the same piece (same id) as at the last capture: the same
//! entities and the same encoded rows. When the entity table is also the same, so are their
//! entity indices, and the piece joins to the bytes it joined to last time. The [`JoinMemo`]
//! keeps each piece's hash between saves, and the bytes of the pieces that went unchanged
//! through a save, so a save that changed 1 % of the world joins and hashes the pieces that
//! changed and copies the rest; the hashes become the blob's
//! [`BlobPieces`](crate::format::BlobPieces), which let the save file's encoder find unchanged
//! pieces without scanning or hashing them. Measured on the issue-24 world (`tried`, 100k
//! entities, 1 % changed): joining row by row was a quarter of a save's pool part, and the
//! content-defined cut and hash of the blob another fifth (see `BENCHMARKS.md`). The memo
//! holds a copy of the rows that do not change from save to save: memory for time. Rows that
//! change every save are not copied there: on a world of long `Vec`s whose every piece held a
//! changed row (`large`, 100k), copying them made a save's pool part a fifth longer.

use super::hierarchy::DenseIndex;
use super::piece::Piece;
use crate::snapshot::blob::{BlobWriter, OpenColumn};
use bevy::prelude::*;
use keepsake_core::__private::PieceCuts;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A piece's rows as a blob joined them: entity index deltas and values.
struct Joined {
    /// The entity index the first delta counts from (the column's previous row's).
    base: u32,
    /// The last row's entity index (the next piece's base; a resource's column has none, and
    /// keeps its `0`).
    last: u32,
    rows: u32,
    /// XXH3-128 of the joined rows.
    hash: u128,
    /// The joined rows, kept once the piece went unchanged through a save: the rows of moving
    /// entities, which change every save, are never copied here.
    bytes: Option<Vec<u8>>,
}

/// What the last finished blob joined, by piece id, and for which entity table.
struct LastJoin {
    entities: Arc<[Entity]>,
    pieces: HashMap<u64, Joined>,
}

/// The rows the last finished blob joined, kept by the capture cache for the next one (see the
/// [module docs](self)). Two captures finished at once are both right: one takes the memo, the
/// other joins everything.
#[derive(Clone, Default)]
pub(crate) struct JoinMemo(Arc<Mutex<Option<LastJoin>>>);

impl JoinMemo {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<LastJoin>> {
        // Replaced whole, never left half-changed.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pieces the last blob joined, when it had the same entity table (else none).
    fn take(&self, entities: &Arc<[Entity]>) -> HashMap<u64, Joined> {
        match self.lock().take() {
            Some(last) if Arc::ptr_eq(&last.entities, entities) || last.entities == *entities => {
                last.pieces
            }
            _ => HashMap::new(),
        }
    }
}

/// Joins a blob's columns: takes over the last blob's joined pieces, joins the others, and
/// records where each piece ends (the save file's encoder groups pieces into chunks).
pub(super) struct Joiner<'a> {
    memo: JoinMemo,
    entities: &'a Arc<[Entity]>,
    /// Built when a piece is joined anew (a save that changed nothing needs none).
    index: Option<DenseIndex<'a>>,
    last: HashMap<u64, Joined>,
    next: HashMap<u64, Joined>,
}

impl<'a> Joiner<'a> {
    pub(super) fn new(memo: &JoinMemo, entities: &'a Arc<[Entity]>) -> Self {
        let last = memo.take(entities);
        Joiner {
            memo: memo.clone(),
            entities,
            index: None,
            next: HashMap::with_capacity(last.len()),
            last,
        }
    }

    /// Writes the rows of a column's pieces, each with its entity's index, and their cuts.
    pub(super) fn write_rows(
        &mut self,
        blob: &mut BlobWriter,
        column: &mut OpenColumn,
        pieces: &[Arc<Piece>],
        cuts: &mut PieceCuts,
    ) {
        for piece in pieces {
            let base = BlobWriter::delta_base(column);
            let start = blob.bytes.len();
            let joined = match self.last.remove(&piece.id()) {
                Some(kept) if kept.base == base => match kept.bytes {
                    Some(ref bytes) => {
                        blob.joined_rows(column, bytes, kept.rows, kept.last);
                        kept
                    }
                    // Joined anew by the last save and unchanged since: joined again (its
                    // hash is known), and kept from now on.
                    None => {
                        self.join(blob, column, piece);
                        Joined {
                            bytes: Some(blob.bytes[start..].to_vec()),
                            ..kept
                        }
                    }
                },
                _ => {
                    let rows = self.join(blob, column, piece);
                    Joined {
                        base,
                        last: BlobWriter::delta_base(column),
                        rows,
                        hash: xxhash_rust::xxh3::xxh3_128(&blob.bytes[start..]),
                        bytes: None,
                    }
                }
            };
            cuts.known(blob.bytes.len(), joined.hash);
            self.next.insert(piece.id(), joined);
        }
    }

    /// Writes a piece's rows, each with its entity's index; returns how many.
    fn join(&mut self, blob: &mut BlobWriter, column: &mut OpenColumn, piece: &Piece) -> u32 {
        let bytes = piece.bytes();
        if piece.entities.is_empty() {
            // A resource: its value, without an entity.
            for row in 0..piece.rows() {
                blob.row(column, None, bytes.row(row));
            }
            return piece.rows() as u32;
        }
        let entities = self.entities;
        let index = self.index.get_or_insert_with(|| DenseIndex::new(entities));
        let mut rows = 0;
        for (row, &entity) in piece.entities.iter().enumerate() {
            // Pieces hold saved entities only, which all have an index.
            let Some(dense) = index.get(entity) else {
                debug_assert!(false, "{entity} is in a piece but not saved");
                continue;
            };
            blob.row(column, Some(dense), bytes.row(row));
            rows += 1;
        }
        rows
    }

    /// Keeps what this blob joined for the next one.
    pub(super) fn keep(self) {
        *self.memo.lock() = Some(LastJoin {
            entities: Arc::clone(self.entities),
            pieces: self.next,
        });
    }
}
