//! The plugin end to end, headless and deterministic: `MinimalPlugins`, manual time steps,
//! temporary folders. Waiting for a background job polls `app.update()` until the job's event
//! arrives (bounded), so no test depends on timing.

use crate::common;

use bevy::app::{PluginGroupBuilder, Plugins};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::format::{SaveBundle, SaveMeta, SealKey, WorldState};
use bevy_keepsake::plugin::{
    AutosaveTimer, CrashSavePlugin, KeepsakeCorePlugin, KeepsakeError, KeepsakeSettings,
    KeepsakeStatus, KeepsakeStore, LoadMode, Playtime, RefreshSlotsRequest, RewindPlugin,
    RewindRing, RewindSettings, SaveReason, SaveTarget, SlotAction, crash_image_armed,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::LevelKey;
use bevy_keepsake::store::{SlotStore, StoreConfig, StoreError};
use bevy_keepsake::testing::update_until;
use common::gate_fs::GateFs;
use common::test_fs::{Fault, TestFs};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Health(u32);

#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Default)]
#[reflect(Resource)]
struct Level(u32);

/// Every result event, in order, as seen by observers.
#[derive(Resource, Default)]
struct Results(Vec<Outcome>);

#[derive(Clone, Debug)]
enum Outcome {
    Saved(SaveCompleted),
    SaveFailed(SaveFailed),
    Loaded(LoadCompleted),
    LoadFailed(LoadFailed),
}

fn app_with<M>(plugin: impl Plugins<M>) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            250,
        )))
        // No InputPlugin: the tests press and clear keys themselves.
        .init_resource::<ButtonInput<KeyCode>>()
        .add_plugins(plugin)
        .register_saveable::<Health>()
        .register_saveable::<Level>()
        .init_resource::<Results>()
        .add_observer(|e: On<SaveCompleted>, mut r: ResMut<Results>| {
            r.0.push(Outcome::Saved(e.event().clone()))
        })
        .add_observer(|e: On<SaveFailed>, mut r: ResMut<Results>| {
            r.0.push(Outcome::SaveFailed(e.event().clone()))
        })
        .add_observer(|e: On<LoadCompleted>, mut r: ResMut<Results>| {
            r.0.push(Outcome::Loaded(e.event().clone()))
        })
        .add_observer(|e: On<LoadFailed>, mut r: ResMut<Results>| {
            r.0.push(Outcome::LoadFailed(e.event().clone()))
        });
    app.insert_resource(Level(1));
    app.update();
    app
}

/// The group saving under `root`, every member at its defaults.
fn group(root: &Path) -> KeepsakePlugins {
    KeepsakePlugins::new("keepsake-tests").save_root(root)
}

/// The group without timed autosaves: the tests ask for every save they wait for.
fn quiet(group: KeepsakePlugins) -> PluginGroupBuilder {
    group.build().disable::<AutosavePlugin>()
}

/// [`quiet`] [`group`]: saving under `root`, no timed autosaves.
fn plugin(root: &Path) -> PluginGroupBuilder {
    quiet(group(root))
}

/// The group with its exit save armed from the start.
fn exit_saving(root: &Path, save_on_exit: SaveOnExit) -> PluginGroupBuilder {
    plugin(root).set(ExitSavePlugin { save_on_exit })
}

/// How many frames a wait may take, not counting those while the plugin's work runs in the
/// background (`testing::update_until`).
const FRAMES: u32 = 200;

/// Updates until `count` results have arrived.
fn run_until_results(app: &mut App, count: usize) -> Vec<Outcome> {
    let what = format!("{count} results");
    update_until(app, &what, FRAMES, |w| {
        w.resource::<Results>().0.len() >= count
    });
    app.world().resource::<Results>().0.clone()
}

fn healths(app: &mut App) -> Vec<u32> {
    let world = app.world_mut();
    let mut query = world.query::<&Health>();
    let mut all: Vec<u32> = query.iter(world).map(|h| h.0).collect();
    all.sort_unstable();
    all
}

fn set_healths(app: &mut App, value: u32) {
    let world = app.world_mut();
    let mut query = world.query::<&mut Health>();
    for mut health in query.iter_mut(world) {
        health.0 = value;
    }
}

fn press(app: &mut App, key: KeyCode) {
    app.world_mut()
        .resource_mut::<ButtonInput<KeyCode>>()
        .press(key);
    app.update();
    let mut keys = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
    keys.release(key);
    keys.clear();
}

/// The level's root, spawned by the game and never saved, and a saved child under it.
fn spawn_level_with_saved_child(app: &mut App) -> Entity {
    let world = app.world_mut();
    let root = world
        .spawn((LevelKey::new("level/docks"), Transform::default()))
        .id();
    world.spawn((Saveable, Health(5), ChildOf(root)));
    root
}

fn parent_of_health(app: &mut App) -> Option<Entity> {
    let world = app.world_mut();
    let mut query = world.query::<(&Health, Option<&ChildOf>)>();
    let (_, child_of) = query.single(world).unwrap();
    child_of.map(ChildOf::parent)
}

