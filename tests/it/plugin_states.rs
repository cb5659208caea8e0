//! `States` through saves (`register_saveable_state`), headless with `StatesPlugin`: a load or a
//! rewind into another state goes through `NextState`, so `OnExit` and `OnEnter` run and
//! `DespawnOnExit` entities go, as in play; what `OnEnter` starts afresh (a level, a countdown)
//! is then replaced by the save's; saved entities scoped to a state come back scoped to it; a
//! load into the state the game is in runs no transition, unless an `OnEnter` system of the
//! state reads a resource the load changes (then it enters it again).

use crate::common::keepsake_app;
use bevy::prelude::*;
use bevy::state::app::StatesPlugin;
use bevy_keepsake::prelude::*;

#[derive(States, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum GameState {
    #[default]
    Menu,
    Playing,
}

/// The menu's buttons: spawned on entering the menu, gone on leaving it; never saved.
#[derive(Component)]
struct MenuButton;

/// The in-game HUD, built on entering play from nothing saved.
#[derive(Component)]
struct Hud;

/// A saved piece of the game, scoped to play; entering play lays out a fresh level of them.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Piece(u32);

/// Saved; entering play starts it afresh at 5.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource)]
struct Countdown(u32);

/// Every state entered and exited, in order.
#[derive(Resource, Default)]
struct Transitions(Vec<String>);

fn app(root: &std::path::Path) -> App {
    let mut app = keepsake_app::app(root);
    app.add_plugins(StatesPlugin)
        .init_state::<GameState>()
        .register_saveable_state::<GameState>()
        .register_saveable::<Piece>()
        .register_saveable::<Countdown>()
        .insert_resource(Countdown(5))
        .init_resource::<Transitions>()
        .add_systems(OnEnter(GameState::Menu), |mut commands: Commands| {
            for _ in 0..2 {
                commands.spawn((MenuButton, DespawnOnExit(GameState::Menu)));
            }
        })
        .add_systems(OnEnter(GameState::Playing), |mut commands: Commands| {
            commands.spawn((Hud, DespawnOnExit(GameState::Playing)));
            // A new game: a fresh level and countdown.
            for n in 0..3 {
                commands.spawn((Saveable, Piece(n), DespawnOnExit(GameState::Playing)));
            }
            commands.insert_resource(Countdown(5));
        });
    for state in [GameState::Menu, GameState::Playing] {
        app.add_systems(OnEnter(state), move |mut log: ResMut<Transitions>| {
            log.0.push(format!("enter {state:?}"))
        })
        .add_systems(OnExit(state), move |mut log: ResMut<Transitions>| {
            log.0.push(format!("exit {state:?}"))
        });
    }
    app.update();
    app
}

fn go_to(app: &mut App, state: GameState) {
    app.world_mut()
        .resource_mut::<NextState<GameState>>()
        .set(state);
    app.update();
}

fn state(app: &App) -> GameState {
    *app.world().resource::<State<GameState>>().get()
}

fn log(app: &mut App) -> Vec<String> {
    std::mem::take(&mut app.world_mut().resource_mut::<Transitions>().0)
}

/// Starts play and plays a little: one of the three pieces is taken, the countdown runs to 2.
fn start_playing(app: &mut App) {
    go_to(app, GameState::Playing);
    let world = app.world_mut();
    let taken = (world.query::<(Entity, &Piece)>().iter(world))
        .find(|(_, piece)| piece.0 == 0)
        .map(|(entity, _)| entity)
        .unwrap();
    world.despawn(taken);
    world.resource_mut::<Countdown>().0 = 2;
    app.update();
}

fn countdown(app: &App) -> u32 {
    app.world().resource::<Countdown>().0
}

