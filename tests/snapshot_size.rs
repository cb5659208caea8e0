//! The `ecs_blob` against Bevy's `DynamicWorld` postcard encoding of the same world.

mod common;

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
