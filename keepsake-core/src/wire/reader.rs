//! Reading the fields of a blob front to back with bounds checks; [`BlobCursor`](super::BlobCursor)
//! reads the layout's structure with it.

use super::varint::{VarintError, read_varint, undelta};
use crate::error::BlobError;
use crate::format::Budget;
use std::fmt::Display;

/// Reads a blob's fields front to back; every length is checked against the bytes left, every
/// count against what its items take at least, and whatever is allocated for a count is paid
/// from the reader's [`Budget`] ([`BlobReader::vec`], [`BlobReader::charge`]). A clone reads on
/// from the same place and pays from the same budget.
#[derive(Clone)]
pub(crate) struct BlobReader<'a> {
    bytes: &'a [u8],
    offset: usize,
    budget: Budget,
}

impl<'a> BlobReader<'a> {
    /// A reader of `bytes` with a budget sized from them.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BlobReader::with_budget(bytes, Budget::for_input(bytes.len()))
    }

    /// A reader of `bytes` paying from `budget` (a part of a larger input, such as a column's
    /// layout, charges the whole input's account).
    pub(crate) fn with_budget(bytes: &'a [u8], budget: Budget) -> Self {
        BlobReader {
            bytes,
            offset: 0,
            budget,
        }
    }

    /// A reader from the same place that reads ahead without allocating: its budget is
    /// nothing.
    pub(crate) fn read_ahead(&self) -> Self {
        BlobReader {
            bytes: self.bytes,
            offset: self.offset,
            budget: Budget::nothing(),
        }
    }

    pub(crate) fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Pays for `bytes` that `section` is about to allocate.
    pub(crate) fn charge(&self, section: impl Display, bytes: u64) -> Result<(), BlobError> {
        Ok(self.budget.charge(section, bytes)?)
    }

    /// A vector with room for `count` values, paid for.
    pub(crate) fn vec<T>(&self, section: impl Display, count: usize) -> Result<Vec<T>, BlobError> {
        Ok(self.budget.vec(section, count)?)
    }

    /// The bytes read since `start` (an earlier [`BlobReader::offset`]).
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        &self.bytes[start.min(self.offset)..self.offset]
    }

    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.offset
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub(crate) fn byte(&mut self, what: &'static str) -> Result<u8, BlobError> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64, BlobError> {
        let start = self.offset;
        let invalid = || BlobError::Malformed {
            offset: start,
            reason: format!("{what} is not a valid varint"),
        };
        match read_varint(&self.bytes[start..], 10) {
            Ok((value, len)) => {
                self.offset += len;
                u64::try_from(value).map_err(|_| invalid())
            }
            Err(VarintError::Truncated) => Err(BlobError::Truncated {
                what,
                offset: self.bytes.len(),
                needed: 1,
            }),
            Err(VarintError::TooLong) => Err(invalid()),
        }
    }

    /// Reads a delta written after `previous` (see the layout).
    pub(crate) fn delta(&mut self, previous: u64, what: &'static str) -> Result<u64, BlobError> {
        Ok(undelta(previous, self.varint(what)?))
    }

    /// A varint that must fit in a `u32`.
    pub(crate) fn varint_u32(&mut self, what: &'static str) -> Result<u32, BlobError> {
        let offset = self.offset;
        let value = self.varint(what)?;
        u32::try_from(value).map_err(|_| BlobError::Malformed {
            offset,
            reason: format!("{what} {value} does not fit in 32 bits"),
        })
    }

    /// A count of items that each take at least `item_len` bytes (one or more), so that it
    /// cannot exceed what the bytes left hold.
    pub(crate) fn count(
        &mut self,
        what: &'static str,
        item_len: usize,
    ) -> Result<usize, BlobError> {
        let offset = self.offset;
        let count = self.varint(what)?;
        self.check_count(offset, count, (what, item_len))
    }

    /// A count stored as a little-endian `u32` (fixed width, so a writer can fill it in after
    /// the items), of items that each take at least `item_len` bytes.
    pub(crate) fn u32_count(
        &mut self,
        what: &'static str,
        item_len: usize,
    ) -> Result<usize, BlobError> {
        let offset = self.offset;
        let bytes = self.take(4, what)?;
        let count = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        self.check_count(offset, count.into(), (what, item_len))
    }

    fn check_count(
        &self,
        offset: usize,
        count: u64,
        (what, item_len): (&'static str, usize),
    ) -> Result<usize, BlobError> {
        let item_len = item_len.max(1);
        if count > (self.remaining() / item_len) as u64 {
            let each = match item_len {
                1 => String::new(),
                more => format!(" ({more} bytes each at least)"),
            };
            return Err(BlobError::Malformed {
                offset,
                reason: format!(
                    "{what} is {count}, more than the {} bytes left could hold{each}",
                    self.remaining()
                ),
            });
        }
        Ok(count as usize)
    }

    pub(crate) fn bytes_with_len(&mut self, what: &'static str) -> Result<&'a [u8], BlobError> {
        let len = self.varint(what)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len, what)
    }

    pub(crate) fn str_with_len(&mut self, what: &'static str) -> Result<&'a str, BlobError> {
        let offset = self.offset;
        let bytes = self.bytes_with_len(what)?;
        std::str::from_utf8(bytes).map_err(|_| BlobError::Malformed {
            offset,
            reason: format!("{what} is not UTF-8"),
        })
    }

    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], BlobError> {
        if len > self.remaining() {
            return Err(BlobError::Truncated {
                what,
                offset: self.offset,
                needed: len - self.remaining(),
            });
        }
        let slice = &self.bytes[self.offset..self.offset + len];
        self.offset += len;
        Ok(slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{put_delta, put_varint};

    #[test]
    fn varints_deltas_and_counts_are_checked() {
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut bytes = Vec::new();
        for value in values {
            put_varint(&mut bytes, value);
        }
        let mut reader = BlobReader::new(&bytes);
        for value in values {
            assert_eq!(reader.varint("test").unwrap(), value);
        }
        assert!(reader.is_empty());

        let mut deltas = Vec::new();
        let sequence = [5u64, 6, 7, 3, u64::MAX, 0, 1 << 40];
        let mut previous = 0;
        for value in sequence {
            put_delta(&mut deltas, previous, value);
            previous = value;
        }
        assert!(deltas.len() < 20, "{deltas:?}");
        let mut reader = BlobReader::new(&deltas);
        let mut previous = 0;
        for value in sequence {
            previous = reader.delta(previous, "delta").unwrap();
            assert_eq!(previous, value);
        }

        let overlong = [0xFF; 11];
        assert!(matches!(
            BlobReader::new(&overlong).varint("x"),
            Err(BlobError::Malformed { .. })
        ));
        assert!(matches!(
            BlobReader::new(&[0x80]).varint("x"),
            Err(BlobError::Truncated { .. })
        ));
        let mut too_many = Vec::new();
        put_varint(&mut too_many, 1000);
        assert!(BlobReader::new(&too_many).count("things", 1).is_err());
        let mut pairs = vec![3];
        pairs.extend_from_slice(&[0; 6]);
        assert!(BlobReader::new(&pairs).count("pairs", 2).is_ok());
        assert!(BlobReader::new(&pairs).count("triples", 3).is_err());
    }
}
