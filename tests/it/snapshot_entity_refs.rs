//! Entities in resources, every way a game writes them (issue 50, item 3): fields marked
//! `#[entities]` (nested structs through `#[derive(MapEntities)]`), `#[reflect(MapEntities)]`,
//! an opaque serde resource with a `MapEntities` of its own (ported from bevy_save's
//! `test_opaque_snapshot`), `Option<Entity>` and collections. After a load each reference
//! names the entity the load gave its target: in a respawning load, and in place after the
//! targets were despawned (so the load spawns them again under new ids).
//!
//! Then the registration's check for `Entity` fields a load would not remap.

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, ApplyReport, CaptureCache, EntityRecord, LoadMode, SaveRegistry, Saveable,
    SaveableAppExt, SavedIds, Snapshot, SnapshotHistory, UnmappedEntityField,
};
use serde::{Deserialize, Serialize};

/// What the saved entities are, across worlds.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[reflect(Component)]
struct Tag(u32);

/// Opaque to reflection, saved by serde, mapped by its own `MapEntities` (bevy_save's
/// `test_opaque_snapshot`).
#[derive(Resource, Reflect, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[reflect(opaque)]
#[reflect(Resource, MapEntities, Serialize, Deserialize)]
struct Opaque {
    values: Vec<(u32, Entity)>,
}

impl MapEntities for Opaque {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        for (_, entity) in &mut self.values {
            *entity = mapper.get_mapped(*entity);
        }
    }
}

/// The shape of alien_cake_addict's `Game`: entities in nested structs, through `#[entities]`
/// alone: a resource's derive maps its `#[entities]` fields as a component's does
/// (`MapEntities` is derived for the attribute, which `Resource` does not declare).
#[derive(Resource, Reflect, MapEntities, Clone, Debug, Default)]
#[reflect(Resource)]
struct Game {
    #[entities]
    player: Player,
    #[entities]
    bonus: Bonus,
    score: u32,
}

#[derive(Reflect, MapEntities, Clone, Debug, Default)]
struct Player {
    #[entities]
    entity: Option<Entity>,
    i: usize,
}

#[derive(Reflect, MapEntities, Clone, Debug, Default)]
struct Bonus {
    #[entities]
    entity: Option<Entity>,
}

/// Collections, mapped through reflection's `MapEntities` (`#[reflect(MapEntities)]`).
#[derive(Resource, Reflect, MapEntities, Clone, Debug, Default)]
#[reflect(Resource, MapEntities)]
struct Roster {
    #[entities]
    members: Vec<Entity>,
    #[entities]
    leader: Option<Entity>,
    #[entities]
    rivals: HashMap<Entity, Entity>,
}

/// A map keyed by something that is not an entity: `#[entities]` needs both sides to map, so
/// the map is remapped by hand.
#[derive(Resource, Reflect, Clone, Debug, Default)]
#[reflect(Resource)]
#[component(map_entities)]
struct Slots {
    by_slot: HashMap<u32, Entity>,
}

impl MapEntities for Slots {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        for entity in self.by_slot.values_mut() {
            *entity = mapper.get_mapped(*entity);
        }
    }
}

fn app() -> App {
    let mut app = App::new();
    app.register_saveable::<Tag>()
        .register_saveable::<Opaque>()
        .register_saveable::<Game>()
        .register_saveable::<Roster>()
        .register_saveable::<Slots>();
    app
}

/// Three tagged saved entities and every resource pointing at them; returns the entities.
fn populate(world: &mut World) -> [Entity; 3] {
    let [a, b, c] = [1, 2, 3].map(|tag| world.spawn((Saveable, Tag(tag))).id());
    world.insert_resource(Opaque {
        values: vec![(0, a), (1, b), (2, c)],
    });
    world.insert_resource(Game {
        player: Player {
            entity: Some(a),
            i: 4,
        },
        bonus: Bonus { entity: Some(c) },
        score: 7,
    });
    world.insert_resource(Roster {
        members: vec![a, b, c],
        leader: Some(b),
        rivals: HashMap::from_iter([(a, c)]),
    });
    world.insert_resource(Slots {
        by_slot: HashMap::from_iter([(0, c), (1, a)]),
    });
    [a, b, c]
}