#[test]
fn a_saved_child_of_an_unsaved_level_root_stays_under_it_through_f5_and_f9() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    let root = spawn_level_with_saved_child(&mut app);
    press(&mut app, KeyCode::F5);
    run_until_results(&mut app, 1);

    set_healths(&mut app, 0);
    press(&mut app, KeyCode::F9);
    let results = run_until_results(&mut app, 2);
    let Outcome::Loaded(loaded) = &results[1] else {
        panic!("{results:?}")
    };
    assert_eq!(*loaded.dropped_references, []);
    assert_eq!(healths(&mut app), [5]);
    assert_eq!(parent_of_health(&mut app), Some(root));
    assert_eq!(app.world().get::<Children>(root).map(|c| c.len()), Some(1));

    // The next session spawns the level again (other entity ids) and quickloads.
    let mut next = app_with(plugin(dir.path()));
    next.world_mut()
        .spawn_batch((0..40).map(|_| Name::new("rock")));
    let new_root = next
        .world_mut()
        .spawn((LevelKey::new("level/docks"), Transform::default()))
        .id();
    assert_ne!(new_root, root);
    press(&mut next, KeyCode::F9);
    let results = run_until_results(&mut next, 1);
    assert!(matches!(&results[0], Outcome::Loaded(l) if l.dropped_references.is_empty()));
    assert_eq!(parent_of_health(&mut next), Some(new_root));

    // A session whose level lacks the root: the load says which reference it dropped.
    let mut bare = app_with(plugin(dir.path()));
    press(&mut bare, KeyCode::F9);
    let results = run_until_results(&mut bare, 1);
    let Outcome::Loaded(loaded) = &results[0] else {
        panic!("{results:?}")
    };
    let keys: Vec<&str> = loaded
        .dropped_references
        .iter()
        .map(|d| d.key.as_str())
        .collect();
    assert_eq!(keys, ["level/docks"]);
    assert_eq!(parent_of_health(&mut bare), None);
}

#[test]
fn save_then_load_round_trips_through_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(10)));
    app.world_mut().spawn((Saveable, Health(20)));
    app.world_mut().resource_mut::<SaveTitle>().0 = "Docks".into();
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(3)));

    let results = run_until_results(&mut app, 1);
    let Outcome::Saved(saved) = &results[0] else {
        panic!("{results:?}")
    };
    assert_eq!(saved.slot, SlotId::Manual(3));
    assert_eq!(saved.reason, SaveReason::Manual);
    assert_eq!(saved.entities, 2);
    assert_eq!(saved.meta.title, "Docks");

    set_healths(&mut app, 1);
    app.world_mut().spawn((Saveable, Health(99)));
    app.world_mut().resource_mut::<Level>().0 = 7;
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(3),
    });
    let results = run_until_results(&mut app, 2);
    let Outcome::Loaded(loaded) = &results[1] else {
        panic!("{results:?}")
    };
    assert!(!loaded.restored_from_backup);
    // A save of this session is applied in place: both saved entities are kept, ids and all.
    assert!(loaded.entity_map.is_empty(), "{:?}", loaded.entity_map);
    assert_eq!(healths(&mut app), [10, 20]);
    assert_eq!(*app.world().resource::<Level>(), Level(1));

    // The listing refreshes in the background after the save.
    update_until(&mut app, "the listing", FRAMES, |world| {
        let slot = world.resource::<SaveSlots>().get(SlotId::Manual(3));
        slot.and_then(|e| e.shown_save()).is_some()
    });
}

#[test]
fn f5_quicksaves_and_f9_quickloads() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(5)));
    press(&mut app, KeyCode::F5);
    let results = run_until_results(&mut app, 1);
    assert!(
        matches!(&results[0], Outcome::Saved(s) if s.slot == SlotId::Quick && s.reason == SaveReason::Quicksave)
    );

    set_healths(&mut app, 0);
    press(&mut app, KeyCode::F9);
    let results = run_until_results(&mut app, 2);
    assert!(matches!(&results[1], Outcome::Loaded(l) if l.slot == SlotId::Quick));
    assert_eq!(healths(&mut app), [5]);
}

#[test]
fn the_hotkeys_member_binds_the_keys_it_is_set_with() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()).set(HotkeysPlugin {
        quicksave: KeyCode::F6,
        quickload: KeyCode::F10,
    }));
    app.world_mut().spawn((Saveable, Health(5)));
    press(&mut app, KeyCode::F5);
    press(&mut app, KeyCode::F9);
    for _ in 0..5 {
        app.update();
    }
    assert!(app.world().resource::<KeepsakeStatus>().is_idle());
    assert!(
        app.world().resource::<Results>().0.is_empty(),
        "F5 and F9 are free"
    );

    press(&mut app, KeyCode::F6);
    let results = run_until_results(&mut app, 1);
    assert!(matches!(&results[0], Outcome::Saved(s) if s.slot == SlotId::Quick));
    set_healths(&mut app, 0);
    press(&mut app, KeyCode::F10);
    let results = run_until_results(&mut app, 2);
    assert!(matches!(&results[1], Outcome::Loaded(l) if l.slot == SlotId::Quick));
    assert_eq!(healths(&mut app), [5]);
}

