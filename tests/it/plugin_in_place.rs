//! Loads and rewinds in place through the plugin (issue 42): a save this session wrote keeps
//! the entities still alive (ids, unsaved components and all) and observers see only what
//! changed; `LoadMode::Respawn` spawns everything again as before; a save from another
//! session spawns everything the first time and keeps what that load spawned the next; a
//! rewind to a recent point lands in the frame it is asked for.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{KeepsakeCorePlugin, LoadMode, RewindCompleted, RewindTo};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing;
use std::path::Path;
use std::time::Duration;

#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Health(u32);

#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Shield;

/// Not saved: stays on a kept entity, and is lost with a respawned one.
#[derive(Component)]
struct Sprite;

/// What observers saw.
#[derive(Resource, Default, Debug)]
struct Seen {
    added_health: usize,
    removed_shield: usize,
    added_shield: usize,
    loads: Vec<LoadCompleted>,
    rewinds: Vec<(u32, RewindCompleted)>,
    saves: usize,
}

/// Counts the frames, so a result can say in which frame it arrived.
#[derive(Resource, Default)]
struct Frame(u32);

fn app(root: &Path, apply: LoadMode) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            100,
        )))
        .init_resource::<ButtonInput<KeyCode>>()
        .add_plugins(
            KeepsakePlugins::new("keepsake-in-place-tests")
                .save_root(root)
                .set(KeepsakeCorePlugin {
                    load_mode: apply,
                    ..default()
                })
                .disable::<AutosavePlugin>(),
        )
        .register_saveable::<Health>()
        .register_saveable::<Shield>()
        .init_resource::<Seen>()
        .init_resource::<Frame>()
        .add_systems(First, |mut frame: ResMut<Frame>| frame.0 += 1)
        .add_observer(|_: On<Add<Health>>, mut seen: ResMut<Seen>| seen.added_health += 1)
        .add_observer(|_: On<Add<Shield>>, mut seen: ResMut<Seen>| seen.added_shield += 1)
        .add_observer(|_: On<Remove<Shield>>, mut seen: ResMut<Seen>| seen.removed_shield += 1)
        .add_observer(|e: On<LoadCompleted>, mut seen: ResMut<Seen>| {
            seen.loads.push(e.event().clone())
        })
        .add_observer(|_: On<SaveCompleted>, mut seen: ResMut<Seen>| seen.saves += 1)
        .add_observer(
            |e: On<RewindCompleted>, frame: Res<Frame>, mut seen: ResMut<Seen>| {
                seen.rewinds.push((frame.0, e.event().clone()))
            },
        );
    app.update();
    app
}

fn update_until(app: &mut App, what: &str, done: impl Fn(&Seen) -> bool) {
    testing::update_until(app, what, 200, |world| done(world.resource::<Seen>()));
}

fn save(app: &mut App) {
    let before = app.world().resource::<Seen>().saves;
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Quick));
    update_until(app, "the save", |seen| seen.saves > before);
}

fn load(app: &mut App) -> LoadCompleted {
    let before = app.world().resource::<Seen>().loads.len();
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Quick,
    });
    update_until(app, "the load", |seen| seen.loads.len() > before);
    app.world().resource::<Seen>().loads.last().unwrap().clone()
}

/// Three units: a shielded one, a plain one, one that will die; an unsaved sprite on each.
fn units(app: &mut App) -> [Entity; 3] {
    let world = app.world_mut();
    let a = world.spawn((Saveable, Health(10), Shield, Sprite)).id();
    let b = world.spawn((Saveable, Health(20), Sprite)).id();
    let c = world.spawn((Saveable, Health(30), Sprite)).id();
    app.update();
    [a, b, c]
}

fn healths(app: &mut App) -> Vec<(Entity, u32)> {
    let world = app.world_mut();
    let mut all: Vec<(Entity, u32)> = (world.query::<(Entity, &Health)>().iter(world))
        .map(|(e, h)| (e, h.0))
        .collect();
    all.sort_by_key(|(_, h)| *h);
    all
}

