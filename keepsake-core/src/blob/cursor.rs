//! The one reader of the blob layout. [`inspect`](super::inspect()), `decode` and `dump` all
//! read a blob through a [`BlobCursor`], which checks the structure a load relies on as it
//! goes: the layout version, the entity and key tables (valid ids, none twice; see
//! `entities`), each column's header (a kind the layout defines, one value for a resource, no
//! type twice), each row's entity index (inside the entity table, one value per entity and
//! column), and no bytes after the last column. A bad byte therefore gets the same error whoever reads it.
//!
//! # Memory
//!
//! The cursor allocates, from the blob's [`Budget`]: the entity table's check (four bytes an
//! entity, given back before the columns), the key table (a `StoredLevelKey` a key), the last
//! column of each entity (four bytes an entity) and a hash set of the type paths met. It
//! checks each column's type layout where it lies, building no tree, and refuses one whose
//! tree (which a load builds when the type changed since the save, one column at a time) would
//! not fit in what the budget has left. Every count is checked against the bytes its items take
//! at least: an entity one, a key two, a column seven (nine with its layout), a component row
//! two.

use super::entities::EntityTable;
use super::layout::{BLOB_VERSION, ColumnKind, LAYOUTS_SINCE};
use crate::error::BlobError;
use crate::format::Budget;
use crate::schema::codec;
use crate::wire::BlobReader;
use std::collections::HashSet;

/// One stored value: its owner and its postcard bytes, borrowed from the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredRow<'a> {
    /// The row's owner as an index into the snapshot's entity table; `None` for a resource.
    pub entity_index: Option<u32>,
    /// The value's postcard bytes (only the registered type can read them).
    pub value: &'a [u8],
}

/// The fields in front of a column's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnHeader<'a> {
    /// Where the column starts in the blob.
    pub start: usize,
    /// The stored type path.
    pub type_path: &'a str,
    /// The schema version the values were written at.
    pub schema_version: u32,
    /// Component or resource.
    pub kind: ColumnKind,
    /// The type's layout when the values were written (checked to read as one); `None` in
    /// blobs older than layout version 2.
    pub layout: Option<&'a [u8]>,
    /// How many rows the column holds.
    pub rows: usize,
}

/// The column whose rows are being read.
struct ColumnRows<'a> {
    header: ColumnHeader<'a>,
    left: usize,
    previous_index: u64,
}

/// Reads a blob front to back: [`BlobCursor::open`], then [`BlobCursor::next_column`] and, for
/// each column, [`BlobCursor::next_row`] as far as the reader wants (rows it leaves unread are
/// still checked when the next column is asked for).
pub struct BlobCursor<'a> {
    reader: BlobReader<'a>,
    layout_version: u8,
    entity_count: u32,
    columns_left: usize,
    column_number: u32,
    column: Option<ColumnRows<'a>>,
    type_paths: HashSet<&'a str>,
    /// For each entity, the last column that stored a value for it (to catch duplicates).
    last_column_of: Vec<u32>,
}

impl<'a> BlobCursor<'a> {
    /// Reads the layout version, the entity table and the key table: the cursor, and the
    /// saving world's entity ids (`Entity::to_bits`) in entity-index order with the keyed
    /// unsaved entities.
    pub fn open(blob: &'a [u8]) -> Result<(Self, EntityTable<'a>), BlobError> {
        Self::open_reader(BlobReader::new(blob))
    }

    /// [`open`](Self::open), the cursor paying from `budget` rather than from a budget of the
    /// blob's own: for a reader that holds the blob's file decoded meanwhile and keeps both
    /// within one bound (cloud sync's check of a downloaded save).
    pub fn open_within(
        blob: &'a [u8],
        budget: Budget,
    ) -> Result<(Self, EntityTable<'a>), BlobError> {
        Self::open_reader(BlobReader::with_budget(blob, budget))
    }

    /// [`open`](Self::open) through `reader`, at the blob's start.
    fn open_reader(mut reader: BlobReader<'a>) -> Result<(Self, EntityTable<'a>), BlobError> {
        let layout_version = read_layout_version(&mut reader)?;
        let table = EntityTable::read(&mut reader, layout_version)?;
        let columns_left = reader.u32_count("column count", min_column_len(layout_version))?;
        let entities = table.ids.len();
        let section = format_args!("entity table's columns ({entities} entities)");
        let mut last_column_of = reader.vec(section, entities)?;
        last_column_of.resize(entities, u32::MAX);
        let cursor = BlobCursor {
            reader,
            layout_version,
            entity_count: entities as u32,
            columns_left,
            column_number: 0,
            column: None,
            type_paths: HashSet::new(),
            last_column_of,
        };
        Ok((cursor, table))
    }

