//! One registered type's column during a capture: the sink its typed walk hands tables and
//! values to, which decides piece by piece what to reuse, patch or encode.

use super::encode::{RowJob, WriterRecipe, encode_jobs};
use super::piece::{ColumnCache, PIECE_ROWS, Piece, Rows, TableRows, piece_ranges};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{ColumnSink, EncodeResource, EncodeRow};
use crate::snapshot::value::assets::{CaptureAssets, CaptureProblem};
use crate::snapshot::value::{TypeOps, ValueWriter};
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::change_detection::Tick;
use bevy::ecs::storage::TableId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::cell::UnsafeCell;
use std::sync::Arc;

/// What a [`CaptureCache`](crate::snapshot::CaptureCache) did in its last capture: how much it
/// re-encoded and how much it reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Values encoded (changed rows of patched pieces, every row of rebuilt pieces, changed
    /// resources).
    pub rows_encoded: usize,
    /// Of those, the ones encoded on the compute pool's threads as well as the capturing one
    /// (a table's column with enough to encode: see
    /// [`CaptureCache::capture`](crate::snapshot::CaptureCache::capture)).
    pub rows_spread: usize,
    /// Pieces taken over unchanged.
    pub pieces_reused: usize,
    /// Pieces whose changed rows were re-encoded and the others copied.
    pub pieces_patched: usize,
    /// Pieces encoded from scratch.
    pub pieces_rebuilt: usize,
    /// Whether the cache started over (first capture, or the world, registry or filter
    /// changed).
    pub started_over: bool,
    /// Tables whose hierarchy (`ChildOf`, `Children`) was read again: their entities or links
    /// changed.
    pub hierarchy_tables_read: usize,
    /// Tables whose hierarchy was taken over from the last capture.
    pub hierarchy_tables_reused: usize,
}

/// Whether a table's entities are saved: all, none, or some (the filter names a sparse-set
/// component, so entities of one table can differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TableSaved {
    All,
    None,
    Some,
}

/// Which archetypes and tables hold saved entities.
pub(super) struct SavedTables {
    archetypes: Vec<bool>,
    tables: Vec<TableSaved>,
}

impl SavedTables {
    pub(super) fn new(world: &World, saved: &[ArchetypeId]) -> Self {
        let mut archetypes = vec![false; world.archetypes().len()];
        for id in saved {
            archetypes[id.index()] = true;
        }
        let mut tables: Vec<Option<TableSaved>> = Vec::new();
        for archetype in world.archetypes().iter().filter(|a| !a.is_empty()) {
            let index = archetype.table_id().as_usize();
            if tables.len() <= index {
                tables.resize(index + 1, None);
            }
            let this = match archetypes[archetype.id().index()] {
                true => TableSaved::All,
                false => TableSaved::None,
            };
            tables[index] = Some(match tables[index] {
                Some(before) if before != this => TableSaved::Some,
                _ => this,
            });
        }
        SavedTables {
            archetypes,
            tables: tables
                .into_iter()
                .map(|saved| saved.unwrap_or(TableSaved::None))
                .collect(),
        }
    }

    pub(super) fn table(&self, table: TableId) -> TableSaved {
        self.tables
            .get(table.as_usize())
            .copied()
            .unwrap_or(TableSaved::None)
    }

    /// Whether the archetype's entities are saved.
    pub(super) fn archetype(&self, archetype: ArchetypeId) -> bool {
        self.archetypes
            .get(archetype.index())
            .copied()
            .unwrap_or(false)
    }

    pub(super) fn entity(&self, world: &World, entity: Entity) -> bool {
        world
            .entities()
            .get_spawned(entity)
            .is_ok_and(|location| self.archetypes[location.archetype_id.index()])
    }
}

/// Which change ticks count as changed since the last capture.
#[derive(Clone, Copy)]
pub(crate) struct Changes {
    /// `None` when nothing cached can be trusted.
    pub(super) since: Option<Tick>,
    pub(super) this_run: Tick,
}

impl Changes {
    /// Every value counts as changed (nothing cached can be trusted).
    pub(super) fn everything(this_run: Tick) -> Self {
        Changes {
            since: None,
            this_run,
        }
    }

    /// Whether any of `ticks` is newer than the last capture (always, when nothing cached can
    /// be trusted).
    pub(super) fn any_changed(&self, ticks: &[UnsafeCell<Tick>]) -> bool {
        let Some(since) = self.since else {
            return true;
        };
        let (this_run, window) = (self.this_run.get(), self.window(since));
        // Without a branch per row, so the scan of an unchanged table vectorises.
        ticks.iter().fold(false, |any, cell| {
            // SAFETY: the shared borrow of the world keeps anything from writing to the ticks
            // while they are read.
            let tick = unsafe { *cell.get() };
            any | (this_run.wrapping_sub(tick.get()) < window)
        })
    }

