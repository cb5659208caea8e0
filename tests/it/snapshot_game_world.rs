//! A game-shaped world: exact round trip, required components, and the `ecs_blob` against
//! Bevy's `DynamicWorld` postcard encoding of the same world.

use crate::common;

use bevy::prelude::*;
use bevy::world_serialization::DynamicWorldBuilder;
use bevy::world_serialization::serde::DynamicWorldSerializer;
use bevy_keepsake::snapshot::{self, Saveable};
use common::game_world;

#[test]
fn the_blob_is_at_least_three_times_smaller_than_dynamic_world_postcard() {
    let mut app = game_world::app();
    let world = app.world_mut();
    game_world::populate(world, 10_000);

    let ours = snapshot::capture(world).unwrap();

    let types = world.resource::<AppTypeRegistry>().clone();
    let types = types.read();
    let mut saved = world.query_filtered::<Entity, With<Saveable>>();
    let entities: Vec<Entity> = saved.iter(world).collect();
    let dynamic = DynamicWorldBuilder::from_world(world, &types)
        .deny_all_resources()
        .extract_entities(entities.into_iter())
        .build();
    let theirs = postcard::to_stdvec(&DynamicWorldSerializer::new(&dynamic, &types)).unwrap();

    let ratio = theirs.len() as f64 / ours.blob.len() as f64;
    println!(
        "10k entities: ecs_blob {} bytes, DynamicWorld postcard {} bytes, {ratio:.2}x smaller",
        ours.blob.len(),
        theirs.len()
    );
    assert_eq!(dynamic.entities.len(), ours.entities);
    assert!(ratio >= 3.0, "only {ratio:.2}x smaller");
}

#[test]
fn the_serde_and_reflection_registrations_write_the_same_bytes() {
    let mut serde_app = game_world::app();
    let mut reflect_app = game_world::reflect_app();
    game_world::populate(serde_app.world_mut(), 500);
    game_world::populate(reflect_app.world_mut(), 500);
    let fast = snapshot::capture(serde_app.world()).unwrap();
    let reflected = snapshot::capture(reflect_app.world()).unwrap();
    assert_eq!(fast.blob, reflected.blob);

    // And each decodes the other's blob.
    let world = reflect_app.world_mut();
    let registry = world.resource::<snapshot::SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded = snapshot::decode(&fast.blob, fast.state_hash, &registry, &types.read()).unwrap();
    assert_eq!(decoded.entity_count(), 500);
}

#[test]
fn a_game_world_round_trips_exactly_with_required_components() {
    use common::game_world::{Health, Inventory, Velocity};
    type Row = (Transform, Velocity, Health, Name, Option<Inventory>);
    fn rows(world: &mut World) -> Vec<Row> {
        let mut query = world.query_filtered::<
            (&Transform, &Velocity, &Health, &Name, Option<&Inventory>),
            With<Saveable>,
        >();
        let mut rows: Vec<Row> = query
            .iter(world)
            .map(|(t, v, h, n, i)| (*t, v.clone(), h.clone(), n.clone(), i.cloned()))
            .collect();
        rows.sort_by(|a, b| a.3.as_str().cmp(b.3.as_str()));
        rows
    }

    let mut app = game_world::app();
    game_world::populate(app.world_mut(), 2_000);
    let before = rows(app.world_mut());
    let saved = snapshot::capture(app.world()).unwrap();

    let mut fresh = game_world::app();
    let world = fresh.world_mut();
    let registry = world.resource::<snapshot::SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, snapshot::LoadMode::Respawn);
    assert_eq!(rows(world), before);
    let mut with_global = world.query_filtered::<(), (With<Transform>, With<GlobalTransform>)>();
    assert_eq!(
        with_global.iter(world).count(),
        2_000,
        "Transform's required components are added"
    );
}
