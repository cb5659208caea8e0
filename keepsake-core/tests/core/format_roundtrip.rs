//! Round trips through the file format for many generated metas and bundles.

use crate::common;

use common::fixtures::game_like_blob;
use keepsake_core::SlotId;
use keepsake_core::format::{
    self, CompressWhen, Compression, DecodeOptions, EncodeOptions, LZ4_MAX_RATIO,
    LZ4_PAYS_AT_PERCENT, Limits, SaveBundle, SaveMeta, Timestamp, WorldState,
};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use std::time::Duration;
use uuid::Uuid;

fn slot() -> impl Strategy<Value = SlotId> {
    prop_oneof![
        any::<u16>().prop_map(SlotId::Manual),
        any::<u16>().prop_map(SlotId::Auto),
        Just(SlotId::Quick),
    ]
}

fn meta() -> impl Strategy<Value = SaveMeta> {
    (
        any::<u128>(),
        slot(),
        any::<i64>(),
        (any::<u64>(), 0u32..1_000_000_000),
        any::<u64>(),
        ".{0,80}",
        "[0-9.a-z-]{0,12}",
        btree_map(".{0,10}", ".{0,20}", 0..5),
        proptest::option::of(vec(any::<u8>(), 0..2048)),
    )
        .prop_map(
            |(id, slot, millis, (secs, nanos), tick, title, version, extras, thumbnail)| SaveMeta {
                save_id: Uuid::from_u128(id),
                slot,
                created_at: Timestamp::from_unix_millis(millis),
                playtime: Duration::new(secs, nanos),
                game_tick: tick,
                title,
                game_version: version,
                extras,
                // An empty thumbnail is stored as "no thumbnail".
                thumbnail: thumbnail.filter(|bytes| !bytes.is_empty()),
            },
        )
}

fn bundle() -> impl Strategy<Value = SaveBundle> {
    let blob = prop_oneof![
        Just(Vec::new()),
        vec(any::<u8>(), 0..4096),
        (0usize..200_000, any::<u64>()).prop_map(|(len, seed)| game_like_blob(len, seed)),
    ];
    (
        any::<u32>(),
        any::<u64>(),
        blob,
        any::<u64>(),
        btree_map(".{0,8}", vec(any::<u8>(), 0..64), 0..4),
    )
        .prop_map(|(schema, tick, ecs_blob, hash, extras)| {
            let mut bundle = SaveBundle::new(WorldState {
                tick,
                ecs_blob,
                state_hash: hash,
            });
            bundle.schema_version = schema;
            bundle.extras = extras;
            bundle
        })
}

