//! Frame time of a headless game with and without an autosave every 10 frames, on every world
//! shape of `common/shapes.rs` at 10k and 100k saveable entities (issue 24).
//!
//! The game, as a player would run it: frames paced to 60 FPS (each frame waits for the rest
//! of its 16.7 ms, as a vsynced game does; the wait is not in the frame time, and the save's
//! work on the task pool can use it), two busy systems of about 3 ms each that touch disjoint
//! data (so Bevy's multi-threaded executor runs them in parallel, on this machine's two
//! cores), and a tenth of the entities moving every frame (the same tenth, spread over the
//! world, as a game's moving units are). With autosave, a save is requested every 10 frames, so
//! each save comes after 10 frames of motion: 10 % of the entities changed since the last one.
//! A first save before the measured frames fills the plugin's capture cache, as the first save
//! of a session does.
//!
//! Per shape and size it prints: frame p50 / p99 without and with autosave and their ratio,
//! the frames over 16.7 ms in each run (the ones the autosave adds are the difference), the main
//! thread's part of each save (`SaveCompleted::capture_time`, p50 / p99), each save's latency
//! (request to `SaveCompleted`), and the pool's work per save measured outside the frames on the
//! same world after the same change: `PendingSnapshot::finish`, `format::encode` and the durable
//! write (`SlotStore::save`), alone on the machine.
//!
//! Then the crash save's cost (issue 49): the same game without autosave, keeping a crash image
//! ([`CrashSavePlugin`]) every 10 frames (the default is every 5 s, 30 times rarer): its frames
//! against the run without either.
//!
//! Then what a player does besides saving (issue 42), in the same game:
//!
//! - *F9 in session*: a quicksave, 10 frames of motion (10 % of the entities changed), a
//!   quickload (in place: the save is this session's), 10 times: each load's main-thread part
//!   (`LoadCompleted::apply_time`), every frame from the request to the load (the request's
//!   frame holds the capture the load starts with), and the main-thread capture of the first
//!   save after each load;
//! - *load at start*: an empty world (the shape's types registered, no entity) loads that
//!   quicksave, 3 times: `apply_time` and the worst frame (a save from another session:
//!   every entity spawned);
//! - *rewind held*: a point every frame for 80 frames of play, then 60 rewind steps, one a
//!   frame (`Back(1)` then `Back(2)`), motion paused while the key is held: each step's
//!   `RewindCompleted::apply_time`, the frames, how many frames after its request each step
//!   landed, and the points' main-thread capture.
//!
//! Run: `cargo bench --bench frame_time` (`KEEPSAKE_BENCH_QUICK=1`: 120 frames instead of 600;
//! `KEEPSAKE_BENCH_SHAPES` and `KEEPSAKE_BENCH_COUNTS` pick shapes and sizes;
//! `KEEPSAKE_BENCH_SAVE_PRIORITY=normal` runs the save thread at normal priority;
//! `KEEPSAKE_BENCH_TRACES=DIR` also writes every frame's time, in order, to
//! `DIR/<shape>_<count>_<scenario>.csv` for the scenarios `without`, `with` (autosave), `f9` and
//! `rewind`, each frame marked with what was asked in it: `save`, `load`, `rewind` or `point`.
//! The traces change nothing that is printed: `scripts/bench_report.py` plots them).

