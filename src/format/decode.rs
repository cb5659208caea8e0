//! Reading save files: header and metadata alone, the thumbnail alone, or everything.
//!
//! Checks run in a fixed order, each before the work it protects: header checksum → lengths
//! against the [`DecodeOptions`]' [`Limits`] → metadata checksum → payload checksum →
//! decompression → postcard.

use super::bundle::{SaveBundle, WorldState};
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::{HEADER_LEN, Header, MAGIC};
use super::limits::Limits;
use super::meta::SaveMeta;
use super::table::{ChunkTable, read_table};
use super::unchunk::join_chunks;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// How every reading function ([`decode`], [`decode_owned`], [`decode_from`], [`read_summary`],
/// [`read_thumbnail`]) reads a file: today the size [`Limits`] it accepts.
///
/// Built with [`DecodeOptions::new`] (or [`Default`]) and its builder methods, so that options
/// added later (such as a key for sealed saves) change no reading function's signature and no
/// caller that does not set them.
///
/// ```
/// use bevy_keepsake::format::{DecodeOptions, Limits};
///
/// let limits = Limits { max_payload_uncompressed: 64 << 20, ..Limits::default() };
/// let options = DecodeOptions::new().limits(limits);
/// assert_eq!(options.limits, limits);
/// assert_eq!(DecodeOptions::default(), DecodeOptions::from(Limits::default()));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// The largest sections accepted, checked before anything is allocated for them.
    pub limits: Limits,
}

impl DecodeOptions {
    /// The default options: [`Limits::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The size limits a file must keep to (default [`Limits::default`]).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

impl From<Limits> for DecodeOptions {
    fn from(limits: Limits) -> Self {
        DecodeOptions::new().limits(limits)
    }
}

/// The header and metadata of a save, read without touching its thumbnail or payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveSummary {
    /// The verified header.
    pub header: Header,
    /// The metadata (its `thumbnail` is `None`: read it with [`read_thumbnail`]).
    pub meta: SaveMeta,
}

/// A fully decoded and verified save file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedSave {
    /// The verified header.
    pub header: Header,
    /// The metadata, with its thumbnail.
    pub meta: SaveMeta,
    /// The payload.
    pub bundle: SaveBundle,
}

/// Reads and verifies the 40-byte header, and nothing more.
pub fn read_header<R: Read>(reader: &mut R) -> Result<Header, FormatError> {
    let bytes = read_section(reader, HEADER_LEN as u32, Section::Header, 0)?;
    parse_header(&bytes)
}

/// Reads the header and the metadata, leaving the thumbnail and payload unread.
///
/// This is what a save menu lists: it reads `40 + meta_len` bytes whatever the payload's size.
///
/// ```
/// use bevy_keepsake::{SlotId, format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Auto(1)).with_title("Mines");
/// let bytes = format::encode(&meta, &SaveBundle::new(WorldState::default()), &EncodeOptions::default())?.to_vec();
/// let summary = format::read_summary(&mut &bytes[..], &DecodeOptions::default())?;
/// assert_eq!(summary.meta.title, "Mines");
/// # Ok::<(), bevy_keepsake::format::FormatError>(())
/// ```
pub fn read_summary<R: Read>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<SaveSummary, FormatError> {
    let header = read_checked_header(reader, options)?;
    let meta_bytes = read_section(
        reader,
        header.meta_len,
        Section::Metadata,
        header.meta_offset(),
    )?;
    let meta = decode_meta(&header, &meta_bytes)?;
    Ok(SaveSummary { header, meta })
}

/// Reads only the thumbnail of a save (seeking past the metadata), or `None` if it has none.
pub fn read_thumbnail<R: Read + Seek>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<Option<Vec<u8>>, FormatError> {
    let header = read_checked_header(reader, options)?;
    if header.thumbnail_len == 0 {
        return Ok(None);
    }
    reader
        .seek(SeekFrom::Start(header.thumbnail_offset()))
        .map_err(FormatError::read)?;
    let thumbnail = read_section(
        reader,
        header.thumbnail_len,
        Section::Thumbnail,
        header.thumbnail_offset(),
    )?;
    verify_crc(Section::Thumbnail, header.thumbnail_crc, &thumbnail)?;
    Ok(Some(thumbnail))
}

/// Decodes and verifies a whole save file held in memory.
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<DecodedSave, FormatError> {
    decode_file(Cow::Borrowed(bytes), options)
}

/// Like [`decode`], taking the file's buffer over: the snapshot blob of a payload stored as is
/// is moved within that buffer instead of copied into a new one.
pub fn decode_owned(bytes: Vec<u8>, options: &DecodeOptions) -> Result<DecodedSave, FormatError> {
    decode_file(Cow::Owned(bytes), options)
}

