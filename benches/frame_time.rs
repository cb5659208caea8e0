//! Frame time of a headless game with and without an autosave every 10 frames, and the
//! main-thread capture of each save.
//!
//! Three scenarios:
//! - `10000 entities, empty frame`: the game only integrates every entity's velocity (about
//!   0.3 ms). Kept for comparison with earlier runs; its ratios are dominated by the capture.
//! - `10000 entities, 4 ms frame` and `100000 entities, 4 ms frame`: each frame does about 4 ms of
//!   game work (a fixed amount of computation, calibrated once per run so every scenario does the
//!   same) and mutates 1 % of the entities (a different 1 % each frame: position and health), as
//!   a game's simulation would. That is the frame the targets are about: p99 with autosave
//!   ≤ 1.15× without.
//!
//! The two 4 ms scenarios run twice: with frames back to back (the harshest case: the save's
//! work on the task pool competes with the next frames for the machine's cores), and paced to
//! 60 FPS the way a vsynced game is (each frame then waits for the rest of its 16.7 ms, and the
//! pool's work can use that wait). Frame times are the `app.update()` alone, never the wait.
//!
//! Besides the capture time each save reports (`SaveCompleted::capture_time`: the main thread's
//! part of the plugin's incremental capture), every scenario measures, outside any frame and on
//! the same world, a full capture (`snapshot::capture`), and the main thread's part of an
//! incremental capture (`CaptureCache::capture`) after 1 % of the entities changed since the
//! last one: a run of neighbouring entities (as the game frame changes them), and 1 % scattered
//! at random over the world (every chunk then has a changed row), with the pool's part
//! (`PendingSnapshot::finish`) beside it.
//!
//! Run: `cargo bench --bench frame_time` (`KEEPSAKE_BENCH_QUICK=1` for a short run).

#[path = "../tests/it/common/game_world.rs"]
mod game_world;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::KeepsakePlugin;
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot;
use std::hint::black_box;
use std::time::{Duration, Instant};

const SAVE_EVERY_FRAMES: usize = 10;
const FRAME_BUDGET: Duration = Duration::from_micros(16_667);
/// The game work of a realistic frame.
const GAME_WORK: Duration = Duration::from_millis(4);
/// Full captures timed on their own per scenario.
const FULL_CAPTURES: usize = 20;
/// Incremental captures timed on their own per scenario and kind of change.
const INCREMENTAL_CAPTURES: usize = 40;

/// What each frame of a scenario does besides the plugin's work.
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Integrate every entity's velocity, nothing else.
    Empty,
    /// `rounds` of computation (about [`GAME_WORK`]) and changes to 1 % of the entities.
    Game { rounds: u64 },
}

#[derive(Clone, Copy, Debug)]
struct Scenario {
    entities: u32,
    frame: Frame,
    pacing: Pacing,
}

/// When the next frame starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pacing {
    /// Right after the last one.
    BackToBack,
    /// A 60 FPS frame after the last one started, as with vsync.
    Vsync60,
}

impl Scenario {
    fn title(&self) -> String {
        match self.frame {
            Frame::Empty => format!("{} entities, empty frame", self.entities),
            Frame::Game { .. } => format!(
                "{} entities, {:.0} ms frame touching 1%{}",
                self.entities,
                GAME_WORK.as_secs_f64() * 1e3,
                match self.pacing {
                    Pacing::BackToBack => "",
                    Pacing::Vsync60 => " paced to 60 FPS",
                }
            ),
        }
    }
}

/// The game's own work in an empty frame: integrate velocities.
fn movement(time: Res<Time>, mut bodies: Query<(&mut Transform, &game_world::Velocity)>) {
    for (mut transform, velocity) in &mut bodies {
        transform.translation += velocity.0 * time.delta_secs();
    }
}

/// The simulated game of a realistic frame: the entities it changes, in turn, and how much it
/// computes.
#[derive(Resource)]
struct GameWork {
    entities: Vec<Entity>,
    next: usize,
    rounds: u64,
}

/// Changes the next 1 % of the entities (position and health), then computes for the rest of
/// the frame's game work.
fn game_work(
    mut work: ResMut<GameWork>,
    mut bodies: Query<(
        &mut Transform,
        &game_world::Velocity,
        &mut game_world::Health,
    )>,
) {
    let len = work.entities.len();
    let touched = (len / 100).max(1);
    for offset in 0..touched {
        let entity = work.entities[(work.next + offset) % len];
        if let Ok((mut transform, velocity, mut health)) = bodies.get_mut(entity) {
            transform.translation += velocity.0 / 60.0;
            health.current = (health.current + 1.0) % health.max;
        }
    }
    work.next = (work.next + touched) % len;
    black_box(compute(work.rounds));
}

