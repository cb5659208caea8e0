//! A world shaped like a real Bevy game's, for benchmarks and round-trip checks: a three-level
//! hierarchy (`ChildOf`: squads → units → equipment), components holding `Entity` references
//! (`#[entities]`, also inside enums and options), enums with unit, tuple and struct variants,
//! `String`, `Vec`, `Option`, `HashMap`, nested structs and glam types. Most types are
//! reflection-only (`#[derive(Component, Reflect)] #[reflect(Component)]`, no serde), as most
//! games write them; a few are serde types, and three resources (two reflection-only).
//!
//! The reflection-only types also derive serde's traits without reflecting them
//! (`#[reflect(Serialize)]` is absent), so [`app`] writes them through reflection while
//! [`serde_app`] writes the same world with their serde implementations: the two must produce
//! the same value bytes (their columns' layouts differ: a serde-registered type's is
//! `TypeLayout::Serde`).
//!
//! Every saved entity carries a [`UnitId`]; [`rows`] describes a world by those ids (entity
//! references and parents as the referenced entity's id), so two worlds can be compared
//! whatever their `Entity` values.
#![allow(dead_code)]

use bevy::ecs::entity::{EntityHashMap, EntityMapper};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::world_serialization::DynamicWorldBuilder;
use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};
use serde::{Deserialize, Serialize};

/// The stable id every saved entity has (serde type).
#[derive(
    Component, Reflect, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize,
)]
#[reflect(Component, Serialize, Deserialize)]
pub struct UnitId(pub u32);

/// Serde type holding a glam vector.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Velocity(pub Vec3);

/// Reflection-only: a flat struct of numbers.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Stats {
    pub hp: f32,
    pub max_hp: f32,
    pub level: u8,
    pub xp: u32,
    pub armor: i16,
    pub alive: bool,
}

/// Reflection-only enum with unit, tuple and struct variants.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub enum Faction {
    Neutral,
    Player(u8),
    Clan { name: String, rank: u16 },
}

/// Reflection-only enum whose variants hold entity references and glam types.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub enum AiState {
    Idle,
    Patrol(Vec<Vec2>),
    Chase {
        #[entities]
        target: Entity,
        since: f32,
    },
    Flee(Vec3, f32),
}

/// Reflection-only: an optional entity reference.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Target {
    #[entities]
    pub entity: Option<Entity>,
    pub priority: i32,
}

/// Reflection-only: which unit carries a piece of equipment (a second reference next to
/// `ChildOf`).
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Owner(#[entities] pub Entity);

/// A nested struct inside [`Inventory`].
#[derive(Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemStack {
    pub item: u32,
    pub count: u16,
    pub label: Option<String>,
}

/// Reflection-only: a `Vec` of nested structs.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Inventory {
    pub stacks: Vec<ItemStack>,
    pub gold: u64,
}

/// Reflection-only: a map from names to values.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Attributes(pub HashMap<String, f32>);

/// Reflection-only: glam types, an option of one, an array.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Appearance {
    pub scale: Vec2,
    pub tint: Option<Vec4>,
    pub facing: Quat,
    pub layer: i8,
    pub palette: [u8; 4],
}

/// A serde type on equipment.
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component, Serialize, Deserialize)]
pub struct Durability {
    pub current: u16,
    pub max: u16,
}

/// Reflection-only: a squad's orders (on the roots).
#[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[reflect(Component)]
pub struct Orders {
    pub waypoints: Vec<Vec3>,
    pub formation: Formation,
    pub motto: String,
}

/// A nested enum.
#[derive(Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Formation {
    Line,
    Wedge { spacing: f32 },
    Circle(f32),
}

/// Reflection-only resource.
#[derive(Resource, Reflect, Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[reflect(Resource)]
pub struct GameClock {
    pub tick: u64,
    pub time_of_day: f32,
    pub paused: bool,
}

/// Reflection-only resource with an enum.
#[derive(Resource, Reflect, Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[reflect(Resource)]
pub enum Weather {
    #[default]
    Clear,
    Rain {
        intensity: f32,
    },
    Storm(u8, Vec2),
}

/// Serde resource with a map and a list.
#[derive(Resource, Reflect, Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[reflect(Resource, Serialize, Deserialize)]
pub struct QuestLog {
    pub done: Vec<String>,
    pub active: HashMap<u32, u8>,
}

