//! Reading one save file end to end and saying where it is damaged.
//!
//! Every check the game makes when it loads, in the same order: header, section lengths against
//! the [`DecodeOptions`]' limits, metadata CRC and postcard, thumbnail CRC, payload CRC (format
//! version 2: the chunk table's CRC, then each chunk's), decompression, postcard,
//! then the `ecs_blob`: its hash against `state_hash` and its table (see
//! [`blob::inspect`]). The first failure is the file's damage; the per-section CRCs are
//! computed independently so a report shows every damaged section, not only the first.
//!
//! A sealed file (format version 3) read without a key (`--key-file` or `KEEPSAKE_KEY`) is checked as far as it can be: its
//! header, and each section's CRC (the payload's over the sealed bytes); its seal and its
//! payload's content are not ([`Seal::Unchecked`]).

use crate::text;
use keepsake_core::blob::{self, BlobError, BlobTable};
use keepsake_core::format::{
    self, DecodeOptions, DecodedSave, FormatError, HEADER_LEN, Header, SaveMeta,
};
use keepsake_core::store::OsFileSystem;
use serde::Serialize;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Where a file is damaged and why.
#[derive(Clone, Debug, Serialize)]
pub struct Damage {
    /// `file`, `header`, `metadata`, `thumbnail`, `payload`, `seal` or `ecs_blob`.
    pub section: &'static str,
    pub message: String,
}

impl Damage {
    fn new(section: &'static str, message: impl ToString) -> Self {
        Damage {
            section,
            message: message.to_string(),
        }
    }

    fn from_format(error: &FormatError) -> Self {
        Damage::new(format_section(error), error)
    }
}

/// `payload: <the error, on one line>`.
impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.section, text::clean(&self.message))
    }
}

/// One section's stored and recomputed CRC.
#[derive(Clone, Debug, Serialize)]
pub struct SectionCheck {
    pub name: &'static str,
    pub offset: u64,
    pub length: u32,
    pub crc_stored: u32,
    /// `None` when the file ends before the section does.
    pub crc_computed: Option<u32>,
}

impl SectionCheck {
    pub fn crc_ok(&self) -> bool {
        self.crc_computed == Some(self.crc_stored)
    }
}

/// The chunks of a version-2 payload, each checked against its CRC.
#[derive(Clone, Debug, Serialize)]
pub struct ChunkChecks {
    pub chunks: usize,
    /// How many are stored compressed (the others as is).
    pub compressed: usize,
    /// File offset of the first chunk.
    pub offset: u64,
    pub stored_bytes: u64,
    pub uncompressed_bytes: u64,
    /// The chunks whose CRC does not match, by index from 0.
    pub damaged: Vec<usize>,
}

/// Whether a file is sealed, and whether its seal was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seal {
    /// Not sealed (format versions 1 and 2), or not known (the header is damaged).
    None,
    /// Sealed, and the seal was checked with the key (see the damage for the outcome).
    Checked,
    /// Sealed, read without a key: the payload was not opened.
    Unchecked,
}

impl Seal {
    /// What the reports say about a sealed file (`None` for an unsealed one: nothing to say).
    pub fn note(self) -> Option<&'static str> {
        match self {
            Seal::None => None,
            Seal::Checked => Some("sealed, seal checked with the seal key"),
            Seal::Unchecked => Some(
                "sealed, seal not checked (pass --key-file or set KEEPSAKE_KEY to open the payload)",
            ),
        }
    }
}

/// What `dump` and `diff` say of a sealed file read without a key.
pub fn needs_key(path: &Path) -> String {
    format!(
        "{} is a sealed save: its values are encrypted under the game's seal key; pass --key-file \
         <a file holding the key> or set KEEPSAKE_KEY (its header and metadata read without it: \
         see `keepsake inspect`)",
        path.display()
    )
}

/// Everything learned about one file.
pub struct Examined {
    /// Whether the file is sealed and its seal was checked.
    pub seal: Seal,
    pub file_len: u64,
    /// The verified header, if it is intact.
    pub header: Option<Header>,
    pub sections: Vec<SectionCheck>,
    /// A version-2 file's chunks, when its chunk table is intact.
    pub chunks: Option<ChunkChecks>,
    /// The metadata, if its section is intact (with the thumbnail when the whole file decoded).
    pub meta: Option<SaveMeta>,
    /// The whole save, if it decoded.
    pub save: Option<DecodedSave>,
    /// The first damage found, in reading order; `None` for an intact file.
    pub damage: Option<Damage>,
}

