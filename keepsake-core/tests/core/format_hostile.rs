//! Hostile input: forged lengths must be refused before any large allocation, and listing reads
//! only the header and metadata.

use crate::common;

use common::alloc::peak_allocation;
use common::fixtures;
use keepsake_core::SlotId;
use keepsake_core::format::{
    self, Compression, DecodeOptions, EncodeOptions, FormatError, HEADER_LEN, Header, SaveBundle,
    SaveMeta, Section, WorldState,
};
use std::io::Read;

/// Builds a file from raw sections with correct checksums, so only the lengths lie.
fn forge(compression: Compression, meta: &[u8], payload: &[u8], uncompressed_len: u32) -> Vec<u8> {
    let header = Header {
        version: 1,
        compression,
        meta_len: meta.len() as u32,
        thumbnail_len: 0,
        payload_len: payload.len() as u32,
        payload_uncompressed_len: uncompressed_len,
        meta_crc: crc32fast::hash(meta),
        thumbnail_crc: 0,
        payload_crc: crc32fast::hash(payload),
    };
    [&header.to_bytes()[..], meta, payload].concat()
}

fn valid_meta() -> Vec<u8> {
    postcard::to_stdvec(&SaveMeta::new(SlotId::Quick)).unwrap()
}

/// Decodes through both entry points, returning the errors and the largest peak allocation.
fn decode_both(bytes: &[u8]) -> (FormatError, FormatError, usize) {
    let (from_slice, peak_slice) =
        peak_allocation(|| format::decode(bytes, &DecodeOptions::default()));
    let (from_reader, peak_reader) =
        peak_allocation(|| format::decode_from(&mut &bytes[..], &DecodeOptions::default()));
    (
        from_slice.unwrap_err(),
        from_reader.unwrap_err(),
        peak_slice.max(peak_reader),
    )
}

const SMALL: usize = 64 * 1024;

#[test]
fn u32_max_uncompressed_size_is_refused_without_allocating() {
    let bytes = forge(Compression::Lz4, &valid_meta(), &[0x10, 0x41], u32::MAX);
    let (slice, reader, peak) = decode_both(&bytes);
    for error in [slice, reader] {
        assert!(
            matches!(error, FormatError::SizeLimit { section: Section::Payload, size, .. } if size == u64::from(u32::MAX)),
            "{error}"
        );
    }
    println!("u32::MAX uncompressed: peak allocation {peak} bytes");
    assert!(peak < SMALL, "peak allocation {peak}");
}

#[test]
fn a_five_byte_payload_cannot_claim_more_than_lz4_can_produce() {
    // Within the 256 MiB limit, but 5 stored bytes expand to at most 5 * 255.
    let bytes = forge(
        Compression::Lz4,
        &valid_meta(),
        &[0x1F, 0, 1, 2, 3],
        200 << 20,
    );
    let (slice, reader, peak) = decode_both(&bytes);
    for error in [slice, reader] {
        assert!(
            matches!(error, FormatError::ImplausibleSize { stored: 5, .. }),
            "{error}"
        );
    }
    println!("5-byte payload claiming 200 MiB: peak allocation {peak} bytes");
    assert!(peak < SMALL, "peak allocation {peak}");

    let stored_mismatch = forge(Compression::None, &valid_meta(), &[1, 2, 3], 4);
    assert!(matches!(
        format::decode(&stored_mismatch, &DecodeOptions::default()),
        Err(FormatError::ImplausibleSize { .. })
    ));
}

