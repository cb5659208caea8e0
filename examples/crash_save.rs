//! What a crash costs with the crash save ([`CrashSavePlugin`]): a headless game counts frames,
//! keeps a crash image every 200 ms, and crashes. Run it twice:
//!
//! ```text
//! cargo run --example crash_save            # plays ~1.5 s, then a system panics
//! cargo run --example crash_save            # finds the save written when it crashed
//! ```
//!
//! The integration tests (`tests/it/crash_save.rs`) run it as a child with arguments
//! `<save root> <mode> <milliseconds>`: after that long the child `panic`s in a system, waits
//! for a `signal` (the test sends SIGTERM), panics with a disk that has become full
//! (`full-disk`), panics with a disk whose writes panic (`panic-in-write`: a second panic
//! inside the hook), or panics while an autosave is being written (`panic-during-save`). Each
//! frame prints `frame <progress> <milliseconds since start>`, each confirmed save
//! `saved|<slot>|<title>`; every save's title is
//! `progress <n>`, so the test reads what a save holds from its metadata.
//!
//! CI also runs it built with `panic = "abort"` (`.ci/run`), where the panic hook runs and the
//! process aborts without unwinding.

use bevy::app::ScheduleRunnerPlugin;
use bevy::prelude::*;
use bevy_keepsake::plugin::{CrashSavePlugin, SaveStarted, SaveTitle};
use bevy_keepsake::prelude::*;
use bevy_keepsake::store::WriteFile;
use bevy_keepsake::store::testing::Forward;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// What the game counts; saved.
#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Progress(u64);

/// Whether a save has started (captured, and handed to its thread).
#[derive(Resource, Default)]
struct SaveStartedSeen(bool);

/// When the game started, and how it ends.
#[derive(Resource)]
struct Plan {
    started: Instant,
    mode: Mode,
    after: Duration,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Panic,
    Signal,
    FullDisk,
    PanicInWrite,
    PanicDuringSave,
}

fn main() -> AppExit {
    let (root, mode, after) = arguments();
    report_earlier_crash_save(&root);
    App::new()
        .add_plugins(MinimalPlugins.set(ScheduleRunnerPlugin::run_loop(Duration::from_millis(4))))
        .add_plugins(
            KeepsakePlugins::new("crash-save-example")
                .save_root(&root)
                .filesystem(Arc::new(faulty_disk()))
                .set(CrashSavePlugin {
                    every: Duration::from_millis(200),
                    ..default()
                }),
        )
        .register_saveable_bevy_types()
        .register_saveable::<Progress>()
        .insert_resource(Plan {
            started: Instant::now(),
            mode,
            after,
        })
        .add_systems(Startup, spawn_world)
        .add_systems(Update, (play, earlier_saves, crash).chain())
        .init_resource::<SaveStartedSeen>()
        .add_observer(|_: On<SaveStarted>, mut seen: ResMut<SaveStartedSeen>| seen.0 = true)
        .add_observer(|saved: On<SaveCompleted>| {
            println!("saved|{}|{}", saved.slot, saved.meta.title);
        })
        .run()
}

fn arguments() -> (PathBuf, Mode, Duration) {
    let mut args = std::env::args().skip(1);
    let root = args.next().map_or_else(
        || std::env::temp_dir().join("keepsake-crash-save"),
        PathBuf::from,
    );
    let mode = match args.next().as_deref() {
        None | Some("panic") => Mode::Panic,
        Some("signal") => Mode::Signal,
        Some("full-disk") => Mode::FullDisk,
        Some("panic-in-write") => Mode::PanicInWrite,
        Some("panic-during-save") => Mode::PanicDuringSave,
        Some(other) => panic!("unknown mode {other}"),
    };
    let millis = args
        .next()
        .map_or(1500, |ms| ms.parse().expect("milliseconds"));
    (root, mode, Duration::from_millis(millis))
}

