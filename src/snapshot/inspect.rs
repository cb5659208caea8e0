//! Reading an `ecs_blob`'s table without the game's types: entity count, and per column the
//! type path, schema version, kind, rows and bytes, with each row's raw value bytes.
//!
//! This file is engine-free (no Bevy import), so tools such as the `keepsake` command line can
//! describe any save. It checks the structure a load relies on (layout version, lengths, entity
//! indices in range, no value stored twice for one entity, no type stored twice, no trailing
//! bytes) but not the values themselves, which need the registered types: see
//! [`decode`](super::decode) and [`dump`](super::dump) for that.
//!
//! Rows borrow their value bytes from the blob, so a table costs a few words per row on top of
//! the blob, and every count is checked against the bytes left before anything is allocated.

use super::blob::{BLOB_VERSION, BlobReader, ColumnKind};
use super::error::SnapshotError;
use std::collections::HashSet;

/// One stored value: its owner and its postcard bytes, borrowed from the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredRow<'a> {
    /// The row's owner as an index into the snapshot's entity table; `None` for a resource.
    pub entity_index: Option<u32>,
    /// The value's postcard bytes (only the registered type can read them).
    pub value: &'a [u8],
}

/// One column of the blob: every stored value of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredColumn<'a> {
    /// The stored type path, e.g. `my_game::Health`.
    pub type_path: &'a str,
    /// The type's schema version when it was saved.
    pub schema_version: u32,
    /// Component or resource.
    pub kind: ColumnKind,
    /// Bytes the column takes in the blob, its own header included.
    pub bytes: usize,
    /// The values, in stored order (components by ascending entity index as written).
    pub rows: Vec<StoredRow<'a>>,
}

/// The structure of an `ecs_blob`, read without the game's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobTable<'a> {
    /// The blob's layout version.
    pub layout_version: u8,
    /// The saving world's entity ids (`Entity::to_bits`), in entity-index order.
    pub entity_ids: Vec<u64>,
    /// The columns, in stored order.
    pub columns: Vec<StoredColumn<'a>>,
}

impl BlobTable<'_> {
    /// How many entities the snapshot holds.
    pub fn entity_count(&self) -> usize {
        self.entity_ids.len()
    }
}

/// Reads and checks the table of an `ecs_blob` (see the layout in the [module docs](super)).
///
/// Errors name the byte offset, and the type path and entity index where there is one. Memory
/// use is bounded by a small multiple of the blob's size, whatever its lengths claim.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt, ColumnKind};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// app.world_mut().spawn((Saveable, Health(7.0)));
/// let captured = snapshot::capture(app.world_mut())?;
///
/// let table = snapshot::inspect(&captured.blob)?;
/// assert_eq!(table.entity_count(), 1);
/// let health = table.columns.iter().find(|c| c.type_path.ends_with("::Health")).unwrap();
/// assert_eq!((health.kind, health.rows.len()), (ColumnKind::Component, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(blob: &[u8]) -> Result<BlobTable<'_>, SnapshotError> {
    let mut reader = BlobReader::new(blob);
    let layout_version = read_layout_version(&mut reader)?;
    let entity_ids = read_entity_ids(&mut reader)?;
    let entity_count = entity_ids.len();
    let column_count = reader.u32_count("column count")?;
    let mut columns: Vec<StoredColumn<'_>> = Vec::with_capacity(column_count);
    let mut type_paths = HashSet::with_capacity(column_count);
    // For each entity, the last column that stored a value for it (to catch duplicates).
    let mut last_column_of = vec![u32::MAX; entity_count];
    for column_number in 0..column_count as u32 {
        let column = read_column(&mut reader, column_number, &mut last_column_of)?;
        if !type_paths.insert(column.type_path) {
            return Err(SnapshotError::Duplicate {
                type_path: column.type_path.to_owned(),
                entity_index: None,
            });
        }
        columns.push(column);
    }
    if !reader.is_empty() {
        return Err(malformed(
            reader.offset(),
            format!(
                "{} unexpected bytes after the last column",
                reader.remaining()
            ),
        ));
    }
    Ok(BlobTable {
        layout_version,
        entity_ids,
        columns,
    })
}

/// Reads the layout version, refusing versions newer than this build and the impossible `0`.
pub(super) fn read_layout_version(reader: &mut BlobReader<'_>) -> Result<u8, SnapshotError> {
    let version = reader.byte("layout version")?;
    if version > BLOB_VERSION {
        return Err(SnapshotError::NewerLayout {
            found: version,
            supported: BLOB_VERSION,
        });
    }
    if version == 0 {
        return Err(malformed(0, "layout version 0 does not exist"));
    }
    Ok(version)
}

/// The entity table: ids as deltas, each listed once.
fn read_entity_ids(reader: &mut BlobReader<'_>) -> Result<Vec<u64>, SnapshotError> {
    let count = reader.count("entity count")?;
    if count > u32::MAX as usize {
        return Err(malformed(reader.offset(), "more than 2^32 entities"));
    }
    let mut ids = Vec::with_capacity(count);
    let mut unique = HashSet::with_capacity(count);
    let mut bits = 0;
    for _ in 0..count {
        let offset = reader.offset();
        bits = reader.delta(bits, "entity id")?;
        // Bevy's rule (`Entity::try_from_bits`): the low 32 bits, the index, are never u32::MAX.
        if bits as u32 == u32::MAX {
            return Err(malformed(
                offset,
                format!("{bits:#x} is not a valid entity id"),
            ));
        }
        if !unique.insert(bits) {
            return Err(malformed(
                offset,
                format!("entity id {bits:#x} is listed twice"),
            ));
        }
        ids.push(bits);
    }
    Ok(ids)
}