#[test]
fn autosave_fires_at_the_interval_and_rotates_through_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(group(dir.path()).set(AutosavePlugin {
        every: Duration::from_secs(1),
        ..default()
    }));
    app.world_mut().spawn((Saveable, Health(1)));
    // 250 ms per update; the app has run one update already (with a zero first delta).
    for _ in 0..3 {
        app.update();
        assert!(
            app.world().resource::<KeepsakeStatus>().is_idle(),
            "no autosave before 1 s"
        );
    }
    let results = run_until_results(&mut app, 6);
    let slots: Vec<SlotId> = results
        .iter()
        .map(|r| match r {
            Outcome::Saved(s) if s.reason == SaveReason::Autosave => s.slot,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        slots,
        [0, 1, 2, 3, 4, 0].map(SlotId::Auto),
        "autosaves fill the ring, then overwrite the oldest"
    );
    let playtime = app.world().resource::<Playtime>().0;
    assert!(
        playtime >= Duration::from_secs(6),
        "{playtime:?} of play for 6 autosaves"
    );
}

#[test]
fn a_busy_slot_queues_and_coalesces_and_the_main_thread_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let gate = GateFs::closed();
    let mut app = app_with(quiet(
        group(dir.path()).filesystem(Arc::new(gate.filesystem())),
    ));
    app.world_mut().spawn((Saveable, Health(3)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    app.update();
    gate.wait_for_writer(); // the write is now blocked on the task pool

    // Frames keep running while the save is held in flight.
    for _ in 0..20 {
        app.update();
    }
    let status = app.world().resource::<KeepsakeStatus>().clone();
    assert_eq!(status.running.len(), 1);
    assert!(status.is_busy(SlotId::Manual(0)) && !status.is_busy(SlotId::Manual(1)));
    assert!(app.world().resource::<Results>().0.is_empty());

    // Two more requests for the busy slot wait as one; another slot waits for nothing.
    for _ in 0..2 {
        app.world_mut()
            .write_message(SaveRequest::slot(SlotId::Manual(0)));
    }
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(1)));
    app.update();
    let status = app.world().resource::<KeepsakeStatus>().clone();
    assert_eq!(status.waiting.len(), 1, "{status:?}");
    assert_eq!(status.running.len(), 2, "{status:?}");
    assert!(
        status
            .running
            .iter()
            .all(|job| job.action() == SlotAction::Save)
    );

    gate.open();
    let results = run_until_results(&mut app, 3);
    let mut saved: Vec<(SlotId, u64)> = results
        .iter()
        .map(|r| match r {
            Outcome::Saved(s) => (s.slot, s.generation),
            other => panic!("{other:?}"),
        })
        .collect();
    saved.sort();
    assert_eq!(
        saved,
        [
            (SlotId::Manual(0), 1),
            (SlotId::Manual(0), 2),
            (SlotId::Manual(1), 1)
        ]
    );
}

#[test]
fn an_unusable_save_root_fails_saves_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let mut app = app_with(plugin(&file));
    app.world_mut().spawn((Saveable, Health(8)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    let results = run_until_results(&mut app, 1);
    let Outcome::SaveFailed(failed) = &results[0] else {
        panic!("{results:?}")
    };
    assert!(matches!(*failed.error, KeepsakeError::StoreUnavailable(_)));
    assert!(
        failed
            .error
            .to_string()
            .contains("could not create the save folder"),
        "{}",
        failed.error
    );
    assert_eq!(
        healths(&mut app),
        [8],
        "the game keeps running with its world intact"
    );
}

#[test]
fn a_full_disk_fails_the_save_and_keeps_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let fs = TestFs::new();
    let mut app = app_with(quiet(group(dir.path()).filesystem(Arc::new(fs.clone()))));
    app.world_mut().spawn((Saveable, Health(1)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    run_until_results(&mut app, 1);

    fs.arm(Some(Fault::DiskFullAfter(100)));
    set_healths(&mut app, 2);
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    let results = run_until_results(&mut app, 2);
    let Outcome::SaveFailed(failed) = &results[1] else {
        panic!("{results:?}")
    };
    assert!(
        matches!(&*failed.error, KeepsakeError::Store(StoreError::Io { source, .. }) if source.raw_os_error() == Some(28)),
        "{}",
        failed.error
    );
    assert_eq!(healths(&mut app), [2]);

    fs.arm(None);
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(0),
    });
    let results = run_until_results(&mut app, 3);
    assert!(matches!(&results[2], Outcome::Loaded(l) if l.generation == 1));
    assert_eq!(healths(&mut app), [1], "the previous save is intact");
}