#[test]
fn an_in_session_load_keeps_the_entities_and_observers_see_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), LoadMode::InPlace);
    let [a, b, c] = units(&mut app);
    save(&mut app);
    let world = app.world_mut();
    world.get_mut::<Health>(b).unwrap().0 = 21;
    world.entity_mut(a).remove::<Shield>();
    world.entity_mut(b).insert(Shield);
    world.entity_mut(c).despawn();
    let extra = world.spawn((Saveable, Health(99))).id();
    app.update();
    let seen = app.world().resource::<Seen>();
    let seen_before = (seen.added_health, seen.added_shield, seen.removed_shield);

    let loaded = load(&mut app);
    let now = healths(&mut app);
    assert_eq!(
        now.iter().map(|(_, h)| *h).collect::<Vec<_>>(),
        [10, 20, 30]
    );
    assert_eq!(
        (now[0].0, now[1].0),
        (a, b),
        "the kept entities keep their ids"
    );
    let respawned = now[2].0;
    assert_ne!(respawned, c);
    assert_eq!(loaded.entity_map.get(&c), Some(&respawned));
    assert_eq!(loaded.entity_map.len(), 1, "{:?}", loaded.entity_map);
    assert!(
        app.world().get_entity(extra).is_err(),
        "an entity the save lacks is despawned"
    );
    let world = app.world();
    assert!(world.get::<Sprite>(a).is_some() && world.get::<Sprite>(b).is_some());
    assert!(world.get::<Shield>(a).is_some() && world.get::<Shield>(b).is_none());
    let seen = world.resource::<Seen>();
    // Only the respawned unit's Health was added, only a's Shield added and b's removed.
    assert_eq!(
        (seen.added_health, seen.added_shield, seen.removed_shield),
        (seen_before.0 + 1, seen_before.1 + 1, seen_before.2 + 1)
    );
}

#[test]
fn the_respawning_mode_spawns_every_saved_entity_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), LoadMode::Respawn);
    let [a, b, c] = units(&mut app);
    save(&mut app);
    let added = app.world().resource::<Seen>().added_health;
    let loaded = load(&mut app);
    assert_eq!(loaded.entity_map.len(), 3);
    assert!(
        [a, b, c]
            .iter()
            .all(|e| app.world().get_entity(*e).is_err())
    );
    assert_eq!(app.world().resource::<Seen>().added_health, added + 3);
}

#[test]
fn a_save_from_another_session_spawns_at_first_then_keeps_what_it_spawned() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = app(dir.path(), LoadMode::InPlace);
    units(&mut first);
    save(&mut first);
    drop(first);

    let mut next = app(dir.path(), LoadMode::InPlace);
    // The next session's own entities happen to have the saved ids: they are not the saved
    // ones, and are replaced.
    let [a, ..] = units(&mut next);
    let loaded = load(&mut next);
    assert_eq!(
        loaded.entity_map.len(),
        3,
        "a save from elsewhere is spawned"
    );
    assert!(next.world().get_entity(a).is_err());
    let spawned = healths(&mut next);
    let world = next.world_mut();
    world.get_mut::<Health>(spawned[0].0).unwrap().0 = 1;
    next.update();
    let again = load(&mut next);
    assert_eq!(
        healths(&mut next),
        spawned,
        "the second load keeps what the first spawned"
    );
    assert_eq!(again.entity_map.len(), 3);
}

#[test]
fn a_rewind_to_a_recent_point_lands_in_the_frame_it_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), LoadMode::InPlace);
    let [a, b, _] = units(&mut app);
    app.world_mut().commands().rewind_point();
    app.update();
    app.update();
    app.world_mut().get_mut::<Health>(b).unwrap().0 = 5;
    app.world_mut().entity_mut(a).remove::<Shield>();
    app.update();
    let asked_in = app.world().resource::<Frame>().0 + 1;
    app.world_mut().commands().rewind_to(RewindTo::Back(1));
    app.update();
    let seen = app.world().resource::<Seen>();
    let (frame, rewound) = seen
        .rewinds
        .last()
        .expect("the rewind landed in this frame");
    assert_eq!(*frame, asked_in);
    assert!(rewound.entity_map.is_empty());
    assert_eq!(
        healths(&mut app)
            .iter()
            .map(|(e, h)| (*e, *h))
            .take(2)
            .collect::<Vec<_>>(),
        [(a, 10), (b, 20)]
    );
    assert!(app.world().get::<Shield>(a).is_some());
}
