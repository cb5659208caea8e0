//! The arena game itself. Everything a save must bring back is a registered component or
//! resource, `Sprite` included, so every saved entity's look is saved with it:
//!
//! - coins are spawned with a `Sprite` whose image is loaded from `assets/sprites/`; the save
//!   stores the image by its path and a load gets it back through the `AssetServer`;
//! - the player, its lantern and the enemies are spawned without one: `dress_*` observers give
//!   them a plain coloured sprite when they appear (`insert_if_new`, so a sprite that came with
//!   the entity, as from a load, is kept). The observers, `dress_coin` included, also dress
//!   entities from saves made before the game registered `Sprite`.
//!
//! The camera and the level (the arena's root and its floor) never change and are not saved.
//! Coins live under the arena's root, which has a `LevelKey`: a save writes their `ChildOf` by
//! that key, and a load puts them back under the live root (F5 / F9, or a new session).
//!
//! The plugin keeps a rewind point every tenth of a second (the last 15 seconds, in memory).
//! Holding R runs time backwards: a point a frame, each restored in place in the frame after
//! it is asked for (only what changed since the point is written), while the game stands
//! still.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use bevy_keepsake::plugin::{
    AutosaveTimer, Playtime, RewindCompleted, RewindFailed, RewindRing, RewindTo,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::LevelKey;

/// Whether R is held (time runs backwards, and the game's own systems stand still), and
/// whether a step asked for has not landed yet.
#[derive(Resource, Default)]
pub struct RewindHeld {
    pub held: bool,
    waiting: bool,
}

/// Run condition of the game's systems: not while time runs backwards.
pub fn not_rewinding(held: Res<RewindHeld>) -> bool {
    !held.held
}

/// A step landed (or failed): the next may be asked for.
fn step_landed(_: On<RewindCompleted>, mut held: ResMut<RewindHeld>) {
    held.waiting = false;
}

fn step_failed(_: On<RewindFailed>, mut held: ResMut<RewindHeld>) {
    held.waiting = false;
}

/// Half the arena's size; the player stays inside.
pub const ARENA: Vec2 = Vec2::new(600.0, 320.0);
const PLAYER_SIZE: f32 = 28.0;
const COIN_SIZE: f32 = 14.0;
const ENEMY_SIZE: f32 = 24.0;

// ---------------------------------------------------------------------------------------------
// What is saved
// ---------------------------------------------------------------------------------------------

/// The player: moves with WASD or the arrow keys.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
pub struct Player {
    /// Pixels per second.
    pub speed: f32,
}

/// The lantern the player carries: a child entity (`ChildOf` the player), so it moves with it.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
pub struct Lantern {
    /// Bigger as the level rises.
    pub glow: f32,
}

/// A gold coin or a gem. Its `Sprite` (image by path) is saved with it.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
pub struct Coin {
    /// Which it is (schema version 2; version 1 saved its points, see [`CoinV1`]).
    pub kind: CoinKind,
}

/// What a coin is.
#[derive(Reflect, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoinKind {
    /// 10 points.
    Gold,
    /// 25 points.
    Gem,
}

impl CoinKind {
    /// The points it gives.
    pub fn points(self) -> u32 {
        match self {
            CoinKind::Gold => 10,
            CoinKind::Gem => 25,
        }
    }
}

/// `Coin` as the demo's first release saved it (schema version 1): its points, from which the
/// kind follows. Kept to read those saves (`examples/demo/kept-saves/`).
#[derive(Reflect)]
pub struct CoinV1 {
    /// 10 for gold, 25 for a gem.
    pub value: u32,
}

impl From<CoinV1> for Coin {
    fn from(old: CoinV1) -> Self {
        let kind = match old.value {
            25.. => CoinKind::Gem,
            _ => CoinKind::Gold,
        };
        Coin { kind }
    }
}

/// An enemy that chases an entity: an `Entity` reference the save must remap.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
pub struct Enemy {
    /// Pixels per second.
    pub speed: f32,
    /// Who it chases (the player, or the lantern for bats).
    #[entities]
    pub target: Entity,
}

/// Points: coins add, enemy hits take away.
#[derive(Resource, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Resource)]
pub struct Score(pub u32);

/// What the player has picked up.
#[derive(Resource, Reflect, Clone, Debug, Default, PartialEq)]
#[reflect(Resource)]
pub struct Inventory {
    /// Gold coins collected.
    pub gold: u32,
    /// Gems collected.
    pub gems: u32,
}

