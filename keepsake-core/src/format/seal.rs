//! Sealed saves (format version 3): the payload encrypted and authenticated with AES-256-GCM
//! under a key the game holds, the header's fixed fields, the metadata and the thumbnail
//! authenticated with it. The bytes are laid out in the table of the [module docs](super).
//!
//! # Why AES-256-GCM, with a random 96-bit nonce per file
//!
//! Both RustCrypto AEADs the issue names are well kept; on the x86-64 and ARMv8 machines games
//! run on, AES-GCM uses the CPU's AES and carry-less multiply instructions (chosen at run time)
//! and sealed a megabyte in about 0.5 ms on the development machine, against about 1.1 ms for
//! XChaCha20-Poly1305: the seal is paid on every save, and the target is 1.2× an unsealed one.
//!
//! Every file gets a fresh nonce from the operating system's generator, so no (key, nonce) pair
//! is used twice unless two of 2^96 values collide: after 2^32 sealed files under one key (a
//! key is one game's, shared by all its players) the odds are about 2^-33. A collision would
//! let whoever holds both files forge others under that key, which anyone with the game binary
//! can already do (see the README's "Sealed saves"): the seal keeps honest players from
//! editing saves by hand, not a debugger from reading the key. A nonce-misuse-resistant AEAD
//! (AES-GCM-SIV) would cost a second pass over the payload on every save for a protection the
//! threat model does not need.

use super::error::FormatError;
use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use std::fmt;

/// Bytes of the nonce that starts a sealed payload.
pub(crate) const NONCE_LEN: usize = 12;
/// Bytes of the authentication tag that ends a sealed payload.
pub(crate) const TAG_LEN: usize = 16;
/// What sealing adds to a payload: its nonce and its tag.
pub(crate) const SEAL_OVERHEAD: usize = NONCE_LEN + TAG_LEN;

/// HKDF's salt for [`SealKey::bound_to`]: names this use, so the derived key serves nothing else.
const BIND_SALT: &[u8] = b"bevy_keepsake seal key bound to an owner, v1";

/// The 256-bit key a game seals its saves with.
///
/// Generate it once (`openssl rand -hex 32`) and build it into the game: one key per game, so
/// a file from another game never opens; [`bound_to`](Self::bound_to) makes one per player.
/// Its `Debug` output does not show the key.
///
/// There is no constructor from a password: the key ships inside the game, so stretching a
/// short secret into one would make it no harder to find (see the README's "Sealed saves").
///
/// ```
/// use keepsake_core::format::SealKey;
///
/// let key = SealKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")?;
/// assert_eq!(format!("{key:?}"), "SealKey(..)");
/// assert_eq!(key, SealKey::from_bytes(std::array::from_fn(|i| i as u8)));
/// # Ok::<(), keepsake_core::format::SealKeyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SealKey([u8; 32]);

/// Why a text is not a [`SealKey`].
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "a seal key is 64 hexadecimal digits (32 bytes); this one has {digits} characters{bad}",
    bad = match .bad_char { Some(c) => format!(" and {c:?} is not a hexadecimal digit"), None => String::new() }
)]
pub struct SealKeyError {
    /// How many characters the text has (surrounding whitespace removed).
    pub digits: usize,
    /// The first character that is not a hexadecimal digit, if any.
    pub bad_char: Option<char>,
}

