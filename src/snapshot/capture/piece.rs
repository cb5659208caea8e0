//! What a capture keeps between captures: pieces (the encoded rows of up to [`PIECE_ROWS`]
//! table rows of one type, which a capture reuses, patches or rebuilds), each type's pieces by
//! table, and each table's entities.

use crate::snapshot::blob::push_prefixed;
use crate::snapshot::value::assets::CaptureProblem;
use bevy::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Table rows per piece: small enough that a change re-encodes or copies little, large enough
/// that a world of 100 000 entities has only about a hundred pieces per type to check.
pub const PIECE_ROWS: usize = 1024;

/// A chain of patches longer than this is put together on the main thread before another is
/// added: captures taken without finishing them (`PendingSnapshot::finish` puts the chain
/// together) would otherwise keep every older piece alive.
const MAX_PATCH_DEPTH: u32 = 8;

/// The next [`Piece::id`]: ids are never reused, so a history may know a piece by its id
/// without holding it.
static NEXT_PIECE_ID: AtomicU64 = AtomicU64::new(1);

/// Encoded rows, back to back, each value behind its varint length: the blob's bytes for these
/// rows without the entity index deltas.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Rows {
    /// Where each row's bytes end in `values`.
    ends: Vec<u32>,
    values: Vec<u8>,
}

impl Rows {
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of all rows.
    pub(super) fn byte_len(&self) -> usize {
        self.values.len()
    }

    fn start(&self, row: usize) -> usize {
        row.checked_sub(1)
            .map_or(0, |previous| self.ends[previous] as usize)
    }

    pub(crate) fn row(&self, row: usize) -> &[u8] {
        &self.values[self.start(row)..self.ends[row] as usize]
    }

    /// Row `row`'s value, without its length prefix: the bytes a value reader reads.
    pub(crate) fn value(&self, row: usize) -> &[u8] {
        let row = self.row(row);
        // Every row was written behind its varint length (`push`, `push_raw` of such rows).
        let prefix = keepsake_core::wire::read_varint(row, 10).map_or(0, |(_, len)| len);
        &row[prefix..]
    }

    /// Appends a row whose value `write` encodes.
    pub(super) fn push(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), CaptureProblem>,
    ) -> Result<(), CaptureProblem> {
        push_prefixed(&mut self.values, write)?;
        self.ends.push(self.values.len() as u32);
        Ok(())
    }

    /// Appends a row already encoded (its length prefix included).
    pub(crate) fn push_raw(&mut self, row: &[u8]) {
        self.values.extend_from_slice(row);
        self.ends.push(self.values.len() as u32);
    }

    /// The bytes a history counts for these rows: values and row ends.
    pub(super) fn heap_bytes(&self) -> usize {
        self.values.len() + self.ends.len() * size_of::<u32>()
    }

    /// `base` with `layers` laid over it, nearest first: each row comes from the first layer
    /// that holds it (a layer is its rows, ascending, and their values), else from `base`.
    pub(super) fn layered(base: &Rows, layers: &[Layer<'_>]) -> Rows {
        let mut next = vec![0usize; layers.len()];
        let mut rows = Rows {
            ends: Vec::with_capacity(base.len()),
            values: Vec::with_capacity(base.values.len()),
        };
        for row in 0..base.len() {
            let mut from = None;
            for (layer, next) in layers.iter().zip(&mut next) {
                if layer.changed.get(*next) == Some(&row) {
                    from = from.or(Some(layer.values.row(*next)));
                    *next += 1;
                }
            }
            rows.push_raw(from.unwrap_or_else(|| base.row(row)));
        }
        rows
    }

    /// `old` with the rows `changed` (ascending) replaced by `new`'s, in order: the rows
    /// between are copied in runs.
    fn patched(old: &Rows, changed: &[usize], new: &Rows) -> Rows {
        let mut rows = Rows {
            ends: Vec::with_capacity(old.len()),
            values: Vec::with_capacity(old.values.len() + new.values.len()),
        };
        // Bytes of `old` not copied yet start here; rows after the last changed one end
        // `shift` bytes later in the new rows than in the old.
        let (mut copied_to, mut shift) = (0usize, 0isize);
        let mut next = changed.iter().copied().enumerate().peekable();
        for row in 0..old.len() {
            let Some((k, _)) = next.next_if(|&(_, changed_row)| changed_row == row) else {
                rows.ends.push((old.ends[row] as isize + shift) as u32);
                continue;
            };
            rows.values
                .extend_from_slice(&old.values[copied_to..old.start(row)]);
            rows.values.extend_from_slice(new.row(k));
            rows.ends.push(rows.values.len() as u32);
            copied_to = old.ends[row] as usize;
            shift = rows.values.len() as isize - copied_to as isize;
        }
        rows.values.extend_from_slice(&old.values[copied_to..]);
        rows
    }
}