fn decode_file(bytes: Cow<'_, [u8]>, options: &DecodeOptions) -> Result<DecodedSave, FormatError> {
    let header = check_whole_file(&bytes, options)?;
    let range = |start: u64, len: u32| start as usize..(start + u64::from(len)) as usize;
    let (meta, thumbnail) = decode_meta_and_thumbnail(
        &header,
        &bytes[range(header.meta_offset(), header.meta_len)],
        &bytes[range(header.thumbnail_offset(), header.thumbnail_len)],
    )?;
    let payload = range(header.payload_offset(), header.payload_len);
    let bundle = decode_payload(&header, bytes, payload)?;
    Ok(DecodedSave {
        header,
        meta: SaveMeta { thumbnail, ..meta },
        bundle,
    })
}

/// Parses the header of a whole file and checks the file's length against it.
fn check_whole_file(bytes: &[u8], options: &DecodeOptions) -> Result<Header, FormatError> {
    let header_bytes = bytes.get(..HEADER_LEN).ok_or_else(|| {
        short_header(bytes).unwrap_or(FormatError::Truncated {
            section: Section::Header,
            expected_end: HEADER_LEN as u64,
            actual_end: bytes.len() as u64,
        })
    })?;
    let header = parse_header(header_bytes)?;
    options.limits.check_header(&header)?;

    let actual_len = bytes.len() as u64;
    if actual_len < header.file_len() {
        let section = section_at(&header, actual_len);
        return Err(FormatError::Truncated {
            section,
            expected_end: section_end(&header, section),
            actual_end: actual_len,
        });
    }
    if actual_len > header.file_len() {
        return Err(FormatError::TrailingBytes {
            extra: actual_len - header.file_len(),
            expected_len: header.file_len(),
        });
    }
    Ok(header)
}

/// Decodes and verifies a whole save file from a reader, allocating no more than the data
/// present justifies (each section is read incrementally, never pre-sized from the header alone).
pub fn decode_from<R: Read>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<DecodedSave, FormatError> {
    let header = read_checked_header(reader, options)?;
    let meta = read_section(
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
    let payload = read_section(
        reader,
        header.payload_len,
        Section::Payload,
        header.payload_offset(),
    )?;
    let mut probe = [0u8; 512];
    let extra = reader.read(&mut probe).map_err(FormatError::read)?;
    if extra > 0 {
        return Err(FormatError::TrailingBytes {
            extra: extra as u64,
            expected_len: header.file_len(),
        });
    }
    let (meta, thumbnail) = decode_meta_and_thumbnail(&header, &meta, &thumbnail)?;
    let payload_len = payload.len();
    let bundle = decode_payload(&header, Cow::Owned(payload), 0..payload_len)?;
    Ok(DecodedSave {
        header,
        meta: SaveMeta { thumbnail, ..meta },
        bundle,
    })
}

/// Reads the header and checks its lengths against the options' limits.
fn read_checked_header<R: Read>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<Header, FormatError> {
    let header = read_header(reader)?;
    options.limits.check_header(&header)?;
    Ok(header)
}

/// Verifies and decodes the metadata, then verifies the thumbnail (`None` when empty).
fn decode_meta_and_thumbnail(
    header: &Header,
    meta_bytes: &[u8],
    thumbnail: &[u8],
) -> Result<(SaveMeta, Option<Vec<u8>>), FormatError> {
    let meta = decode_meta(header, meta_bytes)?;
    verify_crc(Section::Thumbnail, header.thumbnail_crc, thumbnail)?;
    Ok((meta, (!thumbnail.is_empty()).then(|| thumbnail.to_vec())))
}

/// Verifies, decompresses and decodes the payload, which is `buffer[payload]`.
fn decode_payload(
    header: &Header,
    buffer: Cow<'_, [u8]>,
    payload: Range<usize>,
) -> Result<SaveBundle, FormatError> {
    if header.version >= 2 {
        let (raw, range) = join_chunks(header, buffer, payload)?;
        return decode_bundle(raw, range);
    }
    verify_crc(
        Section::Payload,
        header.payload_crc,
        &buffer[payload.clone()],
    )?;
    match header.compression {
        // Stored as is: decoded in place, without a copy.
        Compression::None => decode_bundle(buffer, payload),
        codec => {
            let expected = header.payload_uncompressed_len as usize;
            let raw = codec.decompress(&buffer[payload], expected)?;
            decode_bundle(Cow::Owned(raw), 0..expected)
        }
    }
}

/// The verified chunk table of a whole file held in memory, `None` for a version-1 file (one
/// block): what `keepsake inspect` shows. The chunks themselves are not read.
pub fn read_chunk_table(
    bytes: &[u8],
    options: &DecodeOptions,
) -> Result<Option<ChunkTable>, FormatError> {
    let header = check_whole_file(bytes, options)?;
    if header.version < 2 {
        return Ok(None);
    }
    let payload = &bytes[header.payload_offset() as usize..header.file_len() as usize];
    read_table(&header, payload, header.payload_offset()).map(Some)
}

/// [`SaveBundle`]'s postcard layout with the snapshot blob borrowed from the buffer, so that an
/// owned buffer can become the blob (see [`decode_bundle`]). Must list the same fields in the
/// same order as `SaveBundle` and `WorldState`; the round-trip tests decode through it.
#[derive(Deserialize)]
struct BundleView<'a> {
    schema_version: u32,
    #[serde(borrow)]
    world: WorldView<'a>,
    extras: BTreeMap<String, Vec<u8>>,
}