/// Every reference the resources hold, as the tags of the entities they name (`None` for an
/// entity without a tag: a dead id, or the wrong one).
fn references(world: &World) -> Vec<(&'static str, Option<u32>)> {
    let tag = |entity: Entity| world.get::<Tag>(entity).map(|tag| tag.0);
    let mut found = Vec::new();
    for &(_, entity) in &world.resource::<Opaque>().values {
        found.push(("Opaque.values", tag(entity)));
    }
    let game = world.resource::<Game>();
    found.push(("Game.player.entity", game.player.entity.and_then(tag)));
    found.push(("Game.bonus.entity", game.bonus.entity.and_then(tag)));
    let roster = world.resource::<Roster>();
    for &member in &roster.members {
        found.push(("Roster.members", tag(member)));
    }
    found.push(("Roster.leader", roster.leader.and_then(tag)));
    for (&rival, &of) in &roster.rivals {
        found.push(("Roster.rivals key", tag(rival)));
        found.push(("Roster.rivals value", tag(of)));
    }
    let slots = world.resource::<Slots>();
    let mut by_slot: Vec<_> = slots.by_slot.iter().collect();
    by_slot.sort();
    for (_, &entity) in by_slot {
        found.push(("Slots.by_slot", tag(entity)));
    }
    found
}

fn load(world: &mut World, saved: &Snapshot, mode: LoadMode) -> ApplyReport {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    snapshot::apply(world, decoded, mode)
}

/// The saved entities, by what the load made of them: the map's entity, or the same id.
fn loaded_as(report: &ApplyReport, saved: [Entity; 3]) -> [Entity; 3] {
    saved.map(|entity| report.entity_map.get(&entity).copied().unwrap_or(entity))
}

/// The case: a respawning load of a world whose three target entities are saved.
#[test]
fn an_opaque_resource_names_the_entities_the_load_spawned() {
    let mut app = app();
    let world = app.world_mut();
    let saved_entities = populate(world);
    let saved = snapshot::capture(world).unwrap();

    let report = load(world, &saved, LoadMode::Respawn);

    let expected: Vec<(u32, Entity)> = (0..)
        .zip(loaded_as(&report, saved_entities))
        .collect::<Vec<_>>();
    assert_eq!(
        world.resource::<Opaque>().values,
        expected,
        "entity_map: {:?}",
        report.entity_map
    );
}

fn expected_references() -> Vec<(&'static str, Option<u32>)> {
    let mut expected = vec![("Opaque.values", Some(1)), ("Opaque.values", Some(2))];
    expected.push(("Opaque.values", Some(3)));
    expected.push(("Game.player.entity", Some(1)));
    expected.push(("Game.bonus.entity", Some(3)));
    expected.extend([1, 2, 3].map(|tag| ("Roster.members", Some(tag))));
    expected.push(("Roster.leader", Some(2)));
    expected.push(("Roster.rivals key", Some(1)));
    expected.push(("Roster.rivals value", Some(3)));
    expected.push(("Slots.by_slot", Some(3)));
    expected.push(("Slots.by_slot", Some(1)));
    expected
}

#[test]
fn every_way_a_resource_holds_entities_is_remapped_by_a_respawning_load() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    assert_eq!(references(world), expected_references());
    let saved = snapshot::capture(world).unwrap();

    let report = load(world, &saved, LoadMode::Respawn);

    assert_eq!(report.spawned, 3);
    assert_eq!(references(world), expected_references());
    assert_eq!(report.unmapped_references, 0);
}

/// In place, the targets despawned since the save come back under new ids; the resources
/// did not change, so only the references tell that they must be written.
#[test]
fn every_way_a_resource_holds_entities_is_remapped_in_place_when_its_targets_come_back() {
    let mut app = app();
    let world = app.world_mut();
    let targets = populate(world);
    let saved = snapshot::capture(world).unwrap();
    for entity in targets {
        world.despawn(entity);
    }

    let report = load(world, &saved, LoadMode::InPlace);

    assert_eq!(report.spawned, 3);
    assert_eq!(references(world), expected_references());
}

/// A rewind point restored in place through its reverse deltas, the same way.
#[test]
fn every_way_a_resource_holds_entities_is_remapped_by_a_rewind_when_its_targets_come_back() {
    let mut app = app();
    let world = app.world_mut();
    let targets = populate(world);
    let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
    let kept = history.record(&cache.capture(world).unwrap());
    for entity in targets {
        world.despawn(entity);
    }
    let live = cache.capture(world).unwrap();
    drop(history.record(&live));

    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    let report = snapshot::restore(world, &kept, &live, &mut record)
        .unwrap()
        .expect("no States");

    assert_eq!(report.spawned, 3);
    assert_eq!(references(world), expected_references());
}