/// Rows laid over a piece's: which rows (ascending, relative to the piece), and their values in
/// the same order.
pub(super) struct Layer<'a> {
    pub(super) changed: &'a [usize],
    pub(super) values: &'a Rows,
}

/// Encoded rows of up to [`PIECE_ROWS`] table rows of one type (or a resource's value), and
/// their entities. A patched piece holds only its changed rows until its bytes are asked for
/// (by [`PendingSnapshot::finish`](super::PendingSnapshot::finish), on the task pool): the
/// main thread encodes what changed and copies nothing.
pub(crate) struct Piece {
    /// Unique for the life of the process (see [`Piece::id`]).
    id: u64,
    /// The rows' entities (none for a resource), shared with the pieces patched from this one.
    pub(super) entities: Arc<[Entity]>,
    rows: usize,
    bytes: OnceLock<Rows>,
    /// Until `bytes` is set: the piece this one patches, and its changed rows.
    patch: Mutex<Option<Patch>>,
    /// How many patches wait to be put together under this piece (0 once it has its bytes).
    depth: u32,
    /// The bytes of its rows and row ends, or at most that (a patch counts the piece it
    /// patches and its new rows whole).
    heap_bytes: usize,
}

struct Patch {
    old: Arc<Piece>,
    /// Changed rows, ascending, relative to the piece.
    changed: Arc<[usize]>,
    /// Their new values, in the same order.
    new: Arc<Rows>,
}

/// What a piece is made of, as a history sees it ([`Piece::parts`]).
pub(super) enum PieceParts {
    /// Its rows are put together.
    Whole,
    /// It patches `old`: the rows `changed` (ascending) have the values `new`.
    Patch {
        old: Arc<Piece>,
        changed: Arc<[usize]>,
        new: Arc<Rows>,
    },
}

impl Piece {
    /// A piece of encoded rows.
    pub(super) fn ready(entities: Arc<[Entity]>, rows: Rows) -> Self {
        Piece {
            id: NEXT_PIECE_ID.fetch_add(1, Ordering::Relaxed),
            heap_bytes: rows.heap_bytes(),
            entities,
            rows: rows.len(),
            bytes: OnceLock::from(rows),
            patch: Mutex::new(None),
            depth: 0,
        }
    }

    /// `old` with the rows `changed` (ascending, relative to the piece) re-encoded as `new`;
    /// its bytes are put together when first asked for.
    pub(super) fn patched(old: &Arc<Piece>, changed: Vec<usize>, new: Rows) -> Self {
        if old.depth >= MAX_PATCH_DEPTH {
            old.bytes();
        }
        let depth = match old.bytes.get() {
            Some(_) => 1,
            None => old.depth + 1,
        };
        Piece {
            id: NEXT_PIECE_ID.fetch_add(1, Ordering::Relaxed),
            // Exact once the old piece is put together (at least every `MAX_PATCH_DEPTH`
            // patches), so the estimate never drifts far.
            heap_bytes: old.bytes.get().map_or(old.heap_bytes, Rows::heap_bytes) + new.heap_bytes(),
            entities: Arc::clone(&old.entities),
            rows: old.rows,
            bytes: OnceLock::new(),
            patch: Mutex::new(Some(Patch {
                old: Arc::clone(old),
                changed: changed.into(),
                new: Arc::new(new),
            })),
            depth,
        }
    }

