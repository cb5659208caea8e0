//! The real-game world (hierarchy, entity references, enums, maps, mostly reflection-only
//! types): exact round trip through capture, decode and apply, and the `ecs_blob` against
//! Bevy's `DynamicWorld` postcard encoding of the same world.

use crate::common;

use bevy::prelude::*;
use bevy::world_serialization::serde::DynamicWorldSerializer;
use bevy_keepsake::snapshot::{self, LoadMode};
use common::real_world;

fn load_into_fresh_app(saved: &snapshot::Snapshot) -> App {
    let mut fresh = real_world::app();
    let world = fresh.world_mut();
    let registry = world.resource::<snapshot::SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    let report = snapshot::apply(world, decoded, LoadMode::Replace);
    assert_eq!(report.unmapped_references, 0);
    assert_eq!(report.dropped_relationships, 0);
    fresh
}

#[test]
fn the_real_game_world_round_trips_exactly() {
    let mut app = real_world::app();
    real_world::populate(app.world_mut(), 2_000);
    let before = real_world::rows(app.world_mut());
    assert_eq!(before.0.len(), 2_000);
    let saved = snapshot::capture(app.world()).unwrap();
    assert_eq!(saved.entities, 2_000);
    assert_eq!(saved.resources, 3);

    let mut fresh = load_into_fresh_app(&saved);
    let after = real_world::rows(fresh.world_mut());
    assert_eq!(after, before);
    // Capturing the loaded world gives a blob of the same size (ids differ, values do not).
    let again = snapshot::capture(fresh.world()).unwrap();
    assert_eq!(again.components, saved.components);
}

#[test]
fn the_real_game_world_hierarchy_has_three_levels_and_references() {
    let mut app = real_world::app();
    real_world::populate(app.world_mut(), 100);
    let (rows, resources) = real_world::rows(app.world_mut());
    let roots = rows.iter().filter(|row| row.parent.is_none()).count();
    let equipment = rows.iter().filter(|row| row.owner.is_some()).count();
    assert_eq!((roots, equipment), (10, 60));
    assert!(
        rows.iter()
            .any(|row| matches!(row.ai, Some(real_world::AiState::Chase { .. })))
    );
    assert!(resources.clock.is_some() && resources.weather.is_some() && resources.quests.is_some());
}

#[test]
fn the_real_game_blob_is_smaller_than_dynamic_world_postcard() {
    let mut app = real_world::app();
    let world = app.world_mut();
    real_world::populate(world, 10_000);
    let ours = snapshot::capture(world).unwrap();

    let types = world.resource::<AppTypeRegistry>().clone();
    let types = types.read();
    let dynamic = real_world::dynamic_world_builder(world, &types).build();
    let theirs = postcard::to_stdvec(&DynamicWorldSerializer::new(&dynamic, &types)).unwrap();

    let ratio = theirs.len() as f64 / ours.blob.len() as f64;
    println!(
        "real-game world, 10k entities: ecs_blob {} bytes, DynamicWorld postcard {} bytes, {ratio:.2}x smaller",
        ours.blob.len(),
        theirs.len()
    );
    assert_eq!(dynamic.entities.len(), ours.entities);
    assert!(ratio >= 2.0, "only {ratio:.2}x smaller");
}
