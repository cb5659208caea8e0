//! The snapshot layer: capture a world, apply it back, and compare.

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;
use bevy_keepsake::snapshot::blob::BlobError;
use bevy_keepsake::snapshot::{
    self, ApplyReport, LoadMode, SaveFilter, SaveRegistry, Saveable, SaveableAppExt, SnapshotError,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A stable identity used only by the tests to compare worlds across a load.
#[derive(
    Component,
    Reflect,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
)]
#[reflect(Component, Serialize, Deserialize)]
struct Tag(u32);

/// Serde fast path.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

/// Reflection path (no serde), with every kind of field.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
struct Stats {
    level: u8,
    title: String,
    tags: Vec<String>,
    nickname: Option<String>,
    resist: HashMap<String, f32>,
    mood: Mood,
}

#[derive(Reflect, Clone, Debug, PartialEq)]
enum Mood {
    Calm,
    Angry { rage: u32 },
    Scared(f32),
}

/// An entity reference through reflection.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component)]
struct Target(#[entities] Entity);

/// An entity reference through serde.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
struct Follows {
    #[entities]
    leader: Entity,
    distance: f32,
}

/// Never registered.
#[derive(Component, Clone, Debug, PartialEq)]
struct Unregistered(u8);

/// A resource referring to an entity: remapped through `ReflectMapEntities`.
#[derive(Resource, Reflect, MapEntities, Clone, Debug, PartialEq, Default)]
#[reflect(Resource, MapEntities)]
struct Inventory {
    items: BTreeMap<String, u32>,
    gold: u64,
    #[entities]
    holder: Option<Entity>,
}

fn app() -> App {
    let mut app = App::new();
    app.register_saveable::<Tag>()
        .register_saveable::<Position>()
        .register_saveable::<Stats>()
        .register_saveable::<Target>()
        .register_saveable::<Follows>()
        .register_saveable::<Inventory>();
    app
}

fn stats(level: u8) -> Stats {
    Stats {
        level,
        title: format!("Knight {level}"),
        tags: vec!["brave".into(), "tired".into()],
        nickname: level.is_multiple_of(2).then(|| "Sir".into()),
        resist: HashMap::from([("fire".into(), 0.5), ("ice".into(), 0.25)]),
        mood: match level % 3 {
            0 => Mood::Calm,
            1 => Mood::Angry {
                rage: u32::from(level),
            },
            _ => Mood::Scared(1.5),
        },
    }
}

/// A hierarchy three levels deep with ordered siblings, cross references both ways, a
/// resource pointing at an entity, and an unsaved entity.
fn populate(world: &mut World) -> Entity {
    let root = world
        .spawn((Saveable, Tag(1), Position { x: 1.0, y: 2.0 }, stats(1)))
        .id();
    let mut children = Vec::new();
    for i in 0..3 {
        let child = world
            .spawn((
                Saveable,
                Tag(10 + i),
                Position {
                    x: i as f32,
                    y: -1.0,
                },
                ChildOf(root),
            ))
            .id();
        children.push(child);
        for j in 0..2 {
            world.spawn((
                Saveable,
                Tag(100 + i * 10 + j),
                stats(j as u8 + 2),
                ChildOf(child),
            ));
        }
    }
    // Reverse the root's children so their order differs from spawn order.
    world.entity_mut(root).detach_all_children();
    for &child in children.iter().rev() {
        world.entity_mut(child).insert(ChildOf(root));
    }
    let loner = world
        .spawn((Saveable, Tag(2), Target(children[1]), Unregistered(9)))
        .id();
    world.spawn((
        Saveable,
        Tag(3),
        Follows {
            leader: loner,
            distance: 4.5,
        },
        Target(root),
    ));
    let unsaved = world.spawn(Tag(999)).id();
    world.spawn((Saveable, Tag(4), Target(unsaved)));
    world.insert_resource(Inventory {
        items: BTreeMap::from([("potion".into(), 3), ("key".into(), 1)]),
        gold: 250,
        holder: Some(root),
    });
    root
}

/// Everything saved, described by tags so it can be compared across worlds.
#[derive(Debug, PartialEq)]
struct Described {
    tag: Tag,
    position: Option<Position>,
    stats: Option<Stats>,
    target: Option<Option<Tag>>,
    follows: Option<(Option<Tag>, f32)>,
    parent: Option<Tag>,
    children: Vec<Tag>,
}

fn describe(world: &mut World) -> (Vec<Described>, Option<(Inventory, Option<Tag>)>) {
    let tag_of = |world: &World, entity: Entity| world.get::<Tag>(entity).copied();
    let mut query = world.query_filtered::<Entity, With<Saveable>>();
    let entities: Vec<Entity> = query.iter(world).collect();
    let mut described: Vec<Described> = entities
        .into_iter()
        .map(|entity| Described {
            tag: *world.get::<Tag>(entity).unwrap(),
            position: world.get::<Position>(entity).cloned(),
            stats: world.get::<Stats>(entity).cloned(),
            target: world.get::<Target>(entity).map(|t| tag_of(world, t.0)),
            follows: world
                .get::<Follows>(entity)
                .map(|f| (tag_of(world, f.leader), f.distance)),
            parent: world
                .get::<ChildOf>(entity)
                .and_then(|c| tag_of(world, c.parent())),
            children: world
                .get::<Children>(entity)
                .map(|c| c.iter().filter_map(|e| tag_of(world, e)).collect())
                .unwrap_or_default(),
        })
        .collect();
    described.sort_by_key(|d| d.tag);
    let inventory = world
        .get_resource::<Inventory>()
        .cloned()
        .map(|mut inventory| {
            // Entity ids differ between worlds: compare the holder by its tag.
            let holder = inventory.holder.take().and_then(|h| tag_of(world, h));
            (inventory, holder)
        });
    (described, inventory)
}

fn decode(
    world: &World,
    snapshot: &snapshot::Snapshot,
) -> Result<snapshot::DecodedSnapshot, SnapshotError> {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let types = types.read();
    snapshot::decode(&snapshot.blob, snapshot.state_hash, &registry, &types)
}

fn load(world: &mut World, snapshot: &snapshot::Snapshot, mode: LoadMode) -> ApplyReport {
    let decoded = decode(world, snapshot).unwrap();
    snapshot::apply(world, decoded, mode)
}

#[test]
fn a_world_round_trips_with_hierarchy_references_and_resources() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    let mut before = describe(world);
    // Tag(4) points at an entity that is not saved: after a load that reference is a placeholder.
    before
        .0
        .iter_mut()
        .find(|d| d.tag == Tag(4))
        .unwrap()
        .target = Some(None);
    let snapshot = snapshot::capture(world).unwrap();
    assert_eq!(snapshot.entities, 13);
    assert_eq!(snapshot.resources, 1);

    // Wreck the saved state: move, despawn, change the resource, add a stray saveable entity.
    let mut positions = world.query::<&mut Position>();
    for mut position in positions.iter_mut(world) {
        position.x += 100.0;
    }
    let mut tags = world.query::<(Entity, &Tag)>();
    let victim = tags.iter(world).find(|(_, t)| t.0 == 11).unwrap().0;
    world.despawn(victim);
    world.resource_mut::<Inventory>().gold = 0;
    world.spawn((Saveable, Tag(77)));

    let report = load(world, &snapshot, LoadMode::Respawn);
    assert_eq!(report.entity_map.len(), 13);
    let after = describe(world);
    assert_eq!(after, before);

    // Spot checks that the description really captured what matters.
    let (entities, inventory) = after;
    let root = entities.iter().find(|d| d.tag == Tag(1)).unwrap();
    assert_eq!(
        root.children,
        [Tag(12), Tag(11), Tag(10)],
        "sibling order survives"
    );
    let grandchild = entities.iter().find(|d| d.tag == Tag(110)).unwrap();
    assert_eq!(grandchild.parent, Some(Tag(11)));
    assert_eq!(grandchild.stats.as_ref().unwrap().mood, Mood::Scared(1.5));
    let follower = entities.iter().find(|d| d.tag == Tag(3)).unwrap();
    assert_eq!(follower.follows, Some((Some(Tag(2)), 4.5)));
    let (inventory, holder) = inventory.unwrap();
    assert_eq!((inventory.gold, holder), (250, Some(Tag(1))));
}