impl SealKey {
    /// A key from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        SealKey(bytes)
    }

    /// A key from 64 hexadecimal digits (either case; surrounding whitespace ignored), as
    /// `openssl rand -hex 32` prints one.
    pub fn from_hex(text: &str) -> Result<Self, SealKeyError> {
        let text = text.trim();
        let error = SealKeyError {
            digits: text.chars().count(),
            bad_char: text.chars().find(|c| !c.is_ascii_hexdigit()),
        };
        if error.digits != 64 || error.bad_char.is_some() {
            return Err(error);
        }
        let digit = |at: usize| u8::from_str_radix(&text[at..at + 2], 16);
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            // Every character was checked to be an ASCII hexadecimal digit.
            *byte = digit(2 * i).map_err(|_| error.clone())?;
        }
        Ok(SealKey(bytes))
    }

    /// This key bound to one owner (a player's account id, say): a key of its own, derived
    /// with HKDF-SHA256 (RFC 5869), so a save sealed for one owner does not open for another
    /// ([`FormatError::SealBroken`]): copying a save between players breaks its seal. Bind to
    /// what stays the same wherever the player plays (an account, not a device), so cloud sync
    /// between their devices keeps working.
    ///
    /// ```
    /// use keepsake_core::format::SealKey;
    ///
    /// let game = SealKey::from_bytes([7; 32]);
    /// assert_eq!(game.bound_to(b"player-1"), game.bound_to(b"player-1"));
    /// assert_ne!(game.bound_to(b"player-1"), game.bound_to(b"player-2"));
    /// assert_ne!(game.bound_to(b"player-1"), game);
    /// ```
    #[must_use]
    pub fn bound_to(&self, owner: &[u8]) -> SealKey {
        let hkdf = hkdf::Hkdf::<sha2::Sha256>::new(Some(BIND_SALT), &self.0);
        let mut bound = [0u8; 32];
        hkdf.expand(owner, &mut bound)
            .expect("32 bytes is within HKDF-SHA256's 8160-byte output");
        SealKey(bound)
    }

    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(&self.0.into())
    }
}

/// The key stays out of logs and panic messages.
impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// Whether saves are sealed: set in [`EncodeOptions::seal`](super::EncodeOptions) for writing
/// and in [`DecodeOptions::seal`](super::DecodeOptions) for reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sealing {
    /// Files are written unsealed (format version 2, or 1 on request). A reader without a key
    /// reads unsealed files, and a sealed file's header and metadata (for listings), but not its
    /// payload ([`FormatError::SealedNeedsKey`]).
    #[default]
    Off,
    /// Files are written sealed with this key (format version 3); a reader opens sealed files
    /// with it ([`FormatError::SealBroken`] when the file was edited or sealed with another key)
    /// and treats unsealed ones as [`DecodeOptions::unsealed`](super::DecodeOptions) says.
    Key(SealKey),
}

/// What a reader holding a key does with an unsealed file (one written before the game sealed
/// its saves, or by hand).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UnsealedSaves {
    /// Refused with [`FormatError::UnsealedRefused`]: a player cannot replace a sealed save with
    /// an edited unsealed one.
    #[default]
    Refuse,
    /// Read as they are, so saves made before the game sealed its saves keep loading (the next
    /// save of the slot is sealed). Players can then edit progress by writing unsealed files.
    Accept,
}

/// A fresh nonce from the operating system's generator.
pub(crate) fn random_nonce() -> Result<[u8; NONCE_LEN], FormatError> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|error| FormatError::Io {
        action: "draw a nonce to seal",
        source: std::io::Error::other(error.to_string()),
    })?;
    Ok(nonce)
}

/// Seals `plaintext` (the version-2 payload: chunk table, then chunks) into a sealed payload:
/// `nonce | ciphertext | tag`, authenticating `associated` (header fields, metadata, thumbnail)
/// with it.
pub(crate) fn seal(
    key: &SealKey,
    nonce: [u8; NONCE_LEN],
    associated: &[u8],
    plaintext: &[&[u8]],
) -> Result<Vec<u8>, FormatError> {
    let len: usize = plaintext.iter().map(|part| part.len()).sum();
    let mut sealed = Vec::with_capacity(len + SEAL_OVERHEAD);
    sealed.extend_from_slice(&nonce);
    for part in plaintext {
        sealed.extend_from_slice(part);
    }
    let tag = key
        .cipher()
        .encrypt_inout_detached(
            &Nonce::from(nonce),
            associated,
            (&mut sealed[NONCE_LEN..]).into(),
        )
        // Only a message over 64 GiB is refused, far beyond the payload limit.
        .map_err(|_| FormatError::SealBroken {
            what: "the payload could not be sealed (over AES-GCM's message size)",
        })?;
    sealed.extend_from_slice(&tag);
    Ok(sealed)
}

