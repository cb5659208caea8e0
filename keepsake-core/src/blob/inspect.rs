//! Reading an `ecs_blob`'s table without the game's types: entity count, and per column the
//! type path, schema version, kind, rows and bytes, with each row's raw value bytes.
//!
//! This file is engine-free (no Bevy import), so tools such as the `keepsake` command line can
//! describe any save. It checks the structure a load relies on (layout version, lengths, entity
//! indices in range, no value stored twice for one entity, no type stored twice, no trailing
//! bytes) but not the values themselves, which need the registered types: see
//! `bevy_keepsake::snapshot::decode` and `bevy_keepsake::snapshot::dump` for that.
//!
//! # Memory
//!
//! A table is a view of the blob: the entity ids ([`EntityIds`]), each column's rows
//! ([`StoredRows`]) and its layout ([`StoredLayout`]) are read from the blob again when asked,
//! so a table costs a column entry per column and a key per key, besides what the cursor
//! checks with (see `cursor`), all paid from the blob's budget: at most four bytes per blob
//! byte and a megabyte, whatever its counts claim (a forged count is
//! [`BlobError::OverBudget`]). A layout's tree is built by [`StoredLayout::decode`], under
//! a budget of the layout's size.

use super::cursor::BlobCursor;
use super::entities::{EntityIds, StoredLevelKey};
use super::layout::ColumnKind;
use super::rows::StoredRows;
use crate::error::BlobError;
use crate::format::Budget;
use crate::schema::{TypeLayout, codec};

/// One column of the blob: every stored value of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredColumn<'a> {
    /// The stored type path, e.g. `my_game::Health`.
    pub type_path: &'a str,
    /// The type's schema version when it was saved.
    pub schema_version: u32,
    /// Component or resource.
    pub kind: ColumnKind,
    /// The type's layout when the values were written; `None` in saves from before layouts
    /// (blob layout version 1).
    pub layout: Option<StoredLayout<'a>>,
    /// Bytes the column takes in the blob, its own header included.
    pub bytes: usize,
    /// The values, in stored order (components by ascending entity index as written).
    pub rows: StoredRows<'a>,
}

/// A column's type layout as the blob stores it ([`codec`]'s bytes), checked to read as one
/// layout; [`StoredLayout::decode`] builds its tree.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StoredLayout<'a> {
    bytes: &'a [u8],
}

impl<'a> StoredLayout<'a> {
    /// The layout's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The layout's tree, paid from a budget of the layout's own size
    /// ([`codec::decode_bytes`]): a forged layout is [`BlobError::OverBudget`].
    pub fn decode(&self) -> Result<TypeLayout, BlobError> {
        codec::decode_bytes(self.bytes)
    }
}

impl std::fmt::Debug for StoredLayout<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.decode() {
            Ok(layout) => layout.fmt(f),
            Err(_) => f.debug_tuple("StoredLayout").field(&self.bytes).finish(),
        }
    }
}

/// The structure of an `ecs_blob`, read without the game's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobTable<'a> {
    /// The blob's layout version.
    pub layout_version: u8,
    /// The saving world's entity ids (`Entity::to_bits`), in entity-index order.
    pub entity_ids: EntityIds<'a>,
    /// The unsaved entities saved values may reference, by key (empty before layout
    /// version 3).
    pub keys: Vec<StoredLevelKey<'a>>,
    /// The columns, in stored order.
    pub columns: Vec<StoredColumn<'a>>,
}

impl BlobTable<'_> {
    /// How many entities the snapshot holds.
    pub fn entity_count(&self) -> usize {
        self.entity_ids.len()
    }
}

/// Reads and checks the table of an `ecs_blob` (see the layout in the [`blob` module](super)).
///
/// Errors name the byte offset, and the type path and entity index where there is one. Memory
/// use is at most four times the blob's size and a megabyte, whatever its counts claim (see
/// the module's "Memory").
///
/// `bevy_keepsake::snapshot::inspect` is this function; its documentation shows it on a
/// captured world.
pub fn inspect(blob: &[u8]) -> Result<BlobTable<'_>, BlobError> {
    inspect_within(blob, &Budget::for_input(blob.len()))
}

