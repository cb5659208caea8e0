//! Size limits checked before any buffer is allocated, and the memory budget they give a read.

use super::budget::{BUDGET_BASE, BUDGET_PER_INPUT_BYTE, Budget, max_decoded_len};
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::{HEADER_LEN, Header};
use super::seal::SEAL_OVERHEAD;
use super::table::{check_header_sizes, max_table_len};

/// Maximum section sizes a reader accepts (and a writer produces).
///
/// Every length in a header is checked against these limits, and the payload's uncompressed
/// length against what its codec can produce, **before** a buffer of that size is allocated.
///
/// ```
/// use keepsake_core::format::Limits;
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
    /// stored form, under any codec, of the largest payload with the largest chunk table (and a
    /// seal's nonce and tag). Readers cap what they read at this.
    pub fn max_file_len(&self) -> u64 {
        let largest = u64::from(self.max_payload_uncompressed);
        let payload = Compression::max_stored_len_of_any(largest)
            + max_table_len(largest)
            + SEAL_OVERHEAD as u64;
        HEADER_LEN as u64 + u64::from(self.max_meta) + u64::from(self.max_thumbnail) + payload
    }

    /// The memory budget of reading an input of `input_len` (decompressed) bytes:
    /// [`BUDGET_PER_INPUT_BYTE`] per byte plus [`BUDGET_BASE`], the input counted at most as
    /// large as the largest file contents these limits allow (metadata, thumbnail and payload),
    /// so no read under these limits may hold more than that, whatever it claims.
    ///
    /// ```
    /// use keepsake_core::format::{BUDGET_BASE, Limits};
    ///
    /// let limits = Limits { max_payload_uncompressed: 1000, max_meta: 0, max_thumbnail: 0 };
    /// assert_eq!(limits.budget(10).limit(), 40 + BUDGET_BASE);
    /// assert_eq!(limits.budget(1 << 40).limit(), 4000 + BUDGET_BASE);
    /// ```
    pub fn budget(&self, input_len: u64) -> Budget {
        let largest = u64::from(self.max_payload_uncompressed)
            + u64::from(self.max_meta)
            + u64::from(self.max_thumbnail);
        let counted = input_len.min(largest);
        Budget::new(input_len, counted * BUDGET_PER_INPUT_BYTE + BUDGET_BASE)
    }

    /// Checks every length a header announces against these limits, against what the codec
    /// can physically produce, and what the file decodes to against its own length
    /// ([`MAX_EXPANSION`](super::MAX_EXPANSION) bytes per byte of the file and [`BUDGET_BASE`]
    /// more).
    pub fn check_header(&self, header: &Header) -> Result<(), FormatError> {
        check(Section::Metadata, header.meta_len, self.max_meta)?;
        check(Section::Thumbnail, header.thumbnail_len, self.max_thumbnail)?;
        check(
            Section::Payload,
            header.payload_uncompressed_len,
            self.max_payload_uncompressed,
        )?;
        match header.version {
            1 => header
                .compression
                .check_sizes(header.payload_len, header.payload_uncompressed_len)?,
            _ => check_header_sizes(header)?,
        }
        // Last: the more precise refusals above name what is impossible, this one what is
        // merely more than any save this build writes.
        check_expansion(header)
    }
}

/// Refuses a header whose file would decode to more than [`max_decoded_len`] of its length.
pub(crate) fn check_expansion(header: &Header) -> Result<(), FormatError> {
    let (decoded, file_len) = (header.decoded_len(), header.file_len());
    let limit = max_decoded_len(file_len);
    if decoded > limit {
        return Err(FormatError::ExpandsTooFar {
            section: Section::Payload,
            decoded,
            file_len,
            limit,
        });
    }
    Ok(())
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

// Here rather than beside `Budget`, so that `budget.rs` does not import this file back.
impl Budget {
    /// The budget of reading an input of `input_len` bytes under the default [`Limits`]: what
    /// readers that take no limits (a world blob's, a layout's, a stored value's) use.
    pub fn for_input(input_len: usize) -> Budget {
        Limits::default().budget(input_len as u64)
    }
}
