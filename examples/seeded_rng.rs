//! Headless: alien_cake_addict's shape. A `Game` resource names the player's and the cake's
//! entities (remapped on load through `#[entities]`), and the game's seeded RNG
//! (`ChaCha8Rng`) is saved as its state, so after a load the next cakes fall where they fell
//! after the save: in the same session (F9) and in a new one.
use bevy::ecs::entity::MapEntities;
use bevy::prelude::*;
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::{TestSaves, run_until};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::Path;

/// Who the game is about, by entity: saved, and remapped on load. `MapEntities` is derived
/// for the `#[entities]` attribute (a resource's derive does not declare it).
#[derive(Resource, Reflect, MapEntities, Default)]
#[reflect(Resource)]
struct Game {
    #[entities]
    player: Player,
    #[entities]
    bonus: Bonus,
    score: u32,
}

#[derive(Reflect, MapEntities, Default)]
struct Player {
    #[entities]
    entity: Option<Entity>,
}

#[derive(Reflect, MapEntities, Default)]
struct Bonus {
    #[entities]
    entity: Option<Entity>,
}

/// A board cell.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Cell(u8, u8);

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Cake;

/// The game's seeded RNG, saved as ChaCha's state: seed, stream and position.
#[derive(Resource, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Serialize, Deserialize)]
struct GameRng(ChaCha8Rng);

// Reflection's opaque values are cloned; ChaCha8Rng is not `Clone`, its state is.
impl Clone for GameRng {
    fn clone(&self) -> Self {
        GameRng(ChaCha8Rng::deserialize_state(&self.0.serialize_state()))
    }
}

impl Serialize for GameRng {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rng = &self.0;
        (rng.get_seed(), rng.get_stream(), rng.get_word_pos()).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for GameRng {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (seed, stream, word_pos) = <([u8; 32], u64, u128)>::deserialize(deserializer)?;
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(stream); // before the position, which setting the stream resets
        rng.set_word_pos(word_pos);
        Ok(GameRng(rng))
    }
}

/// One session's app, saving under `root`, its RNG seeded with `seed`.
fn session(root: &Path, seed: u64) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(KeepsakePlugins::new("seeded-rng-example").save_root(root))
        .register_saveable::<Game>()
        .register_saveable::<GameRng>()
        .register_saveable::<Cell>()
        .register_saveable::<Cake>()
        .insert_resource(GameRng(ChaCha8Rng::seed_from_u64(seed)))
        .init_resource::<Game>()
        .add_observer(|failed: On<SaveFailed>| panic!("save failed: {}", failed.error))
        .add_observer(|failed: On<LoadFailed>| panic!("load failed: {}", failed.error));
    app.finish();
    app.cleanup();
    app
}

/// Replaces the cake with one on a random cell, as alien_cake_addict's `spawn_bonus` does.
fn spawn_cake(world: &mut World) -> Cell {
    if let Some(old) = world.resource_mut::<Game>().bonus.entity.take() {
        world.despawn(old);
    }
    let mut rng = world.resource_mut::<GameRng>();
    let cell = Cell(rng.0.random_range(0..10), rng.0.random_range(0..10));
    let cake = world.spawn((Saveable, Cake, cell)).id();
    world.resource_mut::<Game>().bonus.entity = Some(cake);
    cell
}

/// The cell of the cake `Game` names.
fn current_cake(world: &World) -> Cell {
    let cake = world.resource::<Game>().bonus.entity.expect("a cake");
    let entity = world.entity(cake);
    assert!(entity.contains::<Cake>(), "Game.bonus names the cake");
    *entity.get::<Cell>().unwrap()
}

fn next_cakes(world: &mut World) -> Vec<Cell> {
    (0..5).map(|_| spawn_cake(world)).collect()
}

/// How many frames a result may take besides the plugin's background work.
const FRAMES: u32 = 20;

fn main() {
    let saves = TestSaves::new();
    let mut app = session(saves.root(), 42);
    let world = app.world_mut();
    let player = world.spawn((Saveable, Cell(5, 5))).id();
    world.resource_mut::<Game>().player.entity = Some(player);
    spawn_cake(world);
    let saved_cake = current_cake(world);

    world.commands().save(SlotId::Manual(0));
    run_until::<SaveCompleted>(&mut app, FRAMES);
    let after_save = next_cakes(app.world_mut());
    println!("saved with the cake on {saved_cake:?}; then {after_save:?}");

    // F9: the saved cake comes back (under a new id: it was despawned), and the RNG with it.
    app.world_mut().commands().load(SlotId::Manual(0));
    run_until::<LoadCompleted>(&mut app, FRAMES);
    let world = app.world_mut();
    assert_eq!(current_cake(world), saved_cake);
    assert_eq!(
        next_cakes(world),
        after_save,
        "the same cakes after the load"
    );
    drop(app);

    // A new session, seeded otherwise, loads the same save.
    let mut app = session(saves.root(), 7);
    app.world_mut().commands().load(SlotId::Manual(0));
    run_until::<LoadCompleted>(&mut app, FRAMES);
    let world = app.world_mut();
    assert_eq!(current_cake(world), saved_cake);
    let player = world.resource::<Game>().player.entity.unwrap();
    assert_eq!(world.get::<Cell>(player), Some(&Cell(5, 5)));
    assert_eq!(
        next_cakes(world),
        after_save,
        "the same cakes in a new session"
    );
    println!("after a load, in this session and a new one: {after_save:?}");
}
