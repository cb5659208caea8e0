//! Any bytes through the save file decoder: a typed error or a save, never a panic.
#![no_main]

use bevy_keepsake::format::{self, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = format::decode(data, &limits);
    let _ = format::read_summary(&mut &data[..], &limits);
    let _ = format::read_thumbnail(&mut std::io::Cursor::new(data), &limits);
});
