//! `ecs_blob` → validated values, without touching any world (so it can run off the main
//! thread): the hash, then the blob through the cursor (which checks its structure), each
//! column's rows decoded as the registered type.
//!
//! # Memory
//!
//! What reading the blob takes (the cursor's checks, the stored layout of a type that changed
//! since the save, its tree given back once the column's reader is built) is paid from the
//! blob's budget (see `blob`). What the decode returns is the load's output, sized by what the
//! blob holds as a legitimate blob of as many entities and rows makes it: eight bytes an
//! entity, a row's entity index and boxed value, and each value as the game's type holds it
//! (a marker component of no bytes is still a boxed value; an empty `Vec<String>` field of
//! one byte is 24): the game's types, not the blob, decide what a stored byte becomes.

use super::column::{ColumnDecoder, ReaderFn, WITH_PLANS, registered, value_error};
use crate::snapshot::blob::{
    BlobCursor, BlobError, ColumnHeader, ColumnKind, StoredLevelKey, state_hash,
};
use crate::snapshot::capture::Rows;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::SaveRegistry;
use crate::snapshot::value::ValueReader;
use crate::snapshot::value::assets::{HandleLoader, RefusedAssetPath};
use bevy::asset::AssetServer;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;

/// A column's values, each with its entity index.
pub(super) type DecodedRows = Vec<(u32, Box<dyn Reflect>)>;

/// One stored component column, decoded: the registry entry it belongs to and its values by
/// entity index, in ascending entity order.
///
/// Columns stay apart (rather than being regrouped by entity) because `apply` merges them
/// entity by entity, reading each column front to back: regrouping moved every value once more
/// through memory in a scattered order, which at 100k entities (a million values) was the
/// decode step that grew faster than the world.
pub(super) struct DecodedColumn {
    pub(super) entry: usize,
    pub(super) rows: DecodedRows,
    /// Each row's stored bytes, in the same order: an in-place apply compares them with the
    /// live rows' before writing a value.
    pub(super) raw: Rows,
}

/// A stored column whose type this build does not register; its values were skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedType {
    /// The stored type path.
    pub type_path: String,
    /// How many values were skipped.
    pub values: usize,
}

/// A field the save holds and its type no longer has: read and dropped on load (see
/// [`decode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedField {
    /// The stored column's type path.
    pub type_path: String,
    /// The field, from the column's type: `my_game::Bag.note`.
    pub field: String,
}

/// A snapshot decoded and validated against the registry, ready to be applied.
///
/// Holds every value already converted to its registered type, so applying cannot fail.
pub struct DecodedSnapshot {
    pub(super) registry: SaveRegistry,
    pub(super) saved_ids: Vec<Entity>,
    /// The unsaved entities saved values may reference, by their saving-world id and key.
    pub(super) keys: Vec<(Entity, String)>,
    /// The component columns, each sorted by entity index.
    pub(super) components: Vec<DecodedColumn>,
    pub(super) resources: Vec<(usize, Box<dyn Reflect>)>,
    /// Each resource's stored bytes, in the same order.
    pub(super) resources_raw: Rows,
    pub(super) skipped: Vec<SkippedType>,
    pub(super) dropped_fields: Vec<DroppedField>,
    pub(super) refused_asset_paths: Vec<RefusedAssetPath>,
}

impl DecodedSnapshot {
    /// Saved asset paths that were refused (absolute, leaving the asset folder, an unknown
    /// source, too long, or no `AssetServer`); their handles were left at the default.
    pub fn refused_asset_paths(&self) -> &[RefusedAssetPath] {
        &self.refused_asset_paths
    }

    /// How many entities the snapshot spawns.
    pub fn entity_count(&self) -> usize {
        self.saved_ids.len()
    }

    /// Stored types this build does not register (their values are skipped).
    pub fn skipped_types(&self) -> &[SkippedType] {
        &self.skipped
    }

    /// Stored fields their types no longer have (read and dropped).
    pub fn dropped_fields(&self) -> &[DroppedField] {
        &self.dropped_fields
    }
}

/// Decodes and validates a blob completely, without touching any world.
///
/// Checks the hash, the layout, every entity index and every value against the registered
/// types (running migrations for older schema versions). Stored types that are no longer
/// registered are skipped with a warning. Any other problem is an error naming the type and the
/// entity index.
///
/// Each column carries the layout its type had when it was saved. When a type's layout changed
/// since (fields added, removed or reordered, variants reordered, a field widened), its values
/// are read by name: a new field takes its default, a removed one is dropped and listed in
/// [`DecodedSnapshot::dropped_fields`]. A change that cannot be resolved by name is
/// [`SnapshotError::LayoutChanged`], before any value is read: never a value read wrong.
///
/// Saved asset handles come back as default handles (and their paths are listed as refused):
/// use [`decode_with_assets`] to load them.
pub fn decode(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
) -> Result<DecodedSnapshot, SnapshotError> {
    decode_with_assets(blob, expected_hash, registry, types, None)
}

