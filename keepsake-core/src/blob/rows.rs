//! A column's rows as [`inspect`](super::inspect()) returns them: read from the blob again when
//! iterated, after the cursor checked them, so a column of a million two-byte rows costs a
//! few words instead of a 24-megabyte vector.

use super::cursor::StoredRow;
use super::layout::ColumnKind;
use crate::wire::{read_varint, undelta};

/// The rows of one column, in stored order (components by ascending entity index as written),
/// read from the blob when iterated.
///
/// Compares equal to a slice or vector of the same rows.
#[derive(Clone, Copy)]
pub struct StoredRows<'a> {
    /// The rows' bytes (see the layout in the [`blob` module](super)).
    bytes: &'a [u8],
    len: usize,
    kind: ColumnKind,
}

impl<'a> StoredRows<'a> {
    /// The `len` rows of a column of `kind`, which `bytes` hold exactly (checked by the
    /// cursor).
    pub(crate) fn new(bytes: &'a [u8], len: usize, kind: ColumnKind) -> Self {
        StoredRows { bytes, len, kind }
    }

    /// How many rows the column holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the column holds no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first row, if any.
    pub fn first(&self) -> Option<StoredRow<'a>> {
        self.iter().next()
    }

    /// The rows, in stored order.
    pub fn iter(&self) -> StoredRowIter<'a> {
        StoredRowIter {
            bytes: self.bytes,
            left: self.len,
            kind: self.kind,
            previous: 0,
        }
    }
}

impl<'a> IntoIterator for StoredRows<'a> {
    type Item = StoredRow<'a>;
    type IntoIter = StoredRowIter<'a>;

    fn into_iter(self) -> StoredRowIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &StoredRows<'a> {
    type Item = StoredRow<'a>;
    type IntoIter = StoredRowIter<'a>;

    fn into_iter(self) -> StoredRowIter<'a> {
        self.iter()
    }
}

impl PartialEq for StoredRows<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for StoredRows<'_> {}

impl<'a> PartialEq<[StoredRow<'a>]> for StoredRows<'a> {
    fn eq(&self, other: &[StoredRow<'a>]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl<'a> PartialEq<Vec<StoredRow<'a>>> for StoredRows<'a> {
    fn eq(&self, other: &Vec<StoredRow<'a>>) -> bool {
        *self == other[..]
    }
}

impl std::fmt::Debug for StoredRows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The rows of a [`StoredRows`], in order.
#[derive(Clone, Debug)]
pub struct StoredRowIter<'a> {
    bytes: &'a [u8],
    left: usize,
    kind: ColumnKind,
    previous: u64,
}

impl<'a> StoredRowIter<'a> {
    fn varint(&mut self) -> Option<u64> {
        let (value, len) = read_varint(self.bytes, 10).ok()?;
        self.bytes = &self.bytes[len..];
        u64::try_from(value).ok()
    }
}

impl<'a> Iterator for StoredRowIter<'a> {
    type Item = StoredRow<'a>;

    fn next(&mut self) -> Option<StoredRow<'a>> {
        self.left = self.left.checked_sub(1)?;
        // The cursor read these very bytes as rows, so they read.
        let entity_index = match self.kind {
            ColumnKind::Resource => None,
            ColumnKind::Component => {
                self.previous = undelta(self.previous, self.varint()?);
                Some(u32::try_from(self.previous).ok()?)
            }
        };
        let len = usize::try_from(self.varint()?).ok()?;
        let value = self.bytes.get(..len)?;
        self.bytes = &self.bytes[len..];
        Some(StoredRow {
            entity_index,
            value,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}
