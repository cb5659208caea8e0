//! What Bevy makes, decided by Bevy (issue 50): Bevy's own plugins for 3D, world assets, 2D,
//! UI and text run headless (no window, no GPU), a game in the shape of Bevy's
//! `alien_cake_addict` saves and loads through the plugin, and nothing Bevy makes on the saved
//! entities (the components it requires, those its systems add: `Sphere`, `WorldInstance`,
//! `Aabb`, …) is reported left out or lost, while a type of the game's own still is. After the
//! load Bevy's systems give every loaded entity back what the saved one carried, which is what
//! makes leaving those types out of a save right.

use crate::common::keepsake_app::{self, Seen};
use bevy::app::TerminalCtrlCHandlerPlugin;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::ecs::component::ComponentId;
use bevy::ecs::query::QueryFilter;
use bevy::log::LogPlugin;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::settings::WgpuSettings;
use bevy::text::{FontHinting, LetterSpacing, LineHeight, TextBounds};
use bevy::ui::FocusPolicy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot, WorldInstance};
use bevy_keepsake::plugin::{KeepsakeSettings, LoadMode};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::UnsavedComponent;
use std::path::Path;
use std::time::{Duration, Instant};

/// The cake on the board: the game's own, saved.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Cake;

/// A crate whose mesh the game makes at run time and gives back after a load.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Crate;

/// The game's own, on the cake, and not registered: a load loses it.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Sparkle;

/// The crate's mesh, made once at run time.
#[derive(Resource)]
struct CrateMesh(Handle<Mesh>);

/// Loads a `.tile` file into a world asset of one named entity, as Bevy's glTF loader makes
/// one of a `.glb` scene: the board's tiles are `WorldAssetRoot`s with a handle that has a path.
#[derive(TypePath)]
struct TileLoader;

impl AssetLoader for TileLoader {
    type Asset = WorldAsset;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _: &(),
        _: &mut LoadContext<'_>,
    ) -> Result<WorldAsset, std::io::Error> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let mut world = World::new();
        world.spawn(Name::new(String::from_utf8_lossy(&bytes).into_owned()));
        Ok(WorldAsset::new(world))
    }

    fn extensions(&self) -> &[&str] {
        &["tile"]
    }
}

/// Bevy's default plugins (3D lights and meshes, world assets, sprites, UI, text) without a
/// window, a GPU, a logger or a Ctrl-C handler (one per process), assets read from
/// `dir/assets`, and the plugin saving under `dir/saves`, every saved entity spawned again at
/// each load.
fn bevy_game(dir: &Path) -> App {
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(dir.join("assets/tile.tile"), "tile").unwrap();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .build()
            .disable::<WinitPlugin>()
            .disable::<LogPlugin>()
            .disable::<TerminalCtrlCHandlerPlugin>()
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .set(RenderPlugin {
                render_creation: WgpuSettings {
                    backends: None,
                    ..default()
                }
                .into(),
                ..default()
            })
            .set(AssetPlugin {
                file_path: dir.join("assets").to_string_lossy().into_owned(),
                ..default()
            }),
    );
    let mut app = keepsake_app::with_plugin(app, &dir.join("saves"));
    app.world_mut().resource_mut::<KeepsakeSettings>().load_mode = LoadMode::Respawn;
    app.register_asset_loader(TileLoader)
        .register_saveable_bevy_types()
        .register_saveable::<Cake>()
        .register_saveable::<Crate>()
        .register_type::<Sparkle>()
        // The crate's mesh is made at run time: the game gives it back when a crate appears.
        .rebuilt_after_load::<Mesh3d>()
        .add_observer(
            |added: On<Add<Crate>>, mesh: Res<CrateMesh>, mut commands: Commands| {
                commands.entity(added.entity).insert(Mesh3d(mesh.0.clone()));
            },
        );
    register_ui_settings(&mut app);
    let mesh = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Cuboid::default());
    app.insert_resource(CrateMesh(mesh));
    app
}

/// What a game that saves its text and UI registers: the text and nodes, and every setting of
/// theirs it may change (Bevy requires each with its default; they are the game's values,
/// so a save that left them out would lose them). What Bevy computes from them is not here.
fn register_ui_settings(app: &mut App) {
    app.register_saveable::<Text>()
        .register_saveable::<Text2d>()
        .register_saveable::<TextFont>()
        .register_saveable::<TextColor>()
        .register_saveable::<TextLayout>()
        .register_saveable::<TextBounds>()
        .register_saveable::<LineHeight>()
        .register_saveable::<LetterSpacing>()
        .register_saveable::<FontHinting>()
        .register_saveable::<Node>()
        .register_saveable::<UiTransform>()
        .register_saveable::<BackgroundColor>()
        .register_saveable::<BorderColor>()
        .register_saveable::<ScrollPosition>()
        .register_saveable::<ZIndex>()
        .register_saveable::<FocusPolicy>();
}

