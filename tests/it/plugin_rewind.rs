//! The rewind ring through the plugin, headless: points taken on request and by the timer, a
//! rewind restoring exactly the world of its point (components, resources, references, the
//! hierarchy, keyed level entities), newer points and entities gone, eviction by count and by
//! memory, and a load clearing the ring.

use crate::common::fixtures::Rng;
use crate::common::real_world::{self, GameClock, Stats, UnitId, Weather};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{
    RewindCompleted, RewindError, RewindFailed, RewindPlugin, RewindPointCompleted, RewindRing,
    RewindTo,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::LevelKey;
use bevy_keepsake::testing;
use std::path::Path;
use std::time::Duration;

/// One update advances `Time` by this much.
const FRAME: Duration = Duration::from_millis(250);

/// Every ring event, in order.
#[derive(Resource, Default)]
struct Seen {
    taken: Vec<RewindPointCompleted>,
    rewound: Vec<RewindCompleted>,
    failed: Vec<RewindFailed>,
    loaded: usize,
}

fn app(root: &Path, settings: RewindPlugin, entities: u32) -> App {
    let mut app = real_world::app();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .init_resource::<ButtonInput<KeyCode>>()
        .add_plugins(
            KeepsakePlugins::new("keepsake-rewind-tests")
                .save_root(root)
                .set(settings)
                .disable::<AutosavePlugin>(),
        )
        .init_resource::<Seen>()
        .add_observer(|e: On<RewindPointCompleted>, mut seen: ResMut<Seen>| {
            seen.taken.push(*e.event())
        })
        .add_observer(|e: On<RewindCompleted>, mut seen: ResMut<Seen>| {
            seen.rewound.push(e.event().clone())
        })
        .add_observer(|e: On<RewindFailed>, mut seen: ResMut<Seen>| {
            seen.failed.push(e.event().clone())
        })
        .add_observer(|_: On<LoadCompleted>, mut seen: ResMut<Seen>| seen.loaded += 1);
    real_world::populate(app.world_mut(), entities);
    app.update();
    app
}

/// Updates until `done` holds (`testing::update_until`, 200 frames).
fn update_until(app: &mut App, what: &str, done: impl Fn(&Seen) -> bool) {
    testing::update_until(app, what, 200, |world| done(world.resource::<Seen>()));
}

fn take_point(app: &mut App) {
    let before = app.world().resource::<Seen>().taken.len();
    app.world_mut().commands().rewind_point();
    update_until(app, "a rewind point", |seen| seen.taken.len() > before);
}

fn rewind(app: &mut App, to: RewindTo) -> RewindCompleted {
    let before = app.world().resource::<Seen>().rewound.len();
    app.world_mut().commands().rewind_to(to);
    update_until(app, "the rewind", |seen| {
        seen.rewound.len() > before || !seen.failed.is_empty()
    });
    let seen = app.world().resource::<Seen>();
    assert!(seen.failed.is_empty(), "{:?}", seen.failed);
    seen.rewound.last().unwrap().clone()
}

/// What a rewind must bring back: every saved entity's components and references (by unit
/// id), the resources, and which units hang under the unsaved level root.
#[derive(Debug, PartialEq)]
struct State {
    rows: (Vec<real_world::Row>, real_world::Resources),
    under_level: Vec<UnitId>,
}

fn state(app: &mut App) -> State {
    let world = app.world_mut();
    let mut under: Vec<UnitId> = world
        .query::<(&UnitId, &ChildOf)>()
        .iter(world)
        .filter(|(_, child_of)| world.get::<LevelKey>(child_of.parent()).is_some())
        .map(|(id, _)| *id)
        .collect();
    under.sort();
    State {
        rows: real_world::rows(world),
        under_level: under,
    }
}

/// A few frames of play: units move, get hurt, die, are recruited, change parents; the clock
/// and the weather change.
fn play(app: &mut App, rng: &mut Rng, next_id: &mut u32) {
    let world = app.world_mut();
    let units: Vec<Entity> = world
        .query_filtered::<Entity, With<UnitId>>()
        .iter(world)
        .collect();
    for _ in 0..units.len() / 50 {
        let unit = units[rng.below(units.len() as u64) as usize];
        if let Some(mut transform) = world.get_mut::<Transform>(unit) {
            transform.translation.x += 1.0;
        }
        if let Some(mut stats) = world.get_mut::<Stats>(unit) {
            stats.hp -= 1.0;
        }
    }
    let victim = units[rng.below(units.len() as u64) as usize];
    world.entity_mut(victim).despawn();
    *next_id += 1;
    let level = level_root(world);
    world.spawn((Saveable, UnitId(*next_id), ChildOf(level)));
    world.resource_mut::<GameClock>().tick += 7;
    *world.resource_mut::<Weather>() = Weather::Rain {
        intensity: rng.below(10) as f32 / 10.0,
    };
    app.update();
}

fn level_root(world: &mut World) -> Entity {
    world
        .query_filtered::<Entity, With<LevelKey>>()
        .single(world)
        .unwrap()
}

/// An unsaved level root (keyed) with a few saved units under it.
fn add_level(app: &mut App) {
    let world = app.world_mut();
    let root = world.spawn(LevelKey::new("level/camp")).id();
    for id in 0..5 {
        world.spawn((Saveable, UnitId(900_000 + id), ChildOf(root)));
    }
    app.update();
}

#[test]
fn a_rewind_brings_back_exactly_the_world_of_its_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RewindPlugin::default(), 2000);
    add_level(&mut app);
    let (mut rng, mut next_id) = (Rng::new(26), 1_000_000);

    take_point(&mut app);
    let first = state(&mut app);
    play(&mut app, &mut rng, &mut next_id);
    take_point(&mut app);
    let second = state(&mut app);
    play(&mut app, &mut rng, &mut next_id);
    // A save between two points: the ring sees its capture too.
    app.world_mut().commands().save(SlotId::Quick);
    play(&mut app, &mut rng, &mut next_id);
    take_point(&mut app);
    play(&mut app, &mut rng, &mut next_id);
    assert!(state(&mut app) != second, "play changed nothing");

    let back = rewind(&mut app, RewindTo::Back(2));
    assert!(
        state(&mut app) == second,
        "the second point came back different"
    );
    assert_eq!(
        back.forgotten, 1,
        "the third point is a future that did not happen"
    );
    assert_eq!(app.world().resource::<RewindRing>().len(), 2);

    // Play on from there, then go back to the very first point.
    play(&mut app, &mut rng, &mut next_id);
    take_point(&mut app);
    play(&mut app, &mut rng, &mut next_id);
    let first_id = app
        .world()
        .resource::<RewindRing>()
        .points()
        .next()
        .unwrap()
        .id;
    let back = rewind(&mut app, RewindTo::Point(first_id));
    assert_eq!(back.point, first_id);
    assert!(
        state(&mut app) == first,
        "the first point came back different"
    );
    let recruited = app
        .world_mut()
        .query::<&UnitId>()
        .iter(app.world())
        .filter(|id| id.0 > 1_000_000)
        .count();
    assert_eq!(
        recruited, 0,
        "units recruited after the point are still there"
    );
}

