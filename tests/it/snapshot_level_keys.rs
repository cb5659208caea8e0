//! References from saved entities into the level: unsaved entities named by a `LevelKey` (or by
//! their `Name`, where the game opts in) are written by key and found again on load, in the
//! same world and in a new session whose level has other entity ids. The peers' cases for
//! references to unsaved entities (a saved child of an unsaved scene root, an "opens door X"
//! component, a resource pointing at a level entity), with keys.

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, ApplyReport, CaptureCache, DroppedReference, LevelKey, LevelKeyMiss, LoadMode,
    SaveRegistry, Saveable, SaveableAppExt, SnapshotError,
};

#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Component)]
struct Npc(u32);

/// "Opens door X": a saved component pointing at an unsaved level entity.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component)]
struct Opens {
    #[entities]
    door: Entity,
}

/// A resource holding a level entity.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, MapEntities)]
#[reflect(Resource, MapEntities)]
struct Checkpoint {
    #[entities]
    spawn_point: Entity,
}

fn app() -> App {
    let mut app = App::new();
    app.register_saveable::<Npc>()
        .register_saveable::<Opens>()
        .register_saveable::<Checkpoint>();
    app
}

/// The level's entities (never saved) and their keys, spawned the way a level loader would.
struct Level {
    root: Entity,
    door: Entity,
    spawn_point: Entity,
}

/// Spawns the level, `padding` unrelated entities first so that ids differ between sessions.
fn spawn_level(world: &mut World, padding: usize) -> Level {
    for _ in 0..padding {
        world.spawn_empty();
    }
    let root = world.spawn((LevelKey::new("cave"), Name::new("Cave"))).id();
    let door = world
        .spawn((LevelKey::new("cave/door"), ChildOf(root)))
        .id();
    let spawn_point = world.spawn(LevelKey::from(7u64)).id();
    Level {
        root,
        door,
        spawn_point,
    }
}

/// The saved state: an NPC under the level root that opens the door, another at the top, and
/// the checkpoint.
fn spawn_saved(world: &mut World, level: &Level) {
    world.spawn((
        Saveable,
        Npc(1),
        ChildOf(level.root),
        Opens { door: level.door },
    ));
    world.spawn((Saveable, Npc(2)));
    world.insert_resource(Checkpoint {
        spawn_point: level.spawn_point,
    });
}

fn load(world: &mut World, blob: &snapshot::Snapshot, mode: LoadMode) -> ApplyReport {
    let decoded = decode(world, blob);
    snapshot::apply(world, decoded, mode)
}

fn decode(world: &World, blob: &snapshot::Snapshot) -> snapshot::DecodedSnapshot {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    snapshot::decode(&blob.blob, blob.state_hash, &registry, &types.read()).unwrap()
}

fn npc(world: &mut World, id: u32) -> Entity {
    let mut query = world.query::<(Entity, &Npc)>();
    let found: Vec<Entity> = query
        .iter(world)
        .filter(|(_, npc)| npc.0 == id)
        .map(|(entity, _)| entity)
        .collect();
    assert_eq!(found.len(), 1, "NPC {id}");
    found[0]
}

/// Checks that the saved state points into `level` again.
fn assert_linked(world: &mut World, level: &Level, report: &ApplyReport) {
    assert_eq!(report.dropped_references, []);
    assert_eq!(
        (report.unmapped_references, report.dropped_relationships),
        (0, 0)
    );
    let first = npc(world, 1);
    assert_eq!(
        world.get::<ChildOf>(first).map(ChildOf::parent),
        Some(level.root)
    );
    let children = world.get::<Children>(level.root).unwrap();
    assert!(children.contains(&first) && children.contains(&level.door));
    assert_eq!(world.get::<Opens>(first), Some(&Opens { door: level.door }));
    let checkpoint = *world.resource::<Checkpoint>();
    assert_eq!(checkpoint.spawn_point, level.spawn_point);
    let second = npc(world, 2);
    assert_eq!(world.get::<ChildOf>(second), None);
}

#[test]
fn references_into_the_level_survive_a_load_into_the_same_world() {
    type Apply = fn(&mut World, snapshot::DecodedSnapshot) -> ApplyReport;
    let respawn: Apply = |world, decoded| snapshot::apply(world, decoded, LoadMode::Respawn);
    for apply in [respawn, snapshot::merge] {
        let mut app = app();
        let world = app.world_mut();
        let level = spawn_level(world, 0);
        spawn_saved(world, &level);
        let saved = snapshot::capture(world).unwrap();
        assert_eq!(saved.entities, 2, "the level is not saved");
        // Wreck the saved state (a replacing load would despawn it anyway).
        let first = npc(world, 1);
        world.despawn(first);
        let second = npc(world, 2);
        world.despawn(second);
        world.resource_mut::<Checkpoint>().spawn_point = Entity::PLACEHOLDER;

        let decoded = decode(world, &saved);
        let report = apply(world, decoded);
        assert_linked(world, &level, &report);
    }
}

