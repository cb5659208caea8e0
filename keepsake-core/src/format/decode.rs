//! Reading save files: header and metadata alone, the thumbnail alone, or everything.
//!
//! Checks run in a fixed order, each before the work it protects: header checksum → lengths
//! against the [`DecodeOptions`]' [`Limits`] → metadata checksum → payload checksum →
//! decompression → postcard. Each read pays for what it allocates from one [`Budget`] sized
//! from the file's decoded length (see the format's "Reading order and limits").

use super::budget::Budget;
use super::bundle::{SaveBundle, WorldState};
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::{HEADER_LEN, Header, MAGIC};
use super::limits::Limits;
use super::meta::SaveMeta;
use super::seal::{NONCE_LEN, SealKey, Sealing, UnsealedSaves, open_in_place};
use super::sections::{BundleSeed, BundleView, MetaSeed, WorldView, decode_exact};
use super::table::{ChunkTable, TableCheck, read_table};
use super::unchunk::join_chunks;
use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// How every reading function ([`decode`], [`decode_owned`], [`decode_from`], [`read_summary`],
/// [`read_thumbnail`]) reads a file: the size [`Limits`] it accepts, and the key it opens
/// sealed saves with.
///
/// Built with [`DecodeOptions::new`] (or [`Default`]) and its builder methods, so that options
/// added later change no reading function's signature and no caller that does not set them.
///
/// ```
/// use keepsake_core::format::{DecodeOptions, Limits, SealKey, Sealing, UnsealedSaves};
///
/// let limits = Limits { max_payload_uncompressed: 64 << 20, ..Limits::default() };
/// let options = DecodeOptions::new().limits(limits);
/// assert_eq!(options.limits, limits);
/// assert_eq!(DecodeOptions::default(), DecodeOptions::from(Limits::default()));
///
/// let sealed = DecodeOptions::new().seal(Sealing::Key(SealKey::from_bytes([7; 32])));
/// assert_eq!(sealed.unsealed, UnsealedSaves::Refuse);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// The largest sections accepted, checked before anything is allocated for them.
    pub limits: Limits,
    /// The key sealed files are opened with ([`Sealing::Off`]: none; their header and metadata
    /// still read, for listings, but their payload does not).
    pub seal: Sealing,
    /// With a key: whether unsealed files are read or refused ([`FormatError::UnsealedRefused`]).
    /// Without a key unsealed files are always read. Listings read unsealed files' metadata
    /// either way.
    pub unsealed: UnsealedSaves,
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

    /// The key sealed files are opened with (default [`Sealing::Off`]).
    #[must_use]
    pub fn seal(mut self, seal: Sealing) -> Self {
        self.seal = seal;
        self
    }

    /// What a reader with a key does with unsealed files (default [`UnsealedSaves::Refuse`]).
    #[must_use]
    pub fn unsealed(mut self, unsealed: UnsealedSaves) -> Self {
        self.unsealed = unsealed;
        self
    }

    /// How the payload of a file with `header` is read under these options, or why it is not.
    pub(super) fn opening(&self, header: &Header) -> Result<Opening, FormatError> {
        match (header.is_sealed(), self.seal, self.unsealed) {
            (true, Sealing::Key(key), _) => Ok(Opening::Sealed(key)),
            (true, Sealing::Off, _) => Err(FormatError::SealedNeedsKey),
            (false, Sealing::Key(_), UnsealedSaves::Refuse) => Err(FormatError::UnsealedRefused),
            (false, _, _) => Ok(Opening::Plain),
        }
    }
}

