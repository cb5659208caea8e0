//! A crash of the game costs seconds, not progress: the `crash_save` example runs as a child
//! game that panics in a system, is stopped by SIGTERM, or panics with its disk full, inside
//! the crash save's own write, or while a save is in flight; built with `panic = "abort"` too
//! (`.ci/run` builds that binary and names it in `KEEPSAKE_CRASH_SAVE_ABORT_CHILD`). After each,
//! the store must hold a crash save no older than the bound, and every save the child confirmed
//! before must load as it was.
//!
//! The child prints `frame <progress> <ms since start>` every frame and `saved|<slot>|<title>`
//! for each confirmed save; every save's title is `progress <n>`.

#![cfg(unix)]

use bevy_keepsake::SlotId;
use bevy_keepsake::format::CrashCause;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The child's [`CrashSavePlugin::every`](bevy_keepsake::plugin::CrashSavePlugin::every).
const EVERY_MS: u64 = 200;
/// Room for one image's finishing on the task pool (about 2 ms for the child's 5,000
/// entities here), on a loaded 2-core CI machine.
const FINISH_ALLOWANCE_MS: u64 = 300;
/// The longest a child may run before the test calls it stuck.
const CHILD_DEADLINE: Duration = Duration::from_secs(120);
/// The child plays this long before it crashes.
const PLAY_MS: u64 = 1_500;

/// What a child run printed and how it ended.
struct ChildRun {
    /// Progress → milliseconds since the child started, per frame.
    frames: BTreeMap<u64, u64>,
    /// Slot name → title of each save the child confirmed.
    confirmed: Vec<(String, String)>,
    status: ExitStatus,
    stderr: String,
}

impl ChildRun {
    fn last_frame(&self) -> (u64, u64) {
        let (progress, ms) = self
            .frames
            .last_key_value()
            .expect("the child played frames");
        (*progress, *ms)
    }

    /// The largest gap between two frames: how late an image can be taken after it is due.
    fn largest_frame_gap(&self) -> u64 {
        let times: Vec<u64> = self.frames.values().copied().collect();
        times
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .max()
            .unwrap_or(0)
    }
}

/// The example built by `cargo test` (beside this binary's folder), or the one named by `env`.
fn child_binary(env: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent()?.parent()?.join("examples").join("crash_save");
    path.exists().then_some(path)
}

fn default_child() -> PathBuf {
    child_binary("KEEPSAKE_CRASH_SAVE_CHILD").unwrap_or_else(|| {
        panic!(
            "the crash_save example is not built: `cargo test` builds it; alone, run \
             `cargo build --all-features --example crash_save` first"
        )
    })
}

/// Starts the child as a game is started: SIGINT and SIGHUP at their default action (a test
/// run from a background shell job inherits them ignored, and an ignored signal stays ignored
/// by design).
fn spawn(binary: &Path, root: &Path, mode: &str) -> Child {
    let mut command = Command::new(binary);
    command
        .arg(root)
        .arg(mode)
        .arg(PLAY_MS.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only signal(2), which is async-signal-safe, is called.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    command
        .spawn()
        .unwrap_or_else(|error| panic!("could not start {}: {error}", binary.display()))
}

/// Reads `pipe` to its end on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// The child's stdout, line by line, on a thread of its own (so the deadline holds while the
/// child runs).
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Runs the child to its end, sending `signal` once it has played [`PLAY_MS`]. Fails, with the
/// child's stderr, when it runs past [`CHILD_DEADLINE`].
fn run(binary: &Path, root: &Path, mode: &str, signal: Option<i32>) -> ChildRun {
    let started = Instant::now();
    let mut child = spawn(binary, root, mode);
    let stderr = read_all(child.stderr.take().unwrap());
    let lines = lines_of(&mut child);
    let mut frames = BTreeMap::new();
    let mut confirmed = Vec::new();
    let mut signalled = false;
    loop {
        let left = CHILD_DEADLINE.saturating_sub(started.elapsed());
        let line = match lines.recv_timeout(left) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the child game ({mode}) did not end within {CHILD_DEADLINE:?}; its stderr:\n{}",
                    stderr.join().unwrap()
                );
            }
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["frame", progress, ms] = words.as_slice() {
            let ms: u64 = ms.parse().unwrap();
            frames.insert(progress.parse().unwrap(), ms);
            if let Some(signal) = signal.filter(|_| !signalled && ms >= PLAY_MS) {
                signalled = true;
                // SAFETY: kill(2) with the pid of our own child and a valid signal.
                unsafe { libc::kill(child.id() as i32, signal) };
            }
        } else if let Some((slot, title)) =
            line.strip_prefix("saved|").and_then(|s| s.split_once('|'))
        {
            confirmed.push((slot.to_owned(), title.to_owned()));
        }
    }
    let status = wait(&mut child);
    ChildRun {
        frames,
        confirmed,
        status,
        stderr: stderr.join().unwrap(),
    }
}