#[test]
fn the_timer_takes_points_and_the_ring_drops_the_oldest_beyond_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let settings = RewindPlugin {
        points: 4,
        every: FRAME * 2,
        ..Default::default()
    };
    let mut app = app(dir.path(), settings, 300);
    for _ in 0..20 {
        app.update();
    }
    let seen = app.world().resource::<Seen>();
    assert!(
        seen.taken.len() >= 9,
        "{} points in 20 frames",
        seen.taken.len()
    );
    let dropped: usize = seen.taken.iter().map(|t| t.evicted.for_count).sum();
    assert_eq!(dropped, seen.taken.len() - 4);
    let ring = app.world().resource::<RewindRing>();
    assert_eq!(ring.len(), 4);
    let last = seen.taken.last().unwrap();
    assert_eq!(ring.points().last().unwrap().id, last.point);
    assert_eq!((last.points, last.memory), (4, ring.memory()));
}

#[test]
fn over_its_memory_budget_the_ring_keeps_only_what_fits_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let settings = RewindPlugin {
        memory_budget: 1,
        ..Default::default()
    };
    let mut app = app(dir.path(), settings, 300);
    take_point(&mut app);
    app.update();
    take_point(&mut app);
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.taken[1].evicted.for_memory, 1, "{:?}", seen.taken[1]);
    assert_eq!(app.world().resource::<RewindRing>().len(), 1);
}

