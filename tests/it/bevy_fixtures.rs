//! Saves written on each Bevy series: the fixtures in `tests/golden/bevy-<version>-*.ksav`.
//!
//! A game that upgrades Bevy keeps its players' saves, so each Bevy series we support leaves two
//! fixtures behind, written by the build of that series (the commit that adds them says which).
//! This series' fixtures load exactly; the previous series' are pinned as they fare today (see
//! each test), so any change in how they load shows here.
//!
//! - `bevy-<version>-test-world.ksav`: the Bevy components games commonly save (`Transform`,
//!   `Name`, `Visibility`, `ChildOf`, `Sprite` with an image) and two game components holding
//!   `bevy_math` primitives and `Color`s, one reflect-only and one through serde, and a camera's
//!   `Tonemapping` (a Bevy type that moves between Bevy versions). Written by
//!   [`write_test_world_fixture`] through the plugin, as a game saves.
//! - `bevy-<version>-demo-quick.ksav`: the demo's quicksave (F5) after some play, with the
//!   crowd, sprites with images, the game's types and a hierarchy.

use bevy::prelude::*;
use bevy::render::view::Tonemapping;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::format::{DecodeOptions, decode as decode_file};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::{SaveRegistry, SkippedType, decode, inspect};
use bevy_keepsake::store::{SlotStore, StoreConfig};
use bevy_keepsake::testing;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Bevy series this build is on: the fixture [`write_test_world_fixture`] writes.
const THIS_BEVY: &str = "0.20";

/// The previous Bevy series, whose players' saves this build meets first.
const OLDER_BEVY: &str = "0.19";

/// A game component read through reflection alone, holding a math primitive and a colour.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
struct Zone {
    area: Circle,
    tint: Color,
    label: String,
}

/// A game component with its own serde implementation, holding a primitive and a colour.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
struct Glow {
    bounds: Rectangle,
    color: Color,
}

fn fixture_path(bevy: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/bevy-{bevy}-{name}.ksav"))
}

/// Whether the game registers `Sprite` for saving.
#[derive(Clone, Copy, PartialEq)]
enum Sprites {
    Saved,
    NotSaved,
}

/// A headless game: the project's `assets/` folder, images known to the asset server, and the
/// test world's types registered for saving.
fn app(save_root: &Path) -> App {
    app_with(save_root, Sprites::Saved)
}

fn app_with(save_root: &Path, sprites: Sprites) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(AssetPlugin {
            file_path: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("assets")
                .to_string_lossy()
                .into_owned(),
            ..default()
        })
        .add_plugins(bevy::image::ImagePlugin::default())
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            10,
        )))
        .add_plugins(
            KeepsakePlugins::new("keepsake-fixture-tests")
                .save_root(save_root)
                .build()
                .disable::<AutosavePlugin>(),
        )
        .register_saveable::<Transform>()
        .register_saveable::<Name>()
        .register_saveable::<Visibility>()
        .register_saveable::<Zone>()
        .register_saveable::<Glow>()
        .register_saveable::<Tonemapping>()
        .init_resource::<Outcomes>()
        .add_observer(|e: On<SaveCompleted>, mut seen: ResMut<Outcomes>| {
            seen.0.push(Ok(e.path.clone()));
        })
        .add_observer(|e: On<SaveFailed>, mut seen: ResMut<Outcomes>| {
            seen.0.push(Err(e.error.to_string()));
        })
        .add_observer(|_: On<LoadCompleted>, mut seen: ResMut<Outcomes>| {
            seen.0.push(Ok(PathBuf::new()));
        })
        .add_observer(|e: On<LoadFailed>, mut seen: ResMut<Outcomes>| {
            seen.0.push(Err(e.error.to_string()));
        });
    if sprites == Sprites::Saved {
        app.register_saveable::<Sprite>();
    }
    app.update();
    app
}

/// What the plugin reported: a save's path (empty for a load), or the error's message.
#[derive(Resource, Default)]
struct Outcomes(Vec<Result<PathBuf, String>>);