#[derive(Deserialize)]
struct WorldView<'a> {
    tick: u64,
    ecs_blob: &'a [u8],
    state_hash: u64,
}

/// Decodes the postcard bundle in `buffer[raw]`, which must use every byte of that range.
///
/// The snapshot blob is most of a bundle: from an owned buffer it is kept in place (the buffer
/// cut down to it) rather than copied into a new allocation.
fn decode_bundle(buffer: Cow<'_, [u8]>, raw: Range<usize>) -> Result<SaveBundle, FormatError> {
    let view: BundleView = decode_exact(Section::Payload, &buffer[raw])?;
    // The blob is a subslice of `buffer`: its offset is the distance between the two starts.
    let blob_start = view.world.ecs_blob.as_ptr() as usize - buffer.as_ptr() as usize;
    let blob = blob_start..blob_start + view.world.ecs_blob.len();
    let BundleView {
        schema_version,
        world: WorldView {
            tick, state_hash, ..
        },
        extras,
    } = view;
    Ok(SaveBundle {
        schema_version,
        world: WorldState {
            tick,
            ecs_blob: take_range(buffer, blob),
            state_hash,
        },
        extras,
    })
}

/// `buffer[range]` as a vector: the owned buffer itself, cut down to the range, or a copy.
fn take_range(buffer: Cow<'_, [u8]>, range: Range<usize>) -> Vec<u8> {
    match buffer {
        Cow::Borrowed(bytes) => bytes[range].to_vec(),
        Cow::Owned(mut bytes) => {
            bytes.truncate(range.end);
            bytes.drain(..range.start);
            // Do not keep a large buffer alive for a small blob.
            if bytes.capacity() > 2 * bytes.len() {
                bytes.shrink_to_fit();
            }
            bytes
        }
    }
}

fn parse_header(bytes: &[u8]) -> Result<Header, FormatError> {
    let array: &[u8; HEADER_LEN] = bytes.try_into().map_err(|_| FormatError::Truncated {
        section: Section::Header,
        expected_end: HEADER_LEN as u64,
        actual_end: bytes.len() as u64,
    })?;
    Header::parse(array)
}

/// For input shorter than a header: "not a save file" when even the magic is wrong.
fn short_header(bytes: &[u8]) -> Option<FormatError> {
    let found: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    (found != MAGIC).then_some(FormatError::NotASaveFile {
        found,
        expected: MAGIC,
    })
}

fn decode_meta(header: &Header, bytes: &[u8]) -> Result<SaveMeta, FormatError> {
    verify_crc(Section::Metadata, header.meta_crc, bytes)?;
    decode_exact(Section::Metadata, bytes)
}

fn verify_crc(section: Section, stored: u32, bytes: &[u8]) -> Result<(), FormatError> {
    let computed = crc32fast::hash(bytes);
    if computed == stored {
        Ok(())
    } else {
        Err(FormatError::ChecksumMismatch {
            section,
            stored,
            computed,
        })
    }
}

/// Decodes a postcard value that must use every byte of its section.
fn decode_exact<'de, T: Deserialize<'de>>(
    section: Section,
    bytes: &'de [u8],
) -> Result<T, FormatError> {
    let (value, rest) = postcard::take_from_bytes(bytes)
        .map_err(|source| FormatError::Decode { section, source })?;
    if !rest.is_empty() {
        return Err(FormatError::UnusedBytes {
            section,
            extra: rest.len(),
        });
    }
    Ok(value)
}

/// Reads exactly `len` bytes of `section`, growing the buffer only as data arrives.
fn read_section<R: Read>(
    reader: &mut R,
    len: u32,
    section: Section,
    offset: u64,
) -> Result<Vec<u8>, FormatError> {
    const INITIAL_CAPACITY: u32 = 8 * 1024;
    let mut bytes = Vec::with_capacity(len.min(INITIAL_CAPACITY) as usize);
    reader
        .take(u64::from(len))
        .read_to_end(&mut bytes)
        .map_err(FormatError::read)?;
    if bytes.len() < len as usize {
        return Err(FormatError::Truncated {
            section,
            expected_end: offset + u64::from(len),
            actual_end: offset + bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// The section a file of `len` bytes ends in.
fn section_at(header: &Header, len: u64) -> Section {
    if len < header.thumbnail_offset() {
        Section::Metadata
    } else if len < header.payload_offset() {
        Section::Thumbnail
    } else {
        Section::Payload
    }
}

fn section_end(header: &Header, section: Section) -> u64 {
    match section {
        Section::Header => HEADER_LEN as u64,
        Section::Metadata => header.thumbnail_offset(),
        Section::Thumbnail => header.payload_offset(),
        Section::Payload | Section::ChunkTable => header.file_len(),
    }
}