/// The current level; collecting every coin starts the next one.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource)]
pub struct Level(pub u32);

impl Default for Level {
    fn default() -> Self {
        Level(1)
    }
}

/// The arena's random numbers. Saved, so a loaded game lays out the next level exactly as the
/// saved one would have.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource)]
pub struct ArenaRng(pub u64);

impl Default for ArenaRng {
    fn default() -> Self {
        ArenaRng(0x5eed_cafe_f00d)
    }
}

impl ArenaRng {
    /// A number in `0.0..1.0` (xorshift64*: small, fast, reproducible).
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        bits as f32 / (1u64 << 24) as f32
    }

    fn point_in_arena(&mut self) -> Vec2 {
        let margin = 40.0;
        Vec2::new(
            (self.next() * 2.0 - 1.0) * (ARENA.x - margin),
            (self.next() * 2.0 - 1.0) * (ARENA.y - margin),
        )
    }
}

/// The arena's root: level geometry the game spawns at startup, never saved. Its `LevelKey`
/// lets saved coins stay its children across a load.
#[derive(Component)]
pub struct ArenaRoot;

/// The root's key.
pub const ARENA_KEY: &str = "arena";

// ---------------------------------------------------------------------------------------------
// The plugin
// ---------------------------------------------------------------------------------------------

/// The game's systems, in the order they run each frame.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArenaSystems;

/// Registers what is saved, spawns level 1 and runs the game.
pub struct ArenaPlugin;

/// What the game saves. Also used by `--dump`, which reads saves with these types and nothing
/// else of the game.
pub fn register_saved_types(app: &mut App) {
    // Transform, Sprite and what else Bevy's own components hold of the game (Visibility,
    // Anchor, Name).
    app.register_saveable_bevy_types()
        .register_saveable::<Player>()
        .register_saveable::<Lantern>()
        .register_saveable::<Coin>()
        .register_saveable_migration::<CoinV1, Coin>(1)
        .register_saveable::<Enemy>()
        .register_saveable::<Score>()
        .register_saveable::<Inventory>()
        .register_saveable::<Level>()
        .register_saveable::<ArenaRng>();
    super::crowd::register_saved_types(app);
}

/// The last save: what it cost the main thread, for the HUD.
#[derive(Resource, Default)]
struct LastSave(Option<(std::time::Duration, usize)>);

fn remember_save(saved: On<SaveCompleted>, mut last: ResMut<LastSave>) {
    info!(
        "saved {} entities to {}: {:.2} ms on the main thread",
        saved.entities,
        saved.slot,
        saved.capture_time.as_secs_f64() * 1e3
    );
    last.0 = Some((saved.capture_time, saved.entities));
}

impl Plugin for ArenaPlugin {
    fn build(&self, app: &mut App) {
        register_saved_types(app);
        app.init_resource::<Score>()
            .init_resource::<Inventory>()
            .init_resource::<Level>()
            .init_resource::<ArenaRng>()
            .init_resource::<LastSave>()
            .init_resource::<RewindHeld>()
            .add_observer(remember_save)
            .add_observer(step_landed)
            .add_observer(step_failed)
            .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.11)))
            // Sprites for what is spawned without one (a load brings the saved sprite).
            .add_observer(dress_player)
            .add_observer(dress_lantern)
            .add_observer(dress_coin)
            .add_observer(dress_enemy)
            .add_systems(Startup, (spawn_scenery, start_new_game).chain())
            .add_systems(
                Update,
                (
                    rewind_key,
                    (move_player, chase, collect_coins, enemy_hits, next_level)
                        .chain()
                        .run_if(not_rewinding),
                    light_lanterns,
                    show_titles,
                )
                    .chain()
                    .in_set(ArenaSystems),
            )
            .add_systems(EguiPrimaryContextPass, (hud, rewind_hud));
    }
}

fn spawn_scenery(mut commands: Commands) {
    commands.spawn(Camera2d);
    let root = commands
        .spawn((
            ArenaRoot,
            LevelKey::new(ARENA_KEY),
            Name::new("Arena"),
            Transform::default(),
            Visibility::default(),
        ))
        .id();
    commands.spawn((
        Sprite::from_color(Color::srgb(0.13, 0.15, 0.2), ARENA * 2.0),
        Transform::from_xyz(0.0, 0.0, -10.0),
        ChildOf(root),
    ));
}