fn run_until_outcome(app: &mut App) -> Result<PathBuf, String> {
    let reported = |world: &World| !world.resource::<Outcomes>().0.is_empty();
    testing::update_until(app, "a save or load result", 200, reported);
    app.world_mut().resource_mut::<Outcomes>().0.pop().unwrap()
}

/// The test world, as a game would have it: a gate with two children, one with an image.
fn spawn_test_world(world: &mut World) {
    let coin = world
        .resource::<AssetServer>()
        .load::<Image>("sprites/coin.png");
    let gate = world
        .spawn((
            Saveable,
            Name::new("Gate"),
            Transform::from_xyz(1.5, -2.0, 3.0)
                .with_rotation(Quat::from_rotation_z(0.75))
                .with_scale(Vec3::new(2.0, 2.0, 1.0)),
            Visibility::Hidden,
            Zone {
                area: Circle::new(4.25),
                tint: Color::oklcha(0.7, 0.15, 120.0, 0.5),
                label: "north gate".into(),
            },
        ))
        .id();
    world.spawn((Saveable, Name::new("Camera"), Tonemapping::Reinhard));
    world.spawn((
        Saveable,
        Name::new("Coin"),
        ChildOf(gate),
        Transform::from_xyz(0.5, 0.25, 1.0),
        Visibility::Visible,
        Sprite {
            image: coin,
            color: Color::srgba(1.0, 0.9, 0.2, 0.75),
            custom_size: Some(Vec2::new(24.0, 32.0)),
            flip_x: true,
            ..default()
        },
    ));
    world.spawn((
        Saveable,
        Name::new("Lamp"),
        ChildOf(gate),
        Transform::from_xyz(-3.0, 0.0, 2.0),
        Visibility::Inherited,
        Sprite::from_color(Color::hsla(30.0, 0.8, 0.6, 1.0), Vec2::new(6.0, 10.0)),
        Glow {
            bounds: Rectangle::new(6.0, 10.0),
            color: Color::linear_rgb(2.0, 1.5, 0.5),
        },
    ));
}

/// One saved entity, as the test compares it: every saved value, the parent by name and the
/// sprite's image by path.
#[derive(Debug, PartialEq)]
struct Seen {
    name: String,
    parent: Option<String>,
    transform: Option<Transform>,
    visibility: Option<Visibility>,
    sprite: Option<SeenSprite>,
    zone: Option<Zone>,
    glow: Option<Glow>,
    tonemapping: Option<Tonemapping>,
}

/// A sprite's saved fields, its image by path.
#[derive(Debug, PartialEq)]
struct SeenSprite {
    image: Option<String>,
    color: Color,
    custom_size: Option<Vec2>,
    flip: (bool, bool),
    alpha_mode: bevy::sprite::SpriteAlphaMode,
}

fn seen(world: &mut World) -> Vec<Seen> {
    let mut query = world.query::<(
        Entity,
        &Name,
        Option<&ChildOf>,
        Option<&Transform>,
        Option<&Visibility>,
        Option<&Sprite>,
        Option<&Zone>,
        Option<&Glow>,
        Option<&Tonemapping>,
    )>();
    let mut seen: Vec<Seen> = query
        .iter(world)
        .map(
            |(_, name, child_of, transform, visibility, sprite, zone, glow, tonemapping)| Seen {
                name: name.as_str().to_owned(),
                parent: child_of.map(|c| world.get::<Name>(c.parent()).unwrap().to_string()),
                transform: transform.copied(),
                visibility: visibility.copied(),
                sprite: sprite.map(|s| SeenSprite {
                    image: s.image.path().map(ToString::to_string),
                    color: s.color,
                    custom_size: s.custom_size,
                    flip: (s.flip_x, s.flip_y),
                    alpha_mode: s.alpha_mode,
                }),
                zone: zone.cloned(),
                glow: glow.cloned(),
                tonemapping: tonemapping.copied(),
            },
        )
        .collect();
    seen.sort_by(|a, b| a.name.cmp(&b.name));
    seen
}