/// [`decode`], loading saved asset handles through `assets` (paths are checked first; see
/// [`assets`](crate::snapshot::value::assets)). Loading only starts the assets' loads: it is safe
/// off the main thread.
pub fn decode_with_assets(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
    assets: Option<&AssetServer>,
) -> Result<DecodedSnapshot, SnapshotError> {
    decode_with(blob, expected_hash, registry, types, assets, WITH_PLANS)
}

/// [`decode`] with every reflection-only type read by Bevy's reflection deserializer instead of
/// its reflection plan (tests and benchmarks compare the two).
pub fn decode_without_plans(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
) -> Result<DecodedSnapshot, SnapshotError> {
    decode_with(
        blob,
        expected_hash,
        registry,
        types,
        None,
        |types, ops, loader| ValueReader::generic(types, ops, loader),
    )
}

/// Builds the value reader of a type.
fn decode_with(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
    assets: Option<&AssetServer>,
    reader_fn: ReaderFn,
) -> Result<DecodedSnapshot, SnapshotError> {
    verify_hash(blob, expected_hash)?;
    let (mut cursor, table) = BlobCursor::open(blob)?;
    let saved_ids = entities_of(table.ids, &cursor)?;
    let keys = keys_of(&table.keys, &cursor)?;
    let loader = HandleLoader::new(assets);
    let mut columns = ColumnsDecoder::new(registry, types, &loader, reader_fn);
    while let Some(header) = cursor.next_column()? {
        columns.decode_column(&mut cursor, &header)?;
    }
    let decoded = columns.finish(saved_ids);
    Ok(DecodedSnapshot {
        keys,
        refused_asset_paths: loader.into_refused(),
        ..decoded
    })
}

/// Refuses a blob whose hash is not the one stored beside it (checked before anything is read).
fn verify_hash(blob: &[u8], expected_hash: u64) -> Result<(), SnapshotError> {
    let computed = state_hash(blob);
    if computed != expected_hash {
        return Err(BlobError::HashMismatch {
            stored: expected_hash,
            computed,
        }
        .into());
    }
    Ok(())
}

/// The saving world's entities; the cursor has checked every id against Bevy's rule.
fn entities_of(
    ids: impl IntoIterator<Item = u64>,
    cursor: &BlobCursor<'_>,
) -> Result<Vec<Entity>, SnapshotError> {
    ids.into_iter()
        .map(|bits| {
            Entity::try_from_bits(bits).ok_or_else(|| {
                SnapshotError::from(BlobError::Malformed {
                    offset: cursor.offset(),
                    reason: format!("{bits:#x} is not a valid entity id"),
                })
            })
        })
        .collect()
}

/// The keyed unsaved entities, as entities with their keys; the cursor has checked every id.
fn keys_of(
    keys: &[StoredLevelKey<'_>],
    cursor: &BlobCursor<'_>,
) -> Result<Vec<(Entity, String)>, SnapshotError> {
    let entities = entities_of(keys.iter().map(|key| key.entity_id), cursor)?;
    let keys = keys.iter().map(|key| key.key.to_owned());
    Ok(entities.into_iter().zip(keys).collect())
}

/// Decodes the columns one after another, collecting their values and checking each against
/// the registry and the columns before it.
struct ColumnsDecoder<'r> {
    registry: &'r SaveRegistry,
    types: &'r TypeRegistry,
    loader: &'r HandleLoader<'r>,
    reader_fn: ReaderFn,
    /// The registry entries that had a column so far (to refuse a second column of a type).
    seen_entries: Vec<usize>,
    components: Vec<DecodedColumn>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
    resources_raw: Rows,
    skipped: Vec<SkippedType>,
    dropped_fields: Vec<DroppedField>,
}

impl<'r> ColumnsDecoder<'r> {
    fn new(
        registry: &'r SaveRegistry,
        types: &'r TypeRegistry,
        loader: &'r HandleLoader<'r>,
        reader_fn: ReaderFn,
    ) -> Self {
        ColumnsDecoder {
            registry,
            types,
            loader,
            reader_fn,
            seen_entries: Vec::new(),
            components: Vec::new(),
            resources: Vec::new(),
            resources_raw: Rows::default(),
            skipped: Vec::new(),
            dropped_fields: Vec::new(),
        }
    }