/// A fixed amount of arithmetic standing in for AI, physics and the like.
fn compute(rounds: u64) -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..rounds {
        state = (state.rotate_left(7) ^ round).wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    state
}

/// How many rounds of [`compute`] take [`GAME_WORK`] on this machine (median of a few timings).
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
    (GAME_WORK.as_secs_f64() / per_round) as u64
}

#[derive(Resource, Default)]
struct Captures(Vec<Duration>);

fn app(root: &std::path::Path, scenario: Scenario) -> App {
    let mut app = game_world::app();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME_BUDGET))
        .add_plugins(
            KeepsakePlugin::new("frame-time-bench")
                .save_root(root)
                .autosave_every(Duration::ZERO),
        )
        .init_resource::<Captures>()
        .add_observer(|saved: On<SaveCompleted>, mut captures: ResMut<Captures>| {
            captures.0.push(saved.capture_time)
        });
    game_world::populate(app.world_mut(), scenario.entities);
    match scenario.frame {
        Frame::Empty => {
            app.add_systems(Update, movement);
        }
        Frame::Game { rounds } => {
            let entities = app
                .world_mut()
                .query_filtered::<Entity, With<game_world::Health>>()
                .iter(app.world())
                .collect();
            app.insert_resource(GameWork {
                entities,
                next: 0,
                rounds,
            })
            .add_systems(Update, game_work);
        }
    }
    app
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Sorted frame times and sorted capture times of the saves of one run.
struct Run {
    frames: Vec<Duration>,
    captures: Vec<Duration>,
}

fn run(scenario: Scenario, frames: usize, autosave: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), scenario);
    for frame in 0..30 {
        // Warm up; one save among them, as the first save of a session encodes the whole
        // world (the capture cache starts empty) and is not what the measured saves are about.
        if autosave && frame == 0 {
            app.world_mut().write_message(SaveRequest::autosave());
        }
        app.update();
    }
    while !app.world().resource::<KeepsakeStatus>().is_idle() {
        app.update();
    }
    app.world_mut().resource_mut::<Captures>().0.clear();
    let mut times = Vec::with_capacity(frames);
    for frame in 0..frames {
        if autosave && frame % SAVE_EVERY_FRAMES == 0 {
            app.world_mut().write_message(SaveRequest::autosave());
        }
        let start = Instant::now();
        app.update();
        let elapsed = start.elapsed();
        times.push(elapsed);
        if scenario.pacing == Pacing::Vsync60 {
            std::thread::sleep(FRAME_BUDGET.saturating_sub(elapsed));
        }
    }
    // Let the last saves finish before the folder goes away.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !app.world().resource::<KeepsakeStatus>().is_idle() && Instant::now() < deadline {
        app.update();
    }
    times.sort();
    let mut captures = app.world_mut().resource_mut::<Captures>().0.clone();
    captures.sort();
    Run {
        frames: times,
        captures,
    }
}

