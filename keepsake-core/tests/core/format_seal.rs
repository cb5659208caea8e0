//! Sealed files (format version 3): what opens them, what breaks their seal, what still reads
//! without the key, and that disk damage stays damage.

use crate::common::{crc_fixup, fixtures};

use keepsake_core::SlotId;
use keepsake_core::format::{
    self, ChunkCache, DecodeOptions, EncodeOptions, FormatError, HEADER_LEN, PayloadLayout,
    SEALED_VERSION, SaveBundle, SaveMeta, SealKey, Sealing, Section, UnsealedSaves,
};

const KEY: SealKey = SealKey::from_bytes([0x5A; 32]);

fn sealed_options(key: SealKey) -> EncodeOptions {
    EncodeOptions {
        seal: Sealing::Key(key),
        ..EncodeOptions::default()
    }
}

fn opening(key: SealKey) -> DecodeOptions {
    DecodeOptions::new().seal(Sealing::Key(key))
}

/// A save with a thumbnail and a payload of several chunks: game-shaped numbers LZ4 does not
/// shrink enough, then text it does.
fn save() -> (SaveMeta, SaveBundle) {
    let mut meta = fixtures::meta(SlotId::Manual(2), 7);
    meta.thumbnail = Some(b"\x89PNG\r\n\x1a\nsmall thumbnail".to_vec());
    let mut bundle = fixtures::bundle(100_000, 7);
    let blob = &mut bundle.world.ecs_blob;
    while blob.len() < 500_000 {
        let line = format!("keeper {} lit the lamp; ", blob.len() % 97);
        blob.extend_from_slice(line.as_bytes());
    }
    (meta, bundle)
}

fn sealed_file() -> Vec<u8> {
    let (meta, bundle) = save();
    format::encode(&meta, &bundle, &sealed_options(KEY))
        .unwrap()
        .to_vec()
}

fn is_seal_broken<T: std::fmt::Debug>(result: Result<T, FormatError>) -> bool {
    matches!(result, Err(FormatError::SealBroken { .. }))
}

#[test]
fn a_sealed_file_is_version_3_and_decodes_with_its_key_every_way() {
    let (meta, bundle) = save();
    let bytes = sealed_file();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), SEALED_VERSION);
    assert_eq!(bytes[7], 0x01, "the sealed flag");

    let decoded = format::decode(&bytes, &opening(KEY)).unwrap();
    assert!(decoded.header.is_sealed());
    assert_eq!(
        (decoded.meta, decoded.bundle),
        (meta.clone(), bundle.clone())
    );
    let owned = format::decode_owned(bytes.clone(), &opening(KEY)).unwrap();
    let streamed = format::decode_from(&mut &bytes[..], &opening(KEY)).unwrap();
    assert_eq!(owned, streamed);
    assert_eq!(owned.bundle, bundle);
    let table = format::read_chunk_table(&bytes, &opening(KEY))
        .unwrap()
        .unwrap();
    assert!(table.chunks.len() > 1 && table.compressed() > 0);
    // The chunk offsets are the ciphertext's: after the header, sections, nonce and table.
    let payload = decoded.header.payload_offset();
    assert_eq!(table.data_offset, payload + 12 + table.table_len() as u64);
}

#[test]
fn the_payload_is_not_readable_in_a_sealed_file() {
    let (_, bundle) = save();
    let bytes = sealed_file();
    let text = &bundle.world.ecs_blob[..64];
    assert!(!bytes.windows(text.len()).any(|window| window == text));
    // The text is compressed, then encrypted: not one of its words is left.
    assert!(!bytes.windows(6).any(|window| window == b"keeper"));
}

#[test]
fn metadata_and_thumbnail_read_without_the_key_but_the_payload_does_not() {
    let (meta, _) = save();
    let bytes = sealed_file();
    let none = DecodeOptions::default();
    let summary = format::read_summary(&mut &bytes[..], &none).unwrap();
    assert!(summary.header.is_sealed());
    assert_eq!(summary.meta.title, meta.title);
    let thumbnail = format::read_thumbnail(&mut std::io::Cursor::new(&bytes), &none).unwrap();
    assert_eq!(thumbnail, meta.thumbnail);

    for error in [
        format::decode(&bytes, &none).unwrap_err(),
        format::decode_from(&mut &bytes[..], &none).unwrap_err(),
        format::read_chunk_table(&bytes, &none).unwrap_err(),
    ] {
        assert!(matches!(error, FormatError::SealedNeedsKey), "{error}");
        // The library's message says what the reader needs, not a flag of one tool.
        assert!(error.to_string().contains("seal key"), "{error}");
        assert!(!error.to_string().contains("--key"), "{error}");
    }
}

