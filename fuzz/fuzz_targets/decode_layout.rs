//! Any bytes as a stored type layout (the section every column of a version-2 blob carries),
//! and a layout that reads as the layout of any value bytes: never a panic, never an
//! allocation beyond the input (deep nesting, huge counts and unknown tags are typed errors).
#![no_main]

use bevy_keepsake::snapshot::schema::{codec, stored, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte splits the input into a layout and a value.
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (layout_bytes, value) = rest.split_at((split as usize).min(rest.len()));
    let Ok(layout) = codec::decode_bytes(layout_bytes) else {
        return;
    };
    assert_eq!(layout.to_bytes(), layout_bytes, "a layout re-encodes to its bytes");
    let _ = text::pretty(&layout);
    if let Ok(read) = stored::read(&layout, value) {
        let _ = read.to_string();
    }
    let _ = stored::read_prefix(&layout, value);
});