/// Opens the sealed payload `sealed` in place: on success its ciphertext is the plaintext, and
/// the returned range is where it lies within `sealed`. A wrong key, or any edited byte of the
/// payload or of `associated`, is [`FormatError::SealBroken`].
pub(crate) fn open_in_place(
    key: &SealKey,
    associated: &[u8],
    sealed: &mut [u8],
) -> Result<std::ops::Range<usize>, FormatError> {
    let broken = FormatError::SealBroken {
        what: "the header, metadata, thumbnail or payload was changed since the game sealed it, or it was sealed with another key (another game's, or a build with a different key)",
    };
    if sealed.len() < SEAL_OVERHEAD {
        return Err(broken);
    }
    let text = NONCE_LEN..sealed.len() - TAG_LEN;
    let (head, tail) = sealed.split_at_mut(text.end);
    let (nonce, ciphertext) = head.split_at_mut(NONCE_LEN);
    let nonce: [u8; NONCE_LEN] = (&*nonce).try_into().map_err(|_| FormatError::SealBroken {
        what: "the nonce is cut short",
    })?;
    let tag: [u8; TAG_LEN] = (&*tail).try_into().map_err(|_| FormatError::SealBroken {
        what: "the tag is cut short",
    })?;
    key.cipher()
        .decrypt_inout_detached(
            &Nonce::from(nonce),
            associated,
            ciphertext.into(),
            &Tag::from(tag),
        )
        .map_err(|_| broken)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: SealKey = SealKey::from_bytes([7; 32]);

    #[test]
    fn a_sealed_payload_opens_with_its_key_and_associated_data_only() {
        let sealed = seal(&KEY, [1; NONCE_LEN], b"meta", &[b"chunk ", b"table"]).unwrap();
        assert_eq!(sealed.len(), 11 + SEAL_OVERHEAD);

        let mut opened = sealed.clone();
        let range = open_in_place(&KEY, b"meta", &mut opened).unwrap();
        assert_eq!(&opened[range], b"chunk table");

        let other = SealKey::from_bytes([8; 32]);
        for (key, associated) in [(&other, &b"meta"[..]), (&KEY, &b"Meta"[..])] {
            let mut copy = sealed.clone();
            assert!(matches!(
                open_in_place(key, associated, &mut copy),
                Err(FormatError::SealBroken { .. })
            ));
        }
        for at in 0..sealed.len() {
            let mut edited = sealed.clone();
            edited[at] ^= 0x10;
            assert!(
                open_in_place(&KEY, b"meta", &mut edited).is_err(),
                "byte {at}"
            );
        }
    }

    #[test]
    fn a_payload_shorter_than_nonce_and_tag_is_a_broken_seal() {
        let mut short = [0u8; SEAL_OVERHEAD - 1];
        assert!(matches!(
            open_in_place(&KEY, b"", &mut short),
            Err(FormatError::SealBroken { .. })
        ));
    }

    #[test]
    fn hex_keys_must_be_64_hex_digits() {
        assert!(SealKey::from_hex(&"ab".repeat(32)).is_ok());
        assert_eq!(
            SealKey::from_hex("abc"),
            Err(SealKeyError {
                digits: 3,
                bad_char: None
            })
        );
        let bad = format!("{}xz", "0".repeat(62));
        let error = SealKey::from_hex(&bad).unwrap_err();
        assert_eq!(error.bad_char, Some('x'));
        assert!(error.to_string().contains("'x' is not a hexadecimal digit"));
        // Multi-byte characters are counted, not sliced through.
        assert!(SealKey::from_hex(&format!("{}é", "0".repeat(63))).is_err());
    }

    #[test]
    fn nonces_differ_between_calls() {
        assert_ne!(random_nonce().unwrap(), random_nonce().unwrap());
    }
}
