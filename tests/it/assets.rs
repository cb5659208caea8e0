//! Asset handles in saved components, headless (`MinimalPlugins` + `AssetPlugin`, no window or
//! renderer): saved by path and loaded back through the `AssetServer`; handles to run-time
//! assets under each policy; a missing asset; hostile paths; and capture errors that name the
//! field and say what to do.

use crate::common::blob_v1;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoadFailedEvent, AssetLoader, LoadContext, UntypedHandle};
use bevy::prelude::*;
use bevy::reflect::{GetTypeRegistration, TypePath};
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::KeepsakeCorePlugin;
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::{RuntimeAssetHandles, SnapshotError};
use bevy_keepsake::testing;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A level file: its text.
#[derive(Asset, Reflect, Debug)]
struct LevelData(String);

#[derive(Default, TypePath)]
struct LevelLoader;

impl AssetLoader for LevelLoader {
    type Asset = LevelData;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _: &(),
        _: &mut LoadContext<'_>,
    ) -> Result<LevelData, std::io::Error> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        Ok(LevelData(String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn extensions(&self) -> &[&str] {
        &["level"]
    }
}

/// A colour with its own serde implementation, next to the handles (the mixed case).
#[derive(Reflect, Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
#[reflect(Serialize, Deserialize)]
struct Tint(u8, u8, u8);

#[derive(Reflect, Clone, Debug, Default)]
enum Decor {
    #[default]
    Bare,
    Banner {
        art: Handle<LevelData>,
        tint: Tint,
    },
}

/// A reflect-only component with handles nested in every usual shape.
#[derive(Component, Reflect, Clone, Debug, Default)]
#[reflect(Component)]
struct Looks {
    level: Handle<LevelData>,
    layers: Vec<Option<Handle<LevelData>>>,
    decor: Decor,
    tint: Tint,
}

/// An untyped handle, as games keep for "any asset".
#[derive(Component, Reflect, Clone, Debug)]
#[reflect(Component)]
struct Anything(UntypedHandle);

fn write_assets(dir: &Path) {
    let assets = dir.join("assets");
    std::fs::create_dir_all(assets.join("levels")).unwrap();
    std::fs::write(assets.join("levels/one.level"), "one").unwrap();
    std::fs::write(assets.join("levels/two.level"), "two").unwrap();
}

fn app(dir: &Path, policy: RuntimeAssetHandles) -> App {
    write_assets(dir);
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(AssetPlugin {
            file_path: dir.join("assets").to_string_lossy().into_owned(),
            ..default()
        })
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            10,
        )))
        .init_asset::<LevelData>()
        .register_asset_reflect::<LevelData>()
        .register_asset_loader(LevelLoader)
        .add_plugins(
            KeepsakePlugins::new("keepsake-asset-tests")
                .save_root(dir.join("saves"))
                .set(KeepsakeCorePlugin {
                    runtime_asset_handles: policy,
                    ..default()
                })
                .disable::<AutosavePlugin>(),
        )
        .register_saveable::<Looks>()
        .register_saveable::<Anything>()
        .init_resource::<Seen>()
        .add_observer(|e: On<SaveCompleted>, mut seen: ResMut<Seen>| {
            seen.saved.push(e.event().clone());
        })
        .add_observer(|e: On<SaveFailed>, mut seen: ResMut<Seen>| {
            seen.failed.push(e.error.to_string());
        })
        .add_observer(|e: On<LoadCompleted>, mut seen: ResMut<Seen>| {
            seen.loaded.push(e.event().clone());
        })
        .add_observer(|e: On<LoadFailed>, mut seen: ResMut<Seen>| {
            seen.load_failed.push(e.error.to_string());
        });
    app.update();
    app
}

#[derive(Resource, Default)]
struct Seen {
    saved: Vec<SaveCompleted>,
    failed: Vec<String>,
    loaded: Vec<LoadCompleted>,
    load_failed: Vec<String>,
}