    /// Whether `tick` is newer than `since`, as [`Tick::is_newer_than`] tells (the window is
    /// kept below Bevy's maximum change age, so no clamping is needed).
    fn is_changed(&self, since: Tick, tick: Tick) -> bool {
        self.this_run.get().wrapping_sub(tick.get()) < self.window(since)
    }

    /// Ticks at most this many ticks old changed after `since`.
    fn window(&self, since: Tick) -> u32 {
        self.this_run.get().wrapping_sub(since.get())
    }
}

/// `encode_jobs` returns one `Rows` per job, in order: a piece left without its rows would
/// be a wrong save, so a mismatch stops the capture instead.
const ONE_PER_JOB: &str = "the encoder returns one row set per job";

/// What a capture does with one piece of a cached table.
enum PieceWork<'c> {
    /// Nothing changed since the last capture: the piece is taken over.
    Reuse(&'c Arc<Piece>),
    /// Only values changed: the `changed` rows (relative to the piece, whose first table row
    /// is `first`) are encoded, the others copied from `old` on the pool.
    Patch {
        old: &'c Arc<Piece>,
        first: usize,
        changed: Vec<usize>,
    },
    /// The rows' entities changed: every row is encoded.
    Rebuild {
        entities: Arc<[Entity]>,
        first: usize,
        rows: Vec<usize>,
    },
}

impl PieceWork<'_> {
    /// The rows to encode, if any.
    fn job(&self) -> Option<RowJob<'_>> {
        match self {
            PieceWork::Reuse(_) => None,
            PieceWork::Patch { first, changed, .. } => Some(RowJob {
                first: *first,
                offsets: changed,
            }),
            PieceWork::Rebuild { first, rows, .. } => Some(RowJob {
                first: *first,
                offsets: rows,
            }),
        }
    }
}

/// One registered type's column during a capture: the type's walk hands it tables (it is the
/// walk's [`ColumnSink`]), and it decides piece by piece what to reuse and what to encode.
pub(super) struct ColumnRefresh<'a> {
    pub(super) world: &'a World,
    pub(super) types: &'a TypeRegistry,
    pub(super) assets: &'a CaptureAssets,
    pub(super) saved: &'a SavedTables,
    pub(super) changes: Changes,
    pub(super) capture_count: u64,
    pub(super) ops: &'a TypeOps,
    pub(super) tables: &'a mut Vec<TableRows>,
    pub(super) cache: &'a mut ColumnCache,
    /// Built at the first value to encode (building a reflection plan costs more than checking
    /// an unchanged column).
    pub(super) writer: Option<ValueWriter<'a>>,
    pub(super) pieces: Vec<Arc<Piece>>,
    pub(super) stats: &'a mut CaptureStats,
}

impl<'a> ColumnRefresh<'a> {
    /// The column's pieces, in blob order.
    pub(super) fn into_pieces(self) -> Vec<Arc<Piece>> {
        self.pieces
    }

