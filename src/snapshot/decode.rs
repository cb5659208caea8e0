//! `ecs_blob` → validated values, without touching any world (so it can run off the main
//! thread). The steps follow the layout: hash, layout version, entity table, then each column
//! (header, then its rows checked and decoded as the registered type), then nothing after.

use super::assets::{HandleLoader, RefusedAssetPath};
use super::blob::{BlobReader, ColumnKind, state_hash};
use super::error::SnapshotError;
use super::inspect::read_layout_version;
use super::registry::SaveRegistry;
use super::type_ops::{ConvertFn, SaveableEntry, TypeOps};
use super::value::ValueReader;
use bevy::asset::AssetServer;
use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;

/// One stored component column, decoded: the registry entry it belongs to and its values by
/// entity index, in ascending entity order.
///
/// Columns stay apart (rather than being regrouped by entity) because `apply` merges them
/// entity by entity, reading each column front to back: regrouping moved every value once more
/// through memory in a scattered order, which at 100k entities (a million values) was the
/// decode step that grew faster than the world.
pub(super) struct DecodedColumn {
    pub(super) entry: usize,
    pub(super) rows: Vec<(u32, Box<dyn Reflect>)>,
}

/// A stored column whose type this build does not register; its values were skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedType {
    /// The stored type path.
    pub type_path: String,
    /// How many values were skipped.
    pub values: usize,
}

/// A snapshot decoded and validated against the registry, ready to be applied.
///
/// Holds every value already converted to its registered type, so applying cannot fail.
pub struct DecodedSnapshot {
    pub(super) registry: SaveRegistry,
    pub(super) saved_ids: Vec<Entity>,
    /// The component columns, each sorted by entity index.
    pub(super) components: Vec<DecodedColumn>,
    pub(super) resources: Vec<(usize, Box<dyn Reflect>)>,
    pub(super) skipped: Vec<SkippedType>,
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
}

/// Decodes and validates a blob completely, without touching any world.
///
/// Checks the hash, the layout, every entity index and every value against the registered
/// types (running migrations for older schema versions). Stored types that are no longer
/// registered are skipped with a warning. Any other problem is an error naming the type and the
/// entity index.
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
/// [`assets`](super::assets)). Loading only starts the assets' loads: it is safe off the main
/// thread.
pub fn decode_with_assets(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
    assets: Option<&AssetServer>,
) -> Result<DecodedSnapshot, SnapshotError> {
    decode_with(
        blob,
        expected_hash,
        registry,
        types,
        assets,
        |types, ops, loader| ValueReader::new(types, ops, loader),
    )
}

/// [`decode`] with every reflection-only type read by Bevy's reflection deserializer instead of
/// its reflection plan (tests and benchmarks compare the two).
#[doc(hidden)]
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
type ReaderFn =
    for<'a> fn(&'a TypeRegistry, TypeOps, &'a HandleLoader<'a>) -> Option<ValueReader<'a>>;

fn decode_with(
    blob: &[u8],
    expected_hash: u64,
    registry: &SaveRegistry,
    types: &TypeRegistry,
    assets: Option<&AssetServer>,
    reader_fn: ReaderFn,
) -> Result<DecodedSnapshot, SnapshotError> {
    verify_hash(blob, expected_hash)?;
    let mut reader = BlobReader::new(blob);
    read_layout_version(&mut reader)?;
    let saved_ids = read_entity_table(&mut reader)?;
    let loader = HandleLoader::new(assets);
    let mut columns =
        ColumnsDecoder::new(registry, types, &loader, reader_fn, saved_ids.len() as u32);
    let column_count = reader.u32_count("column count")?;
    for _ in 0..column_count {
        let header = read_column_header(&mut reader)?;
        columns.decode_column(&mut reader, &header)?;
    }
    expect_end(&reader)?;
    let decoded = columns.finish(saved_ids);
    Ok(DecodedSnapshot {
        refused_asset_paths: loader.into_refused(),
        ..decoded
    })
}

/// Refuses a blob whose hash is not the one stored beside it (checked before anything is read).
fn verify_hash(blob: &[u8], expected_hash: u64) -> Result<(), SnapshotError> {
    let computed = state_hash(blob);
    if computed != expected_hash {
        return Err(SnapshotError::HashMismatch {
            stored: expected_hash,
            computed,
        });
    }
    Ok(())
}

/// Reads the saving world's entity ids, refusing invalid and repeated ids.
fn read_entity_table(reader: &mut BlobReader<'_>) -> Result<Vec<Entity>, SnapshotError> {
    let count = reader.count("entity count")?;
    if count > u32::MAX as usize {
        return Err(malformed(reader.offset(), "more than 2^32 entities"));
    }
    let mut ids = Vec::with_capacity(count);
    let mut unique = EntityHashSet::default();
    let mut bits = 0;
    for _ in 0..count {
        let offset = reader.offset();
        bits = reader.delta(bits, "entity id")?;
        let entity = Entity::try_from_bits(bits)
            .ok_or_else(|| malformed(offset, format!("{bits:#x} is not a valid entity id")))?;
        if !unique.insert(entity) {
            return Err(malformed(
                offset,
                format!("entity {entity} is listed twice"),
            ));
        }
        ids.push(entity);
    }
    Ok(ids)
}