#[test]
fn a_damaged_slot_fails_the_load_and_leaves_the_world_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(4)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(1)));
    let results = run_until_results(&mut app, 1);
    let Outcome::Saved(saved) = &results[0] else {
        panic!()
    };
    std::fs::write(&saved.path, b"KPSK garbage").unwrap();

    set_healths(&mut app, 9);
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(1),
    });
    let results = run_until_results(&mut app, 2);
    let Outcome::LoadFailed(failed) = &results[1] else {
        panic!("{results:?}")
    };
    assert_eq!(failed.slot, SlotId::Manual(1));
    assert!(
        failed.error.to_string().contains("could not be loaded"),
        "{}",
        failed.error
    );
    assert_eq!(healths(&mut app), [9]);

    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(2),
    });
    let results = run_until_results(&mut app, 3);
    assert!(
        matches!(&results[2], Outcome::LoadFailed(f) if f.error.to_string().contains("is empty"))
    );
}

#[test]
fn a_load_falls_back_to_a_backup_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(1)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(2)));
    run_until_results(&mut app, 1);
    set_healths(&mut app, 2);
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(2)));
    let results = run_until_results(&mut app, 2);
    let Outcome::Saved(newest) = &results[1] else {
        panic!()
    };
    let mut bytes = std::fs::read(&newest.path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(&newest.path, bytes).unwrap();

    set_healths(&mut app, 3);
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(2),
    });
    let results = run_until_results(&mut app, 3);
    let Outcome::Loaded(loaded) = &results[2] else {
        panic!("{results:?}")
    };
    assert!(loaded.restored_from_backup);
    assert_eq!(loaded.generation, 1);
    assert_eq!(loaded.skipped_generations.len(), 1);
    assert_eq!(healths(&mut app), [1]);
}

#[test]
fn a_sealed_game_writes_sealed_saves_and_loads_past_an_edited_one() {
    let dir = tempfile::tempdir().unwrap();
    let key = SealKey::from_bytes([0x42; 32]);
    let mut app = app_with(quiet(group(dir.path()).seal(key)));
    app.world_mut().spawn((Saveable, Health(1)));
    app.world_mut().resource_mut::<SaveTitle>().0 = "Docks".into();
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(2)));
    run_until_results(&mut app, 1);
    set_healths(&mut app, 2);
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(2)));
    let results = run_until_results(&mut app, 2);
    let Outcome::Saved(newest) = &results[1] else {
        panic!("{results:?}")
    };
    // A player gives the save a new title, CRCs and all.
    let mut bytes = std::fs::read(&newest.path).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 3, "sealed");
    let at = bytes.windows(5).position(|w| w == b"Docks").unwrap();
    bytes[at] = b'R';
    let forged = common::crc_fixup::with_valid_checksums(&bytes).unwrap();
    std::fs::write(&newest.path, forged).unwrap();

    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(2),
    });
    let results = run_until_results(&mut app, 3);
    let Outcome::Loaded(loaded) = &results[2] else {
        panic!("{results:?}")
    };
    assert!(loaded.restored_from_backup);
    assert_eq!(loaded.generation, 1);
    assert_eq!(healths(&mut app), [1]);
}

#[test]
fn commands_and_autosave_requests_reach_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(6)));
    app.add_systems(Update, |mut commands: Commands, mut done: Local<bool>| {
        if !*done {
            commands.save(SlotId::Manual(9));
            commands.autosave();
            *done = true;
        }
    });
    let results = run_until_results(&mut app, 2);
    let mut slots: Vec<SlotId> = results
        .iter()
        .map(|r| match r {
            Outcome::Saved(s) => s.slot,
            other => panic!("{other:?}"),
        })
        .collect();
    slots.sort();
    assert_eq!(slots, [SlotId::Manual(9), SlotId::Auto(0)]);
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    assert_eq!(store.generations(SlotId::Manual(9)).unwrap(), [1]);
}

#[test]
fn a_read_only_save_folder_fails_saves_and_keeps_loads_working() {
    let dir = tempfile::tempdir().unwrap();
    let fs = TestFs::new();
    let mut app = app_with(quiet(group(dir.path()).filesystem(Arc::new(fs.clone()))));
    app.world_mut().spawn((Saveable, Health(1)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Quick));
    run_until_results(&mut app, 1);

    fs.arm(Some(Fault::ReadOnly));
    set_healths(&mut app, 2);
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Quick));
    let results = run_until_results(&mut app, 2);
    let Outcome::SaveFailed(failed) = &results[1] else {
        panic!("{results:?}")
    };
    assert!(
        failed.error.to_string().contains("Read-only file system"),
        "{}",
        failed.error
    );

    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Quick,
    });
    let results = run_until_results(&mut app, 3);
    assert!(matches!(&results[2], Outcome::Loaded(_)), "{results:?}");
    assert_eq!(healths(&mut app), [1]);
}