    fn writer(&mut self) -> &ValueWriter<'a> {
        let (types, ops, assets) = (self.types, self.ops, self.assets);
        self.writer
            .get_or_insert_with(|| ValueWriter::new(types, ops, assets))
    }

    fn problem(&self, problem: CaptureProblem) -> SnapshotError {
        problem.into_error(self.ops.type_path)
    }

    /// Encodes every saved row of a table without keeping its pieces (the table mixes saved
    /// and unsaved entities).
    fn uncached_table(
        &mut self,
        entities: &[Entity],
        saved: TableSaved,
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let keep = |entity: Entity| saved == TableSaved::All || self.is_saved(entity);
        let rows: Vec<Vec<usize>> = piece_ranges(entities.len())
            .map(|range| range.filter(|&row| keep(entities[row])).collect())
            .collect();
        self.fresh_pieces(entities, &rows, encode)
    }

    /// Encodes pieces of the given table rows (each list ascending), none of them kept.
    fn fresh_pieces(
        &mut self,
        entities: &[Entity],
        pieces: &[Vec<usize>],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let jobs: Vec<RowJob<'_>> = pieces
            .iter()
            .map(|rows| RowJob {
                first: 0,
                offsets: rows,
            })
            .collect();
        let mut encoded = self.encode(&jobs, encode)?.into_iter();
        for rows in pieces {
            self.stats.pieces_rebuilt += 1;
            let values = encoded.next().expect(ONE_PER_JOB);
            let piece = Piece::ready(rows_of(entities, rows), values);
            self.pieces.push(Arc::new(piece));
        }
        Ok(())
    }

    /// Brings each piece of a table of saved entities up to date: reused, patched or rebuilt.
    /// Returns the pieces to keep for the next capture.
    fn cached_table(
        &mut self,
        table: TableId,
        entities: &[Entity],
        ticks: &[UnsafeCell<Tick>],
        cached: &[Arc<Piece>],
        encode: &EncodeRow<'_>,
    ) -> Result<Vec<Arc<Piece>>, SnapshotError> {
        let work = self.piece_work(table, entities, ticks, cached);
        let jobs: Vec<RowJob<'_>> = work.iter().filter_map(PieceWork::job).collect();
        let mut encoded = self.encode(&jobs, encode)?.into_iter();
        let mut kept = Vec::with_capacity(work.len());
        for work in work {
            let piece = match work {
                PieceWork::Reuse(old) => {
                    self.stats.pieces_reused += 1;
                    Arc::clone(old)
                }
                PieceWork::Patch { old, changed, .. } => {
                    self.stats.pieces_patched += 1;
                    let new = encoded.next().expect(ONE_PER_JOB);
                    Arc::new(Piece::patched(old, changed, new))
                }
                PieceWork::Rebuild { entities, .. } => {
                    self.stats.pieces_rebuilt += 1;
                    Arc::new(Piece::ready(entities, encoded.next().expect(ONE_PER_JOB)))
                }
            };
            kept.push(Arc::clone(&piece));
            self.pieces.push(piece);
        }
        Ok(kept)
    }

    /// What to do with each piece of a table of saved entities.
    fn piece_work<'c>(
        &mut self,
        table: TableId,
        entities: &[Entity],
        ticks: &[UnsafeCell<Tick>],
        cached: &'c [Arc<Piece>],
    ) -> Vec<PieceWork<'c>> {
        let same = self.same_pieces(table, entities);
        let mut work = Vec::with_capacity(same.len());
        for (k, range) in piece_ranges(entities.len()).enumerate() {
            let old = cached.get(k).filter(|_| same[k]);
            let changed =
                old.and_then(|old| Some((old, self.changed_rows(&ticks[range.clone()])?)));
            work.push(match changed {
                Some((old, rows)) if rows.is_empty() => PieceWork::Reuse(old),
                Some((old, changed)) => PieceWork::Patch {
                    old,
                    first: range.start,
                    changed,
                },
                None => PieceWork::Rebuild {
                    entities: self.piece_entities(table, k, &entities[range.clone()]),
                    first: range.start,
                    rows: (0..range.len()).collect(),
                },
            });
        }
        work
    }

    /// Encodes the jobs' rows, in parallel when there are many (see `encode.rs`).
    fn encode(
        &mut self,
        jobs: &[RowJob<'_>],
        encode: &EncodeRow<'_>,
    ) -> Result<Vec<Rows>, SnapshotError> {
        let recipe = WriterRecipe {
            types: self.types,
            ops: self.ops,
            policy: self.assets.policy(),
            build: |types, ops, assets| ValueWriter::new(types, ops, assets),
        };
        let encoded = encode_jobs(jobs, self.writer(), recipe, encode)
            .map_err(|problem| self.problem(problem))?;
        self.stats.rows_encoded += jobs.iter().map(|job| job.offsets.len()).sum::<usize>();
        self.stats.rows_spread += encoded.spread;
        Ok(encoded.rows)
    }

    /// The rows of a piece (relative to it) whose change ticks are newer than the last
    /// capture; `None` when nothing cached can be trusted.
    fn changed_rows(&self, ticks: &[UnsafeCell<Tick>]) -> Option<Vec<usize>> {
        let since = self.changes.since?;
        let (this_run, window) = (self.changes.this_run.get(), self.changes.window(since));
        let newer = |cell: &UnsafeCell<Tick>| {
            // SAFETY: the shared borrow of the world keeps anything from writing to the ticks
            // while they are read.
            let tick = unsafe { *cell.get() };
            this_run.wrapping_sub(tick.get()) < window
        };
        if !self.changes.any_changed(ticks) {
            return Some(Vec::new());
        }
        Some((0..ticks.len()).filter(|&row| newer(&ticks[row])).collect())
    }

    /// The entities of piece `k` of `table` (`entities`, as the table holds them now), one
    /// allocation shared by every column's piece of those rows until they change.
    fn piece_entities(&mut self, table: TableId, k: usize, entities: &[Entity]) -> Arc<[Entity]> {
        let shared = &mut self.tables[table.as_usize()].shared;
        Arc::clone(shared[k].get_or_insert_with(|| entities.into()))
    }

    /// Per piece of `table`: whether its rows hold the same entities as at the last capture.
    /// Worked out by the first column to look at the table in a capture, which also records
    /// the table's entities for the next.
    fn same_pieces(&mut self, table: TableId, entities: &[Entity]) -> Vec<bool> {
        let index = table.as_usize();
        if self.tables.len() <= index {
            self.tables.resize_with(index + 1, TableRows::default);
        }
        let rows = &mut self.tables[index];
        if rows.checked != self.capture_count {
            // A piece of the old table that ended elsewhere (the table grew or shrank) is not
            // the same, even when its first rows are.
            let old_end = rows.entities.len();
            rows.same = piece_ranges(entities.len())
                .map(|range| {
                    let old_range = range.start..(range.start + PIECE_ROWS).min(old_end);
                    old_range == range && rows.entities[old_range] == entities[range]
                })
                .collect();
            // Record the table as it is now, copying only the pieces that differ.
            rows.entities.truncate(entities.len());
            let kept = rows.entities.len();
            rows.entities.extend_from_slice(&entities[kept..]);
            rows.shared.resize(rows.same.len(), None);
            for ((range, same), shared) in piece_ranges(entities.len())
                .zip(&rows.same)
                .zip(&mut rows.shared)
            {
                if !same {
                    rows.entities[range.clone()].copy_from_slice(&entities[range]);
                    *shared = None;
                }
            }
            rows.checked = self.capture_count;
        }
        rows.same.clone()
    }
}

