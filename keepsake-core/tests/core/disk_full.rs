//! Disk full on the real kernel path: a child process with a small `RLIMIT_FSIZE` (writes past
//! it fail with EFBIG), and writes to `/dev/full` (ENOSPC).

#![cfg(target_os = "linux")]

use crate::common;

use common::fixtures;
use keepsake_core::SlotId;
use keepsake_core::format::{self, EncodeOptions, FormatError};
use keepsake_core::store::{SlotStore, StoreConfig, StoreError};
use std::path::Path;
use std::process::Command;

const CHILD_ENV: &str = "KEEPSAKE_FSIZE_CHILD";
const LIMIT: u64 = 64 * 1024;

/// Entry point of the child process (does nothing in an ordinary test run): with the file size
/// limit lowered, a small save succeeds, a large one fails, and the small one stays loadable.
#[test]
fn fsize_child_entry() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    // SAFETY: plain libc calls on this process; SIGXFSZ is ignored so the write returns EFBIG
    // instead of killing the process.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let limit = libc::rlimit {
            rlim_cur: LIMIT,
            rlim_max: LIMIT,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
    let store = SlotStore::open(StoreConfig::new(Path::new(&dir))).unwrap();
    let small = fixtures::bundle(1_000, 1);
    store
        .save(SlotId::Quick, fixtures::meta(SlotId::Quick, 1), &small)
        .unwrap();

    let large = fixtures::bundle(LIMIT as usize * 4, 2);
    let error = store
        .save(SlotId::Quick, fixtures::meta(SlotId::Quick, 2), &large)
        .unwrap_err();
    println!("large save: {error}");
    assert!(
        matches!(&error, StoreError::Io { source, .. } if source.raw_os_error() == Some(libc::EFBIG)),
        "{error}"
    );
    assert_eq!(store.load(SlotId::Quick).unwrap().bundle, small);
    println!("child ok");
}

#[test]
fn a_file_size_limit_fails_the_save_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "disk_full::fsize_child_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("child ok"), "{stdout}");
    assert!(stdout.contains("File too large"), "{stdout}");

    // The parent sees the same: one intact generation, no temporary files.
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    assert_eq!(store.generations(SlotId::Quick).unwrap(), [1]);
    assert_eq!(
        store.load(SlotId::Quick).unwrap().bundle,
        fixtures::bundle(1_000, 1)
    );
}

#[test]
fn writing_to_dev_full_is_a_typed_error() {
    let file = match std::fs::OpenOptions::new().write(true).open("/dev/full") {
        Ok(file) => file,
        // Not every container has /dev/full. A skip is said aloud, and CI, whose machines do
        // have it, does not skip: there a missing /dev/full is a broken runner.
        Err(error) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!(
                "SKIPPED writing_to_dev_full_is_a_typed_error: /dev/full cannot be opened ({error}); ENOSPC is not tested here"
            );
            return;
        }
        Err(error) => panic!("/dev/full cannot be opened under CI=true: {error}"),
    };
    let meta = fixtures::meta(SlotId::Manual(0), 1);
    let bundle = fixtures::bundle(100_000, 1);
    let encoded = format::encode(&meta, &bundle, &EncodeOptions::default()).unwrap();
    let error = encoded.write_to(file).unwrap_err();
    assert!(
        matches!(&error, FormatError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC)),
        "{error}"
    );
    assert!(
        error.to_string().starts_with("could not write save data"),
        "{error}"
    );
}