#[test]
fn refresh_slots_lists_saves_written_outside_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    let listed = |world: &World| {
        let slots = world.resource::<SaveSlots>();
        slots
            .get(SlotId::Manual(6))
            .and_then(|entry| entry.shown_save())
            .map(|saved| saved.meta.title.clone())
    };
    update_until(&mut app, "the first listing", FRAMES, |world| {
        world.resource::<SaveSlots>().refreshes() > 0
    });
    // Another instance of the game (or a cloud sync) writes a save.
    let other = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    let meta = SaveMeta::new(SlotId::Manual(6)).with_title("from elsewhere");
    let bundle = SaveBundle::new(WorldState::default());
    other.save(SlotId::Manual(6), meta, &bundle).unwrap();
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(listed(app.world()), None, "nothing relists on its own");

    app.world_mut().write_message(RefreshSlotsRequest);
    update_until(&mut app, "the refresh", FRAMES, |world| {
        listed(world).is_some()
    });
    assert_eq!(listed(app.world()).as_deref(), Some("from elsewhere"));
}

#[test]
fn building_the_app_touches_no_files_and_startup_opens_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("not-yet");
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(plugin(&root));
    assert!(!root.exists(), "Plugin::build created {}", root.display());
    assert!(app.world().get_resource::<KeepsakeStore>().is_none());
    app.update();
    assert!(root.join("default").is_dir(), "startup opens the profile");
    let store = app.world().resource::<KeepsakeStore>();
    assert!(store.get().is_ok());
}

#[test]
fn the_autosave_timer_can_be_read_reset_paused_and_changed_by_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(group(dir.path()).set(AutosavePlugin {
        every: Duration::from_secs(1),
        ..default()
    }));
    app.world_mut().spawn((Saveable, Health(1)));
    for _ in 0..3 {
        app.update(); // 750 ms of 1 s
    }
    let timer = *app.world().resource::<AutosaveTimer>();
    assert_eq!(timer.elapsed(), Duration::from_millis(750));
    assert_eq!(timer.every(), Duration::from_secs(1));
    assert_eq!(timer.remaining(), Some(Duration::from_millis(250)));
    app.world_mut().resource_mut::<AutosaveTimer>().reset();
    for _ in 0..3 {
        app.update();
        assert!(
            app.world().resource::<KeepsakeStatus>().is_idle(),
            "the reset postponed the autosave"
        );
    }
    let results = run_until_results(&mut app, 1);
    assert!(matches!(&results[0], Outcome::Saved(s) if s.reason == SaveReason::Autosave));

    app.world_mut().resource_mut::<AutosaveTimer>().pause();
    for _ in 0..12 {
        app.update(); // 3 s of play
    }
    let timer = *app.world().resource::<AutosaveTimer>();
    assert_eq!(timer.remaining(), None);
    assert!(timer.elapsed() < Duration::from_secs(1), "{timer:?}");
    assert_eq!(app.world().resource::<Results>().0.len(), 1, "paused");

    let mut timer = app.world_mut().resource_mut::<AutosaveTimer>();
    timer.unpause();
    timer.set_every(Duration::from_secs(30));
    for _ in 0..12 {
        app.update();
    }
    assert_eq!(
        app.world().resource::<Results>().0.len(),
        1,
        "30 s not reached"
    );
    assert!(app.world().resource::<AutosaveTimer>().remaining() > Some(Duration::from_secs(20)));
}

#[test]
#[should_panic(expected = "an autosave interval of zero")]
fn an_autosave_interval_of_zero_is_refused_naming_the_switches() {
    let dir = tempfile::tempdir().unwrap();
    App::new()
        .add_plugins(MinimalPlugins)
        .add_plugins(group(dir.path()).set(AutosavePlugin {
            every: Duration::ZERO,
            ..default()
        }));
}

#[test]
fn a_save_request_for_one_autosave_slot_writes_exactly_that_slot() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.world_mut().spawn((Saveable, Health(3)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Auto(3)));
    app.world_mut().write_message(SaveRequest::autosave());
    let results = run_until_results(&mut app, 2);
    let saved: Vec<(SlotId, SaveReason)> = results
        .iter()
        .map(|r| match r {
            Outcome::Saved(s) => (s.slot, s.reason),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        saved,
        [
            (SlotId::Auto(3), SaveReason::Autosave),
            (SlotId::Auto(0), SaveReason::Autosave)
        ],
        "the given slot, then the ring's first empty slot"
    );
}

#[derive(bevy::ecs::schedule::ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct SaveTick;

#[test]
fn the_plugin_runs_in_the_schedule_the_game_chose() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .init_schedule(SaveTick)
        .add_plugins(quiet(group(dir.path()).schedule(SaveTick)))
        .register_saveable::<Health>();
    app.world_mut().spawn((Saveable, Health(2)));
    app.update();
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    for _ in 0..5 {
        app.update();
    }
    assert!(
        app.world().resource::<KeepsakeStatus>().is_idle(),
        "nothing ran outside the chosen schedule"
    );
    assert!(
        app.world()
            .resource::<KeepsakeStore>()
            .get()
            .unwrap()
            .generations(SlotId::Manual(0))
            .unwrap()
            .is_empty()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        app.world_mut().run_schedule(SaveTick);
        let store = app
            .world()
            .resource::<KeepsakeStore>()
            .get()
            .unwrap()
            .clone();
        if store.generations(SlotId::Manual(0)).unwrap() == [1] {
            break;
        }
        assert!(Instant::now() < deadline, "the save never ran in SaveTick");
        std::thread::yield_now();
    }
}