#[test]
fn references_into_the_level_survive_a_new_session_with_other_entity_ids() {
    let mut saving = app();
    let level = spawn_level(saving.world_mut(), 0);
    spawn_saved(saving.world_mut(), &level);
    let saved = snapshot::capture(saving.world()).unwrap();

    let mut loading = app();
    let level = spawn_level(loading.world_mut(), 25);
    assert_ne!(
        level.root,
        saving
            .world_mut()
            .query::<(Entity, &Name)>()
            .single(saving.world())
            .unwrap()
            .0
    );
    let report = load(loading.world_mut(), &saved, LoadMode::Respawn);
    assert_linked(loading.world_mut(), &level, &report);
}

#[test]
fn a_key_no_live_entity_has_drops_the_reference_and_names_type_field_and_key() {
    let mut saving = app();
    let level = spawn_level(saving.world_mut(), 0);
    spawn_saved(saving.world_mut(), &level);
    let saved = snapshot::capture(saving.world()).unwrap();

    // The next version of the level has no door, and two spawn points keyed 7.
    let mut loading = app();
    let world = loading.world_mut();
    let root = world.spawn(LevelKey::new("cave")).id();
    world.spawn(LevelKey::from(7u64));
    world.spawn(LevelKey::new("7"));
    let report = load(world, &saved, LoadMode::Respawn);

    let mut dropped = report.dropped_references.clone();
    dropped.sort_by(|a, b| a.field.cmp(&b.field));
    let opens = std::any::type_name::<Opens>();
    let checkpoint = std::any::type_name::<Checkpoint>();
    assert_eq!(
        dropped,
        [
            DroppedReference {
                type_path: checkpoint.into(),
                field: format!("{checkpoint}.spawn_point"),
                key: "7".into(),
                reason: LevelKeyMiss::SeveralEntities,
            },
            DroppedReference {
                type_path: opens.into(),
                field: format!("{opens}.door"),
                key: "cave/door".into(),
                reason: LevelKeyMiss::NoEntity,
            },
        ]
    );
    assert!(
        dropped[1]
            .to_string()
            .contains("no live entity has that level key")
    );
    assert_eq!(
        report.unmapped_references, 0,
        "keyed references are listed, not counted"
    );
    let first = npc(world, 1);
    assert_eq!(world.get::<Opens>(first).unwrap().door, Entity::PLACEHOLDER);
    assert_eq!(
        world.resource::<Checkpoint>().spawn_point,
        Entity::PLACEHOLDER
    );
    // The root's key was found: the NPC is still under it.
    assert_eq!(world.get::<ChildOf>(first).map(ChildOf::parent), Some(root));
}

#[test]
fn a_missing_level_root_lists_the_childof_and_loads_the_child_as_a_root() {
    let mut saving = app();
    let level = spawn_level(saving.world_mut(), 0);
    spawn_saved(saving.world_mut(), &level);
    let saved = snapshot::capture(saving.world()).unwrap();

    let mut loading = app();
    let report = load(loading.world_mut(), &saved, LoadMode::Respawn);
    let child_of = std::any::type_name::<ChildOf>();
    let root_drop = report
        .dropped_references
        .iter()
        .find(|dropped| dropped.key == "cave")
        .expect("the ChildOf is listed");
    assert_eq!(root_drop.field, format!("{child_of}.0"));
    assert_eq!(root_drop.reason, LevelKeyMiss::NoEntity);
    assert_eq!(report.dropped_relationships, 1);
    let world = loading.world_mut();
    let first = npc(world, 1);
    assert_eq!(world.get::<ChildOf>(first), None);
}

#[test]
fn two_entities_with_one_key_refuse_the_save_naming_both() {
    let mut app = app();
    let world = app.world_mut();
    let level = spawn_level(world, 0);
    spawn_saved(world, &level);
    let copy = world
        .spawn((LevelKey::new("cave/door"), Name::new("Door copy")))
        .id();

    let error = snapshot::capture(world).unwrap_err();
    let SnapshotError::DuplicateLevelKey { key, first, second } = &error else {
        panic!("{error}")
    };
    assert_eq!(key, "cave/door");
    let mut both = [first.entity, second.entity];
    both.sort();
    let mut expected = [level.door, copy];
    expected.sort();
    assert_eq!(both, expected);
    let message = error.to_string();
    assert!(
        message.contains("\"Door copy\"") && message.contains("unique"),
        "{message}"
    );
    // The incremental capture refuses it too.
    assert!(matches!(
        CaptureCache::default().capture(world),
        Err(SnapshotError::DuplicateLevelKey { .. })
    ));
}