/// How many frames a wait may take, not counting those while the plugin's work runs in the
/// background (`testing::update_until`).
const FRAMES: u32 = 200;

fn update_until(app: &mut App, what: &str, done: impl Fn(&World) -> bool) {
    testing::update_until(app, what, FRAMES, done);
}

fn save(app: &mut App) {
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    update_until(app, "the save", |world| {
        let seen = world.resource::<Seen>();
        !seen.saved.is_empty() || !seen.failed.is_empty()
    });
}

fn load(app: &mut App) -> LoadCompleted {
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(0),
    });
    update_until(app, "the load", |world| {
        !world.resource::<Seen>().loaded.is_empty()
    });
    app.world().resource::<Seen>().loaded[0].clone()
}

fn looks(app: &mut App) -> Looks {
    let world = app.world_mut();
    world.query::<&Looks>().single(world).unwrap().clone()
}

fn path_of(handle: &Handle<LevelData>) -> Option<String> {
    handle.path().map(ToString::to_string)
}

#[test]
fn handles_are_saved_by_path_and_come_back_through_the_asset_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Skip);
    let server = app.world().resource::<AssetServer>().clone();
    app.world_mut().spawn((
        Saveable,
        Looks {
            level: server.load("levels/one.level"),
            layers: vec![Some(server.load("levels/two.level#part")), None],
            decor: Decor::Banner {
                art: server.load("levels/two.level"),
                tint: Tint(1, 2, 3),
            },
            tint: Tint(9, 8, 7),
        },
        Anything(server.load::<LevelData>("levels/one.level").untyped()),
    ));
    save(&mut app);
    assert_eq!(app.world().resource::<Seen>().saved[0].handles_left_out, 0);

    // A fresh app (nothing loaded yet) loads the save.
    let mut app2 = app_for_load(dir.path());
    let loaded = load(&mut app2);
    assert!(loaded.refused_asset_paths.is_empty());
    let looks = looks(&mut app2);
    assert_eq!(path_of(&looks.level).as_deref(), Some("levels/one.level"));
    let layer = looks.layers[0].as_ref().map(path_of);
    assert_eq!(layer, Some(Some("levels/two.level#part".to_owned())));
    assert!(looks.layers[1].is_none());
    let Decor::Banner { art, tint } = &looks.decor else {
        panic!("{:?}", looks.decor)
    };
    assert_eq!(path_of(art).as_deref(), Some("levels/two.level"));
    assert_eq!((*tint, looks.tint), (Tint(1, 2, 3), Tint(9, 8, 7)));
    let world = app2.world_mut();
    let anything = world.query::<&Anything>().single(world).unwrap().0.clone();
    assert_eq!(
        anything.path().map(ToString::to_string).as_deref(),
        Some("levels/one.level")
    );
    // The loaded handle is a real load: the asset arrives.
    let id = looks.level.id();
    update_until(&mut app2, "the level asset", |world| {
        world.resource::<Assets<LevelData>>().get(id).is_some()
    });
    let text = &app2
        .world()
        .resource::<Assets<LevelData>>()
        .get(id)
        .unwrap()
        .0;
    assert_eq!(text, "one");
}

fn app_for_load(dir: &Path) -> App {
    app(dir, RuntimeAssetHandles::Skip)
}

fn spawn_runtime_handle(app: &mut App) {
    let handle = app
        .world_mut()
        .resource_mut::<Assets<LevelData>>()
        .add(LevelData("made at run time".into()));
    let server = app.world().resource::<AssetServer>().clone();
    app.world_mut().spawn((
        Saveable,
        Looks {
            level: handle,
            layers: vec![Some(server.load("levels/two.level"))],
            ..default()
        },
    ));
}

