//! Incremental capture: the encoded rows of the last capture, kept in chunks, so a capture
//! re-encodes only what changed since.
//!
//! A full [`capture`](super::capture) encodes every saved value on the main thread. Most of a
//! world does not change between two saves, so a [`CaptureCache`] keeps each registered type's
//! column as chunks of up to [`CHUNK_ROWS`] table rows: the chunk's entities and their
//! length-prefixed values, which are exactly the bytes the blob holds for those rows except the
//! entity index deltas. A capture walks each type's tables in the order a full capture visits
//! them and, per chunk:
//!
//! - reuses it when the table holds the same entities in those rows as at the last capture and
//!   no value's change tick is newer than that capture;
//! - *patches* it when only values changed: the changed rows are encoded, the others copied in
//!   runs from the old chunk;
//! - rebuilds it when the rows' entities changed (a spawn, despawn, insert or removal moves
//!   entities between tables, and a despawn swaps the table's last row into the hole), when the
//!   table mixes saved and unsaved entities, or when the type can hold asset handles (whose
//!   left-out handles each capture reports).
//!
//! Resources are re-encoded when their change tick is newer. Entity references inside values
//! are written as the saving world's ids, not as entity indices, so moving an entity in the
//! entity table never invalidates a chunk. The entity table (the filter's entities, ordered by
//! the hierarchy) is read on the main thread as ids, parents and children; putting it in order,
//! giving each row its entity index and joining the chunks into the blob, then hashing it, is
//! [`PendingSnapshot::finish`], which needs no world and runs on the task pool in the plugin.
//!
//! The blob is byte for byte the one a full capture of the same world writes (tests edit a world
//! at random for hundreds of steps and compare). Changes made without change detection
//! (`bypass_change_detection`, interior mutability) are not seen, nor are type registrations
//! that change how a type is written (`ReflectSerialize` registered later): call
//! [`CaptureCache::clear`] after them. The cache starts over by itself when the world, the registry or its filter
//! changes, after a failed capture, and when the last capture is too many ticks ago for change
//! ticks to tell.

use super::assets::{CaptureAssets, CaptureProblem, LeftOutHandle, RuntimeAssetHandles};
use super::blob::{ColumnKind, state_hash};
use super::capture::{
    ColumnId, DenseIndex, Hierarchy, Snapshot, column_header, entity_table, push_prefixed,
    registries, write_delta,
};
use super::error::SnapshotError;
use super::registry::SaveRegistry;
use super::type_ops::TypeOps;
use super::value::ValueWriter;
use bevy::ecs::change_detection::Tick;
use bevy::ecs::component::StorageType;
use bevy::ecs::entity_disabling::DefaultQueryFilters;
use bevy::ecs::storage::TableId;
use bevy::ecs::world::WorldId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::cell::UnsafeCell;
use std::ops::Range;
use std::sync::Arc;

/// Table rows per chunk: small enough that a change re-encodes or copies little, large enough
/// that a world of 100 000 entities has only about a hundred chunks per type to check.
pub const CHUNK_ROWS: usize = 1024;

/// Captures older than this many change ticks are not trusted to tell what changed (Bevy
/// clamps the age of old change ticks), so the cache starts over.
const MAX_TICK_WINDOW: u32 = 1 << 30;

/// The encoded rows of the last capture, by registered type and table, for
/// [`CaptureCache::capture`] to re-encode only what changed since.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, CaptureCache, Saveable, SaveableAppExt};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// let world = app.world_mut();
/// let hero = world.spawn((Saveable, Health(7.0))).id();
/// world.spawn_batch((0..3000).map(|_| (Saveable, Health(1.0))));
///
/// // Frames go by between the spawns, the saves and the edits (in one tick, a capture cannot
/// // tell an edit made before it from one made after, and counts it as changed).
/// world.increment_change_tick();
/// let mut cache = CaptureCache::default();
/// cache.capture(world)?.finish();
/// world.increment_change_tick();
/// world.get_mut::<Health>(hero).unwrap().0 = 3.0;
/// let snapshot = cache.capture(world)?.finish();
///
/// assert_eq!(snapshot.blob, snapshot::capture(world)?.blob);
/// assert_eq!(cache.stats().rows_encoded, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct CaptureCache {
    /// What the cached chunks were encoded for; `None` when nothing is cached.
    key: Option<CacheKey>,
    /// Changes at a tick newer than this are not in the cached chunks.
    since: Tick,
    /// Bumped per capture, so each table's entities are compared once per capture.
    generation: u64,
    /// The entities of each table at the last capture, by table index.
    tables: Vec<TableRows>,
    /// The cached chunks of each registered type, by registry entry.
    columns: Vec<ColumnCache>,
    stats: CaptureStats,
}