    /// The blob's layout version (see [`BLOB_VERSION`](super::BLOB_VERSION)).
    pub fn layout_version(&self) -> u8 {
        self.layout_version
    }

    /// The blob's budget: what its readers may still allocate.
    pub fn budget(&self) -> &Budget {
        self.reader.budget()
    }

    /// The current column's number, from 1 (as errors name it).
    pub fn column_number(&self) -> u32 {
        self.column_number
    }

    /// The byte offset of the next field.
    pub fn offset(&self) -> usize {
        self.reader.offset()
    }

    /// The next column's header, after checking the rest of the current column; `None` after
    /// the last column, once the blob is checked to end there.
    pub fn next_column(&mut self) -> Result<Option<ColumnHeader<'a>>, BlobError> {
        while self.next_row()?.is_some() {}
        if self.columns_left == 0 {
            return self.expect_end().map(|()| None);
        }
        self.columns_left -= 1;
        self.column_number += 1;
        let header = self.read_column_header()?;
        self.column = Some(ColumnRows {
            header,
            left: header.rows,
            previous_index: 0,
        });
        Ok(Some(header))
    }

    /// The current column's next row; `None` after its last.
    pub fn next_row(&mut self) -> Result<Option<StoredRow<'a>>, BlobError> {
        let Some(column) = self.column.as_mut().filter(|column| column.left > 0) else {
            return Ok(None);
        };
        column.left -= 1;
        let (kind, type_path) = (column.header.kind, column.header.type_path);
        let previous = column.previous_index;
        let row = match kind {
            ColumnKind::Resource => StoredRow {
                entity_index: None,
                value: self.reader.bytes_with_len("resource value")?,
            },
            ColumnKind::Component => {
                let stored = self.reader.delta(previous, "entity index")?;
                let entity_index = self.claim_entity(stored, type_path)?;
                if let Some(column) = self.column.as_mut() {
                    column.previous_index = stored;
                }
                StoredRow {
                    entity_index: Some(entity_index),
                    value: self.reader.bytes_with_len("component value")?,
                }
            }
        };
        Ok(Some(row))
    }

    /// The values of the current column's unread rows, read ahead without moving the cursor
    /// or checking them (the rows' own reading does): how a save without layouts is told
    /// apart by its values (see `load::bevy_0_19`). Stops at the first row that does not read.
    pub fn peek_values(&self) -> impl Iterator<Item = &'a [u8]> + Clone + use<'a> {
        let (kind, left) = match &self.column {
            Some(column) => (column.header.kind, column.left),
            None => (ColumnKind::Resource, 0),
        };
        let mut reader = self.reader.read_ahead();
        (0..left).map_while(move |_| {
            if kind == ColumnKind::Component {
                reader.varint("entity index").ok()?;
            }
            reader.bytes_with_len("value").ok()
        })
    }

    fn read_column_header(&mut self) -> Result<ColumnHeader<'a>, BlobError> {
        let start = self.reader.offset();
        let type_path = self.reader.str_with_len("type path")?;
        let schema_version = self.reader.varint_u32("type version")?;
        let kind_offset = self.reader.offset();
        let byte = self.reader.byte("column kind")?;
        let kind = ColumnKind::from_byte(byte).ok_or_else(|| {
            malformed(
                kind_offset,
                format!("{type_path} has column kind {byte}; only 0 and 1 exist"),
            )
        })?;
        let layout = self.read_type_layout(type_path)?;
        let row_count_offset = self.reader.offset();
        let rows = self.reader.u32_count("row count", min_row_len(kind))?;
        if kind == ColumnKind::Resource && rows != 1 {
            return Err(malformed(
                row_count_offset,
                format!("{rows} values stored for the resource {type_path}"),
            ));
        }
        if !self.insert_type_path(type_path)? {
            return Err(BlobError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: None,
            });
        }
        Ok(ColumnHeader {
            start,
            type_path,
            schema_version,
            kind,
            layout,
            rows,
        })
    }

    /// Records a column's type path; `false` when a column had it already. The set's growth is
    /// paid for (a forged column count is no promise of columns, so nothing is reserved ahead).
    fn insert_type_path(&mut self, type_path: &'a str) -> Result<bool, BlobError> {
        let paths = &mut self.type_paths;
        if paths.len() == paths.capacity() {
            let more = paths.capacity().max(4);
            // A hash table keeps its slots at most 7/8 full, in a power of two of them, each
            // slot the path and a control byte.
            let slots = ((paths.len() + more) * 8 / 7).next_power_of_two();
            let bytes = slots * (size_of::<&str>() + 1);
            let section = format_args!("list of columns ({} so far)", paths.len());
            self.reader.charge(section, bytes as u64)?;
            paths.reserve(more);
        }
        Ok(paths.insert(type_path))
    }

    /// A column's stored type layout (none before layout version 2), checked to be one whole
    /// layout where it lies (no tree is built), so later readers can decode it without failing.
    fn read_type_layout(&mut self, type_path: &str) -> Result<Option<&'a [u8]>, BlobError> {
        if self.layout_version < LAYOUTS_SINCE {
            return Ok(None);
        }
        let offset = self.reader.offset();
        let bytes = self.reader.bytes_with_len("type layout")?;
        let tree = codec::check(bytes).map_err(|error| {
            malformed(
                offset,
                format!("the layout of {type_path} does not read: {error}"),
            )
        })?;
        // A load builds this tree when the type changed since the save, and lets it go before
        // the next column: it must fit in what the blob's budget has left.
        let column = self.column_number;
        let section = format_args!("layout of column {column} ({type_path})");
        let budget = self.reader.budget();
        budget.transient(|| budget.charge(section, tree))?;
        Ok(Some(bytes))
    }

    /// Checks a row's entity index: inside the entity table, and not given a value by this
    /// column already.
    fn claim_entity(&mut self, stored: u64, type_path: &str) -> Result<u32, BlobError> {
        let entity_index = u32::try_from(stored).unwrap_or(u32::MAX);
        if stored >= u64::from(self.entity_count) {
            return Err(BlobError::EntityIndexOutOfRange {
                type_path: type_path.to_owned(),
                entity_index,
                entity_count: self.entity_count,
            });
        }
        let last_column = &mut self.last_column_of[entity_index as usize];
        if *last_column == self.column_number {
            return Err(BlobError::Duplicate {
                type_path: type_path.to_owned(),
                entity_index: Some(entity_index),
            });
        }
        *last_column = self.column_number;
        Ok(entity_index)
    }

    /// Refuses bytes after the last column.
    fn expect_end(&self) -> Result<(), BlobError> {
        if self.reader.is_empty() {
            return Ok(());
        }
        Err(malformed(
            self.reader.offset(),
            format!(
                "{} unexpected bytes after the last column",
                self.reader.remaining()
            ),
        ))
    }
}

