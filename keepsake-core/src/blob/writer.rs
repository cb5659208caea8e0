//! Writing a blob: the entity and key tables, then each column's header and rows, with the counts the
//! layout puts in front of what they count filled in afterwards.

use super::entities::StoredLevelKey;
use super::layout::{BLOB_VERSION, ColumnKind};
use crate::wire::{put_delta, put_varint};

/// A blob being written, front to back.
pub struct BlobWriter {
    /// The blob written so far.
    pub bytes: Vec<u8>,
    /// Where the column count is to be filled in.
    column_count_at: usize,
    columns: u32,
}

/// A column whose header is written and whose rows follow: where it starts, where its row
/// count goes, and the last entity index written (rows are deltas).
pub struct OpenColumn {
    start: usize,
    row_count_at: usize,
    rows: u32,
    previous_index: u32,
}

impl BlobWriter {
    /// Starts a blob with its layout version, the entity table (`ids` in entity-index order)
    /// and the key table (`keys` by ascending id), reserving `capacity` bytes in all.
    pub fn new(
        ids: impl ExactSizeIterator<Item = u64>,
        keys: &[StoredLevelKey<'_>],
        capacity: usize,
    ) -> Self {
        let mut bytes = Vec::with_capacity(capacity);
        bytes.push(BLOB_VERSION);
        put_varint(&mut bytes, ids.len() as u64);
        let mut previous = 0;
        for id in ids {
            put_delta(&mut bytes, previous, id);
            previous = id;
        }
        put_varint(&mut bytes, keys.len() as u64);
        let mut previous = 0;
        for key in keys {
            put_delta(&mut bytes, previous, key.entity_id);
            put_varint(&mut bytes, key.key.len() as u64);
            bytes.extend_from_slice(key.key.as_bytes());
            previous = key.entity_id;
        }
        let column_count_at = bytes.len();
        bytes.extend_from_slice(&[0; 4]);
        BlobWriter {
            bytes,
            column_count_at,
            columns: 0,
        }
    }

    /// Writes a column's header (its row count filled in by [`BlobWriter::close_column`]);
    /// `layout` is the type's layout as [`schema::codec`](crate::schema::codec) writes it.
    pub fn open_column(
        &mut self,
        type_path: &str,
        schema_version: u32,
        kind: ColumnKind,
        layout: &[u8],
    ) -> OpenColumn {
        let start = self.bytes.len();
        put_varint(&mut self.bytes, type_path.len() as u64);
        self.bytes.extend_from_slice(type_path.as_bytes());
        put_varint(&mut self.bytes, schema_version.into());
        self.bytes.push(kind as u8);
        put_varint(&mut self.bytes, layout.len() as u64);
        self.bytes.extend_from_slice(layout);
        let row_count_at = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        OpenColumn {
            start,
            row_count_at,
            rows: 0,
            previous_index: 0,
        }
    }

    /// Appends a row: the entity index as a delta (none for a resource), then `value`, which
    /// is the value's length and bytes as [`push_prefixed`] writes them.
    pub fn row(&mut self, column: &mut OpenColumn, entity_index: Option<u32>, value: &[u8]) {
        if let Some(index) = entity_index {
            put_delta(&mut self.bytes, column.previous_index.into(), index.into());
            column.previous_index = index;
        }
        self.bytes.extend_from_slice(value);
        column.rows += 1;
    }

    /// The entity index the next row's delta counts from: the last row's (`0` before the
    /// first).
    pub fn delta_base(column: &OpenColumn) -> u32 {
        column.previous_index
    }

    /// Appends `rows` rows an earlier blob joined (deltas and values) from `joined`, after
    /// which the [`delta_base`](Self::delta_base) is `last_index`.
    pub fn joined_rows(
        &mut self,
        column: &mut OpenColumn,
        joined: &[u8],
        rows: u32,
        last_index: u32,
    ) {
        self.bytes.extend_from_slice(joined);
        column.previous_index = last_index;
        column.rows += rows;
    }

    /// Appends a row whose value `write` encodes in place, behind its length (no copy).
    pub fn row_with<E>(
        &mut self,
        column: &mut OpenColumn,
        entity_index: Option<u32>,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.bytes.len();
        if let Some(index) = entity_index {
            put_delta(&mut self.bytes, column.previous_index.into(), index.into());
        }
        if let Err(error) = push_prefixed(&mut self.bytes, write) {
            self.bytes.truncate(start);
            return Err(error);
        }
        if let Some(index) = entity_index {
            column.previous_index = index;
        }
        column.rows += 1;
        Ok(())
    }

    /// Fills in the column's row count, or takes the column out again when it has no rows (the
    /// layout has no empty columns). Returns its rows.
    pub fn close_column(&mut self, column: OpenColumn) -> u32 {
        if column.rows == 0 {
            self.bytes.truncate(column.start);
            return 0;
        }
        let at = column.row_count_at;
        self.bytes[at..at + 4].copy_from_slice(&column.rows.to_le_bytes());
        self.columns += 1;
        column.rows
    }

    /// The finished blob, its column count filled in.
    pub fn finish(mut self) -> Vec<u8> {
        let at = self.column_count_at;
        self.bytes[at..at + 4].copy_from_slice(&self.columns.to_le_bytes());
        self.bytes
    }
}

/// Appends a value written by `write` behind its varint length: in place behind a one-byte
/// length that is widened afterwards in the rare case the value is 128 bytes or longer.
pub fn push_prefixed<E>(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    let length_at = out.len();
    out.push(0);
    if let Err(problem) = write(out) {
        out.truncate(length_at);
        return Err(problem);
    }
    let len = out.len() - length_at - 1;
    if len < 0x80 {
        out[length_at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        put_varint(&mut prefix, len as u64);
        out.splice(length_at..length_at + 1, prefix);
    }
    Ok(())
}