#[test]
fn run_time_handles_are_skipped_and_counted_by_default() {
    for policy in [RuntimeAssetHandles::Skip, RuntimeAssetHandles::Silent] {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), policy);
        spawn_runtime_handle(&mut app);
        save(&mut app);
        let seen = app.world().resource::<Seen>();
        assert!(seen.failed.is_empty(), "{:?}", seen.failed);
        assert_eq!(seen.saved[0].handles_left_out, 1, "{policy:?}");

        let mut app2 = app_for_load(dir.path());
        load(&mut app2);
        let looks = looks(&mut app2);
        assert_eq!(looks.level, Handle::default(), "the default handle");
        assert_eq!(
            looks.layers[0].as_ref().and_then(path_of).as_deref(),
            Some("levels/two.level"),
            "the other handles are kept"
        );
    }
}

#[test]
fn run_time_handles_fail_the_save_when_asked_to_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Fail);
    spawn_runtime_handle(&mut app);
    save(&mut app);
    let seen = app.world().resource::<Seen>();
    assert!(seen.saved.is_empty());
    let error = &seen.failed[0];
    let looks = Looks::type_path();
    assert!(error.contains(&format!("{looks}.level")), "{error}");
    assert!(error.contains("Assets::add"), "{error}");
    assert!(error.contains("RuntimeAssetHandles::Skip"), "{error}");
}

#[test]
fn a_saved_asset_that_is_gone_fails_to_load_the_way_bevy_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Skip);
    let server = app.world().resource::<AssetServer>().clone();
    app.world_mut().spawn((
        Saveable,
        Looks {
            level: server.load("levels/deleted.level"),
            ..default()
        },
    ));
    save(&mut app);

    let mut app2 = app_for_load(dir.path());
    app2.init_resource::<Failed>().add_systems(
        Update,
        |mut failed: MessageReader<AssetLoadFailedEvent<LevelData>>, mut seen: ResMut<Failed>| {
            seen.0
                .extend(failed.read().map(|event| event.path.to_string()));
        },
    );
    let loaded = load(&mut app2);
    assert!(loaded.refused_asset_paths.is_empty());
    assert_eq!(
        path_of(&looks(&mut app2).level).as_deref(),
        Some("levels/deleted.level")
    );
    update_until(&mut app2, "AssetLoadFailedEvent", |world| {
        !world.resource::<Failed>().0.is_empty()
    });
    assert_eq!(
        app2.world().resource::<Failed>().0,
        ["levels/deleted.level"]
    );
}

#[derive(Resource, Default)]
struct Failed(Vec<String>);

/// What a forged save holds in place of a handle: the same bytes as Bevy's `HandleReference`.
#[derive(Reflect, Clone, Debug, Serialize, Deserialize)]
#[reflect(Serialize, Deserialize)]
enum ForgedReference {
    Path(String),
}

/// Bevy's `TypedHandleReference`: an untyped handle names its asset type.
#[derive(Reflect, Clone, Debug, Serialize, Deserialize)]
#[reflect(Serialize, Deserialize)]
struct ForgedTypedReference {
    asset_type: String,
    reference: ForgedReference,
}

/// Stored under its own type path, then loaded as `Anything` through a rename.
#[derive(Component, Reflect, Clone, Debug)]
#[reflect(Component)]
struct ForgedAnything(ForgedTypedReference);

/// Stored under its own type path, then loaded as `Looks` through a rename.
#[derive(Component, Reflect, Clone, Debug)]
#[reflect(Component)]
struct ForgedLooks {
    level: ForgedReference,
    layers: Vec<Option<ForgedReference>>,
    decor: u8, // `Decor::Bare`: variant 0
    tint: Tint,
}

/// What `register_saveable` needs of a forged type.
trait Forged: Component + FromReflect + TypePath + GetTypeRegistration {}

impl<T: Component + FromReflect + TypePath + GetTypeRegistration> Forged for T {}

