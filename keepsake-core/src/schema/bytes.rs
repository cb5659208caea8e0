//! Postcard's encoding of primitive values, read and written here only: every reader of value
//! bytes (the stored-layout reader [`stored`](super::stored), the reflection plan, resolution)
//! decodes its numbers, text and lengths through [`ValueBytes`], and the plan writes them with
//! the `put_*` functions beside it.
//!
//! The rules, each in one place ([`ValueBytes::unsigned`]/[`put_unsigned`] and
//! [`ValueBytes::signed`]/[`put_signed`]):
//!
//! - `u8` and `i8` are one raw byte; wider integers are LEB128 varints (see `blob::wire`),
//!   zigzag-encoded when signed; a varint takes at most `⌈bits / 7⌉` bytes, and the last byte
//!   of a full-length one holds only the bits left (postcard's `max_of_last_byte`), so a value
//!   past the type's range is refused, `u128` included;
//! - `bool` is one byte, 0 or 1; `f32`/`f64` are little-endian; text and byte strings are a
//!   varint length then the bytes; a `char` is its UTF-8 text, which must be one character
//!   (postcard itself takes the first character of up to four bytes: stricter here, since
//!   only one-character texts are ever written);
//! - a variant index is a 32-bit varint; a length a 64-bit one.
//!
//! # Speed
//!
//! These calls sit under every value of every column a load reads: each is `#[inline]`, the
//! error is a small `Copy` enum (the caller adds what was being read), and nothing allocates.

use crate::wire::{self, VarintError};

/// Why value bytes do not read as the primitive asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The bytes end before the value does.
    #[error("the value ends early: {needed} bytes needed, {left} left")]
    Truncated {
        /// Bytes the value needs.
        needed: usize,
        /// Bytes left.
        left: usize,
    },
    /// A varint longer than its type can take.
    #[error("a varint longer than a {bits}-bit number takes")]
    BadVarint {
        /// The integer's width.
        bits: u32,
    },
    /// A varint whose value is past the range of its type.
    #[error("a varint out of range for a {bits}-bit number")]
    OutOfRange {
        /// The integer's width.
        bits: u32,
    },
    /// A `bool` other than 0 or 1.
    #[error("{0} is not a bool")]
    InvalidBool(u8),
    /// Text that is not UTF-8.
    #[error("invalid UTF-8 text")]
    InvalidUtf8,
    /// A `char` whose text is not one character.
    #[error("a char stored as {len} bytes of text, not one character")]
    InvalidChar {
        /// The text's length in bytes.
        len: usize,
    },
    /// A length longer than the bytes left can hold.
    #[error("length {len} is longer than the {left} bytes left")]
    TooLong {
        /// The length read.
        len: u128,
        /// Bytes left.
        left: usize,
    },
}