#[test]
fn a_load_into_another_state_runs_its_transitions_and_despawns_the_menu() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    start_playing(&mut app);
    keepsake_app::save(&mut app, SlotId::Quick);

    go_to(&mut app, GameState::Menu);
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 0);
    assert_eq!(keepsake_app::count::<With<MenuButton>>(&mut app), 2);
    log(&mut app);

    keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(state(&app), GameState::Playing);
    assert_eq!(log(&mut app), ["exit Menu", "enter Playing"]);
    assert_eq!(
        keepsake_app::count::<With<MenuButton>>(&mut app),
        0,
        "the menu's DespawnOnExit ran"
    );
    assert_eq!(keepsake_app::count::<With<Hud>>(&mut app), 1, "OnEnter ran");
    assert_eq!(
        *app.world().resource::<PreviousState<GameState>>().get(),
        GameState::Menu
    );
    // OnEnter laid out a fresh level and countdown; the save's replaced them.
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 2);
    assert_eq!(countdown(&app), 2);

    // The loaded pieces came back scoped to play: leaving it despawns them.
    assert_eq!(
        keepsake_app::count::<(With<Piece>, With<DespawnOnExit<GameState>>)>(&mut app),
        2
    );
    go_to(&mut app, GameState::Menu);
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 0);
    assert_eq!(keepsake_app::count::<With<Hud>>(&mut app), 0);
}

/// The countdown as the HUD showed it when it was built.
#[derive(Component, Debug, PartialEq)]
struct HudCountdown(u32);

#[test]
fn a_load_into_the_state_the_game_is_in_enters_it_again_when_its_on_enter_reads_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    // The HUD shows the countdown, read once on entering play.
    app.add_systems(
        OnEnter(GameState::Playing),
        |countdown: Res<Countdown>, mut commands: Commands| {
            commands.spawn((HudCountdown(countdown.0), DespawnOnExit(GameState::Playing)));
        },
    );
    start_playing(&mut app);
    keepsake_app::save(&mut app, SlotId::Quick);
    log(&mut app);

    app.world_mut().resource_mut::<Countdown>().0 = 1;
    keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(state(&app), GameState::Playing);
    assert_eq!(log(&mut app), ["exit Playing", "enter Playing"]);
    let world = app.world_mut();
    let shown: Vec<_> = world.query::<&HudCountdown>().iter(world).collect();
    assert_eq!(
        shown,
        [&HudCountdown(2)],
        "built again, from the saved countdown"
    );
    assert_eq!(keepsake_app::count::<With<Hud>>(&mut app), 1);
    // OnExit took the saved pieces scoped to play and OnEnter laid out a fresh level; the
    // save's pieces are back, still scoped to play.
    assert_eq!(
        keepsake_app::count::<(With<Piece>, With<DespawnOnExit<GameState>>)>(&mut app),
        2
    );
    assert_eq!(countdown(&app), 2);
}

/// The game's `OnEnter(Playing)` reads no resource the load changes (it writes the countdown
/// through a command): nothing to build again.
#[test]
fn a_load_into_the_state_the_game_is_in_runs_no_transition() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    start_playing(&mut app);
    keepsake_app::save(&mut app, SlotId::Quick);
    log(&mut app);

    app.world_mut().resource_mut::<Countdown>().0 = 1;
    keepsake_app::load(&mut app, SlotId::Quick);
    assert_eq!(state(&app), GameState::Playing);
    assert!(log(&mut app).is_empty());
    assert_eq!(keepsake_app::count::<With<Hud>>(&mut app), 1);
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 2);
    assert_eq!(countdown(&app), 2);
}

#[test]
fn a_rewind_goes_back_through_the_transitions_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    start_playing(&mut app);
    keepsake_app::rewind_point(&mut app);
    go_to(&mut app, GameState::Menu);
    log(&mut app);

    keepsake_app::rewind(&mut app);
    assert_eq!(state(&app), GameState::Playing);
    assert_eq!(log(&mut app), ["exit Menu", "enter Playing"]);
    assert_eq!(keepsake_app::count::<With<MenuButton>>(&mut app), 0);
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 2);
    assert_eq!(countdown(&app), 2);
}

#[test]
fn a_state_saved_in_the_menu_brings_the_menu_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    keepsake_app::save(&mut app, SlotId::Manual(0));
    start_playing(&mut app);
    log(&mut app);

    keepsake_app::load(&mut app, SlotId::Manual(0));
    assert_eq!(state(&app), GameState::Menu);
    assert_eq!(log(&mut app), ["exit Playing", "enter Menu"]);
    assert_eq!(keepsake_app::count::<With<Hud>>(&mut app), 0);
    assert_eq!(keepsake_app::count::<With<Piece>>(&mut app), 0);
    assert_eq!(keepsake_app::count::<With<MenuButton>>(&mut app), 2);
    assert_eq!(
        countdown(&app),
        5,
        "the menu's save holds the countdown as it was then"
    );
}
