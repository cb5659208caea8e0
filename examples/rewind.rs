//! Rewind, headless: undo the last move, undo two, then go back as far as the ring reaches.
//!
//! A rewind point is the world kept in memory, never on disk. The game takes one before each
//! move (`commands.rewind_point()`, what an undo button needs; `RewindPlugin::every` takes
//! them on a timer instead), then `commands.rewind(1)` undoes the last move, `rewind(2)` the
//! one before, and `rewind_to(RewindTo::Ago(…))` goes back in time. A rewind lands in place:
//! the player keeps its entity id, and the footprints spawned since the point are despawned.
//!
//! Run: `cargo run --example rewind` (exits non-zero if a rewind brought back the wrong world).
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{
    RewindCompleted, RewindFailed, RewindPlugin, RewindPointCompleted, RewindRing, RewindTo,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::{TestSaves, run_until};
use std::time::Duration;

/// Where the player stands. Saved.
#[derive(Component, Reflect)]
#[reflect(Component)]
struct Position(i32);

/// Left behind by every move: a saved entity that a rewind must despawn again.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Footprint;

/// Moves made. A saved resource.
#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Moves(u32);
/// How many frames a result may take, not counting those while the plugin's work runs in the
/// background (see `bevy_keepsake::testing::run_until`).
const FRAMES: u32 = 20;

fn main() {
    let saves = TestSaves::new();
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        // Game time steps 0.1 s a frame, whatever the machine's speed.
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            100,
        )))
        .add_plugins(
            KeepsakePlugins::new("rewind-example")
                .save_root(saves.root()) // rewind writes nothing, but the store opens
                .set(RewindPlugin {
                    points: 10,
                    ..default()
                }),
        )
        .register_saveable::<Position>()
        .register_saveable::<Footprint>()
        .register_saveable::<Moves>()
        .init_resource::<Moves>()
        .add_observer(|failed: On<RewindFailed>| panic!("rewind failed: {}", failed.error));
    app.finish();
    app.cleanup();
    let player = app.world_mut().spawn((Saveable, Position(0))).id();

    for _ in 0..3 {
        app.world_mut().commands().rewind_point(); // the world before this move
        run_until::<RewindPointCompleted>(&mut app, FRAMES);
        let world = app.world_mut();
        world.get_mut::<Position>(player).unwrap().0 += 10;
        world.resource_mut::<Moves>().0 += 1;
        world.spawn((Saveable, Footprint));
        (0..10).for_each(|_| app.update()); // a second of play
    }
    check(&mut app, player, 30, 3);

    app.world_mut().commands().rewind(1); // undo the last move
    let undone = run_until::<RewindCompleted>(&mut app, FRAMES);
    println!(
        "undo: back to point {:?}, {:?} ago",
        undone.point, undone.age
    );
    check(&mut app, player, 20, 2);

    // The restored point stays in the ring (the same undo works again); `rewind(2)` is the one
    // before it.
    app.world_mut().commands().rewind(2);
    run_until::<RewindCompleted>(&mut app, FRAMES);
    check(&mut app, player, 10, 1);

    // A minute ago: the newest point that old, or, as here, the oldest the ring holds.
    let a_minute = RewindTo::Ago(Duration::from_secs(60));
    app.world_mut().commands().rewind_to(a_minute);
    run_until::<RewindCompleted>(&mut app, FRAMES);
    check(&mut app, player, 0, 0);
    println!("every rewind restored the world it should");
}

/// Asserts the player's position, the footprints and the moves; the player's entity id stayed.
fn check(app: &mut App, player: Entity, x: i32, moves: u32) {
    let world = app.world_mut();
    let at = (world.get::<Position>(player))
        .expect("the player keeps its entity id")
        .0;
    let footprints = world.query::<&Footprint>().iter(world).count() as u32;
    let made = world.resource::<Moves>().0;
    assert_eq!(
        (at, footprints, made),
        (x, moves, moves),
        "x, footprints, moves"
    );
    let points = world.resource::<RewindRing>().len();
    println!("x = {x}, {footprints} footprints, {made} moves ({points} points in the ring)");
}
