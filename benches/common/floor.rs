//! The floor (issue 52): what any saver of a shape's world must at least pay. The world is
//! written by typed serde (postcard) straight from typed queries, values by reference, and read
//! back by typed serde into one bundle per entity, spawned on an entity allocated before the
//! first spawn, so its references (`ChildOf`, entity fields) are remapped before it is spawned:
//! one archetype move per entity. No reflection, no slots, no checksums.
//!
//! Entities are written in kinds, one typed query each (the components that kind of entity
//! has), parents' kinds first: a `ChildOf` spawned before its parent exists is dropped by its
//! hook. Each entity is a [`Row`]: its entity in the saved world (what references to it hold),
//! its parent's, and its values.
//!
//! The shapes' reflection-only types derive serde for this alone (see `shapes.rs`; keepsake
//! and `DynamicWorld` still read them by reflection): the floor is what a hand-written saver
//! pays. The `handles` shape's values are mirrored by hand: a handle is written as its asset
//! path, as ours writes it, and loaded back from that path through the asset server.
//!
//! Used by `benches/shapes.rs` through `#[path]`, next to its `shapes` and `real_world`.

use crate::real_world as rw;
use crate::shapes::{
    Shape, deep, handles, large, many_small as ms, reflect_only as ro, strings_maps as sm, tried,
};
use bevy::asset::AssetPath;
use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::query::{QueryData, QueryFilter, ReadOnlyQueryData};
use bevy::prelude::*;
use bevy_keepsake::snapshot::Saveable;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Saved entity → the entity standing for it in the loaded world.
pub type EntityMap = EntityHashMap<Entity>;

/// One saved entity.
#[derive(Serialize, Deserialize)]
struct Row<V> {
    /// The entity in the saved world: what references to it hold.
    id: Entity,
    parent: Option<Entity>,
    values: V,
}

/// The component values a kind of entity has: the bundle it loads as, and the typed query that
/// reads them by reference when saving (tuples nest past a dozen components).
trait Values: Bundle + DeserializeOwned {
    type Refs: ReadOnlyQueryData + 'static;
}