#[test]
fn lengths_beyond_the_file_are_refused_without_allocating_them() {
    // A header announcing a 200 MB stored payload on a file of a few bytes.
    let mut bytes = forge(Compression::None, &valid_meta(), &[], 0);
    let mut header: [u8; HEADER_LEN] = bytes[..HEADER_LEN].try_into().unwrap();
    header[16..20].copy_from_slice(&(200u32 << 20).to_le_bytes());
    header[20..24].copy_from_slice(&(200u32 << 20).to_le_bytes());
    let crc = crc32fast::hash(&header[..36]);
    header[36..40].copy_from_slice(&crc.to_le_bytes());
    bytes[..HEADER_LEN].copy_from_slice(&header);

    let (slice, reader, peak) = decode_both(&bytes);
    for error in [slice, reader] {
        assert!(
            matches!(
                error,
                FormatError::Truncated {
                    section: Section::Payload,
                    ..
                }
            ),
            "{error}"
        );
    }
    println!("200 MB stored payload on a tiny file: peak allocation {peak} bytes");
    assert!(peak < SMALL, "peak allocation {peak}");
}

#[test]
fn huge_postcard_lengths_inside_valid_checksums_are_refused_without_allocating() {
    // A bundle whose ecs_blob claims u32::MAX bytes, LZ4-compressed, with valid CRCs.
    let mut raw = Vec::new();
    raw.push(1); // schema_version
    raw.push(5); // tick
    raw.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]); // varint u32::MAX length
    raw.extend_from_slice(&[0xAB; 32]);
    let payload = lz4_flex::block::compress(&raw);
    let bytes = forge(Compression::Lz4, &valid_meta(), &payload, raw.len() as u32);
    let (slice, reader, peak) = decode_both(&bytes);
    for error in [slice, reader] {
        assert!(
            matches!(
                error,
                FormatError::Decode {
                    section: Section::Payload,
                    ..
                }
            ),
            "{error}"
        );
    }
    println!("ecs_blob claiming u32::MAX bytes: peak allocation {peak} bytes");
    assert!(peak < SMALL, "peak allocation {peak}");

    // The same in the metadata: a title claiming 2^60 bytes.
    let mut forged_meta = postcard::to_stdvec(&SaveMeta::new(SlotId::Quick)).unwrap();
    forged_meta.truncate(17); // uuid (len prefix + 16 bytes)
    forged_meta.extend_from_slice(&[2]); // slot: Quick
    forged_meta.extend_from_slice(&[0]); // created_at
    forged_meta.extend_from_slice(&[0, 0]); // playtime
    forged_meta.extend_from_slice(&[0]); // game tick
    forged_meta.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]);
    forged_meta.extend_from_slice(b"short");
    let bytes = forge(Compression::None, &forged_meta, &[0], 1);
    let (slice, reader, peak) = decode_both(&bytes);
    for error in [slice, reader] {
        assert!(
            matches!(
                error,
                FormatError::Decode {
                    section: Section::Metadata,
                    ..
                }
            ),
            "{error}"
        );
    }
    println!("title claiming 2^60 bytes: peak allocation {peak} bytes");
    assert!(peak < SMALL, "peak allocation {peak}");
}

/// A reader that counts the bytes handed out.
struct CountingReader<R> {
    inner: R,
    read: usize,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n;
        Ok(n)
    }
}

#[test]
fn reading_the_summary_of_a_5_mb_save_reads_only_header_and_metadata() {
    let meta = SaveMeta {
        thumbnail: Some(vec![0x42; 100_000]),
        ..fixtures::meta(SlotId::Manual(0), 1)
    };
    let bundle = SaveBundle::new(WorldState {
        ecs_blob: fixtures::game_like_blob(5 << 20, 5),
        ..Default::default()
    });
    let bytes = format::encode(&meta, &bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec();
    assert!(bytes.len() > 2 << 20);

    let mut reader = CountingReader {
        inner: &bytes[..],
        read: 0,
    };
    let summary = format::read_summary(&mut reader, &DecodeOptions::default()).unwrap();
    assert_eq!(summary.meta.title, meta.title);
    let expected = HEADER_LEN + summary.header.meta_len as usize;
    println!(
        "summary of a {} byte save read {} bytes",
        bytes.len(),
        reader.read
    );
    assert_eq!(reader.read, expected);
    assert!(reader.read < 4096);
}