/// What a [`CaptureCache`] did in its last capture: how much it re-encoded and how much it
/// reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Values encoded (changed rows of patched chunks, every row of rebuilt chunks, changed
    /// resources).
    pub rows_encoded: usize,
    /// Chunks taken over unchanged.
    pub chunks_reused: usize,
    /// Chunks whose changed rows were re-encoded and the others copied.
    pub chunks_patched: usize,
    /// Chunks encoded from scratch.
    pub chunks_rebuilt: usize,
    /// Whether the cache started over (first capture, or the world, registry or filter
    /// changed).
    pub started_over: bool,
}

#[derive(Clone, PartialEq, Eq)]
struct CacheKey {
    world: WorldId,
    registry: u64,
}

/// One table's entities at the last capture, and which chunks still hold the same ones.
#[derive(Default)]
struct TableRows {
    entities: Vec<Entity>,
    /// The capture that last compared them.
    checked: u64,
    /// Per chunk: whether its rows hold the same entities as at the last capture.
    same: Vec<bool>,
}

/// The cached chunks of one registered type.
#[derive(Default)]
struct ColumnCache {
    /// Whether values can be cached (not when writing them reports left-out asset handles);
    /// worked out at the first capture that encodes one.
    cacheable: Option<bool>,
    /// By table index.
    tables: Vec<Vec<Arc<Chunk>>>,
    /// A resource's entity and value.
    resource: Option<(Entity, Arc<Chunk>)>,
}

/// Encoded rows: each row's entity (none for a resource) and its value behind its varint length,
/// back to back — the blob's bytes for these rows without the entity index deltas.
#[derive(Default)]
pub(crate) struct Chunk {
    entities: Vec<Entity>,
    /// Where each row's bytes end in `values`.
    ends: Vec<u32>,
    values: Vec<u8>,
}

impl Chunk {
    fn rows(&self) -> usize {
        self.ends.len()
    }

    fn start(&self, row: usize) -> usize {
        row.checked_sub(1)
            .map_or(0, |previous| self.ends[previous] as usize)
    }

    fn row(&self, row: usize) -> &[u8] {
        &self.values[self.start(row)..self.ends[row] as usize]
    }

    fn push(
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

/// Whether a table's entities are saved: all, none, or some (the filter names a sparse-set
/// component, so entities of one table can differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TableSaved {
    All,
    None,
    Some,
}

/// The main thread's part of an incremental capture: everything [`PendingSnapshot::finish`]
/// needs to write the blob, without the world.
pub struct PendingSnapshot {
    matched: Vec<Entity>,
    hierarchy: Hierarchy,
    columns: Vec<(ColumnId, Vec<Arc<Chunk>>)>,
    handles_left_out: Vec<LeftOutHandle>,
}

impl PendingSnapshot {
    /// How many entities the snapshot holds.
    pub fn entities(&self) -> usize {
        self.matched.len()
    }

    /// Handles to run-time assets saved as the default handle (see [`RuntimeAssetHandles`]).
    pub fn handles_left_out(&self) -> &[LeftOutHandle] {
        &self.handles_left_out
    }

