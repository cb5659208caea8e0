//! A corpus of damaged slots: for each kind of damage, what a load returns is asserted, and no
//! load changes any file.

use crate::common;

use common::test_fs::snapshot_dir;
use common::{crc_fixup, fixtures};
use keepsake_core::SlotId;
use keepsake_core::format::FORMAT_VERSION;
use keepsake_core::store::{SlotStore, StoreConfig, StoreError};
use std::path::{Path, PathBuf};

const SLOT: SlotId = SlotId::Manual(0);

/// A slot with generations 1, 2, 3 (seeds 1, 2, 3), each over 8 KiB.
fn three_generations(root: &Path) -> (SlotStore, Vec<PathBuf>) {
    let store = SlotStore::open(StoreConfig::new(root)).unwrap();
    let paths = (1..=3)
        .map(|seq| {
            store
                .save(
                    SLOT,
                    fixtures::meta(SLOT, seq),
                    &fixtures::bundle(20_000, seq),
                )
                .unwrap()
                .path
        })
        .collect();
    (store, paths)
}

/// What a load is expected to return after the damage.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Loads the save with this seed, from this generation, restored from a backup or not.
    Loads {
        seed: u64,
        generation: u64,
        from_backup: bool,
    },
    AllDamaged,
    NewerFormat,
}

type Damage = fn(&[PathBuf]);

fn rewrite(path: &Path, change: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    change(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

fn cases() -> Vec<(&'static str, Damage, Expect)> {
    use Expect::*;
    let fallback = Loads {
        seed: 2,
        generation: 2,
        from_backup: true,
    };
    vec![
        (
            "header bit flip",
            |p| rewrite(&p[2], |b| b[17] ^= 0x20),
            fallback,
        ),
        (
            "version bit flip (claims version 9)",
            |p| rewrite(&p[2], |b| b[4] ^= 0x08),
            fallback,
        ),
        (
            "metadata bit flip",
            |p| rewrite(&p[2], |b| b[50] ^= 0x01),
            fallback,
        ),
        (
            "payload bit flip",
            |p| {
                rewrite(&p[2], |b| {
                    let last = b.len() - 10;
                    b[last] ^= 0x80
                })
            },
            fallback,
        ),
        (
            "truncated to half",
            |p| rewrite(&p[2], |b| b.truncate(b.len() / 2)),
            fallback,
        ),
        (
            "zeroed 4 KiB page",
            |p| rewrite(&p[2], |b| b[4096..8192].fill(0)),
            fallback,
        ),
        (
            "zeroed whole file",
            |p| rewrite(&p[2], |b| b.fill(0)),
            fallback,
        ),
        (
            "zero length",
            |p| std::fs::write(&p[2], b"").unwrap(),
            fallback,
        ),
        (
            "foreign bytes",
            |p| std::fs::write(&p[2], b"PK\x03\x04 not a save at all").unwrap(),
            fallback,
        ),
        (
            "two newest damaged",
            |p| {
                rewrite(&p[2], |b| b[100] ^= 1);
                rewrite(&p[1], |b| b[100] ^= 1);
            },
            Loads {
                seed: 1,
                generation: 1,
                from_backup: true,
            },
        ),
        (
            "all damaged",
            |p| {
                for path in p {
                    rewrite(path, |b| b[100] ^= 1);
                }
            },
            AllDamaged,
        ),
        (
            "newest deleted",
            |p| std::fs::remove_file(&p[2]).unwrap(),
            Loads {
                seed: 2,
                generation: 2,
                from_backup: false,
            },
        ),
        // Swapped generations are intact files under each other's names: the newest name wins.
        (
            "swapped newest and oldest",
            |p| {
                let tmp = p[0].with_extension("swap");
                std::fs::rename(&p[0], &tmp).unwrap();
                std::fs::rename(&p[2], &p[0]).unwrap();
                std::fs::rename(&tmp, &p[2]).unwrap();
            },
            Loads {
                seed: 1,
                generation: 3,
                from_backup: false,
            },
        ),
        (
            "newer format version",
            |p| {
                rewrite(&p[2], |b| {
                    b[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
                    // A newer build writes its version under an intact header checksum.
                    *b = crc_fixup::with_valid_checksums(b).unwrap();
                })
            },
            NewerFormat,
        ),
    ]
}

#[test]
fn every_kind_of_damage_has_the_asserted_outcome_and_changes_nothing() {
    for (name, damage, expect) in cases() {
        let dir = tempfile::tempdir().unwrap();
        let (store, paths) = three_generations(dir.path());
        damage(&paths);
        let before = snapshot_dir(store.dir());
        let result = store.load(SLOT);
        match (&expect, result) {
            (
                Expect::Loads {
                    seed,
                    generation,
                    from_backup,
                },
                Ok(loaded),
            ) => {
                assert_eq!(loaded.bundle, fixtures::bundle(20_000, *seed), "{name}");
                assert_eq!(loaded.generation, *generation, "{name}");
                assert_eq!(loaded.restored_from_backup(), *from_backup, "{name}");
            }
            (Expect::AllDamaged, Err(StoreError::AllGenerationsDamaged { failures, .. })) => {
                assert_eq!(failures.len(), 3, "{name}");
            }
            (Expect::NewerFormat, Err(StoreError::NewerFormat { .. })) => {}
            (expect, result) => panic!("{name}: expected {expect:?}, got {result:?}"),
        }
        assert_eq!(
            before,
            snapshot_dir(store.dir()),
            "{name}: the load changed files"
        );
        // The listing agrees on whether the slot can be shown.
        let listing = store.list().unwrap();
        let entry = listing.iter().find(|e| e.slot == SLOT).unwrap();
        if matches!(expect, Expect::Loads { .. }) {
            assert!(entry.shown_save().is_some(), "{name}: {entry:?}");
        }
    }
}
