//! No silent losses: a save names the components its entities carry that it leaves out, a
//! load names what the loaded entities came back without, and what is declared rebuilt, put
//! back by an `On<Add>` observer, or computed by Bevy (the quad mesh Bevy 0.20 gives every
//! `Sprite`) is not reported.

use crate::common::keepsake_app::{self, Seen};
use bevy::prelude::*;
use bevy_keepsake::plugin::{KeepsakeSettings, LoadMode, RestoredFrom};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::{UnsavedChildren, UnsavedComponent, unsaved_children};

/// Saved, registered.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Paddle {
    speed: f32,
}

/// On saved entities, reflected but not registered for saving.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component)]
struct Collider;

/// On a saved entity, without `Reflect` (Bevy keeps no name for it without its `debug`
/// feature).
#[derive(Component)]
struct Wall;

fn paddle_app(root: &std::path::Path) -> App {
    let mut app = keepsake_app::app(root);
    // Every saved entity spawned again at each load and rewind: each is asked about.
    app.world_mut().resource_mut::<KeepsakeSettings>().load_mode = LoadMode::Respawn;
    app.register_saveable::<Paddle>()
        .register_type::<Collider>()
        .register_type::<Transform>();
    app
}

fn spawn_paddles(app: &mut App) {
    let world = app.world_mut();
    for x in [0.0, 10.0] {
        world.spawn((
            Saveable,
            Paddle { speed: 1.0 },
            Collider,
            Transform::from_xyz(x, 0.0, 0.0),
        ));
    }
    world.spawn((Saveable, Paddle { speed: 2.0 }, Wall));
    app.update();
}

/// The entries as (short name, entities), sorted.
fn named(components: &[UnsavedComponent]) -> Vec<(String, usize)> {
    let mut named: Vec<(String, usize)> = components
        .iter()
        .map(|c| (c.short_name(), c.entities))
        .collect();
    named.sort();
    named
}

/// What `Wall` (no `Reflect`) is called: its name where Bevy keeps names (its `debug`
/// feature, on in some builds through other crates), else the placeholder.
fn wall(entities: usize) -> (String, usize) {
    let names_kept = bevy::utils::DebugName::borrowed("x").to_string() == "x";
    let name = if names_kept {
        "Wall"
    } else {
        "a type without Reflect"
    };
    (name.to_owned(), entities)
}

/// `expected` and the entry of `Wall`, sorted as `named` sorts.
fn with_wall(expected: &[(&str, usize)], walls: usize) -> Vec<(String, usize)> {
    let mut all: Vec<(String, usize)> = (expected.iter())
        .map(|(name, n)| ((*name).to_owned(), *n))
        .chain([wall(walls)])
        .collect();
    all.sort();
    all
}

#[test]
fn a_save_names_what_its_entities_carry_that_it_leaves_out_and_a_load_what_came_back_without() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    spawn_paddles(&mut app);

    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    // GlobalTransform and TransformTreeChanged come with Transform: Bevy computes them.
    assert_eq!(
        named(&saved.unsaved_components),
        with_wall(&[("Collider", 2), ("Transform", 2)], 1),
        "{:?}",
        saved.unsaved_components
    );

    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    // Each loaded paddle lacks what the live paddles (the same saved types) carried.
    assert_eq!(
        named(&loaded.missing_components),
        with_wall(&[("Collider", 3), ("Transform", 3)], 3),
        "{:?}",
        loaded.missing_components
    );
    assert_eq!(keepsake_app::count::<With<Paddle>>(&mut app), 3);
    assert_eq!(keepsake_app::count::<With<Collider>>(&mut app), 0);
    let restored = &app.world().resource::<Seen>().restored;
    assert_eq!(restored.len(), 1);
    assert_eq!(restored[0].from, RestoredFrom::Load(loaded.slot));
}

#[test]
fn a_world_whose_saved_entities_carry_only_saved_types_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.register_saveable::<Collider>()
        .register_saveable_bevy_types();
    app.world_mut().spawn((
        Saveable,
        Paddle { speed: 1.0 },
        Collider,
        Transform::default(),
    ));
    app.update();
    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    assert!(saved.unsaved_components.is_empty(), "{saved:?}");
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert!(loaded.missing_components.is_empty(), "{loaded:?}");
    assert_eq!(
        keepsake_app::count::<(With<Collider>, With<Transform>)>(&mut app),
        1
    );
}

