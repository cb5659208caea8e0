//! Any bytes through the save file decoder: a typed error or a save, never a panic. Each input
//! is also tried with its checksums made valid (for a version-2 file, the chunk table's and
//! every chunk's too), so the chunk table checks, the (parallel) decompressor and the postcard
//! decoders behind them are fuzzed too. The corpus holds version-1, version-2 and version-3
//! (sealed) seeds; every input is read without a key and with [`crc_fixup::FUZZ_SEAL_KEY`], and
//! a version-3 input is also sealed for real under that key first (its bytes between nonce and
//! tag taken as the plaintext), so the chunk table and chunks behind a seal are fuzzed too.
#![no_main]

#[path = "../../keepsake-core/tests/core/common/crc_fixup.rs"]
mod crc_fixup;

use bevy_keepsake::format::{self, DecodeOptions, SealKey, Sealing, UnsealedSaves};
use libfuzzer_sys::fuzz_target;

fn decode_all(data: &[u8]) {
    let keyed = DecodeOptions::new()
        .seal(Sealing::Key(SealKey::from_bytes(crc_fixup::FUZZ_SEAL_KEY)))
        .unsealed(UnsealedSaves::Accept);
    for options in [DecodeOptions::default(), keyed] {
        let _ = format::decode(data, &options);
        let _ = format::decode_from(&mut &data[..], &options);
        let _ = format::read_summary(&mut &data[..], &options);
        let _ = format::read_thumbnail(&mut std::io::Cursor::new(data), &options);
        let _ = format::read_chunk_table(data, &options);
    }
}

fuzz_target!(|data: &[u8]| {
    decode_all(data);
    if let Some(fixed) = crc_fixup::with_valid_checksums(data) {
        decode_all(&fixed);
    }
    if let Some(sealed) = crc_fixup::with_valid_seal(data, &crc_fixup::FUZZ_SEAL_KEY) {
        decode_all(&sealed);
    }
});
