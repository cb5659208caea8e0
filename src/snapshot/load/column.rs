//! Reading one stored column's values as its registered type: the reader of the stored schema
//! version (the current type, or a legacy type and its migration), after checking the column's
//! kind against the registration. Decode and dump both open columns here.

use crate::snapshot::blob::{BlobCursor, ColumnHeader, ColumnKind};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{ConvertFn, SaveRegistry, SaveableEntry};
use crate::snapshot::schema::{TypeLayout, codec, compare};
use crate::snapshot::value::assets::HandleLoader;
use crate::snapshot::value::{TypeOps, ValueReader};
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use keepsake_core::legacy::bevy_0_19;
use std::sync::Arc;

/// Builds the value reader of a type.
pub(super) type ReaderFn =
    for<'a> fn(&'a TypeRegistry, TypeOps, &'a HandleLoader<'a>) -> Option<ValueReader<'a>>;

/// The reader with the reflection plans (what loads use).
pub(super) const WITH_PLANS: ReaderFn = |types, ops, loader| ValueReader::new(types, ops, loader);

/// Decodes one column's values: with the current type, or with a legacy type and a conversion.
pub(super) struct ColumnDecoder<'a> {
    reader: ValueReader<'a>,
    /// The migration steps from the stored version to today's type, in order (none when the
    /// column is at today's version).
    convert: Vec<ConvertFn>,
    target: &'static str,
}

impl<'a> ColumnDecoder<'a> {
    /// The decoder of `header`'s column as `entry`'s type; refuses a column whose kind is not
    /// the registered one, and a schema version with no decoder.
    pub(super) fn new(
        entry: &SaveableEntry,
        header: &ColumnHeader<'_>,
        cursor: &BlobCursor<'_>,
        types: &'a TypeRegistry,
        loader: &'a HandleLoader<'a>,
        reader_fn: ReaderFn,
    ) -> Result<Self, SnapshotError> {
        let (type_path, version) = (header.type_path, header.schema_version);
        check_kind(type_path, header.kind, entry.kind)?;
        let (ops, convert, today): (TypeOps, _, Arc<[u8]>) = if version == entry.version {
            (entry.ops, Vec::new(), entry.layout_bytes(types))
        } else {
            let (ops, steps) = migration_path(entry, type_path, version)?;
            (ops, steps, ops.layout(types).to_bytes().into())
        };
        // The stored layout's tree is let go once the reader is built.
        let reader =
            cursor
                .budget()
                .transient(|| match stored_layout(header, cursor, &today)? {
                    Some(stored) => resolving(types, ops, loader, &stored, type_path),
                    None => reader_fn(types, ops, loader).ok_or_else(|| SnapshotError::Value {
                        type_path: type_path.to_owned(),
                        entity_index: None,
                        reason: format!("{} is missing from the type registry", ops.type_path),
                    }),
                })?;
        warn_dropped(&reader);
        Ok(ColumnDecoder {
            reader,
            convert,
            target: entry.ops.type_path,
        })
    }

    /// The stored fields today's type no longer has (`game::Bag.note`), dropped by reading.
    pub(super) fn dropped_fields(&self) -> &[String] {
        self.reader.dropped_fields()
    }

    pub(super) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let value = self.reader.read(bytes)?;
        self.convert.iter().try_fold(value, |value, convert| {
            convert(value).ok_or_else(|| format!("the migration to {} failed", self.target))
        })
    }
}

/// The type values stored at schema `version` decode as, and the steps to today's type;
/// refuses a version with no decoder, and a chain with a missing step.
fn migration_path(
    entry: &SaveableEntry,
    type_path: &str,
    version: u32,
) -> Result<(TypeOps, Vec<ConvertFn>), SnapshotError> {
    match entry.migration_path(version) {
        Some(Ok(path)) => Ok(path),
        Some(Err(stopped_at)) => Err(SnapshotError::MigrationStepMissing {
            type_path: type_path.to_owned(),
            found: version,
            stopped_at,
        }),
        None => Err(SnapshotError::UnknownTypeVersion {
            type_path: type_path.to_owned(),
            found: version,
            current: entry.version,
        }),
    }
}

