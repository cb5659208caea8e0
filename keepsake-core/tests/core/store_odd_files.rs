//! Entries named like saves that are not regular files, and files whose reported size lies:
//! a FIFO would block a reader until something writes to it, a link to `/dev/zero` reports a
//! size of 0 and never ends. Loads, listings, saves and the cloud's reads refuse them promptly
//! with a typed error naming the file, and no read holds more than the limits allow.
//!
//! Each operation runs under a watchdog: on code that blocks, the test fails after 30 s instead
//! of hanging the suite.

#![cfg(unix)]

use crate::common::fixtures;
use keepsake_core::SlotId;
use keepsake_core::store::testing::Forward;
use keepsake_core::store::{ReadFile, SlotStatus, SlotStore, StoreConfig, StoreError};
use std::ffi::CString;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

const SLOT: SlotId = SlotId::Manual(0);

/// Runs `work` on a thread of its own and returns its result, failing the test if it has not
/// returned within 30 s (it blocked, or read without end).
fn within_30_s<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match receiver.recv_timeout(Duration::from_secs(30)) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not return within 30 s: it blocked or read without end")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

fn make_fifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

fn link_to_dev_zero(path: &Path) {
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// What stands in for a generation.
struct Odd {
    label: &'static str,
    /// Puts it at a path.
    make: fn(&Path),
    /// What the store calls it.
    what: &'static str,
}

const ODD_ENTRIES: [Odd; 2] = [
    Odd {
        label: "a FIFO",
        make: make_fifo,
        what: "a FIFO (named pipe)",
    },
    Odd {
        label: "a link to /dev/zero",
        make: link_to_dev_zero,
        what: "a character device",
    },
];

fn saved(store: &SlotStore, seq: u64) -> PathBuf {
    let receipt = store.save(
        SLOT,
        fixtures::meta(SLOT, seq),
        &fixtures::bundle(2_000, seq),
    );
    receipt.unwrap().path
}

fn is_not_a_file(error: &StoreError, path: &Path, what: &str) -> bool {
    matches!(error, StoreError::NotAFile { path: p, what: w } if p == path && *w == what)
        && error.to_string().contains(&path.display().to_string())
}

/// With the default backups (3) and with 0: the odd newest entry is skipped by the load (which
/// loads the save below it) and shown as damaged by the listing, and the next save goes on top.
#[test]
fn an_odd_entry_as_the_newest_generation_is_skipped_promptly() {
    for backups in [3, 0] {
        for Odd { label, make, what } in ODD_ENTRIES {
            let dir = tempfile::tempdir().unwrap();
            let config = StoreConfig::new(dir.path()).backups(backups);
            let store = Arc::new(SlotStore::open(config).unwrap());
            saved(&store, 1);
            let odd = store.path_of(SLOT, 2);
            make(&odd);
            let context = format!("{label}, backups {backups}");

            let loaded = within_30_s("load", {
                let store = store.clone();
                move || store.load(SLOT)
            });
            let loaded = loaded.unwrap();
            assert_eq!(loaded.generation, 1, "{context}");
            assert_eq!(loaded.bundle, fixtures::bundle(2_000, 1), "{context}");
            let skipped = &loaded.skipped[0];
            assert_eq!(skipped.generation, 2, "{context}");
            assert!(
                is_not_a_file(&skipped.error, &odd, what),
                "{context}: {}",
                skipped.error
            );

            let listed = within_30_s("list", {
                let store = store.clone();
                move || store.list()
            });
            let entry = listed
                .unwrap()
                .into_iter()
                .find(|e| e.slot == SLOT)
                .unwrap();
            assert!(
                matches!(
                    &entry.status,
                    SlotStatus::Damaged { newest_generation: 2, reason, backup: Some(b) }
                        if b.generation == 1 && reason.contains(what)
                ),
                "{context}: {:?}",
                entry.status
            );
            let saves = within_30_s("saves", {
                let store = store.clone();
                move || store.saves()
            });
            assert_eq!(saves.unwrap().len(), 1, "{context}");

            let receipt = within_30_s("save", {
                let store = store.clone();
                move || store.save(SLOT, fixtures::meta(SLOT, 3), &fixtures::bundle(2_000, 3))
            });
            assert_eq!(receipt.unwrap().generation, 3, "{context}");
            assert_eq!(store.load(SLOT).unwrap().generation, 3, "{context}");
        }
    }
}

/// An odd entry as a slot's only generation: the load fails at once, naming it; so do the
/// whole-file reads cloud sync makes (a generation to upload, a side file).
#[test]
fn an_odd_entry_alone_fails_the_load_and_every_whole_file_read() {
    for Odd { label, make, what } in ODD_ENTRIES {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SlotStore::open(StoreConfig::new(dir.path())).unwrap());
        let odd = store.path_of(SLOT, 1);
        make(&odd);
        let side = store.dir().join("cloud-sync.ron");
        make(&side);

        let error = within_30_s("load", {
            let store = store.clone();
            move || store.load(SLOT).unwrap_err()
        });
        let StoreError::AllGenerationsDamaged { failures, .. } = &error else {
            panic!("{label}: {error}");
        };
        assert!(
            is_not_a_file(&failures[0].error, &odd, what),
            "{label}: {error}"
        );

        let bytes = within_30_s("read_generation_bytes", {
            let store = store.clone();
            move || store.read_generation_bytes(SLOT, 1)
        });
        assert!(is_not_a_file(&bytes.unwrap_err(), &odd, what), "{label}");
        let side_file = within_30_s("read_profile_file", {
            let store = store.clone();
            move || store.read_profile_file("cloud-sync.ron")
        });
        assert!(
            is_not_a_file(&side_file.unwrap_err(), &side, what),
            "{label}"
        );
        let thumbnail = within_30_s("read_thumbnail", {
            let store = store.clone();
            move || store.read_thumbnail(SLOT, 1)
        });
        assert!(
            is_not_a_file(&thumbnail.unwrap_err(), &odd, what),
            "{label}"
        );
    }
}