/// Level 1: the player with its lantern, coins and two enemies. A game is now in progress, so
/// quitting saves it (a title screen would leave this off, so as not to push a real autosave out
/// of the ring with an empty world).
fn start_new_game(
    mut commands: Commands,
    arena: Single<Entity, With<ArenaRoot>>,
    mut rng: ResMut<ArenaRng>,
    assets: Res<AssetServer>,
    mut save_on_exit: ResMut<SaveOnExit>,
) {
    *save_on_exit = SaveOnExit::AUTOSAVE;
    let player = commands
        .spawn((
            Saveable,
            Player { speed: 260.0 },
            Transform::from_xyz(0.0, 0.0, 2.0),
        ))
        .id();
    let lantern = commands
        .spawn((
            Saveable,
            Lantern { glow: 1.0 },
            Transform::from_xyz(16.0, 14.0, 1.0),
            ChildOf(player),
        ))
        .id();
    spawn_coins(&mut commands, *arena, &mut rng, &assets, 1);
    spawn_enemy(&mut commands, &mut rng, 90.0, player);
    spawn_enemy(&mut commands, &mut rng, 120.0, lantern);
}

/// The level's coins, under the arena's root (at the origin, so their transforms are the
/// world's).
fn spawn_coins(
    commands: &mut Commands,
    arena: Entity,
    rng: &mut ArenaRng,
    assets: &AssetServer,
    level: u32,
) {
    for n in 0..(4 + 2 * level) {
        let kind = if n % 4 == 3 {
            CoinKind::Gem
        } else {
            CoinKind::Gold
        };
        let at = rng.point_in_arena();
        commands.spawn((
            Saveable,
            Coin { kind },
            coin_sprite(assets, kind),
            Transform::from_xyz(at.x, at.y, 0.0),
            ChildOf(arena),
        ));
    }
}

fn spawn_enemy(commands: &mut Commands, rng: &mut ArenaRng, speed: f32, target: Entity) {
    let at = rng.point_in_arena();
    commands.spawn((
        Saveable,
        Enemy { speed, target },
        Transform::from_xyz(at.x, at.y, 1.5),
    ));
}

fn dress_player(add: On<Add<Player>>, mut commands: Commands) {
    let sprite = Sprite::from_color(Color::srgb(0.35, 0.75, 1.0), Vec2::splat(PLAYER_SIZE));
    commands.entity(add.entity).insert_if_new(sprite);
}

fn dress_lantern(add: On<Add<Lantern>>, lanterns: Query<&Lantern>, mut commands: Commands) {
    let glow = lanterns.get(add.entity).map_or(1.0, |lantern| lantern.glow);
    let sprite = Sprite::from_color(Color::srgb(1.0, 0.9, 0.45), lantern_size(glow));
    commands.entity(add.entity).insert_if_new(sprite);
}

fn lantern_size(glow: f32) -> Vec2 {
    Vec2::splat(8.0 + 2.0 * glow)
}

/// A brighter lantern is drawn bigger.
fn light_lanterns(mut lanterns: Query<(&Lantern, &mut Sprite), Changed<Lantern>>) {
    for (lantern, mut sprite) in &mut lanterns {
        sprite.custom_size = Some(lantern_size(lantern.glow));
    }
}

/// Only for coins from saves made before the game saved sprites: new coins come with theirs.
fn dress_coin(
    add: On<Add<Coin>>,
    coins: Query<&Coin>,
    assets: Res<AssetServer>,
    mut commands: Commands,
) {
    let kind = coins
        .get(add.entity)
        .map_or(CoinKind::Gold, |coin| coin.kind);
    let sprite = coin_sprite(&assets, kind);
    commands.entity(add.entity).insert_if_new(sprite);
}

fn coin_sprite(assets: &AssetServer, kind: CoinKind) -> Sprite {
    let image = match kind {
        CoinKind::Gem => "sprites/gem.png",
        CoinKind::Gold => "sprites/coin.png",
    };
    Sprite {
        image: assets.load(image),
        custom_size: Some(Vec2::splat(COIN_SIZE)),
        ..default()
    }
}

fn dress_enemy(add: On<Add<Enemy>>, mut commands: Commands) {
    let sprite = Sprite::from_color(Color::srgb(0.95, 0.3, 0.3), Vec2::splat(ENEMY_SIZE));
    commands.entity(add.entity).insert_if_new(sprite);
}

