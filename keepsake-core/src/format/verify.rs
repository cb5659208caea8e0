//! Checking every checksum of a save without decoding its payload: what tells an intact backup
//! from a damaged one (the store's pruning, and the head an import places a save against).
//!
//! A file verifies when its header, metadata and thumbnail check as a load checks them, and its
//! payload does too, short of decompression and decoding:
//!
//! | version | payload checked by |
//! |---------|--------------------|
//! | 1 | the payload CRC |
//! | 2 | the chunk table's CRC and entries, then every chunk's CRC |
//! | 3 (sealed) | the payload CRC over the sealed bytes, with or without the key |
//!
//! A file that verifies can still fail to load, in ways no damage at rest produces: a payload
//! whose checksums match but which does not decompress or decode (the checksums were computed
//! over exactly those bytes by the writer), and a sealed file whose seal does not open (edited
//! with its checksums recomputed, or sealed with another key), which a load refuses.
//!
//! Why the seal is not opened even with the key: pruning verifies every backup at every save,
//! and opening a seal decrypts the whole payload. Measured on the store's 1 MB save with 3
//! backups (`cargo bench --bench store`, `sealed_full_save/1MB`), opening them took the save
//! from 3.2 ms to 7.9 ms, where their CRCs cost what an unsealed save's do. The CRC over the
//! sealed bytes catches every accidental change of them, which is what pruning must tell apart.
//!
//! # Speed
//!
//! One pass through the file, each byte read once and CRC'd once through a 64 KiB buffer
//! (CRC-32 runs at several GB/s with `crc32fast`'s carry-less multiply); nothing is
//! decompressed or decrypted, the payload's postcard is not decoded, and nothing as large as
//! the payload is allocated.

use super::budget::Budget;
use super::decode::{
    DecodeOptions, SaveSummary, decode_meta, read_checked_header, read_section, verify_crc,
};
use super::error::{FormatError, Section};
use super::header::Header;
use super::table::{COUNT_LEN, ENTRY_LEN, TableCheck, read_table_within};
use std::io::{ErrorKind, Read};

/// Bytes read at a time while checksumming.
const BUFFER_LEN: usize = 64 << 10;

/// Reads a whole save from `reader` once and checks every checksum it carries, under the
/// options' limits: the header's, the metadata's, the thumbnail's and the payload's (version 1:
/// its CRC; 2: the chunk table's CRC and entries, then every chunk's CRC; 3: the CRC over the
/// sealed bytes). Returns the header and metadata. The payload is neither decompressed nor
/// decoded, a sealed one not opened (which costs a decryption; a load checks the seal). An
/// unsealed file is refused, as a load refuses it, when the options hold a key and refuse
/// unsealed saves. This is what tells an intact backup from a damaged one.
///
/// ```
/// use keepsake_core::{SlotId, format::{self, DecodeOptions, EncodeOptions, FormatError, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Manual(0));
/// let bundle = SaveBundle::new(WorldState { ecs_blob: vec![7; 10_000], ..Default::default() });
/// let mut bytes = format::encode(&meta, &bundle, &EncodeOptions::default())?.to_vec();
/// let options = DecodeOptions::default();
/// assert_eq!(format::verify_from(&mut &bytes[..], &options)?.meta.save_id, meta.save_id);
///
/// *bytes.last_mut().unwrap() ^= 1;
/// assert!(format::read_summary(&mut &bytes[..], &options).is_ok());
/// assert!(matches!(
///     format::verify_from(&mut &bytes[..], &options),
///     Err(FormatError::ChunkChecksumMismatch { .. })
/// ));
/// # Ok::<(), FormatError>(())
/// ```
pub fn verify_from<R: Read>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<SaveSummary, FormatError> {
    let header = read_checked_header(reader, options)?;
    match options.opening(&header) {
        // A sealed file's bytes are checked against their CRC, key or not.
        Ok(_) | Err(FormatError::SealedNeedsKey) => {}
        Err(error) => return Err(error),
    }
    // What is held at once: the metadata, the thumbnail, the chunk table and one buffer.
    let budget = options.limits.budget(header.file_len());
    budget.charge(Section::Metadata, header.meta_len.into())?;
    budget.charge(Section::Thumbnail, header.thumbnail_len.into())?;
    let meta_bytes = read_section(
        reader,
        header.meta_len,
        Section::Metadata,
        header.meta_offset(),
    )?;
    let thumbnail = read_section(
        reader,
        header.thumbnail_len,
        Section::Thumbnail,
        header.thumbnail_offset(),
    )?;
    let meta = decode_meta(&header, &meta_bytes, &budget)?;
    verify_crc(Section::Thumbnail, header.thumbnail_crc, &thumbnail)?;
    let mut buffer = vec![0u8; BUFFER_LEN];
    if header.version >= 2 && !header.is_sealed() {
        verify_chunks(reader, &header, &mut buffer, &budget)?;
    } else {
        let start = header.payload_offset();
        let crc = crc_next(reader, u64::from(header.payload_len), &mut buffer);
        let computed = whole(crc, &header, Section::Payload, start)?;
        verify_computed(Section::Payload, header.payload_crc, computed)?;
    }
    check_end(reader, &header, &mut buffer)?;
    Ok(SaveSummary { header, meta })
}