#[test]
fn a_wrong_key_or_another_owners_key_breaks_the_seal() {
    let bytes = sealed_file();
    let other_game = SealKey::from_bytes([0xA5; 32]);
    assert!(is_seal_broken(format::decode(&bytes, &opening(other_game))));

    let (meta, bundle) = save();
    let mine = KEY.bound_to(b"player one");
    let file = format::encode(&meta, &bundle, &sealed_options(mine))
        .unwrap()
        .to_vec();
    assert!(format::decode(&file, &opening(mine)).is_ok());
    for key in [KEY, KEY.bound_to(b"player two")] {
        assert!(is_seal_broken(format::decode(&file, &opening(key))));
    }
}

/// Edits `bytes` at `at` and rewrites every CRC, as someone editing a save by hand would.
fn forged(bytes: &[u8], at: usize, edit: impl Fn(u8) -> u8) -> Vec<u8> {
    let mut edited = bytes.to_vec();
    edited[at] = edit(edited[at]);
    crc_fixup::with_valid_checksums(&edited).unwrap()
}

#[test]
fn an_edited_byte_anywhere_the_seal_covers_breaks_it_even_under_fresh_crcs() {
    let bytes = sealed_file();
    let header = format::decode(&bytes, &opening(KEY)).unwrap().header;
    let title_at = bytes.windows(7).position(|w| w == b"Harbour").unwrap();
    let thumbnail_at = header.thumbnail_offset() as usize;
    let payload_at = header.payload_offset() as usize;
    let places = [
        ("the codec byte", 6),
        ("the title", title_at),
        ("the metadata's last byte", thumbnail_at - 1),
        ("a thumbnail byte", thumbnail_at + 3),
        ("the nonce", payload_at),
        ("the chunk table", payload_at + 14),
        ("a chunk", payload_at + (bytes.len() - payload_at) / 2),
        ("the tag", bytes.len() - 1),
    ];
    for (place, at) in places {
        let edited = forged(&bytes, at, |b| b ^ 0x01);
        let result = format::decode(&edited, &opening(KEY));
        assert!(is_seal_broken(result), "{place} (byte {at})");
    }
}

#[test]
fn an_edited_playtime_reads_in_a_listing_but_breaks_the_seal() {
    let (mut meta, bundle) = save();
    let bytes = format::encode(&meta, &bundle, &sealed_options(KEY))
        .unwrap()
        .to_vec();
    // Re-encode the metadata with more play time, as a save editor would.
    meta.playtime += std::time::Duration::from_secs(1_000);
    meta.thumbnail = None;
    let new_meta = postcard_meta(&meta);
    let header = format::decode(&bytes, &opening(KEY)).unwrap().header;
    assert_eq!(new_meta.len(), header.meta_len as usize, "same length");
    let mut edited = bytes.clone();
    edited[HEADER_LEN..HEADER_LEN + new_meta.len()].copy_from_slice(&new_meta);
    let edited = crc_fixup::with_valid_checksums(&edited).unwrap();

    let listed = format::read_summary(&mut &edited[..], &DecodeOptions::default()).unwrap();
    assert_eq!(listed.meta.playtime, meta.playtime);
    assert!(is_seal_broken(format::decode(&edited, &opening(KEY))));
}

/// The metadata section as the encoder writes it (read back from an unsealed file).
fn postcard_meta(meta: &SaveMeta) -> Vec<u8> {
    let file = format::encode(meta, &fixtures::bundle(10, 0), &EncodeOptions::default())
        .unwrap()
        .to_vec();
    let len = u32::from_le_bytes(file[8..12].try_into().unwrap()) as usize;
    file[HEADER_LEN..HEADER_LEN + len].to_vec()
}

#[test]
fn disk_damage_in_a_sealed_file_is_a_checksum_error_not_a_broken_seal() {
    let bytes = sealed_file();
    let header = format::decode(&bytes, &opening(KEY)).unwrap().header;
    let payload_at = header.payload_offset() as usize;
    for (at, section) in [
        (HEADER_LEN + 1, Section::Metadata),
        (header.thumbnail_offset() as usize, Section::Thumbnail),
        (payload_at + 5, Section::Payload),
        (bytes.len() - 3, Section::Payload),
    ] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        let error = format::decode(&damaged, &opening(KEY)).unwrap_err();
        assert!(
            matches!(error, FormatError::ChecksumMismatch { section: s, .. } if s == section),
            "byte {at}: {error}"
        );
    }
}