/// Holding R runs time backwards: the first frame back to the newest rewind point, each frame
/// after to the point before the one just restored. Each step lands in the next frame (the
/// plugin restores a recent point in the frame it is asked for); one that takes longer (a
/// point far back, put together on the task pool) is waited for before the next.
fn rewind_key(
    keys: Res<ButtonInput<KeyCode>>,
    menu: Res<SaveMenu>,
    mut held: ResMut<RewindHeld>,
    mut commands: Commands,
) {
    held.held = !menu.is_open() && keys.pressed(KeyCode::KeyR);
    if !held.held || held.waiting {
        return;
    }
    let back = if keys.just_pressed(KeyCode::KeyR) {
        1
    } else {
        2
    };
    commands.rewind_to(RewindTo::Back(back));
    held.waiting = true;
}

fn move_player(
    keys: Res<ButtonInput<KeyCode>>,
    menu: Res<SaveMenu>,
    time: Res<Time>,
    mut players: Query<(&Player, &mut Transform)>,
) {
    if menu.is_open() {
        return; // the arrow keys belong to the menu
    }
    let axis = |minus: [KeyCode; 2], plus: [KeyCode; 2]| {
        f32::from(u8::from(keys.any_pressed(plus))) - f32::from(u8::from(keys.any_pressed(minus)))
    };
    let direction = Vec2::new(
        axis(
            [KeyCode::KeyA, KeyCode::ArrowLeft],
            [KeyCode::KeyD, KeyCode::ArrowRight],
        ),
        axis(
            [KeyCode::KeyS, KeyCode::ArrowDown],
            [KeyCode::KeyW, KeyCode::ArrowUp],
        ),
    )
    .normalize_or_zero();
    for (player, mut transform) in &mut players {
        let moved = transform.translation.truncate() + direction * player.speed * time.delta_secs();
        let limit = ARENA - Vec2::splat(PLAYER_SIZE / 2.0);
        let clamped = moved.clamp(-limit, limit);
        transform.translation = clamped.extend(transform.translation.z);
    }
}

fn chase(
    time: Res<Time>,
    targets: Query<(&GlobalTransform, Ref<Transform>), Without<Enemy>>,
    mut enemies: Query<(&Enemy, &mut Transform)>,
) {
    for (enemy, mut transform) in &mut enemies {
        // A target spawned this frame (by a load) has no global position until PostUpdate.
        let Ok((target, placed)) = targets.get(enemy.target) else {
            continue;
        };
        if placed.is_added() {
            continue;
        }
        let to_target = target.translation().truncate() - transform.translation.truncate();
        let step = to_target.normalize_or_zero() * enemy.speed * time.delta_secs();
        let step = step.clamp_length_max(to_target.length());
        transform.translation += step.extend(0.0);
    }
}

fn collect_coins(
    mut commands: Commands,
    players: Query<&Transform, With<Player>>,
    coins: Query<(Entity, &Coin, &Transform)>,
    mut score: ResMut<Score>,
    mut inventory: ResMut<Inventory>,
) {
    for player in &players {
        for (entity, coin, transform) in &coins {
            let reach = (PLAYER_SIZE + COIN_SIZE) / 2.0;
            if player
                .translation
                .truncate()
                .distance(transform.translation.truncate())
                < reach
            {
                commands.entity(entity).despawn();
                score.0 += coin.kind.points();
                match coin.kind {
                    CoinKind::Gem => inventory.gems += 1,
                    CoinKind::Gold => inventory.gold += 1,
                }
            }
        }
    }
}

/// An enemy touching the player costs 15 points and sends the enemy back to a corner.
fn enemy_hits(
    players: Query<&Transform, (With<Player>, Without<Enemy>)>,
    mut enemies: Query<&mut Transform, With<Enemy>>,
    mut score: ResMut<Score>,
) {
    for player in &players {
        for mut enemy in &mut enemies {
            let reach = (PLAYER_SIZE + ENEMY_SIZE) / 2.0;
            let offset = enemy.translation.truncate() - player.translation.truncate();
            if offset.length() < reach {
                score.0 = score.0.saturating_sub(15);
                let corner = ARENA * Vec2::new(-offset.x.signum(), -offset.y.signum()) * 0.9;
                enemy.translation = corner.extend(enemy.translation.z);
            }
        }
    }
}

