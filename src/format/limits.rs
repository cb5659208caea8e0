//! Size limits checked before any buffer is allocated.

use super::error::{FormatError, Section};
use super::header::{Compression, HEADER_LEN, Header};

/// The largest expansion an LZ4 block can achieve: one token byte followed by run-length bytes
/// of 255 each, so no LZ4 data expands more than 255 times.
pub const LZ4_MAX_RATIO: u64 = 255;

/// Maximum section sizes a reader accepts (and a writer produces).
///
/// Every length in a header is checked against these limits, and the payload's uncompressed
/// length against what its codec can produce, **before** a buffer of that size is allocated.
///
/// ```
/// use bevy_keepsake::format::Limits;
///
/// let limits = Limits { max_payload_uncompressed: 64 << 20, ..Limits::default() };
/// assert_eq!(limits.max_meta, Limits::default().max_meta);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest decompressed payload (default 256 MiB).
    pub max_payload_uncompressed: u32,
    /// Largest metadata section (default 1 MiB).
    pub max_meta: u32,
    /// Largest thumbnail (default 8 MiB).
    pub max_thumbnail: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_payload_uncompressed: 256 << 20,
            max_meta: 1 << 20,
            max_thumbnail: 8 << 20,
        }
    }
}

impl Limits {
    /// The largest file these limits allow: header, metadata, thumbnail and the largest
    /// compressed form of the largest payload. Readers cap what they read at this.
    pub fn max_file_len(&self) -> u64 {
        let payload =
            lz4_flex::block::get_maximum_output_size(self.max_payload_uncompressed as usize);
        HEADER_LEN as u64
            + u64::from(self.max_meta)
            + u64::from(self.max_thumbnail)
            + payload as u64
    }

    /// Checks every length a header announces against these limits and against what the codec
    /// can physically produce.
    pub fn check_header(&self, header: &Header) -> Result<(), FormatError> {
        check(Section::Metadata, header.meta_len, self.max_meta)?;
        check(Section::Thumbnail, header.thumbnail_len, self.max_thumbnail)?;
        check(
            Section::Payload,
            header.payload_uncompressed_len,
            self.max_payload_uncompressed,
        )?;
        check_codec_sizes(
            header.compression,
            header.payload_len,
            header.payload_uncompressed_len,
        )
    }
}

/// Refuses a section longer than its limit.
pub(crate) fn check(section: Section, size: u32, limit: u32) -> Result<(), FormatError> {
    if size > limit {
        return Err(FormatError::SizeLimit {
            section,
            size: size.into(),
            limit: limit.into(),
        });
    }
    Ok(())
}

/// Refuses stored/uncompressed size pairs the codec cannot produce.
fn check_codec_sizes(
    compression: Compression,
    stored: u32,
    uncompressed: u32,
) -> Result<(), FormatError> {
    let (stored, uncompressed) = (u64::from(stored), u64::from(uncompressed));
    let plausible = match compression {
        Compression::None => stored == uncompressed,
        Compression::Lz4 => {
            let max_stored = lz4_flex::block::get_maximum_output_size(uncompressed as usize) as u64;
            stored >= 1 && uncompressed <= stored * LZ4_MAX_RATIO && stored <= max_stored
        }
    };
    if plausible {
        Ok(())
    } else {
        Err(FormatError::ImplausibleSize {
            stored,
            uncompressed,
            codec: compression.name(),
        })
    }
}
