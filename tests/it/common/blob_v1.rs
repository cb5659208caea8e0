//! Version-1 blobs (from before the columns carried their type's layout), written from today's
//! blobs: what a save from an older build, or a hostile file, can still hand a load.
//!
//! The v1 byte table is the v2 one (`src/snapshot/blob/mod.rs`) without the type layout in
//! each column header:
//!
//! | field | encoding |
//! |-------|----------|
//! | layout version | `1` |
//! | entity count | varint |
//! | entity ids | deltas (the first to 0) |
//! | column count | `u32` little-endian |
//! | per column | type path (varint length + UTF-8), schema version (varint), kind (`u8`), row count (`u32` LE), rows |
//! | component row | entity index as a delta to the previous row's, value length (varint) + value |
//! | resource row | value length (varint) + value |
//!
//! A delta is the difference to the previous item (wrapping) as a zigzag varint, as
//! `src/snapshot/blob/wire.rs` writes it; the few lines are repeated here because the crate
//! keeps them private.

use bevy_keepsake::format::{self, DecodeOptions, EncodeOptions};
use bevy_keepsake::snapshot::{self, ColumnKind};
use std::path::Path;

/// `blob` (any layout version) rewritten as a version-1 blob: the same entity table, columns
/// and value bytes, without the columns' type layouts.
///
/// Panics when `blob` does not read (`snapshot::inspect`).
pub fn without_layouts(blob: &[u8]) -> Vec<u8> {
    let table = snapshot::inspect(blob).expect("the blob to rewrite reads");
    let mut out = Vec::with_capacity(blob.len());
    out.push(1);
    put_varint(&mut out, table.entity_ids.len() as u64);
    let mut previous_id = 0;
    for id in &table.entity_ids {
        put_delta(&mut out, previous_id, id);
        previous_id = id;
    }
    out.extend_from_slice(&(table.columns.len() as u32).to_le_bytes());
    for column in &table.columns {
        put_bytes(&mut out, column.type_path.as_bytes());
        put_varint(&mut out, column.schema_version.into());
        out.push(column.kind as u8);
        out.extend_from_slice(&(column.rows.len() as u32).to_le_bytes());
        let mut previous_index = 0;
        for row in &column.rows {
            match (column.kind, row.entity_index) {
                (ColumnKind::Component, Some(index)) => {
                    put_delta(&mut out, previous_index, index.into());
                    previous_index = index.into();
                }
                (ColumnKind::Resource, None) => {}
                (kind, index) => panic!("a {kind:?} row with entity index {index:?}"),
            }
            put_bytes(&mut out, row.value);
        }
    }
    out
}

/// Rewrites the blob of the save file at `path` with `rewrite` (e.g. [`without_layouts`]),
/// updating its state hash, and writes the file again with the codec it had (every checksum
/// recomputed by `format::encode`).
pub fn rewrite_save_file(path: &Path, rewrite: impl FnOnce(&[u8]) -> Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let mut save = format::decode(&bytes, &DecodeOptions::default()).unwrap();
    let blob = rewrite(&save.bundle.world.ecs_blob);
    save.bundle.world.state_hash = snapshot::state_hash(&blob);
    save.bundle.world.ecs_blob = blob;
    let options = EncodeOptions {
        compression: save.header.compression,
        ..Default::default()
    };
    let encoded = format::encode(&save.meta, &save.bundle, &options).unwrap();
    std::fs::write(path, encoded.to_vec()).unwrap();
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// `value - previous` (wrapping) as a zigzag varint.
fn put_delta(out: &mut Vec<u8>, previous: u64, value: u64) {
    let delta = value.wrapping_sub(previous) as i64;
    put_varint(out, ((delta << 1) ^ (delta >> 63)) as u64);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