fn read_column<'a>(
    reader: &mut BlobReader<'a>,
    column_number: u32,
    last_column_of: &mut [u32],
) -> Result<StoredColumn<'a>, SnapshotError> {
    let start = reader.offset();
    let type_path = reader.str_with_len("type path")?;
    let schema_version = reader.varint_u32("type version")?;
    let kind_offset = reader.offset();
    let byte = reader.byte("column kind")?;
    let kind = ColumnKind::from_byte(byte).ok_or_else(|| {
        malformed(
            kind_offset,
            format!("{type_path} has column kind {byte}; only 0 and 1 exist"),
        )
    })?;
    let row_count_offset = reader.offset();
    let row_count = reader.u32_count("row count")?;
    let mut rows = Vec::with_capacity(row_count);
    match kind {
        ColumnKind::Resource => {
            if row_count != 1 {
                return Err(malformed(
                    row_count_offset,
                    format!("{row_count} values stored for the resource {type_path}"),
                ));
            }
            let value = reader.bytes_with_len("resource value")?;
            rows.push(StoredRow {
                entity_index: None,
                value,
            });
        }
        ColumnKind::Component => {
            let entity_count = last_column_of.len() as u32;
            let mut previous = 0u64;
            for _ in 0..row_count {
                previous = reader.delta(previous, "entity index")?;
                let entity_index = u32::try_from(previous).unwrap_or(u32::MAX);
                if previous >= u64::from(entity_count) {
                    return Err(SnapshotError::EntityIndexOutOfRange {
                        type_path: type_path.to_owned(),
                        entity_index,
                        entity_count,
                    });
                }
                let last_column = &mut last_column_of[entity_index as usize];
                if *last_column == column_number {
                    return Err(SnapshotError::Duplicate {
                        type_path: type_path.to_owned(),
                        entity_index: Some(entity_index),
                    });
                }
                *last_column = column_number;
                let value = reader.bytes_with_len("component value")?;
                rows.push(StoredRow {
                    entity_index: Some(entity_index),
                    value,
                });
            }
        }
    }
    Ok(StoredColumn {
        type_path,
        schema_version,
        kind,
        bytes: reader.offset() - start,
        rows,
    })
}

fn malformed(offset: usize, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Malformed {
        offset,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::blob::BlobWriter;

    /// A blob by hand: two entities, one component column, one resource column.
    fn sample() -> Vec<u8> {
        let mut w = BlobWriter::default();
        w.byte(BLOB_VERSION);
        w.varint(2);
        w.delta(0, 10);
        w.delta(10, 11);
        w.bytes.extend_from_slice(&2u32.to_le_bytes());
        w.bytes_with_len(b"game::Health");
        w.varint(3);
        w.byte(0);
        w.bytes.extend_from_slice(&2u32.to_le_bytes());
        w.delta(0, 0);
        w.bytes_with_len(&[1, 2]);
        w.delta(0, 1);
        w.bytes_with_len(&[3]);
        w.bytes_with_len(b"game::Score");
        w.varint(1);
        w.byte(1);
        w.bytes.extend_from_slice(&1u32.to_le_bytes());
        w.bytes_with_len(&[9, 9, 9]);
        w.bytes
    }

    #[test]
    fn reads_every_column_and_row() {
        let blob = sample();
        let table = inspect(&blob).unwrap();
        assert_eq!(table.entity_ids, vec![10, 11]);
        assert_eq!(table.columns.len(), 2);
        let health = &table.columns[0];
        assert_eq!(
            (health.type_path, health.schema_version, health.kind),
            ("game::Health", 3, ColumnKind::Component)
        );
        assert_eq!(
            health.rows,
            vec![
                StoredRow {
                    entity_index: Some(0),
                    value: &[1, 2]
                },
                StoredRow {
                    entity_index: Some(1),
                    value: &[3]
                }
            ]
        );
        let score = &table.columns[1];
        assert_eq!(score.kind, ColumnKind::Resource);
        assert_eq!(score.rows[0].value, &[9, 9, 9]);
        let column_bytes: usize = table.columns.iter().map(|c| c.bytes).sum();
        // layout byte, entity count and two one-byte deltas, the u32 column count.
        assert_eq!(column_bytes, blob.len() - (1 + 1 + 2 + 4));
    }

    #[test]
    fn every_truncation_and_trailing_byte_is_an_error() {
        let blob = sample();
        for len in 0..blob.len() {
            assert!(inspect(&blob[..len]).is_err(), "prefix of {len} bytes");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(matches!(
            inspect(&longer),
            Err(SnapshotError::Malformed { .. })
        ));
    }

    #[test]
    fn out_of_range_indices_and_duplicates_are_refused() {
        let mut blob = sample();
        // The second Health row's delta (1 → zigzag 2) pointing at entity 2 of 2.
        let at = blob.windows(3).position(|w| w == [2, 1, 3]).unwrap();
        blob[at] = 4;
        assert!(matches!(
            inspect(&blob),
            Err(SnapshotError::EntityIndexOutOfRange {
                entity_index: 2,
                ..
            })
        ));
        blob[at] = 0; // delta 0: entity 0 again
        assert!(matches!(
            inspect(&blob),
            Err(SnapshotError::Duplicate {
                entity_index: Some(0),
                ..
            })
        ));
    }
}