/// Saves one entity holding `forged` into manual slot 0 of `dir`, from an app that registers
/// the forged type besides the real ones: the slot file written.
fn forge<T: Forged>(dir: &Path, forged: T) -> PathBuf {
    let mut forger = app(dir, RuntimeAssetHandles::Skip);
    forger.register_saveable::<T>();
    forger.world_mut().spawn((Saveable, forged));
    save(&mut forger);
    assert_eq!(forger.world().resource::<Seen>().saved.len(), 1);
    let store = forger
        .world()
        .resource::<bevy_keepsake::plugin::KeepsakeStore>();
    let store = store.get().unwrap();
    let generations = store.generations(SlotId::Manual(0)).unwrap();
    store.path_of(SlotId::Manual(0), generations[0])
}

/// Forges a save as [`forge`] does and rewrites it as a save from before layouts (blob
/// version 1), which a hostile file can still be: its forged column carries no layout to give
/// it away, so its bytes reach the handle readers of the type it is loaded as.
fn forge_without_layouts<T: Forged>(dir: &Path, forged: T) {
    let file = forge(dir, forged);
    blob_v1::rewrite_save_file(&file, blob_v1::without_layouts);
}

/// Loads manual slot 0, expecting the load to fail: its error, after checking that no entity
/// was spawned and no load completed.
fn failed_load(app: &mut App) -> String {
    let before = app.world().entities().count_spawned();
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(0),
    });
    update_until(app, "the failed load", |world| {
        !world.resource::<Seen>().load_failed.is_empty()
    });
    assert_eq!(
        app.world().entities().count_spawned(),
        before,
        "world untouched"
    );
    assert!(app.world().resource::<Seen>().loaded.is_empty());
    app.world().resource::<Seen>().load_failed[0].clone()
}

fn forged_looks(hostile: &[String]) -> ForgedLooks {
    let path = |p: &str| ForgedReference::Path(p.to_owned());
    ForgedLooks {
        level: path(&hostile[0]),
        layers: hostile[1..].iter().map(|p| Some(path(p))).collect(),
        decor: 0,
        tint: Tint(0, 0, 0),
    }
}

fn forged_anything() -> ForgedAnything {
    // A type the game registers, but not an asset type.
    ForgedAnything(ForgedTypedReference {
        asset_type: Tint::type_path().to_owned(),
        reference: ForgedReference::Path("levels/one.level".to_owned()),
    })
}

/// A forged save as this build writes it carries each column's layout: the load refuses the
/// forged column before reading a value (nothing spawned), naming the stored type and the
/// field where its layout and the real type's part.
#[test]
fn a_forged_column_is_refused_by_its_layout_naming_the_type() {
    let hostile = ["/etc/passwd".to_owned(), "../outside.level".to_owned()];
    let dir = tempfile::tempdir().unwrap();
    forge(dir.path(), forged_looks(&hostile));
    let mut app2 = app_for_load(dir.path());
    app2.register_saveable_rename::<Looks>(ForgedLooks::type_path());
    let error = failed_load(&mut app2);
    assert!(
        error.contains(&format!(
            "{} cannot be read from this save",
            ForgedLooks::type_path()
        )),
        "{error}"
    );
    let level = format!("{}.level is ", Looks::type_path());
    assert!(error.contains(&level), "{error}");
    assert!(error.contains(ForgedReference::type_path()), "{error}");
    assert!(error.contains(LevelData::type_path()), "{error}");

    let dir = tempfile::tempdir().unwrap();
    forge(dir.path(), forged_anything());
    let mut app2 = app_for_load(dir.path());
    app2.register_saveable_rename::<Anything>(ForgedAnything::type_path());
    let error = failed_load(&mut app2);
    assert!(
        error.contains(&format!(
            "{} cannot be read from this save",
            ForgedAnything::type_path()
        )),
        "{error}"
    );
    let anything = format!("{}.0 is ", Anything::type_path());
    assert!(error.contains(&anything), "{error}");
    assert!(error.contains(ForgedTypedReference::type_path()), "{error}");
    assert!(error.contains("UntypedHandle"), "{error}");
}