/// Copies `fixture` into a fresh save folder as manual slot 0 and loads it into a fresh game.
fn load_fixture(
    fixture: &Path,
    sprites: Sprites,
) -> (App, tempfile::TempDir, Result<PathBuf, String>) {
    let dir = tempfile::tempdir().unwrap();
    let saves = dir.path().join("saves");
    let store = SlotStore::open(StoreConfig::new(&saves)).unwrap();
    let target = store.path_of(SlotId::Manual(0), 1);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(fixture, &target).unwrap();
    let mut app = app_with(&saves, sprites);
    app.world_mut().write_message(LoadRequest {
        slot: SlotId::Manual(0),
    });
    let outcome = run_until_outcome(&mut app);
    (app, dir, outcome)
}

/// The test world as this build spawns it.
fn expected_test_world() -> Vec<Seen> {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    spawn_test_world(app.world_mut());
    seen(app.world_mut())
}

#[test]
fn the_test_world_fixture_of_this_bevy_loads_exactly() {
    let (mut app, _dir, outcome) =
        load_fixture(&fixture_path(THIS_BEVY, "test-world"), Sprites::Saved);
    outcome.expect("the fixture loads");
    assert_eq!(seen(app.world_mut()), expected_test_world());
}

/// A game's Bevy 0.19 saves load exactly on 0.20, sprites included, with nothing written by the
/// game. The 0.19 test world was written before layouts, so its values decide which Bevy wrote
/// each column whose type changed (`bevy_0_19::layout`):
/// - `Sprite` gained `alpha_mode` (it takes its default, `Blend`), and its `Color` gained three
///   variants at the end (stored variant indices keep their meaning);
/// - `Tonemapping` moved from `bevy_core_pipeline` to `bevy_render` and gained a `Linear` variant
///   before `Reinhard`: its column is found under the new path and read by name, so `Reinhard`
///   stays `Reinhard`;
/// - the game's components holding `Circle`, `Rectangle` and `Color`s read as before.
#[test]
fn a_bevy_0_19_save_loads_exactly_sprites_included() {
    let fixture = fixture_path(OLDER_BEVY, "test-world");
    let (mut app, _dir, outcome) = load_fixture(&fixture, Sprites::Saved);
    outcome.expect("the 0.19 test world loads");
    let loaded = seen(app.world_mut());
    assert_eq!(loaded, expected_test_world());
    let sprites: Vec<&SeenSprite> = loaded.iter().filter_map(|e| e.sprite.as_ref()).collect();
    assert_eq!(sprites.len(), 2);
    assert!(
        sprites
            .iter()
            .all(|sprite| sprite.alpha_mode == bevy::sprite::SpriteAlphaMode::Blend)
    );
    let decoded = decode_fixture(&fixture, app.world());
    assert_eq!(decoded.skipped_types(), []);
    assert_eq!(decoded.dropped_fields(), []);
}

/// A game that does not save `Sprite` loads the rest of a 0.19 save and is told what was
/// skipped.
#[test]
fn a_bevy_0_19_save_loads_without_sprite_registered_skipping_only_sprites() {
    let fixture = fixture_path(OLDER_BEVY, "test-world");
    let (mut app, _dir, outcome) = load_fixture(&fixture, Sprites::NotSaved);
    outcome.expect("the 0.19 test world loads without sprites");
    let expected: Vec<Seen> = expected_test_world()
        .into_iter()
        .map(|entity| Seen {
            sprite: None,
            ..entity
        })
        .collect();
    assert_eq!(seen(app.world_mut()), expected);
    let skipped = SkippedType {
        type_path: "bevy_sprite::sprite::Sprite".into(),
        values: 2,
    };
    assert_eq!(
        decode_fixture(&fixture, app.world()).skipped_types(),
        [skipped]
    );
}