/// Reads and checks a version-2 chunk table, then checksums every chunk after it.
fn verify_chunks<R: Read>(
    reader: &mut R,
    header: &Header,
    buffer: &mut [u8],
    budget: &Budget,
) -> Result<(), FormatError> {
    let offset = header.payload_offset();
    let payload_len = u64::from(header.payload_len);
    let count = read_section(reader, COUNT_LEN as u32, Section::ChunkTable, offset)?;
    let entries = u64::from(u32::from_le_bytes([count[0], count[1], count[2], count[3]]));
    // Only what the payload holds is read: a table longer than that is refused by its check.
    let rest = (entries * ENTRY_LEN as u64).min(payload_len.saturating_sub(COUNT_LEN as u64));
    let entry_offset = offset + COUNT_LEN as u64;
    let mut table = count;
    table.extend(read_section(
        reader,
        rest as u32,
        Section::ChunkTable,
        entry_offset,
    )?);
    let check = TableCheck::of(header);
    let table = read_table_within(header, &table, payload_len as usize, offset, check, budget)?;
    for (index, (at, entry)) in table.with_offsets().enumerate() {
        let stored_len = u64::from(entry.stored_len);
        let computed = whole(
            crc_next(reader, stored_len, buffer),
            header,
            Section::Payload,
            at,
        )?;
        if computed != entry.crc {
            return Err(FormatError::ChunkChecksumMismatch {
                index,
                offset: at,
                end: at + stored_len,
                stored: entry.crc,
                computed,
            });
        }
    }
    Ok(())
}

/// The file must end where its header says.
fn check_end<R: Read>(
    reader: &mut R,
    header: &Header,
    buffer: &mut [u8],
) -> Result<(), FormatError> {
    let extra = loop {
        match reader.read(buffer) {
            Ok(extra) => break extra,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(FormatError::read(error)),
        }
    };
    if extra > 0 {
        return Err(FormatError::TrailingBytes {
            extra: extra as u64,
            expected_len: header.file_len(),
        });
    }
    Ok(())
}

/// The CRC-32 of the next `len` bytes of `reader`, read through `buffer`; the inner error is
/// how many bytes there were when the reader ended early.
fn crc_next<R: Read>(
    reader: &mut R,
    len: u64,
    buffer: &mut [u8],
) -> Result<Result<u32, u64>, FormatError> {
    let mut hasher = crc32fast::Hasher::new();
    let mut left = len;
    while left > 0 {
        let want = buffer
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        let read = match reader.read(&mut buffer[..want]) {
            Ok(0) => return Ok(Err(len - left)),
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(FormatError::read(error)),
        };
        hasher.update(&buffer[..read]);
        left -= read as u64;
    }
    Ok(Ok(hasher.finalize()))
}

/// The CRC of a run of bytes starting at file offset `start`, or the truncation that cut it.
fn whole(
    crc: Result<Result<u32, u64>, FormatError>,
    header: &Header,
    section: Section,
    start: u64,
) -> Result<u32, FormatError> {
    crc?.map_err(|read| FormatError::Truncated {
        section,
        expected_end: header.file_len(),
        actual_end: start + read,
    })
}

fn verify_computed(section: Section, stored: u32, computed: u32) -> Result<(), FormatError> {
    if computed == stored {
        return Ok(());
    }
    Err(FormatError::ChecksumMismatch {
        section,
        stored,
        computed,
    })
}