impl Examined {
    /// The blob's table, for a file whose payload decoded.
    pub fn blob_table(&self) -> Option<Result<BlobTable<'_>, BlobError>> {
        self.save
            .as_ref()
            .map(|save| blob::inspect(&save.bundle.world.ecs_blob))
    }

    /// Whether the blob's hash matches the `state_hash` stored beside it.
    pub fn state_hash_ok(&self) -> Option<bool> {
        self.save.as_ref().map(|save| {
            blob::state_hash(&save.bundle.world.ecs_blob) == save.bundle.world.state_hash
        })
    }
}

/// A file could not be read at all (as opposed to read and found damaged).
#[derive(Debug)]
pub struct Unreadable(pub io::Error);

/// Reads and checks `path` completely.
pub fn examine(path: &Path, options: &DecodeOptions) -> Result<Examined, Unreadable> {
    match read_bounded(path, options).map_err(Unreadable)? {
        Contents::Bytes(bytes) => Ok(examine_bytes(&bytes, options)),
        Contents::TooLarge(len) => Ok(Examined {
            seal: Seal::None,
            file_len: len,
            header: None,
            sections: Vec::new(),
            chunks: None,
            meta: None,
            save: None,
            damage: Some(Damage::new(
                "file",
                format!(
                    "it is {len} bytes, more than any save within the size limits can be ({} bytes)",
                    options.limits.max_file_len()
                ),
            )),
        }),
    }
}

/// Checks a save held in memory.
pub fn examine_bytes(bytes: &[u8], options: &DecodeOptions) -> Examined {
    let header = bytes
        .get(..HEADER_LEN)
        .map(|h| Header::parse(h.try_into().expect("HEADER_LEN bytes")));
    let header = match header {
        Some(Ok(header)) => Some(header),
        _ => None,
    };
    let sections = header
        .map(|h| section_checks(&h, bytes))
        .unwrap_or_default();
    let summary = format::read_summary(&mut &bytes[..], options);
    let (seal, save, damage) = match format::decode(bytes, options) {
        Ok(save) => {
            let damage = blob_damage(&save);
            (seal_of(header), Some(save), damage)
        }
        Err(FormatError::SealedNeedsKey) => {
            let damage = keyless_damage(summary.as_ref().err(), &sections);
            (Seal::Unchecked, None, damage)
        }
        Err(error) => (seal_of(header), None, Some(Damage::from_format(&error))),
    };
    let meta = summary.ok().map(|summary| summary.meta);
    let meta = save.as_ref().map(|s| s.meta.clone()).or(meta);
    let chunks = chunk_checks(bytes, header, save.is_some(), options);
    Examined {
        seal,
        file_len: bytes.len() as u64,
        header,
        sections,
        chunks,
        meta,
        save,
        damage,
    }
}

fn seal_of(header: Option<Header>) -> Seal {
    match header {
        Some(header) if header.is_sealed() => Seal::Checked,
        _ => Seal::None,
    }
}

/// The damage of a sealed file read without its key: its metadata's (the summary's error, which
/// covers the header too), then the first section whose CRC does not match.
fn keyless_damage(summary: Option<&FormatError>, sections: &[SectionCheck]) -> Option<Damage> {
    if let Some(error) = summary {
        return Some(Damage::from_format(error));
    }
    let damaged = sections.iter().find(|section| !section.crc_ok())?;
    let message = match damaged.crc_computed {
        None => "the file ends before this section does".to_owned(),
        Some(computed) => format!(
            "checksum mismatch: stored {:#010X}, computed {computed:#010X}; the file is damaged",
            damaged.crc_stored
        ),
    };
    let section = if damaged.name == "thumbnail" {
        "thumbnail"
    } else {
        "payload"
    };
    Some(Damage::new(section, message))
}

fn blob_damage(save: &DecodedSave) -> Option<Damage> {
    let world = &save.bundle.world;
    let computed = blob::state_hash(&world.ecs_blob);
    if computed != world.state_hash {
        return Some(Damage::new(
            "ecs_blob",
            BlobError::HashMismatch {
                stored: world.state_hash,
                computed,
            },
        ));
    }
    blob::inspect(&world.ecs_blob)
        .err()
        .map(|error| Damage::new("ecs_blob", error))
}

