//! The seal key sealed saves are opened with, and the reading options it makes.
//!
//! The key is read from a file (`--key-file PATH`) or from the `KEEPSAKE_KEY` environment
//! variable, never from the command line: an argument shows in shell history and in every
//! process list, and an argument parser quotes a malformed one back in its error. Neither the
//! key nor any part of a malformed one is ever printed. The old `--key` is refused with a
//! message saying what to use instead (see [`REMOVED_KEY_FLAG`]).

use keepsake_core::format::{DecodeOptions, SealKey, Sealing, UnsealedSaves};
use std::io::Read;
use std::path::Path;

/// The environment variable the seal key may be given in (64 hexadecimal digits).
pub const KEY_VARIABLE: &str = "KEEPSAKE_KEY";

/// What `--key` says now. Its value is not repeated: it may be the key.
pub const REMOVED_KEY_FLAG: &str = "--key is no longer accepted (a seal key on the command line shows in shell history and process lists; the value given was not printed): put the key in a file and pass --key-file PATH, or set KEEPSAKE_KEY";

/// The value given to the old `--key`, dropped as soon as it is parsed (so not even the
/// parsed arguments hold it).
#[derive(Clone, Copy, Debug)]
pub struct Forgotten;

/// Parses the old `--key`'s value into nothing. Never fails: a parser error would quote it.
pub fn forget_key(_value: &str) -> Result<Forgotten, std::convert::Infallible> {
    Ok(Forgotten)
}

/// The largest key file read: 64 digits with a line ending or some spaces, or 32 bytes.
const MAX_KEY_FILE: u64 = 1024;

/// The key to open sealed saves with: from `--key-file` when given, else from
/// [`KEY_VARIABLE`] when it is set and not empty, else none. `removed_flag`: the old `--key`
/// was passed, which is an error.
pub fn key(file: Option<&Path>, removed_flag: bool) -> Result<Option<SealKey>, String> {
    if removed_flag {
        return Err(REMOVED_KEY_FLAG.to_owned());
    }
    if let Some(path) = file {
        return read_key_file(path).map(Some);
    }
    let Some(value) = std::env::var_os(KEY_VARIABLE).filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    let text = value.to_str().ok_or_else(|| {
        format!("{KEY_VARIABLE} holds no seal key: it is not text (its value is not printed)")
    })?;
    from_hex(text).map(Some).ok_or_else(|| {
        format!(
            "{KEY_VARIABLE} holds no seal key: a seal key is 64 hexadecimal digits, and this value has {} characters or a character that is not a hexadecimal digit (its value is not printed)",
            text.trim().chars().count()
        )
    })
}

/// Reads a key file: 64 hexadecimal digits (surrounding whitespace ignored) or the key's 32
/// bytes. Any file the system can read is taken, a pipe too (`--key-file <(pass show key)`),
/// and no more than [`MAX_KEY_FILE`] bytes of it are read.
fn read_key_file(path: &Path) -> Result<SealKey, String> {
    let shown = path.display();
    let file = std::fs::File::open(path)
        .map_err(|error| format!("cannot read the key file {shown}: {error}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read the key file {shown}: {error}"))?;
    if let Ok(raw) = <[u8; 32]>::try_from(&bytes[..]) {
        return Ok(SealKey::from_bytes(raw));
    }
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(from_hex)
        .ok_or_else(|| {
            format!(
                "the key file {shown} holds no seal key: it must hold 64 hexadecimal digits or the key's 32 bytes (it holds {} bytes; its contents are not printed)",
                bytes.len()
            )
        })
}

/// The key in `text`, if it is 64 hexadecimal digits. The library's error is not passed on: it
/// quotes the first character that is not a digit, which may belong to a secret.
fn from_hex(text: &str) -> Option<SealKey> {
    SealKey::from_hex(text).ok()
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