/// The layout the column was written with when it is not one today's type (whose layout is
/// `today`) reads as is, and so needs resolving; `None` when the fast reader reads it: the same
/// layout, one that only lacks variants appended since, or a save from before layouts of a type
/// that did not change.
fn stored_layout(
    header: &ColumnHeader<'_>,
    cursor: &BlobCursor<'_>,
    today: &[u8],
) -> Result<Option<TypeLayout>, SnapshotError> {
    // Today's layout was encoded by this build, so it decodes.
    let today_layout = || codec::decode_bytes(today).expect("today's layout decodes");
    let Some(stored) = header.layout else {
        // A save from before layouts: Bevy 0.19's layout of a Bevy type that changed since.
        let old = bevy_0_19::layout(header.type_path, today_layout, cursor.peek_values());
        return Ok(old.cloned());
    };
    if stored == today {
        return Ok(None);
    }
    // The cursor checked that the layout reads; its tree is paid from the blob's budget.
    let stored = codec::decode_in(stored, cursor.budget()).map_err(|error| {
        let column = cursor.column_number();
        error.within(format_args!(
            "layout of column {column} ({})",
            header.type_path
        ))
    })?;
    Ok((!compare::reads_as_is(&stored, &today_layout())).then_some(stored))
}

/// The reader of values written with `stored`, or the error naming what cannot be resolved.
fn resolving<'a>(
    types: &'a TypeRegistry,
    ops: TypeOps,
    loader: &'a HandleLoader<'a>,
    stored: &TypeLayout,
    type_path: &str,
) -> Result<ValueReader<'a>, SnapshotError> {
    ValueReader::resolving(types, ops, loader, stored).map_err(|incompatible| {
        let changes: Vec<String> = compare::changes(stored, &ops.layout(types))
            .iter()
            .map(ToString::to_string)
            .collect();
        SnapshotError::LayoutChanged {
            type_path: type_path.to_owned(),
            path: incompatible.path,
            stored: incompatible.stored,
            today: incompatible.today,
            changes: match changes.is_empty() {
                true => String::new(),
                false => format!("; what changed: {}", changes.join("; ")),
            },
        }
    })
}

/// Says once per column which stored fields the type lost.
fn warn_dropped(reader: &ValueReader<'_>) {
    let dropped = reader.dropped_fields();
    if !dropped.is_empty() {
        warn!(
            "keepsake: the save holds {}, which the type no longer has; dropped on load",
            dropped.join(", ")
        );
    }
}

/// The registered type a stored column belongs to (and its index): by its path, an old path
/// the game renamed it from, or, in a save from before layouts, the path a Bevy type moved to
/// in Bevy 0.20.
pub(super) fn registered<'r>(
    registry: &'r SaveRegistry,
    header: &ColumnHeader<'_>,
) -> Option<(usize, &'r SaveableEntry)> {
    registry.lookup(header.type_path).or_else(|| {
        let moved = header
            .layout
            .is_none()
            .then(|| bevy_0_19::path_now(header.type_path));
        registry.lookup(moved??)
    })
}

/// Refuses a column stored as a component for a type registered as a resource, or the reverse.
fn check_kind(
    type_path: &str,
    stored: ColumnKind,
    registered: ColumnKind,
) -> Result<(), SnapshotError> {
    if stored == registered {
        return Ok(());
    }
    Err(SnapshotError::Value {
        type_path: type_path.to_owned(),
        entity_index: None,
        reason: format!(
            "stored as a {} but registered as a {}",
            stored.name(),
            registered.name()
        ),
    })
}

/// A value that did not decode, named by type and entity.
pub(super) fn value_error(
    type_path: &str,
    entity_index: Option<u32>,
    reason: String,
) -> SnapshotError {
    SnapshotError::Value {
        type_path: type_path.to_owned(),
        entity_index,
        reason,
    }
}
