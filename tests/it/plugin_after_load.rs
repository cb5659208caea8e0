//! The after-load pattern (`examples/after_load.rs`, the README's "After a load"): what the
//! game derives from saved data is rebuilt after loads and rewinds alike, by an `On<Add>`
//! observer per entity (a mesh made at run time) and an `On<WorldRestored>` observer from saved
//! resources (a board's tiles); nothing is reported lost, and `WorldRestored` says what was
//! restored.

use crate::common::keepsake_app::{self, Seen};
use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy_keepsake::plugin::RestoredFrom;
use bevy_keepsake::prelude::*;

/// Which cells are open. Saved.
#[derive(Resource, Reflect, Clone, Debug, PartialEq)]
#[reflect(Resource)]
struct Board(Vec<bool>);

/// Drawn for an open cell: derived, never saved.
#[derive(Component)]
struct Tile(usize);

/// Saved; its mesh is made at run time when it appears.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Ball;

/// How many times the tiles were rebuilt after a restore.
#[derive(Resource, Default)]
struct Rebuilds(usize);

fn dress_ball(added: On<Add<Ball>>, mut meshes: ResMut<Assets<Mesh>>, mut commands: Commands) {
    let mesh = meshes.add(Circle::new(15.0));
    commands.entity(added.entity).insert_if_new(Mesh2d(mesh));
}

fn rebuild_tiles(
    _: On<WorldRestored>,
    board: Res<Board>,
    tiles: Query<Entity, With<Tile>>,
    mut rebuilds: ResMut<Rebuilds>,
    mut commands: Commands,
) {
    tiles
        .iter()
        .for_each(|tile| commands.entity(tile).despawn());
    for (cell, _) in board.0.iter().enumerate().filter(|(_, open)| **open) {
        commands.spawn(Tile(cell));
    }
    rebuilds.0 += 1;
}

fn app(root: &std::path::Path) -> App {
    let mut app = keepsake_app::app(root);
    app.add_plugins(AssetPlugin::default())
        .init_asset::<Mesh>()
        .register_type::<Mesh2d>()
        .register_saveable_bevy_types()
        .register_saveable::<Ball>()
        .register_saveable::<Board>()
        .rebuilt_after_load::<Mesh2d>()
        .insert_resource(Board(vec![true, false, false]))
        .init_resource::<Rebuilds>()
        .add_observer(dress_ball)
        .add_observer(rebuild_tiles);
    app.update();
    app.world_mut()
        .spawn((Saveable, Ball, Transform::default()));
    app.world_mut().spawn(Tile(0));
    app.update();
    app
}

/// Opens `cell` and moves the ball, as play would (tiles redrawn by play's own code).
fn play(app: &mut App, cell: usize, x: f32) {
    let world = app.world_mut();
    world.resource_mut::<Board>().0[cell] = true;
    world.spawn(Tile(cell));
    let mut ball = world.query_filtered::<&mut Transform, With<Ball>>();
    ball.single_mut(world).unwrap().translation.x = x;
    app.update();
}

/// The open cells, the tiles drawn, the ball's x and whether it has a mesh.
fn drawn(app: &mut App) -> (Vec<usize>, Vec<usize>, f32, bool) {
    let world = app.world_mut();
    let open = (world.resource::<Board>().0.iter().enumerate())
        .filter_map(|(cell, open)| open.then_some(cell))
        .collect();
    let mut tiles: Vec<usize> = world.query::<&Tile>().iter(world).map(|t| t.0).collect();
    tiles.sort_unstable();
    let mut ball = world.query_filtered::<(&Transform, Has<Mesh2d>), With<Ball>>();
    let (transform, mesh) = ball.single(world).unwrap();
    (open, tiles, transform.translation.x, mesh)
}

#[test]
fn loads_and_rewinds_rebuild_the_tiles_and_the_mesh_with_nothing_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let saved = keepsake_app::save(&mut app, SlotId::Manual(0));
    assert!(saved.unsaved_components.is_empty(), "{saved:?}");
    assert_eq!(saved.handles_left_out, 0, "the mesh is not saved at all");

    play(&mut app, 1, 5.0);
    keepsake_app::rewind_point(&mut app);
    play(&mut app, 2, 9.0);
    assert_eq!(drawn(&mut app), (vec![0, 1, 2], vec![0, 1, 2], 9.0, true));

    let rewound = keepsake_app::rewind(&mut app);
    assert!(rewound.missing_components.is_empty(), "{rewound:?}");
    assert_eq!(drawn(&mut app), (vec![0, 1], vec![0, 1], 5.0, true));

    let loaded = keepsake_app::load(&mut app, SlotId::Manual(0));
    assert!(loaded.missing_components.is_empty(), "{loaded:?}");
    assert_eq!(drawn(&mut app), (vec![0], vec![0], 0.0, true));

    let restored: Vec<RestoredFrom> = (app.world().resource::<Seen>().restored.iter())
        .map(|restored| restored.from)
        .collect();
    assert_eq!(
        restored,
        [
            RestoredFrom::Rewind(rewound.point),
            RestoredFrom::Load(SlotId::Manual(0))
        ]
    );
    assert_eq!(app.world().resource::<Rebuilds>().0, 2);
}

#[test]
fn a_load_reports_its_main_thread_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    keepsake_app::save(&mut app, SlotId::Quick);
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert!(loaded.apply_time > std::time::Duration::ZERO);
}