#[test]
fn references_to_unsaved_entities_become_placeholders() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    let snapshot = snapshot::capture(world).unwrap();
    let report = load(world, &snapshot, LoadMode::Respawn);
    assert_eq!(report.unmapped_references, 1);
    let mut query = world.query::<(&Tag, &Target)>();
    let (_, target) = query.iter(world).find(|(tag, _)| tag.0 == 4).unwrap();
    assert_eq!(target.0, Entity::PLACEHOLDER);
}

#[test]
fn unregistered_components_are_skipped_not_errors() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    let snapshot = snapshot::capture(world).unwrap();
    load(world, &snapshot, LoadMode::Respawn);
    let mut query = world.query_filtered::<Entity, With<Unregistered>>();
    assert_eq!(query.iter(world).count(), 0, "Unregistered was not saved");
    let mut tags = world.query::<&Tag>();
    assert!(tags.iter(world).any(|t| t.0 == 2), "its entity was");
}

#[test]
fn a_merge_keeps_existing_entities() {
    let mut app = app();
    let world = app.world_mut();
    world.spawn((Saveable, Tag(5), Position { x: 5.0, y: 5.0 }));
    let snapshot = snapshot::capture(world).unwrap();
    let decoded = decode(world, &snapshot).unwrap();
    let report = snapshot::merge(world, decoded);
    assert_eq!(report.despawned, 0);
    let mut query = world.query::<&Tag>();
    assert_eq!(query.iter(world).filter(|t| t.0 == 5).count(), 2);
}

