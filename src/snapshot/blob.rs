//! Low-level reading and writing of the `ecs_blob` byte layout (see the module docs).
//!
//! Integers are LEB128 varints, the same encoding postcard uses. The reader checks every length
//! against the bytes that remain before using it, so a hostile blob cannot make it allocate more
//! than its own size.

use super::error::SnapshotError;

/// The snapshot layout version written by this build.
pub const BLOB_VERSION: u8 = 1;

/// Whether a type is saved per entity (a component) or once (a resource): the kind of every
/// registered type, and the column kind byte of the layout, which is the discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// One value per entity that has the component (kind byte `0`).
    Component = 0,
    /// A single resource value (kind byte `1`).
    Resource = 1,
}

impl ColumnKind {
    /// `"component"` or `"resource"`.
    pub fn name(self) -> &'static str {
        match self {
            ColumnKind::Component => "component",
            ColumnKind::Resource => "resource",
        }
    }

    /// The kind a column kind byte stands for, or `None` for a byte the layout does not define.
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(ColumnKind::Component),
            1 => Some(ColumnKind::Resource),
            _ => None,
        }
    }
}

/// Appends varints and length-prefixed bytes to a buffer.
#[derive(Default)]
pub(crate) struct BlobWriter {
    pub(crate) bytes: Vec<u8>,
}

impl BlobWriter {
    pub(crate) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    pub(crate) fn byte(&mut self, value: u8) {
        self.bytes.push(value);
    }

    /// Writes `value - previous` as a zigzag varint (small for values that follow each other).
    pub(crate) fn delta(&mut self, previous: u64, value: u64) {
        let delta = value.wrapping_sub(previous) as i64;
        self.varint(((delta << 1) ^ (delta >> 63)) as u64);
    }

    pub(crate) fn bytes_with_len(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.bytes.extend_from_slice(bytes);
    }
}

/// Reads a blob front to back with bounds checks.
pub(crate) struct BlobReader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> BlobReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BlobReader { bytes, offset: 0 }
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

    pub(crate) fn byte(&mut self, what: &'static str) -> Result<u8, SnapshotError> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64, SnapshotError> {
        let start = self.offset;
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte(what)?;
            let bits = u64::from(byte & 0x7F);
            if shift == 63 && bits > 1 {
                break;
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(SnapshotError::Malformed {
            offset: start,
            reason: format!("{what} is not a valid varint"),
        })
    }

    /// Reads a value written by [`BlobWriter::delta`] after `previous`.
    pub(crate) fn delta(
        &mut self,
        previous: u64,
        what: &'static str,
    ) -> Result<u64, SnapshotError> {
        let zigzag = self.varint(what)?;
        let delta = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        Ok(previous.wrapping_add(delta as u64))
    }

    /// A varint that must fit in a `u32`.
    pub(crate) fn varint_u32(&mut self, what: &'static str) -> Result<u32, SnapshotError> {
        let offset = self.offset;
        let value = self.varint(what)?;
        u32::try_from(value).map_err(|_| SnapshotError::Malformed {
            offset,
            reason: format!("{what} {value} does not fit in 32 bits"),
        })
    }

    /// A count of items that each take at least one byte, so it cannot exceed what remains.
    pub(crate) fn count(&mut self, what: &'static str) -> Result<usize, SnapshotError> {
        let offset = self.offset;
        let count = self.varint(what)?;
        if count > self.remaining() as u64 {
            return Err(SnapshotError::Malformed {
                offset,
                reason: format!(
                    "{what} is {count}, more than the {} bytes left could hold",
                    self.remaining()
                ),
            });
        }
        Ok(count as usize)
    }

    /// A count stored as a little-endian `u32` (fixed width, so a writer can fill it in after
    /// the items), which cannot exceed the bytes left since every item takes at least one.
    pub(crate) fn u32_count(&mut self, what: &'static str) -> Result<usize, SnapshotError> {
        let offset = self.offset;
        let bytes = self.take(4, what)?;
        let count = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        if count > self.remaining() {
            return Err(SnapshotError::Malformed {
                offset,
                reason: format!(
                    "{what} is {count}, more than the {} bytes left could hold",
                    self.remaining()
                ),
            });
        }
        Ok(count)
    }

    pub(crate) fn bytes_with_len(&mut self, what: &'static str) -> Result<&'a [u8], SnapshotError> {
        let len = self.varint(what)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len, what)
    }

    pub(crate) fn str_with_len(&mut self, what: &'static str) -> Result<&'a str, SnapshotError> {
        let offset = self.offset;
        let bytes = self.bytes_with_len(what)?;
        std::str::from_utf8(bytes).map_err(|_| SnapshotError::Malformed {
            offset,
            reason: format!("{what} is not UTF-8"),
        })
    }

    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], SnapshotError> {
        if len > self.remaining() {
            return Err(SnapshotError::Truncated {
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

/// The 64-bit hash stored as `WorldState::state_hash` (XXH3, stable across platforms and builds).
pub fn state_hash(blob: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(blob)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_overlong_input() {
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut writer = BlobWriter::default();
        for value in values {
            writer.varint(value);
        }
        let mut reader = BlobReader::new(&writer.bytes);
        for value in values {
            assert_eq!(reader.varint("test").unwrap(), value);
        }
        assert!(reader.is_empty());

        let mut deltas = BlobWriter::default();
        let sequence = [5u64, 6, 7, 3, u64::MAX, 0, 1 << 40];
        let mut previous = 0;
        for value in sequence {
            deltas.delta(previous, value);
            previous = value;
        }
        assert!(deltas.bytes.len() < 20, "{:?}", deltas.bytes);
        let mut reader = BlobReader::new(&deltas.bytes);
        let mut previous = 0;
        for value in sequence {
            previous = reader.delta(previous, "delta").unwrap();
            assert_eq!(previous, value);
        }

        let overlong = [0xFF; 11];
        assert!(matches!(
            BlobReader::new(&overlong).varint("x"),
            Err(SnapshotError::Malformed { .. })
        ));
        assert!(matches!(
            BlobReader::new(&[0x80]).varint("x"),
            Err(SnapshotError::Truncated { .. })
        ));
        let mut too_many = BlobWriter::default();
        too_many.varint(1000);
        assert!(BlobReader::new(&too_many.bytes).count("things").is_err());
    }
}