#[path = "common/env.rs"]
mod env;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;
#[path = "common/shapes.rs"]
mod shapes;
#[path = "common/trace.rs"]
mod trace;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::SaveMeta;
use bevy_keepsake::plugin::{
    AutosavePlugin, CrashSavePlugin, KeepsakeCorePlugin, KeepsakePlugins, KeepsakeStatus,
    RewindCompleted, RewindFailed, RewindPlugin, RewindPointCompleted, RewindRequest,
    RewindSettings, RewindTo, SavePriority,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::CaptureCache;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use shapes::{Movers, Shape};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SAVE_EVERY_FRAMES: usize = 10;
/// The crash-image row's interval, in frames: 30 times as often as the default 5 s, so each
/// run takes several images.
const CRASH_IMAGE_EVERY_FRAMES: u32 = 10;
const FRAME_BUDGET: Duration = Duration::from_micros(16_667);
/// Each busy system's work per frame.
const BUSY_WORK: Duration = Duration::from_millis(3);
/// The share of the entities that move every frame.
const MOVING: usize = 10;
/// Pool parts timed outside the frames per scenario.
const POOL_SAVES: usize = 10;

/// One busy system's state: how much it computes, and its own result (so the two systems
/// share no data and run in parallel).
#[derive(Resource)]
struct BusyA(u64, u64);

#[derive(Resource)]
struct BusyB(u64, u64);

fn busy_a(mut work: ResMut<BusyA>) {
    work.1 ^= compute(work.0);
}

fn busy_b(mut work: ResMut<BusyB>) {
    work.1 ^= compute(work.0);
}

/// A fixed amount of arithmetic standing in for AI, physics and the like.
fn compute(rounds: u64) -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..black_box(rounds) {
        state = (state.rotate_left(7) ^ round).wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    state
}

/// How many rounds of [`compute`] take [`BUSY_WORK`] on this machine (median of a few timings).
fn calibrate() -> u64 {
    const PROBE: u64 = 1 << 20;
    let mut timings: Vec<Duration> = (0..9)
        .map(|_| {
            let start = Instant::now();
            black_box(compute(black_box(PROBE)));
            start.elapsed()
        })
        .collect();
    timings.sort();
    let per_round = timings[timings.len() / 2].as_secs_f64() / PROBE as f64;
    (BUSY_WORK.as_secs_f64() / per_round) as u64
}

/// What the plugin reported in the load and rewind scenarios, and the frame count.
#[derive(Resource, Default)]
struct Played {
    frame: u64,
    /// Each load's `apply_time`.
    loads: Vec<Duration>,
    /// Each rewind's frame and `apply_time`.
    rewinds: Vec<(u64, Duration)>,
    rewinds_failed: usize,
    /// Each rewind point's `capture_time`.
    points: Vec<Duration>,
}

/// Each save's main-thread capture time and when it completed.
#[derive(Resource, Default)]
struct Saves {
    captures: Vec<Duration>,
    completed: Vec<Instant>,
}

fn app(root: &std::path::Path, shape: Shape, count: u32, rounds: u64) -> App {
    app_with(
        root,
        (shape, count),
        rounds,
        RewindPlugin::default(),
        CrashImages::Off,
    )
}

/// Whether the game keeps crash images ([`CrashSavePlugin`]), and how often. Off everywhere
/// but the crash-image row, so every other row measures what it names alone.
#[derive(Clone, Copy)]
enum CrashImages {
    Off,
    Every(Duration),
}

/// The game of [`app`] with `rewind` settings for the ring; `count` 0 is an empty world (the
/// shape's types registered, no entity: a game at its title screen).
fn app_with(
    root: &std::path::Path,
    (shape, count): (Shape, u32),
    rounds: u64,
    rewind: RewindPlugin,
    crash: CrashImages,
) -> App {
    let mut app = match count {
        0 => shape.app(),
        _ => shape.populated(count),
    };
    app.add_plugins(MinimalPlugins.set(TaskPoolPlugin {
        task_pool_options: two_compute_threads(),
    }))
    .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME_BUDGET));
    // The benchmark asks for its autosaves itself, every 10 frames.
    let keepsake = KeepsakePlugins::new("frame-time-bench")
        .save_root(root)
        .set(KeepsakeCorePlugin {
            save_priority: save_priority(),
            ..default()
        })
        .set(rewind)
        .disable::<AutosavePlugin>();
    match crash {
        CrashImages::Off => app.add_plugins(keepsake.disable::<CrashSavePlugin>()),
        CrashImages::Every(every) => {
            app.add_plugins(keepsake.set(CrashSavePlugin { every, ..default() }))
        }
    };
    app.init_resource::<Saves>()
        .init_resource::<Played>()
        .add_systems(First, |mut played: ResMut<Played>| played.frame += 1)
        .add_observer(|e: On<LoadCompleted>, mut played: ResMut<Played>| {
            played.loads.push(e.apply_time)
        })
        .add_observer(|e: On<RewindCompleted>, mut played: ResMut<Played>| {
            let frame = played.frame;
            played.rewinds.push((frame, e.apply_time))
        })
        .add_observer(|_: On<RewindFailed>, mut played: ResMut<Played>| played.rewinds_failed += 1)
        .add_observer(|e: On<RewindPointCompleted>, mut played: ResMut<Played>| {
            played.points.push(e.capture_time)
        })
        .insert_resource(BusyA(rounds, 0))
        .insert_resource(BusyB(rounds, 1))
        .add_systems(Update, (busy_a, busy_b))
        .add_observer(|saved: On<SaveCompleted>, mut saves: ResMut<Saves>| {
            saves.captures.push(saved.capture_time);
            saves.completed.push(Instant::now());
        });
    shape.add_motion(&mut app);
    let world = app.world_mut();
    let entities = shapes::saved_entities(world);
    world.insert_resource(Movers(shapes::every_nth(&entities, MOVING, 0)));
    app
}