#[test]
fn types_declared_rebuilt_and_put_back_on_add_are_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.register_saveable_bevy_types()
        .rebuilt_after_load::<Collider>()
        .rebuilt_after_load::<Wall>()
        // The game's own way back: every paddle gets its collider when it appears.
        .add_observer(|added: On<Add<Paddle>>, mut commands: Commands| {
            commands.entity(added.entity).insert_if_new(Collider);
        });
    spawn_paddles(&mut app);

    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    assert!(saved.unsaved_components.is_empty(), "{saved:?}");
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert!(loaded.missing_components.is_empty(), "{loaded:?}");
    assert_eq!(keepsake_app::count::<With<Collider>>(&mut app), 3);
}

#[test]
fn the_observer_alone_puts_back_what_a_load_would_lose_before_the_report_is_made() {
    // Not declared rebuilt: the save names Collider, but the load finds it back on every
    // paddle (the On<Add> observer's commands run before the comparison).
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.register_saveable_bevy_types().add_observer(
        |added: On<Add<Paddle>>, mut commands: Commands| {
            commands.entity(added.entity).insert_if_new(Collider);
        },
    );
    app.world_mut()
        .spawn((Saveable, Paddle { speed: 1.0 }, Transform::default()));
    app.update();
    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    assert_eq!(
        named(&saved.unsaved_components),
        [("Collider".to_owned(), 1)]
    );
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert!(loaded.missing_components.is_empty(), "{loaded:?}");
}

#[test]
fn a_rewind_reports_what_the_restored_entities_came_back_without() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    spawn_paddles(&mut app);
    keepsake_app::rewind_point(&mut app);
    let rewound = keepsake_app::rewind(&mut app);
    assert_eq!(
        named(&rewound.missing_components),
        with_wall(&[("Collider", 3), ("Transform", 3)], 3)
    );
    let restored = &app.world().resource::<Seen>().restored;
    assert_eq!(
        restored.last().unwrap().from,
        RestoredFrom::Rewind(rewound.point)
    );
}

#[test]
fn in_place_only_the_entities_a_load_spawns_are_asked_about() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.world_mut().resource_mut::<KeepsakeSettings>().load_mode = LoadMode::InPlace;
    spawn_paddles(&mut app);
    keepsake_app::save(&mut app, SlotId::Quick);

    // Every paddle is still alive: kept, with what the game gave it.
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert!(loaded.missing_components.is_empty(), "{loaded:?}");
    assert_eq!(keepsake_app::count::<With<Collider>>(&mut app), 2);

    // One paddle with a collider gone since the save: spawned again, without it.
    let world = app.world_mut();
    let gone = (world.query_filtered::<Entity, With<Collider>>().iter(world))
        .next()
        .unwrap();
    world.despawn(gone);
    app.update();
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(
        named(&loaded.missing_components),
        with_wall(&[("Collider", 1), ("Transform", 1)], 1),
        "{:?}",
        loaded.missing_components
    );
    assert_eq!(keepsake_app::count::<With<Paddle>>(&mut app), 3);
    assert_eq!(keepsake_app::count::<With<Collider>>(&mut app), 1);
}

/// Bevy 0.20's sprites, headless: the quad `Mesh2d` its sprite renderer gives every `Sprite`
/// (`bevy_sprite_render::sprite_mesh::add_mesh`, one shared run-time mesh), done here the same
/// way, and a ball with a mesh of the game's own, made at run time.
#[cfg(feature = "bevy_sprite")]
mod sprites {
    use super::*;
    use bevy::asset::AssetPlugin;

    fn add_quad(
        sprites: Query<Entity, Added<Sprite>>,
        mut meshes: ResMut<Assets<Mesh>>,
        mut quad: Local<Option<Handle<Mesh>>>,
        mut commands: Commands,
    ) {
        let quad = quad.get_or_insert_with(|| meshes.add(Rectangle::new(1.0, 1.0)));
        for entity in &sprites {
            commands.entity(entity).insert(Mesh2d(quad.clone()));
        }
    }

    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    struct Ball;

    fn sprite_app(root: &std::path::Path) -> App {
        let mut app = keepsake_app::app(root);
        app.add_plugins(AssetPlugin::default())
            .init_asset::<Mesh>()
            .init_asset::<Image>()
            .register_type::<Mesh2d>()
            .register_saveable_bevy_types()
            .register_saveable::<Ball>()
            .add_systems(PostUpdate, add_quad);
        app.update();
        let world = app.world_mut();
        for x in 0..5 {
            world.spawn((
                Saveable,
                Sprite::from_color(Color::WHITE, Vec2::ONE),
                Transform::from_xyz(x as f32, 0.0, 0.0),
            ));
        }
        let ball = world.resource_mut::<Assets<Mesh>>().add(Circle::new(1.0));
        world.spawn((Saveable, Ball, Mesh2d(ball), Transform::default()));
        app.update();
        app
    }