/// The 0.19 demo quicksave's sprites (the player, the lantern, the coins, the enemies, each
/// with an image and a tint) decode on 0.20; the demo's own types are not registered here and
/// are skipped (the demo itself loads the whole save with F9).
#[test]
fn the_bevy_0_19_demo_quicksave_sprites_decode() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let fixture = fixture_path(OLDER_BEVY, "demo-quick");
    let decoded = decode_fixture(&fixture, app.world());
    let bytes = std::fs::read(&fixture).unwrap();
    let save = decode_file(&bytes, &DecodeOptions::default()).unwrap();
    let table = inspect(&save.bundle.world.ecs_blob).unwrap();
    let stored_sprites = table
        .columns
        .iter()
        .find(|c| c.type_path == "bevy_sprite::sprite::Sprite")
        .map(|column| column.rows.len())
        .unwrap();
    assert!(stored_sprites > 0);
    assert!(
        decoded
            .skipped_types()
            .iter()
            .all(|skipped| skipped.type_path.starts_with("demo::")),
        "{:?}",
        decoded.skipped_types()
    );
    assert_eq!(decoded.dropped_fields(), []);
}

/// Decodes a fixture's blob with `world`'s registries.
fn decode_fixture(fixture: &Path, world: &World) -> bevy_keepsake::snapshot::DecodedSnapshot {
    let bytes = std::fs::read(fixture).unwrap();
    let save = decode_file(&bytes, &DecodeOptions::default()).unwrap();
    decode(
        &save.bundle.world.ecs_blob,
        save.bundle.world.state_hash,
        world.resource::<SaveRegistry>(),
        &world.resource::<AppTypeRegistry>().read(),
    )
    .unwrap()
}

/// The demo's quicksave is a real save: its header, metadata and blob are whole, and it holds
/// the types the demo registers, the sprites among them.
#[test]
fn the_demo_quicksave_fixtures_are_whole() {
    for bevy in [OLDER_BEVY, THIS_BEVY] {
        demo_quicksave_is_whole(bevy);
    }
}

fn demo_quicksave_is_whole(bevy: &str) {
    let bytes = std::fs::read(fixture_path(bevy, "demo-quick")).unwrap();
    let save = decode_file(&bytes, &DecodeOptions::default()).unwrap();
    let table = inspect(&save.bundle.world.ecs_blob).unwrap();
    let rows = |type_path: &str| {
        let column = table.columns.iter().find(|c| c.type_path == type_path);
        column.map_or(0, |column| column.rows.len())
    };
    // Every drawn thing of the game is saved with its sprite: the player, the lantern, the coins
    // and the enemies.
    let drawn =
        ["Player", "Lantern", "Coin", "Enemy"].map(|name| rows(&format!("demo::game::{name}")));
    assert!(drawn.iter().all(|&count| count > 0), "{drawn:?}");
    assert_eq!(
        rows("bevy_sprite::sprite::Sprite"),
        drawn.iter().sum::<usize>()
    );
    assert_eq!(
        rows("bevy_ecs::hierarchy::ChildOf"),
        1,
        "the lantern follows the player"
    );
    assert!(table.entity_count() > 1000, "the crowd is saved");
}

/// The test world saved with its types' layouts (blob layout version 2), by this build: loads
/// exactly, and every column carries its layout.
#[test]
fn the_test_world_fixture_with_layouts_loads_exactly() {
    let fixture = fixture_path(THIS_BEVY, "test-world-layouts");
    let (mut app, _dir, outcome) = load_fixture(&fixture, Sprites::Saved);
    outcome.expect("the fixture loads");
    assert_eq!(seen(app.world_mut()), expected_test_world());
    let bytes = std::fs::read(&fixture).unwrap();
    let save = decode_file(&bytes, &DecodeOptions::default()).unwrap();
    let table = inspect(&save.bundle.world.ecs_blob).unwrap();
    assert_eq!(table.layout_version, 2);
    assert!(table.columns.iter().all(|column| column.layout.is_some()));
}

/// Writes this build's test-world fixture (`bevy-<version>-test-world-layouts.ksav`; the
/// `test-world` fixtures predate layouts). Run once per Bevy series and blob layout version, by
/// the build of that series:
/// `cargo test --test it -- --ignored bevy_fixtures::write_test_world_fixture`.
#[test]
#[ignore = "writes tests/golden; run by hand once per Bevy series"]
fn write_test_world_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    spawn_test_world(app.world_mut());
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    let written = run_until_outcome(&mut app).expect("the save");
    std::fs::copy(written, fixture_path(THIS_BEVY, "test-world-layouts")).unwrap();
}