fn options() -> impl Strategy<Value = EncodeOptions> {
    (
        prop_oneof![Just(Compression::Lz4), Just(Compression::None)],
        prop_oneof![Just(CompressWhen::Always), Just(CompressWhen::ItPays)],
    )
        .prop_map(|(compression, compress_when)| EncodeOptions {
            compression,
            compress_when,
            ..Default::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn encode_then_decode_returns_the_same_save(meta in meta(), bundle in bundle(), options in options()) {
        let encoded = format::encode(&meta, &bundle, &options).unwrap();
        let bytes = encoded.to_vec();
        prop_assert_eq!(bytes.len() as u64, encoded.len());

        let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
        prop_assert_eq!(&decoded.meta, &meta);
        prop_assert_eq!(&decoded.bundle, &bundle);

        let from_reader = format::decode_from(&mut &bytes[..], &DecodeOptions::default()).unwrap();
        prop_assert_eq!(&from_reader, &decoded);
        let owned = format::decode_owned(bytes.clone(), &DecodeOptions::default()).unwrap();
        prop_assert_eq!(owned, decoded);

        let summary = format::read_summary(&mut &bytes[..], &DecodeOptions::default()).unwrap();
        prop_assert_eq!(summary.meta, SaveMeta { thumbnail: None, ..meta.clone() });
        let thumbnail = format::read_thumbnail(&mut std::io::Cursor::new(&bytes), &DecodeOptions::default()).unwrap();
        prop_assert_eq!(thumbnail, meta.thumbnail);
    }

    #[test]
    fn lz4_output_never_exceeds_the_ratio_the_reader_allows(len in 0usize..300_000, byte in any::<u8>()) {
        // A run of one byte is LZ4's best case; the reader must still accept it.
        let raw = vec![byte; len];
        let compressed = lz4_flex::block::compress(&raw);
        prop_assert!(len as u64 <= compressed.len() as u64 * LZ4_MAX_RATIO);
    }
}

#[test]
fn multi_megabyte_payloads_round_trip() {
    for (len, compression) in [
        (3 << 20, Compression::Lz4),
        (5 << 20, Compression::Lz4),
        (3 << 20, Compression::None),
    ] {
        let meta = SaveMeta::new(SlotId::Manual(1)).with_title("big");
        let bundle = SaveBundle::new(WorldState {
            tick: 1,
            ecs_blob: game_like_blob(len, len as u64),
            state_hash: 2,
        });
        let options = EncodeOptions {
            compression,
            compress_when: CompressWhen::Always,
            ..Default::default()
        };
        let bytes = format::encode(&meta, &bundle, &options).unwrap().to_vec();
        if compression == Compression::Lz4 {
            assert!(
                bytes.len() < len * 9 / 10,
                "game-shaped data should compress: {} of {len}",
                bytes.len()
            );
        }
        let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
        assert_eq!(decoded.bundle, bundle);
    }
}

#[test]
fn encoder_refuses_what_the_reader_would_refuse() {
    let limits = Limits {
        max_payload_uncompressed: 1000,
        max_meta: 64,
        max_thumbnail: 10,
    };
    let options = EncodeOptions {
        limits,
        ..Default::default()
    };
    let small = SaveBundle::new(WorldState::default());
    let big = SaveBundle::new(WorldState {
        ecs_blob: vec![7; 2000],
        ..Default::default()
    });
    let meta = SaveMeta::new(SlotId::Quick);

    let error = format::encode(&meta, &big, &options).unwrap_err();
    assert!(
        error.to_string().contains("over the limit of 1000 bytes"),
        "{error}"
    );

    let long_title = meta.clone().with_title("t".repeat(100));
    assert!(matches!(
        format::encode(&long_title, &small, &options),
        Err(format::FormatError::SizeLimit {
            section: format::Section::Metadata,
            ..
        })
    ));

    let with_thumbnail = SaveMeta {
        thumbnail: Some(vec![0; 11]),
        ..meta
    };
    assert!(matches!(
        format::encode(&with_thumbnail, &small, &options),
        Err(format::FormatError::SizeLimit {
            section: format::Section::Thumbnail,
            ..
        })
    ));
}

/// Encodes a bundle around `blob` and decodes it again, returning the header's codec and how
/// many bytes the payload takes in the file.
fn codec_chosen_for(blob: Vec<u8>, compress_when: CompressWhen) -> (Compression, u32) {
    let meta = SaveMeta::new(SlotId::Quick);
    let bundle = SaveBundle::new(WorldState {
        tick: 3,
        ecs_blob: blob,
        state_hash: 4,
    });
    let options = EncodeOptions {
        compress_when,
        ..Default::default()
    };
    let encoded = format::encode(&meta, &bundle, &options).unwrap();
    let decoded = format::decode(&encoded.to_vec(), &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.bundle, bundle, "round trip");
    let owned = format::decode_owned(encoded.to_vec(), &DecodeOptions::default()).unwrap();
    assert_eq!(owned.bundle, bundle, "round trip through the owned buffer");
    assert_eq!(decoded.header, *encoded.header());
    (decoded.header.compression, decoded.header.payload_len)
}

/// Text-like data (names and numbers repeating with variations) that LZ4 halves.
fn compressible_blob(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut entity = 0u64;
    while out.len() < len {
        out.extend_from_slice(
            format!("goblin {entity} hp 100/100 at {} 0 ", entity % 97).as_bytes(),
        );
        entity += 1;
    }
    out.truncate(len);
    out
}

#[test]
fn payloads_lz4_barely_shrinks_are_stored_raw_by_default() {
    // The game-like fixture compresses to about 87 %: not worth it, whether it is judged whole
    // (small) or by a sample (large).
    for len in [10 << 10, 3 << 20] {
        let (codec, payload_len) = codec_chosen_for(game_like_blob(len, 7), CompressWhen::ItPays);
        assert_eq!(codec, Compression::None, "{len} bytes");
        assert!(
            payload_len as usize > len,
            "stored whole: {payload_len} for {len}"
        );
    }
}

#[test]
fn payloads_lz4_shrinks_enough_are_compressed_by_default() {
    for len in [10 << 10, 3 << 20] {
        let (codec, payload_len) = codec_chosen_for(compressible_blob(len), CompressWhen::ItPays);
        assert_eq!(codec, Compression::Lz4, "{len} bytes");
        assert!(
            payload_len as usize * 100 <= len * LZ4_PAYS_AT_PERCENT,
            "{payload_len} of {len}"
        );
    }
}

#[test]
fn compress_always_compresses_even_when_it_does_not_pay() {
    let (codec, _) = codec_chosen_for(game_like_blob(3 << 20, 8), CompressWhen::Always);
    assert_eq!(codec, Compression::Lz4);
}
