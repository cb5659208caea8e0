//! Screens built by `OnEnter` systems from saved resources, after a load (issue 50 item 1), in
//! the shape of Bevy 0.20.1's `examples/showcase/game_menu.rs` made saveable: `GameState`
//! (menu or game) and an independent `MenuState` that `OnEnter(GameState::Menu)` sets to the
//! main screen, settings resources the settings screens show checked, and a game screen whose
//! `OnEnter` shows the settings and starts its timer afresh. Each shape loads in place and by
//! respawning, with no observer of the game's:
//!
//! - a settings screen loaded while on it (the same states): built again from the saved value;
//! - a load from the game screen back to the saved settings screen: the menu's `OnEnter` asks
//!   for the main screen, and the saved screen stands, built from the saved values;
//! - a load from the menu into the game: its `OnEnter` reads the saved settings and resets the
//!   timer and the enemies, and the saved ones win;
//! - the menu's screen as a Bevy `SubStates` of the menu, which the menu's `OnEnter` opens;
//! - a rewind back to the settings screen.

use crate::common::keepsake_app;
use bevy::prelude::*;
use bevy::state::app::StatesPlugin;
use bevy_keepsake::plugin::{KeepsakeSettings, LoadMode};
use bevy_keepsake::prelude::*;

#[derive(States, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum GameState {
    #[default]
    Menu,
    Game,
}

/// The menu's screen: set by `OnEnter(GameState::Menu)` to `Main`, as in `game_menu`.
#[derive(States, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum MenuState {
    Main,
    SettingsDisplay,
    #[default]
    Disabled,
}

#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource)]
enum DisplayQuality {
    Low,
    Medium,
    High,
}

#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource)]
struct Volume(u32);

/// Saved; `OnEnter(GameState::Game)` starts it afresh at 50 (tenths of a second).
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource)]
struct GameTimer(u32);

/// A radio button of a settings screen (unsaved UI, built on entering the screen).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Setting<T>(T);

/// The radio button checked.
#[derive(Component)]
struct Checked;

/// A screen's root, by its state (unsaved UI).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Screen(&'static str);

/// The game screen's text: the settings `OnEnter(GameState::Game)` read.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct ShownSettings(DisplayQuality, Volume);

/// A saved entity of the game, scoped to it; `OnEnter(GameState::Game)` spawns three afresh.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Enemy(u32);

/// What the game showed when `WorldRestored` came, once per restore.
#[derive(Resource, Default)]
struct AtRestored(Vec<Shown>);

fn app(root: &std::path::Path, mode: LoadMode) -> App {
    let mut app = keepsake_app::app(root);
    app.add_plugins(StatesPlugin)
        .init_state::<GameState>()
        .init_state::<MenuState>()
        .register_saveable_state::<GameState>()
        .register_saveable_state::<MenuState>()
        .register_saveable::<DisplayQuality>()
        .register_saveable::<Volume>()
        .register_saveable::<GameTimer>()
        .register_saveable::<Enemy>()
        .insert_resource(DisplayQuality::Medium)
        .insert_resource(Volume(7))
        .insert_resource(GameTimer(50))
        .init_resource::<AtRestored>()
        .add_systems(OnEnter(GameState::Menu), menu_setup)
        .add_systems(OnEnter(MenuState::Main), |mut commands: Commands| {
            commands.spawn((Screen("main"), DespawnOnExit(MenuState::Main)));
        })
        .add_systems(OnEnter(MenuState::SettingsDisplay), display_settings_setup)
        .add_systems(OnEnter(GameState::Game), game_setup)
        .add_observer(note_at_restored);
    app.world_mut().resource_mut::<KeepsakeSettings>().load_mode = mode;
    app.update();
    app.update();
    app
}

/// As `game_menu`'s `menu_setup`: entering the menu opens its main screen.
fn menu_setup(mut menu_state: ResMut<NextState<MenuState>>) {
    menu_state.set(MenuState::Main);
}