struct Zeros {
    left: u64,
    served: Arc<AtomicU64>,
}

impl Read for Zeros {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize;
        buf[..n].fill(0);
        self.left -= n as u64;
        self.served.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Zeros {
    fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
        Ok(0)
    }
}

impl ReadFile for Zeros {
    fn byte_len(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}

/// The real filesystem, except that the file at `path` reads as `served_limit` zero bytes
/// whatever its size says (0): a filesystem that reports sizes wrongly, or a file that keeps
/// growing.
fn lying_size(path: PathBuf, served_limit: u64, served: Arc<AtomicU64>) -> Forward {
    Forward::os().on_open_read(move |fs, opened| {
        if opened != path {
            return fs.open_read(opened);
        }
        Ok(Box::new(Zeros {
            left: served_limit,
            served: served.clone(),
        }))
    })
}

/// A file that says it is empty and then reads on: every whole-file read stops one byte past
/// the limits' largest file and refuses it as too large, under small limits and larger ones.
#[test]
fn a_read_stops_one_byte_past_the_limit_whatever_size_the_file_reports() {
    for max_payload in [64 << 10, 4 << 20] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = StoreConfig::new(dir.path());
        config.encode.limits.max_payload_uncompressed = max_payload;
        let limit = config.encode.limits.max_file_len();
        let path = config.profile_dir().join("manual-00.g000001.ksav");
        let served = Arc::new(AtomicU64::new(0));
        let fs = lying_size(path.clone(), 8 * limit, served.clone());
        std::fs::create_dir_all(config.profile_dir()).unwrap();
        std::fs::write(&path, b"").unwrap();
        let store = SlotStore::open_with(config, Arc::new(fs)).unwrap();

        let failures = match store.load(SLOT) {
            Err(StoreError::AllGenerationsDamaged { failures, .. }) => failures,
            other => panic!("{other:?}"),
        };
        let too_large = |error: &StoreError| matches!(error, StoreError::FileTooLarge { len, limit: l, .. } if *len == limit + 1 && *l == limit);
        assert!(too_large(&failures[0].error), "{}", failures[0].error);
        assert_eq!(served.swap(0, Ordering::Relaxed), limit + 1);
        assert!(too_large(
            &store.read_generation_bytes(SLOT, 1).unwrap_err()
        ));
        assert_eq!(served.load(Ordering::Relaxed), limit + 1);
    }
}