/// The fields in front of a column's rows.
struct ColumnHeader<'a> {
    type_path: &'a str,
    /// The schema version the values were written at.
    version: u32,
    kind: ColumnKind,
    rows: usize,
}

fn read_column_header<'a>(reader: &mut BlobReader<'a>) -> Result<ColumnHeader<'a>, SnapshotError> {
    let type_path = reader.str_with_len("type path")?;
    let version = reader.varint_u32("type version")?;
    let kind_offset = reader.offset();
    let kind_byte = reader.byte("column kind")?;
    let kind = ColumnKind::from_byte(kind_byte)
        .ok_or_else(|| malformed(kind_offset, format!("column kind {kind_byte}")))?;
    let rows = reader.u32_count("row count")?;
    Ok(ColumnHeader {
        type_path,
        version,
        kind,
        rows,
    })
}

/// Refuses bytes after the last column.
fn expect_end(reader: &BlobReader<'_>) -> Result<(), SnapshotError> {
    if reader.is_empty() {
        return Ok(());
    }
    Err(malformed(
        reader.offset(),
        format!(
            "{} unexpected bytes after the last column",
            reader.remaining()
        ),
    ))
}

/// Decodes the columns one after another, collecting their values and checking each against
/// the registry and the columns before it.
struct ColumnsDecoder<'r> {
    registry: &'r SaveRegistry,
    types: &'r TypeRegistry,
    loader: &'r HandleLoader<'r>,
    reader_fn: ReaderFn,
    entity_count: u32,
    /// The registry entries that had a column so far (to refuse a second column of a type).
    seen_entries: Vec<usize>,
    /// For each entity, the last column that stored a value for it (to catch duplicates).
    last_column_of: Vec<u32>,
    components: Vec<DecodedColumn>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
    skipped: Vec<SkippedType>,
}

impl<'r> ColumnsDecoder<'r> {
    fn new(
        registry: &'r SaveRegistry,
        types: &'r TypeRegistry,
        loader: &'r HandleLoader<'r>,
        reader_fn: ReaderFn,
        entity_count: u32,
    ) -> Self {
        ColumnsDecoder {
            registry,
            types,
            loader,
            reader_fn,
            entity_count,
            seen_entries: Vec::new(),
            last_column_of: vec![u32::MAX; entity_count as usize],
            components: Vec::new(),
            resources: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// Decodes the rows of one column as its registered type, or skips them if the type is not
    /// registered.
    fn decode_column(
        &mut self,
        reader: &mut BlobReader<'_>,
        header: &ColumnHeader<'_>,
    ) -> Result<(), SnapshotError> {
        let Some((entry_index, entry)) = self.registry.lookup(header.type_path) else {
            return self.skip_column(reader, header);
        };
        self.claim_entry(entry_index, header.type_path)?;
        check_kind(header, entry)?;
        let decoder = ColumnDecoder::new(
            entry,
            header.type_path,
            header.version,
            self.types,
            self.loader,
            self.reader_fn,
        )?;
        match header.kind {
            ColumnKind::Resource => self.read_resource(reader, header, entry_index, &decoder),
            ColumnKind::Component => {
                self.read_component_rows(reader, header, entry_index, &decoder)
            }
        }
    }

    /// Steps over a column whose type is not registered, with a warning.
    fn skip_column(
        &mut self,
        reader: &mut BlobReader<'_>,
        header: &ColumnHeader<'_>,
    ) -> Result<(), SnapshotError> {
        let (type_path, rows) = (header.type_path, header.rows);
        skip_rows(reader, header.kind, rows)?;
        warn!("keepsake: skipped {rows} stored value(s) of {type_path}, which is not registered");
        self.skipped.push(SkippedType {
            type_path: type_path.to_owned(),
            values: rows,
        });
        Ok(())
    }

    /// Refuses a second column of one registered type (also through an old type path).
    fn claim_entry(&mut self, entry_index: usize, type_path: &str) -> Result<(), SnapshotError> {
        if self.seen_entries.contains(&entry_index) {
            return Err(SnapshotError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: None,
            });
        }
        self.seen_entries.push(entry_index);
        Ok(())
    }

    fn read_resource(
        &mut self,
        reader: &mut BlobReader<'_>,
        header: &ColumnHeader<'_>,
        entry_index: usize,
        decoder: &ColumnDecoder<'_>,
    ) -> Result<(), SnapshotError> {
        let rows = header.rows;
        if rows != 1 {
            return Err(value_error(
                header.type_path,
                None,
                format!("{rows} values stored for a resource"),
            ));
        }
        let bytes = reader.bytes_with_len("resource value")?;
        let value = decoder
            .read(bytes)
            .map_err(|reason| value_error(header.type_path, None, reason))?;
        self.resources.push((entry_index, value));
        Ok(())
    }

    fn read_component_rows(
        &mut self,
        reader: &mut BlobReader<'_>,
        header: &ColumnHeader<'_>,
        entry_index: usize,
        decoder: &ColumnDecoder<'_>,
    ) -> Result<(), SnapshotError> {
        let mut rows = Vec::with_capacity(header.rows);
        // Unique per decoded column: the number of registered columns so far.
        let column = self.seen_entries.len() as u32;
        let mut previous = 0u64;
        for _ in 0..header.rows {
            previous = reader.delta(previous, "entity index")?;
            let entity_index = self.check_row_entity(previous, header.type_path, column)?;
            let bytes = reader.bytes_with_len("component value")?;
            let value = decoder
                .read(bytes)
                .map_err(|reason| value_error(header.type_path, Some(entity_index), reason))?;
            rows.push((entity_index, value));
        }
        // A capture writes a column table by table, so its rows usually come as a few ascending
        // runs; the stable sort merges runs rather than sorting from scratch.
        rows.sort_by_key(|&(entity_index, _)| entity_index);
        self.components.push(DecodedColumn {
            entry: entry_index,
            rows,
        });
        Ok(())
    }

    /// Checks a row's entity index: inside the entity table, and not already given a value by
    /// this `column`.
    fn check_row_entity(
        &mut self,
        stored: u64,
        type_path: &str,
        column: u32,
    ) -> Result<u32, SnapshotError> {
        let entity_index = u32::try_from(stored).unwrap_or(u32::MAX);
        if stored >= u64::from(self.entity_count) {
            return Err(SnapshotError::EntityIndexOutOfRange {
                type_path: type_path.to_owned(),
                entity_index,
                entity_count: self.entity_count,
            });
        }
        let last_column = &mut self.last_column_of[entity_index as usize];
        if *last_column == column {
            return Err(SnapshotError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: Some(entity_index),
            });
        }
        *last_column = column;
        Ok(entity_index)
    }