/// Waits for the child (its stdout is closed: it is ending), failing past [`CHILD_DEADLINE`].
fn wait(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > CHILD_DEADLINE {
            let _ = child.kill();
            panic!("the child game did not end within {CHILD_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn open(root: &Path) -> SlotStore {
    SlotStore::open(StoreConfig::new(root)).unwrap()
}

/// The progress a save's title records.
fn progress_of(title: &str) -> u64 {
    title
        .strip_prefix("progress ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a save titled {title:?}"))
}

/// The crash saves in the store: (slot, cause, progress).
fn crash_saves(store: &SlotStore) -> Vec<(SlotId, CrashCause, u64)> {
    store
        .list()
        .unwrap()
        .iter()
        .filter_map(|entry| {
            let save = entry.shown_save()?;
            Some((
                entry.slot,
                save.meta.crash()?,
                progress_of(&save.meta.title),
            ))
        })
        .collect()
}

/// Every save the child confirmed loads, with the progress it confirmed (the newest of its
/// slot: the child saves each slot once before it crashes).
fn assert_confirmed_saves_intact(store: &SlotStore, run: &ChildRun) {
    assert!(
        run.confirmed.iter().any(|(slot, _)| slot == "Manual 1"),
        "the child confirmed its manual save before it crashed: {:?}\n{}",
        run.confirmed,
        run.stderr
    );
    for (slot_name, title) in &run.confirmed {
        let slot = [SlotId::Manual(0), SlotId::Quick]
            .into_iter()
            .chain((0..5).map(SlotId::Auto))
            .find(|slot| &slot.to_string() == slot_name)
            .unwrap_or_else(|| panic!("a confirmed save in {slot_name}"));
        let loaded = store
            .load(slot)
            .unwrap_or_else(|error| panic!("{slot_name} no longer loads: {error}"));
        assert_eq!(&loaded.meta.title, title, "{slot_name} holds another save");
        assert!(
            loaded.skipped.is_empty(),
            "{slot_name}: {:?}",
            loaded.skipped
        );
    }
}

/// The crash save exists, was written for `cause`, loads, and is no older than the bound:
/// the child's last frame minus `every`, one frame's lateness and one image's finishing.
fn assert_crash_save_within_bound(store: &SlotStore, run: &ChildRun, cause: CrashCause) {
    let saves = crash_saves(store);
    let [(slot, saved_cause, progress)] = saves.as_slice() else {
        panic!(
            "one crash save expected, found {saves:?}\nchild stderr:\n{}",
            run.stderr
        );
    };
    assert_eq!(*saved_cause, cause);
    store.load(*slot).expect("the crash save loads");
    let (last_progress, last_ms) = run.last_frame();
    let saved_ms = run.frames[progress];
    let lost = last_ms - saved_ms;
    let bound = EVERY_MS + run.largest_frame_gap() + FINISH_ALLOWANCE_MS;
    assert!(
        lost <= bound,
        "the crash save holds progress {progress} ({saved_ms} ms); the game reached \
         {last_progress} ({last_ms} ms): {lost} ms lost, over the bound of {bound} ms"
    );
    assert!(
        run.stderr.contains(cause.label()),
        "the child said where it saved: {}",
        run.stderr
    );
}

/// The newest save in the store (by the progress its title records) is no older than the
/// bound of [`assert_crash_save_within_bound`].
fn assert_newest_save_within_bound(store: &SlotStore, run: &ChildRun) {
    let newest = store
        .list()
        .unwrap()
        .iter()
        .filter_map(|entry| Some(progress_of(&entry.shown_save()?.meta.title)))
        .max()
        .expect("the child saved");
    let (last_progress, last_ms) = run.last_frame();
    let lost = last_ms - run.frames[&newest];
    let bound = EVERY_MS + run.largest_frame_gap() + FINISH_ALLOWANCE_MS;
    assert!(
        lost <= bound,
        "the newest save holds progress {newest}; the game reached {last_progress}: {lost} ms \
         lost, over the bound of {bound} ms"
    );
}

#[test]
fn a_panic_in_a_system_loses_at_most_the_interval() {
    let root = tempfile::tempdir().unwrap();
    let run = run(&default_child(), root.path(), "panic", None);
    assert!(
        !run.status.success(),
        "the child panicked: {:?}",
        run.status
    );
    let store = open(root.path());
    assert_crash_save_within_bound(&store, &run, CrashCause::Panic);
    assert_confirmed_saves_intact(&store, &run);
}

/// The child is stopped by `signal`: it saves, then exits through `AppExit` with 128 + the
/// signal, every earlier save intact.
fn stopped_by(signal: i32) {
    let root = tempfile::tempdir().unwrap();
    let run = run(&default_child(), root.path(), "signal", Some(signal));
    assert_eq!(
        run.status.code(),
        Some(128 + signal),
        "the child exits with 128 + the signal through AppExit\n{}",
        run.stderr
    );
    let store = open(root.path());
    assert_crash_save_within_bound(&store, &run, CrashCause::Signal);
    assert_confirmed_saves_intact(&store, &run);
}

#[test]
fn sigterm_saves_then_exits_through_app_exit() {
    stopped_by(libc::SIGTERM);
}

#[test]
fn sigint_saves_then_exits_through_app_exit() {
    stopped_by(libc::SIGINT);
}

#[test]
fn sighup_saves_then_exits_through_app_exit() {
    stopped_by(libc::SIGHUP);
}

#[test]
fn a_panic_with_panic_abort_loses_at_most_the_interval() {
    const ENV: &str = "KEEPSAKE_CRASH_SAVE_ABORT_CHILD";
    let Some(binary) = std::env::var_os(ENV).map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI builds the crash_save example with panic = \"abort\" and names it in {ENV}"
        );
        eprintln!("SKIPPED: {ENV} names no crash_save built with panic = \"abort\" (.ci/run does)");
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let run = run(&binary, root.path(), "panic", None);
    assert_eq!(
        run.status.signal(),
        Some(libc::SIGABRT),
        "a panic = \"abort\" build aborts: {:?}\n{}",
        run.status,
        run.stderr
    );
    let store = open(root.path());
    assert_crash_save_within_bound(&store, &run, CrashCause::Panic);
    assert_confirmed_saves_intact(&store, &run);
}

