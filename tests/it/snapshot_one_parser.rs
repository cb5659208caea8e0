//! One parser: `inspect`, `decode` and `dump` read a blob through the same cursor, so one bad
//! byte gets one error, whoever reads it. Before the cursor they disagreed on these blobs (the
//! kind byte, a resource's row count, the kind mismatch, the entity id rule), which each test
//! names.

use bevy::prelude::*;
use bevy_keepsake::snapshot::{self, SaveRegistry, SaveableAppExt, SnapshotError};

#[derive(Component, Reflect, Default, Debug, PartialEq)]
#[reflect(Component)]
struct Health(u8);

#[derive(Resource, Reflect, Default, Debug, PartialEq)]
#[reflect(Resource)]
struct Score(u8);

/// A blob written by hand, field by field as the layout table says.
#[derive(Default)]
struct Blob(Vec<u8>);

impl Blob {
    fn byte(mut self, byte: u8) -> Self {
        self.0.push(byte);
        self
    }
    fn varint(mut self, mut value: u64) -> Self {
        while value >= 0x80 {
            self.0.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
        self
    }
    fn u32(mut self, value: u32) -> Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    fn text(self, text: &str) -> Self {
        let mut blob = self.varint(text.len() as u64);
        blob.0.extend_from_slice(text.as_bytes());
        blob
    }
    /// Layout version 1 and an entity table of `ids` (as deltas from 0, each id small).
    fn start(ids: &[u64], columns: u32) -> Self {
        let mut blob = Blob::default().byte(1).varint(ids.len() as u64);
        let mut previous = 0u64;
        for &id in ids {
            let delta = id.wrapping_sub(previous) as i64;
            blob = blob.varint(((delta << 1) ^ (delta >> 63)) as u64);
            previous = id;
        }
        blob.u32(columns)
    }
    /// A column header.
    fn column(self, type_path: &str, kind: u8, rows: u32) -> Self {
        self.text(type_path).varint(1).byte(kind).u32(rows)
    }
}

/// An entity id (`Entity::to_bits`) of index `index`, generation 0.
fn id(index: u32) -> u64 {
    Entity::from_raw_u32(index).unwrap().to_bits()
}

fn app() -> App {
    let mut app = App::new();
    app.register_saveable::<Health>()
        .register_saveable::<Score>();
    app
}

/// The three readers' errors for `blob`, as text (all must be errors).
fn errors(blob: &[u8]) -> [String; 3] {
    let app = app();
    let registry = app.world().resource::<SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().read();
    let inspected = snapshot::inspect(blob).map(|_| ()).unwrap_err();
    let decoded = snapshot::decode(blob, snapshot::state_hash(blob), &registry, &types)
        .map(|_| ())
        .unwrap_err();
    let dumped = snapshot::dump(blob, &registry, &types).unwrap_err();
    [inspected, decoded, dumped].map(|error: SnapshotError| error.to_string())
}

/// `decode`'s and `dump`'s errors for `blob` (a blob whose structure is fine, which `inspect`
/// reads, but whose values do not fit the registered types).
fn value_errors(blob: &[u8]) -> [String; 2] {
    assert!(snapshot::inspect(blob).is_ok());
    let app = app();
    let registry = app.world().resource::<SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().read();
    let decoded = snapshot::decode(blob, snapshot::state_hash(blob), &registry, &types)
        .map(|_| ())
        .unwrap_err();
    let dumped = snapshot::dump(blob, &registry, &types).unwrap_err();
    [decoded, dumped].map(|error: SnapshotError| error.to_string())
}

#[test]
fn a_bad_kind_byte_is_one_error() {
    // Was "column kind 7" from decode and "… has column kind 7; only 0 and 1 exist" from inspect.
    let blob = Blob::start(&[id(5)], 1).column(Health::type_path(), 7, 1);
    let [inspected, decoded, dumped] = errors(&blob.0);
    assert_eq!(inspected, decoded);
    assert_eq!(inspected, dumped);
    assert!(
        inspected.contains("has column kind 7; only 0 and 1 exist"),
        "{inspected}"
    );
}

#[test]
fn a_resource_with_two_values_is_one_error() {
    // Was `Malformed` from inspect and a value error from decode.
    let blob = Blob::start(&[], 1)
        .column(Score::type_path(), 1, 2)
        .varint(1)
        .byte(3)
        .varint(1)
        .byte(4);
    let [inspected, decoded, dumped] = errors(&blob.0);
    assert_eq!(inspected, decoded);
    assert_eq!(inspected, dumped);
    assert!(
        inspected.contains("2 values stored for the resource"),
        "{inspected}"
    );
}

#[test]
fn a_kind_mismatch_is_one_error() {
    // Was "stored as a Resource but registered as a Component" (decode) and "stored as a
    // resource but registered as a component" (dump).
    let blob = Blob::start(&[], 1)
        .column(Health::type_path(), 1, 1)
        .varint(1)
        .byte(3);
    let [decoded, dumped] = value_errors(&blob.0);
    assert_eq!(decoded, dumped);
    assert!(
        decoded.ends_with("stored as a resource but registered as a component"),
        "{decoded}"
    );
}

#[test]
fn entity_index_zero_is_a_valid_id_and_index_max_is_not() {
    // Bevy stores an entity's index as a `NonMaxU32` (the index XOR u32::MAX), so index 0 has
    // the low bits 0xFFFF_FFFF, which inspect used to refuse while decode took it; the id no
    // entity can have is the one with low bits 0.
    let first = Blob::start(&[id(0)], 1)
        .column(Health::type_path(), 0, 1)
        .varint(0)
        .varint(1)
        .byte(9);
    let table = snapshot::inspect(&first.0).unwrap();
    assert_eq!(table.entity_ids, vec![id(0)]);
    let app = app();
    let registry = app.world().resource::<SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().read();
    let decoded = snapshot::decode(&first.0, snapshot::state_hash(&first.0), &registry, &types);
    assert_eq!(decoded.unwrap().entity_count(), 1);

    let impossible = Blob::start(&[1u64 << 32], 0);
    let [inspected, decoded, dumped] = errors(&impossible.0);
    assert_eq!(inspected, decoded);
    assert_eq!(inspected, dumped);
    assert!(
        inspected.contains("is not a valid entity id"),
        "{inspected}"
    );
}

#[test]
fn a_repeated_entity_id_and_trailing_bytes_are_one_error_each() {
    let repeated = Blob::start(&[id(3), id(3)], 0);
    let [inspected, decoded, dumped] = errors(&repeated.0);
    assert_eq!((&inspected, &inspected), (&decoded, &dumped));
    assert!(inspected.contains("is listed twice"), "{inspected}");

    let trailing = Blob::start(&[id(3)], 0).byte(0);
    let [inspected, decoded, dumped] = errors(&trailing.0);
    assert_eq!((&inspected, &inspected), (&decoded, &dumped));
    assert!(
        inspected.contains("1 unexpected bytes after the last column"),
        "{inspected}"
    );
}