/// An app saving the real-game types: serde types through `register_saveable_serde`, the
/// reflection-only ones through `register_saveable`.
pub fn app() -> App {
    let mut app = App::new();
    app.register_saveable_serde::<UnitId>()
        .register_saveable_serde::<Velocity>()
        .register_saveable_serde::<Durability>()
        .register_saveable_serde::<Transform>()
        .register_saveable_serde::<Name>()
        .register_saveable_serde::<QuestLog>()
        .register_saveable::<Stats>()
        .register_saveable::<Faction>()
        .register_saveable::<AiState>()
        .register_saveable::<Target>()
        .register_saveable::<Owner>()
        .register_saveable::<Inventory>()
        .register_saveable::<Attributes>()
        .register_saveable::<Appearance>()
        .register_saveable::<Orders>()
        .register_saveable::<GameClock>()
        .register_saveable::<Weather>();
    app
}

/// [`app`] with every type registered with `register_saveable_serde`.
pub fn serde_app() -> App {
    let mut app = App::new();
    app.register_saveable_serde::<UnitId>()
        .register_saveable_serde::<Velocity>()
        .register_saveable_serde::<Durability>()
        .register_saveable_serde::<Transform>()
        .register_saveable_serde::<Name>()
        .register_saveable_serde::<QuestLog>()
        .register_saveable_serde::<Stats>()
        .register_saveable_serde::<Faction>()
        .register_saveable_serde::<AiState>()
        .register_saveable_serde::<Target>()
        .register_saveable_serde::<Owner>()
        .register_saveable_serde::<Inventory>()
        .register_saveable_serde::<Attributes>()
        .register_saveable_serde::<Appearance>()
        .register_saveable_serde::<Orders>()
        .register_saveable_serde::<GameClock>()
        .register_saveable_serde::<Weather>();
    app
}

/// A deterministic xorshift generator (the benchmark world shapes draw from it too).
pub(crate) struct Rng(u64);

impl Rng {
    /// The generator at its fixed seed.
    pub(crate) fn new() -> Self {
        Rng(0x2545_F491_4F6C_DD1D)
    }

    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 32) as u32
    }

    pub(crate) fn unit(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 24) as f32
    }

    pub(crate) fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

const NAMES: [&str; 6] = ["goblin", "archer", "merchant", "wolf", "guard", "slime"];
const CLANS: [&str; 3] = ["Red Hand", "Iron Circle", "Ashen"];
const ATTRIBUTES: [&str; 5] = ["strength", "agility", "wits", "luck", "charm"];

/// Spawns about `count` saveable entities (rounded down to whole squads of ten: one squad root,
/// three units under it, two pieces of equipment under each unit) and the resources.
pub fn populate(world: &mut World, count: u32) {
    let mut rng = Rng::new();
    let mut next_id = 0u32;
    let mut id = || {
        next_id += 1;
        UnitId(next_id)
    };
    let mut previous_unit: Option<Entity> = None;
    for squad in 0..count / 10 {
        let root = world
            .spawn((
                Saveable,
                id(),
                Name::new(format!("squad {squad}")),
                Transform::from_xyz(rng.unit() * 1000.0, rng.unit() * 1000.0, 0.0),
                orders(&mut rng, squad),
                Faction::Clan {
                    name: CLANS[squad as usize % CLANS.len()].to_owned(),
                    rank: rng.below(10) as u16,
                },
            ))
            .id();
        for member in 0..3u32 {
            let unit = spawn_unit(world, &mut rng, id(), root, previous_unit, squad, member);
            for slot in 0..2u32 {
                spawn_equipment(world, &mut rng, id(), unit, slot);
            }
            previous_unit = Some(unit);
        }
    }
    world.insert_resource(GameClock {
        tick: 123_456,
        time_of_day: 0.75,
        paused: false,
    });
    world.insert_resource(Weather::Storm(3, Vec2::new(0.5, -1.0)));
    world.insert_resource(QuestLog {
        done: vec!["prologue".to_owned(), "the bridge".to_owned()],
        active: HashMap::from_iter([(7, 2), (9, 0), (12, 5)]),
    });
}

