//! Issue 41, defect 1: an intact backup is one whose payload verifies (v1: its CRC; v2: the
//! chunk table's and every chunk's; v3: the seal), not one whose header and metadata read.
//! Pruning that counted a backup with a damaged payload removed the last intact save, and an
//! import that took such a file for the slot's head failed or placed saves against it.
//!
//! Beside the examples, a property test searches sequences of saves and bit flips at
//! rest, under 0, 1 and 3 backups and every format version, for a prune that removes a backup
//! the slot still needed, or a load that returns anything but the newest intact save.

use crate::common::fixtures;

use keepsake_core::SlotId;
use keepsake_core::format::{self, EncodeOptions, PayloadLayout, SaveMeta, SealKey};
use keepsake_core::store::{ImportOutcome, SlotStore, StoreConfig, StoreError};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use uuid::Uuid;

const SLOT: SlotId = SlotId::Manual(0);
const KEY: SealKey = SealKey::from_bytes([0x41; 32]);

/// The format versions a store writes.
#[derive(Clone, Copy, Debug)]
enum Version {
    Whole,
    Chunked,
    Sealed,
}

fn config(root: &Path, backups: u16, version: Version) -> StoreConfig {
    let config = StoreConfig::new(root).backups(backups);
    match version {
        Version::Whole => {
            let mut config = config;
            config.encode.layout = PayloadLayout::Whole;
            config
        }
        Version::Chunked => config,
        Version::Sealed => config.seal(KEY),
    }
}

fn save(store: &SlotStore, seq: u64) -> PathBuf {
    let meta = fixtures::meta(SLOT, seq);
    store
        .save(SLOT, meta, &fixtures::bundle(20_000, seq))
        .unwrap()
        .path
}

/// Flips a bit of the file's last byte: inside the payload, where a listing never looks.
fn damage_last_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    *bytes.last_mut().unwrap() ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

fn loaded_id(store: &SlotStore) -> Result<Uuid, StoreError> {
    store.load(SLOT).map(|loaded| loaded.meta.save_id)
}

/// The example, generalised to `b` backups: save 1, then `b` saves each damaged in its
/// payload, then one more damaged the same way: save 1 must still load. It failed before the
/// fix for 1 and 3 backups (save 1 was pruned; the slot loaded nothing).
#[test]
fn a_backup_with_a_damaged_payload_does_not_count_as_one() {
    for version in [Version::Whole, Version::Chunked, Version::Sealed] {
        for backups in [1, 3] {
            let dir = tempfile::tempdir().unwrap();
            let store = SlotStore::open(config(dir.path(), backups, version)).unwrap();
            save(&store, 1);
            for seq in 2..=u64::from(backups) + 2 {
                damage_last_byte(&save(&store, seq));
            }
            let what = format!("{version:?} with {backups} backups");
            assert_eq!(
                loaded_id(&store).unwrap_or_else(|e| panic!("{what}: {e}")),
                fixtures::meta(SLOT, 1).save_id,
                "{what}"
            );
        }
    }
}

/// The intact backups the slot has are enough: a prune still removes what lies beyond them.
#[test]
fn intact_backups_beyond_the_configured_number_are_still_pruned() {
    for version in [Version::Whole, Version::Chunked, Version::Sealed] {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::open(config(dir.path(), 1, version)).unwrap();
        save(&store, 1);
        save(&store, 2);
        damage_last_byte(&save(&store, 3));
        save(&store, 4);
        // 4 heads; 3 is damaged (kept: it is newer than the backup); 2 is the backup; 1 goes.
        assert_eq!(store.generations(SLOT).unwrap(), [4, 3, 2], "{version:?}");
    }
}

fn remote_file(seq: u64, version: Version) -> Vec<u8> {
    let mut options = EncodeOptions::default();
    match version {
        Version::Whole => options.layout = PayloadLayout::Whole,
        Version::Chunked => {}
        Version::Sealed => options.seal = format::Sealing::Key(KEY),
    }
    let meta = fixtures::meta(SLOT, seq);
    format::encode(&meta, &fixtures::bundle(20_000, seq), &options)
        .unwrap()
        .to_vec()
}

fn import(store: &SlotStore, seq: u64, version: Version) -> Result<ImportOutcome, StoreError> {
    let file = remote_file(seq, version);
    store.import(store.decode_import(&file).unwrap())
}

/// An import decides where the arriving save goes against the newest generation that verifies.
/// Before the fix a newest generation with a damaged payload was taken for the head: an
/// arriving save made before it was placed below it by copying it, which failed, so the save
/// could never arrive.
#[test]
fn an_import_places_saves_against_the_newest_generation_that_verifies() {
    for version in [Version::Whole, Version::Chunked, Version::Sealed] {
        for (arriving, heads) in [(2, true), (0, false)] {
            let dir = tempfile::tempdir().unwrap();
            let store = SlotStore::open(config(dir.path(), 3, version)).unwrap();
            save(&store, 1);
            damage_last_byte(&save(&store, 3));
            let what = format!("{version:?}, arriving save {arriving}");
            let outcome =
                import(&store, arriving, version).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ImportOutcome::Placed(receipt) = outcome else {
                panic!("{what}: not placed: {outcome:?}");
            };
            assert_eq!(receipt.heads_slot, heads, "{what}");
            assert_eq!(
                receipt.previous_head.map(|meta| meta.save_id),
                Some(fixtures::meta(SLOT, 1).save_id),
                "{what}"
            );
            let newest_intact = if heads { arriving } else { 1 };
            assert_eq!(
                loaded_id(&store).unwrap(),
                fixtures::meta(SLOT, newest_intact).save_id,
                "{what}"
            );
        }
    }
}