/// Each chunk of a version-2 file checked against its CRC, when the chunk table is intact. A
/// sealed file's chunks are encrypted in the file: they are listed once the whole file decoded
/// (which checked each chunk's CRC after opening the seal), not otherwise.
fn chunk_checks(
    bytes: &[u8],
    header: Option<Header>,
    decoded: bool,
    options: &DecodeOptions,
) -> Option<ChunkChecks> {
    let sealed = header?.is_sealed();
    if sealed && !decoded {
        return None;
    }
    let table = format::read_chunk_table(bytes, options).ok()??;
    // The table was checked against the file's length: every chunk lies within `bytes`.
    let damaged = table
        .with_offsets()
        .enumerate()
        .filter(|(_, (offset, chunk))| {
            let start = *offset as usize;
            !sealed
                && crc32fast::hash(&bytes[start..start + chunk.stored_len as usize]) != chunk.crc
        })
        .map(|(index, _)| index)
        .collect();
    Some(ChunkChecks {
        chunks: table.chunks.len(),
        compressed: table.compressed(),
        offset: table.data_offset,
        stored_bytes: table.chunks.iter().map(|c| u64::from(c.stored_len)).sum(),
        uncompressed_bytes: table
            .chunks
            .iter()
            .map(|c| u64::from(c.uncompressed_len))
            .sum(),
        damaged,
    })
}

fn section_checks(header: &Header, bytes: &[u8]) -> Vec<SectionCheck> {
    let check = |name, offset: u64, length: u32, crc_stored| {
        let end = offset + u64::from(length);
        let crc_computed = (end <= bytes.len() as u64)
            .then(|| crc32fast::hash(&bytes[offset as usize..end as usize]));
        SectionCheck {
            name,
            offset,
            length,
            crc_stored,
            crc_computed,
        }
    };
    vec![
        check(
            "metadata",
            header.meta_offset(),
            header.meta_len,
            header.meta_crc,
        ),
        check(
            "thumbnail",
            header.thumbnail_offset(),
            header.thumbnail_len,
            header.thumbnail_crc,
        ),
        match header.version {
            1 => check(
                "payload",
                header.payload_offset(),
                header.payload_len,
                header.payload_crc,
            ),
            _ if header.is_sealed() => check(
                "sealed payload",
                header.payload_offset(),
                header.payload_len,
                header.payload_crc,
            ),
            _ => check(
                "chunk table",
                header.payload_offset(),
                format::declared_table_len(header, bytes),
                header.payload_crc,
            ),
        },
    ]
}

/// The section a format error is about.
pub fn format_section(error: &FormatError) -> &'static str {
    use format::Section;
    let name = |section: &Section| match section {
        Section::Header => "header",
        Section::Metadata => "metadata",
        Section::Thumbnail => "thumbnail",
        Section::Payload | Section::ChunkTable => "payload",
    };
    match error {
        FormatError::Truncated { section, .. }
        | FormatError::ChecksumMismatch { section, .. }
        | FormatError::SizeLimit { section, .. }
        | FormatError::Decode { section, .. }
        | FormatError::UnusedBytes { section, .. } => name(section),
        FormatError::NotASaveFile { .. }
        | FormatError::NewerVersion { .. }
        | FormatError::UnknownVersion { .. }
        | FormatError::UnknownCodec { .. }
        | FormatError::UnknownFlags(_)
        | FormatError::ImplausibleSize { .. } => "header",
        FormatError::Decompress(_)
        | FormatError::InvalidChunkTable { .. }
        | FormatError::ChunkChecksumMismatch { .. }
        | FormatError::ChunkDecompress { .. } => "payload",
        FormatError::SealBroken { .. }
        | FormatError::SealedNeedsKey
        | FormatError::UnsealedRefused => "seal",
        _ => "file",
    }
}

enum Contents {
    Bytes(Vec<u8>),
    TooLarge(u64),
}

/// Reads a whole file unless it is larger than any save the limits allow (checked before
/// reading, and again while reading, in case it grows).
fn read_bounded(path: &Path, options: &DecodeOptions) -> io::Result<Contents> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    let max = options.limits.max_file_len();
    if len > max {
        return Ok(Contents::TooLarge(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Ok(Contents::TooLarge(bytes.len() as u64));
    }
    Ok(Contents::Bytes(bytes))
}

/// Opens a regular file; anything else (a FIFO would block the open, a device never ends) is
/// refused without blocking, as the store refuses it.
pub fn open_regular(path: &Path) -> io::Result<File> {
    OsFileSystem::open_regular(path)
}