#[test]
fn a_full_disk_at_the_crash_leaves_every_earlier_save() {
    let root = tempfile::tempdir().unwrap();
    let run = run(&default_child(), root.path(), "full-disk", None);
    assert!(!run.status.success());
    let store = open(root.path());
    assert_eq!(
        crash_saves(&store),
        Vec::new(),
        "nothing fits on a full disk"
    );
    assert!(
        run.stderr.contains("the crash save failed"),
        "{}",
        run.stderr
    );
    assert_confirmed_saves_intact(&store, &run);
}

#[test]
fn a_second_panic_inside_the_crash_write_leaves_every_earlier_save() {
    let root = tempfile::tempdir().unwrap();
    let run = run(&default_child(), root.path(), "panic-in-write", None);
    assert!(!run.status.success());
    assert!(
        run.stderr.contains("the disk's write panicked"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("the crash save's write panicked"),
        "{}",
        run.stderr
    );
    let store = open(root.path());
    assert_eq!(crash_saves(&store), Vec::new());
    assert_confirmed_saves_intact(&store, &run);
}

#[test]
fn a_panic_while_a_save_is_written_leaves_every_earlier_save() {
    let root = tempfile::tempdir().unwrap();
    let run = run(&default_child(), root.path(), "panic-during-save", None);
    assert!(!run.status.success());
    let store = open(root.path());
    // The autosave in flight may land before the hook runs: it is then newer than the image,
    // which it disarms, and no crash save is written. Either way the newest save is within
    // the bound.
    if crash_saves(&store).is_empty() {
        assert_newest_save_within_bound(&store, &run);
    } else {
        assert_crash_save_within_bound(&store, &run, CrashCause::Panic);
    }
    assert_confirmed_saves_intact(&store, &run);
    // The autosave in flight either landed whole or left nothing; the crash save went into
    // the ring beside it.
    for slot in (0..5).map(SlotId::Auto) {
        match store.load(slot) {
            Ok(loaded) => assert!(loaded.skipped.is_empty(), "{slot}: {:?}", loaded.skipped),
            Err(error) => assert!(
                matches!(error, bevy_keepsake::store::StoreError::EmptySlot(_)),
                "{slot}: {error}"
            ),
        }
    }
}