/// The save thread's priority: the default (`Low`), or `Normal` with
/// `KEEPSAKE_BENCH_SAVE_PRIORITY=normal`, to measure what running the pool part in the cores'
/// idle time is worth.
fn save_priority() -> SavePriority {
    match std::env::var("KEEPSAKE_BENCH_SAVE_PRIORITY").as_deref() {
        Ok("normal") => SavePriority::Normal,
        Ok("low") | Err(_) => SavePriority::Low,
        Ok(other) => panic!("KEEPSAKE_BENCH_SAVE_PRIORITY: {other:?} is not low or normal"),
    }
}

/// Bevy's task pools with two compute threads. By default a 2-core machine gets one IO, one
/// async-compute and one compute thread, and the multi-threaded executor runs systems on the
/// compute pool only, so the two busy systems would run one after the other (frames of 6 ms,
/// measured); a game that wants them in parallel asks for this. The plugin's save work still
/// runs on the async-compute thread, competing with them for the two cores.
fn two_compute_threads() -> TaskPoolOptions {
    let mut options = TaskPoolOptions::default();
    options.compute.min_threads = 2;
    options
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One run's sorted frame times, frames over budget, and its saves.
struct Run {
    frames: Vec<Duration>,
    over_budget: usize,
    captures: Vec<Duration>,
    latencies: Vec<Duration>,
}

/// Runs frames until the plugin has no save in flight (bounded).
fn settle(app: &mut App) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !app.world().resource::<KeepsakeStatus>().is_idle() && Instant::now() < deadline {
        app.update();
    }
}

/// `frames` paced frames of `app`, with an autosave every [`SAVE_EVERY_FRAMES`] when asked.
fn run(app: &mut App, frames: usize, autosave: bool) -> Run {
    // Warm up, then a first save (the full one of a session) that the measured ones follow.
    for _ in 0..20 {
        app.update();
    }
    if autosave {
        app.world_mut().write_message(SaveRequest::autosave());
    }
    app.update();
    settle(app);
    *app.world_mut().resource_mut::<Saves>() = Saves::default();
    let mut times = Vec::with_capacity(frames);
    let mut requested = Vec::new();
    for frame in 1..=frames {
        let start = Instant::now();
        if autosave && frame % SAVE_EVERY_FRAMES == 0 {
            app.world_mut().write_message(SaveRequest::autosave());
            requested.push(start);
            trace::mark("save");
        }
        app.update();
        let elapsed = start.elapsed();
        times.push(elapsed);
        trace::frame(elapsed);
        std::thread::sleep(FRAME_BUDGET.saturating_sub(elapsed));
    }
    settle(app);
    let over_budget = times.iter().filter(|&&time| time > FRAME_BUDGET).count();
    times.sort();
    let saves = std::mem::take(&mut *app.world_mut().resource_mut::<Saves>());
    let mut latencies: Vec<Duration> = requested
        .iter()
        .zip(&saves.completed)
        .map(|(asked, done)| done.duration_since(*asked))
        .collect();
    latencies.sort();
    let mut captures = saves.captures;
    captures.sort();
    Run {
        frames: times,
        over_budget,
        captures,
        latencies,
    }
}

/// Sorted times of the pool's part of a save (join, hash, encode, durable write) after
/// [`SAVE_EVERY_FRAMES`] frames of motion, and of a full save's, outside any frame.
fn pool_work(app: &mut App, shape: Shape) -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    let save = |pending: bevy_keepsake::snapshot::PendingSnapshot| {
        let start = Instant::now();
        let bundle = pending.finish().into_bundle(1);
        store
            .save(SlotId::Auto(0), SaveMeta::new(SlotId::Auto(0)), &bundle)
            .unwrap();
        start.elapsed()
    };
    let world = app.world_mut();
    let movers = world.resource::<Movers>().0.clone();
    let mut cache = CaptureCache::default();
    let (mut changed, mut full) = (Vec::new(), Vec::new());
    for _ in 0..POOL_SAVES {
        world.increment_change_tick();
        full.push(save(cache.capture(world).unwrap()));
        for _ in 0..SAVE_EVERY_FRAMES {
            world.increment_change_tick();
            for &entity in &movers {
                shape.touch(world, entity);
            }
        }
        world.increment_change_tick();
        changed.push(save(cache.capture(world).unwrap()));
        cache.clear();
    }
    changed.sort();
    full.sort();
    (changed, full)
}

