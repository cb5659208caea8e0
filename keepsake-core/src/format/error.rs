//! The one error type of the format layer.

use std::fmt;
use std::io;

/// A part of a save file, named in errors so a developer knows where the damage is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The fixed-size header at the start of the file.
    Header,
    /// The metadata section (slot, time, title, …).
    Metadata,
    /// The optional thumbnail section.
    Thumbnail,
    /// The (usually compressed) save bundle.
    Payload,
    /// The chunk table at the start of a version-2 payload (its CRC is the header's payload
    /// CRC).
    ChunkTable,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::Header => "header",
            Section::Metadata => "metadata",
            Section::Thumbnail => "thumbnail",
            Section::Payload => "payload",
            Section::ChunkTable => "payload's chunk table",
        })
    }
}

/// Everything that can go wrong while encoding or decoding a save file.
///
/// Every variant describes the problem in words a game developer can act on; none of them is
/// produced by a panic, and none requires allocating more than the input justifies.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// Reading from or writing to the underlying reader or writer failed.
    #[error("could not {action} save data: {source}")]
    Io {
        /// What was being done ("read", "write").
        action: &'static str,
        /// The operating-system error.
        #[source]
        source: io::Error,
    },

    /// The file does not start with the keepsake magic bytes.
    #[error(
        "not a keepsake save file: it starts with {found:02X?} instead of the magic bytes {expected:02X?} (\"KPSK\")"
    )]
    NotASaveFile {
        /// The first four bytes found.
        found: [u8; 4],
        /// The magic bytes every save file starts with.
        expected: [u8; 4],
    },

    /// The file ends before a section it announces is complete.
    #[error(
        "save file is truncated in the {section}: it should reach byte {expected_end} but ends at byte {actual_end}"
    )]
    Truncated {
        /// The section that is cut short.
        section: Section,
        /// The file offset where that section should end.
        expected_end: u64,
        /// The file offset where the data actually ended.
        actual_end: u64,
    },

    /// The file has bytes after its last section.
    #[error(
        "save file has {extra} unexpected bytes after its payload (expected {expected_len} bytes in total)"
    )]
    TrailingBytes {
        /// How many bytes follow the payload.
        extra: u64,
        /// The total size the header announces.
        expected_len: u64,
    },

    /// The file was written by a newer version of the format than this build can read.
    #[error(
        "save file uses format version {found}, newer than the version {supported} this build reads; update the game to load it (the file was left untouched)"
    )]
    NewerVersion {
        /// The version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },

    /// The file announces a format version that never existed.
    #[error(
        "save file announces format version {found}, which does not exist (versions start at 1)"
    )]
    UnknownVersion {
        /// The version in the file.
        found: u16,
    },

    /// A stored checksum does not match the data.
    #[error(
        "checksum mismatch in the {section}: stored {stored:#010X}, computed {computed:#010X}; the file is damaged"
    )]
    ChecksumMismatch {
        /// The damaged section.
        section: Section,
        /// The CRC32 stored in the header.
        stored: u32,
        /// The CRC32 of the bytes actually present.
        computed: u32,
    },

    /// The codec byte names no known compression.
    #[error("save file uses unknown compression codec {byte}; this build knows {known}")]
    UnknownCodec {
        /// The codec byte in the header.
        byte: u8,
        /// The codecs this build reads, e.g. "0 (none) and 1 (LZ4)".
        known: String,
    },

    /// Flag bits are set that this version of the format does not define.
    #[error("save file sets header flags {0:#04X} that this format version does not define")]
    UnknownFlags(u8),

    /// A section is larger than the configured limit.
    #[error(
        "the {section} is {size} bytes, over the limit of {limit} bytes; raise the limit in `Limits` if saves this large are expected"
    )]
    SizeLimit {
        /// The section over its limit.
        section: Section,
        /// The size announced or produced.
        size: u64,
        /// The configured maximum.
        limit: u64,
    },

    /// The file decodes to more than [`MAX_EXPANSION`](super::MAX_EXPANSION) bytes per byte
    /// of the file (and [`BUDGET_BASE`](super::BUDGET_BASE) more): no save this build writes
    /// does, so the file is forged or damaged. Refused from the header, before anything is
    /// allocated.
    #[error(
        "the {section} makes the file decode to {decoded} bytes, more than the {limit} bytes a file of {file_len} bytes may decode to ({per_byte} per byte of the file and {base} more, which no save this build writes exceeds); the file is forged or damaged",
        per_byte = super::MAX_EXPANSION,
        base = super::BUDGET_BASE
    )]
    ExpandsTooFar {
        /// The section that expands (the payload: the others are stored as they are).
        section: Section,
        /// The bytes the header says the file decodes to.
        decoded: u64,
        /// The file's length, as its header gives it.
        file_len: u64,
        /// The most a file of that length may decode to.
        limit: u64,
    },

    /// The announced compressed and uncompressed sizes cannot belong together.
    #[error(
        "the payload announces {uncompressed} bytes uncompressed from {stored} stored bytes, which {codec} cannot produce; the header is forged or damaged"
    )]
    ImplausibleSize {
        /// Bytes stored in the file.
        stored: u64,
        /// Bytes the header says they expand to.
        uncompressed: u64,
        /// The codec's name.
        codec: &'static str,
    },

    /// The payload's codec could not decompress it, or produced the wrong size.
    #[error("payload does not decompress: {0}")]
    Decompress(String),

    /// The chunk table of a version-2 payload contradicts itself or the header.
    #[error("the payload's chunk table is invalid: {problem}; the file is damaged or forged")]
    InvalidChunkTable {
        /// What does not add up, in words.
        problem: String,
    },

    /// A chunk of a version-2 payload does not match its CRC.
    #[error(
        "checksum mismatch in payload chunk {index} (file bytes {offset}..{end}): stored {stored:#010X}, computed {computed:#010X}; the file is damaged"
    )]
    ChunkChecksumMismatch {
        /// The chunk's position in the table, from 0.
        index: usize,
        /// File offset of the chunk's first byte.
        offset: u64,
        /// File offset just past the chunk.
        end: u64,
        /// The CRC-32 in the chunk table.
        stored: u32,
        /// The CRC-32 of the bytes present.
        computed: u32,
    },

    /// A chunk of a version-2 payload passed its CRC but does not decompress to its length.
    #[error("payload chunk {index} (at file byte {offset}) does not decompress: {reason}")]
    ChunkDecompress {
        /// The chunk's position in the table, from 0.
        index: usize,
        /// File offset of the chunk's first byte.
        offset: u64,
        /// The codec's description.
        reason: String,
    },

    /// Postcard could not decode a section.
    #[error("could not decode the {section}: {source}")]
    Decode {
        /// The section being decoded.
        section: Section,
        /// Postcard's description.
        #[source]
        source: postcard::Error,
    },

    /// A decoded section left bytes unused.
    #[error(
        "the {section} decodes with {extra} bytes left over; it was written by incompatible code"
    )]
    UnusedBytes {
        /// The section.
        section: Section,
        /// How many bytes were not consumed.
        extra: usize,
    },

    /// A sealed file's seal does not verify: it was edited after it was sealed (the payload,
    /// or the header, metadata or thumbnail the seal covers), or sealed with another key.
    #[error(
        "the save's seal is broken: {what}; its payload was not read (a game loads the slot's newest intact backup instead)"
    )]
    SealBroken {
        /// What the seal covers and what may have changed, in words.
        what: &'static str,
    },

    /// A sealed file was read for its payload without a key.
    #[error(
        "the save is sealed (format version 3): its metadata reads without a key but its payload needs the game's seal key; read it with the key the game seals with (`StoreConfig::seal`, `DecodeOptions::seal`)"
    )]
    SealedNeedsKey,

    /// An unsealed file was read by a reader that holds a key and refuses unsealed files.
    #[error(
        "the save is not sealed, and this game accepts only sealed saves; if it was made before the game sealed its saves, allow them with `UnsealedSaves::Accept` (`KeepsakePlugins::unsealed_saves`)"
    )]
    UnsealedRefused,

    /// Sealing was asked for a version-1 payload ([`PayloadLayout::Whole`]), which sealed files
    /// do not use (they are version 3, chunked).
    ///
    /// [`PayloadLayout::Whole`]: super::PayloadLayout::Whole
    #[error(
        "sealed saves are written in format version 3 (a chunked payload); `PayloadLayout::Whole` (version 1) cannot be sealed"
    )]
    SealNeedsChunkedLayout,

    /// A section asks for more memory than the file may cost: its counts or lengths are
    /// forged or damaged (see [`Budget`](super::Budget)).
    #[error("the save file's {0}")]
    OverBudget(#[from] super::budget::OverBudget),

    /// Postcard could not encode a value (only on encode).
    #[error("could not encode the {section}: {source}")]
    Encode {
        /// The section being encoded.
        section: Section,
        /// Postcard's description.
        #[source]
        source: postcard::Error,
    },
}

impl FormatError {
    pub(crate) fn read(source: io::Error) -> Self {
        FormatError::Io {
            action: "read",
            source,
        }
    }

    pub(crate) fn write(source: io::Error) -> Self {
        FormatError::Io {
            action: "write",
            source,
        }
    }
}
