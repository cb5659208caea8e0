//! Everything about the payload codecs, in one place: each codec's header byte, its name, how it
//! compresses and decompresses, and how far it can expand (which the reader checks before it
//! allocates).
//!
//! Adding a codec is adding a variant to [`Compression`] and its arm in each `match` below
//! (and in [`Compression::ALL`]); the encoder, the decoder, the header and the limits ask this
//! file and name no codec. See [`Compression`] for what else a new codec's files need.

use super::error::FormatError;

/// The largest expansion an LZ4 block can achieve: one token byte followed by run-length bytes
/// of 255 each, so no LZ4 data expands more than 255 times.
pub const LZ4_MAX_RATIO: u64 = 255;

/// How the payload section is stored: the codec named by byte 6 of the header.
///
/// | byte | codec | stored form | largest expansion |
/// |-----:|-------|-------------|-------------------|
/// | `0` | [`None`](Compression::None) | the payload as is | 1:1 (stored length = uncompressed length) |
/// | `1` | [`Lz4`](Compression::Lz4) | LZ4 block format, no size prefix | 255:1 ([`LZ4_MAX_RATIO`]) |
///
/// A new codec gets the next byte. Builds older than it refuse its files with
/// [`FormatError::UnknownCodec`], which a store handles like a damaged file (it loads a backup
/// and may prune the newer save), so a build must not write a new codec before a
/// [`FORMAT_VERSION`](super::FORMAT_VERSION) bump makes older builds refuse such files as newer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Stored as is (codec byte `0`).
    None,
    /// LZ4 block format without a size prefix (codec byte `1`).
    #[default]
    Lz4,
}

impl Compression {
    /// Every codec, in codec-byte order: what a reader accepts and what bounds are taken over.
    const ALL: [Compression; 2] = [Compression::None, Compression::Lz4];

