//! The fixed 40-byte header: layout constants, serialisation and validation.

use super::codec::Compression;
use super::error::{FormatError, Section};

/// The four bytes every save file starts with.
pub const MAGIC: [u8; 4] = *b"KPSK";

/// The newest format version this build reads. It writes version 3 for sealed saves only:
/// unsealed saves stay version 2 (or 1 on request), which builds from before sealing read.
pub const FORMAT_VERSION: u16 = 3;

/// The first format version whose files are sealed (see [`Header::is_sealed`]).
pub const SEALED_VERSION: u16 = 3;

/// Header flag bit: the payload is sealed (defined from version 3, where it is always set).
const FLAG_SEALED: u8 = 0x01;

/// Size in bytes of the fixed header.
pub const HEADER_LEN: usize = 40;

/// Bytes covered by the header checksum (everything before the checksum itself).
const HEADER_CRC_COVERS: usize = 36;

/// The decoded, checksum-verified header of a save file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version of the file (never newer than [`FORMAT_VERSION`] once parsed).
    pub version: u16,
    /// How the payload is stored.
    pub compression: Compression,
    /// Length of the metadata section in bytes.
    pub meta_len: u32,
    /// Length of the thumbnail section in bytes (`0`: no thumbnail).
    pub thumbnail_len: u32,
    /// Length of the payload as stored in the file.
    pub payload_len: u32,
    /// Length of the payload once decompressed.
    pub payload_uncompressed_len: u32,
    /// CRC32 of the metadata section.
    pub meta_crc: u32,
    /// CRC32 of the thumbnail section (`0` when it is empty).
    pub thumbnail_crc: u32,
    /// CRC32 of the payload as stored.
    pub payload_crc: u32,
}

impl Header {
    /// File offset where the metadata section starts.
    pub fn meta_offset(&self) -> u64 {
        HEADER_LEN as u64
    }

    /// File offset where the thumbnail section starts.
    pub fn thumbnail_offset(&self) -> u64 {
        self.meta_offset() + u64::from(self.meta_len)
    }

    /// File offset where the payload section starts.
    pub fn payload_offset(&self) -> u64 {
        self.thumbnail_offset() + u64::from(self.thumbnail_len)
    }

    /// Whether the file is sealed (format version 3): its payload is encrypted and, with the
    /// header's fixed fields, metadata and thumbnail, authenticated under the game's key.
    pub fn is_sealed(&self) -> bool {
        self.version >= SEALED_VERSION
    }

    /// What a seal authenticates besides the payload, for the writer and the reader alike: the
    /// header's fixed fields (bytes `0..24`: magic, version, codec, flags and lengths), then the
    /// metadata and the thumbnail as stored. The CRCs after the fixed fields are not: they
    /// describe bytes the seal covers anyway, and the payload's is computed over the sealed
    /// payload.
    pub(crate) fn seal_associated_data(&self, meta: &[u8], thumbnail: &[u8]) -> Vec<u8> {
        [&self.to_bytes()[..SEALED_FIELDS], meta, thumbnail].concat()
    }

    /// Total length of the file this header describes.
    pub fn file_len(&self) -> u64 {
        self.payload_offset() + u64::from(self.payload_len)
    }

    /// The bytes the file decodes to: its metadata, its thumbnail and its payload
    /// decompressed (or as stored, if longer). What a read's [`Budget`](super::Budget) is
    /// sized from, and what [`Limits::check_header`](super::Limits::check_header) holds to
    /// [`MAX_EXPANSION`](super::MAX_EXPANSION) bytes per byte of the file.
    pub fn decoded_len(&self) -> u64 {
        u64::from(self.meta_len)
            + u64::from(self.thumbnail_len)
            + u64::from(self.payload_uncompressed_len).max(self.payload_len.into())
    }