/// How a payload the options allow to read is read.
#[derive(Clone, Copy)]
pub(super) enum Opening {
    /// As stored (versions 1 and 2).
    Plain,
    /// Opened with the key first (version 3).
    Sealed(SealKey),
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
/// use keepsake_core::{SlotId, format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Auto(1)).with_title("Mines");
/// let bytes = format::encode(&meta, &SaveBundle::new(WorldState::default()), &EncodeOptions::default())?.to_vec();
/// let summary = format::read_summary(&mut &bytes[..], &DecodeOptions::default())?;
/// assert_eq!(summary.meta.title, "Mines");
/// # Ok::<(), keepsake_core::format::FormatError>(())
/// ```
pub fn read_summary<R: Read>(
    reader: &mut R,
    options: &DecodeOptions,
) -> Result<SaveSummary, FormatError> {
    let header = read_checked_header(reader, options)?;
    let budget = options.limits.budget(header.meta_len.into());
    budget.charge(Section::Metadata, header.meta_len.into())?;
    let meta_bytes = read_section(
        reader,
        header.meta_len,
        Section::Metadata,
        header.meta_offset(),
    )?;
    let meta = decode_meta(&header, &meta_bytes, &budget)?;
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
    let opening = options.opening(&header)?;
    let budget = options.limits.budget(decoded_len(&header));
    let range = |start: u64, len: u32| start as usize..(start + u64::from(len)) as usize;
    let meta_bytes = &bytes[range(header.meta_offset(), header.meta_len)];
    let thumbnail_bytes = &bytes[range(header.thumbnail_offset(), header.thumbnail_len)];
    let (meta, thumbnail) =
        decode_meta_and_thumbnail(&header, meta_bytes, thumbnail_bytes, &budget)?;
    let associated = associated_data(&header, meta_bytes, thumbnail_bytes, &budget)?;
    let payload = range(header.payload_offset(), header.payload_len);
    let seal = (opening, &associated[..]);
    let bundle = decode_payload(&header, seal, (bytes, payload), &budget)?;
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
    let opening = options.opening(&header)?;
    let budget = options.limits.budget(decoded_len(&header));
    // What the sections cost as read: their lengths passed the limits, and each buffer grew
    // only as its bytes arrived.
    budget.charge("sections as read", header.file_len())?;
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
    let associated = associated_data(&header, &meta, &thumbnail, &budget)?;
    let (meta, thumbnail) = decode_meta_and_thumbnail(&header, &meta, &thumbnail, &budget)?;
    let payload_len = payload.len();
    let seal = (opening, &associated[..]);
    let buffer = (Cow::Owned(payload), 0..payload_len);
    let bundle = decode_payload(&header, seal, buffer, &budget)?;
    Ok(DecodedSave {
        header,
        meta: SaveMeta { thumbnail, ..meta },
        bundle,
    })
}

/// Reads the header and checks its lengths against the options' limits.
pub(super) fn read_checked_header<R: Read>(
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
    budget: &Budget,
) -> Result<(SaveMeta, Option<Vec<u8>>), FormatError> {
    let meta = decode_meta(header, meta_bytes, budget)?;
    verify_crc(Section::Thumbnail, header.thumbnail_crc, thumbnail)?;
    budget.charge(Section::Thumbnail, thumbnail.len() as u64)?;
    Ok((meta, (!thumbnail.is_empty()).then(|| thumbnail.to_vec())))
}

/// The bytes a file decodes to ([`Header::decoded_len`]), the input its read's [`Budget`] is
/// sized from.
fn decoded_len(header: &Header) -> u64 {
    header.decoded_len()
}

/// What a seal authenticates besides the payload: the header's fixed fields, the metadata and
/// the thumbnail, as stored (empty for an unsealed file: nothing is copied).
fn associated_data(
    header: &Header,
    meta: &[u8],
    thumbnail: &[u8],
    budget: &Budget,
) -> Result<Vec<u8>, FormatError> {
    if !header.is_sealed() {
        return Ok(Vec::new());
    }
    let len = (meta.len() + thumbnail.len()) as u64;
    budget.charge("seal's associated data", len)?;
    Ok(header.seal_associated_data(meta, thumbnail))
}

/// Verifies, opens (when sealed), decompresses and decodes the payload, which is
/// `buffer[payload]`; `seal` is how it is opened and the seal's associated data.
fn decode_payload(
    header: &Header,
    seal: (Opening, &[u8]),
    (buffer, payload): (Cow<'_, [u8]>, Range<usize>),
    budget: &Budget,
) -> Result<SaveBundle, FormatError> {
    if header.version >= 2 {
        let chunked = open_payload(header, seal, buffer, payload, budget)?;
        let at = (chunked.range, chunked.offset);
        let (raw, range) = join_chunks(header, chunked.buffer, at, budget)?;
        return decode_bundle(raw, range, budget);
    }
    verify_crc(
        Section::Payload,
        header.payload_crc,
        &buffer[payload.clone()],
    )?;
    match header.compression {
        // Stored as is: decoded in place, without a copy.
        Compression::None => decode_bundle(buffer, payload, budget),
        codec => {
            let expected = header.payload_uncompressed_len as usize;
            budget.charge(Section::Payload, expected as u64)?;
            let raw = codec.decompress(&buffer[payload], expected)?;
            decode_bundle(Cow::Owned(raw), 0..expected, budget)
        }
    }
}

/// The chunked (version-2 layout) payload within `buffer[payload]`, with its file offset: the
/// payload itself when unsealed; when sealed, opened in place (an owned buffer is not copied),
/// its CRC verified only when it does not open (so that disk damage reads as damage, not as a
/// broken seal).
fn open_payload<'a>(
    header: &Header,
    (opening, associated): (Opening, &[u8]),
    buffer: Cow<'a, [u8]>,
    payload: Range<usize>,
    budget: &Budget,
) -> Result<ChunkedPayload<'a>, FormatError> {
    let key = match opening {
        Opening::Plain => {
            return Ok(ChunkedPayload {
                buffer,
                range: payload,
                offset: header.payload_offset(),
            });
        }
        Opening::Sealed(key) => key,
    };
    let (mut owned, payload) = match buffer {
        Cow::Owned(bytes) => (bytes, payload),
        Cow::Borrowed(bytes) => {
            budget.charge("sealed payload's copy", payload.len() as u64)?;
            (bytes[payload.clone()].to_vec(), 0..payload.len())
        }
    };
    // An intact file opens at the first try, without a CRC pass; one that does not open is
    // told apart by its CRC (the tag is checked before anything is decrypted, so the bytes are
    // still as stored): disk damage is damage, anything else a broken seal.
    let text = match open_in_place(&key, associated, &mut owned[payload.clone()]) {
        Ok(text) => text,
        Err(broken) => {
            verify_crc(Section::Payload, header.payload_crc, &owned[payload])?;
            return Err(broken);
        }
    };
    Ok(ChunkedPayload {
        buffer: Cow::Owned(owned),
        range: payload.start + text.start..payload.start + text.end,
        offset: header.payload_offset() + NONCE_LEN as u64,
    })
}

