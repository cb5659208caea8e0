//! A child process saves in a loop; the parent kills it with SIGKILL at random moments. After
//! every kill the slot must load, and hold either the last save the child confirmed or the one
//! it was writing: never an error, never anything else. Stale temporary files must be gone once
//! the store reopens.
//!
//! The child is this test binary itself, re-run with `KEEPSAKE_CRASH_CHILD` set to a folder.
//! `cargo test` runs 200 kills; `cargo test --test crash_sigkill -- --ignored` runs 2000.

#![cfg(unix)]

use crate::common;

use bevy_keepsake::SlotId;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use common::fixtures::{self, Rng};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SLOT: SlotId = SlotId::Manual(0);
const CHILD_ENV: &str = "KEEPSAKE_CRASH_CHILD";
const START_ENV: &str = "KEEPSAKE_CRASH_START";

/// The content of save number `seq`: sizes vary so writes take different times.
fn bundle(seq: u64) -> bevy_keepsake::format::SaveBundle {
    fixtures::bundle(2_000 + (seq as usize % 7) * 30_000, seq)
}

/// The child's loop: save, then confirm on stdout, forever (until killed).
#[test]
fn crash_child_entry() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return; // an ordinary test run: nothing to do
    };
    let start: u64 = std::env::var(START_ENV).unwrap().parse().unwrap();
    let store = SlotStore::open(StoreConfig::new(Path::new(&dir)).backups(2)).unwrap();
    for seq in start.. {
        store
            .save(SLOT, fixtures::meta(SLOT, seq), &bundle(seq))
            .unwrap();
        println!("saved {seq}");
    }
}

fn kill_cycles(cycles: usize) {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng::new(0x5EED);
    let mut last_confirmed: Option<u64> = None;
    let (mut mid_write, mut after_confirm) = (0, 0);

    for cycle in 0..cycles {
        let start = last_confirmed.map_or(0, |seq| seq + 1);
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_sigkill::crash_child_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .env(START_ENV, start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, confirmations) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // Anywhere in the line: the test harness prints `test … ... ` without a line
                // break before the child's first confirmation, which lands on the same line.
                if let Some((_, seq)) = line.rsplit_once("saved ") {
                    let _ = sender.send(seq.parse::<u64>().unwrap());
                }
            }
        });
        // Wait for a random number of confirmations (0 to 3), then a random extra delay, so
        // kills land anywhere in the write sequence.
        let wanted = rng.below(4);
        for _ in 0..wanted {
            if let Ok(seq) = confirmations.recv_timeout(Duration::from_secs(20)) {
                last_confirmed = Some(seq);
            }
        }
        std::thread::sleep(Duration::from_micros(rng.below(4_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        // Confirmations printed before the kill but not yet read count too.
        while let Ok(seq) = confirmations.try_recv() {
            last_confirmed = Some(seq);
        }

        let store = SlotStore::open(StoreConfig::new(dir.path()).backups(2)).unwrap();
        let leftovers: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "cycle {cycle}: stale temp files {leftovers:?}"
        );

        let Some(confirmed) = last_confirmed else {
            // Killed before the first save was confirmed: empty, or holding save 0.
            match store.load(SLOT) {
                Ok(loaded) => assert_eq!(loaded.bundle, bundle(0), "cycle {cycle}"),
                Err(error) => assert!(
                    matches!(error, bevy_keepsake::store::StoreError::EmptySlot(_)),
                    "cycle {cycle}: {error}"
                ),
            }
            continue;
        };
        let loaded = store
            .load(SLOT)
            .unwrap_or_else(|e| panic!("cycle {cycle}: the slot does not load: {e}"));
        assert!(
            !loaded.restored_from_backup(),
            "cycle {cycle}: newest generation damaged"
        );
        let seq = loaded.meta.game_tick / 60;
        assert!(
            seq == confirmed || seq == confirmed + 1,
            "cycle {cycle}: loaded save {seq}, last confirmed {confirmed}"
        );
        assert_eq!(
            loaded.bundle,
            bundle(seq),
            "cycle {cycle}: content of save {seq}"
        );
        if seq == confirmed {
            after_confirm += 1;
        } else {
            mid_write += 1;
            last_confirmed = Some(seq); // the in-flight save landed: continue after it
        }
    }
    println!(
        "{cycles} kills: {after_confirm} left the last confirmed save, {mid_write} the save in flight"
    );
}

#[test]
fn sigkill_at_random_moments_never_loses_or_tears_a_save() {
    kill_cycles(200);
}

#[test]
#[ignore = "long run: 2000 kills"]
fn sigkill_long_run() {
    kill_cycles(2_000);
}