    /// Serialises the header, computing its own checksum.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut bytes = [0u8; HEADER_LEN];
        bytes[0..4].copy_from_slice(&MAGIC);
        bytes[4..6].copy_from_slice(&self.version.to_le_bytes());
        bytes[6] = self.compression.codec_byte();
        bytes[7] = flags_of(self.version);
        bytes[8..12].copy_from_slice(&self.meta_len.to_le_bytes());
        bytes[12..16].copy_from_slice(&self.thumbnail_len.to_le_bytes());
        bytes[16..20].copy_from_slice(&self.payload_len.to_le_bytes());
        bytes[20..24].copy_from_slice(&self.payload_uncompressed_len.to_le_bytes());
        bytes[24..28].copy_from_slice(&self.meta_crc.to_le_bytes());
        bytes[28..32].copy_from_slice(&self.thumbnail_crc.to_le_bytes());
        bytes[32..36].copy_from_slice(&self.payload_crc.to_le_bytes());
        let crc = crc32fast::hash(&bytes[..HEADER_CRC_COVERS]);
        bytes[36..40].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Parses and verifies a header: magic, then header checksum, then version, then codec and
    /// flags. Lengths are checked against limits separately by [`Limits::check_header`].
    ///
    /// The checksum is verified before the version is trusted, so a damaged version field (say
    /// one flipped bit turning version 1 into 9) reads as a damaged file, not as a save from a
    /// newer format. That is sound because every version keeps the checksum where version 1 has
    /// it (see "What every version keeps" in the [module docs](super)).
    ///
    /// [`Limits::check_header`]: super::Limits::check_header
    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Result<Self, FormatError> {
        let magic: [u8; 4] = field(bytes, 0);
        if magic != MAGIC {
            return Err(FormatError::NotASaveFile {
                found: magic,
                expected: MAGIC,
            });
        }
        let version = u16::from_le_bytes(field(bytes, 4));
        // Version 0 exists in no format, whatever the checksum says.
        if version == 0 {
            return Err(FormatError::UnknownVersion { found: version });
        }
        verify_header_crc(bytes)?;
        if version > FORMAT_VERSION {
            return Err(FormatError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let compression = Compression::from_codec_byte(bytes[6])?;
        if bytes[7] != flags_of(version) {
            return Err(FormatError::UnknownFlags(bytes[7]));
        }
        let u32_at = |offset| u32::from_le_bytes(field(bytes, offset));
        Ok(Header {
            version,
            compression,
            meta_len: u32_at(8),
            thumbnail_len: u32_at(12),
            payload_len: u32_at(16),
            payload_uncompressed_len: u32_at(20),
            meta_crc: u32_at(24),
            thumbnail_crc: u32_at(28),
            payload_crc: u32_at(32),
        })
    }
}

/// Bytes of the header a seal authenticates (see [`Header::seal_associated_data`]).
pub(crate) const SEALED_FIELDS: usize = 24;

/// The flags byte of a version: none in versions 1 and 2, "sealed" in version 3. A file whose
/// flags differ is refused as [`FormatError::UnknownFlags`].
fn flags_of(version: u16) -> u8 {
    if version >= SEALED_VERSION {
        FLAG_SEALED
    } else {
        0
    }
}

/// Checks the CRC-32 at bytes `36..40` against bytes `0..36`: the part of the header every
/// format version keeps, so it can be checked before the version is known to be readable.
fn verify_header_crc(bytes: &[u8; HEADER_LEN]) -> Result<(), FormatError> {
    let stored = u32::from_le_bytes(field(bytes, HEADER_CRC_COVERS));
    let computed = crc32fast::hash(&bytes[..HEADER_CRC_COVERS]);
    if stored == computed {
        Ok(())
    } else {
        Err(FormatError::ChecksumMismatch {
            section: Section::Header,
            stored,
            computed,
        })
    }
}

/// Copies `N` bytes at `offset` out of the header (offsets are compile-time constants below 40).
fn field<const N: usize>(bytes: &[u8; HEADER_LEN], offset: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[offset..offset + N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            version: FORMAT_VERSION,
            compression: Compression::Lz4,
            meta_len: 10,
            thumbnail_len: 0,
            payload_len: 20,
            payload_uncompressed_len: 30,
            meta_crc: 1,
            thumbnail_crc: 0,
            payload_crc: 3,
        }
    }

    #[test]
    fn header_round_trips() {
        let header = sample();
        assert_eq!(Header::parse(&header.to_bytes()).unwrap(), header);
        assert_eq!(header.file_len(), 40 + 10 + 20);
    }

    #[test]
    fn unknown_flags_and_codecs_are_refused() {
        let mut bytes = sample().to_bytes();
        bytes[7] = 0x80;
        let crc = crc32fast::hash(&bytes[..36]);
        bytes[36..40].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            Header::parse(&bytes),
            Err(FormatError::UnknownFlags(0x80))
        ));