/// The bytes of one value, read from the front with postcard's encoding of primitives.
#[derive(Clone, Copy, Debug)]
pub struct ValueBytes<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> ValueBytes<'a> {
    /// Reads `bytes` from their start.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        ValueBytes { bytes, pos: 0 }
    }

    /// How many bytes are left unread.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// How many bytes were read.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Goes back (or forward) to `pos`, a position read before (at most the input's length).
    #[inline]
    pub fn set_position(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    /// The whole input.
    #[inline]
    pub fn input(&self) -> &'a [u8] {
        self.bytes
    }

    /// The bytes not read yet.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// Moves past `len` bytes read by another reader (at most the bytes left).
    #[inline]
    pub fn advance(&mut self, len: usize) {
        self.pos += len.min(self.remaining());
    }

    /// The next `len` bytes.
    #[inline]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], ValueError> {
        let left = self.remaining();
        if len > left {
            return Err(ValueError::Truncated { needed: len, left });
        }
        let taken = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(taken)
    }

    /// The next `N` bytes.
    #[inline]
    pub fn fixed<const N: usize>(&mut self) -> Result<[u8; N], ValueError> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    /// One raw byte.
    #[inline]
    pub fn byte(&mut self) -> Result<u8, ValueError> {
        Ok(self.fixed::<1>()?[0])
    }

    /// An unsigned `bits`-bit integer: one raw byte for 8 bits, else a varint in its range.
    #[inline]
    pub fn unsigned(&mut self, bits: u32) -> Result<u128, ValueError> {
        if bits == 8 {
            return self.byte().map(u128::from);
        }
        let max_len = bits.div_ceil(7) as usize;
        let rest = self.rest();
        let (value, len) = wire::read_varint(rest, max_len).map_err(|error| match error {
            VarintError::Truncated => ValueError::Truncated {
                needed: rest.len() + 1,
                left: rest.len(),
            },
            VarintError::TooLong => ValueError::BadVarint { bits },
        })?;
        // The last byte of a full-length varint holds the bits left; `read_varint` drops bits
        // past 128, so this (postcard's own check) rather than the value's.
        if len == max_len && rest[len - 1] > last_byte_max(bits) {
            return Err(ValueError::OutOfRange { bits });
        }
        self.pos += len;
        Ok(value)
    }

    /// A signed `bits`-bit integer: one raw byte for 8 bits, else a zigzag varint.
    #[inline]
    pub fn signed(&mut self, bits: u32) -> Result<i128, ValueError> {
        if bits == 8 {
            return self.byte().map(|byte| i128::from(byte as i8));
        }
        Ok(wire::unzigzag_i128(self.unsigned(bits)?))
    }

    /// A `bool`: 0 or 1.
    #[inline]
    pub fn bool(&mut self) -> Result<bool, ValueError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            byte => Err(ValueError::InvalidBool(byte)),
        }
    }

    /// A little-endian `f32`.
    #[inline]
    pub fn f32(&mut self) -> Result<f32, ValueError> {
        self.fixed().map(f32::from_le_bytes)
    }

    /// A little-endian `f64`.
    #[inline]
    pub fn f64(&mut self) -> Result<f64, ValueError> {
        self.fixed().map(f64::from_le_bytes)
    }

    /// `N` little-endian `f32`s (a glam float vector or quaternion).
    #[inline]
    pub fn lanes_f32<const N: usize>(&mut self) -> Result<[f32; N], ValueError> {
        let mut lanes = [0.0; N];
        for lane in &mut lanes {
            *lane = self.f32()?;
        }
        Ok(lanes)
    }

    /// `N` zigzag varints of `i32`s (a glam `IVec`).
    #[inline]
    pub fn lanes_i32<const N: usize>(&mut self) -> Result<[i32; N], ValueError> {
        let mut lanes = [0; N];
        for lane in &mut lanes {
            *lane = self.signed(32)? as i32;
        }
        Ok(lanes)
    }

    /// `N` varints of `u32`s (a glam `UVec`).
    #[inline]
    pub fn lanes_u32<const N: usize>(&mut self) -> Result<[u32; N], ValueError> {
        let mut lanes = [0; N];
        for lane in &mut lanes {
            *lane = self.unsigned(32)? as u32;
        }
        Ok(lanes)
    }

    /// Bytes with their varint length before them.
    #[inline]
    pub fn bytes_with_len(&mut self) -> Result<&'a [u8], ValueError> {
        let len = self.unsigned(64)?;
        self.take(usize::try_from(len).unwrap_or(usize::MAX))
    }

    /// UTF-8 text with its length, borrowed from the input.
    #[inline]
    pub fn str(&mut self) -> Result<&'a str, ValueError> {
        std::str::from_utf8(self.bytes_with_len()?).map_err(|_| ValueError::InvalidUtf8)
    }

    /// A `char`: its text, which must be one character.
    #[inline]
    pub fn char(&mut self) -> Result<char, ValueError> {
        let text = self.str()?;
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(character), None) => Ok(character),
            _ => Err(ValueError::InvalidChar { len: text.len() }),
        }
    }

    /// A length (of a sequence or map) no longer than the bytes left can hold, each item
    /// taking at least `min_item_size` bytes (0: items may take none, unbounded here).
    #[inline]
    pub fn length(&mut self, min_item_size: usize) -> Result<usize, ValueError> {
        let len = self.unsigned(64)?;
        let left = self.remaining();
        match usize::try_from(len) {
            Ok(fits) if min_item_size == 0 || fits <= left / min_item_size => Ok(fits),
            _ => Err(ValueError::TooLong { len, left }),
        }
    }

    /// An enum's variant index.
    #[inline]
    pub fn variant_index(&mut self) -> Result<u32, ValueError> {
        self.unsigned(32).map(|index| index as u32)
    }

    /// An entity's 64-bit id; whether it is a valid entity is the engine's rule.
    #[inline]
    pub fn entity_bits(&mut self) -> Result<u64, ValueError> {
        self.unsigned(64).map(|bits| bits as u64)
    }
}