#[test]
fn hostile_asset_paths_are_refused_and_the_load_completes() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = [
        "/etc/passwd".to_owned(),
        "../../outside.level".to_owned(),
        "levels/../../../escape.level".to_owned(),
        format!("{}.level", "a".repeat(64 * 1024)),
        "nosuchsource://payload.level".to_owned(),
    ];
    forge_without_layouts(dir.path(), forged_looks(&hostile));

    let mut app2 = app_for_load(dir.path());
    app2.register_saveable_rename::<Looks>(ForgedLooks::type_path());
    let loaded = load(&mut app2);
    let reasons: Vec<&str> = loaded
        .refused_asset_paths
        .iter()
        .map(|refused| refused.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), hostile.len(), "{reasons:?}");
    assert!(
        reasons[0].contains("leaves the asset folder"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("leaves the asset folder"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].contains("leaves the asset folder"),
        "{reasons:?}"
    );
    assert!(reasons[3].contains("longer than"), "{reasons:?}");
    assert!(reasons[4].contains("no asset source"), "{reasons:?}");

    assert!(loaded.refused_asset_paths[3].path.len() <= 200);
    let looks = looks(&mut app2);
    assert_eq!(looks.level, Handle::default());
    assert!(
        looks
            .layers
            .iter()
            .all(|layer| layer.as_ref() == Some(&Handle::default()))
    );
}

#[test]
fn an_untyped_handle_naming_a_type_that_is_no_asset_fails_the_load_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    forge_without_layouts(dir.path(), forged_anything());
    let mut app2 = app_for_load(dir.path());
    app2.register_saveable_rename::<Anything>(ForgedAnything::type_path());
    let error = failed_load(&mut app2);
    assert!(error.contains("not an asset type of this app"), "{error}");
    assert!(error.contains(Tint::type_path()), "{error}");
}

/// A type that reflects neither `Serialize` nor fields.
#[derive(Reflect, Clone, Debug, Default)]
#[reflect(opaque, Clone, Default)]
struct Opaque;

#[derive(Component, Reflect, Clone, Debug, Default)]
#[reflect(Component)]
struct Quest {
    steps: Vec<Step>,
}

#[derive(Reflect, Clone, Debug, Default)]
struct Step {
    marker: Opaque,
}

#[test]
fn a_value_that_cannot_be_saved_is_named_down_to_its_field_with_a_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Skip);
    app.register_saveable::<Quest>();
    app.world_mut().spawn((
        Saveable,
        Quest {
            steps: vec![Step::default(), Step::default()],
        },
    ));
    let error = bevy_keepsake::snapshot::capture(app.world()).unwrap_err();
    let SnapshotError::Capture {
        type_path, field, ..
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!(type_path, Quest::type_path());
    assert_eq!(field, &format!("{}.steps[0].marker", Quest::type_path()));
    let message = error.to_string();
    assert!(message.contains(Opaque::type_path()), "{message}");
    assert!(
        message.contains("add #[reflect(Serialize, Deserialize)]"),
        "{message}"
    );
    assert!(message.contains("leave"), "{message}");

    // Through the plugin the same message reaches SaveFailed, and nothing is written.
    save(&mut app);
    let failed = &app.world().resource::<Seen>().failed[0];
    assert!(failed.contains(".steps[0].marker"), "{failed}");
    let store = app
        .world()
        .resource::<bevy_keepsake::plugin::KeepsakeStore>();
    let store = store.get().unwrap();
    assert!(store.generations(SlotId::Manual(0)).unwrap().is_empty());
}

