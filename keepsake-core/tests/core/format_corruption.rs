//! Damaged files: every bit flip and every truncation of reference files, and golden files.

use crate::common;

use common::{crc_fixup, fixtures};
use keepsake_core::SlotId;
use keepsake_core::format::{
    self, CompressWhen, Compression, DecodeOptions, EncodeOptions, FORMAT_VERSION, FormatError,
    PayloadLayout, SaveBundle, SaveMeta, SealKey, Sealing, Section, Timestamp, WorldState,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use uuid::Uuid;

/// Reference files: with and without a thumbnail, LZ4 and stored, chunked (version 2) and
/// whole (version 1, which this build still writes on request).
fn reference_files() -> Vec<(&'static str, Vec<u8>)> {
    let with_thumbnail = SaveMeta {
        thumbnail: Some(b"\x89PNG\r\n\x1a\n-tiny-thumbnail".to_vec()),
        ..fixtures::meta(SlotId::Manual(2), 3)
    };
    let plain = fixtures::meta(SlotId::Quick, 4);
    let bundle = fixtures::bundle(1500, 9);
    let encode = |meta: &SaveMeta, compression, layout| {
        // Always: the fixture does not compress enough for LZ4 to be chosen by default, and the
        // bit flips must reach the decompressor.
        let options = EncodeOptions {
            compression,
            compress_when: CompressWhen::Always,
            layout,
            ..Default::default()
        };
        let encoded = format::encode(meta, &bundle, &options).unwrap();
        assert_eq!(encoded.header().compression, compression);
        encoded.to_vec()
    };
    vec![
        (
            "lz4 with thumbnail",
            encode(&with_thumbnail, Compression::Lz4, PayloadLayout::Chunked),
        ),
        (
            "stored without thumbnail",
            encode(&plain, Compression::None, PayloadLayout::Chunked),
        ),
        (
            "version 1, lz4 with thumbnail",
            encode(&with_thumbnail, Compression::Lz4, PayloadLayout::Whole),
        ),
    ]
}

#[test]
fn every_single_bit_flip_is_rejected_with_a_typed_error() {
    let mut flips = 0;
    for (name, original) in reference_files() {
        let expected = format::decode(&original, &DecodeOptions::default()).unwrap();
        for bit in 0..original.len() * 8 {
            let mut damaged = original.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            match format::decode(&damaged, &DecodeOptions::default()) {
                Ok(decoded) => panic!(
                    "{name}: flipping bit {bit} decoded successfully (same as original: {})",
                    decoded == expected
                ),
                Err(error) => assert!(!error.to_string().is_empty()),
            }
            // The store's entry point (the buffer handed over) checks exactly the same.
            assert!(format::decode_owned(damaged.clone(), &DecodeOptions::default()).is_err());
            // Reading only the summary must also never accept a damaged header or metadata.
            let header_and_meta = 40 + u32::from_le_bytes(original[8..12].try_into().unwrap());
            if (bit / 8) < header_and_meta as usize {
                assert!(
                    format::read_summary(&mut &damaged[..], &DecodeOptions::default()).is_err()
                );
            }
            flips += 1;
        }
    }
    println!("{flips} single-bit flips tried, every one rejected");
    assert!(flips > 10_000, "only {flips} flips tried");
}

#[test]
fn every_truncation_is_rejected_with_a_typed_error() {
    for (name, original) in reference_files() {
        for len in 0..original.len() {
            let cut = &original[..len];
            let error = format::decode(cut, &DecodeOptions::default()).unwrap_err();
            let reader_error =
                format::decode_from(&mut &cut[..], &DecodeOptions::default()).unwrap_err();
            for error in [&error, &reader_error] {
                assert!(
                    matches!(error, FormatError::Truncated { actual_end, .. } if *actual_end == len as u64),
                    "{name}: cut at {len} gave {error}"
                );
            }
        }
    }
}

#[test]
fn errors_name_the_damaged_section() {
    let (_, original) = reference_files().remove(0);
    let meta_len = u32::from_le_bytes(original[8..12].try_into().unwrap()) as usize;
    let damage = |offset: usize| {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x10;
        format::decode(&bytes, &DecodeOptions::default()).unwrap_err()
    };
    assert!(matches!(damage(0), FormatError::NotASaveFile { .. }));
    assert!(matches!(
        damage(20),
        FormatError::ChecksumMismatch {
            section: Section::Header,
            ..
        }
    ));
    assert!(matches!(
        damage(41),
        FormatError::ChecksumMismatch {
            section: Section::Metadata,
            ..
        }
    ));
    assert!(matches!(
        damage(40 + meta_len + 2),
        FormatError::ChecksumMismatch {
            section: Section::Thumbnail,
            ..
        }
    ));
    // Version 2: a damaged chunk is named by its index and file offset, a damaged table as
    // the chunk table.
    let table = format::read_chunk_table(&original, &DecodeOptions::default())
        .unwrap()
        .expect("a version-2 file");
    let last = original.len() - 1;
    let (last_offset, _) = table.with_offsets().last().unwrap();
    let error = damage(last);
    assert!(
        matches!(
            error,
            FormatError::ChunkChecksumMismatch { index, offset, end, .. }
                if index == table.chunks.len() - 1 && offset == last_offset && end == original.len() as u64
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains(&format!(
            "checksum mismatch in payload chunk {}",
            table.chunks.len() - 1
        )),
        "{error}"
    );
    assert!(matches!(
        damage(table.data_offset as usize - 1),
        FormatError::ChecksumMismatch {
            section: Section::ChunkTable,
            ..
        }
    ));
    // Version 1: the payload is one block with one CRC.
    let (_, whole) = reference_files().remove(2);
    let mut damaged = whole.clone();
    *damaged.last_mut().unwrap() ^= 0x10;
    let error = format::decode(&damaged, &DecodeOptions::default()).unwrap_err();
    assert!(matches!(
        error,
        FormatError::ChecksumMismatch {
            section: Section::Payload,
            ..
        }
    ));
    assert!(
        error
            .to_string()
            .contains("checksum mismatch in the payload"),
        "{error}"
    );

    let mut extra = original.clone();
    extra.extend_from_slice(b"junk");
    assert!(matches!(
        format::decode(&extra, &DecodeOptions::default()),
        Err(FormatError::TrailingBytes { extra: 4, .. })
    ));
    assert!(matches!(
        format::decode_from(&mut &extra[..], &DecodeOptions::default()),
        Err(FormatError::TrailingBytes { .. })
    ));
    assert!(matches!(
        format::decode(
            b"PK\x03\x04 a zip file, not a save",
            &DecodeOptions::default()
        ),
        Err(FormatError::NotASaveFile { .. })
    ));
}

#[test]
fn a_newer_format_version_is_refused_with_its_own_error() {
    let (_, mut bytes) = reference_files().remove(0);
    bytes[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    // A newer build writes its version under an intact header checksum.
    let bytes = crc_fixup::with_valid_checksums(&bytes).unwrap();
    let error = format::decode(&bytes, &DecodeOptions::default()).unwrap_err();
    assert!(
        matches!(error, FormatError::NewerVersion { found, supported } if found == FORMAT_VERSION + 1 && supported == FORMAT_VERSION)
    );
    assert!(error.to_string().contains("update the game"), "{error}");
    assert!(matches!(
        format::read_summary(&mut &bytes[..], &DecodeOptions::default()),
        Err(FormatError::NewerVersion { .. })
    ));
}

#[test]
fn no_bit_flip_in_the_first_8_bytes_passes_for_a_newer_version() {
    // As documented in `src/format/mod.rs`: the header checksum is checked before the version
    // is trusted, so damage to the magic, version, codec or flags is damage, never "newer".
    for (name, original) in reference_files() {
        for bit in 0..64 {
            let mut damaged = original.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            let version = u16::from_le_bytes([damaged[4], damaged[5]]);
            let decoded = format::decode(&damaged, &DecodeOptions::default()).unwrap_err();
            let summary =
                format::read_summary(&mut &damaged[..], &DecodeOptions::default()).unwrap_err();
            for error in [decoded, summary] {
                let expected = match (bit / 8, &error) {
                    (0..4, FormatError::NotASaveFile { .. }) => true,
                    (4..6, FormatError::UnknownVersion { found: 0 }) => version == 0,
                    (4..8, FormatError::ChecksumMismatch { section, .. }) => {
                        *section == Section::Header
                    }
                    _ => false,
                };
                assert!(
                    expected,
                    "{name}: bit {bit} (version {version}) gave {error}"
                );
            }
        }
    }
}

#[test]
fn a_newer_version_is_told_apart_from_a_damaged_version_field_by_the_header_checksum() {
    let (_, original) = reference_files().remove(0);
    for version in [FORMAT_VERSION + 1, 9, u16::MAX] {
        let mut bytes = original.clone();
        bytes[4..6].copy_from_slice(&version.to_le_bytes());
        assert!(
            matches!(
                format::decode(&bytes, &DecodeOptions::default()),
                Err(FormatError::ChecksumMismatch {
                    section: Section::Header,
                    ..
                })
            ),
            "version {version} under the old checksum is a damaged file"
        );
        let genuine = crc_fixup::with_valid_checksums(&bytes).unwrap();
        assert!(
            matches!(
                format::decode(&genuine, &DecodeOptions::default()),
                Err(FormatError::NewerVersion { found, .. }) if found == version
            ),
            "version {version} under its own checksum is a newer file"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Golden files: one per released format version, decoded to the same values forever.

/// The workspace's `tests/golden/`, not this crate's: the Bevy crate's memory tests and the CLI's
/// tests read the same files, beside the Bevy saves kept there.
fn golden_path(version: u16) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/golden/v{version}.ksav"))
}

/// The values the version-1 golden file holds.
fn golden_v1_values() -> (SaveMeta, SaveBundle) {
    let meta = SaveMeta {
        save_id: Uuid::parse_str("6f1c2d3e-4b5a-4c6d-8e7f-0123456789ab").unwrap(),
        slot: SlotId::Manual(3),
        created_at: Timestamp::from_unix_millis(1_763_700_000_123),
        playtime: Duration::new(5_025, 500_000_000),
        game_tick: 301_500,
        title: "Sunken Harbour · Level 4 · 1,250 pts".into(),
        game_version: "0.1.0".into(),
        extras: BTreeMap::from([
            ("difficulty".into(), "normal".into()),
            ("character".into(), "Mira".into()),
        ]),
        thumbnail: Some(b"\x89PNG\r\n\x1a\nnot-really-a-png".to_vec()),
    };
    let mut bundle = SaveBundle::new(WorldState {
        tick: 301_500,
        ecs_blob: fixtures::game_like_blob(4096, 1),
        state_hash: 0x0123_4567_89AB_CDEF,
    });
    bundle.extras = BTreeMap::from([("quest_log".into(), b"found the lantern".to_vec())]);
    (meta, bundle)
}

#[test]
fn golden_v1_decodes_to_the_expected_values() {
    let bytes = std::fs::read(golden_path(1)).expect("tests/golden/v1.ksav is committed");
    let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
    let (meta, bundle) = golden_v1_values();
    assert_eq!(decoded.header.version, 1);
    assert_eq!(decoded.meta, meta);
    assert_eq!(decoded.bundle, bundle);
    assert_eq!(
        format::read_chunk_table(&bytes, &DecodeOptions::default()).unwrap(),
        None
    );
}

/// The values the version-2 golden file holds: the version-1 values around a blob of a few
/// chunks, some LZ4 shrinks (text) and some it does not (game-shaped numbers), so the file has
/// both compressed and stored chunks.
fn golden_v2_values() -> (SaveMeta, SaveBundle) {
    let (meta, mut bundle) = golden_v1_values();
    let mut blob = fixtures::game_like_blob(90_000, 2);
    while blob.len() < 200_000 {
        blob.extend_from_slice(format!("lantern {} lit at dusk; ", blob.len() % 89).as_bytes());
    }
    bundle.world.ecs_blob = blob;
    (meta, bundle)
}

fn golden_v2_options() -> EncodeOptions {
    EncodeOptions::default()
}

#[test]
fn golden_v2_decodes_to_the_expected_values() {
    let bytes = std::fs::read(golden_path(2)).expect("tests/golden/v2.ksav is committed");
    let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
    let (meta, bundle) = golden_v2_values();
    assert_eq!(decoded.header.version, 2);
    assert_eq!(decoded.meta, meta);
    assert_eq!(decoded.bundle, bundle);
    let table = format::read_chunk_table(&bytes, &DecodeOptions::default())
        .unwrap()
        .unwrap();
    let compressed = table.compressed();
    assert!(
        compressed > 0 && compressed < table.chunks.len(),
        "{compressed} of {} chunks compressed: the golden file covers both kinds",
        table.chunks.len()
    );
}

#[test]
fn todays_encoder_writes_the_v2_golden_file_byte_for_byte() {
    // The chunk boundaries (the gear table), the table layout and the codec choices are all
    // part of what makes a cache hit and a golden file: a change to any of them shows here.
    let golden = std::fs::read(golden_path(2)).expect("tests/golden/v2.ksav is committed");
    let (meta, bundle) = golden_v2_values();
    let bytes = format::encode(&meta, &bundle, &golden_v2_options())
        .unwrap()
        .to_vec();
    assert!(
        bytes == golden,
        "the encoder's output differs from tests/golden/v2.ksav"
    );
}

/// The key and nonce of the version-3 (sealed) golden file: fixed, so the file is the same byte
/// for byte every time it is written (a game never fixes a nonce, see `encode_with_fixed_nonce`).
const GOLDEN_V3_KEY: SealKey = SealKey::from_bytes(*b"keepsake golden v3 key, 32 bytes");
const GOLDEN_V3_NONCE: [u8; 12] = *b"golden nonce";

/// Version 3 seals the version-2 golden values.
fn golden_v3_options() -> EncodeOptions {
    EncodeOptions {
        seal: Sealing::Key(GOLDEN_V3_KEY),
        ..golden_v2_options()
    }
}

fn golden_v3_bytes() -> Vec<u8> {
    let (meta, bundle) = golden_v2_values();
    format::encode_with_fixed_nonce(&meta, &bundle, &golden_v3_options(), GOLDEN_V3_NONCE)
        .unwrap()
        .to_vec()
}

#[test]
fn golden_v3_decodes_to_the_expected_values_with_its_key() {
    let bytes = std::fs::read(golden_path(3)).expect("tests/golden/v3.ksav is committed");
    let key = DecodeOptions::new().seal(Sealing::Key(GOLDEN_V3_KEY));
    let decoded = format::decode(&bytes, &key).unwrap();
    let (meta, bundle) = golden_v2_values();
    assert_eq!(decoded.header.version, 3);
    assert!(decoded.header.is_sealed());
    assert_eq!(decoded.meta, meta);
    assert_eq!(decoded.bundle, bundle);
    let table = format::read_chunk_table(&bytes, &key).unwrap().unwrap();
    assert!(table.compressed() > 0 && table.compressed() < table.chunks.len());

    // Its metadata reads without the key; its payload does not.
    let keyless = DecodeOptions::default();
    let summary = format::read_summary(&mut &bytes[..], &keyless).unwrap();
    assert_eq!(summary.meta.title, meta.title);
    assert!(matches!(
        format::decode(&bytes, &keyless),
        Err(FormatError::SealedNeedsKey)
    ));
}

#[test]
fn todays_encoder_writes_the_v3_golden_file_byte_for_byte() {
    let golden = std::fs::read(golden_path(3)).expect("tests/golden/v3.ksav is committed");
    assert!(
        golden_v3_bytes() == golden,
        "the encoder's output differs from tests/golden/v3.ksav"
    );
}

/// Writes the golden files of the current versions (the newest, sealed, and the newest
/// unsealed). Run once when a format version is released:
/// `cargo test -p keepsake-core --test core -- --ignored format_corruption::write_golden_file`.
#[test]
#[ignore = "writes tests/golden; run by hand when releasing a format version"]
fn write_golden_file() {
    assert_eq!(
        FORMAT_VERSION, 3,
        "add golden values for the new version first"
    );
    let (meta, bundle) = golden_v2_values();
    let bytes = format::encode(&meta, &bundle, &golden_v2_options())
        .unwrap()
        .to_vec();
    std::fs::write(golden_path(2), bytes).unwrap();
    std::fs::write(golden_path(FORMAT_VERSION), golden_v3_bytes()).unwrap();
}
