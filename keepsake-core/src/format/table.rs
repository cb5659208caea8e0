//! The chunk table of format version 2: how the payload is split, each chunk's codec, lengths
//! and CRC-32, and every check a reader makes of it before it allocates or decompresses.

use super::budget::Budget;
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::Header;
use super::seal::SEAL_OVERHEAD;

/// Bytes of the chunk count that starts a version-2 payload.
pub(crate) const COUNT_LEN: usize = 4;
/// Bytes of one chunk table entry.
pub(crate) const ENTRY_LEN: usize = 13;
/// Readers accept at most one chunk per this many uncompressed bytes (plus [`SPARE_CHUNKS`]),
/// so a table can never be large next to the payload it describes. Writers cut chunks of
/// [`MIN_CHUNK`](super::chunk::MIN_CHUNK) bytes and more, except at the ends of the few
/// sections of the bundle.
const BYTES_PER_CHUNK: u64 = 4096;
const SPARE_CHUNKS: u64 = 16;

/// One chunk of a version-2 payload, as its table entry describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkEntry {
    /// Bytes once decompressed (never `0`).
    pub uncompressed_len: u32,
    /// Bytes in the file.
    pub stored_len: u32,
    /// How it is stored: [`Compression::None`] (as is) or the header's codec.
    pub codec: Compression,
    /// CRC-32 of the stored bytes.
    pub crc: u32,
}

/// The chunk table of a version-2 payload, read and verified (see
/// [`read_chunk_table`](super::read_chunk_table)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkTable {
    /// The chunks in payload order.
    pub chunks: Vec<ChunkEntry>,
    /// File offset of the first chunk's bytes (they follow one another).
    pub data_offset: u64,
}

impl ChunkTable {
    /// How many chunks are stored compressed.
    pub fn compressed(&self) -> usize {
        self.chunks
            .iter()
            .filter(|chunk| chunk.codec != Compression::None)
            .count()
    }

    /// Bytes of the table itself (count and entries).
    pub fn table_len(&self) -> usize {
        table_len(self.chunks.len())
    }

    /// Each chunk with the file offset of its bytes.
    pub fn with_offsets(&self) -> impl Iterator<Item = (u64, &ChunkEntry)> {
        self.chunks.iter().scan(self.data_offset, |offset, chunk| {
            let at = *offset;
            *offset += u64::from(chunk.stored_len);
            Some((at, chunk))
        })
    }
}

/// Bytes of a table of `chunks` entries.
pub(crate) fn table_len(chunks: usize) -> usize {
    COUNT_LEN + chunks * ENTRY_LEN
}

/// The bytes a version-2 file's chunk table declares from its entry count (which its payload
/// CRC covers), capped at the payload's length: for a reader that checks sections before it
/// trusts the table (the `keepsake` command line's section view). Zero when the file is too
/// short to hold the count.
pub fn declared_table_len(header: &Header, file: &[u8]) -> u32 {
    let at = header.payload_offset() as usize;
    let count = file
        .get(at..at + COUNT_LEN)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let len = COUNT_LEN as u64 + ENTRY_LEN as u64 * u64::from(count);
    len.min(u64::from(header.payload_len)) as u32
}

/// The most chunks a payload of `uncompressed` bytes may have.
fn max_chunks(uncompressed: u64) -> u64 {
    uncompressed / BYTES_PER_CHUNK + SPARE_CHUNKS
}

/// The largest table a payload of `uncompressed` bytes may have.
pub(crate) fn max_table_len(uncompressed: u64) -> u64 {
    COUNT_LEN as u64 + ENTRY_LEN as u64 * max_chunks(uncompressed)
}

/// Serialises a table.
pub(crate) fn write_table(chunks: &[ChunkEntry]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(table_len(chunks.len()));
    bytes.extend_from_slice(&(chunks.len() as u32).to_le_bytes());
    for chunk in chunks {
        bytes.extend_from_slice(&chunk.uncompressed_len.to_le_bytes());
        bytes.extend_from_slice(&chunk.stored_len.to_le_bytes());
        bytes.push(chunk.codec.codec_byte());
        bytes.extend_from_slice(&chunk.crc.to_le_bytes());
    }
    bytes
}

/// How a chunk table's bytes are known to be intact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableCheck {
    /// Version 2: by this CRC-32 (the header's payload CRC).
    Crc(u32),
    /// Version 3: the seal authenticated the whole payload, table included.
    Sealed,
}

impl TableCheck {
    /// How the table of the file with `header` is checked once its payload is readable.
    pub(crate) fn of(header: &Header) -> Self {
        if header.is_sealed() {
            TableCheck::Sealed
        } else {
            TableCheck::Crc(header.payload_crc)
        }
    }
}

