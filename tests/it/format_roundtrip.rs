//! Round trips through the file format for many generated metas and bundles.

use crate::common;

use bevy_keepsake::SlotId;
use bevy_keepsake::format::{
    self, Compression, EncodeOptions, LZ4_MAX_RATIO, Limits, SaveBundle, SaveMeta, Timestamp,
    WorldState,
};
use common::fixtures::game_like_blob;
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
        .prop_map(|(schema, tick, ecs_blob, hash, extras)| SaveBundle {
            schema_version: schema,
            world: WorldState {
                tick,
                ecs_blob,
                state_hash: hash,
            },
            extras,
        })
}

fn compression() -> impl Strategy<Value = Compression> {
    prop_oneof![Just(Compression::Lz4), Just(Compression::None)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn encode_then_decode_returns_the_same_save(meta in meta(), bundle in bundle(), compression in compression()) {
        let options = EncodeOptions { compression, ..Default::default() };
        let encoded = format::encode(&meta, &bundle, &options).unwrap();
        let bytes = encoded.to_vec();
        prop_assert_eq!(bytes.len() as u64, encoded.len());

        let decoded = format::decode(&bytes, &Limits::default()).unwrap();
        prop_assert_eq!(&decoded.meta, &meta);
        prop_assert_eq!(&decoded.bundle, &bundle);

        let from_reader = format::decode_from(&mut &bytes[..], &Limits::default()).unwrap();
        prop_assert_eq!(from_reader, decoded);

        let summary = format::read_summary(&mut &bytes[..], &Limits::default()).unwrap();
        prop_assert_eq!(summary.meta, SaveMeta { thumbnail: None, ..meta.clone() });
        let thumbnail = format::read_thumbnail(&mut std::io::Cursor::new(&bytes), &Limits::default()).unwrap();
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
        let decoded = format::decode(&bytes, &Limits::default()).unwrap();
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