/// The largest last byte of a full-length varint of a `bits`-bit number.
#[inline]
fn last_byte_max(bits: u32) -> u8 {
    let extra = bits % 7;
    match extra {
        // A width that is a multiple of seven fills its last byte (no such Rust integer).
        0 => 0x7f,
        _ => (1u8 << extra) - 1,
    }
}

/// Appends an unsigned `bits`-bit integer as postcard writes it (see [`ValueBytes::unsigned`]).
#[inline]
pub fn put_unsigned(out: &mut Vec<u8>, bits: u32, value: u128) {
    if bits == 8 {
        out.push(value as u8);
    } else {
        wire::put_varint_u128(out, value);
    }
}

/// Appends a signed `bits`-bit integer as postcard writes it (see [`ValueBytes::signed`]).
#[inline]
pub fn put_signed(out: &mut Vec<u8>, bits: u32, value: i128) {
    if bits == 8 {
        out.push(value as i8 as u8);
    } else {
        wire::put_varint_u128(out, wire::zigzag_i128(value));
    }
}

/// Appends a `bool`.
#[inline]
pub fn put_bool(out: &mut Vec<u8>, value: bool) {
    out.push(u8::from(value));
}

/// Appends a little-endian `f32`.
#[inline]
pub fn put_f32(out: &mut Vec<u8>, value: f32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Appends a little-endian `f64`.
#[inline]
pub fn put_f64(out: &mut Vec<u8>, value: f64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Appends a length (of a sequence, map or text).
#[inline]
pub fn put_length(out: &mut Vec<u8>, len: usize) {
    wire::put_varint_u128(out, len as u128);
}

/// Appends an enum's variant index.
#[inline]
pub fn put_variant_index(out: &mut Vec<u8>, index: u32) {
    wire::put_varint_u128(out, index.into());
}

/// Appends text with its length.
#[inline]
pub fn put_str(out: &mut Vec<u8>, text: &str) {
    put_length(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

/// Appends a `char` as its text.
#[inline]
pub fn put_char(out: &mut Vec<u8>, value: char) {
    put_str(out, value.encode_utf8(&mut [0; 4]));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::DeserializeOwned;

    /// What postcard reads from the front of `bytes` as a `T`, and how many bytes it took.
    fn by_postcard<T: DeserializeOwned>(bytes: &[u8]) -> Option<(T, usize)> {
        let (value, rest) = postcard::take_from_bytes::<T>(bytes).ok()?;
        Some((value, bytes.len() - rest.len()))
    }

    /// What `read` takes from the front of `bytes`, and how many bytes.
    fn ours<'a, T>(
        bytes: &'a [u8],
        read: impl FnOnce(&mut ValueBytes<'a>) -> Result<T, ValueError>,
    ) -> Option<(T, usize)> {
        let mut input = ValueBytes::new(bytes);
        let value = read(&mut input).ok()?;
        Some((value, input.position()))
    }

    /// Every integer width, read both ways from `bytes`: same value and length, or refused by
    /// both.
    fn integers_agree(bytes: &[u8]) {
        macro_rules! unsigned {
            ($($ty:ty => $bits:expr),*) => {$(
                let theirs = by_postcard::<$ty>(bytes).map(|(v, n)| (v as u128, n));
                assert_eq!(ours(bytes, |b| b.unsigned($bits)), theirs, "{} {bytes:x?}", stringify!($ty));
            )*};
        }
        macro_rules! signed {
            ($($ty:ty => $bits:expr),*) => {$(
                let theirs = by_postcard::<$ty>(bytes).map(|(v, n)| (v as i128, n));
                assert_eq!(ours(bytes, |b| b.signed($bits)), theirs, "{} {bytes:x?}", stringify!($ty));
            )*};
        }
        unsigned!(u8 => 8, u16 => 16, u32 => 32, u64 => 64, u128 => 128);
        signed!(i8 => 8, i16 => 16, i32 => 32, i64 => 64, i128 => 128);
    }

    fn others_agree(bytes: &[u8]) {
        assert_eq!(ours(bytes, ValueBytes::bool), by_postcard::<bool>(bytes));
        let bits = |read: Option<(f32, usize)>| read.map(|(v, n)| (v.to_bits(), n));
        assert_eq!(bits(ours(bytes, ValueBytes::f32)), bits(by_postcard(bytes)));
        let bits = |read: Option<(f64, usize)>| read.map(|(v, n)| (v.to_bits(), n));
        assert_eq!(bits(ours(bytes, ValueBytes::f64)), bits(by_postcard(bytes)));
        let text = |read: Option<(&str, usize)>| read.map(|(v, n)| (v.to_owned(), n));
        assert_eq!(
            text(ours(bytes, ValueBytes::str)),
            by_postcard::<String>(bytes)
        );
        // Stricter than postcard on chars only (see the module docs): what reads here reads
        // the same there.
        if let Some(read) = ours(bytes, ValueBytes::char) {
            assert_eq!(Some(read), by_postcard::<char>(bytes), "{bytes:x?}");
        }
    }

    /// The V1 bytes: a 19-byte `u128` varint whose last byte carries bits past 128.
    fn past_u128() -> Vec<u8> {
        let mut bytes = vec![0xff; 18];
        bytes.push(0x04);
        bytes
    }

    #[test]
    fn a_u128_varint_past_128_bits_is_refused_as_postcard_refuses_it() {
        let bytes = past_u128();
        assert!(by_postcard::<u128>(&bytes).is_none());
        assert_eq!(
            ValueBytes::new(&bytes).unsigned(128),
            Err(ValueError::OutOfRange { bits: 128 })
        );
        integers_agree(&bytes);
        let mut max = Vec::new();
        put_unsigned(&mut max, 128, u128::MAX);
        assert_eq!(ValueBytes::new(&max).unsigned(128), Ok(u128::MAX));
    }

    #[test]
    fn boundary_values_read_as_postcard_writes_them() {
        macro_rules! round_trip {
            ($put:ident, $read:ident, $($ty:ty => $bits:expr),*) => {$(
                for value in [<$ty>::MIN, <$ty>::MAX, 0 as $ty, 1 as $ty, 127 as $ty] {
                    let mut ours = Vec::new();
                    $put(&mut ours, $bits, value.into());
                    assert_eq!(ours, postcard::to_stdvec(&value).unwrap(), "{value}");
                    assert_eq!(ValueBytes::new(&ours).$read($bits), Ok(value.into()));
                    integers_agree(&ours);
                }
            )*};
        }
        round_trip!(put_unsigned, unsigned, u8 => 8, u16 => 16, u32 => 32, u64 => 64, u128 => 128);
        round_trip!(put_signed, signed, i8 => 8, i16 => 16, i32 => 32, i64 => 64, i128 => 128);
        let mut out = Vec::new();
        put_str(&mut out, "héllo");
        put_char(&mut out, 'ß');
        put_bool(&mut out, true);
        put_f32(&mut out, -1.5);
        put_f64(&mut out, 2.25);
        put_variant_index(&mut out, 300);
        let theirs = postcard::to_stdvec(&("héllo", 'ß', true, -1.5f32, 2.25f64)).unwrap();
        assert_eq!(out[..theirs.len()], theirs[..]);
        let mut input = ValueBytes::new(&out);
        assert_eq!(input.str(), Ok("héllo"));
        assert_eq!(input.char(), Ok('ß'));
        assert_eq!(input.bool(), Ok(true));
        assert_eq!(input.f32(), Ok(-1.5));
        assert_eq!(input.f64(), Ok(2.25));
        assert_eq!(input.variant_index(), Ok(300));
        assert_eq!(input.remaining(), 0);
    }

    #[test]
    fn lengths_are_bounded_by_the_bytes_left() {
        let mut out = Vec::new();
        put_length(&mut out, 3);
        out.extend_from_slice(&[1, 2]);
        assert_eq!(
            ValueBytes::new(&out).length(1),
            Err(ValueError::TooLong { len: 3, left: 2 })
        );
        assert_eq!(ValueBytes::new(&out).length(0), Ok(3));
        out.push(3);
        assert_eq!(ValueBytes::new(&out).length(1), Ok(3));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Random bytes (mostly continuation bytes, so that long varints and their last byte
        /// are reached): every primitive reads here as postcard reads it, or both refuse.
        #[test]
        fn random_bytes_read_as_postcard_reads_them(
            bytes in proptest::collection::vec(
                prop_oneof![3 => 0x80u8..=0xff, 2 => any::<u8>(), 1 => 0u8..=4],
                0..24,
            )
        ) {
            integers_agree(&bytes);
            others_agree(&bytes);
        }
    }
}
