//! Issue 41: never lose a save, proven by search. A deterministic simulator of devices, disks
//! and a cloud, driven by seeded schedules of what players do and what goes wrong.
//!
//! Each run has 2–3 devices, each a [`SlotStore`](bevy_keepsake::store::SlotStore) and a
//! [`SyncCore`](bevy_keepsake::cloud::SyncCore) over a simulated disk (`disk.rs`: the power-loss
//! model of `common::power_fs`, EIO/ENOSPC/failed fsyncs on cue, a process that dies in the
//! middle of any call, bit flips and truncations at rest, and odd entries — a folder, a FIFO, a
//! file this user may not open or only read, a link to a device or to nothing — under every
//! name the store and sync use: save generations, lock files, `.deleted` records,
//! `cloud-sync.ron`, temporary names) with its own clock (skewed by minutes to a day, ahead and
//! behind), and one simulated cloud (`remote.rs`: requests that fail, answers lost after an
//! upload landed, refusals whose bodies quote the signed request, keys no object-store path can
//! hold, garbage, duplicated, truncated, oversized and understated objects, a compression
//! bomb, a newer format's files). Runs use 0, 1 and the default 3 backups, and sealed saves.
//! The players save, autosave, quicksave, delete, sync, choose the other device's save, quit
//! and start again, play long offline sessions (40–60 saves of one slot between syncs), run a
//! newer build of the game on the same folder now and then (its saves in a format this build
//! reads or not, at any position of a slot), and lose the sync state file with its device id
//! (`plan.rs`). Every start of a game — after a quit, and right after a crash — meets the
//! faults armed, and one drawn for it: another crash, EIO, a full disk.
//!
//! After every step (`run.rs`, `check.rs`, against `oracle.rs`), on a store opened over a copy
//! of the device's disk (a check never starts the game nor changes its disk):
//! - every confirmed save stays loadable on its device, byte for byte, through the player's
//!   load (or the player's choice of it, then a load) until the player's own later save or
//!   delete of that slot supersedes it (here, or on a device whose save records it);
//! - a load returns exactly the bytes of a save some device made, and never a save older than
//!   the player's last confirmed save or delete of the slot;
//! - a newer build's file stays byte for byte until the player deletes its slot;
//! - no step allocates more than the files it read justify ([`run::memory_bound`]: 128 bytes
//!   per byte of the largest file, plus 6 MiB), no panic, and no error text or status shows a
//!   credential the cloud client signs with;
//! - after a crash the game starts again (right away, meeting its drawn fault, or on the
//!   player's next try) and leaves no temporary file.
//!
//! The exemptions are as narrow as the losses they excuse (`oracle.rs`; `tests.rs` plants a
//! loss under each and sees it caught): a failed delete releases only what it removed; damage
//! at rest excuses a save on a device only while no intact copy of it is left there, and lets
//! the slot fall back only to what that save was made over; an arriving save releases a
//! confirmed one only when its own record names it.
//!
//! At the end, faults stop and every device starts and runs sync rounds: each must then reach
//! every other device's newest save of each slot, as its head, as a recorded conflict whose
//! hidden save loads (and was not made in view of the head: that one must head), or through a
//! later save of its own made after it. Not required of a device: a save its player set aside
//! there (deleted, passed over for another device's, or moved past with a save made in view of
//! it), a save whose only copy its disk destroyed before its player saved over that slot, and a
//! slot a newer build's save holds there (this build refuses to change it: update the game).
//!
//! A run of 200 seeds or more fails unless its crashes, power losses, faults, hostile objects
//! and the rest fired often enough (`FIRED_PER_100_SEEDS`). A failing run prints its seed, the
//! shortest list of steps that still fails (`shrink.rs`), and how to replay it. Environment
//! variables:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `KEEPSAKE_SIM_SEED` | run this one seed only (replay) | |
//! | `KEEPSAKE_SIM_SEEDS` | how many seeds | 400: 200 per test, two tests |
//! | `KEEPSAKE_SIM_FIRST` | the first seed (a long run looks at new ones) | 0 |
//! | `KEEPSAKE_SIM_STEPS` | steps per run | 120 |
//! | `KEEPSAKE_SIM_TRACE` | print each step and every device's save files after it, and each round of the end with what every slot holds | off |
//! | `KEEPSAKE_SIM_SURVEY` | run every seed, print each failure's first line, shrink none | off |
//! | `KEEPSAKE_SIM_OFF` | model features to leave out, by name (`refuses`, `bomb`, `newer`, `session`, `odd`, `state`: the sync state file lost, garbled or an odd entry) | none |
//!
//! # What the runs found
//!
//! The model widened for issue 49 found, on seeds 0–499 of 120 steps, 173 failing seeds at
//! first; each class was fixed in the library (or, twice, in a model that did less than the
//! real disk), with a regression test in `tests.rs`: a device that could not start with an odd
//! entry in place of `cloud-sync.ron`; a lost sync state that brought deleted or set-aside saves
//! back; a save a newer build's save held back remembered as "newer format" for good; a
//! confirmed save lost to a save folder not yet durable; an import that placed a deleted or
//! superseded save; a repair cut short that left an older save on top. All 500 pass now, and
//! CI runs 400 of them (two tests of 200, one per core) within about three minutes.
//!
//! A run of the even seeds 100,000–101,998 of 150 steps found three more, fixed since: seed
//! 101328 was the oracle's (a save that failed at the folder flush came back after a power
//! loss, as the store wrote it, and the oracle knew only what the game asked for); seeds
//! 101136 and 101764 were the store's (a delete that failed part way left the saves it could
//! not remove named in the record of deleted saves, so a conflict between two of them was never
//! shown again once the sync state was lost: the record now names only what it removed). Those
//! 1,000 seeds all pass now.
//!
//! The odd seeds 200,001–201,999 of 150 steps found two more, seeds 200203 and 200609, both
//! the oracle's: the player chose another device's save over theirs, the disk then destroyed
//! the chosen save (and the save made over it), and the slot fell back to the save passed
//! over, which a choice keeps one generation below as its backup (`SlotStore::promote`). The
//! oracle never let a passed-over save be a fallback; it now lets it be one once every save
//! chosen over it is destroyed on that device (`tests.rs`: the fallback, and a passed-over
//! save heading over a choice removed behind the store's back, still seen). Those
//! 1,000 seeds all pass now. The runs count the steps that leave one save in two generations of
//! a slot (a promotion or an import cut short: 4,457 on those seeds) and the deletes begun over
//! such a slot (33), so the search is seen to reach them.
//!
//! A run of 150 steps on seeds from 300,000 found, among others, seeds 300824 and 301008.
//! Seed 300824 is the store's, and open: the slot's newest save became a file the player may
//! not open, the sync state was lost, and the player deleted the slot; the record of deleted
//! saves could not name the save it could not read, and sync placed it again. A fix that
//! recorded the next count on the line of the newest save read, per unread generation above
//! it, took other devices' next saves for deleted (11 of the next 3,000 seeds: "does not reach
//! … newest save … does not hold it") and was taken out; its tests are kept, ignored.
//! Seed 301008 was the oracle's: a round's import failed at the folder flush and was removed,
//! and a power loss undid the removal after the player deleted the (empty) slot; the save is
//! another device's that the next round places anyway, and the oracle now counts it as placed
//! (only a save that never entered the slot there and was not set aside; `tests.rs` plants a
//! deleted save coming back that way).
//!
//! A long run on seeds from 300,000 (150 steps) found seed 300982, the model's: the disk
//! rebuilt after a power loss numbered new files from the largest one holding bytes, so a lock
//! file (never written) and the next file made, a newer build's save, were one file under two
//! names; a FIFO put in the lock's place emptied the save, and the check blamed this build.
//! A new file now takes an inode no name uses (`tests.rs`, and the model's own test in
//! `keepsake-core/tests/core/store_power_loss.rs`).
//!
//! Seeds 309440, 312437 and 317351 of that run were the oracle's, one case: the disk destroyed
//! a slot's head, the slot loaded a fallback, and the player chose the conflict's hidden save.
//! The store passes over the head it lists, and keeps it below the choice once a round repairs
//! it; the oracle knew only the fallback passed over. It now counts the destroyed head too.
//!
//! A run of seeds 400,000–423,999 (24,000 seeds, 150 steps) failed on 19 (0.08 %). Two were the
//! store's and sync's, fixed since, with their shortest runs in `tests.rs`: seed 402040 (a
//! delete whose record was put in place but not flushed failed with the slot's saves named in
//! it, hiding a conflict among them) and seed 402638 (an import kept a recorded conflict's
//! hidden save past the backups though the arriving save was made in view of it, and the slot
//! fell back to it below the player's confirmed save). The rest, by their first line, are the
//! open classes (only 400541 and 403206 were shrunk and read): a slot
//! headed by a save that entered it before the player's last confirmed save or delete (seeds
//! 400541, 410002, 410514, 414391, 414642, 415779, 417545, 417694, 419220, 419626; 400541 is
//! seed 300824's, a delete whose record cannot name a file it cannot read, here a newer
//! build's); a device that does not reach another's newest save (410617, 414186); a slot a
//! newer build's save heads, refused on a healthy disk (407795, 424627); and seed 403206, the
//! model's: its newer build records what it was made in view of from what this build can read,
//! where a real newer build reads its own files too.
//!
//! A run of seeds 430,000–449,999 on the code after those fixes failed on 28 (0.14 %); of the
//! 47 failures from 400,000 on, 45 pass now, as do seeds 452648 and 458470 of the next run.
//! Most were seed 300824's class, closed now: a delete names every save that entered the slot
//! (`<slot>.entered`) when a file does not read (439224 in `tests.rs`). Seed 430677 was two
//! defects: a device whose clock ran six hours behind never put another device's newer save on
//! top (the storage's upload time now vouches for a date), and a session of 92 saves over a
//! folder under a save's name gave each save a version-vector line of its own, so the last
//! ones forgot the first. Seeds 414391 and 414642 were a delete cut short by a crash that a
//! later power loss undid (the store now flushes its folder when it opens). Seed 404023 was the
//! oracle's (a failed delete over a damaged save taken for done) and 452648 the model's (its
//! newer build did not flush the folders to its save). Left: 433020 and 439756, a device that
//! shows another's newest save only as a conflict's hidden side (not shrunk yet).
//!
//! A run of 17,500 seeds from 500,000 failed on 8. Four were the store's and sync's, fixed
//! since (`tests.rs`): a save over a repaired older save took a count its line had reached
//! before the newer save was pruned (507184, 513930; 501730 too), an older save of a line the
//! player passed over headed over their choice (501703), and a failed save's file came back
//! into a slot the player had deleted empty (513651). Seed 505286 was the oracle's: a delete
//! over a file the disk destroyed removes that save too (`Sim::destroyed_files`). Changing how
//! many files a save reads moved CI's fault timing, and CI's seed 129 found the next one: a
//! repaired save, dated later by clocks hours apart, headed over the save the player made
//! while its file did not read (`keepsake.over_unread`); its fix's first run found the oracle's
//! 520073 (a failed save's file carries that record too). A review then found the record
//! missed saves that entered below the head, and the other devices still ordered such saves
//! by clock: with that fixed, 433020 (shrunk in `tests.rs`), 439756 and 506691 pass. Left:
//! 505598, a device that shows another's newest save only as a conflict's hidden side. The
//! next run found 520967 at once: a repaired choice placed below the save the player had
//! passed over. An oracle that let the slot fall back to a passed-over save would have
//! passed it (and seed 513930 before it): both were the store's.
//!
//! Of that run's 15,500 seeds from 520,000, four failed; a first run from 540,000 found two
//! more. Four were deleted saves coming back, fixed since: a save whose entry in
//! `<slot>.entered` failed (531876; every write of the record names what the slot holds), a
//! save the slot held unread whose file a later save pruned (542173; a delete names what its
//! saves were made over), an import whose entry the disk could not take (545099; it fails and
//! takes its file out, but a power loss between its file and its entry is left: ignored in
//! `tests.rs`), and an older save of a deleted unread save's line (564678). Seed 529920 was
//! the oracle's: a save made over an unread file comes after what that file's save was made in
//! view of, which `Oracle::follows` now passes through. Left: 526044 (a delete killed part way
//! leaves its survivors named deleted) and 532031 (a prune kept the passed-over save over the
//! chosen one's other copy), both ignored in `tests.rs`.
//!
//! The run of seeds 540,000–589,999 (50,000, 150 steps) on that code failed on 28 (0.056 %):
//! 19 show another device's newest save only as a conflict below an older head (17 of them
//! only since the oracle passes through what a save was made over: mostly a choice standing
//! on the device, which turns the made-over rule off, and saves made over more than 16 unread
//! saves, whose list ends before the head), 7 hold it but neither head with it nor show it as
//! a conflict (all failing on the code before this run's fixes too), 545099 and 564678.
//! Since fixed: the first class by a save carrying how far each line went among what it was
//! made over (562392), by the made-over rule standing whatever the player chose (542991) and
//! by a repair not heading over a save made over it (555464), 18 of the 19 in all (547984
//! left); the second by a delete's note, which settles the record of a delete the process
//! died in, or whose removals did not last (582649, and 526044 with them): all 7.
//! The oracle learned that a delete failing at its folder flush after emptying the slot (as
//! the game sees it) is undecided until a power loss or a flush decides (591600, 592451).