/// One frame paced to 60 FPS; returns its time.
fn paced_frame(app: &mut App) -> Duration {
    let start = Instant::now();
    app.update();
    let elapsed = start.elapsed();
    std::thread::sleep(FRAME_BUDGET.saturating_sub(elapsed));
    trace::frame(elapsed);
    elapsed
}

/// Frames and their count over budget, sorted.
struct Frames(Vec<Duration>);

impl Frames {
    fn over(&self) -> usize {
        self.0.iter().filter(|&&time| time > FRAME_BUDGET).count()
    }

    fn sorted(mut self) -> Vec<Duration> {
        self.0.sort();
        self.0
    }
}

/// Holding the rewind key (issue 42): a point every frame for 60 frames of play, then 60
/// rewind steps, one a frame (`Back(1)`, then `Back(2)`), the game's motion paused while the
/// key is held (time runs backwards, not on). Returns the step frames, each step's
/// `apply_time`, how many frames after its request each step landed, and the points' capture.
struct HoldRun {
    frames: Frames,
    applies: Vec<Duration>,
    late: Vec<u64>,
    failed: usize,
    points: Vec<Duration>,
}

fn hold_rewind(root: &std::path::Path, shape: Shape, count: u32, rounds: u64) -> HoldRun {
    let every_frame = RewindPlugin {
        points: 60,
        every: FRAME_BUDGET,
        memory_budget: 1 << 31,
    };
    let mut app = app_with(root, (shape, count), rounds, every_frame, CrashImages::Off);
    for _ in 0..80 {
        trace::mark("point");
        paced_frame(&mut app);
    }
    let points = std::mem::take(&mut app.world_mut().resource_mut::<Played>().points);
    app.world_mut().resource_mut::<RewindSettings>().every = Duration::ZERO;
    let movers = std::mem::take(&mut app.world_mut().resource_mut::<Movers>().0);
    let (mut frames, mut asked) = (Vec::new(), Vec::new());
    for step in 0..60 {
        let to = RewindTo::Back(if step == 0 { 1 } else { 2 });
        app.world_mut().write_message(RewindRequest { to });
        asked.push(app.world().resource::<Played>().frame + 1);
        trace::mark("rewind");
        frames.push(paced_frame(&mut app));
    }
    settle(&mut app);
    for _ in 0..10 {
        paced_frame(&mut app);
    }
    app.world_mut().resource_mut::<Movers>().0 = movers;
    let played = app.world().resource::<Played>();
    let late = (played.rewinds.iter().zip(&asked)).map(|((landed, _), asked)| landed - asked);
    let mut applies: Vec<Duration> = played.rewinds.iter().map(|(_, apply)| *apply).collect();
    applies.sort();
    HoldRun {
        late: late.collect(),
        failed: played.rewinds_failed,
        frames: Frames(frames),
        applies,
        points,
    }
}

/// F9 in the session (issue 42): a quicksave, 10 frames of motion (10 % of the entities
/// changed), a quickload; `loads` times. Returns every frame from each load's request to its
/// completion, each load's `apply_time`, and the main-thread capture of the first save after
/// each load.
struct LoadRun {
    frames: Frames,
    worst: Vec<Duration>,
    applies: Vec<Duration>,
    first_saves: Vec<Duration>,
}

fn quickloads(app: &mut App, loads: usize) -> LoadRun {
    let mut run = LoadRun {
        frames: Frames(Vec::new()),
        worst: Vec::new(),
        applies: Vec::new(),
        first_saves: Vec::new(),
    };
    for _ in 0..loads {
        app.world_mut()
            .write_message(SaveRequest::slot(SlotId::Quick));
        trace::mark("save");
        paced_frame(app);
        settle(app);
        for _ in 0..SAVE_EVERY_FRAMES {
            paced_frame(app);
        }
        let before = app.world().resource::<Played>().loads.len();
        app.world_mut().write_message(LoadRequest {
            slot: SlotId::Quick,
        });
        trace::mark("load");
        let mut frames = Vec::new();
        while app.world().resource::<Played>().loads.len() == before && frames.len() < 3600 {
            frames.push(paced_frame(app));
        }
        run.worst
            .push(frames.iter().copied().max().unwrap_or_default());
        run.frames.0.extend(frames);
        run.applies
            .extend(app.world().resource::<Played>().loads.last().copied());
        app.world_mut().write_message(SaveRequest::autosave());
        trace::mark("save");
        paced_frame(app);
        settle(app);
        run.first_saves
            .extend(app.world().resource::<Saves>().captures.last().copied());
    }
    run.worst.sort();
    run.applies.sort();
    run.first_saves.sort();
    run
}