#[test]
fn public_resources_and_events_are_registered_for_reflection() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(plugin(dir.path()));
    let registry = app.world().resource::<AppTypeRegistry>().read();
    for path in [
        "bevy_keepsake::plugin::settings::KeepsakeSettings",
        "bevy_keepsake::plugin::exit_save::SaveOnExit",
        "bevy_keepsake::plugin::rewind::settings::RewindSettings",
        "bevy_keepsake::plugin::status::KeepsakeStatus",
        "bevy_keepsake::plugin::events::SaveRequest",
        "bevy_keepsake::plugin::events::SaveCompleted",
    ] {
        assert!(
            registry.get_with_type_path(path).is_some(),
            "{path} is not registered"
        );
    }
    assert!(
        registry
            .get_type_data::<ReflectResource>(std::any::TypeId::of::<KeepsakeSettings>())
            .is_some(),
        "KeepsakeSettings reflects Resource"
    );
    let settings = app
        .world()
        .resource::<KeepsakeSettings>()
        .as_partial_reflect();
    assert!(format!("{settings:?}").contains("load_mode"));
}

/// A headless app that runs its own loop (like a game's `main`) and exits by itself: `exit`
/// decides, each frame, whether to send `AppExit` or do something else first.
fn exiting_app<M>(plugin: impl Plugins<M>, exit: fn(&mut World, u32) -> bool) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(plugin)
        .register_saveable::<Health>()
        .add_systems(Startup, |mut commands: Commands| {
            commands.spawn((Saveable, Health(42)));
        })
        .add_systems(Update, move |world: &mut World, mut frame: Local<u32>| {
            *frame += 1;
            if exit(world, *frame) {
                world.write_message(AppExit::Success);
            }
        });
    app
}

fn saved_healths(root: &Path, slot: SlotId) -> Option<Vec<u32>> {
    let store = SlotStore::open(StoreConfig::new(root)).unwrap();
    if store.generations(slot).unwrap().is_empty() {
        return None;
    }
    let mut app = app_with(plugin(root));
    app.world_mut().write_message(LoadRequest { slot });
    let results = run_until_results(&mut app, 1);
    assert!(matches!(&results[0], Outcome::Loaded(_)), "{results:?}");
    Some(healths(&mut app))
}

#[test]
fn save_on_exit_is_on_disk_when_app_run_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(exit_saving(dir.path(), SaveOnExit::AUTOSAVE), |_, frame| {
        frame == 3
    });
    assert_eq!(app.run(), AppExit::Success);
    assert_eq!(saved_healths(dir.path(), SlotId::Auto(0)), Some(vec![42]));
}

/// A game's last-moment change, ordered before Bevy's `OnAppExitSystems` set, is in the exit
/// save: the plugin's exit work runs in that set.
#[test]
fn a_change_ordered_before_on_app_exit_systems_is_in_the_exit_save() {
    use bevy::app::OnAppExitSystems;
    use bevy::window::ExitSystems;
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(exit_saving(dir.path(), SaveOnExit::AUTOSAVE), |_, frame| {
        frame == 3
    });
    app.add_systems(
        Last,
        (|mut healths: Query<&mut Health>| healths.iter_mut().for_each(|mut h| h.0 = 7))
            .run_if(on_message::<AppExit>)
            .after(ExitSystems)
            .before(OnAppExitSystems),
    );
    app.run();
    assert_eq!(saved_healths(dir.path(), SlotId::Auto(0)), Some(vec![7]));
}

#[test]
fn without_save_on_exit_nothing_is_written_on_exit() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(plugin(dir.path()), |_, frame| frame == 3);
    app.run();
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    assert!(
        store
            .list()
            .unwrap()
            .iter()
            .all(|entry| entry.shown_save().is_none()),
        "save on exit is off by default"
    );
}

#[test]
fn save_on_exit_can_be_turned_on_while_the_game_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(plugin(dir.path()), |world, frame| {
        if frame == 2 {
            *world.resource_mut::<SaveOnExit>() = SaveOnExit::On {
                target: SaveTarget::Slot(SlotId::Manual(4)),
                max_wait: Duration::from_secs(10),
            };
        }
        frame == 4
    });
    app.run();
    assert_eq!(saved_healths(dir.path(), SlotId::Manual(4)), Some(vec![42]));
}

#[test]
fn closing_the_primary_window_saves_before_the_app_exits() {
    use bevy::window::{WindowCloseRequested, WindowPlugin};
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(
        exit_saving(dir.path(), SaveOnExit::AUTOSAVE),
        |world, frame| {
            if frame == 3 {
                let window = world
                    .query_filtered::<Entity, With<bevy::window::PrimaryWindow>>()
                    .single(world)
                    .unwrap();
                world.write_message(WindowCloseRequested { window });
            }
            false // the window plugin sends AppExit once the window is closed
        },
    );
    app.add_plugins(WindowPlugin::default());
    app.run();
    assert_eq!(saved_healths(dir.path(), SlotId::Auto(0)), Some(vec![42]));
}