/// When the last coin is taken: the next level, with more coins, one more enemy, a brighter
/// lantern.
fn next_level(
    mut commands: Commands,
    (arena, players): (Single<Entity, With<ArenaRoot>>, Query<Entity, With<Player>>),
    coins: Query<(), With<Coin>>,
    mut lanterns: Query<&mut Lantern>,
    mut level: ResMut<Level>,
    mut rng: ResMut<ArenaRng>,
    assets: Res<AssetServer>,
) {
    if !coins.is_empty() || level.is_changed() {
        return;
    }
    let Ok(player) = players.single() else {
        return;
    };
    level.0 += 1;
    spawn_coins(&mut commands, *arena, &mut rng, &assets, level.0);
    spawn_enemy(
        &mut commands,
        &mut rng,
        80.0 + 10.0 * level.0 as f32,
        player,
    );
    for mut lantern in &mut lanterns {
        lantern.glow += 1.0;
    }
}

/// The save title and the window title show the level and the score.
fn show_titles(
    level: Res<Level>,
    score: Res<Score>,
    inventory: Res<Inventory>,
    mut title: ResMut<SaveTitle>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
) {
    if !(level.is_changed() || score.is_changed() || inventory.is_changed()) {
        return;
    }
    title.0 = format!(
        "Level {} \u{b7} {} points \u{b7} {} gold, {} gems",
        level.0, score.0, inventory.gold, inventory.gems
    );
    for mut window in &mut windows {
        window.title = format!(
            "Keepsake Arena \u{2014} Level {} \u{b7} Score {}",
            level.0, score.0
        );
    }
}

/// The score line at the top and the key help at the bottom.
fn hud(
    mut contexts: EguiContexts,
    level: Res<Level>,
    score: Res<Score>,
    inventory: Res<Inventory>,
    playtime: Res<Playtime>,
    autosave: Option<Res<AutosaveTimer>>,
    last_save: Res<LastSave>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let text = |text: String| {
        egui::RichText::new(text)
            .size(16.0)
            .color(egui::Color32::WHITE)
    };
    egui::Area::new(egui::Id::new("hud-score"))
        .anchor(egui::Align2::LEFT_TOP, egui::vec2(16.0, 12.0))
        .interactable(false)
        .show(ctx, |ui| {
            let line = format!(
                "Level {}    Score {}    Gold {}    Gems {}    Played {}",
                level.0,
                score.0,
                inventory.gold,
                inventory.gems,
                bevy_keepsake::ui::format_playtime(playtime.0)
            );
            ui.add(egui::Label::new(text(line)).extend());
            // The main thread's part of the last save (the rest runs on the task pool).
            if let Some((time, entities)) = last_save.0 {
                let line = format!(
                    "Last save: {:.2} ms on the main thread, {entities} entities",
                    time.as_secs_f64() * 1e3
                );
                ui.add(egui::Label::new(text(line).size(13.0)).extend());
            }
        });
    // Without the member (the scripted check), or paused, there are no timed autosaves.
    let autosave = match autosave.filter(|timer| !timer.is_paused()) {
        Some(timer) => format!("autosave every {} s", timer.every().as_secs()),
        None => "autosave off".to_owned(),
    };
    egui::Area::new(egui::Id::new("hud-help"))
        .anchor(egui::Align2::CENTER_BOTTOM, egui::vec2(0.0, -12.0))
        .interactable(false)
        .show(ctx, |ui| {
            let help = egui::RichText::new(format!(
                "WASD / arrows move    F5 quicksave    F9 quickload    hold R rewind    Esc save menu    {autosave}"
            ))
            .size(14.0)
            .color(egui::Color32::from_gray(190));
            ui.add(egui::Label::new(help).extend());
        });
    Ok(())
}

/// The rewind ring, under the score lines.
fn rewind_hud(mut contexts: EguiContexts, ring: Res<RewindRing>, time: Res<Time>) -> Result {
    let line = egui::RichText::new(rewind_line(&ring, time.elapsed()))
        .size(13.0)
        .color(egui::Color32::WHITE);
    egui::Area::new(egui::Id::new("hud-rewind"))
        .anchor(egui::Align2::LEFT_TOP, egui::vec2(16.0, 56.0))
        .interactable(false)
        .show(contexts.ctx_mut()?, |ui| {
            ui.add(egui::Label::new(line).extend())
        });
    Ok(())
}

/// The rewind ring as the HUD shows it: how many points, how far back, how much memory.
fn rewind_line(ring: &RewindRing, now: std::time::Duration) -> String {
    let Some(oldest) = ring.points().next() else {
        return "Rewind: no points yet".to_owned();
    };
    format!(
        "Rewind: {} points, {:.1} s back, {:.0} KiB",
        ring.len(),
        now.saturating_sub(oldest.taken_at).as_secs_f32(),
        ring.memory() as f64 / 1024.0
    )
}