#[test]
fn rewinding_to_a_point_the_ring_does_not_hold_fails_and_leaves_the_world() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RewindPlugin::default(), 100);
    let before = state(&mut app);
    for to in [RewindTo::Back(1), RewindTo::Ago(Duration::ZERO)] {
        app.world_mut().commands().rewind_to(to);
        app.update();
    }
    take_point(&mut app);
    app.world_mut().commands().rewind_to(RewindTo::Back(0));
    app.world_mut().commands().rewind(2);
    app.update();
    let seen = app.world().resource::<Seen>();
    let points: Vec<(RewindTo, usize)> = seen
        .failed
        .iter()
        .map(|failed| match *failed.error {
            RewindError::NoPoint { to, points } => (to, points),
            ref other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        points,
        [
            (RewindTo::Back(1), 0),
            (RewindTo::Ago(Duration::ZERO), 0),
            (RewindTo::Back(0), 1),
            (RewindTo::Back(2), 1)
        ]
    );
    assert!(seen.rewound.is_empty());
    assert!(state(&mut app) == before, "the world changed");
}

#[test]
fn rewinding_by_time_goes_to_the_newest_point_at_least_that_old() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RewindPlugin::default(), 100);
    add_level(&mut app);
    let (mut rng, mut next_id) = (Rng::new(5), 2_000_000);
    let mut states = Vec::new();
    for _ in 0..6 {
        take_point(&mut app);
        states.push(state(&mut app));
        play(&mut app, &mut rng, &mut next_id);
    }
    // Points are taken a frame (250 ms) or two apart; a second ago is a few points back. The
    // rewind is made in the next update, a frame from now.
    let now = app.world().resource::<Time>().elapsed() + FRAME;
    let ring = app.world().resource::<RewindRing>();
    let expected = ring
        .points()
        .rposition(|point| now - point.taken_at >= Duration::from_secs(1))
        .unwrap();
    assert!(expected < 5, "every point is older than a second");
    let back = rewind(&mut app, RewindTo::Ago(Duration::from_secs(1)));
    assert!(back.age >= Duration::from_secs(1), "{:?}", back.age);
    assert!(state(&mut app) == states[expected], "not point {expected}");
    // Further back than the oldest point: the oldest.
    rewind(&mut app, RewindTo::Ago(Duration::from_secs(3600)));
    assert!(state(&mut app) == states[0], "not the oldest point");
}

#[test]
fn loading_a_slot_clears_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RewindPlugin::default(), 100);
    app.world_mut().commands().save(SlotId::Quick);
    take_point(&mut app);
    take_point(&mut app);
    assert_eq!(app.world().resource::<RewindRing>().len(), 2);
    app.world_mut().commands().load(SlotId::Quick);
    update_until(&mut app, "the load", |seen| seen.loaded == 1);
    assert!(app.world().resource::<RewindRing>().is_empty());
    assert_eq!(app.world().resource::<RewindRing>().memory(), 0);
}

#[test]
fn a_point_asked_for_during_a_rewind_is_taken_once_it_lands() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RewindPlugin::default(), 300);
    add_level(&mut app);
    take_point(&mut app);
    let first = state(&mut app);
    let (mut rng, mut next_id) = (Rng::new(9), 4_000_000);
    play(&mut app, &mut rng, &mut next_id);
    // Both in one frame: the rewind starts, the point waits for it.
    app.world_mut().commands().rewind(1);
    app.world_mut().commands().rewind_point();
    update_until(&mut app, "the rewind and the point", |seen| {
        seen.rewound.len() == 1 && seen.taken.len() == 2
    });
    let seen = app.world().resource::<Seen>();
    assert!(seen.failed.is_empty(), "{:?}", seen.failed);
    let ring = app.world().resource::<RewindRing>();
    assert_eq!(
        ring.len(),
        2,
        "the first point and the one taken after the rewind"
    );
    // The new point holds the world the rewind brought back.
    let newest = ring.points().last().unwrap().id;
    play(&mut app, &mut rng, &mut next_id);
    rewind(&mut app, RewindTo::Point(newest));
    assert!(
        state(&mut app) == first,
        "the waiting point is not of the rewound world"
    );
}