#[test]
fn names_are_keys_when_the_game_opts_in_and_only_for_unsaved_entities() {
    let mut saving = app();
    saving.use_names_as_level_keys();
    let world = saving.world_mut();
    let hall = world.spawn(Name::new("Great Hall")).id();
    // Saved entities share names freely: only unsaved ones are keyed by name.
    world.spawn((Saveable, Npc(1), Name::new("Guard"), ChildOf(hall)));
    world.spawn((Saveable, Npc(2), Name::new("Guard")));
    // Names several entities share key none of them (and fail nothing).
    let torch = world.spawn(Name::new("Torch")).id();
    world.spawn(Name::new("Torch"));
    world.spawn((Saveable, Npc(3), ChildOf(torch)));
    let saved = snapshot::capture(world).unwrap();
    let table = snapshot::inspect(&saved.blob).unwrap();
    let keys: Vec<&str> = table.keys.iter().map(|key| key.key).collect();
    assert_eq!(keys, ["Great Hall"]);

    let mut loading = app();
    loading.use_names_as_level_keys();
    let world = loading.world_mut();
    world.spawn_batch((0..10).map(|i| Name::new(format!("Rock {i}"))));
    let hall = world.spawn(Name::new("Great Hall")).id();
    let report = load(world, &saved, LoadMode::Respawn);
    assert_eq!(report.dropped_references, []);
    let first = npc(world, 1);
    assert_eq!(world.get::<ChildOf>(first).map(ChildOf::parent), Some(hall));
    assert_eq!(report.dropped_relationships, 1, "the torch's child");

    // Without the opt-in, names are not keys: the hall is just an unsaved parent.
    let mut plain = app();
    let world = plain.world_mut();
    let hall = world.spawn(Name::new("Great Hall")).id();
    world.spawn((Saveable, Npc(1), ChildOf(hall)));
    let saved = snapshot::capture(world).unwrap();
    assert_eq!(snapshot::inspect(&saved.blob).unwrap().keys, []);
}

#[test]
fn the_incremental_capture_writes_the_same_key_table() {
    let mut app = app();
    let world = app.world_mut();
    let level = spawn_level(world, 3);
    spawn_saved(world, &level);
    world.increment_change_tick();
    let mut cache = CaptureCache::default();
    assert_eq!(
        cache.capture(world).unwrap().finish().blob,
        snapshot::capture(world).unwrap().blob
    );
    // A new keyed level entity is in the next save, without any saved value changing.
    world.increment_change_tick();
    world.spawn(LevelKey::new("cave/chest"));
    let snapshot = cache.capture(world).unwrap().finish();
    assert_eq!(snapshot.blob, snapshot::capture(world).unwrap().blob);
    let table = snapshot::inspect(&snapshot.blob).unwrap();
    let mut keys: Vec<&str> = table.keys.iter().map(|key| key.key).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["7", "cave", "cave/chest", "cave/door"]);
}

fn golden() -> std::path::PathBuf {
    let name = "tests/golden/level-keys-layout3.ksav";
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The save file of the level-keys world, as this build writes it.
fn level_keys_save() -> Vec<u8> {
    use bevy_keepsake::SlotId;
    use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
    let mut app = app();
    let level = spawn_level(app.world_mut(), 0);
    spawn_saved(app.world_mut(), &level);
    let snapshot = snapshot::capture(app.world()).unwrap();
    let bundle = SaveBundle::new(WorldState {
        tick: 1,
        ecs_blob: snapshot.blob,
        state_hash: snapshot.state_hash,
    });
    let meta = SaveMeta::new(SlotId::Quick).with_title("level keys");
    format::encode(&meta, &bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec()
}

fn blob_of(file: &[u8]) -> bevy_keepsake::format::WorldState {
    use bevy_keepsake::format::{self, DecodeOptions};
    format::decode(file, &DecodeOptions::new())
        .unwrap()
        .bundle
        .world
}

/// Writes the golden save of the first blob layout with keys. Run by hand once:
/// `cargo test --test it -- --ignored snapshot_level_keys::write_level_keys_golden_save`.
#[test]
#[ignore = "writes tests/golden; run by hand once"]
fn write_level_keys_golden_save() {
    std::fs::write(golden(), level_keys_save()).unwrap();
}

#[test]
fn the_golden_save_with_keys_loads_into_a_level_spawned_again() {
    let file = std::fs::read(golden()).unwrap();
    let stored = blob_of(&file);
    let mut app = app();
    let level = spawn_level(app.world_mut(), 12);
    let registry = app.world().resource::<SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().clone();
    let decoded = snapshot::decode(
        &stored.ecs_blob,
        stored.state_hash,
        &registry,
        &types.read(),
    )
    .unwrap();
    let report = snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn);
    assert_linked(app.world_mut(), &level, &report);
    // Today's build writes the same tables (the key table's layout is stable).
    let today = blob_of(&level_keys_save());
    let tables = |blob: &[u8]| {
        let table = snapshot::inspect(blob).unwrap();
        format!(
            "{:?} {:?} {:?}",
            table.entity_ids, table.keys, table.columns
        )
    };
    assert_eq!(tables(&today.ecs_blob), tables(&stored.ecs_blob));
}