#[test]
fn every_bit_flip_and_truncation_of_a_small_sealed_file_is_an_error() {
    let meta = fixtures::meta(SlotId::Quick, 1);
    let bundle = fixtures::bundle(600, 1);
    let bytes = format::encode(&meta, &bundle, &sealed_options(KEY))
        .unwrap()
        .to_vec();
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(
            format::decode(&flipped, &opening(KEY)).is_err(),
            "bit {bit}"
        );
        // Fresh CRCs make a flip within the CRC fields (bytes 24..40) no flip at all.
        let fixed = crc_fixup::with_valid_checksums(&flipped);
        if let Some(fixed) = fixed.filter(|_| !(24..40).contains(&(bit / 8))) {
            assert!(format::decode(&fixed, &opening(KEY)).is_err(), "bit {bit}");
        }
    }
    for len in 0..bytes.len() {
        assert!(format::decode(&bytes[..len], &opening(KEY)).is_err());
    }
}

#[test]
fn an_unsealed_file_is_refused_by_a_reader_with_a_key_unless_it_accepts_them() {
    let (meta, bundle) = save();
    let unsealed = format::encode(&meta, &bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec();
    let error = format::decode(&unsealed, &opening(KEY)).unwrap_err();
    assert!(matches!(error, FormatError::UnsealedRefused), "{error}");
    assert!(error.to_string().contains("UnsealedSaves::Accept"));
    // Listings still read it.
    assert!(format::read_summary(&mut &unsealed[..], &opening(KEY)).is_ok());

    let accepting = opening(KEY).unsealed(UnsealedSaves::Accept);
    assert_eq!(
        format::decode(&unsealed, &accepting).unwrap().bundle,
        bundle
    );
    // Without a key, unsealed files read whatever `unsealed` says.
    let keyless = DecodeOptions::new().unsealed(UnsealedSaves::Refuse);
    assert!(format::decode(&unsealed, &keyless).is_ok());
}

#[test]
fn a_whole_payload_cannot_be_sealed() {
    let (meta, bundle) = save();
    let options = EncodeOptions {
        layout: PayloadLayout::Whole,
        ..sealed_options(KEY)
    };
    assert!(matches!(
        format::encode(&meta, &bundle, &options),
        Err(FormatError::SealNeedsChunkedLayout)
    ));
}

#[test]
fn each_sealed_save_has_its_own_nonce() {
    let (meta, bundle) = save();
    let first = format::encode(&meta, &bundle, &sealed_options(KEY))
        .unwrap()
        .to_vec();
    let second = sealed_file();
    assert_eq!(first.len(), second.len());
    assert_ne!(first, second);
    let payload = format::decode(&first, &opening(KEY))
        .unwrap()
        .header
        .payload_offset() as usize;
    assert_ne!(first[payload..payload + 12], second[payload..payload + 12]);
}

#[test]
fn sealed_saves_take_unchanged_chunks_from_the_cache_as_unsealed_ones_do() {
    let (meta, first) = save();
    let mut second = first.clone();
    second.world.tick += 1;
    second.world.ecs_blob[250_000] ^= 1;
    let stats = |options: EncodeOptions| {
        let cache = ChunkCache::new();
        [&first, &second].map(|bundle| {
            let file = format::encode_cached(&meta, bundle, &options, &cache).unwrap();
            let decoded = format::decode(
                &file.to_vec(),
                &opening(KEY).unsealed(UnsealedSaves::Accept),
            );
            assert_eq!(&decoded.unwrap().bundle, bundle);
            file.chunk_stats().unwrap()
        })
    };
    let sealed = stats(sealed_options(KEY));
    assert_eq!(sealed, stats(EncodeOptions::default()));
    let [_, again] = sealed;
    assert_eq!(
        again.reused,
        again.chunks - 2,
        "the tick's and the edit's chunks"
    );
}

#[test]
fn a_sealed_header_announcing_less_than_a_nonce_and_tag_is_implausible() {
    let bytes = sealed_file();
    let mut forged = bytes[..HEADER_LEN].to_vec();
    forged[8..20].fill(0); // metadata, thumbnail and payload lengths
    forged[16..20].copy_from_slice(&27u32.to_le_bytes());
    forged[20..24].copy_from_slice(&0u32.to_le_bytes());
    forged.extend(std::iter::repeat_n(0, 27));
    let forged = crc_fixup::with_valid_checksums(&forged).unwrap();
    assert!(matches!(
        format::decode(&forged, &opening(KEY)),
        Err(FormatError::ImplausibleSize { .. })
    ));
}
