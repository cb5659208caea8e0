//! LEB128 varints and zigzag, the one implementation (see the [`wire`](super) module).

/// Appends `value` as a varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a 128-bit `value` as a varint (one loop in 64 bits for the usual small values).
#[inline]
pub fn put_varint_u128(out: &mut Vec<u8>, mut value: u128) {
    if let Ok(small) = u64::try_from(value) {
        return put_varint(out, small);
    }
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value - previous` (wrapping) as a zigzag varint: small for values that follow
/// each other.
#[inline]
pub fn put_delta(out: &mut Vec<u8>, previous: u64, value: u64) {
    put_varint(out, zigzag(value.wrapping_sub(previous) as i64));
}

/// The value a delta read after `previous` stands for.
#[inline]
pub fn undelta(previous: u64, zigzagged: u64) -> u64 {
    previous.wrapping_add(unzigzag(zigzagged) as u64)
}

/// Zigzag: 0, -1, 1, -2 … as 0, 1, 2, 3 …
#[inline]
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// [`zigzag`] in 128 bits.
#[inline]
pub fn zigzag_i128(value: i128) -> u128 {
    ((value << 1) ^ (value >> 127)) as u128
}

/// The inverse of [`zigzag_i128`].
#[inline]
pub fn unzigzag_i128(value: u128) -> i128 {
    ((value >> 1) as i128) ^ -((value & 1) as i128)
}

/// Why a varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The bytes end before the varint does.
    Truncated,
    /// The varint is longer than the `max_len` bytes its type can take.
    TooLong,
}

/// Reads a varint of at most `max_len` bytes from the front of `bytes`: its value and the
/// number of bytes it took. Callers check the value's range for their type.
#[inline]
pub fn read_varint(bytes: &[u8], max_len: usize) -> Result<(u128, usize), VarintError> {
    // Most varints (lengths, entity index deltas, small numbers) are one byte.
    if let Some(&first) = bytes.first()
        && first < 0x80
        && max_len > 0
    {
        return Ok((u128::from(first), 1));
    }
    let mut value = 0u128;
    for (index, &byte) in bytes.iter().take(max_len).enumerate() {
        value |= u128::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Ok((value, index + 1));
        }
    }
    if bytes.len() < max_len {
        Err(VarintError::Truncated)
    } else {
        Err(VarintError::TooLong)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most bytes a varint of a `u128` takes.
    const MAX_VARINT_LEN: usize = 19;

    #[test]
    fn varints_and_zigzag_round_trip() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(read_varint(&out, 10), Ok((u128::from(value), out.len())));
        }
        let mut out = Vec::new();
        put_varint_u128(&mut out, u128::MAX);
        assert_eq!(out.len(), MAX_VARINT_LEN);
        assert_eq!(
            read_varint(&out, MAX_VARINT_LEN),
            Ok((u128::MAX, out.len()))
        );
        for value in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(value)), value);
        }
        for value in [0, -1, 1, i128::MIN, i128::MAX] {
            assert_eq!(unzigzag_i128(zigzag_i128(value)), value);
        }
        assert_eq!(read_varint(&[0x80], 10), Err(VarintError::Truncated));
        assert_eq!(read_varint(&[0xFF; 11], 10), Err(VarintError::TooLong));
    }
}