/// Checks the payload lengths a chunked (version 2 or 3) header announces: the uncompressed
/// length within what the stored bytes can expand to under any codec, the stored length within
/// the largest stored form plus the largest table (plus nonce and tag when sealed).
pub(crate) fn check_header_sizes(header: &Header) -> Result<(), FormatError> {
    let overhead = if header.is_sealed() {
        SEAL_OVERHEAD as u64
    } else {
        0
    };
    let implausible = FormatError::ImplausibleSize {
        stored: u64::from(header.payload_len),
        uncompressed: u64::from(header.payload_uncompressed_len),
        codec: "a chunked payload",
    };
    let Some(stored) = u64::from(header.payload_len).checked_sub(overhead) else {
        return Err(implausible);
    };
    let uncompressed = u64::from(header.payload_uncompressed_len);
    let data = stored.saturating_sub(COUNT_LEN as u64);
    let most_stored =
        Compression::max_stored_len_of_any(uncompressed) + max_table_len(uncompressed);
    if stored < COUNT_LEN as u64
        || uncompressed > data * Compression::max_expansion_of_any()
        || stored > most_stored
    {
        return Err(implausible);
    }
    Ok(())
}

/// Reads and verifies the table at the start of `payload` (the version-2 payload: the whole
/// payload section, or a sealed one's opened ciphertext; at file offset `offset`): its CRC
/// (unless the seal vouched for it), its size, every entry's codec and lengths, and that the
/// chunks add up to the header's uncompressed length and fill `payload`. Allocates a
/// [`ChunkEntry`] per entry (16 bytes for its 13), paid from `budget`.
pub(crate) fn read_table(
    header: &Header,
    payload: &[u8],
    offset: u64,
    check: TableCheck,
    budget: &Budget,
) -> Result<ChunkTable, FormatError> {
    read_table_within(header, payload, payload.len(), offset, check, budget)
}

/// [`read_table`] from the payload's first bytes only (`payload`, holding the table whenever
/// it fits in the `payload_len` bytes of the whole payload): for a reader that streams the
/// chunks after it.
pub(crate) fn read_table_within(
    header: &Header,
    payload: &[u8],
    payload_len: usize,
    offset: u64,
    check: TableCheck,
    budget: &Budget,
) -> Result<ChunkTable, FormatError> {
    let count = u32::from_le_bytes(word(payload, 0)?);
    let len = COUNT_LEN as u64 + ENTRY_LEN as u64 * u64::from(count);
    let fits = usize::try_from(len).ok().filter(|&len| len <= payload_len);
    let Some(table) = fits.and_then(|len| payload.get(..len)) else {
        return Err(invalid(format!(
            "its {count} entries need {len} bytes but the payload has {payload_len}"
        )));
    };
    if let TableCheck::Crc(stored) = check {
        let computed = crc32fast::hash(table);
        if computed != stored {
            return Err(FormatError::ChecksumMismatch {
                section: Section::ChunkTable,
                stored,
                computed,
            });
        }
    }
    if u64::from(count) > max_chunks(u64::from(header.payload_uncompressed_len)) {
        return Err(invalid(format!(
            "it announces {count} chunks for {} uncompressed bytes",
            header.payload_uncompressed_len
        )));
    }
    let mut chunks = budget.vec(Section::ChunkTable, count as usize)?;
    for (index, entry) in table[COUNT_LEN..].chunks_exact(ENTRY_LEN).enumerate() {
        chunks.push(parse_entry(header, index, entry)?);
    }
    check_totals(header, &chunks, table.len(), payload_len)?;
    Ok(ChunkTable {
        chunks,
        data_offset: offset + len,
    })
}

fn parse_entry(header: &Header, index: usize, entry: &[u8]) -> Result<ChunkEntry, FormatError> {
    let chunk = ChunkEntry {
        uncompressed_len: u32::from_le_bytes(word(entry, 0)?),
        stored_len: u32::from_le_bytes(word(entry, 4)?),
        codec: Compression::from_codec_byte(entry[8])?,
        crc: u32::from_le_bytes(word(entry, 9)?),
    };
    if chunk.codec != Compression::None && chunk.codec != header.compression {
        return Err(invalid(format!(
            "chunk {index} uses {} but the header names {}",
            chunk.codec.name(),
            header.compression.name()
        )));
    }
    if chunk.uncompressed_len == 0 {
        return Err(invalid(format!("chunk {index} is empty")));
    }
    chunk
        .codec
        .check_sizes(chunk.stored_len, chunk.uncompressed_len)?;
    Ok(chunk)
}

/// The chunks must add up to the header's uncompressed length and fill the `payload` bytes
/// after the `table` exactly.
fn check_totals(
    header: &Header,
    chunks: &[ChunkEntry],
    table: usize,
    payload: usize,
) -> Result<(), FormatError> {
    let uncompressed: u64 = chunks.iter().map(|c| u64::from(c.uncompressed_len)).sum();
    let stored: u64 = chunks.iter().map(|c| u64::from(c.stored_len)).sum();
    let data = (payload - table) as u64;
    if uncompressed != u64::from(header.payload_uncompressed_len) || stored != data {
        return Err(invalid(format!(
            "its chunks hold {uncompressed} bytes from {stored} stored, but the header announces \
             {} from {data}",
            header.payload_uncompressed_len
        )));
    }
    Ok(())
}

fn invalid(problem: String) -> FormatError {
    FormatError::InvalidChunkTable { problem }
}

fn word(bytes: &[u8], at: usize) -> Result<[u8; 4], FormatError> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| invalid(format!("it ends within its first {} bytes", at + 4)))
}