        bytes[7] = 0;
        bytes[6] = 7;
        let crc = crc32fast::hash(&bytes[..36]);
        bytes[36..40].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            Header::parse(&bytes),
            Err(FormatError::UnknownCodec { byte: 7, .. })
        ));
    }

    /// Rewrites the header checksum, as a writer of that header would have.
    fn with_fresh_crc(mut bytes: [u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
        let crc = crc32fast::hash(&bytes[..HEADER_CRC_COVERS]);
        bytes[36..40].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn version_3_is_sealed_and_must_say_so_in_its_flags() {
        let sealed = Header {
            version: SEALED_VERSION,
            ..sample()
        };
        let bytes = sealed.to_bytes();
        assert_eq!(bytes[7], FLAG_SEALED);
        assert!(Header::parse(&bytes).unwrap().is_sealed());
        assert!(!Header::parse(&sample_v2().to_bytes()).unwrap().is_sealed());

        // Version 3 without the flag, and version 2 with it: neither was ever written.
        let mut unflagged = bytes;
        unflagged[7] = 0;
        let mut flagged_v2 = sample_v2().to_bytes();
        flagged_v2[7] = FLAG_SEALED;
        for (bytes, flags) in [(unflagged, 0), (flagged_v2, FLAG_SEALED)] {
            assert!(matches!(
                Header::parse(&with_fresh_crc(bytes)),
                Err(FormatError::UnknownFlags(found)) if found == flags
            ));
        }
    }

    fn sample_v2() -> Header {
        Header {
            version: 2,
            ..sample()
        }
    }

    #[test]
    fn a_damaged_version_field_is_a_checksum_error_not_a_newer_version() {
        for bit in 0..16 {
            let mut bytes = sample().to_bytes();
            bytes[4 + bit / 8] ^= 1 << (bit % 8);
            let found = u16::from_le_bytes([bytes[4], bytes[5]]);
            let error = Header::parse(&bytes).unwrap_err();
            match found {
                0 => assert!(matches!(error, FormatError::UnknownVersion { found: 0 })),
                _ => assert!(
                    matches!(
                        error,
                        FormatError::ChecksumMismatch {
                            section: Section::Header,
                            ..
                        }
                    ),
                    "version {found}: {error}"
                ),
            }
        }
    }

    #[test]
    fn a_newer_version_with_an_intact_checksum_is_refused_as_newer() {
        for version in [FORMAT_VERSION + 1, 9, u16::MAX] {
            let mut bytes = sample().to_bytes();
            bytes[4..6].copy_from_slice(&version.to_le_bytes());
            // Whatever a newer version puts in bytes 6..36, only its checksum is interpreted.
            bytes[6..36].fill(0xA5);
            assert!(matches!(
                Header::parse(&with_fresh_crc(bytes)),
                Err(FormatError::NewerVersion { found, supported: FORMAT_VERSION }) if found == version
            ));
        }
    }

    #[test]
    fn version_zero_is_unknown() {
        let mut bytes = sample().to_bytes();
        bytes[4] = 0;
        assert!(matches!(
            Header::parse(&bytes),
            Err(FormatError::UnknownVersion { found: 0 })
        ));
    }
}