macro_rules! component_values {
    ($($t:ty),* $(,)?) => { $(impl Values for $t { type Refs = &'static $t; })* };
}

macro_rules! tuple_values {
    ($($v:ident),*) => {
        impl<$($v: Values),*> Values for ($($v,)*) { type Refs = ($($v::Refs,)*); }
    };
}

component_values!(
    Transform,
    Name,
    rw::UnitId,
    rw::Velocity,
    rw::Stats,
    rw::Faction,
    rw::AiState,
    rw::Target,
    rw::Owner,
    rw::Inventory,
    rw::Attributes,
    rw::Appearance,
    rw::Durability,
    rw::Orders,
    tried::Vitals,
    tried::Pickup,
    tried::Wear,
    tried::Banner,
    tried::Tally,
    tried::Orders,
    tried::Nickname,
    tried::ItemKind,
    deep::Node,
    sm::Title,
    sm::Dialogue,
    sm::Tags,
    ms::Flame,
    ms::Frost,
    ms::Spark,
    ms::Venom,
    ms::Ward,
    ms::Haste,
    ms::Slow,
    ms::Stun,
    ms::Bleed,
    ms::Regen,
    ms::Shield,
    ms::Rage,
    ms::Focus,
    ms::Stealth,
    ms::Root,
    ms::Silence,
    large::Waypoints,
    large::Samples,
    ro::Pos,
    ro::Kind,
    ro::Label,
    ro::Bag,
    ro::Charge,
);
tuple_values!(A, B);
tuple_values!(A, B, C);
tuple_values!(A, B, C, D);
tuple_values!(A, B, C, D, E);
tuple_values!(A, B, C, D, E, F);

/// Appends the rows of the saved entities `F` selects, their values read by reference through
/// the typed query of `V` (nothing copied before postcard writes it).
fn write<V: Values, F: QueryFilter + 'static>(world: &mut World, bytes: Vec<u8>) -> Vec<u8>
where
    for<'w, 's> <V::Refs as QueryData>::Item<'w, 's>: Serialize,
{
    let mut query =
        world.query_filtered::<(Entity, Option<&ChildOf>, V::Refs), (With<Saveable>, F)>();
    let rows: Vec<_> = (query.iter(world))
        .map(|(id, child_of, values)| Row {
            id,
            parent: child_of.map(ChildOf::parent),
            values,
        })
        .collect();
    postcard::to_extend(&rows, bytes).expect("the floor's rows encode")
}

/// The next kind's rows, `bytes` moved past them.
fn read<V: DeserializeOwned>(bytes: &mut &[u8]) -> Vec<Row<V>> {
    let (rows, rest) = postcard::take_from_bytes(bytes).expect("the floor's rows decode");
    *bytes = rest;
    rows
}

/// Allocates an entity (nothing spawned, no archetype) for each row: the map every reference is
/// remapped through must be whole before the first spawn.
fn allocate<V>(world: &World, rows: &[Row<V>], map: &mut EntityMap) {
    let allocator = world.entity_allocator();
    map.reserve(rows.len());
    map.extend(rows.iter().map(|row| (row.id, allocator.alloc())));
}

/// Spawns each row on its allocated entity after `remap` mapped its entity fields: its values,
/// `Saveable` and its `ChildOf` in one bundle, so one archetype move each.
fn spawn<V: Bundle>(world: &mut World, rows: Vec<Row<V>>, map: &mut EntityMap, remap: Remap<V>) {
    for Row {
        id,
        parent,
        mut values,
    } in rows
    {
        remap(&mut values, map);
        let entity = map[&id];
        let spawned = match parent {
            Some(parent) => world
                .spawn_at(entity, (Saveable, values, ChildOf(map[&parent])))
                .map(drop),
            None => world.spawn_at(entity, (Saveable, values)).map(drop),
        };
        spawned.expect("an entity allocated for the load spawns");
    }
}

/// Maps the entity fields of a kind's values.
type Remap<V> = fn(&mut V, &mut EntityMap);

/// For the kinds without entity fields.
fn no_refs<V>(_: &mut V, _: &mut EntityMap) {}

/// The floor's save of `world`, a populated world of `shape`.
pub fn save(world: &mut World, shape: Shape) -> Vec<u8> {
    let bytes = Vec::new();
    match shape {
        Shape::RealGame => save_real_game(world, bytes),
        Shape::Tried => {
            let bytes = write::<TriedRoot, With<tried::Banner>>(world, bytes);
            let bytes = write::<TriedUnit, With<tried::Vitals>>(world, bytes);
            let bytes = write::<TriedItem, With<tried::ItemKind>>(world, bytes);
            write::<TriedPickup, With<tried::Pickup>>(world, bytes)
        }
        Shape::Deep => {
            let bytes = write::<DeepNode, Without<ChildOf>>(world, bytes);
            let bytes = write::<DeepNode, DeepInner>(world, bytes);
            write::<DeepNode, DeepLeaf>(world, bytes)
        }
        Shape::StringsMaps => write::<StringsMaps, ()>(world, bytes),
        Shape::ManySmall => write::<ManySmall, ()>(world, bytes),
        Shape::Large => write::<Large, ()>(world, bytes),
        Shape::ReflectOnly => {
            let bytes = write::<ReflectParent, With<ro::Bag>>(world, bytes);
            write::<ReflectChild, Without<ro::Bag>>(world, bytes)
        }
        Shape::Handles => save_handles(world, bytes),
    }
}

/// The floor's load of [`save`]'s `bytes` into `world`, a fresh world of `shape`; returns the
/// saved entity → loaded entity map.
pub fn load(world: &mut World, shape: Shape, mut bytes: &[u8]) -> EntityMap {
    let bytes = &mut bytes;
    let mut map = EntityMap::default();
    match shape {
        Shape::RealGame => load_real_game(world, bytes, &mut map),
        Shape::Tried => {
            let roots = read::<TriedRoot>(bytes);
            let units = read::<TriedUnit>(bytes);
            let items = read::<TriedItem>(bytes);
            let pickups = read::<TriedPickup>(bytes);
            allocate(world, &roots, &mut map);
            allocate(world, &units, &mut map);
            allocate(world, &items, &mut map);
            allocate(world, &pickups, &mut map);
            spawn(world, roots, &mut map, no_refs);
            spawn(world, units, &mut map, no_refs);
            spawn(world, items, &mut map, no_refs);
            spawn(world, pickups, &mut map, no_refs);
        }
        Shape::Deep => {
            let kinds = [(); 3].map(|()| read::<DeepNode>(bytes));
            for rows in &kinds {
                allocate(world, rows, &mut map);
            }
            for rows in kinds {
                spawn(world, rows, &mut map, no_refs);
            }
        }
        Shape::StringsMaps => load_one::<StringsMaps>(world, bytes, &mut map),
        Shape::ManySmall => load_one::<ManySmall>(world, bytes, &mut map),
        Shape::Large => load_one::<Large>(world, bytes, &mut map),
        Shape::ReflectOnly => {
            let parents = read::<ReflectParent>(bytes);
            let children = read::<ReflectChild>(bytes);
            allocate(world, &parents, &mut map);
            allocate(world, &children, &mut map);
            spawn(world, parents, &mut map, no_refs);
            spawn(world, children, &mut map, no_refs);
        }
        Shape::Handles => load_handles(world, bytes, &mut map),
    }
    map
}

/// A shape of one kind of entity, without entity fields.
fn load_one<V: Values>(world: &mut World, bytes: &mut &[u8], map: &mut EntityMap) {
    let rows = read::<V>(bytes);
    allocate(world, &rows, map);
    spawn(world, rows, map, no_refs);
}

// The real-game world: squad roots, units (the first of a squad carries the inventory), their
// equipment, and three resources.
type GameRoot = (rw::UnitId, Name, Transform, rw::Orders, rw::Faction);
type GameUnit = (
    (rw::UnitId, Name, Transform, rw::Velocity, rw::Stats),
    (
        rw::Faction,
        rw::AiState,
        rw::Attributes,
        rw::Appearance,
        rw::Target,
    ),
);
type GameArmed = (GameUnit, rw::Inventory);
type GameGear = (rw::UnitId, rw::Owner, Name, rw::Durability, Transform);
type GameResources = (rw::GameClock, rw::Weather, rw::QuestLog);

fn save_real_game(world: &mut World, bytes: Vec<u8>) -> Vec<u8> {
    let bytes = write::<GameRoot, With<rw::Orders>>(world, bytes);
    let bytes = write::<GameUnit, (With<rw::Stats>, Without<rw::Inventory>)>(world, bytes);
    let bytes = write::<GameArmed, With<rw::Inventory>>(world, bytes);
    let bytes = write::<GameGear, With<rw::Owner>>(world, bytes);
    let resources = (
        world.resource::<rw::GameClock>(),
        world.resource::<rw::Weather>(),
        world.resource::<rw::QuestLog>(),
    );
    postcard::to_extend(&resources, bytes).expect("the floor's resources encode")
}

fn load_real_game(world: &mut World, bytes: &mut &[u8], map: &mut EntityMap) {
    let roots = read::<GameRoot>(bytes);
    let units = read::<GameUnit>(bytes);
    let armed = read::<GameArmed>(bytes);
    let gear = read::<GameGear>(bytes);
    let (resources, _): (GameResources, _) =
        postcard::take_from_bytes(bytes).expect("the floor's resources decode");
    allocate(world, &roots, map);
    allocate(world, &units, map);
    allocate(world, &armed, map);
    allocate(world, &gear, map);
    spawn(world, roots, map, no_refs);
    spawn(world, units, map, remap_unit);
    spawn(world, armed, map, |(unit, _), map| remap_unit(unit, map));
    spawn(world, gear, map, |gear, map| {
        rw::Owner::map_entities(&mut gear.1, map)
    });
    let (clock, weather, quests) = resources;
    world.insert_resource(clock);
    world.insert_resource(weather);
    world.insert_resource(quests);
}

/// A unit's entity fields: its AI's chase target and its `Target`.
fn remap_unit((_, refs): &mut GameUnit, map: &mut EntityMap) {
    rw::AiState::map_entities(&mut refs.1, map);
    rw::Target::map_entities(&mut refs.4, map);
}

// `tried`: squad roots, their units, the units' items, loose pickups.
type TriedRoot = (Transform, Name, tried::Banner, tried::Tally);
type TriedUnit = (
    Transform,
    Name,
    tried::Vitals,
    tried::Orders,
    tried::Nickname,
    tried::Tally,
);
type TriedItem = (Transform, Name, tried::ItemKind, tried::Wear);
type TriedPickup = (Transform, Name, tried::Pickup);

// `deep`: roots, then inner nodes, then leaves. Parents come before their children within the
// inner nodes too: the saved world's inner-node table holds them in the order they got their
// first child, and a binary tree spawned breadth first gives a parent its first child before
// any of its children gets one.
type DeepNode = (Transform, Name, deep::Node);
type DeepInner = (With<ChildOf>, With<Children>);
type DeepLeaf = (With<ChildOf>, Without<Children>);

type StringsMaps = (Name, sm::Title, sm::Dialogue, sm::Tags);
type ManySmall = (
    (ms::Flame, ms::Frost, ms::Spark, ms::Venom),
    (ms::Ward, ms::Haste, ms::Slow, ms::Stun),
    (ms::Bleed, ms::Regen, ms::Shield, ms::Rage),
    (ms::Focus, ms::Stealth, ms::Root, ms::Silence),
);
type Large = (large::Waypoints, large::Samples);
// `reflect-only`: parents (each with a bag), then their children.
type ReflectChild = (ro::Pos, ro::Kind, ro::Label, ro::Charge);
type ReflectParent = (ReflectChild, ro::Bag);

/// `handles::Look` mirrored by hand for writing: its image handle as its asset path.
#[derive(Serialize)]
struct LookOut<'a> {
    image: &'a AssetPath<'static>,
    tint: Vec4,
    flip_x: bool,
}

/// [`LookOut`] read back.
#[derive(Deserialize)]
struct LookIn {
    image: AssetPath<'static>,
    tint: Vec4,
    flip_x: bool,
}

/// A sprite: its `Transform`, its `Look`, its `Emblem`'s asset path when it has one.
type SpriteIn = (Transform, LookIn, Option<AssetPath<'static>>);

fn save_handles(world: &mut World, bytes: Vec<u8>) -> Vec<u8> {
    let mut query = world.query_filtered::<
        (Entity, &Transform, &handles::Look, Option<&handles::Emblem>),
        With<Saveable>,
    >();
    let rows: Vec<_> = (query.iter(world))
        .map(|(id, transform, look, emblem)| {
            let look = LookOut {
                image: look
                    .image
                    .path()
                    .expect("a handle loaded from a path has it"),
                tint: look.tint,
                flip_x: look.flip_x,
            };
            let emblem = emblem.map(|emblem| emblem.0.path().expect("loaded from a path"));
            Row {
                id,
                parent: None,
                values: (transform, look, emblem),
            }
        })
        .collect();
    postcard::to_extend(&rows, bytes).expect("the floor's rows encode")
}

fn load_handles(world: &mut World, bytes: &mut &[u8], map: &mut EntityMap) {
    let rows = read::<SpriteIn>(bytes);
    allocate(world, &rows, map);
    let server = world.resource::<AssetServer>().clone();
    for row in rows {
        let (transform, look, emblem) = row.values;
        let look = handles::Look {
            image: server.load(look.image),
            tint: look.tint,
            flip_x: look.flip_x,
        };
        let sprite = (Saveable, transform, look);
        let entity = map[&row.id];
        let spawned = match emblem {
            Some(path) => {
                let emblem = handles::Emblem(server.load::<handles::Art>(path).untyped());
                world.spawn_at(entity, (sprite, emblem)).map(drop)
            }
            None => world.spawn_at(entity, sprite).map(drop),
        };
        spawned.expect("an entity allocated for the load spawns");
    }
}
