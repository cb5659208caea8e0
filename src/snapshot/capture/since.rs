//! What changed between a kept snapshot and a later capture of the same cache, read from the
//! history's reverse deltas: the rows an in-place restore of the kept snapshot compares.
//!
//! Each kept node's chain (its older rows, layer after layer, down to the whole piece it ends
//! in) says which rows changed since it was kept. When the chain ends in a piece of the later
//! capture, only the rows its layers name can differ, and the entities are the same ones, row
//! for row. A chain that ends elsewhere (the table's entities changed: a spawn, a despawn, an
//! insert or a removal rebuilt the piece) promises nothing: the node's rows are put together
//! and compared entity by entity, as are the later capture's pieces no chain reached.
//!
//! Two captures of a world that changed 1 % between them differ in a few rows of the pieces
//! of the types that changed: those rows are all that is copied here.

use super::history::{KeptSnapshot, Node, OlderRows, merge_layers};
use super::pending::PendingSnapshot;
use super::piece::{Piece, Rows};
use crate::snapshot::blob::ColumnKind;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// How a kept snapshot differs from a later capture of the same cache, column by column (see
/// the [module docs](self)).
pub(crate) struct KeptChanges {
    pub(crate) columns: Vec<ColumnChanges>,
}

/// One type's rows that may differ.
pub(crate) struct ColumnChanges {
    pub(crate) type_path: &'static str,
    pub(crate) kind: ColumnKind,
    /// Rows of pieces both captures hold, with the same entities.
    pub(crate) pairs: Vec<RowPairs>,
    /// The kept snapshot's pieces no chain links to the later capture, put together.
    pub(crate) kept_only: Vec<Arc<Piece>>,
    /// The later capture's pieces no kept chain reached.
    pub(crate) live_only: Vec<Arc<Piece>>,
}

/// Rows of one piece (the same entities in both captures) whose values may differ.
pub(crate) struct RowPairs {
    pub(crate) entities: Arc<[Entity]>,
    /// The rows, ascending.
    pub(crate) rows: Vec<usize>,
    /// Their values in the kept snapshot, in the same order.
    pub(crate) kept: Rows,
    /// Their values in the later capture, in the same order.
    pub(crate) live: Rows,
}

/// The later capture's pieces of one column, by id.
struct LiveColumn<'a> {
    kind: ColumnKind,
    pieces: &'a [Arc<Piece>],
    by_id: HashMap<u64, usize>,
}

impl KeptSnapshot {
    /// How many rows bringing this snapshot back over `live` (a later capture of the same
    /// cache, recorded by the same history) compares: the rows the chains name, and every
    /// row of the pieces no chain pairs. Walks the chains; copies nothing.
    pub fn rows_changed_since(&self, live: &PendingSnapshot) -> usize {
        let live = live_columns(live);
        let mut rows = 0;
        for (column, nodes) in self.columns() {
            let Some(live) = live.get(column.type_path) else {
                rows += nodes
                    .iter()
                    .map(|node| node.chain().1.rows())
                    .sum::<usize>();
                continue;
            };
            let mut reached = vec![false; live.pieces.len()];
            for node in nodes {
                let (layers, end) = node.chain();
                match live.by_id.get(&end.id()) {
                    Some(&at) => {
                        reached[at] = true;
                        rows += distinct_rows(&layers, end.rows());
                    }
                    None => rows += end.rows(),
                }
            }
            let unreached = live
                .pieces
                .iter()
                .zip(&reached)
                .filter(|(_, reached)| !**reached);
            rows += unreached.map(|(piece, _)| piece.rows()).sum::<usize>();
        }
        rows
    }

    /// The rows that may differ between this snapshot and `live`, a later capture of the same
    /// cache recorded by the same history (see the [module docs](self)).
    pub(crate) fn changes_since(&self, live: &PendingSnapshot) -> KeptChanges {
        let mut live_by_path = live_columns(live);
        let mut columns: Vec<ColumnChanges> = (self.columns().iter())
            .map(|(column, nodes)| {
                let live = live_by_path.remove(column.type_path);
                column_changes(column.type_path, column.kind, nodes, live)
            })
            .collect();
        // Types the kept snapshot has no column of: all their rows are the later capture's.
        for (type_path, live) in live_by_path {
            columns.push(column_changes(type_path, live.kind, &[], Some(live)));
        }
        KeptChanges { columns }
    }
}

/// How many rows `layers` name, each counted once, in a piece of `rows` rows.
fn distinct_rows(layers: &[OlderRows], rows: usize) -> usize {
    match layers {
        [] => 0,
        [(changed, _)] => changed.len(),
        _ => {
            let mut named = vec![false; rows];
            let all = layers.iter().flat_map(|(changed, _)| changed.iter());
            all.filter(|&&row| row < rows && !std::mem::replace(&mut named[row], true))
                .count()
        }
    }
}

fn live_columns(live: &PendingSnapshot) -> HashMap<&'static str, LiveColumn<'_>> {
    (live.columns().iter())
        .map(|(column, pieces)| {
            let by_id = (pieces.iter().enumerate()).map(|(at, c)| (c.id(), at));
            let live = LiveColumn {
                kind: column.kind,
                pieces,
                by_id: by_id.collect(),
            };
            (column.type_path, live)
        })
        .collect()
}

/// One column's changes: each kept node's chain paired with the live piece it ends in, or
/// put together when it ends elsewhere.
fn column_changes(
    type_path: &'static str,
    kind: ColumnKind,
    nodes: &[Arc<Node>],
    live: Option<LiveColumn<'_>>,
) -> ColumnChanges {
    let mut changes = ColumnChanges {
        type_path,
        kind,
        pairs: Vec::new(),
        kept_only: Vec::new(),
        live_only: Vec::new(),
    };
    let live_pieces = live.as_ref().map_or(&[][..], |live| live.pieces);
    let mut reached = vec![false; live_pieces.len()];
    for node in nodes {
        let (layers, end) = node.chain();
        let at = live
            .as_ref()
            .and_then(|live| live.by_id.get(&end.id()).copied());
        match at {
            Some(at) => {
                reached[at] = true;
                if let Some(pairs) = row_pairs(&layers, &end) {
                    changes.pairs.push(pairs);
                }
            }
            None => changes.kept_only.push(node.piece()),
        }
    }
    let unreached = live_pieces
        .iter()
        .zip(reached)
        .filter(|(_, reached)| !reached);
    changes.live_only = unreached.map(|(piece, _)| Arc::clone(piece)).collect();
    changes
}

/// The rows `layers` name (each with its value in the nearest layer that holds it) and their
/// values in `end`; `None` when no row changed.
fn row_pairs(layers: &[OlderRows], end: &Piece) -> Option<RowPairs> {
    let (rows, kept) = match layers {
        [] => return None,
        // One layer (the common case, and every merged chain): its rows as they are.
        [(changed, values)] => (changed.to_vec(), Rows::clone(values)),
        _ => merge_layers(layers, end.rows()),
    };
    if rows.is_empty() {
        return None;
    }
    Some(RowPairs {
        entities: Arc::clone(end.entities()),
        live: end.rows_at(&rows),
        rows,
        kept,
    })
}