/// A load at start (issue 42): an empty world (the shape's types registered, no entity)
/// loads the quicksave `quickloads` left, `loads` times (a new game each time). Returns each
/// load's `apply_time` and its worst frame.
fn loads_at_start(
    root: &std::path::Path,
    shape: Shape,
    rounds: u64,
    loads: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut applies, mut worst) = (Vec::new(), Vec::new());
    for _ in 0..loads {
        let mut app = app_with(
            root,
            (shape, 0),
            rounds,
            RewindPlugin::default(),
            CrashImages::Off,
        );
        for _ in 0..5 {
            paced_frame(&mut app);
        }
        app.world_mut().write_message(LoadRequest {
            slot: SlotId::Quick,
        });
        let mut frames = Vec::new();
        while app.world().resource::<Played>().loads.is_empty() && frames.len() < 3600 {
            frames.push(paced_frame(&mut app));
        }
        worst.push(frames.iter().copied().max().unwrap_or_default());
        applies.extend(app.world().resource::<Played>().loads.last().copied());
    }
    applies.sort();
    worst.sort();
    (applies, worst)
}

/// Prints the issue-42 scenarios of one shape and size.
fn report_play(
    root: &std::path::Path,
    with_app: &mut App,
    (shape, count): (Shape, u32),
    rounds: u64,
) {
    let p = percentile;
    let name = shape.name();
    trace::discard();
    let loads = quickloads(with_app, if env::quick_run() { 3 } else { 10 });
    trace::write(&format!("{name}_{count}_f9"));
    let (over, worst, frames) = (
        loads.frames.over(),
        loads.worst.clone(),
        loads.frames.sorted(),
    );
    println!(
        "  F9 in session ({} loads, each after a quicksave and {SAVE_EVERY_FRAMES} frames of \
         motion): apply p50 {:.3} ms, p99 {:.3} ms on the main thread; frames p50 {:.3} ms, p99 \
         {:.3} ms, worst per load p50 {:.3} ms, p99 {:.3} ms, {over} frames over 16.7 ms; first \
         save after it: capture p50 {:.3} ms, p99 {:.3} ms",
        loads.applies.len(),
        ms(p(&loads.applies, 0.5)),
        ms(p(&loads.applies, 0.99)),
        ms(p(&frames, 0.5)),
        ms(p(&frames, 0.99)),
        ms(p(&worst, 0.5)),
        ms(p(&worst, 0.99)),
        ms(p(&loads.first_saves, 0.5)),
        ms(p(&loads.first_saves, 0.99)),
    );
    let (applies, worst) = loads_at_start(root, shape, rounds, 3);
    trace::discard();
    println!(
        "  load at start ({} loads into an empty world): apply p50 {:.3} ms, p99 {:.3} ms on the \
         main thread; worst frame p50 {:.3} ms, p99 {:.3} ms",
        applies.len(),
        ms(p(&applies, 0.5)),
        ms(p(&applies, 0.99)),
        ms(p(&worst, 0.5)),
        ms(p(&worst, 0.99)),
    );
    let hold = hold_rewind(root, shape, count, rounds);
    trace::write(&format!("{name}_{count}_rewind"));
    let late_max = hold.late.iter().copied().max().unwrap_or_default();
    let in_frame = hold.late.iter().filter(|&&late| late == 0).count();
    let (over, frames, mut points) = (hold.frames.over(), hold.frames.sorted(), hold.points);
    points.sort();
    println!(
        "  rewind held ({} steps, a point a frame before, motion paused): step apply p50 {:.3} \
         ms, p99 {:.3} ms on the main thread; frames p50 {:.3} ms, p99 {:.3} ms, {over} frames \
         over 16.7 ms; {in_frame} landed in the frame asked, the latest {late_max} frames late, \
         {} refused; points' capture p50 {:.3} ms, p99 {:.3} ms",
        hold.applies.len(),
        ms(p(&hold.applies, 0.5)),
        ms(p(&hold.applies, 0.99)),
        ms(p(&frames, 0.5)),
        ms(p(&frames, 0.99)),
        hold.failed,
        ms(p(&points, 0.5)),
        ms(p(&points, 0.99)),
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn report(shape: Shape, count: u32, frames: usize, rounds: u64) {
    let dir = tempfile::tempdir().unwrap();
    let name = shape.name();
    let without = run(&mut app(dir.path(), shape, count, rounds), frames, false);
    trace::write(&format!("{name}_{count}_without"));
    let mut with_app = app(dir.path(), shape, count, rounds);
    let with = run(&mut with_app, frames, true);
    trace::write(&format!("{name}_{count}_with"));
    let (pool, pool_full) = pool_work(&mut with_app, shape);
    let crash_dir = tempfile::tempdir().unwrap();
    let crash_every = CrashImages::Every(FRAME_BUDGET * CRASH_IMAGE_EVERY_FRAMES);
    let settings = RewindPlugin::default();
    let mut crash_app = app_with(
        crash_dir.path(),
        (shape, count),
        rounds,
        settings,
        crash_every,
    );
    let crash = run(&mut crash_app, frames, false);
    trace::write(&format!("{name}_{count}_crash"));
    let play_dir = tempfile::tempdir().unwrap();
    let mut play_app = app(play_dir.path(), shape, count, rounds);
    run(&mut play_app, 20, false);
    let p = percentile;
    println!(
        "frame_time/{}, {count} entities, {frames} frames at 60 FPS, autosave every \
         {SAVE_EVERY_FRAMES} frames",
        shape.name()
    );
    println!(
        "  without autosave: p50 {:.3} ms, p99 {:.3} ms, {} frames over 16.7 ms",
        ms(p(&without.frames, 0.5)),
        ms(p(&without.frames, 0.99)),
        without.over_budget
    );
    println!(
        "  with autosave:    p50 {:.3} ms, p99 {:.3} ms, {} frames over 16.7 ms (p99 ratio {:.2}x)",
        ms(p(&with.frames, 0.5)),
        ms(p(&with.frames, 0.99)),
        with.over_budget,
        p(&with.frames, 0.99).as_secs_f64() / p(&without.frames, 0.99).as_secs_f64()
    );
    println!(
        "  crash images every {CRASH_IMAGE_EVERY_FRAMES} frames (no autosave): p50 {:.3} ms, \
         p99 {:.3} ms, {} frames over 16.7 ms (p99 ratio {:.2}x)",
        ms(p(&crash.frames, 0.5)),
        ms(p(&crash.frames, 0.99)),
        crash.over_budget,
        p(&crash.frames, 0.99).as_secs_f64() / p(&without.frames, 0.99).as_secs_f64()
    );
    println!(
        "  capture per save ({} saves): p50 {:.3} ms, p99 {:.3} ms on the main thread; \
         latency p50 {:.3} ms, p99 {:.3} ms",
        with.captures.len(),
        ms(p(&with.captures, 0.5)),
        ms(p(&with.captures, 0.99)),
        ms(p(&with.latencies, 0.5)),
        ms(p(&with.latencies, 0.99))
    );
    println!(
        "  pool per save ({} runs, outside frames): p50 {:.3} ms, p99 {:.3} ms; full save's \
         p50 {:.3} ms, p99 {:.3} ms",
        pool.len(),
        ms(p(&pool, 0.5)),
        ms(p(&pool, 0.99)),
        ms(p(&pool_full, 0.5)),
        ms(p(&pool_full, 0.99))
    );
    report_play(play_dir.path(), &mut play_app, (shape, count), rounds);
}

/// Entity counts (see `common/env.rs`): 10k and 100k, in a quick run too.
fn counts() -> Vec<u32> {
    env::counts(&[10_000, 100_000], &[10_000, 100_000])
}

fn main() {
    // `cargo test --benches` runs bench binaries without `--bench`; keep that smoke run short.
    let smoke = !std::env::args().any(|arg| arg == "--bench");
    let quick = smoke || env::quick_run();
    let frames = if quick { 120 } else { 600 };
    // The pools every app of this bench gets from its `TaskPoolPlugin`, made before the first
    // world is populated: the `handles` shape loads its handles through the asset server.
    two_compute_threads().create_default_pools();
    let rounds = calibrate();
    println!(
        "frame_time: each busy system calibrated to {rounds} rounds = {:.1} ms",
        ms(BUSY_WORK)
    );
    let (shapes, counts) = if smoke {
        (vec![Shape::Tried], vec![1_000])
    } else {
        (Shape::from_env(), counts())
    };
    for shape in shapes {
        for &count in &counts {
            report(shape, count, frames, rounds);
        }
    }
}