    /// Orders the entity table, gives every row its entity index and joins the chunks into the
    /// blob, then hashes it. Needs no world: the plugin runs it on the task pool.
    pub fn finish(self) -> Snapshot {
        let entities = self.hierarchy.order(self.matched);
        let index = DenseIndex::new(&entities);
        let values: usize = self
            .columns
            .iter()
            .flat_map(|(_, chunks)| chunks)
            .map(|chunk| chunk.values.len() + chunk.rows() * 2)
            .sum();
        let mut blob = entity_table(&entities, values + entities.len() * 4 + 1024);
        let column_count_at = blob.len();
        blob.extend_from_slice(&[0; 4]);
        let (mut components, mut resources, mut columns) = (0, 0, 0u32);
        for (column, chunks) in &self.columns {
            if chunks.iter().all(|chunk| chunk.rows() == 0) {
                continue;
            }
            let count_at = column_header(&mut blob, column);
            let rows = write_rows(&mut blob, chunks, &index);
            blob[count_at..count_at + 4].copy_from_slice(&rows.to_le_bytes());
            columns += 1;
            match column.kind {
                ColumnKind::Component => components += rows as usize,
                ColumnKind::Resource => resources += rows as usize,
            }
        }
        blob[column_count_at..column_count_at + 4].copy_from_slice(&columns.to_le_bytes());
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

/// Writes the rows of a column's chunks, each with its entity's index as a delta; returns how
/// many.
fn write_rows(blob: &mut Vec<u8>, chunks: &[Arc<Chunk>], index: &DenseIndex<'_>) -> u32 {
    let (mut rows, mut previous) = (0u32, 0u32);
    for chunk in chunks {
        if chunk.entities.is_empty() {
            // A resource: its value, without an entity.
            for row in 0..chunk.rows() {
                blob.extend_from_slice(chunk.row(row));
                rows += 1;
            }
            continue;
        }
        for (row, &entity) in chunk.entities.iter().enumerate() {
            // Chunks hold saved entities only, which all have an index.
            let Some(dense) = index.get(entity) else {
                debug_assert!(false, "{entity} is in a chunk but not saved");
                continue;
            };
            write_delta(blob, previous.into(), dense.into());
            previous = dense;
            blob.extend_from_slice(chunk.row(row));
            rows += 1;
        }
    }
    rows
}

/// Captures the world through `cache`: [`CaptureCache::capture`] then [`PendingSnapshot::finish`].
pub fn capture_incremental(
    world: &World,
    cache: &mut CaptureCache,
) -> Result<Snapshot, SnapshotError> {
    Ok(cache.capture(world)?.finish())
}

impl CaptureCache {
    /// What the last capture re-encoded and reused.
    pub fn stats(&self) -> CaptureStats {
        self.stats
    }

    /// Forgets every cached chunk: the next capture encodes everything.
    pub fn clear(&mut self) {
        *self = CaptureCache::default();
    }

    /// The main thread's part of a capture: reads the saved entities and their hierarchy, and
    /// brings every registered type's chunks up to date with the world, re-encoding only what
    /// changed since the last capture. [`PendingSnapshot::finish`] writes the blob, which is the
    /// one [`capture`](super::capture) would write.
    pub fn capture(&mut self, world: &World) -> Result<PendingSnapshot, SnapshotError> {
        let (registry, types) = registries(world)?;
        let this_run = world.read_change_tick();
        self.start(world, registry, this_run);
        let result = self.refresh(world, registry, &types, this_run);
        match result {
            Ok(pending) => {
                // Changes made later in this same tick must count as changed next time.
                self.since = Tick::new(this_run.get().wrapping_sub(1));
                Ok(pending)
            }
            Err(error) => {
                self.clear();
                Err(error)
            }
        }
    }

    /// Starts over when the cache was made for another world or registry, or too long ago.
    fn start(&mut self, world: &World, registry: &SaveRegistry, this_run: Tick) {
        let key = CacheKey {
            world: world.id(),
            registry: registry.revision(),
        };
        let stale = this_run.get().wrapping_sub(self.since.get()) >= MAX_TICK_WINDOW;
        let started_over = self.key.as_ref() != Some(&key) || stale;
        if started_over {
            self.clear();
            self.key = Some(key);
        }
        self.columns
            .resize_with(registry.entries().len(), ColumnCache::default);
        self.generation += 1;
        self.stats = CaptureStats {
            started_over,
            ..CaptureStats::default()
        };
    }

    fn refresh(
        &mut self,
        world: &World,
        registry: &SaveRegistry,
        types: &TypeRegistry,
        this_run: Tick,
    ) -> Result<PendingSnapshot, SnapshotError> {
        let (matched, archetypes) = registry
            .filter()
            .resolve(world)
            .map(|filter| filter.matching_entities(world))
            .unwrap_or_default();
        let hierarchy = Hierarchy::collect(world, &archetypes);
        let policy = world.get_resource::<RuntimeAssetHandles>().copied();
        let assets = CaptureAssets::new(policy.unwrap_or_default());
        let saved = SavedTables::new(world, &archetypes);
        let changes = Changes {
            since: (!self.stats.started_over).then_some(self.since),
            this_run,
        };
        let mut columns = Vec::with_capacity(registry.entries().len());
        for (entry, cache) in registry.entries().iter().zip(&mut self.columns) {
            let mut column = ColumnRefresh {
                world,
                types,
                assets: &assets,
                saved: &saved,
                changes,
                generation: self.generation,
                ops: &entry.ops,
                tables: &mut self.tables,
                cache,
                writer: None,
                chunks: Vec::new(),
                stats: &mut self.stats,
            };
            (entry.refresh)(world, &mut column)?;
            columns.push((ColumnId::of(entry), column.chunks));
        }
        Ok(PendingSnapshot {
            matched,
            hierarchy,
            columns,
            handles_left_out: assets.into_left_out(),
        })
    }
}

/// Which archetypes and tables hold saved entities.
struct SavedTables {
    archetypes: Vec<bool>,
    tables: Vec<TableSaved>,
}

impl SavedTables {
    fn new(world: &World, saved: &[bevy::ecs::archetype::ArchetypeId]) -> Self {
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

    fn table(&self, table: TableId) -> TableSaved {
        self.tables
            .get(table.as_usize())
            .copied()
            .unwrap_or(TableSaved::None)
    }

    fn entity(&self, world: &World, entity: Entity) -> bool {
        world
            .entities()
            .get_spawned(entity)
            .is_ok_and(|location| self.archetypes[location.archetype_id.index()])
    }
}

/// Which change ticks count as changed since the last capture.
#[derive(Clone, Copy)]
struct Changes {
    /// `None` when nothing cached can be trusted.
    since: Option<Tick>,
    this_run: Tick,
}

impl Changes {
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

/// Encodes one value of the column's type into `out`: the table row's (or the resource's).
pub(crate) type EncodeRow<'e> =
    dyn FnMut(&ValueWriter<'_>, usize, &mut Vec<u8>) -> Result<(), CaptureProblem> + 'e;

/// Encodes the resource's value into `out`.
pub(crate) type EncodeResource<'e> =
    dyn FnMut(&ValueWriter<'_>, &mut Vec<u8>) -> Result<(), CaptureProblem> + 'e;

/// One registered type's column during a capture: the typed walk
/// ([`RefreshFn`](super::typed_capture::RefreshFn)) hands it tables, and it decides chunk by
/// chunk what to reuse and what to encode.
pub(crate) struct ColumnRefresh<'a> {
    world: &'a World,
    types: &'a TypeRegistry,
    assets: &'a CaptureAssets,
    saved: &'a SavedTables,
    changes: Changes,
    generation: u64,
    ops: &'a TypeOps,
    tables: &'a mut Vec<TableRows>,
    cache: &'a mut ColumnCache,
    /// Built at the first value to encode (building a reflection plan costs more than checking
    /// an unchanged column).
    writer: Option<ValueWriter<'a>>,
    chunks: Vec<Arc<Chunk>>,
    stats: &'a mut CaptureStats,
}

impl<'a> ColumnRefresh<'a> {
    /// Whether a full capture's query of this type visits tables in id order: true unless a
    /// disabling component is a sparse-set one (the query then walks archetypes).
    pub(crate) fn dense_query(&self, world: &World) -> bool {
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

    /// Whether `entity` is saved.
    pub(crate) fn is_saved(&self, entity: Entity) -> bool {
        self.saved.entity(self.world, entity)
    }

    fn writer(&mut self) -> &ValueWriter<'a> {
        let (types, ops, assets) = (self.types, self.ops, self.assets);
        self.writer
            .get_or_insert_with(|| ValueWriter::new(types, ops, assets))
    }

    fn cacheable(&mut self) -> bool {
        if let Some(cacheable) = self.cache.cacheable {
            return cacheable;
        }
        let cacheable = !self.writer().records_handles();
        self.cache.cacheable = Some(cacheable);
        cacheable
    }

    fn problem(&self, problem: CaptureProblem) -> SnapshotError {
        problem.into_error(self.ops.type_path)
    }

    /// Encodes the given rows afresh (sparse-set components): chunks nothing is kept of.
    pub(crate) fn fresh_rows<V>(
        &mut self,
        rows: &[(Entity, &V)],
        encode: &mut EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        for start in (0..rows.len()).step_by(CHUNK_ROWS) {
            let range = start..(start + CHUNK_ROWS).min(rows.len());
            let mut chunk = Chunk::default();
            for row in range {
                let writer = self.writer();
                chunk
                    .push(Some(rows[row].0), |out| encode(writer, row, out))
                    .map_err(|problem| self.problem(problem))?;
            }
            self.stats.rows_encoded += chunk.rows();
            self.stats.chunks_rebuilt += 1;
            self.chunks.push(Arc::new(chunk));
        }
        Ok(())
    }

    /// One table of the column: its entities, the column's change ticks and how to encode a
    /// row.
    pub(crate) fn table(
        &mut self,
        table: TableId,
        entities: &[Entity],
        ticks: &[UnsafeCell<Tick>],
        encode: &mut EncodeRow<'_>,
    ) -> Result<(), SnapshotError> {
        let index = table.as_usize();
        if self.cache.tables.len() <= index {
            self.cache.tables.resize_with(index + 1, Vec::new);
        }
        let cached = std::mem::take(&mut self.cache.tables[index]);
        let saved = self.saved.table(table);
        if saved == TableSaved::None {
            return Ok(());
        }
        if saved == TableSaved::Some || !self.cacheable() {
            for range in chunk_ranges(entities.len()) {
                let keep = |entity: Entity| saved == TableSaved::All || self.is_saved(entity);
                let rows: Vec<usize> = range.filter(|&row| keep(entities[row])).collect();
                let chunk = self.encode_rows(entities, &rows, encode)?;
                self.chunks.push(Arc::new(chunk));
            }
            return Ok(());
        }
        let same = self.same_chunks(table, entities);
        let mut kept = Vec::with_capacity(same.len());
        for (k, range) in chunk_ranges(entities.len()).enumerate() {
            let old = cached.get(k).filter(|_| same[k]);
            let chunk = match (old, self.changes.since) {
                (Some(old), Some(since)) => {
                    let (this_run, window) =
                        (self.changes.this_run.get(), self.changes.window(since));
                    let newer = |cell: &UnsafeCell<Tick>| {
                        // SAFETY: the shared borrow of the world keeps anything from writing to
                        // the ticks while they are read.
                        let tick = unsafe { *cell.get() };
                        this_run.wrapping_sub(tick.get()) < window
                    };
                    let chunk_ticks = &ticks[range.clone()];
                    // Without a branch per row, so the scan of an unchanged chunk vectorises.
                    if chunk_ticks
                        .iter()
                        .fold(false, |any, cell| any | newer(cell))
                    {
                        let rows: Vec<usize> = (0..chunk_ticks.len())
                            .filter(|&row| newer(&chunk_ticks[row]))
                            .collect();
                        Arc::new(self.patch(old, range.start, &rows, encode)?)
                    } else {
                        self.stats.chunks_reused += 1;
                        Arc::clone(old)
                    }
                }
                _ => {
                    let rows: Vec<usize> = range.collect();
                    Arc::new(self.encode_rows(entities, &rows, encode)?)
                }
            };
            kept.push(Arc::clone(&chunk));
            self.chunks.push(chunk);
        }
        self.cache.tables[index] = kept;
        Ok(())
    }

    /// Encodes the given table rows into a new chunk.
    fn encode_rows(
        &mut self,
        entities: &[Entity],
        rows: &[usize],
        encode: &mut EncodeRow<'_>,
    ) -> Result<Chunk, SnapshotError> {
        let mut chunk = Chunk::default();
        for &row in rows {
            let writer = self.writer();
            chunk
                .push(Some(entities[row]), |out| encode(writer, row, out))
                .map_err(|problem| self.problem(problem))?;
        }
        self.stats.rows_encoded += rows.len();
        self.stats.chunks_rebuilt += 1;
        Ok(chunk)
    }

    /// A copy of `old` with the `changed` rows (relative to the chunk, ascending) re-encoded:
    /// the rows between them are copied in runs.
    fn patch(
        &mut self,
        old: &Chunk,
        first_row: usize,
        changed: &[usize],
        encode: &mut EncodeRow<'_>,
    ) -> Result<Chunk, SnapshotError> {
        let mut chunk = Chunk {
            entities: old.entities.clone(),
            ends: Vec::with_capacity(old.rows()),
            values: Vec::with_capacity(old.values.len() + changed.len() * 8),
        };
        // Bytes of `old` not copied yet start here; rows after the last changed one end
        // `shift` bytes later in the new chunk than in the old.
        let (mut copied_to, mut shift) = (0usize, 0isize);
        let mut next_changed = changed.iter().copied().peekable();
        for row in 0..old.rows() {
            if next_changed.next_if_eq(&row).is_none() {
                chunk.ends.push((old.ends[row] as isize + shift) as u32);
                continue;
            }
            chunk
                .values
                .extend_from_slice(&old.values[copied_to..old.start(row)]);
            let writer = self.writer();
            push_prefixed(&mut chunk.values, |out| {
                encode(writer, first_row + row, out)
            })
            .map_err(|problem| self.problem(problem))?;
            chunk.ends.push(chunk.values.len() as u32);
            copied_to = old.ends[row] as usize;
            shift = chunk.values.len() as isize - copied_to as isize;
        }
        chunk.values.extend_from_slice(&old.values[copied_to..]);
        self.stats.rows_encoded += changed.len();
        self.stats.chunks_patched += 1;
        Ok(chunk)
    }

    /// Per chunk of `table`: whether its rows hold the same entities as at the last capture.
    /// Worked out by the first column to look at the table in a capture, which also records
    /// the table's entities for the next.
    fn same_chunks(&mut self, table: TableId, entities: &[Entity]) -> Vec<bool> {
        let index = table.as_usize();
        if self.tables.len() <= index {
            self.tables.resize_with(index + 1, TableRows::default);
        }
        let rows = &mut self.tables[index];
        if rows.checked != self.generation {
            // A chunk of the old table that ended elsewhere (the table grew or shrank) is not
            // the same, even when its first rows are.
            let old_end = rows.entities.len();
            rows.same = chunk_ranges(entities.len())
                .map(|range| {
                    let old_range = range.start..(range.start + CHUNK_ROWS).min(old_end);
                    old_range == range && rows.entities[old_range] == entities[range]
                })
                .collect();
            // Record the table as it is now, copying only the chunks that differ.
            rows.entities.truncate(entities.len());
            let kept = rows.entities.len();
            rows.entities.extend_from_slice(&entities[kept..]);
            for (range, same) in chunk_ranges(entities.len()).zip(&rows.same) {
                if !same {
                    rows.entities[range.clone()].copy_from_slice(&entities[range]);
                }
            }
            rows.checked = self.generation;
        }
        rows.same.clone()
    }

    /// The resource's value: kept when it did not change since the last capture.
    pub(crate) fn resource(
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
        let chunk = match (cached, unchanged && self.cacheable()) {
            (Some((_, chunk)), true) => {
                self.stats.chunks_reused += 1;
                chunk
            }
            _ => {
                let mut chunk = Chunk::default();
                let writer = self.writer();
                chunk
                    .push(None, |out| encode(writer, out))
                    .map_err(|problem| self.problem(problem))?;
                self.stats.rows_encoded += 1;
                self.stats.chunks_rebuilt += 1;
                Arc::new(chunk)
            }
        };
        self.cache.resource = Some((entity, Arc::clone(&chunk)));
        self.chunks.push(chunk);
        Ok(())
    }
}

/// The row ranges of the chunks of a table of `len` rows.
fn chunk_ranges(len: usize) -> impl Iterator<Item = Range<usize>> {
    (0..len)
        .step_by(CHUNK_ROWS)
        .map(move |start| start..(start + CHUNK_ROWS).min(len))
}