#[test]
fn an_exit_save_that_cannot_finish_in_time_lets_the_app_close() {
    let dir = tempfile::tempdir().unwrap();
    let gate = GateFs::closed();
    let plugin =
        quiet(group(dir.path()).filesystem(Arc::new(gate.filesystem()))).set(ExitSavePlugin {
            save_on_exit: SaveOnExit::On {
                target: SaveTarget::Slot(SlotId::Quick),
                max_wait: Duration::from_millis(50),
            },
        });
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut app = exiting_app(plugin, |_, frame| frame == 2);
        done.send(app.run()).unwrap();
    });
    let exit = finished.recv_timeout(Duration::from_secs(30));
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    let generations = store.generations(SlotId::Quick).unwrap();
    gate.open(); // let the abandoned write finish in the background
    assert_eq!(
        exit,
        Ok(AppExit::Success),
        "the app closed while the write was held"
    );
    assert!(generations.is_empty(), "{generations:?}");
}

#[test]
fn losing_window_focus_autosaves_when_asked_to_and_not_while_paused() {
    use bevy::window::{PrimaryWindow, WindowFocused};
    let dir = tempfile::tempdir().unwrap();
    for (on_focus_loss, paused) in [(false, false), (true, false), (true, true)] {
        let mut app = app_with(group(dir.path()).set(AutosavePlugin {
            on_focus_loss,
            ..default()
        }));
        if paused {
            app.world_mut().resource_mut::<AutosaveTimer>().pause();
        }
        app.world_mut().spawn((Saveable, Health(1)));
        let window = app.world_mut().spawn(PrimaryWindow).id();
        app.world_mut().write_message(WindowFocused {
            window,
            focused: false,
        });
        app.update();
        let status = app.world().resource::<KeepsakeStatus>().clone();
        assert_eq!(
            status.is_saving(),
            on_focus_loss && !paused,
            "{on_focus_loss} {paused}: {status:?}"
        );
    }
}

#[test]
fn a_save_requested_in_the_exit_frame_is_written_before_the_app_closes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = exiting_app(plugin(dir.path()), |world, frame| {
        if frame == 3 {
            // "Save and quit": both in the same frame, save on exit off.
            world.write_message(SaveRequest::slot(SlotId::Manual(7)));
            return true;
        }
        false
    });
    app.run();
    assert_eq!(saved_healths(dir.path(), SlotId::Manual(7)), Some(vec![42]));
}

/// Issue 25: the plugin refuses, when the app starts, a save filter on a component that is not
/// registered for saving (the second save would hold none of the loaded entities), naming the
/// component and the fix.
#[test]
#[should_panic(expected = "register_saveable::<")]
fn a_filter_on_a_component_that_is_not_saved_is_refused_at_startup() {
    #[derive(Component)]
    struct LevelObject;
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()));
    app.set_save_filter(bevy_keepsake::snapshot::SaveFilter::with_component::<
        LevelObject,
    >());
    app.finish();
}

// The plugin group's members: each can be turned off, and what it adds goes with it while the
// rest keeps working.

#[test]
fn without_the_autosave_plugin_the_timer_saves_nothing_and_requests_still_save() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = group(dir.path()).set(AutosavePlugin {
        every: Duration::from_secs(1),
        on_focus_loss: true,
    });
    let mut app = app_with(plugins.disable::<AutosavePlugin>());
    assert!(app.world().get_resource::<AutosaveTimer>().is_none());
    app.world_mut().spawn((Saveable, Health(1)));
    // 5 s of play at 250 ms a frame: five autosaves with the member (see the test above).
    for _ in 0..20 {
        app.update();
    }
    assert!(app.world().resource::<KeepsakeStatus>().is_idle());
    assert!(app.world().resource::<Results>().0.is_empty());
    assert!(app.world().resource::<Playtime>().0 >= Duration::from_secs(4));

    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    let results = run_until_results(&mut app, 1);
    assert!(
        matches!(&results[0], Outcome::Saved(s) if s.slot == SlotId::Manual(0)),
        "{results:?}"
    );
}

#[test]
fn without_the_hotkeys_plugin_f5_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()).disable::<HotkeysPlugin>());
    app.world_mut().spawn((Saveable, Health(1)));
    press(&mut app, KeyCode::F5);
    for _ in 0..8 {
        app.update();
    }
    assert!(app.world().resource::<Results>().0.is_empty());
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    assert!(store.generations(SlotId::Quick).unwrap().is_empty());
}

#[test]
fn without_the_exit_save_plugin_no_exit_save_but_a_save_asked_at_exit_lands() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = exit_saving(dir.path(), SaveOnExit::AUTOSAVE);
    let mut app = exiting_app(plugins.disable::<ExitSavePlugin>(), |world, frame| {
        if frame == 3 {
            world.write_message(SaveRequest::slot(SlotId::Manual(2)));
        }
        frame == 3
    });
    assert_eq!(app.run(), AppExit::Success);
    assert_eq!(saved_healths(dir.path(), SlotId::Auto(0)), None);
    assert_eq!(saved_healths(dir.path(), SlotId::Manual(2)), Some(vec![42]));
}