/// `alien_cake_addict`'s world, and a little more: the camera (the game's, not saved), a
/// shadow-casting light, a sun and a spot light, tiles and a cake that are world assets (the
/// cake with a light of its own as a child), a crate with a mesh, a sprite, the scoreboard
/// text, a game-over overlay with its text, and a 2D label.
fn spawn_game(app: &mut App, sparkle: bool) {
    let tile: Handle<WorldAsset> = app.world().resource::<AssetServer>().load("tile.tile");
    let world = app.world_mut();
    world.spawn((Camera3d::default(), Transform::from_xyz(-7.0, 14.0, 10.0)));
    world.spawn((
        Saveable,
        PointLight {
            intensity: 2_000_000.0,
            shadow_maps_enabled: true,
            range: 30.0,
            ..default()
        },
        Transform::from_xyz(4.0, 10.0, 4.0),
    ));
    world.spawn((Saveable, DirectionalLight::default(), Transform::default()));
    world.spawn((
        Saveable,
        SpotLight::default(),
        Transform::from_xyz(0.0, 5.0, 0.0),
    ));
    for i in 0..3 {
        world.spawn((
            Saveable,
            Transform::from_xyz(i as f32, -0.2, 0.0),
            WorldAssetRoot(tile.clone()),
        ));
    }
    let cake = world
        .spawn((
            Saveable,
            Cake,
            Transform::from_xyz(1.0, 0.0, 1.0),
            WorldAssetRoot(tile),
            children![(
                Saveable,
                PointLight {
                    color: Color::srgb(1.0, 1.0, 0.0),
                    range: 10.0,
                    ..default()
                },
                Transform::from_xyz(0.0, 2.0, 0.0),
            )],
        ))
        .id();
    if sparkle {
        world.entity_mut(cake).insert(Sparkle);
    }
    world.spawn((Saveable, Crate, Transform::from_xyz(3.0, 0.0, 3.0)));
    world.spawn((
        Saveable,
        Sprite::from_color(Color::WHITE, Vec2::ONE),
        Transform::default(),
    ));
    world.spawn((
        Saveable,
        Text::new("Score:"),
        TextFont {
            font_size: FontSize::Px(33.0),
            ..default()
        },
        TextColor(Color::srgb(0.5, 0.5, 1.0)),
        Node {
            position_type: PositionType::Absolute,
            top: px(5),
            left: px(5),
            ..default()
        },
    ));
    world.spawn((
        Saveable,
        Node {
            width: percent(100),
            ..default()
        },
        children![(Saveable, Text::new("Cake eaten: 0"))],
    ));
    world.spawn((Saveable, Text2d::new("board"), Transform::default()));
}

/// Real time a wait on Bevy's asset loading may take. The loads run on Bevy's IO threads, which
/// the other tests running beside this one on a busy machine may hold up for long: a bound in
/// frames ran out once under load (500,000 frames of a busy main thread). The bound only ends
/// a test that would otherwise never finish.
const ASSET_WAIT: Duration = Duration::from_secs(120);

/// Runs frames until `done` holds, giving up the core for a millisecond between frames so
/// Bevy's loading threads run.
#[track_caller]
fn update_until_bevy_made(app: &mut App, what: &str, done: impl Fn(&World) -> bool) {
    let started = Instant::now();
    while !done(app.world()) {
        assert!(
            started.elapsed() < ASSET_WAIT,
            "{what} did not happen within {ASSET_WAIT:?}"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs frames until Bevy has made what it makes: every world asset spawned, the crate's
/// bounds from its mesh.
fn settle(app: &mut App) {
    update_until_bevy_made(app, "the world assets and bounds", |world| {
        count::<With<WorldInstance>>(world) == 4
            && count::<(With<Crate>, With<bevy::camera::primitives::Aabb>)>(world) == 1
    });
}

/// How many entities match `F` (none before any has one of its components).
fn count<F: QueryFilter>(world: &World) -> usize {
    (world.try_query_filtered::<(), F>()).map_or(0, |mut query| query.iter(world).count())
}

/// The component types of each saved entity (sorted), sorted: what the saved entities are
/// made of, whichever their ids.
fn saved_shapes(world: &World) -> Vec<Vec<ComponentId>> {
    let saveable = world.component_id::<Saveable>().unwrap();
    let mut shapes = Vec::new();
    for archetype in (world.archetypes().iter()).filter(|a| a.contains(saveable)) {
        let mut shape: Vec<ComponentId> = archetype.iter_components().collect();
        shape.sort_unstable();
        shapes.extend(std::iter::repeat_n(shape, archetype.len() as usize));
    }
    shapes.sort_unstable();
    shapes
}

/// The entries as (short name, entities).
fn named(components: &[UnsavedComponent]) -> Vec<(String, usize)> {
    (components.iter())
        .map(|c| (c.short_name(), c.entities))
        .collect()
}

#[test]
fn nothing_bevy_makes_on_a_3d_ui_and_text_world_is_reported_left_out_or_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = bevy_game(dir.path());
    spawn_game(&mut app, false);
    settle(&mut app);

    // The cake's scene is spawned under its saved root, beside its saved light: Bevy spawns
    // the scene again after a load, so none of it is named.
    assert_eq!(bevy_keepsake::snapshot::unsaved_children(app.world()), []);
    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    assert_eq!(
        named(&saved.unsaved_components),
        [],
        "Bevy makes these itself: none is the game's to save"
    );
    let before = saved_shapes(app.world());

    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(
        named(&loaded.missing_components),
        [],
        "the load would show an error toast naming these"
    );
    // Bevy gives each loaded entity back what it makes: the same types as before the load.
    update_until_bevy_made(&mut app, "Bevy's own components back", |world| {
        saved_shapes(world) == before
    });
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.restored.len(), 1);
}

#[test]
fn a_type_of_the_games_own_is_still_named_at_the_save_and_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = bevy_game(dir.path());
    spawn_game(&mut app, true);
    settle(&mut app);

    let saved = keepsake_app::save(&mut app, SlotId::Quick);
    assert_eq!(
        named(&saved.unsaved_components),
        [("Sparkle".to_owned(), 1)]
    );
    let loaded = keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(
        named(&loaded.missing_components),
        [("Sparkle".to_owned(), 1)]
    );
}