impl ColumnSink for ColumnRefresh<'_> {
    /// Whether `entity` is saved.
    fn is_saved(&self, entity: Entity) -> bool {
        self.saved.entity(self.world, entity)
    }

    /// Encodes the given rows afresh (sparse-set components): pieces nothing is kept of.
    fn fresh_rows(
        &mut self,
        entities: &[Entity],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let rows: Vec<Vec<usize>> = piece_ranges(entities.len())
            .map(Iterator::collect)
            .collect();
        self.fresh_pieces(entities, &rows, encode)
    }

    /// One table of the column: its entities, the column's change ticks and how to encode a
    /// row.
    fn table(
        &mut self,
        table: TableId,
        entities: &[Entity],
        ticks: &[UnsafeCell<Tick>],
        encode: &EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let index = table.as_usize();
        if self.cache.tables.len() <= index {
            self.cache.tables.resize_with(index + 1, Vec::new);
        }
        let cached = std::mem::take(&mut self.cache.tables[index]);
        match self.saved.table(table) {
            TableSaved::None => Ok(()),
            TableSaved::Some => self.uncached_table(entities, TableSaved::Some, encode),
            TableSaved::All => {
                let left_out = self.assets.values_left_out();
                let kept = self.cached_table(table, entities, ticks, &cached, encode)?;
                // A table whose values left run-time handles out (saved as the default handle)
                // is encoded again by the next capture, so every capture reports them.
                if self.assets.values_left_out() == left_out {
                    self.cache.tables[index] = kept;
                }
                Ok(())
            }
        }
    }

    /// The resource's value: kept when it did not change since the last capture.
    fn resource(
        &mut self,
        entity: Entity,
        changed: Tick,
        encode: &mut EncodeResource<'_>,
    ) -> Result<(), SnapshotError> {
        let cached = self.cache.resource.take();
        let unchanged = match (&cached, self.changes.since) {
            (Some((at, _)), Some(since)) => {
                *at == entity && !self.changes.is_changed(since, changed)
            }
            _ => false,
        };
        let left_out = self.assets.values_left_out();
        let piece = match (cached, unchanged) {
            (Some((_, piece)), true) => {
                self.stats.pieces_reused += 1;
                piece
            }
            _ => {
                let mut bytes = Rows::default();
                let writer = self.writer();
                bytes
                    .push(|out| encode(writer, out))
                    .map_err(|problem| self.problem(problem))?;
                self.stats.rows_encoded += 1;
                self.stats.pieces_rebuilt += 1;
                Arc::new(Piece::ready(Arc::default(), bytes))
            }
        };
        // Kept unless it left run-time handles out, as a table's pieces are.
        if self.assets.values_left_out() == left_out {
            self.cache.resource = Some((entity, Arc::clone(&piece)));
        }
        self.pieces.push(piece);
        Ok(())
    }
}

/// The entities of `rows` of a table, for a piece of its own.
fn rows_of(entities: &[Entity], rows: &[usize]) -> Arc<[Entity]> {
    rows.iter().map(|&row| entities[row]).collect()
}
