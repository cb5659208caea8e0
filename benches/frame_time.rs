//! Frame time of a headless game with 10k saved entities, with and without autosaves every few
//! frames, and the main-thread stall of each save (the capture).
//!
//! Run: `cargo bench --bench frame_time` (`KEEPSAKE_BENCH_QUICK=1` for a short run).
//! Prints p50/p99 of `app.update()` time for both runs, the stall per save, and the stall as a
//! share of a 60 FPS frame.

#[path = "../tests/it/common/game_world.rs"]
mod game_world;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::KeepsakePlugin;
use bevy_keepsake::prelude::*;
use std::time::{Duration, Instant};

const ENTITIES: u32 = 10_000;
const SAVE_EVERY_FRAMES: usize = 10;

/// The game's own work each frame: integrate velocities.
fn movement(time: Res<Time>, mut bodies: Query<(&mut Transform, &game_world::Velocity)>) {
    for (mut transform, velocity) in &mut bodies {
        transform.translation += velocity.0 * time.delta_secs();
    }
}

#[derive(Resource, Default)]
struct Stalls(Vec<Duration>);

fn app(root: &std::path::Path) -> App {
    let mut app = game_world::app();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(
            16_667,
        )))
        .add_plugins(
            KeepsakePlugin::new("frame-time-bench")
                .save_root(root)
                .autosave_every(Duration::ZERO),
        )
        .init_resource::<Stalls>()
        .add_observer(|saved: On<SaveCompleted>, mut stalls: ResMut<Stalls>| {
            stalls.0.push(saved.capture_time)
        })
        .add_systems(Update, movement);
    game_world::populate(app.world_mut(), ENTITIES);
    app
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn run(frames: usize, autosave: bool) -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    for _ in 0..30 {
        app.update(); // warm up
    }
    let mut times = Vec::with_capacity(frames);
    for frame in 0..frames {
        if autosave && frame % SAVE_EVERY_FRAMES == 0 {
            app.world_mut().write_message(SaveRequest::autosave());
        }
        let start = Instant::now();
        app.update();
        times.push(start.elapsed());
    }
    // Let the last saves finish before the folder goes away.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !app.world().resource::<KeepsakeStatus>().is_idle() && Instant::now() < deadline {
        app.update();
    }
    times.sort();
    let mut stalls = app.world_mut().resource_mut::<Stalls>().0.clone();
    stalls.sort();
    (times, stalls)
}

fn main() {
    // `cargo test --benches` runs bench binaries with no arguments other than `--bench` absent;
    // keep that smoke run short.
    let quick = std::env::var_os("KEEPSAKE_BENCH_QUICK").is_some()
        || !std::env::args().any(|arg| arg == "--bench");
    let frames = if quick { 120 } else { 1_200 };

    let (without, _) = run(frames, false);
    let (with, stalls) = run(frames, true);
    let frame_budget = Duration::from_micros(16_667);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;

    println!(
        "frame_time/{ENTITIES} entities, {frames} frames, autosave request every {SAVE_EVERY_FRAMES} frames"
    );
    println!(
        "  without autosave: p50 {:.3} ms, p99 {:.3} ms",
        ms(percentile(&without, 0.5)),
        ms(percentile(&without, 0.99))
    );
    println!(
        "  with autosave:    p50 {:.3} ms, p99 {:.3} ms (p99 ratio {:.2}x)",
        ms(percentile(&with, 0.5)),
        ms(percentile(&with, 0.99)),
        percentile(&with, 0.99).as_secs_f64() / percentile(&without, 0.99).as_secs_f64()
    );
    if !stalls.is_empty() {
        let p50 = percentile(&stalls, 0.5);
        let p99 = percentile(&stalls, 0.99);
        println!(
            "  main-thread stall per save ({} saves): p50 {:.3} ms, p99 {:.3} ms = {:.1}% / {:.1}% of a 60 FPS frame",
            stalls.len(),
            ms(p50),
            ms(p99),
            100.0 * p50.as_secs_f64() / frame_budget.as_secs_f64(),
            100.0 * p99.as_secs_f64() / frame_budget.as_secs_f64()
        );
    }
    // With frames paced to 60 FPS (as under vsync), a frame only shows the stall if it overruns.
    let paced = |times: &[Duration]| percentile(times, 0.99).max(frame_budget);
    println!(
        "  paced to 60 FPS:  p99 {:.3} ms without, {:.3} ms with ({:.2}x)",
        ms(paced(&without)),
        ms(paced(&with)),
        paced(&with).as_secs_f64() / paced(&without).as_secs_f64()
    );
}