/// [`inspect`], paying from `budget` (shared with the caller's account) instead of a budget of
/// the blob's own size: for a caller that holds the blob's decoded file while it inspects it
/// and keeps the two within one bound.
pub fn inspect_within<'a>(blob: &'a [u8], budget: &Budget) -> Result<BlobTable<'a>, BlobError> {
    let (mut cursor, entities) = BlobCursor::open_within(blob, budget.clone())?;
    let mut columns = Vec::new();
    while let Some(header) = cursor.next_column()? {
        let rows_start = cursor.offset();
        while cursor.next_row()?.is_some() {}
        let rows = &blob[rows_start..cursor.offset()];
        let section = format_args!("list of columns ({} so far)", columns.len());
        cursor.budget().grow(section, &mut columns)?;
        columns.push(StoredColumn {
            type_path: header.type_path,
            schema_version: header.schema_version,
            kind: header.kind,
            layout: header.layout.map(|bytes| StoredLayout { bytes }),
            bytes: cursor.offset() - header.start,
            rows: StoredRows::new(rows, header.rows, header.kind),
        });
    }
    Ok(BlobTable {
        layout_version: cursor.layout_version(),
        entity_ids: entities.ids,
        keys: entities.keys,
        columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::BLOB_VERSION;
    use crate::blob::StoredRow;
    use crate::schema::Leaf;
    use crate::wire::{put_delta, put_varint};

    /// The old hand-writer's vocabulary over a plain buffer.
    #[derive(Default)]
    struct W {
        bytes: Vec<u8>,
    }

    impl W {
        fn byte(&mut self, value: u8) {
            self.bytes.push(value);
        }
        fn varint(&mut self, value: u64) {
            put_varint(&mut self.bytes, value);
        }
        fn delta(&mut self, previous: u64, value: u64) {
            put_delta(&mut self.bytes, previous, value);
        }
        fn bytes_with_len(&mut self, bytes: &[u8]) {
            self.varint(bytes.len() as u64);
            self.bytes.extend_from_slice(bytes);
        }
    }

    /// A blob by hand: two entities, one keyed unsaved entity, one component column, one
    /// resource column.
    fn sample() -> Vec<u8> {
        sample_with_keys(&[(40, "level/door")])
    }

    fn sample_with_keys(keys: &[(u64, &str)]) -> Vec<u8> {
        let mut w = W::default();
        w.byte(BLOB_VERSION);
        w.varint(2);
        w.delta(0, 10);
        w.delta(10, 11);
        w.varint(keys.len() as u64);
        let mut previous = 0;
        for &(id, key) in keys {
            w.delta(previous, id);
            w.bytes_with_len(key.as_bytes());
            previous = id;
        }
        w.bytes.extend_from_slice(&2u32.to_le_bytes());
        w.bytes_with_len(b"game::Health");
        w.varint(3);
        w.byte(0);
        w.bytes_with_len(&TypeLayout::Leaf(Leaf::F32).to_bytes());
        w.bytes.extend_from_slice(&2u32.to_le_bytes());
        w.delta(0, 0);
        w.bytes_with_len(&[1, 2]);
        w.delta(0, 1);
        w.bytes_with_len(&[3]);
        w.bytes_with_len(b"game::Score");
        w.varint(1);
        w.byte(1);
        w.bytes_with_len(&TypeLayout::Leaf(Leaf::U64).to_bytes());
        w.bytes.extend_from_slice(&1u32.to_le_bytes());
        w.bytes_with_len(&[9, 9, 9]);
        w.bytes
    }

    #[test]
    fn reads_every_column_and_row() {
        let blob = sample();
        let table = inspect(&blob).unwrap();
        assert_eq!(table.entity_ids, vec![10, 11]);
        let door = StoredLevelKey {
            entity_id: 40,
            key: "level/door",
        };
        assert_eq!(table.keys, vec![door]);
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
        let layout = health.layout.map(|layout| layout.decode().unwrap());
        assert_eq!(layout, Some(TypeLayout::Leaf(Leaf::F32)));
        assert_eq!(score.kind, ColumnKind::Resource);
        assert_eq!(score.rows.first().unwrap().value, &[9, 9, 9]);
        let column_bytes: usize = table.columns.iter().map(|c| c.bytes).sum();
        // layout byte, entity count and two one-byte deltas, the key count, the key's id and
        // length bytes and its 10 bytes, the u32 column count.
        assert_eq!(column_bytes, blob.len() - (1 + 1 + 2 + 1 + 2 + 10 + 4));
    }

    #[test]
    fn every_truncation_and_trailing_byte_is_an_error() {
        let blob = sample();
        for len in 0..blob.len() {
            assert!(inspect(&blob[..len]).is_err(), "prefix of {len} bytes");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(matches!(inspect(&longer), Err(BlobError::Malformed { .. })));
    }

    #[test]
    fn out_of_range_indices_and_duplicates_are_refused() {
        let mut blob = sample();
        // The second Health row's delta (1 → zigzag 2) pointing at entity 2 of 2.
        let at = blob.windows(3).position(|w| w == [2, 1, 3]).unwrap();
        blob[at] = 4;
        assert!(matches!(
            inspect(&blob),
            Err(BlobError::EntityIndexOutOfRange {
                entity_index: 2,
                ..
            })
        ));
        blob[at] = 0; // delta 0: entity 0 again
        assert!(matches!(
            inspect(&blob),
            Err(BlobError::Duplicate {
                entity_index: Some(0),
                ..
            })
        ));
    }

    #[test]
    fn a_bad_key_table_is_refused_naming_the_problem() {
        let cases: [(&[(u64, &str)], &str); 4] = [
            (&[(40, "a"), (30, "b")], "out of order"),
            (&[(40, "a"), (41, "a")], "listed twice"),
            (&[(11, "a")], "also a saved entity"),
            (&[(1 << 32, "a")], "not a valid entity id"),
        ];
        for (keys, expected) in cases {
            let error = inspect(&sample_with_keys(keys)).unwrap_err();
            assert!(
                matches!(&error, BlobError::Malformed { reason, .. } if reason.contains(expected)),
                "{keys:?}: {error}"
            );
        }
        assert!(inspect(&sample_with_keys(&[(30, "a"), (40, "b")])).is_ok());
    }
}