/// As `game_menu`'s `display_settings_menu_setup`: one button per quality, the current one
/// checked, read from the resource once.
fn display_settings_setup(mut commands: Commands, quality: Res<DisplayQuality>) {
    let screen = (Screen("display"), DespawnOnExit(MenuState::SettingsDisplay));
    let root = commands.spawn(screen).id();
    for option in [
        DisplayQuality::Low,
        DisplayQuality::Medium,
        DisplayQuality::High,
    ] {
        let mut button = commands.spawn((Setting(option), ChildOf(root)));
        if option == *quality {
            button.insert(Checked);
        }
    }
}

/// As `game_menu`'s `game_setup`: shows the settings, starts the timer afresh; and a fresh
/// level of three enemies.
fn game_setup(
    mut commands: Commands,
    quality: Res<DisplayQuality>,
    volume: Res<Volume>,
    mut timer: ResMut<GameTimer>,
) {
    commands.spawn((
        Screen("game"),
        ShownSettings(*quality, *volume),
        DespawnOnExit(GameState::Game),
    ));
    *timer = GameTimer(50);
    for n in 0..3 {
        commands.spawn((Saveable, Enemy(n), DespawnOnExit(GameState::Game)));
    }
}

/// What the player sees and what the game holds, in one value to compare.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    states: (GameState, MenuState),
    screens: Vec<&'static str>,
    quality: DisplayQuality,
    quality_checked: Vec<DisplayQuality>,
    game_text: Vec<ShownSettings>,
    timer: u32,
    enemies: Vec<u32>,
}

fn shown(world: &mut World) -> Shown {
    let states = (
        *world.resource::<State<GameState>>().get(),
        *world.resource::<State<MenuState>>().get(),
    );
    let mut screens: Vec<_> = (world.query::<&Screen>().iter(world))
        .map(|s| s.0)
        .collect();
    screens.sort();
    let mut checked = world.query_filtered::<&Setting<DisplayQuality>, With<Checked>>();
    let quality_checked = checked.iter(world).map(|s| s.0).collect();
    let game_text = world
        .query::<&ShownSettings>()
        .iter(world)
        .copied()
        .collect();
    let mut enemies: Vec<u32> = world.query::<&Enemy>().iter(world).map(|e| e.0).collect();
    enemies.sort();
    Shown {
        states,
        screens,
        quality: *world.resource::<DisplayQuality>(),
        quality_checked,
        game_text,
        timer: world.resource::<GameTimer>().0,
        enemies,
    }
}

fn note_at_restored(_: On<WorldRestored>, mut commands: Commands) {
    // Read once the observers' commands are applied, as a game's observer would see the world.
    commands.queue(|world: &mut World| {
        let now = shown(world);
        world.resource_mut::<AtRestored>().0.push(now);
    });
}

/// Goes to `game`, then to the menu's screen `menu`, as the player does (entering the menu
/// opens its main screen first).
fn go_to(app: &mut App, game: GameState, menu: MenuState) {
    let world = app.world_mut();
    world
        .resource_mut::<NextState<GameState>>()
        .set_if_different(game);
    app.update();
    let world = app.world_mut();
    world
        .resource_mut::<NextState<MenuState>>()
        .set_if_different(menu);
    app.update();
}

/// As `game_menu`'s radio buttons: the resource changes and the button clicked is checked.
fn pick(app: &mut App, quality: DisplayQuality) {
    let world = app.world_mut();
    *world.resource_mut::<DisplayQuality>() = quality;
    let buttons: Vec<(Entity, DisplayQuality)> = (world
        .query::<(Entity, &Setting<DisplayQuality>)>())
    .iter(world)
    .map(|(entity, setting)| (entity, setting.0))
    .collect();
    for (button, option) in buttons {
        match option == quality {
            true => world.entity_mut(button).insert(Checked),
            false => world.entity_mut(button).remove::<Checked>(),
        };
    }
    app.update();
}