/// Rewind points share the unchanged pieces of types that can hold handles: twenty points of
/// an unchanged world hold about what one does, and one that changed still comes back as it
/// was.
#[test]
fn rewind_points_share_unchanged_pieces_of_types_with_handles() {
    use bevy_keepsake::snapshot::{self, CaptureCache, SnapshotHistory};
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Silent);
    let world = app.world_mut();
    world.spawn_batch((0..3000).map(|n| {
        let tint = Tint(n as u8, 1, 2);
        let looks = Looks {
            tint,
            ..Looks::default()
        };
        (Saveable, looks)
    }));
    world.increment_change_tick();
    let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
    let first = history.record(&cache.capture(world).unwrap());
    let blob = snapshot::capture(world).unwrap().blob;
    let one = history.memory();
    let mut points = vec![first];
    for _ in 0..19 {
        world.increment_change_tick();
        points.push(history.record(&cache.capture(world).unwrap()));
    }
    assert!(
        history.memory() < one + one / 5,
        "20 unchanged points hold {} bytes, one held {one}",
        history.memory()
    );
    let mut looks = world.query::<&mut Looks>();
    looks.iter_mut(world).next().unwrap().tint = Tint(9, 9, 9);
    world.increment_change_tick();
    points.push(history.record(&cache.capture(world).unwrap()));
    assert!(
        points[0].pending().finish().blob == blob,
        "the first point changed"
    );
}

/// The capture cache keeps the pieces of types with handles saved by path like any other (a
/// handle's path is part of the handle), so an unchanged column is not encoded again. A table
/// whose values left a run-time handle out is encoded again by every capture, so each capture
/// reports it, until the handle is gone. Every blob is the full capture's.
#[test]
fn handle_columns_are_kept_between_captures_unless_they_left_a_handle_out() {
    use bevy_keepsake::snapshot::{self, CaptureCache};
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), RuntimeAssetHandles::Skip);
    let server = app.world().resource::<AssetServer>().clone();
    let world = app.world_mut();
    world.spawn_batch((0..3000).map(|n| {
        let looks = Looks {
            level: server.load(["levels/one.level", "levels/two.level"][n % 2]),
            tint: Tint(n as u8, 1, 2),
            ..Looks::default()
        };
        (Saveable, looks)
    }));
    let mut cache = CaptureCache::default();
    // A frame goes by before each capture (an edit in the tick of a capture is counted at
    // the next one too).
    let mut capture = |world: &mut World| {
        world.increment_change_tick();
        let snapshot = cache.capture(world).unwrap().finish();
        assert!(snapshot.blob == snapshot::capture(world).unwrap().blob);
        (snapshot.handles_left_out, cache.stats())
    };
    let (left_out, first) = capture(world);
    assert!(left_out.is_empty());
    assert!(first.rows_encoded >= 3000, "{first:?}");
    let (_, unchanged) = capture(world);
    assert_eq!(unchanged.rows_encoded, 0, "{unchanged:?}");
    assert!(unchanged.pieces_reused >= 3, "{unchanged:?}");

    let mut query = world.query::<&mut Looks>();
    query.iter_mut(world).nth(10).unwrap().level = server.load("levels/two.level");
    let (_, patched) = capture(world);
    assert_eq!(
        (patched.rows_encoded, patched.pieces_patched),
        (1, 1),
        "{patched:?}"
    );

    let runtime = world
        .resource_mut::<Assets<LevelData>>()
        .add(LevelData("made at run time".into()));
    let entity = query.iter(world).count() / 2;
    query.iter_mut(world).nth(entity).unwrap().level = runtime;
    // The capture that meets it patches its piece; the next, with nothing changed, encodes the
    // table again, and reports it again.
    let mut seen = Vec::new();
    for _ in 0..2 {
        let (left_out, stats) = capture(world);
        assert_eq!(left_out.len(), 1, "every capture reports it: {stats:?}");
        assert_eq!(left_out[0].count, 1);
        seen.push(stats.rows_encoded);
    }
    assert_eq!(seen[0], 1);
    assert!(seen[1] >= 3000, "{seen:?}");
    query.iter_mut(world).nth(entity).unwrap().level = server.load("levels/one.level");
    let (left_out, _) = capture(world);
    assert!(left_out.is_empty());
    let (_, stats) = capture(world);
    assert_eq!(stats.rows_encoded, 0, "kept again: {stats:?}");
}
