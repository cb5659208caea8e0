//! Issue 41: never lose a save, proven by search. A deterministic simulator of devices, disks
//! and a cloud, driven by seeded schedules of what players do and what goes wrong.
//!
//! Each run has 2–3 devices, each a [`SlotStore`](bevy_keepsake::store::SlotStore) and a
//! [`SyncCore`](bevy_keepsake::cloud::SyncCore) over a simulated disk (`disk.rs`: the power-loss
//! model of `common::power_fs`, EIO/ENOSPC/failed fsyncs on cue, a process that dies in the
//! middle of any call, bit flips and truncations at rest, entries that are not regular files)
//! with its own clock (skewed, jumping back), and one simulated cloud (`remote.rs`: requests
//! that fail, answers lost after an upload landed, keys no object-store path can hold, garbage,
//! duplicated, truncated and oversized objects). Runs use 0, 1 and the default 3 backups, and
//! sealed saves. The players save, autosave, quicksave, delete, sync, choose the other
//! device's save, quit and start again (`plan.rs`).
//!
//! After every step (`run.rs`, against `oracle.rs`):
//! - every confirmed save stays loadable on its device, byte for byte, until the player's own
//!   later save or delete of that slot supersedes it (here, or on a device that held it);
//! - a load returns exactly the bytes of a save some device made, and never a save older than
//!   the player's last confirmed save or delete of the slot;
//! - no panic, and no step allocates more than [`run::MEMORY_BOUND`] at once;
//! - after a crash the game starts again and leaves no temporary file.
//!
//! At the end, faults stop and every device runs sync rounds: each must then reach every other
//! device's newest save of each slot, as its head, as a recorded conflict whose hidden save
//! loads, or through a later save of its own made after it. Not required of a device: a save
//! its player set aside there (deleted, passed over for another device's, or moved past with a
//! save made in view of it), and a save whose copy its disk damaged past the metadata before
//! its player saved over that slot (the save is kept on the devices where it was not damaged;
//! this one could not record having seen it). What a disk destroys at rest is the backups' to
//! make up for, so a damaged save is not required of the device that damaged it either.
//!
//! A failing run prints its seed, the shortest list of steps that still fails (`shrink.rs`),
//! and how to replay it. Environment variables:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `KEEPSAKE_SIM_SEED` | run this one seed only (replay) | |
//! | `KEEPSAKE_SIM_SEEDS` | how many seeds | 1000 per test, two tests |
//! | `KEEPSAKE_SIM_FIRST` | the first seed (a long run looks at new ones) | 0 |
//! | `KEEPSAKE_SIM_STEPS` | steps per run | 60 |
//! | `KEEPSAKE_SIM_TRACE` | print each step and every device's save files after it | off |

mod device;
mod disk;
mod oracle;
mod plan;
mod remote;
mod run;
mod shrink;

use plan::Config;
use run::Stats;

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a number")),
    )
}

/// The seeds one of the two tests runs: half of the range each, or the one to replay.
fn seeds(part: u64) -> Vec<u64> {
    if let Some(seed) = env_number("KEEPSAKE_SIM_SEED") {
        return if part == 0 { vec![seed] } else { Vec::new() };
    }
    let first = env_number("KEEPSAKE_SIM_FIRST").unwrap_or(0);
    let count = env_number("KEEPSAKE_SIM_SEEDS").unwrap_or(2_000);
    (first..first + count)
        .filter(|seed| seed % 2 == part)
        .collect()
}

fn run_seeds(part: u64) {
    let len = env_number("KEEPSAKE_SIM_STEPS").unwrap_or(60) as usize;
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    let seeds = seeds(part);
    for &seed in &seeds {
        let config = Config::from_seed(seed);
        let steps = plan::steps(seed, &config, len);
        match run::run(config, &steps) {
            Ok(stats) => total.add(&stats),
            Err(failure) => {
                let (short, failure) = shrink::shrink(config, &steps, failure);
                let listed: Vec<String> = short
                    .iter()
                    .enumerate()
                    .map(|(i, step)| format!("  {i:>3}: {step}"))
                    .collect();
                panic!(
                    "seed {seed} ({config:?}) broke an invariant {}: {}\n\
                     shortest failing run ({} steps):\n{}\n\
                     replay: KEEPSAKE_SIM_SEED={seed} cargo test --all-features --test it sim::",
                    failure
                        .step
                        .map_or("at the end".to_owned(), |s| format!("after step {s}")),
                    failure.message,
                    short.len(),
                    listed.join("\n"),
                );
            }
        }
    }
    eprintln!(
        "simulator part {part}: {} seeds, {} steps in {:.1?}: {total:?}",
        seeds.len(),
        total.steps,
        started.elapsed()
    );
}

#[test]
fn seeded_runs_keep_every_confirmed_save_part_0() {
    run_seeds(0);
}

#[test]
fn seeded_runs_keep_every_confirmed_save_part_1() {
    run_seeds(1);
}