fn orders(rng: &mut Rng, squad: u32) -> Orders {
    Orders {
        waypoints: (0..1 + squad % 4)
            .map(|_| Vec3::new(rng.unit() * 500.0, rng.unit() * 500.0, 0.0))
            .collect(),
        formation: match squad % 3 {
            0 => Formation::Line,
            1 => Formation::Wedge {
                spacing: 1.5 + rng.unit(),
            },
            _ => Formation::Circle(rng.unit() * 10.0),
        },
        motto: format!("hold the line #{squad}"),
    }
}

fn spawn_unit(
    world: &mut World,
    rng: &mut Rng,
    id: UnitId,
    squad_root: Entity,
    previous_unit: Option<Entity>,
    squad: u32,
    member: u32,
) -> Entity {
    let ai = match rng.below(4) {
        0 => AiState::Idle,
        1 => AiState::Patrol(
            (0..1 + rng.below(3))
                .map(|_| Vec2::new(rng.unit(), rng.unit()))
                .collect(),
        ),
        2 => match previous_unit {
            Some(target) => AiState::Chase {
                target,
                since: rng.unit() * 30.0,
            },
            None => AiState::Idle,
        },
        _ => AiState::Flee(Vec3::new(rng.unit(), rng.unit(), 0.0), rng.unit()),
    };
    let faction = match member {
        0 => Faction::Neutral,
        _ => Faction::Player((squad % 4) as u8),
    };
    let attributes = (0..1 + rng.below(ATTRIBUTES.len() as u32))
        .map(|k| (ATTRIBUTES[k as usize].to_owned(), rng.unit() * 20.0))
        .collect();
    let mut unit = world.spawn((
        Saveable,
        id,
        ChildOf(squad_root),
        Name::new(format!("{} {}", NAMES[id.0 as usize % NAMES.len()], id.0)),
        Transform::from_xyz(rng.unit() * 10.0, rng.unit() * 10.0, 0.0)
            .with_rotation(Quat::from_rotation_z(rng.unit() * std::f32::consts::TAU)),
        Velocity(Vec3::new(rng.unit() - 0.5, rng.unit() - 0.5, 0.0) * 40.0),
        Stats {
            hp: (rng.unit() * 100.0).round(),
            max_hp: 100.0,
            level: 1 + rng.below(60) as u8,
            xp: rng.below(100_000),
            armor: rng.below(200) as i16 - 50,
            alive: rng.below(10) != 0,
        },
        faction,
        ai,
        Attributes(attributes),
        Appearance {
            scale: Vec2::splat(0.5 + rng.unit()),
            tint: (rng.below(3) == 0).then(|| Vec4::new(rng.unit(), rng.unit(), rng.unit(), 1.0)),
            facing: Quat::from_rotation_z(rng.unit()),
            layer: rng.below(8) as i8 - 4,
            palette: [1, 2, rng.below(255) as u8, 4],
        },
    ));
    unit.insert(Target {
        entity: previous_unit,
        priority: rng.below(5) as i32 - 2,
    });
    if member == 0 {
        unit.insert(Inventory {
            stacks: (0..1 + rng.below(4))
                .map(|k| ItemStack {
                    item: 100 + k * 7 + rng.below(13),
                    count: 1 + rng.below(99) as u16,
                    label: (k == 0).then(|| format!("stack of {}", id.0)),
                })
                .collect(),
            gold: u64::from(rng.below(1_000_000)),
        });
    }
    unit.id()
}

fn spawn_equipment(world: &mut World, rng: &mut Rng, id: UnitId, unit: Entity, slot: u32) {
    world.spawn((
        Saveable,
        id,
        ChildOf(unit),
        Owner(unit),
        Name::new(if slot == 0 { "sword" } else { "shield" }),
        Durability {
            current: rng.below(100) as u16,
            max: 100,
        },
        Transform::from_xyz(0.2 * slot as f32, 0.0, 0.0),
    ));
}

/// One saved entity, described independently of `Entity` values: references are replaced by a
/// made-up entity whose index is the referenced entity's [`UnitId`] (`PLACEHOLDER` when the
/// target has none).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: UnitId,
    pub parent: Option<Entity>,
    pub name: Option<Name>,
    pub transform: Option<Transform>,
    pub velocity: Option<Velocity>,
    pub stats: Option<Stats>,
    pub faction: Option<Faction>,
    pub ai: Option<AiState>,
    pub target: Option<Target>,
    pub owner: Option<Owner>,
    pub inventory: Option<Inventory>,
    pub attributes: Option<Attributes>,
    pub appearance: Option<Appearance>,
    pub durability: Option<Durability>,
    pub orders: Option<Orders>,
}