/// A version-2 payload (chunk table, then chunks) ready to be read: `buffer[range]`, whose first
/// byte is at file offset `offset` (a sealed payload's opened ciphertext is, byte for byte, where
/// its plaintext is read from).
struct ChunkedPayload<'a> {
    buffer: Cow<'a, [u8]>,
    range: Range<usize>,
    offset: u64,
}

/// The verified chunk table of a whole file held in memory, `None` for a version-1 file (one
/// block): what `keepsake inspect` shows. The chunks themselves are not read; a sealed file's
/// payload is opened with the options' key ([`FormatError::SealedNeedsKey`] without one).
pub fn read_chunk_table(
    bytes: &[u8],
    options: &DecodeOptions,
) -> Result<Option<ChunkTable>, FormatError> {
    let header = check_whole_file(bytes, options)?;
    if header.version < 2 {
        return Ok(None);
    }
    let opening = options.opening(&header)?;
    let budget = options.limits.budget(decoded_len(&header));
    let at = |offset: u64, len: u32| offset as usize..(offset + u64::from(len)) as usize;
    let associated = associated_data(
        &header,
        &bytes[at(header.meta_offset(), header.meta_len)],
        &bytes[at(header.thumbnail_offset(), header.thumbnail_len)],
        &budget,
    )?;
    let payload = at(header.payload_offset(), header.payload_len);
    let seal = (opening, &associated[..]);
    let chunked = open_payload(&header, seal, Cow::Borrowed(bytes), payload, &budget)?;
    let table = &chunked.buffer[chunked.range];
    let check = TableCheck::of(&header);
    read_table(&header, table, chunked.offset, check, &budget).map(Some)
}

/// Decodes the postcard bundle in `buffer[raw]`, which must use every byte of that range.
///
/// The snapshot blob is most of a bundle: from an owned buffer it is kept in place (the buffer
/// cut down to it) rather than copied into a new allocation.
fn decode_bundle(
    buffer: Cow<'_, [u8]>,
    raw: Range<usize>,
    budget: &Budget,
) -> Result<SaveBundle, FormatError> {
    let view = decode_exact(Section::Payload, &buffer[raw], BundleSeed(budget), budget)?;
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
    if let Cow::Borrowed(_) = buffer {
        budget.charge("snapshot blob's copy", blob.len() as u64)?;
    }
    let mut bundle = SaveBundle::new(WorldState {
        tick,
        ecs_blob: take_range(buffer, blob),
        state_hash,
    });
    bundle.schema_version = schema_version;
    bundle.extras = extras;
    Ok(bundle)
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

pub(super) fn decode_meta(
    header: &Header,
    bytes: &[u8],
    budget: &Budget,
) -> Result<SaveMeta, FormatError> {
    verify_crc(Section::Metadata, header.meta_crc, bytes)?;
    decode_exact(Section::Metadata, bytes, MetaSeed(budget), budget)
}

pub(super) fn verify_crc(section: Section, stored: u32, bytes: &[u8]) -> Result<(), FormatError> {
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

/// Reads exactly `len` bytes of `section`, growing the buffer only as data arrives.
pub(super) fn read_section<R: Read>(
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