/// The fewest bytes a column takes: its type path's length, schema version, kind and row count
/// (four bytes), and since layout version 2 its layout's length and a layout tag.
fn min_column_len(layout_version: u8) -> usize {
    match layout_version < LAYOUTS_SINCE {
        true => 1 + 1 + 1 + 4,
        false => 1 + 1 + 1 + 1 + 1 + 4,
    }
}

/// The fewest bytes a row takes: a component's entity index and value length, a resource's
/// value length.
fn min_row_len(kind: ColumnKind) -> usize {
    match kind {
        ColumnKind::Component => 2,
        ColumnKind::Resource => 1,
    }
}

/// Reads the layout version, refusing versions newer than this build and the impossible `0`.
fn read_layout_version(reader: &mut BlobReader<'_>) -> Result<u8, BlobError> {
    let version = reader.byte("layout version")?;
    if version > BLOB_VERSION {
        return Err(BlobError::NewerLayout {
            found: version,
            supported: BLOB_VERSION,
        });
    }
    if version == 0 {
        return Err(malformed(0, "layout version 0 does not exist"));
    }
    Ok(version)
}

fn malformed(offset: usize, reason: impl Into<String>) -> BlobError {
    BlobError::Malformed {
        offset,
        reason: reason.into(),
    }
}