    /// Decodes the rows of one column as its registered type, or skips them if the type is not
    /// registered (the cursor still checks them).
    fn decode_column(
        &mut self,
        cursor: &mut BlobCursor<'_>,
        header: &ColumnHeader<'_>,
    ) -> Result<(), SnapshotError> {
        let Some((entry_index, entry)) = registered(self.registry, header) else {
            self.skip_column(header);
            return Ok(());
        };
        self.claim_entry(entry_index, header.type_path)?;
        let decoder = ColumnDecoder::new(
            entry,
            header,
            cursor,
            self.types,
            self.loader,
            self.reader_fn,
        )?;
        self.dropped_fields
            .extend(decoder.dropped_fields().iter().map(|field| DroppedField {
                type_path: header.type_path.to_owned(),
                field: field.clone(),
            }));
        match header.kind {
            ColumnKind::Resource => {
                let rows = read_rows(cursor, header, &decoder, &mut self.resources_raw)?;
                self.resources
                    .extend(rows.into_iter().map(|(_, value)| (entry_index, value)));
            }
            ColumnKind::Component => {
                let mut raw = Rows::default();
                // Component rows always carry an entity index (the cursor reads one per row).
                let rows = read_rows(cursor, header, &decoder, &mut raw)?;
                let (rows, raw) = sorted_by_entity(rows, raw);
                self.components.push(DecodedColumn {
                    entry: entry_index,
                    rows,
                    raw,
                });
            }
        }
        Ok(())
    }

    /// Records a column whose type is not registered, with a warning.
    fn skip_column(&mut self, header: &ColumnHeader<'_>) {
        let (type_path, rows) = (header.type_path, header.rows);
        warn!("keepsake: skipped {rows} stored value(s) of {type_path}, which is not registered");
        self.skipped.push(SkippedType {
            type_path: type_path.to_owned(),
            values: rows,
        });
    }

    /// Refuses a second column of one registered type (also through an old type path).
    fn claim_entry(&mut self, entry_index: usize, type_path: &str) -> Result<(), SnapshotError> {
        if self.seen_entries.contains(&entry_index) {
            return Err(BlobError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: None,
            }
            .into());
        }
        self.seen_entries.push(entry_index);
        Ok(())
    }

    /// The decoded snapshot.
    fn finish(self, saved_ids: Vec<Entity>) -> DecodedSnapshot {
        DecodedSnapshot {
            registry: self.registry.clone(),
            components: self.components,
            saved_ids,
            keys: Vec::new(),
            resources: self.resources,
            resources_raw: self.resources_raw,
            skipped: self.skipped,
            dropped_fields: self.dropped_fields,
            refused_asset_paths: Vec::new(),
        }
    }
}

/// Decodes a column's rows: each value with its entity index (`0` for a resource), its stored
/// bytes appended to `raw`.
fn read_rows(
    cursor: &mut BlobCursor<'_>,
    header: &ColumnHeader<'_>,
    decoder: &ColumnDecoder<'_>,
    raw: &mut Rows,
) -> Result<DecodedRows, SnapshotError> {
    // The count is within what the column's bytes hold (two a row at least); the rows are the
    // load's output, as a legitimate blob of as many rows makes them.
    let mut rows = Vec::with_capacity(header.rows);
    while let Some(row) = cursor.next_row()? {
        let value = decoder
            .read(row.value)
            .map_err(|reason| value_error(header.type_path, row.entity_index, reason))?;
        raw.push_raw(row.value);
        rows.push((row.entity_index.unwrap_or_default(), value));
    }
    Ok(rows)
}

/// A column's rows and their bytes in ascending entity order. A capture writes a column table
/// by table, so its rows come as a few ascending runs, and usually as one.
fn sorted_by_entity(rows: DecodedRows, raw: Rows) -> (DecodedRows, Rows) {
    if rows.is_sorted_by_key(|&(entity_index, _)| entity_index) {
        return (rows, raw);
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // Stable: merges the runs rather than sorting from scratch.
    order.sort_by_key(|&k| rows[k].0);
    let mut sorted_raw = Rows::default();
    for &k in &order {
        sorted_raw.push_raw(raw.row(k));
    }
    let mut slots: Vec<Option<(u32, Box<dyn Reflect>)>> = rows.into_iter().map(Some).collect();
    let sorted = order.iter().filter_map(|&k| slots[k].take()).collect();
    (sorted, sorted_raw)
}
