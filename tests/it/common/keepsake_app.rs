//! A headless app with the plugin (`MinimalPlugins`, time stepped by hand, saves in a temporary
//! folder) and every result it reports kept in order, for the tests that drive saves, loads
//! and rewinds end to end: `plugin_unsaved`, `plugin_states`, `plugin_after_load`.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{RewindCompleted, RewindFailed, RewindPointCompleted};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing;
use std::path::Path;
use std::time::Duration;

/// One update advances `Time` by this much.
pub const FRAME: Duration = Duration::from_millis(100);

/// Every result, in the order it was reported.
#[derive(Resource, Default)]
pub struct Seen {
    pub saved: Vec<SaveCompleted>,
    pub save_failed: Vec<String>,
    pub loaded: Vec<LoadCompleted>,
    pub load_failed: Vec<String>,
    pub points: usize,
    pub rewound: Vec<RewindCompleted>,
    pub rewind_failed: Vec<String>,
    pub restored: Vec<WorldRestored>,
}

/// `MinimalPlugins` and the plugin saving under `root`, no autosave, nothing registered yet
/// (the caller adds its types and calls `finish`).
pub fn app(root: &Path) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .init_resource::<ButtonInput<KeyCode>>();
    with_plugin(app, root)
}

/// `app`'s plugin, time and results on an app that has Bevy's plugins already (`MinimalPlugins`,
/// or `DefaultPlugins` without a window).
pub fn with_plugin(mut app: App, root: &Path) -> App {
    app.insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .add_plugins(
            KeepsakePlugins::new("keepsake-game-tests")
                .save_root(root)
                .build()
                .disable::<AutosavePlugin>(),
        )
        .init_resource::<Seen>()
        .add_observer(|e: On<SaveCompleted>, mut seen: ResMut<Seen>| {
            seen.saved.push(e.event().clone())
        })
        .add_observer(|e: On<SaveFailed>, mut seen: ResMut<Seen>| {
            seen.save_failed.push(e.error.to_string())
        })
        .add_observer(|e: On<LoadCompleted>, mut seen: ResMut<Seen>| {
            seen.loaded.push(e.event().clone())
        })
        .add_observer(|e: On<LoadFailed>, mut seen: ResMut<Seen>| {
            seen.load_failed.push(e.error.to_string())
        })
        .add_observer(|_: On<RewindPointCompleted>, mut seen: ResMut<Seen>| seen.points += 1)
        .add_observer(|e: On<RewindCompleted>, mut seen: ResMut<Seen>| {
            seen.rewound.push(e.event().clone())
        })
        .add_observer(|e: On<RewindFailed>, mut seen: ResMut<Seen>| {
            seen.rewind_failed.push(e.error.to_string())
        })
        .add_observer(|e: On<WorldRestored>, mut seen: ResMut<Seen>| {
            seen.restored.push(*e.event())
        });
    app
}

/// Updates until `done` holds (`testing::update_until`, 200 frames); fails on a failure
/// reported meanwhile.
pub fn update_until(app: &mut App, what: &str, done: impl Fn(&Seen) -> bool) {
    testing::update_until(app, what, 200, |world| {
        let seen = world.resource::<Seen>();
        let failures = [&seen.save_failed, &seen.load_failed, &seen.rewind_failed];
        assert!(
            failures.iter().all(|f| f.is_empty()),
            "failed while waiting for {what}: {failures:?}"
        );
        done(seen)
    });
}

/// Saves into `slot` and waits for the save to be durable.
pub fn save(app: &mut App, slot: SlotId) -> SaveCompleted {
    let before = app.world().resource::<Seen>().saved.len();
    app.world_mut().commands().save(slot);
    update_until(app, "the save", |seen| seen.saved.len() > before);
    app.world().resource::<Seen>().saved[before].clone()
}

/// Loads `slot` and waits until it is applied (and the frame it landed in has run).
pub fn load(app: &mut App, slot: SlotId) -> LoadCompleted {
    let before = app.world().resource::<Seen>().loaded.len();
    app.world_mut().commands().load(slot);
    update_until(app, "the load", |seen| seen.loaded.len() > before);
    app.world().resource::<Seen>().loaded[before].clone()
}

/// Takes a rewind point and waits for it.
pub fn rewind_point(app: &mut App) {
    let before = app.world().resource::<Seen>().points;
    app.world_mut().commands().rewind_point();
    update_until(app, "a rewind point", |seen| seen.points > before);
}

/// Rewinds to the newest point and waits until it is applied.
pub fn rewind(app: &mut App) -> RewindCompleted {
    let before = app.world().resource::<Seen>().rewound.len();
    app.world_mut().commands().rewind(1);
    update_until(app, "the rewind", |seen| seen.rewound.len() > before);
    app.world().resource::<Seen>().rewound[before].clone()
}

/// How many entities match `F`.
pub fn count<F: bevy::ecs::query::QueryFilter>(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query_filtered::<(), F>().iter(world).count()
}