/// [`load_and_run`], checking `WorldRestored` came once, showing what is shown now.
fn load_and_settle(app: &mut App, slot: SlotId) -> Shown {
    load_and_run(app, slot);
    let now = shown(app.world_mut());
    let at_restored = std::mem::take(&mut app.world_mut().resource_mut::<AtRestored>().0);
    assert_eq!(
        at_restored,
        std::slice::from_ref(&now),
        "one WorldRestored, once all had settled"
    );
    now
}

/// Loads `slot` and runs a few more frames: a state the game's `OnEnter` asked for would be
/// entered in them.
fn load_and_run(app: &mut App, slot: SlotId) {
    keepsake_app::load(app, slot);
    run_frames(app);
}

fn run_frames(app: &mut App) {
    for _ in 0..3 {
        app.update();
    }
}

const MODES: [LoadMode; 2] = [LoadMode::InPlace, LoadMode::Respawn];

#[test]
fn a_settings_screen_loaded_while_on_it_is_built_again_from_the_saved_value() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), mode);
        go_to(&mut app, GameState::Menu, MenuState::SettingsDisplay);
        pick(&mut app, DisplayQuality::High);
        keepsake_app::save(&mut app, SlotId::Quick);
        let saved = shown(app.world_mut());
        assert_eq!(saved.quality_checked, [DisplayQuality::High]);

        pick(&mut app, DisplayQuality::Low);
        assert_eq!(
            shown(app.world_mut()).quality_checked,
            [DisplayQuality::Low]
        );
        let loaded = load_and_settle(&mut app, SlotId::Quick);
        assert_eq!(loaded, saved, "{mode:?}");
    }
}

#[test]
fn a_load_from_the_game_lands_on_the_saved_settings_screen_not_the_menus_first() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), mode);
        go_to(&mut app, GameState::Menu, MenuState::SettingsDisplay);
        pick(&mut app, DisplayQuality::High);
        keepsake_app::save(&mut app, SlotId::Quick);
        let saved = shown(app.world_mut());
        assert_eq!(saved.screens, ["display"]);

        pick(&mut app, DisplayQuality::Low);
        go_to(&mut app, GameState::Game, MenuState::Disabled);
        assert_eq!(shown(app.world_mut()).screens, ["game"]);
        let loaded = load_and_settle(&mut app, SlotId::Quick);
        assert_eq!(loaded, saved, "{mode:?}");
    }
}

#[test]
fn a_load_into_the_game_shows_the_saved_settings_and_keeps_the_saved_timer_and_enemies() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), mode);
        go_to(&mut app, GameState::Menu, MenuState::SettingsDisplay);
        pick(&mut app, DisplayQuality::High);
        go_to(&mut app, GameState::Game, MenuState::Disabled);
        // Play a little: an enemy beaten, the timer run down.
        let world = app.world_mut();
        let beaten = (world.query::<(Entity, &Enemy)>().iter(world))
            .find(|(_, enemy)| enemy.0 == 1)
            .map(|(entity, _)| entity)
            .unwrap();
        world.despawn(beaten);
        world.resource_mut::<GameTimer>().0 = 20;
        app.update();
        keepsake_app::save(&mut app, SlotId::Quick);
        let saved = shown(app.world_mut());
        assert_eq!(
            saved.game_text,
            [ShownSettings(DisplayQuality::High, Volume(7))]
        );
        assert_eq!((saved.timer, saved.enemies.as_slice()), (20, &[0, 2][..]));

        go_to(&mut app, GameState::Menu, MenuState::SettingsDisplay);
        pick(&mut app, DisplayQuality::Low);
        let loaded = load_and_settle(&mut app, SlotId::Quick);
        assert_eq!(loaded, saved, "{mode:?}");
        // The saved enemies came back scoped to the game: leaving it takes them.
        go_to(&mut app, GameState::Menu, MenuState::Main);
        assert_eq!(shown(app.world_mut()).enemies, [] as [u32; 0], "{mode:?}");
    }
}

