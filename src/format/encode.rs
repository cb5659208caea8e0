//! Writing save files.

use super::bundle::SaveBundle;
use super::error::{FormatError, Section};
use super::header::{Compression, FORMAT_VERSION, HEADER_LEN, Header};
use super::limits::{Limits, check};
use super::meta::SaveMeta;
use std::io::Write;

/// How [`encode`] writes a file.
///
/// ```
/// use bevy_keepsake::format::{Compression, EncodeOptions};
///
/// let options = EncodeOptions { compression: Compression::None, ..Default::default() };
/// assert_eq!(options.limits, Default::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// How the payload is stored (LZ4 by default).
    pub compression: Compression,
    /// The encoder refuses to write a file the reader would refuse under these limits.
    pub limits: Limits,
}

/// A save file encoded in memory, section by section, ready to be written.
#[derive(Clone, Debug)]
pub struct EncodedSave {
    header: Header,
    header_bytes: [u8; HEADER_LEN],
    meta: Vec<u8>,
    thumbnail: Vec<u8>,
    payload: Vec<u8>,
}

impl EncodedSave {
    /// The header that will be written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Total size of the file in bytes.
    pub fn len(&self) -> u64 {
        self.header.file_len()
    }

    /// Whether the file is empty (never: a save file always has a header).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The file's four sections in order: header, metadata, thumbnail, payload.
    pub fn parts(&self) -> [&[u8]; 4] {
        [
            &self.header_bytes,
            &self.meta,
            &self.thumbnail,
            &self.payload,
        ]
    }

    /// Writes the whole file to `writer`, section after section.
    pub fn write_to<W: Write>(&self, mut writer: W) -> Result<(), FormatError> {
        for part in self.parts() {
            writer.write_all(part).map_err(FormatError::write)?;
        }
        Ok(())
    }

    /// The whole file as one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        self.parts().concat()
    }
}

/// Encodes `meta` and `bundle` into a save file.
///
/// The metadata is postcard-encoded and stored as is; the thumbnail (if any) follows in its own
/// section; the bundle is postcard-encoded, then compressed. Every section gets a CRC32 and the
/// header a CRC32 of its own.
///
/// ```
/// use bevy_keepsake::{SlotId, format::{self, EncodeOptions, Limits, SaveBundle, SaveMeta, WorldState}};
///
/// let meta = SaveMeta::new(SlotId::Quick).with_title("Docks");
/// let bundle = SaveBundle::new(WorldState { tick: 42, ecs_blob: vec![1, 2, 3], state_hash: 9 });
/// let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())?.to_vec();
///
/// let decoded = format::decode(&bytes, &Limits::default())?;
/// assert_eq!(decoded.meta, meta);
/// assert_eq!(decoded.bundle, bundle);
/// # Ok::<(), bevy_keepsake::format::FormatError>(())
/// ```
pub fn encode(
    meta: &SaveMeta,
    bundle: &SaveBundle,
    options: &EncodeOptions,
) -> Result<EncodedSave, FormatError> {
    let limits = &options.limits;
    let meta_bytes = postcard::to_stdvec(meta).map_err(|source| FormatError::Encode {
        section: Section::Metadata,
        source,
    })?;
    let thumbnail = meta.thumbnail.clone().unwrap_or_default();
    let raw_payload = postcard::to_stdvec(bundle).map_err(|source| FormatError::Encode {
        section: Section::Payload,
        source,
    })?;

    let meta_len = length_within(Section::Metadata, meta_bytes.len(), limits.max_meta)?;
    let thumbnail_len = length_within(Section::Thumbnail, thumbnail.len(), limits.max_thumbnail)?;
    let payload_uncompressed_len = length_within(
        Section::Payload,
        raw_payload.len(),
        limits.max_payload_uncompressed,
    )?;

    let payload = match options.compression {
        Compression::None => raw_payload,
        Compression::Lz4 => lz4_flex::block::compress(&raw_payload),
    };
    let payload_len = length_within(Section::Payload, payload.len(), u32::MAX)?;

    let header = Header {
        version: FORMAT_VERSION,
        compression: options.compression,
        meta_len,
        thumbnail_len,
        payload_len,
        payload_uncompressed_len,
        meta_crc: crc32fast::hash(&meta_bytes),
        thumbnail_crc: crc32fast::hash(&thumbnail),
        payload_crc: crc32fast::hash(&payload),
    };
    Ok(EncodedSave {
        header_bytes: header.to_bytes(),
        header,
        meta: meta_bytes,
        thumbnail,
        payload,
    })
}

/// Converts a section length to the `u32` the header stores, refusing it over `limit`.
fn length_within(section: Section, len: usize, limit: u32) -> Result<u32, FormatError> {
    let too_large = FormatError::SizeLimit {
        section,
        size: len as u64,
        limit: limit.into(),
    };
    let len = u32::try_from(len).map_err(|_| too_large)?;
    check(section, len, limit)?;
    Ok(len)
}
