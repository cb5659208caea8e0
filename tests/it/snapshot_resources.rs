//! What a game keeps that is not an entity (issue 50, item 4): a seeded RNG saved as its state,
//! so the numbers drawn after a load are the ones drawn after the save; and what a load does
//! with a registered resource the save does not hold: it stays as the game has it, in a
//! respawning load, in place and in a rewind (the save cannot tell a resource that was absent
//! when it was written from one registered since it was written).

use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, CaptureCache, EntityRecord, LoadMode, SaveRegistry, SaveableAppExt, SavedIds, Snapshot,
    SnapshotHistory,
};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The game's seeded RNG, saved as ChaCha's state (as the guide writes it).
#[derive(Resource, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Serialize, Deserialize)]
struct GameRng(ChaCha8Rng);

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

/// A resource the game inserts while a round runs.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource)]
struct GameTimer(f32);

fn app(seed: u64) -> App {
    let mut app = App::new();
    app.register_saveable::<GameRng>()
        .register_saveable::<GameTimer>();
    app.world_mut()
        .insert_resource(GameRng(ChaCha8Rng::seed_from_u64(seed)));
    app
}

/// The next cakes' cells on alien_cake_addict's 10 × 10 board.
fn next_cakes(world: &mut World) -> Vec<(u8, u8)> {
    let mut rng = world.resource_mut::<GameRng>();
    (0..8)
        .map(|_| (rng.0.random_range(0..10), rng.0.random_range(0..10)))
        .collect()
}

fn load(world: &mut World, saved: &Snapshot, mode: LoadMode) {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, mode);
}

/// Saves mid-game, plays on, loads: the cakes after the load are the cakes after the save.
fn the_rng_goes_on_from_the_save(mode: LoadMode) {
    let mut app = app(42);
    let world = app.world_mut();
    next_cakes(world); // some play before the save
    let saved = snapshot::capture(world).unwrap();
    let after_save = next_cakes(world);
    assert_ne!(next_cakes(world), after_save, "the RNG moves on");

    load(world, &saved, mode);

    assert_eq!(next_cakes(world), after_save, "{mode:?}");
}

#[test]
fn a_seeded_rng_goes_on_from_the_save_after_a_respawning_load() {
    the_rng_goes_on_from_the_save(LoadMode::Respawn);
}

#[test]
fn a_seeded_rng_goes_on_from_the_save_after_an_in_place_load() {
    the_rng_goes_on_from_the_save(LoadMode::InPlace);
}

#[test]
fn a_seeded_rng_goes_on_from_the_save_in_a_new_session() {
    let mut first = app(42);
    next_cakes(first.world_mut());
    let saved = snapshot::capture(first.world()).unwrap();
    let after_save = next_cakes(first.world_mut());

    let mut second = app(7); // seeded otherwise, as a new session would be
    load(second.world_mut(), &saved, LoadMode::Respawn);

    assert_eq!(next_cakes(second.world_mut()), after_save);
}

#[test]
fn a_seeded_rng_goes_on_from_a_rewind_point() {
    let mut app = app(42);
    let world = app.world_mut();
    let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
    let kept = history.record(&cache.capture(world).unwrap());
    let after_point = next_cakes(world);
    let live = cache.capture(world).unwrap();
    drop(history.record(&live));

    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    snapshot::restore(world, &kept, &live, &mut record)
        .unwrap()
        .expect("no States");

    assert_eq!(next_cakes(world), after_point);
}

/// A save without `GameTimer`, loaded while the game has one: the timer stays as it is; and a
/// save with one, loaded while the game has none, brings it back.
fn a_resource_the_save_lacks_stays(mode: LoadMode) {
    let mut app = app(1);
    let world = app.world_mut();
    let without = snapshot::capture(world).unwrap();
    world.insert_resource(GameTimer(3.5));
    let with = snapshot::capture(world).unwrap();
    world.insert_resource(GameTimer(9.0));

    load(world, &without, mode);
    assert_eq!(
        world.get_resource::<GameTimer>(),
        Some(&GameTimer(9.0)),
        "{mode:?}"
    );

    world.remove_resource::<GameTimer>();
    load(world, &with, mode);
    assert_eq!(
        world.get_resource::<GameTimer>(),
        Some(&GameTimer(3.5)),
        "{mode:?}"
    );
}

#[test]
fn a_resource_the_save_lacks_stays_after_a_respawning_load() {
    a_resource_the_save_lacks_stays(LoadMode::Respawn);
}

#[test]
fn a_resource_the_save_lacks_stays_after_an_in_place_load() {
    a_resource_the_save_lacks_stays(LoadMode::InPlace);
}

#[test]
fn a_resource_the_point_lacks_stays_after_a_rewind() {
    let mut app = app(1);
    let world = app.world_mut();
    let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
    let kept = history.record(&cache.capture(world).unwrap());
    world.insert_resource(GameTimer(3.5));
    let live = cache.capture(world).unwrap();
    drop(history.record(&live));

    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    snapshot::restore(world, &kept, &live, &mut record)
        .unwrap()
        .expect("no States");

    assert_eq!(world.get_resource::<GameTimer>(), Some(&GameTimer(3.5)));
}