#[test]
fn without_the_rewind_plugin_there_is_no_ring_and_saves_and_loads_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()).disable::<RewindPlugin>());
    assert!(app.world().get_resource::<RewindRing>().is_none());
    app.world_mut().spawn((Saveable, Health(3)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    run_until_results(&mut app, 1);
    set_healths(&mut app, 9);
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(0),
    });
    let results = run_until_results(&mut app, 2);
    assert!(matches!(&results[1], Outcome::Loaded(_)), "{results:?}");
    assert_eq!(healths(&mut app), [3]);
}

#[test]
#[should_panic(expected = "AutosavePlugin needs KeepsakeCorePlugin")]
fn a_member_without_the_core_plugin_names_what_is_missing() {
    App::new()
        .add_plugins(MinimalPlugins)
        .add_plugins(AutosavePlugin::default());
}

#[test]
#[should_panic(expected = "AutosavePlugin needs KeepsakeCorePlugin")]
fn disabling_the_core_member_names_the_first_member_that_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    App::new()
        .add_plugins(MinimalPlugins)
        .add_plugins(group(dir.path()).build().disable::<KeepsakeCorePlugin>());
}

#[test]
#[should_panic(expected = "KeepsakeCorePlugin is a member of KeepsakePlugins")]
fn the_core_member_alone_points_to_the_group() {
    App::new()
        .add_plugins(MinimalPlugins)
        .add_plugins(KeepsakeCorePlugin::default());
}

/// `.set(KeepsakeCorePlugin { .. })` changes the core's settings and keeps the group's: the
/// save lands under the group's save root, with the member's game version and extras.
#[test]
fn the_core_member_carries_its_settings_and_keeps_the_groups_store() {
    let dir = tempfile::tempdir().unwrap();
    let core = KeepsakeCorePlugin {
        game_version: "2.1.0".into(),
        save_extras: [("mods".to_owned(), "none".to_owned())].into(),
        load_mode: LoadMode::Respawn,
        ..default()
    };
    let mut app = app_with(plugin(dir.path()).set(core));
    let settings = app.world().resource::<KeepsakeSettings>();
    assert_eq!(settings.load_mode, LoadMode::Respawn);
    assert_eq!(settings.game_version, "2.1.0");
    app.world_mut().spawn((Saveable, Health(4)));
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(1)));
    let results = run_until_results(&mut app, 1);
    let Outcome::Saved(saved) = &results[0] else {
        panic!("{results:?}");
    };
    assert_eq!(saved.meta.game_version, "2.1.0");
    assert_eq!(
        saved.meta.extras.get("mods").map(String::as_str),
        Some("none")
    );
    let store = SlotStore::open(StoreConfig::new(dir.path())).unwrap();
    assert_eq!(store.generations(SlotId::Manual(1)).unwrap(), [1]);
}

/// `.set(RewindPlugin { .. })` starts the ring's settings resource from its fields: a point
/// every frame, at most three kept.
#[test]
fn the_rewind_member_starts_the_ring_with_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with(plugin(dir.path()).set(RewindPlugin {
        points: 3,
        every: Duration::from_millis(250),
        memory_budget: 1 << 20,
    }));
    assert_eq!(
        *app.world().resource::<RewindSettings>(),
        RewindSettings {
            points: 3,
            every: Duration::from_millis(250),
            memory_budget: 1 << 20,
        }
    );
    app.world_mut().spawn((Saveable, Health(1)));
    for frame in 0..30u32 {
        set_healths(&mut app, frame);
        app.update();
    }
    let ring = app.world().resource::<RewindRing>();
    assert_eq!(
        ring.len(),
        3,
        "points taken on the timer, the oldest dropped"
    );
}

/// `.set(CrashSavePlugin { .. })` keeps crash images at the member's interval: every
/// millisecond arms within a few frames, every hour does not (each frame here advances real
/// time by 250 ms too, so the default 5 s would be reached); disabled, there is no image.
#[test]
fn the_crash_save_member_keeps_images_at_its_interval_and_none_when_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let every = |every| CrashSavePlugin { every, ..default() };
    for (member, enabled, arms) in [
        (every(Duration::from_millis(1)), true, true),
        (every(Duration::from_secs(3600)), true, false),
        (every(Duration::from_millis(1)), false, false),
    ] {
        let mut group = plugin(dir.path()).set(member);
        if !enabled {
            group = group.disable::<CrashSavePlugin>();
        }
        let started = Instant::now();
        let mut app = app_with(group);
        app.world_mut().spawn((Saveable, Health(1)));
        while !crash_image_armed(app.world()) && started.elapsed() < Duration::from_secs(2) {
            app.update();
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(
            crash_image_armed(app.world()),
            arms,
            "{member:?}, enabled {enabled}, after {:?}",
            started.elapsed()
        );
    }
}
