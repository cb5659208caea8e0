//! `--key`: the seal key sealed saves are opened with, and the reading options it makes.

use bevy_keepsake::format::{DecodeOptions, SealKey, Sealing, UnsealedSaves};
use std::path::Path;

/// Parses `--key`: a file holding the key (64 hex digits, or its 32 bytes) when one exists at
/// that path, else the key's 64 hexadecimal digits themselves.
pub fn parse_key(argument: &str) -> Result<SealKey, String> {
    let path = Path::new(argument);
    if !path.is_file() {
        return SealKey::from_hex(argument).map_err(|error| {
            format!("{error}; or give the path of a file holding the key (no such file here)")
        });
    }
    let bytes = std::fs::read(path).map_err(|error| format!("cannot read {argument}: {error}"))?;
    if let Ok(raw) = <[u8; 32]>::try_from(&bytes[..]) {
        return Ok(SealKey::from_bytes(raw));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{argument} holds neither 32 bytes nor 64 hexadecimal digits"))?;
    SealKey::from_hex(&text).map_err(|error| format!("{argument}: {error}"))
}

/// How the commands read files: sealed ones with the key when given. The tool reads unsealed
/// files either way (it looks at saves; it does not enforce a game's policy), and says which
/// files are sealed.
pub fn decode_options(key: Option<SealKey>) -> DecodeOptions {
    match key {
        None => DecodeOptions::default(),
        Some(key) => DecodeOptions::new()
            .seal(Sealing::Key(key))
            .unsealed(UnsealedSaves::Accept),
    }
}