    #[test]
    fn the_sprite_quad_is_bevys_and_only_the_games_own_mesh_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = sprite_app(dir.path());
        assert_eq!(
            keepsake_app::count::<(With<Sprite>, With<Mesh2d>)>(&mut app),
            5
        );
        let saved = keepsake_app::save(&mut app, SlotId::Quick);
        assert_eq!(
            named(&saved.unsaved_components),
            [("Mesh2d".to_owned(), 1)],
            "{:?}",
            saved.unsaved_components
        );
    }

    #[test]
    fn with_mesh2d_registered_only_the_games_own_run_time_mesh_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = sprite_app(dir.path());
        app.register_saveable::<Mesh2d>();
        let saved = keepsake_app::save(&mut app, SlotId::Quick);
        assert_eq!(
            saved.handles_left_out, 1,
            "the ball's mesh, not the 5 quads"
        );
        assert!(saved.unsaved_components.is_empty(), "{saved:?}");
    }

    #[test]
    fn declaring_the_games_mesh_rebuilt_leaves_nothing_to_report() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = sprite_app(dir.path());
        app.rebuilt_after_load::<Mesh2d>();
        let saved = keepsake_app::save(&mut app, SlotId::Quick);
        assert!(saved.unsaved_components.is_empty(), "{saved:?}");
        assert_eq!(saved.handles_left_out, 0);
    }
}

/// A child of a saved entity: the number span under breakout's score text.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component)]
struct Span;

/// How a saved entity's child stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ChildKind {
    /// `Saveable` too: it comes back under its loaded parent.
    Saved,
    /// Left out: a load that spawns its parent again brings the parent back without it.
    LeftOut,
}

/// Every list of at most `len` children kinds.
fn child_lists(len: usize) -> Vec<Vec<ChildKind>> {
    let mut lists = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..len {
        last = (last.iter())
            .flat_map(|list: &Vec<ChildKind>| {
                [ChildKind::Saved, ChildKind::LeftOut].map(|kind| {
                    let mut longer = list.clone();
                    longer.push(kind);
                    longer
                })
            })
            .collect();
        lists.extend(last.iter().cloned());
    }
    lists
}

#[test]
fn a_save_names_the_children_of_saved_entities_it_leaves_out_which_a_respawning_load_loses() {
    // Every arrangement of up to three saved and left-out children, one paddle each.
    let lists = child_lists(3);
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.register_saveable::<Span>();
    for (i, list) in lists.iter().enumerate() {
        let parent = (app.world_mut())
            .spawn((Saveable, Paddle { speed: i as f32 }))
            .id();
        for kind in list {
            let mut child = app.world_mut().spawn((Span, ChildOf(parent)));
            if *kind == ChildKind::Saved {
                child.insert(Saveable);
            }
        }
    }
    app.update();
    let left_out =
        |list: &Vec<ChildKind>| list.iter().filter(|k| **k == ChildKind::LeftOut).count();
    let expected = UnsavedChildren {
        parent_types: vec!["Paddle".to_owned()],
        parents: lists.iter().filter(|list| left_out(list) > 0).count(),
        children: lists.iter().map(left_out).sum(),
        child_types: vec!["Span".to_owned()],
    };
    assert_eq!(unsaved_children(app.world()), [expected]);

    // What the report warns of: the respawning load brings each paddle back with its saved
    // children only.
    keepsake_app::save(&mut app, SlotId::Quick);
    keepsake_app::load(&mut app, SlotId::Quick);
    let world = app.world_mut();
    let mut paddles = world.query::<(&Paddle, Option<&Children>)>();
    let mut back: Vec<(usize, usize)> = (paddles.iter(world))
        .map(|(paddle, children)| (paddle.speed as usize, children.map_or(0, |c| c.len())))
        .collect();
    back.sort_unstable();
    let kept: Vec<(usize, usize)> = (lists.iter().enumerate())
        .map(|(i, list)| (i, list.len() - left_out(list)))
        .collect();
    assert_eq!(back, kept);
    assert!(unsaved_children(app.world()).is_empty());
}

#[test]
fn children_the_game_declares_rebuilt_or_saves_are_not_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paddle_app(dir.path());
    app.register_type::<Span>().rebuilt_after_load::<Span>();
    let world = app.world_mut();
    // The game spawns the span again as the paddle appears: declared rebuilt.
    world.spawn((Saveable, Paddle { speed: 1.0 }, children![Span]));
    // A child that is not Saveable under a parent that is not saved either.
    world.spawn((Paddle { speed: 2.0 }, children![Collider]));
    app.update();
    assert_eq!(unsaved_children(app.world()), []);
}