/// Maps entities to the made-up entity of their [`UnitId`].
struct ById(EntityHashMap<Entity>);

impl EntityMapper for ById {
    fn get_mapped(&mut self, source: Entity) -> Entity {
        self.0.get(&source).copied().unwrap_or(Entity::PLACEHOLDER)
    }

    fn set_mapped(&mut self, _: Entity, _: Entity) {}
}

fn cloned<T: Component + Clone>(world: &World, entity: Entity) -> Option<T> {
    world.get::<T>(entity).cloned()
}

fn mapped<T: Component + Clone>(world: &World, entity: Entity, ids: &mut ById) -> Option<T> {
    let mut value = world.get::<T>(entity).cloned()?;
    T::map_entities(&mut value, ids);
    Some(value)
}

/// Every entity with a [`UnitId`], sorted by id, plus the resources.
pub fn rows(world: &mut World) -> (Vec<Row>, Resources) {
    let mut query = world.query::<(Entity, &UnitId)>();
    let by_id: Vec<(Entity, UnitId)> = query.iter(world).map(|(e, id)| (e, *id)).collect();
    let mut ids = ById(
        by_id
            .iter()
            .map(|&(entity, id)| (entity, Entity::from_raw_u32(id.0).unwrap()))
            .collect(),
    );
    let world = &*world;
    let mut rows: Vec<Row> = by_id
        .iter()
        .map(|&(entity, id)| Row {
            id,
            parent: world
                .get::<ChildOf>(entity)
                .map(|child_of| ids.get_mapped(child_of.parent())),
            name: cloned(world, entity),
            transform: cloned(world, entity),
            velocity: cloned(world, entity),
            stats: cloned(world, entity),
            faction: cloned(world, entity),
            ai: mapped(world, entity, &mut ids),
            target: mapped(world, entity, &mut ids),
            owner: mapped(world, entity, &mut ids),
            inventory: cloned(world, entity),
            attributes: cloned(world, entity),
            appearance: cloned(world, entity),
            durability: cloned(world, entity),
            orders: cloned(world, entity),
        })
        .collect();
    rows.sort_by_key(|row| row.id);
    let resources = Resources {
        clock: world.get_resource::<GameClock>().cloned(),
        weather: world.get_resource::<Weather>().cloned(),
        quests: world.get_resource::<QuestLog>().cloned(),
    };
    (rows, resources)
}

/// The saved resources.
#[derive(Clone, Debug, PartialEq)]
pub struct Resources {
    pub clock: Option<GameClock>,
    pub weather: Option<Weather>,
    pub quests: Option<QuestLog>,
}

/// A `DynamicWorld` of exactly what [`app`] saves: the saveable entities with the registered
/// components (`ChildOf` included, nothing Bevy derives such as `GlobalTransform` or
/// `Children`), and the three resources.
pub fn dynamic_world_builder<'w>(
    world: &'w mut World,
    types: &'w bevy::reflect::TypeRegistry,
) -> DynamicWorldBuilder<'w> {
    let mut saved = world.query_filtered::<Entity, With<Saveable>>();
    let entities: Vec<Entity> = saved.iter(world).collect();
    DynamicWorldBuilder::from_world(world, types)
        .deny_all()
        .allow_component::<Saveable>()
        .allow_component::<ChildOf>()
        .allow_component::<UnitId>()
        .allow_component::<Velocity>()
        .allow_component::<Durability>()
        .allow_component::<Transform>()
        .allow_component::<Name>()
        .allow_component::<Stats>()
        .allow_component::<Faction>()
        .allow_component::<AiState>()
        .allow_component::<Target>()
        .allow_component::<Owner>()
        .allow_component::<Inventory>()
        .allow_component::<Attributes>()
        .allow_component::<Appearance>()
        .allow_component::<Orders>()
        .allow_resource::<GameClock>()
        .allow_resource::<Weather>()
        .allow_resource::<QuestLog>()
        .extract_entities(entities.into_iter())
        .extract_resources()
}