#[test]
fn a_custom_filter_chooses_what_is_saved() {
    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    struct Ephemeral;

    let mut app = app();
    app.register_saveable::<Ephemeral>()
        .set_save_filter(SaveFilter::with_component::<Tag>().without::<Ephemeral>());
    let world = app.world_mut();
    world.spawn(Tag(1));
    world.spawn((Tag(2), Ephemeral));
    world.spawn(Position { x: 0.0, y: 0.0 });
    let snapshot = snapshot::capture(world).unwrap();
    assert_eq!(snapshot.entities, 1);
}

/// Issue 25: a custom filter on a registered marker saves the same entities again after a
/// load; on a marker that is not registered, the save is refused and names it. Before, that
/// save succeeded, the loaded entities lacked the marker, and the next save held none of them.
#[test]
fn a_filter_on_a_marker_that_is_not_saved_is_refused_before_the_second_save_comes_up_empty() {
    #[derive(Component, Reflect, Default)]
    #[reflect(Component)]
    struct Persist;

    let mut saved = app();
    saved
        .register_saveable::<Persist>()
        .set_save_filter(SaveFilter::with_component::<Persist>());
    let world = saved.world_mut();
    world.spawn((Persist, Tag(1)));
    world.spawn((Persist, Tag(2)));
    let first = snapshot::capture(world).unwrap();
    load(world, &first, LoadMode::Respawn);
    assert_eq!(snapshot::capture(world).unwrap().entities, 2);

    #[derive(Component)]
    struct Unsaved;
    let mut unsaved = app();
    unsaved.set_save_filter(SaveFilter::with_component::<Unsaved>());
    let world = unsaved.world_mut();
    world.spawn((Unsaved, Tag(1)));
    let error = snapshot::capture(world).unwrap_err();
    assert!(
        matches!(error, SnapshotError::FilterNotSaved { component } if component.ends_with("Unsaved"))
    );
    let message = error.to_string();
    assert!(
        message.contains("register_saveable::<") && message.contains("Unsaved"),
        "{message}"
    );
}

#[test]
fn capture_is_deterministic_and_the_hash_covers_the_blob() {
    let mut app = app();
    let world = app.world_mut();
    populate(world);
    let first = snapshot::capture(world).unwrap();
    let second = snapshot::capture(world).unwrap();
    assert_eq!(first, second);
    assert_eq!(first.state_hash, snapshot::state_hash(&first.blob));

    let mut damaged = first.clone();
    damaged.blob[10] ^= 1;
    assert!(matches!(
        decode(world, &damaged),
        Err(SnapshotError::Blob(BlobError::HashMismatch { .. }))
    ));
}

#[test]
fn a_hundred_thousand_entities_round_trip() {
    let mut app = app();
    let world = app.world_mut();
    for i in 0..100_000u32 {
        world.spawn((
            Saveable,
            Tag(i),
            Position {
                x: i as f32,
                y: (i % 7) as f32,
            },
        ));
    }
    let snapshot = snapshot::capture(world).unwrap();
    assert_eq!(snapshot.entities, 100_000);
    assert_eq!(snapshot.components, 100_000 * 3);
    let report = load(world, &snapshot, LoadMode::Respawn);
    assert_eq!(report.despawned, 100_000);
    let mut query = world.query::<(&Tag, &Position)>();
    let mut seen = 0u64;
    for (tag, position) in query.iter(world) {
        assert_eq!(position.x, tag.0 as f32);
        seen += u64::from(tag.0);
    }
    assert_eq!(seen, (0..100_000u64).sum::<u64>());
}

/// Spawns a saved child of an unsaved parent, and a saved child of a saved parent.
fn spawn_orphan_and_family(world: &mut World) {
    let unsaved_parent = world.spawn(Tag(50)).id();
    world.spawn((Saveable, Tag(51), ChildOf(unsaved_parent)));
    let saved_parent = world.spawn((Saveable, Tag(52))).id();
    world.spawn((Saveable, Tag(53), ChildOf(saved_parent)));
}

fn assert_orphan_is_a_root(world: &mut World, report: &ApplyReport) {
    assert_eq!(report.dropped_relationships, 1);
    let (described, _) = describe(world);
    let orphan = described.iter().find(|d| d.tag == Tag(51)).unwrap();
    assert_eq!(orphan.parent, None);
    let child = described.iter().find(|d| d.tag == Tag(53)).unwrap();
    assert_eq!(child.parent, Some(Tag(52)));
}

#[test]
fn a_child_whose_parent_was_not_saved_loads_as_a_root() {
    // Into the same world.
    let mut app = app();
    let world = app.world_mut();
    spawn_orphan_and_family(world);
    let snapshot = snapshot::capture(world).unwrap();
    let report = load(world, &snapshot, LoadMode::Respawn);
    assert_orphan_is_a_root(world, &report);

    // Into a fresh world, where `Children` was never registered: the load must still recognise
    // `ChildOf` as a relationship.
    let mut fresh = self::app();
    let report = load(fresh.world_mut(), &snapshot, LoadMode::Respawn);
    assert_orphan_is_a_root(fresh.world_mut(), &report);
}