/// In place, a resource that changed since the save is written back with its references
/// remapped to the entities kept, whose ids did not change.
#[test]
fn a_changed_resource_applied_in_place_names_the_kept_entities() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    let saved = snapshot::capture(world).unwrap();
    world.resource_mut::<Opaque>().values.clear();
    world.resource_mut::<Game>().player.entity = None;

    let report = load(world, &saved, LoadMode::InPlace);

    assert_eq!((report.kept, report.spawned), (3, 0));
    assert_eq!(references(world), expected_references());
}

/// A resource holding an `Entity` with nothing mapping it.
#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Unmapped {
    target: Option<Entity>,
    count: u32,
}

/// A component with one field mapped and one forgotten, one of them inside an enum.
#[derive(Component, Reflect)]
#[reflect(Component)]
struct HalfMapped {
    #[entities]
    leader: Entity,
    follows: Vec<Entity>,
    mood: Mood,
}

#[derive(Reflect, Default)]
enum Mood {
    #[default]
    Calm,
    Chasing(Entity),
}

/// Mapped by the component's own `#[entities]` fields.
#[derive(Component, Reflect)]
#[reflect(Component)]
struct Follows {
    #[entities]
    leader: Entity,
    distance: f32,
}

fn unmapped_fields(app: &App) -> Vec<UnmappedEntityField> {
    let types = app.world().resource::<AppTypeRegistry>().read();
    let registry = app.world().resource::<SaveRegistry>();
    registry.unmapped_entity_fields(&types)
}

#[test]
fn registration_names_the_entity_fields_a_load_would_not_remap() {
    let mut app = app();
    app.register_saveable::<Unmapped>()
        .register_saveable::<HalfMapped>()
        .register_saveable::<Follows>();

    let fields: Vec<(String, String)> = unmapped_fields(&app)
        .into_iter()
        .map(|field| (field.type_path, field.field))
        .collect();

    let field = |name: &str, field: &str| {
        let path = format!("{}::{name}", module_path!());
        (path.clone(), format!("{path}{field}"))
    };
    assert_eq!(
        fields,
        vec![
            field("Unmapped", ".target::Some.0"),
            field("HalfMapped", ".follows[0]"),
            field("HalfMapped", ".mood::Chasing.0"),
        ]
    );
}

#[test]
fn an_unmapped_entity_field_says_how_to_map_it() {
    let mut app = App::new();
    app.register_saveable::<Unmapped>();
    let message = unmapped_fields(&app)[0].to_string();
    for needed in [
        "Unmapped.target",
        "#[entities]",
        "bevy::ecs::entity::MapEntities",
        "#[reflect(MapEntities)]",
        "bevy::ecs::reflect::ReflectMapEntities",
    ] {
        assert!(message.contains(needed), "{needed:?} missing: {message}");
    }
}

/// ChildOf, `#[entities]`, `#[reflect(MapEntities)]` and an opaque type with its own mapping
/// are all mapped: nothing to say.
#[test]
fn registration_says_nothing_of_mapped_entities() {
    let mut app = app();
    app.register_saveable::<Follows>();
    assert_eq!(unmapped_fields(&app), Vec::new());
}

/// A map key the probe builds as a dynamic struct cannot be hashed (no `#[reflect(Hash)]` on a
/// `DynamicStruct`): a dynamic map panics on such a key, and registration panicked with it.
#[derive(Reflect, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[reflect(Hash, PartialEq)]
struct GridPos {
    x: i32,
    y: i32,
}

#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Tiles {
    by_pos: HashMap<GridPos, Entity>,
    pairs: bevy::platform::collections::HashSet<(Entity, u8)>,
}

/// A huge array of entities: not built in full by the registration's probe.
#[derive(Resource, Reflect)]
#[reflect(Resource)]
struct Grid {
    cells: [[Option<Entity>; 256]; 256],
}

#[test]
fn registration_survives_keys_it_cannot_hash_and_huge_arrays() {
    let mut app = app();
    app.register_saveable::<Tiles>().register_saveable::<Grid>();
    // What cannot be probed is not reported (nothing said rather than something wrong).
    assert!(
        unmapped_fields(&app)
            .iter()
            .all(|f| !f.type_path.ends_with("Grid"))
    );
}
