//! Blobs that do not match the registry, or are garbage: typed errors, world untouched.

use crate::common::blob_v1;
use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, BLOB_VERSION, DecodedSnapshot, SaveRegistry, Saveable, SaveableAppExt, Snapshot,
    SnapshotError,
};
use serde::{Deserialize, Serialize};

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
struct Label {
    text: String,
    level: u8,
}

#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
struct Wide {
    a: u64,
    b: u64,
    c: String,
}

fn app() -> App {
    let mut app = App::new();
    app.register_saveable::<Position>()
        .register_saveable::<Label>();
    app
}

fn reference(world: &mut World) -> Snapshot {
    for i in 0..5 {
        world.spawn((
            Saveable,
            Position {
                x: i as f32,
                y: 1.0,
            },
            Label {
                text: format!("crate {i}"),
                level: i as u8,
            },
        ));
    }
    snapshot::capture(world).unwrap()
}

fn decode(world: &World, blob: &[u8]) -> Result<DecodedSnapshot, SnapshotError> {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    snapshot::decode(blob, snapshot::state_hash(blob), &registry, &types.read())
}

/// Positions in the world, to check nothing changed.
fn positions(world: &mut World) -> Vec<(f32, f32)> {
    let mut query = world.query::<&Position>();
    let mut all: Vec<_> = query.iter(world).map(|p| (p.x, p.y)).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    all
}

#[test]
fn a_column_of_another_type_names_the_type_and_the_entity() {
    // The save stored `Wide` values; this build maps that path to `Position` by mistake.
    let mut writer = App::new();
    writer.register_saveable::<Wide>();
    let saved = {
        let world = writer.world_mut();
        world.spawn((
            Saveable,
            Wide {
                a: u64::MAX,
                b: 1,
                c: "x".repeat(40),
            },
        ));
        snapshot::capture(world).unwrap()
    };
    let wide = <Wide as TypePath>::type_path();
    let mut app = app();
    app.register_saveable_rename::<Position>(wide);
    let world = app.world_mut();

    // The column's layout says it holds `Wide`s: refused before any value is read.
    let error = decode(world, &saved.blob).err().unwrap();
    let SnapshotError::LayoutChanged {
        type_path,
        stored,
        today,
        ..
    } = &error
    else {
        panic!("unexpected {error}");
    };
    assert_eq!(type_path, wide);
    // The message shows both layouts: the saved one with `Wide`'s fields, today's with
    // `Position`'s.
    let position = <Position as TypePath>::type_path();
    assert!(
        stored.contains(wide) && !stored.contains(position),
        "{error}"
    );
    assert!(today.contains(position) && !today.contains(wide), "{error}");
    for field in ["a", "b", "c"] {
        assert!(stored.contains(&format!("{field}: ")), "{field} in {error}");
        assert!(!today.contains(&format!("{field}: ")), "{field} in {error}");
    }
    for field in ["x", "y"] {
        assert!(today.contains(&format!("{field}: ")), "{field} in {error}");
        assert!(
            !stored.contains(&format!("{field}: ")),
            "{field} in {error}"
        );
    }
    let message = error.to_string();
    assert!(
        message.contains(stored) && message.contains(today),
        "{message}"
    );

    // A save from before layouts (version 1) cannot tell: its values are read as `Position`s,
    // and the first fails, naming the type and the entity.
    let error = decode(world, &blob_v1::without_layouts(&saved.blob))
        .err()
        .unwrap();
    match &error {
        SnapshotError::Value {
            type_path,
            entity_index: Some(0),
            ..
        } => {
            assert_eq!(type_path, wide);
        }
        other => panic!("unexpected {other}"),
    }
    let message = error.to_string();
    assert!(message.contains("of entity #0"), "{message}");
}

#[test]
fn every_truncation_and_bit_flip_gives_a_typed_error_or_a_valid_decode() {
    let mut app = app();
    let world = app.world_mut();
    let snapshot = reference(world);
    let before = positions(world);
    let blob = &snapshot.blob;

    for len in 0..blob.len() {
        let error = decode(world, &blob[..len]).err();
        assert!(error.is_some(), "a blob cut at {len} decoded");
    }
    let (mut rejected, mut accepted) = (0, 0);
    for bit in 0..blob.len() * 8 {
        let mut damaged = blob.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        // The hash is recomputed, so this exercises the decoder itself, not the hash check.
        match decode(world, &damaged) {
            Ok(_) => accepted += 1, // e.g. a flipped bit inside a float: still a valid value
            Err(error) => {
                assert!(!error.to_string().is_empty());
                rejected += 1;
            }
        }
    }
    println!("bit flips: {rejected} rejected with a typed error, {accepted} still valid");
    assert!(rejected > 0 && accepted > 0);
    assert_eq!(positions(world), before, "decoding never touches the world");
}