#[test]
fn a_rewind_back_to_the_settings_screen_shows_the_values_of_then() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app(dir.path(), mode);
        go_to(&mut app, GameState::Menu, MenuState::SettingsDisplay);
        pick(&mut app, DisplayQuality::High);
        keepsake_app::rewind_point(&mut app);
        let then = shown(app.world_mut());

        pick(&mut app, DisplayQuality::Low);
        go_to(&mut app, GameState::Game, MenuState::Disabled);
        keepsake_app::rewind(&mut app);
        run_frames(&mut app);
        assert_eq!(shown(app.world_mut()), then, "{mode:?}");
    }
}

/// The menu's screen as a Bevy sub-state of the menu, which the menu's `OnEnter` opens.
#[derive(SubStates, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[source(GameState = GameState::Menu)]
enum MenuScreen {
    #[default]
    Main,
    Display,
}

fn sub_state_app(root: &std::path::Path, mode: LoadMode) -> App {
    let mut app = keepsake_app::app(root);
    app.add_plugins(StatesPlugin)
        .init_state::<GameState>()
        .add_sub_state::<MenuScreen>()
        .register_saveable_state::<GameState>()
        .register_saveable_state::<MenuScreen>()
        .register_saveable::<DisplayQuality>()
        .insert_resource(DisplayQuality::Medium)
        .add_systems(
            OnEnter(GameState::Menu),
            |mut screen: ResMut<NextState<MenuScreen>>| screen.set(MenuScreen::Main),
        )
        .add_systems(OnEnter(MenuScreen::Main), |mut commands: Commands| {
            commands.spawn((Screen("main"), DespawnOnExit(MenuScreen::Main)));
        })
        .add_systems(
            OnEnter(MenuScreen::Display),
            |mut commands: Commands, quality: Res<DisplayQuality>| {
                let screen = (Screen("display"), DespawnOnExit(MenuScreen::Display));
                commands.spawn((screen, Setting(*quality), Checked));
            },
        );
    app.world_mut().resource_mut::<KeepsakeSettings>().load_mode = mode;
    app.update();
    app
}

/// The screen shown, its checked quality, and the states.
fn sub_state_shown(
    app: &mut App,
) -> (
    GameState,
    Option<MenuScreen>,
    Vec<&'static str>,
    Vec<DisplayQuality>,
) {
    let world = app.world_mut();
    let game = *world.resource::<State<GameState>>().get();
    let screen = world.get_resource::<State<MenuScreen>>().map(|s| *s.get());
    let screens = world.query::<&Screen>().iter(world).map(|s| s.0).collect();
    let mut checked = world.query_filtered::<&Setting<DisplayQuality>, With<Checked>>();
    let checked = checked.iter(world).map(|s| s.0).collect();
    (game, screen, screens, checked)
}

#[test]
fn a_load_from_the_game_lands_on_the_saved_sub_state_the_menus_on_enter_would_replace() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = sub_state_app(dir.path(), mode);
        *app.world_mut().resource_mut::<DisplayQuality>() = DisplayQuality::High;
        let world = app.world_mut();
        world
            .resource_mut::<NextState<MenuScreen>>()
            .set(MenuScreen::Display);
        app.update();
        keepsake_app::save(&mut app, SlotId::Quick);
        let saved = sub_state_shown(&mut app);
        assert_eq!(saved.1, Some(MenuScreen::Display));
        assert_eq!(saved.3, [DisplayQuality::High]);

        *app.world_mut().resource_mut::<DisplayQuality>() = DisplayQuality::Low;
        let world = app.world_mut();
        world
            .resource_mut::<NextState<GameState>>()
            .set(GameState::Game);
        app.update();
        assert_eq!(
            sub_state_shown(&mut app).1,
            None,
            "no menu screen in the game"
        );
        load_and_run(&mut app, SlotId::Quick);
        assert_eq!(sub_state_shown(&mut app), saved, "{mode:?}");
    }
}
