//! The body of the `decode_layout` fuzz target, shared with the corpus replay in
//! `tests/it/fuzz_corpus.rs` (which runs it on stable Rust, without libFuzzer).
//!
//! An input is a split byte `n`, then `n` bytes read as a stored type layout (the section each
//! column of a version-2 blob carries), then value bytes read by that layout.

use bevy_keepsake::snapshot::schema::{codec, stored, text};

/// Runs one input: never a panic; a layout that decodes re-encodes to its bytes.
pub fn run(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (layout_bytes, value) = rest.split_at((split as usize).min(rest.len()));
    let Ok(layout) = codec::decode_bytes(layout_bytes) else {
        return;
    };
    assert_eq!(
        layout.to_bytes(),
        layout_bytes,
        "a layout re-encodes to its bytes"
    );
    let _ = text::pretty(&layout);
    if let Ok(read) = stored::read(&layout, value) {
        let _ = read.to_string();
    }
    let _ = stored::read_prefix(&layout, value);
    let _ = stored::reads_whole(&layout, value);
}

/// An input for [`run`]: `layout` (at most 255 bytes, else cut) and `value`.
pub fn input(layout: &[u8], value: &[u8]) -> Vec<u8> {
    let layout = &layout[..layout.len().min(255)];
    let mut data = vec![layout.len() as u8];
    data.extend_from_slice(layout);
    data.extend_from_slice(value);
    data
}