/// Sorted times of full captures of the scenario's world, taken outside any frame.
fn full_captures(scenario: Scenario) -> Vec<Duration> {
    let mut app = game_world::app();
    game_world::populate(app.world_mut(), scenario.entities);
    let mut times: Vec<Duration> = (0..FULL_CAPTURES)
        .map(|_| {
            let start = Instant::now();
            black_box(snapshot::capture(app.world()).unwrap());
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

/// Which 1 % of the entities an incremental capture finds changed.
#[derive(Clone, Copy, Debug)]
enum Spread {
    /// Neighbouring entities in spawn order, a different run each time.
    Together,
    /// Entities picked at random over the whole world.
    Scattered,
}

/// Sorted times of the main thread's part of incremental captures (and of the pool's part)
/// after `spread` changes to 1 % of the scenario's world, taken outside any frame.
fn incremental_captures(scenario: Scenario, spread: Spread) -> (Vec<Duration>, Vec<Duration>) {
    let mut app = game_world::app();
    game_world::populate(app.world_mut(), scenario.entities);
    let world = app.world_mut();
    let entities: Vec<Entity> = world
        .query_filtered::<Entity, With<game_world::Health>>()
        .iter(world)
        .collect();
    let touched = (entities.len() / 100).max(1);
    let mut cache = snapshot::CaptureCache::default();
    world.increment_change_tick();
    black_box(cache.capture(world).unwrap().finish());
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let (mut main, mut pool) = (Vec::new(), Vec::new());
    for run in 0..INCREMENTAL_CAPTURES {
        world.increment_change_tick();
        for offset in 0..touched {
            let index = match spread {
                Spread::Together => (run * touched + offset) % entities.len(),
                Spread::Scattered => {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % entities.len() as u64) as usize
                }
            };
            if let Some(mut health) = world.get_mut::<game_world::Health>(entities[index]) {
                health.current = (health.current + 1.0) % health.max;
            }
        }
        world.increment_change_tick();
        let start = Instant::now();
        let pending = cache.capture(world).unwrap();
        main.push(start.elapsed());
        let start = Instant::now();
        black_box(pending.finish());
        pool.push(start.elapsed());
    }
    main.sort();
    pool.sort();
    (main, pool)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn frame_share(duration: Duration) -> f64 {
    100.0 * duration.as_secs_f64() / FRAME_BUDGET.as_secs_f64()
}

fn report(scenario: Scenario, frames: usize) {
    let without = run(scenario, frames, false);
    let with = run(scenario, frames, true);
    let p50_p99 = |times: &[Duration]| (percentile(times, 0.5), percentile(times, 0.99));
    let (without_p50, without_p99) = p50_p99(&without.frames);
    let (with_p50, with_p99) = p50_p99(&with.frames);
    println!(
        "frame_time/{}, {frames} frames, autosave every {SAVE_EVERY_FRAMES} frames",
        scenario.title()
    );
    println!(
        "  without autosave: p50 {:.3} ms, p99 {:.3} ms",
        ms(without_p50),
        ms(without_p99)
    );
    println!(
        "  with autosave:    p50 {:.3} ms, p99 {:.3} ms (p99 ratio {:.2}x)",
        ms(with_p50),
        ms(with_p99),
        with_p99.as_secs_f64() / without_p99.as_secs_f64()
    );
    if !with.captures.is_empty() {
        let (capture_p50, capture_p99) = p50_p99(&with.captures);
        println!(
            "  capture per save ({} saves): p50 {:.3} ms, p99 {:.3} ms = {:.1}% / {:.1}% of a 60 FPS frame",
            with.captures.len(),
            ms(capture_p50),
            ms(capture_p99),
            frame_share(capture_p50),
            frame_share(capture_p99)
        );
    }
    if scenario.pacing == Pacing::Vsync60 {
        // The captures timed on their own are the same as the back-to-back scenario's.
        return;
    }
    let full = full_captures(scenario);
    let (full_p50, full_p99) = p50_p99(&full);
    println!(
        "  full capture ({} runs): p50 {:.3} ms, p99 {:.3} ms = {:.1}% / {:.1}% of a 60 FPS frame",
        full.len(),
        ms(full_p50),
        ms(full_p99),
        frame_share(full_p50),
        frame_share(full_p99)
    );
    for (spread, label) in [
        (Spread::Together, "together"),
        (Spread::Scattered, "scattered"),
    ] {
        let (main, pool) = incremental_captures(scenario, spread);
        let (main_p50, main_p99) = p50_p99(&main);
        let (pool_p50, pool_p99) = p50_p99(&pool);
        println!(
            "  incremental capture, 1% changed {label} ({} runs): p50 {:.3} ms, p99 {:.3} ms on \
             the main thread; join on the pool p50 {:.3} ms, p99 {:.3} ms",
            main.len(),
            ms(main_p50),
            ms(main_p99),
            ms(pool_p50),
            ms(pool_p99)
        );
    }
}

fn main() {
    // `cargo test --benches` runs bench binaries without `--bench`; keep that smoke run short.
    let quick = std::env::var_os("KEEPSAKE_BENCH_QUICK").is_some()
        || !std::env::args().any(|arg| arg == "--bench");
    let frames = if quick { 120 } else { 1_200 };
    let rounds = calibrate();
    println!(
        "frame_time: game work calibrated to {rounds} rounds = {:.1} ms",
        ms(GAME_WORK)
    );
    let game = Frame::Game { rounds };
    let scenario = |entities, frame, pacing| Scenario {
        entities,
        frame,
        pacing,
    };
    for scenario in [
        scenario(10_000, Frame::Empty, Pacing::BackToBack),
        scenario(10_000, game, Pacing::BackToBack),
        scenario(10_000, game, Pacing::Vsync60),
        scenario(100_000, game, Pacing::BackToBack),
        scenario(100_000, game, Pacing::Vsync60),
    ] {
        report(scenario, frames);
    }
}