    /// The decoded snapshot, its component values grouped by entity.
    fn finish(self, saved_ids: Vec<Entity>) -> DecodedSnapshot {
        DecodedSnapshot {
            registry: self.registry.clone(),
            components: self.components,
            saved_ids,
            resources: self.resources,
            skipped: self.skipped,
            refused_asset_paths: Vec::new(),
        }
    }
}

/// Refuses a column stored as a component for a type registered as a resource, or the reverse.
fn check_kind(header: &ColumnHeader<'_>, entry: &SaveableEntry) -> Result<(), SnapshotError> {
    if header.kind == entry.kind {
        return Ok(());
    }
    Err(value_error(
        header.type_path,
        None,
        format!(
            "stored as a {:?} but registered as a {:?}",
            header.kind, entry.kind
        ),
    ))
}

/// Steps over the rows of a column whose type is not registered.
fn skip_rows(
    reader: &mut BlobReader<'_>,
    kind: ColumnKind,
    rows: usize,
) -> Result<(), SnapshotError> {
    for _ in 0..rows {
        if kind == ColumnKind::Component {
            reader.varint("entity index delta")?;
        }
        reader.bytes_with_len("skipped value")?;
    }
    Ok(())
}

/// Decodes one column's values: with the current type, or with a legacy type and a conversion.
pub(super) struct ColumnDecoder<'a> {
    reader: ValueReader<'a>,
    convert: Option<ConvertFn>,
    target: &'static str,
}

impl<'a> ColumnDecoder<'a> {
    pub(super) fn new(
        entry: &SaveableEntry,
        type_path: &str,
        version: u32,
        types: &'a TypeRegistry,
        loader: &'a HandleLoader<'a>,
        reader_fn: ReaderFn,
    ) -> Result<Self, SnapshotError> {
        let (ops, convert): (TypeOps, _) = if version == entry.version {
            (entry.ops, None)
        } else if let Some(legacy) = entry.legacy.iter().find(|l| l.version == version) {
            (legacy.ops, Some(legacy.convert))
        } else {
            return Err(SnapshotError::UnknownTypeVersion {
                type_path: type_path.to_owned(),
                found: version,
                current: entry.version,
            });
        };
        let reader = reader_fn(types, ops, loader).ok_or_else(|| SnapshotError::Value {
            type_path: type_path.to_owned(),
            entity_index: None,
            reason: format!("{} is missing from the type registry", ops.type_path),
        })?;
        Ok(ColumnDecoder {
            reader,
            convert,
            target: entry.ops.type_path,
        })
    }

    pub(super) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let value = self.reader.read(bytes)?;
        match self.convert {
            None => Ok(value),
            Some(convert) => {
                convert(value).ok_or_else(|| format!("the migration to {} failed", self.target))
            }
        }
    }
}

fn value_error(type_path: &str, entity_index: Option<u32>, reason: String) -> SnapshotError {
    SnapshotError::Value {
        type_path: type_path.to_owned(),
        entity_index,
        reason,
    }
}

fn malformed(offset: usize, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Malformed {
        offset,
        reason: reason.into(),
    }
}