/// The second run of the example: say what the crash left.
fn report_earlier_crash_save(root: &Path) {
    let config = bevy_keepsake::store::StoreConfig::new(root);
    let Ok(store) = bevy_keepsake::store::SlotStore::open(config) else {
        return;
    };
    for entry in store.list().unwrap_or_default() {
        if let Some(save) = entry.shown_save()
            && let Some(cause) = save.meta.crash()
        {
            println!(
                "found {}: {} ({})",
                entry.slot,
                save.meta.title,
                cause.label()
            );
        }
    }
}

/// A few thousand entities, so a save takes a moment to write.
fn spawn_world(mut commands: Commands) {
    commands.insert_resource(Progress(0));
    commands.spawn_batch((0..5_000).map(|i| (Saveable, Transform::from_xyz(i as f32, 0.0, 0.0))));
}

fn play(mut progress: ResMut<Progress>, mut title: ResMut<SaveTitle>, plan: Res<Plan>) {
    progress.0 += 1;
    title.0 = format!("progress {}", progress.0);
    println!(
        "frame {} {}",
        progress.0,
        plan.started.elapsed().as_millis()
    );
}

/// A manual save and a quicksave early on: what a crash must leave intact.
fn earlier_saves(
    progress: Res<Progress>,
    mut commands: Commands,
    mut seen: ResMut<SaveStartedSeen>,
) {
    match progress.0 {
        5 => commands.save(SlotId::Manual(0)),
        10 => commands.save(SlotId::Quick),
        // Only the save the crash comes during counts as started.
        11 => seen.0 = false,
        _ => {}
    }
}

fn crash(
    plan: Res<Plan>,
    progress: Res<Progress>,
    started: Res<SaveStartedSeen>,
    mut save_asked_at: Local<Option<u64>>,
    mut commands: Commands,
    mut query: Query<&mut Transform>,
) {
    if plan.started.elapsed() < plan.after {
        return;
    }
    // Every entity changes, so the save below has the whole world to write.
    query
        .iter_mut()
        .for_each(|mut transform| transform.translation.y += 1.0);
    match plan.mode {
        Mode::Signal => {}
        Mode::Panic => panic!("the game's own bug"),
        Mode::FullDisk => {
            DISK.store(FULL, Ordering::SeqCst);
            panic!("the game's own bug, on a full disk");
        }
        Mode::PanicInWrite => {
            DISK.store(PANICS, Ordering::SeqCst);
            panic!("the game's own bug, on a disk whose writes panic");
        }
        // An autosave (into the ring the crash save goes to) starts the next frame: captured,
        // handed to its thread; the panic comes in the frame after it started, while it is
        // being written.
        Mode::PanicDuringSave => match *save_asked_at {
            None => {
                commands.autosave();
                *save_asked_at = Some(progress.0);
            }
            Some(_) if started.0 => panic!("the game's own bug, while a save is in flight"),
            Some(_) => {}
        },
    }
}

// ---------------------------------------------------------------------------------------------
// A disk that fails on cue

const HEALTHY: u8 = 0;
const FULL: u8 = 1;
const PANICS: u8 = 2;
static DISK: AtomicU8 = AtomicU8::new(HEALTHY);

/// The real filesystem, whose new files refuse their bytes (ENOSPC) or panic once [`DISK`]
/// says so (a [`Forward`] of the crate's `testing` feature: every other call goes to the real
/// filesystem).
fn faulty_disk() -> Forward {
    Forward::os().on_create_new(|fs, path| Ok(Box::new(FaultyFile(fs.create_new(path)?))))
}

struct FaultyFile(Box<dyn WriteFile>);

impl io::Write for FaultyFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match DISK.load(Ordering::SeqCst) {
            FULL => Err(io::Error::from_raw_os_error(libc_enospc())),
            PANICS => panic!("the disk's write panicked"),
            _ => self.0.write(bytes),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl WriteFile for FaultyFile {
    fn sync_all(&mut self) -> io::Result<()> {
        self.0.sync_all()
    }
}

/// ENOSPC on Linux and macOS.
fn libc_enospc() -> i32 {
    28
}
