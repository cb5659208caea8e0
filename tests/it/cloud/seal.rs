//! Sealed saves through cloud verification (no server needed): a download is decoded in full
//! with the game's key before it may become a local save, so sealed files from the player's
//! other devices pass, and edited, foreign or (unless the game accepts them) unsealed ones do not.

use super::world_bundle;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{Rejection, RemoteName, verify_remote_save};
use bevy_keepsake::format::{
    self, EncodeOptions, FormatError, SaveMeta, SealKey, Sealing, Timestamp, UnsealedSaves,
};
use bevy_keepsake::store::{SlotStore, StoreConfig};

const KEY: SealKey = SealKey::from_bytes([0x6B; 32]);
const DEVICE: &str = "0123456789ab";

/// A save another device uploaded, sealed under `seal`, with its remote name.
fn downloaded(seal: Sealing) -> (RemoteName, Vec<u8>) {
    let slot = SlotId::Manual(1);
    let meta = SaveMeta {
        created_at: Timestamp::from_unix_millis(1_763_700_000_000),
        ..SaveMeta::new(slot).with_device(DEVICE, "desktop")
    };
    let options = EncodeOptions {
        seal,
        ..EncodeOptions::default()
    };
    let bytes = format::encode(&meta, &world_bundle(), &options)
        .unwrap()
        .to_vec();
    (RemoteName::for_save(&meta, DEVICE), bytes)
}

fn store(config: StoreConfig) -> (tempfile::TempDir, SlotStore) {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig {
        root: dir.path().to_path_buf(),
        ..config
    };
    (dir, SlotStore::open(config).unwrap())
}

fn format_rejection(result: Result<impl std::fmt::Debug, Rejection>) -> FormatError {
    match result {
        Err(Rejection::Format(error)) => error,
        other => panic!("expected a format rejection, got {other:?}"),
    }
}

#[test]
fn a_sealed_save_from_another_device_verifies_and_imports_with_the_games_key() {
    let (_dir, laptop) = store(StoreConfig::new("").seal(KEY));
    let (name, bytes) = downloaded(Sealing::Key(KEY));
    let verified = verify_remote_save(&name, &bytes, &laptop).unwrap();
    laptop.import(verified.into_import()).unwrap();
    assert_eq!(
        laptop.load(SlotId::Manual(1)).unwrap().bundle,
        world_bundle()
    );
}

#[test]
fn edited_foreign_and_keyless_sealed_downloads_are_refused() {
    let (_dir, laptop) = store(StoreConfig::new("").seal(KEY));
    let (name, bytes) = downloaded(Sealing::Key(KEY.bound_to(b"someone else")));
    let error = format_rejection(verify_remote_save(&name, &bytes, &laptop));
    assert!(matches!(error, FormatError::SealBroken { .. }), "{error}");

    let (_dir, keyless) = store(StoreConfig::new(""));
    let (name, bytes) = downloaded(Sealing::Key(KEY));
    let error = format_rejection(verify_remote_save(&name, &bytes, &keyless));
    assert!(matches!(error, FormatError::SealedNeedsKey), "{error}");
}

#[test]
fn an_unsealed_download_passes_a_sealed_game_only_when_it_accepts_unsealed_saves() {
    let (name, bytes) = downloaded(Sealing::Off);
    let (_dir, refusing) = store(StoreConfig::new("").seal(KEY));
    let error = format_rejection(verify_remote_save(&name, &bytes, &refusing));
    assert!(matches!(error, FormatError::UnsealedRefused), "{error}");

    let (_dir, accepting) = store(
        StoreConfig::new("")
            .seal(KEY)
            .unsealed(UnsealedSaves::Accept),
    );
    assert!(verify_remote_save(&name, &bytes, &accepting).is_ok());
}