    /// The byte written in the header.
    pub fn codec_byte(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
        }
    }

    /// Parses a codec byte.
    pub fn from_codec_byte(byte: u8) -> Result<Self, FormatError> {
        Self::ALL
            .into_iter()
            .find(|codec| codec.codec_byte() == byte)
            .ok_or_else(|| FormatError::UnknownCodec {
                byte,
                known: Self::known(),
            })
    }

    /// A short name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "no compression",
            Compression::Lz4 => "LZ4",
        }
    }

    /// The name in the list of known codecs ("0 (none)"), where "no compression" reads badly.
    fn list_name(self) -> &'static str {
        match self {
            Compression::None => "none",
            other => other.name(),
        }
    }

    /// How many uncompressed bytes one stored byte can become, at most.
    pub(crate) fn max_expansion(self) -> u64 {
        match self {
            Compression::None => 1,
            Compression::Lz4 => LZ4_MAX_RATIO,
        }
    }

    /// How many uncompressed bytes one stored byte can become, at most, under any codec.
    pub(crate) fn max_expansion_of_any() -> u64 {
        Self::ALL
            .into_iter()
            .map(Self::max_expansion)
            .max()
            .unwrap_or(1)
    }

    /// The longest stored form of `uncompressed` bytes (a codec may grow incompressible data).
    fn max_stored_len(self, uncompressed: u64) -> u64 {
        match self {
            Compression::None => uncompressed,
            Compression::Lz4 => {
                lz4_flex::block::get_maximum_output_size(uncompressed as usize) as u64
            }
        }
    }

    /// The longest stored form of `uncompressed` bytes under any codec: what a reader that
    /// does not know the codec yet may have to accept.
    pub(crate) fn max_stored_len_of_any(uncompressed: u64) -> u64 {
        Self::ALL
            .into_iter()
            .map(|codec| codec.max_stored_len(uncompressed))
            .max()
            .unwrap_or(uncompressed)
    }

    /// Whether this codec can turn `stored` bytes into `uncompressed` ones: checked before a
    /// buffer of the uncompressed size is allocated, so a forged length allocates nothing.
    fn can_produce(self, stored: u64, uncompressed: u64) -> bool {
        let within_expansion = uncompressed <= stored * self.max_expansion();
        let within_growth = stored <= self.max_stored_len(uncompressed);
        match self {
            // Stored as is: the two lengths are one.
            Compression::None => within_expansion && within_growth,
            // Even empty input compresses to one token byte.
            Compression::Lz4 => stored >= 1 && within_expansion && within_growth,
        }
    }

    /// Refuses stored/uncompressed size pairs this codec cannot produce.
    pub(crate) fn check_sizes(self, stored: u32, uncompressed: u32) -> Result<(), FormatError> {
        let (stored, uncompressed) = (u64::from(stored), u64::from(uncompressed));
        if self.can_produce(stored, uncompressed) {
            Ok(())
        } else {
            Err(FormatError::ImplausibleSize {
                stored,
                uncompressed,
                codec: self.name(),
            })
        }
    }

    /// The stored form of `raw` under this codec.
    pub(crate) fn compress(self, raw: &[u8]) -> Vec<u8> {
        match self {
            Compression::None => raw.to_vec(),
            Compression::Lz4 => lz4_flex::block::compress(raw),
        }
    }

    /// Decompresses `stored` into a buffer of exactly `expected` bytes (the announced size,
    /// already checked against the limits and [`check_sizes`](Self::check_sizes)), and insists
    /// on filling it exactly.
    pub(crate) fn decompress(self, stored: &[u8], expected: usize) -> Result<Vec<u8>, FormatError> {
        let mut out = vec![0u8; expected];
        let written = match self {
            Compression::None => {
                let len = stored.len().min(expected);
                out[..len].copy_from_slice(&stored[..len]);
                stored.len()
            }
            Compression::Lz4 => lz4_flex::block::decompress_into(stored, &mut out)
                .map_err(|error| FormatError::Decompress(error.to_string()))?,
        };
        if written != expected {
            return Err(FormatError::Decompress(format!(
                "it produced {written} bytes but the header announces {expected}"
            )));
        }
        Ok(out)
    }

    /// Decompresses `stored` into `out`, which it must fill exactly (its length is the one a
    /// chunk table announces, already checked against the limits and
    /// [`check_sizes`](Self::check_sizes)); the codec's complaint in words otherwise.
    pub(crate) fn decompress_into(self, stored: &[u8], out: &mut [u8]) -> Result<(), String> {
        let written = match self {
            Compression::None if stored.len() == out.len() => {
                out.copy_from_slice(stored);
                stored.len()
            }
            Compression::None => stored.len(),
            Compression::Lz4 => {
                lz4_flex::block::decompress_into(stored, out).map_err(|error| error.to_string())?
            }
        };
        if written != out.len() {
            return Err(format!(
                "it produced {written} bytes but the chunk table announces {}",
                out.len()
            ));
        }
        Ok(())
    }

    /// The codecs this build reads, for messages: "0 (none) and 1 (LZ4)".
    pub(crate) fn known() -> String {
        let names: Vec<String> = Self::ALL
            .into_iter()
            .map(|codec| format!("{} ({})", codec.codec_byte(), codec.list_name()))
            .collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_byte_parses_back_to_its_codec() {
        for codec in Compression::ALL {
            assert_eq!(
                Compression::from_codec_byte(codec.codec_byte()).unwrap(),
                codec
            );
        }
        assert!(matches!(
            Compression::from_codec_byte(2),
            Err(FormatError::UnknownCodec { byte: 2, .. })
        ));
    }

    #[test]
    fn the_known_codecs_read_as_before() {
        assert_eq!(Compression::known().to_string(), "0 (none) and 1 (LZ4)");
    }

    #[test]
    fn every_codec_round_trips_and_stays_within_its_bounds() {
        let raw: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        for codec in Compression::ALL {
            let stored = codec.compress(&raw);
            assert!(codec.can_produce(stored.len() as u64, raw.len() as u64));
            assert_eq!(codec.decompress(&stored, raw.len()).unwrap(), raw);
            assert!(codec.decompress(&stored, raw.len() + 1).is_err());
        }
    }

    #[test]
    fn impossible_size_pairs_are_refused() {
        assert!(Compression::None.check_sizes(3, 4).is_err());
        assert!(Compression::Lz4.check_sizes(0, 0).is_err());
        assert!(Compression::Lz4.check_sizes(1, 256).is_err());
        assert!(Compression::Lz4.check_sizes(1, 255).is_ok());
    }
}