/// A save whose only local copy is damaged is placed again when it arrives intact.
#[test]
fn an_intact_copy_of_a_save_damaged_here_is_placed_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(config(dir.path(), 3, Version::Chunked)).unwrap();
    save(&store, 1);
    damage_last_byte(&save(&store, 2));
    let outcome = import(&store, 2, Version::Chunked).unwrap();
    assert!(
        matches!(&outcome, ImportOutcome::Placed(receipt) if receipt.heads_slot),
        "{outcome:?}"
    );
    assert_eq!(loaded_id(&store).unwrap(), fixtures::meta(SLOT, 2).save_id);
}

/// Issue 49 (simulator seed 349, cut down): a sync round that repairs a slot fetched the
/// player's own old save again, one the slot's head was made in view of (its list of ids no
/// longer named it). Placed below the head, it counted as the backup and pushed the real one
/// out; when the disk then damaged the head, the slot loaded that old save, older than the
/// backup the player had. Such a save is not placed: the slot keeps its head and backups.
#[test]
fn a_save_the_head_was_made_over_never_takes_the_place_of_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(config(dir.path(), 1, Version::Chunked)).unwrap();
    let saved = |seq| {
        let meta = fixtures::meta(SLOT, seq).with_device("desk", "desk");
        let receipt = store.save(SLOT, meta, &fixtures::bundle(20_000, seq));
        receipt.unwrap()
    };
    let first = saved(1);
    let old = store.read_generation_bytes(SLOT, first.generation).unwrap();
    saved(2);
    let head = saved(3);
    assert_eq!(store.generations(SLOT).unwrap(), [3, 2]);
    let outcome = store.import(store.decode_import(&old).unwrap()).unwrap();
    assert_eq!(
        outcome,
        ImportOutcome::Superseded {
            slot: SLOT,
            by: head.save_id
        }
    );
    assert_eq!(store.generations(SLOT).unwrap(), [3, 2], "nothing placed");
    damage_last_byte(&head.path);
    assert_eq!(
        loaded_id(&store).unwrap(),
        fixtures::meta(SLOT, 2).save_id,
        "the backup, not the older save, is what a load falls back to"
    );
}

/// One step of the search.
#[derive(Clone, Debug)]
enum Step {
    Save,
    /// Flip one bit of an intact generation: which one (modulo how many there are) and where
    /// (a fraction of its length, in millionths).
    Damage {
        which: usize,
        at: u32,
        bit: u8,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::Save),
        2 => (any::<usize>(), 0..1_000_000u32, 0..8u8)
            .prop_map(|(which, at, bit)| Step::Damage { which, at, bit }),
    ]
}

/// What the test knows of a generation it made.
struct Made {
    generation: u64,
    save_id: Uuid,
    intact: bool,
}

/// Runs `steps` and checks after each: a save never removes one of the newest `backups`
/// intact generations below it, and a load returns the newest intact save (a bit flip
/// anywhere in a file damages it: CRC-32 catches every single-bit error, and every byte is
/// under a checksum or the seal).
fn run(steps: &[Step], backups: u16, version: Version) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(config(dir.path(), backups, version)).unwrap();
    let mut made: Vec<Made> = Vec::new(); // newest first
    for (seq, step) in steps.iter().enumerate() {
        match step {
            Step::Save => {
                let needed: Vec<u64> = made
                    .iter()
                    .filter(|m| m.intact)
                    .take(usize::from(backups))
                    .map(|m| m.generation)
                    .collect();
                let meta = SaveMeta {
                    save_id: Uuid::from_u128(seq as u128 + 1),
                    ..fixtures::meta(SLOT, seq as u64)
                };
                let receipt = store
                    .save(SLOT, meta.clone(), &fixtures::bundle(2_000, seq as u64))
                    .unwrap();
                let present = store.generations(SLOT).unwrap();
                for generation in &needed {
                    prop_assert!(
                        present.contains(generation),
                        "save {seq} pruned intact backup {generation} ({present:?})"
                    );
                }
                made.retain(|m| present.contains(&m.generation));
                made.insert(
                    0,
                    Made {
                        generation: receipt.generation,
                        save_id: meta.save_id,
                        intact: true,
                    },
                );
            }
            Step::Damage { which, at, bit } => {
                let intact: Vec<&mut Made> = made.iter_mut().filter(|m| m.intact).collect();
                let count = intact.len();
                let Some(target) = intact.into_iter().nth(which % count.max(1)) else {
                    continue;
                };
                let path = store.path_of(SLOT, target.generation);
                let mut bytes = std::fs::read(&path).unwrap();
                let offset = (bytes.len() as u64 * u64::from(*at) / 1_000_000) as usize;
                bytes[offset] ^= 1 << bit;
                std::fs::write(&path, bytes).unwrap();
                target.intact = false;
            }
        }
        let newest_intact = made.iter().find(|m| m.intact).map(|m| m.save_id);
        match (loaded_id(&store), newest_intact) {
            (Ok(id), Some(expected)) => prop_assert_eq!(id, expected, "after step {}", seq),
            (Err(StoreError::AllGenerationsDamaged { .. }), None) => {}
            (Err(StoreError::EmptySlot(_)), None) if made.is_empty() => {}
            (got, expected) => {
                prop_assert!(
                    false,
                    "after step {seq}: load {got:?}, expected {expected:?}"
                )
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// No sequence of saves and bit flips at rest makes a prune remove a needed backup or a
    /// load return anything but the newest intact save.
    #[test]
    fn no_prune_removes_a_backup_the_slot_still_needs(
        steps in proptest::collection::vec(step(), 1..16),
        backups in prop_oneof![Just(0u16), Just(1), Just(3)],
        version in prop_oneof![Just(Version::Whole), Just(Version::Chunked), Just(Version::Sealed)],
    ) {
        run(&steps, backups, version)?;
    }
}