#[test]
fn garbage_is_rejected_with_typed_errors() {
    let mut app = app();
    let world = app.world_mut();
    // The blobs starting with `1` are layout version 1 (no type layout in a column's header),
    // which a load still accepts: each is refused for what the case names.
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("layout 0", vec![0]),
        ("newer layout", vec![BLOB_VERSION + 1, 0, 0, 0, 0, 0]),
        ("huge entity count", vec![1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        ("invalid entity id", vec![1, 1, 0, 0, 0, 0, 0]),
        ("huge column count", vec![1, 0, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("trailing bytes", vec![1, 0, 0, 0, 0, 0, 9, 9]),
        ("column with huge row count", {
            let mut blob = vec![1, 0, 1, 0, 0, 0];
            let path = <Position as TypePath>::type_path();
            blob.push(path.len() as u8);
            blob.extend_from_slice(path.as_bytes());
            blob.extend_from_slice(&[1, 0, 0xFF, 0xFF, 0xFF, 0x7F]);
            blob
        }),
        ("row for an entity that does not exist", {
            let mut blob = vec![1, 0, 1, 0, 0, 0];
            let path = <Position as TypePath>::type_path();
            blob.push(path.len() as u8);
            blob.extend_from_slice(path.as_bytes());
            blob.extend_from_slice(&[1, 0, 1, 0, 0, 0, 6, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
            blob
        }),
    ];
    for (name, blob) in cases {
        let error = decode(world, &blob).err();
        assert!(error.is_some(), "{name} decoded");
        println!("{name}: {}", error.unwrap());
    }
    let newer = BLOB_VERSION + 1;
    assert!(matches!(
        decode(world, &[newer]),
        Err(SnapshotError::NewerLayout { found, supported: BLOB_VERSION }) if found == newer
    ));
}

#[test]
fn short_values_are_refused() {
    let mut app = app();
    let world = app.world_mut();
    world.spawn((Saveable, Position { x: 1.0, y: 2.0 }));
    let snapshot = snapshot::capture(world).unwrap();
    // Find the Position value (8 bytes of floats) and shorten its length prefix by one.
    let blob = &snapshot.blob;
    let needle = 2.0f32.to_le_bytes();
    let end = blob.windows(4).position(|w| w == needle).unwrap() + 4;
    let value_start = end - 8;
    assert_eq!(blob[value_start - 1], 8, "length prefix of the value");
    let mut short = blob[..value_start - 1].to_vec();
    short.push(7);
    short.extend_from_slice(&blob[value_start..end - 1]);
    short.extend_from_slice(&blob[end..]);
    let error = decode(world, &short).err().unwrap();
    assert!(
        matches!(
            &error,
            SnapshotError::Value {
                entity_index: Some(0),
                ..
            }
        ),
        "{error}"
    );
}

#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
struct Huge(u128);

/// V1 (issue 43): a `u128` varint of the full 19 bytes whose last byte carries bits past 128
/// is refused, as postcard and the stored-layout reader refuse it. The reflection plan used to
/// drop those bits and read `u128::MAX`.
#[test]
fn a_u128_varint_past_128_bits_is_refused() {
    let mut app = App::new();
    app.register_saveable::<Huge>();
    let world = app.world_mut();
    world.spawn((Saveable, Huge(u128::MAX)));
    let snapshot = snapshot::capture(world).unwrap();
    // u128::MAX is 18 bytes of 0xff and a last byte of 0x03 (the two bits left).
    let mut varint = vec![0xff; 18];
    varint.push(0x03);
    let blob = &snapshot.blob;
    let at = blob
        .windows(varint.len())
        .position(|window| window == varint)
        .expect("the value's bytes");
    assert!(decode(world, blob).is_ok());
    let mut past = blob.clone();
    past[at + 18] = 0x04;
    let error = decode(world, &past).err().expect("refused");
    assert!(
        matches!(
            &error,
            SnapshotError::Value {
                entity_index: Some(0),
                ..
            }
        ),
        "{error}"
    );
}