mod check;
mod converge;
mod device;
mod disk;
mod oracle;
mod plan;
mod remote;
mod rest;
mod run;
mod shrink;
mod tests;

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
    let count = env_number("KEEPSAKE_SIM_SEEDS").unwrap_or(400);
    (first..first + count)
        .filter(|seed| seed % 2 == part)
        .collect()
}

fn run_seeds(part: u64) {
    let len = env_number("KEEPSAKE_SIM_STEPS").unwrap_or(120) as usize;
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    let seeds = seeds(part);
    let survey = std::env::var_os("KEEPSAKE_SIM_SURVEY").is_some();
    let mut failed = 0;
    for &seed in &seeds {
        let config = Config::from_seed(seed);
        let steps = plan::steps(seed, &config, len);
        match run::run(config, &steps) {
            Ok(stats) => total.add(&stats),
            Err(failure) if survey => {
                failed += 1;
                let at = failure
                    .step
                    .map_or("end".to_owned(), |s| format!("{s} ({})", steps[s]));
                let first = failure.message.lines().next().unwrap_or_default();
                eprintln!("SURVEY seed {seed} ({config:?}) at {at}: {first}");
            }
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
    assert_eq!(
        failed, 0,
        "{failed} seeds broke an invariant (SURVEY lines above)"
    );
    faults_fired(seeds.len(), &total);
}

/// Fails a run of many seeds whose faults did not fire: a model whose crashes, faults and
/// hostile objects never meet the code proves nothing. Per 100 seeds, at least this many.
const FIRED_PER_100_SEEDS: [(&str, usize); 15] = [
    ("crashes", 150),
    ("power losses", 150),
    ("starts after a crash that met a fault or died again", 50),
    ("disk faults that failed a call", 300),
    ("cloud faults that failed a request", 300),
    ("saves from another device placed", 2000),
    ("conflicts chosen by the player", 20),
    ("hostile objects refused", 300),
    ("odd entries", 50),
    ("newer builds' saves", 40),
    ("long offline sessions", 40),
    ("sync states lost", 40),
    ("failed deletes", 15),
    // CI's seeds: 270 and 360 per 100 (a promotion or an import cut short).
    ("steps that left one save in two generations of a slot", 150),
    // CI's seeds: 1 and 1.5 per 100; the long run of 1,000 seeds, 3.3.
    ("deletes begun over a slot holding two copies of a save", 1),
];

fn faults_fired(seeds: usize, total: &Stats) {
    if seeds < 200 {
        return;
    }
    let counts = [
        total.crashes,
        total.power_losses,
        total.hard_restarts,
        total.disk_faults,
        total.cloud_faults,
        total.arrivals,
        total.choices,
        total.refused,
        total.odd_entries,
        total.newer_builds,
        total.long_sessions,
        total.lost_states,
        total.failed_deletes,
        total.twin_copies,
        total.deletes_over_twins,
    ];
    for ((what, per_100), count) in FIRED_PER_100_SEEDS.iter().zip(counts) {
        let least = per_100 * seeds / 100;
        assert!(
            count >= least,
            "{seeds} seeds met only {count} {what} (at least {least} expected): the model no \
             longer reaches the code it is meant to search"
        );
    }
}

#[test]
fn seeded_runs_keep_every_confirmed_save_part_0() {
    run_seeds(0);
}

#[test]
fn seeded_runs_keep_every_confirmed_save_part_1() {
    run_seeds(1);
}