    /// The rows' entities, in row order (none for a resource).
    pub(crate) fn entities(&self) -> &Arc<[Entity]> {
        &self.entities
    }

    /// A number no other piece of this process has: a piece reused by the next capture is
    /// the same piece, with the same id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The bytes its rows take (at most: see the field), without its entities (which the
    /// pieces of a table's other columns share).
    pub(super) fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// Whether it holds the same entities and rows as `other`, both put together already (a
    /// patch not put together yet is never the same, as far as this can tell).
    pub(super) fn same_as(&self, other: &Piece) -> bool {
        match (self.bytes.get(), other.bytes.get()) {
            (Some(rows), Some(other_rows)) => self.entities == other.entities && rows == other_rows,
            _ => false,
        }
    }

    /// Whether it is a patch not put together yet (and of what), without putting it together.
    pub(super) fn parts(&self) -> PieceParts {
        let patch = self.patch.lock().unwrap_or_else(PoisonError::into_inner);
        match &*patch {
            Some(patch) => PieceParts::Patch {
                old: Arc::clone(&patch.old),
                changed: Arc::clone(&patch.changed),
                new: Arc::clone(&patch.new),
            },
            None => PieceParts::Whole,
        }
    }

    /// The values of `rows` (ascending), read through the patches without putting them
    /// together: a handful of rows out of a piece costs a handful of copies.
    pub(crate) fn rows_at(&self, rows: &[usize]) -> Rows {
        let mut out = Rows::default();
        for &row in rows {
            self.row_into(row, &mut out);
        }
        out
    }

    fn row_into(&self, row: usize, out: &mut Rows) {
        if let Some(bytes) = self.bytes.get() {
            return out.push_raw(bytes.row(row));
        }
        match self.parts() {
            PieceParts::Patch { old, changed, new } => match changed.binary_search(&row) {
                Ok(k) => out.push_raw(new.row(k)),
                Err(_) => old.row_into(row, out),
            },
            // Put together since, or being put together by another thread: wait for it.
            PieceParts::Whole => out.push_raw(self.bytes().row(row)),
        }
    }

    /// The piece's rows, put together from its patch (and the pieces under it) the first time.
    pub(crate) fn bytes(&self) -> &Rows {
        self.bytes.get_or_init(|| {
            let patch = self
                .patch
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match patch {
                Some(patch) => Rows::patched(patch.old.bytes(), &patch.changed, &patch.new),
                // Only `get_or_init` takes the patch, and it runs once.
                None => Rows::default(),
            }
        })
    }
}

/// The row ranges of the pieces of a table of `len` rows.
pub(super) fn piece_ranges(len: usize) -> impl Iterator<Item = Range<usize>> {
    (0..len)
        .step_by(PIECE_ROWS)
        .map(move |start| start..(start + PIECE_ROWS).min(len))
}

/// One table's entities at the last capture, and which pieces still hold the same ones.
#[derive(Default)]
pub(super) struct TableRows {
    pub(super) entities: Vec<Entity>,
    /// The capture that last compared them.
    pub(super) checked: u64,
    /// Per piece: whether its rows hold the same entities as at the last capture.
    pub(super) same: Vec<bool>,
    /// Per piece: its entities as every column's piece of those rows holds them, once a
    /// column rebuilt one since they last changed (one allocation for all the table's types).
    pub(super) shared: Vec<Option<Arc<[Entity]>>>,
}

/// The cached pieces of one registered type.
#[derive(Default)]
pub(super) struct ColumnCache {
    /// By table index.
    pub(super) tables: Vec<Vec<Arc<Piece>>>,
    /// A resource's entity and value.
    pub(super) resource: Option<(Entity, Arc<Piece>)>,
}
