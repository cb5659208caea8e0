//! After a load or a rewind, the game rebuilds what it derives from saved data, headless:
//!
//! - per entity, an `On<Add<Ball>>` observer gives the ball its mesh, made at run time
//!   (`Assets::add`, which a save cannot keep): in play and after every load and rewind;
//! - from saved resources, an `On<WorldRestored>` observer rebuilds the board's tiles, once per
//!   load and per rewind.
//!
//! The script: save, play, take a rewind point, play, rewind, check, load, check, exit.
use bevy::prelude::*;
use bevy_keepsake::plugin::{RestoredFrom, RewindPointCompleted};
use bevy_keepsake::prelude::*;

/// Which cells of the board are open. Saved.
#[derive(Resource, Reflect, Clone, Debug, PartialEq)]
#[reflect(Resource)]
struct Board(Vec<bool>);

/// A tile drawn for an open cell: follows from the board, never saved.
#[derive(Component)]
struct Tile(usize);

/// The ball: saved (its `Transform` is where it is); its mesh is made when it appears.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Ball;

/// What the next restore must bring back: the board and the ball's x.
#[derive(Resource, Default)]
struct Expect(Option<(Board, f32)>);

/// The restore not checked yet, kept by an observer for `check_restored`.
#[derive(Resource, Default)]
struct LastRestored(Option<RestoredFrom>);

fn main() -> AppExit {
    let root = std::env::temp_dir().join("keepsake-after-load-example");
    App::new()
        .add_plugins((MinimalPlugins, AssetPlugin::default()))
        .add_plugins(KeepsakePlugins::new("after-load").save_root(root))
        .init_asset::<Mesh>()
        .register_saveable_bevy_types() // Transform, …
        .register_saveable::<Ball>()
        .register_saveable::<Board>()
        .rebuilt_after_load::<Mesh2d>() // dress_ball makes it again
        .insert_resource(Board(vec![true, false, false, true]))
        .init_resource::<Expect>()
        .init_resource::<LastRestored>()
        .add_observer(dress_ball)
        .add_observer(rebuild_tiles)
        .add_observer(play_after_save)
        .add_observer(play_after_point)
        .add_systems(Startup, start)
        .add_observer(
            |restored: On<WorldRestored>, mut last: ResMut<LastRestored>| {
                last.0 = Some(restored.from);
            },
        )
        .add_systems(Update, check_restored)
        .run()
}

/// Per entity: every ball gets its mesh when it appears (`insert_if_new` keeps one it has).
fn dress_ball(added: On<Add<Ball>>, mut meshes: ResMut<Assets<Mesh>>, mut commands: Commands) {
    let mesh = meshes.add(Circle::new(15.0));
    commands.entity(added.entity).insert_if_new(Mesh2d(mesh));
}

/// From saved resources: the tiles follow the restored board.
fn rebuild_tiles(
    restored: On<WorldRestored>,
    board: Res<Board>,
    tiles: Query<Entity, With<Tile>>,
    mut commands: Commands,
) {
    println!("{:?} restored", restored.from);
    spawn_tiles(&board, &tiles, &mut commands);
}

fn spawn_tiles(board: &Board, tiles: &Query<Entity, With<Tile>>, commands: &mut Commands) {
    tiles
        .iter()
        .for_each(|tile| commands.entity(tile).despawn());
    for (cell, _) in board.0.iter().enumerate().filter(|(_, open)| **open) {
        commands.spawn(Tile(cell));
    }
}

fn start(board: Res<Board>, tiles: Query<Entity, With<Tile>>, mut commands: Commands) {
    commands.spawn((Saveable, Ball, Transform::default()));
    spawn_tiles(&board, &tiles, &mut commands);
    commands.save(SlotId::Manual(0));
}

/// Plays a move: opens `cell` (redrawing the tiles, as the game does in play) and moves the
/// ball to `x`.
fn play(cell: usize, x: f32, world: &mut World) {
    world.resource_mut::<Board>().0[cell] = true;
    let mut tiles = world.query_filtered::<Entity, With<Tile>>();
    let old: Vec<Entity> = tiles.iter(world).collect();
    old.into_iter().for_each(|tile| {
        world.despawn(tile);
    });
    let open: Vec<usize> = (world.resource::<Board>().0.iter().enumerate())
        .filter_map(|(cell, open)| open.then_some(cell))
        .collect();
    world.spawn_batch(open.into_iter().map(Tile));
    let mut ball = world.query_filtered::<&mut Transform, With<Ball>>();
    ball.single_mut(world).unwrap().translation.x = x;
}

fn play_after_save(_: On<SaveCompleted>, mut commands: Commands) {
    commands.queue(|world: &mut World| {
        play(1, 5.0, world);
        world.commands().rewind_point();
    });
}

fn play_after_point(_: On<RewindPointCompleted>, mut commands: Commands) {
    commands.queue(|world: &mut World| {
        let board = world.resource::<Board>().clone();
        world.resource_mut::<Expect>().0 = Some((board, 5.0));
        play(2, 9.0, world);
        world.commands().rewind(1);
    });
}

/// In the frame of a restore (its observers' commands applied): the tiles follow the board,
/// the ball is where it was and has its mesh. After the rewind, the load comes next; after the
/// load, the end.
fn check_restored(
    mut restored: ResMut<LastRestored>,
    board: Res<Board>,
    tiles: Query<&Tile>,
    ball: Single<(&Transform, Option<&Mesh2d>), With<Ball>>,
    mut expect: ResMut<Expect>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(from) = restored.0.take() else {
        return;
    };
    let Some((want_board, want_x)) = expect.0.take() else {
        return;
    };
    let mut drawn: Vec<usize> = tiles.iter().map(|tile| tile.0).collect();
    drawn.sort_unstable();
    let open: Vec<usize> = (board.0.iter().enumerate())
        .filter_map(|(cell, open)| open.then_some(cell))
        .collect();
    let (transform, mesh) = *ball;
    assert_eq!(*board, want_board, "the board after {from:?}");
    assert_eq!(drawn, open, "the tiles follow the board");
    assert_eq!(transform.translation.x, want_x, "the ball is back");
    assert!(mesh.is_some(), "the ball has its mesh again");
    println!(
        "after {:?}: board {:?}, tiles {drawn:?}, ball at x = {want_x}",
        from, board.0
    );
    match from {
        RestoredFrom::Rewind(_) => {
            expect.0 = Some((Board(vec![true, false, false, true]), 0.0));
            commands.load(SlotId::Manual(0));
        }
        RestoredFrom::Load(_) => {
            exit.write(AppExit::Success);
        }
    }
}
