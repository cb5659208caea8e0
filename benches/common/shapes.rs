//! The family of benchmark worlds (issue 24): every snapshot and frame target is judged on the
//! worst of these shapes, not on one flattering world. Each shape builds at any entity count
//! (the benches use 1k, 10k and 100k), says which types it registers (so `DynamicWorld` extracts
//! exactly what keepsake saves), and can change a chosen fraction of its entities, for the
//! incremental-capture and frame measurements.
//!
//! Used by `benches/shapes.rs`, `benches/frame_time.rs` and `benches/layouts.rs` (through
//! `#[path]`), next to `real_world.rs`, which this module expects as its sibling `real_world`.
//!
//! The reflection-only types also derive serde without reflecting it (`#[reflect(Serialize)]`
//! is absent), so keepsake and `DynamicWorld` still read them by reflection: only the typed
//! floor of `floor.rs` (issue 52) writes them through serde.
#![allow(dead_code)]

use super::real_world::{self, Rng};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder, WorldFilter};
use bevy_keepsake::snapshot::{Saveable, SaveableAppExt};
use serde::{Deserialize, Serialize};
use std::any::TypeId;

/// One world shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `real_world.rs`: squads → 3 units → 2 equipment, entity references, enums, maps; mostly
    /// reflection-only types.
    RealGame,
    /// The world issue 24 was found on: 90 % in squads → 4 units → 1 item each, strings,
    /// `HashMap<String, u32>`, `Option`, enums with `Vec` data, serde and reflection-only types.
    Tried,
    /// Binary trees six levels deep: 62 of every 63 entities are children.
    Deep,
    /// Strings, `Vec<String>` and `HashMap<String, u32>` of a dozen entries on every entity.
    StringsMaps,
    /// Sixteen small reflection-only components on every entity.
    ManySmall,
    /// Two large components per entity (`Vec`s of 48 and 96 elements).
    Large,
    /// Reflection-only everything (no type has serde), a two-level hierarchy.
    ReflectOnly,
    /// Sprites: a `Transform` and a sprite-like value with an asset handle on every entity.
    Handles,
}

impl Shape {
    /// Every shape, in report order.
    pub const ALL: [Shape; 8] = [
        Shape::RealGame,
        Shape::Tried,
        Shape::Deep,
        Shape::StringsMaps,
        Shape::ManySmall,
        Shape::Large,
        Shape::ReflectOnly,
        Shape::Handles,
    ];

    /// The shape's name in benchmark ids and logs.
    pub fn name(self) -> &'static str {
        match self {
            Shape::RealGame => "real-game",
            Shape::Tried => "tried",
            Shape::Deep => "deep",
            Shape::StringsMaps => "strings-maps",
            Shape::ManySmall => "many-small",
            Shape::Large => "large",
            Shape::ReflectOnly => "reflect-only",
            Shape::Handles => "handles",
        }
    }

    /// The shapes to run: `KEEPSAKE_BENCH_SHAPES` (comma-separated names) when set, else all.
    pub fn from_env() -> Vec<Shape> {
        match std::env::var("KEEPSAKE_BENCH_SHAPES") {
            Ok(list) => list
                .split(',')
                .map(|name| {
                    let name = name.trim();
                    *Shape::ALL
                        .iter()
                        .find(|shape| shape.name() == name)
                        .unwrap_or_else(|| panic!("no world shape is called {name:?}"))
                })
                .collect(),
            Err(_) => Shape::ALL.to_vec(),
        }
    }

    /// An app with the shape's saveable types registered (no plugins).
    pub fn app(self) -> App {
        let mut app = match self {
            Shape::RealGame => real_world::app(),
            _ => App::new(),
        };
        app.init_resource::<ShapeTypes>();
        // `DynamicWorld` saves and loads `Children` (see `dynamic_world`): its reflection
        // deserializer needs it and its field's `Vec<Entity>` registered. Keepsake reads
        // neither.
        app.register_type::<Children>()
            .register_type::<Vec<Entity>>();
        match self {
            Shape::RealGame => {}
            Shape::Tried => tried::register(&mut app),
            Shape::Deep => deep::register(&mut app),
            Shape::StringsMaps => strings_maps::register(&mut app),
            Shape::ManySmall => many_small::register(&mut app),
            Shape::Large => large::register(&mut app),
            Shape::ReflectOnly => reflect_only::register(&mut app),
            Shape::Handles => handles::register(&mut app),
        }
        app
    }

    /// Spawns `count` saveable entities of the shape (the real-game world rounds down to whole
    /// squads of ten).
    pub fn populate(self, world: &mut World, count: u32) {
        match self {
            Shape::RealGame => real_world::populate(world, count),
            Shape::Tried => tried::populate(world, count),
            Shape::Deep => deep::populate(world, count),
            Shape::StringsMaps => strings_maps::populate(world, count),
            Shape::ManySmall => many_small::populate(world, count),
            Shape::Large => large::populate(world, count),
            Shape::ReflectOnly => reflect_only::populate(world, count),
            Shape::Handles => handles::populate(world, count),
        }
    }

    /// A populated app of the shape.
    pub fn populated(self, count: u32) -> App {
        let mut app = self.app();
        self.populate(app.world_mut(), count);
        app
    }

    /// `DynamicWorld`'s extraction of what keepsake saves of the world: the saveable entities
    /// with the registered components, `ChildOf`, `Children` and the `Saveable` marker (and,
    /// for the real-game world, its resources).
    ///
    /// `Children` too because `DynamicWorld::write_to_world` inserts every component with the
    /// relationship hooks skipped: from `ChildOf` alone it loads parents that do not list their
    /// children (a world a capture walks as roots alone), and it skips the hook work our load
    /// pays (issue 53). With both sides of the relationship it loads the saved hierarchy, as a
    /// Bevy scene does.
    pub fn dynamic_world(self, world: &mut World) -> DynamicWorld {
        let types = world.resource::<AppTypeRegistry>().clone();
        let types = types.read();
        if self == Shape::RealGame {
            let mut dw = real_world::dynamic_world_builder(world, &types).build();
            for entry in &mut dw.entities {
                if let Some(children) = world.get::<Children>(entry.entity) {
                    let children = children.reflect_clone().expect("Children clones");
                    entry.components.push(children.into_partial_reflect());
                }
            }
            return dw;
        }
        let mut filter = WorldFilter::deny_all()
            .allow::<Saveable>()
            .allow::<ChildOf>()
            .allow::<Children>();
        for &id in &world.resource::<ShapeTypes>().0 {
            filter = filter.allow_by_id(id);
        }
        let entities = saved_entities(world);
        DynamicWorldBuilder::from_world(world, &types)
            .with_component_filter(filter)
            .deny_all_resources()
            .extract_entities(entities.into_iter())
            .build()
    }

    /// Calls `job` with the component the shape's motion changes: a `Transform` for most
    /// shapes; the map, the long `Vec` or the reflection-only position for the others, so a
    /// change costs what re-encoding that shape's values costs. The one place that says which.
    fn with_moving<J: MovingJob>(self, job: J) -> J::Output {
        match self {
            Shape::StringsMaps => job.run::<strings_maps::Tags>(),
            Shape::ManySmall => job.run::<many_small::Flame>(),
            Shape::Large => job.run::<large::Samples>(),
            Shape::ReflectOnly => job.run::<reflect_only::Pos>(),
            _ => job.run::<Transform>(),
        }
    }

    /// Changes the value of `entity` that the shape's motion changes.
    pub fn touch(self, world: &mut World, entity: Entity) {
        self.with_moving(Touch(world, entity));
    }

    /// Clones the value [`touch`] changes of each of `entities` through its type's own `Clone`
    /// (no reflection): what the main thread would pay to *copy* the changed values at a save
    /// and leave their encoding to the pool. The copies are returned, to be dropped untimed.
    ///
    /// [`touch`]: Self::touch
    pub fn copy(self, world: &World, entities: &[Entity]) -> Box<dyn std::any::Any> {
        self.with_moving(CopyValues(world, entities))
    }

    /// Adds the system that moves the entities of [`Movers`] every frame, as [`touch`] does.
    ///
    /// [`touch`]: Self::touch
    pub fn add_motion(self, app: &mut App) {
        self.with_moving(AddMotion(app));
    }
}

/// Something done with a shape's moving component type ([`Shape::with_moving`]).
trait MovingJob {
    type Output;
    fn run<T: Movable>(self) -> Self::Output;
}

/// [`Shape::touch`].
struct Touch<'w>(&'w mut World, Entity);

impl MovingJob for Touch<'_> {
    type Output = ();
    fn run<T: Movable>(self) {
        if let Some(mut value) = self.0.get_mut::<T>(self.1) {
            value.nudge();
        }
    }
}

/// [`Shape::copy`].
struct CopyValues<'w>(&'w World, &'w [Entity]);

impl MovingJob for CopyValues<'_> {
    type Output = Box<dyn std::any::Any>;
    fn run<T: Movable>(self) -> Self::Output {
        let CopyValues(world, entities) = self;
        let copies: Vec<T> = entities
            .iter()
            .filter_map(|&entity| world.get::<T>(entity).cloned())
            .collect();
        Box::new(copies)
    }
}

/// [`Shape::add_motion`].
struct AddMotion<'a>(&'a mut App);

impl MovingJob for AddMotion<'_> {
    type Output = ();
    fn run<T: Movable>(self) {
        self.0.add_systems(Update, motion::<T>);
    }
}

/// The component types a shape registered, for `DynamicWorld`'s filter.
#[derive(Resource, Default)]
pub struct ShapeTypes(Vec<TypeId>);

/// Registers `T` through serde and records it in [`ShapeTypes`].
fn with_serde<T>(app: &mut App)
where
    T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
    T: Serialize + for<'de> Deserialize<'de>,
{
    app.register_saveable_serde::<T>();
    app.world_mut()
        .resource_mut::<ShapeTypes>()
        .0
        .push(TypeId::of::<T>());
}

/// Registers `T` through reflection only and records it in [`ShapeTypes`].
fn with_reflect<T>(app: &mut App)
where
    T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
{
    app.register_saveable::<T>();
    app.world_mut()
        .resource_mut::<ShapeTypes>()
        .0
        .push(TypeId::of::<T>());
}

/// The saved entities in spawn order (by entity index): a stride over this list spreads a
/// change over every table and piece, as moving units scattered through a world do.
pub fn saved_entities(world: &mut World) -> Vec<Entity> {
    let mut query = world.query_filtered::<Entity, With<Saveable>>();
    let mut entities: Vec<Entity> = query.iter(world).collect();
    entities.sort_by_key(|entity| entity.index());
    entities
}

/// Every `stride`-th entity of `entities`, starting at `offset % stride`: a fraction `1/stride`
/// of the world, spread over all of it.
pub fn every_nth(entities: &[Entity], stride: usize, offset: usize) -> Vec<Entity> {
    entities
        .iter()
        .skip(offset % stride)
        .step_by(stride)
        .copied()
        .collect()
}

/// The `fraction` of `entities` that [`change`] changes in `round`.
pub fn changed(entities: &[Entity], fraction: f64, round: usize) -> Vec<Entity> {
    let stride = (1.0 / fraction).round().max(1.0) as usize;
    every_nth(entities, stride, round)
}

/// Changes `fraction` of `entities` (a different part for each `round`) as `shape`'s motion
/// does, between two change ticks, so a capture after it sees exactly those as changed.
pub fn change(world: &mut World, shape: Shape, entities: &[Entity], fraction: f64, round: usize) {
    world.increment_change_tick();
    for entity in changed(entities, fraction, round) {
        shape.touch(world, entity);
    }
    world.increment_change_tick();
}

/// The entities the frame's motion system moves (the same ones every frame, as a game's moving
/// units are).
#[derive(Resource, Clone, Default)]
pub struct Movers(pub Vec<Entity>);

/// A component the motion changes a little.
pub trait Movable: Component<Mutability = bevy::ecs::component::Mutable> + Clone {
    /// One frame's change.
    fn nudge(&mut self);
}

impl Movable for Transform {
    fn nudge(&mut self) {
        self.translation.x += 0.25;
    }
}

fn motion<T: Movable>(movers: Res<Movers>, mut values: Query<&mut T>) {
    for &entity in &movers.0 {
        if let Ok(mut value) = values.get_mut(entity) {
            value.nudge();
        }
    }
}

/// A random position in the arena.
fn position(rng: &mut Rng) -> Transform {
    Transform::from_xyz(rng.unit() * 1000.0, rng.unit() * 1000.0, 0.0)
}

const WORDS: [&str; 8] = [
    "iron", "amber", "hollow", "crow", "ember", "tide", "moss", "vale",
];

pub mod tried {
    //! Squads of nine (root, 4 units, 1 item under each unit) hold 90 % of the entities; the
    //! rest are loose pickups. Serde: `Transform`, `Name`, `Vitals`, `Pickup`, `Wear`;
    //! reflection-only: `Banner`, `Tally`, `Orders`, `Nickname`, `ItemKind`.
    use super::*;

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    pub struct Vitals {
        pub hp: f32,
        pub max: f32,
        pub level: u8,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    pub struct Pickup {
        pub value: u32,
        pub note: Option<String>,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    pub struct Wear(pub u16);

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Banner {
        pub motto: String,
        pub colors: Vec<u8>,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Tally(pub HashMap<String, u32>);

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub enum Orders {
        Hold,
        Path(Vec<Vec2>),
        Escort { ward: Option<u32>, route: Vec<u16> },
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Nickname(pub Option<String>);

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub enum ItemKind {
        Weapon { damage: u16, mods: Vec<String> },
        Potion(u8),
        Junk,
    }

    pub fn register(app: &mut App) {
        with_serde::<Transform>(app);
        with_serde::<Name>(app);
        with_serde::<Vitals>(app);
        with_serde::<Pickup>(app);
        with_serde::<Wear>(app);
        with_reflect::<Banner>(app);
        with_reflect::<Tally>(app);
        with_reflect::<Orders>(app);
        with_reflect::<Nickname>(app);
        with_reflect::<ItemKind>(app);
    }

    fn tally(rng: &mut Rng, entries: u32) -> Tally {
        Tally(
            (0..entries)
                .map(|k| (WORDS[k as usize].to_owned(), rng.below(1000)))
                .collect(),
        )
    }

    pub fn populate(world: &mut World, count: u32) {
        let mut rng = Rng::new();
        let squads = count / 10;
        for squad in 0..squads {
            let root = world
                .spawn((
                    Saveable,
                    position(&mut rng),
                    Name::new(format!("squad {squad}")),
                    Banner {
                        motto: format!("{} stands #{squad}", WORDS[squad as usize % 8]),
                        colors: vec![1, 2, (squad % 255) as u8],
                    },
                    tally(&mut rng, 4),
                ))
                .id();
            for member in 0..4 {
                spawn_unit(world, &mut rng, root, squad, member);
            }
        }
        for n in 0..count - squads * 9 {
            let note = (n % 3 == 0).then(|| format!("dropped by squad {}", n % 97));
            world.spawn((
                Saveable,
                position(&mut rng),
                Name::new(format!("pickup {n}")),
                Pickup {
                    value: rng.below(500),
                    note,
                },
            ));
        }
    }

    fn spawn_unit(world: &mut World, rng: &mut Rng, root: Entity, squad: u32, member: u32) {
        let orders = match rng.below(3) {
            0 => Orders::Hold,
            1 => Orders::Path(
                (0..1 + rng.below(4))
                    .map(|_| Vec2::splat(rng.unit()))
                    .collect(),
            ),
            _ => Orders::Escort {
                ward: (member > 0).then_some(squad * 9 + member),
                route: (0..rng.below(5) as u16).collect(),
            },
        };
        let entries = 1 + rng.below(3);
        let unit = world
            .spawn((
                Saveable,
                ChildOf(root),
                position(rng),
                Name::new(format!("{} {squad}.{member}", WORDS[member as usize])),
                Vitals {
                    hp: (rng.unit() * 100.0).round(),
                    max: 100.0,
                    level: 1 + rng.below(40) as u8,
                },
                orders,
                Nickname((rng.below(4) == 0).then(|| format!("the {}", WORDS[squad as usize % 8]))),
                tally(rng, entries),
            ))
            .id();
        let kind = match rng.below(3) {
            0 => ItemKind::Weapon {
                damage: rng.below(90) as u16,
                mods: vec!["keen".to_owned(); rng.below(3) as usize],
            },
            1 => ItemKind::Potion(rng.below(5) as u8),
            _ => ItemKind::Junk,
        };
        world.spawn((
            Saveable,
            ChildOf(unit),
            Transform::from_xyz(0.5, 0.0, 0.0),
            Name::new("item"),
            kind,
            Wear(rng.below(100) as u16),
        ));
    }
}

pub mod deep {
    //! Binary trees of 63 entities, six levels deep (the last tree may be cut short): 62 of
    //! every 63 entities have a parent.
    use super::*;

    /// Where a node sits in its tree (reflection-only).
    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Node {
        pub depth: u8,
        pub branch: u16,
        pub weight: f32,
    }

    const TREE: u32 = 63;

    pub fn register(app: &mut App) {
        with_serde::<Transform>(app);
        with_serde::<Name>(app);
        with_reflect::<Node>(app);
    }

    pub fn populate(world: &mut World, count: u32) {
        let mut rng = Rng::new();
        let mut tree: Vec<Entity> = Vec::with_capacity(TREE as usize);
        for n in 0..count {
            let local = n % TREE;
            if local == 0 {
                tree.clear();
            }
            let depth = (local + 1).ilog2() as u8;
            let mut entity = world.spawn((
                Saveable,
                position(&mut rng),
                Name::new(format!("node {n}")),
                Node {
                    depth,
                    branch: local as u16,
                    weight: rng.unit(),
                },
            ));
            if local > 0 {
                entity.insert(ChildOf(tree[(local as usize - 1) / 2]));
            }
            tree.push(entity.id());
        }
    }
}

pub mod strings_maps {
    //! Every entity: a `Name`, a serde `Title`, a reflection-only `Dialogue` (a speaker and
    //! three to six lines) and `Tags` (a `HashMap<String, u32>` of 8 to 15 entries).
    use super::*;

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    pub struct Title(pub String);

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Dialogue {
        pub speaker: String,
        pub lines: Vec<String>,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Tags(pub HashMap<String, u32>);

    impl Movable for Tags {
        fn nudge(&mut self) {
            if let Some(count) = self.0.get_mut("seen") {
                *count += 1;
            }
        }
    }

    pub fn register(app: &mut App) {
        with_serde::<Name>(app);
        with_serde::<Title>(app);
        with_reflect::<Dialogue>(app);
        with_reflect::<Tags>(app);
    }

    pub fn populate(world: &mut World, count: u32) {
        let mut rng = Rng::new();
        for n in 0..count {
            let word = |k: u32| WORDS[((n + k) % 8) as usize];
            let lines = (0..3 + rng.below(4))
                .map(|k| format!("The {} by the {} remembers line {k}.", word(k), word(k + 3)))
                .collect();
            let mut tags: HashMap<String, u32> = (0..7 + rng.below(8))
                .map(|k| (format!("{}-{k}", word(k)), rng.below(10_000)))
                .collect();
            tags.insert("seen".to_owned(), 0);
            world.spawn((
                Saveable,
                Name::new(format!("{} of the {} {n}", word(1), word(2))),
                Title(format!("Keeper of {}", word(5))),
                Dialogue {
                    speaker: format!("{} {}", word(4), n),
                    lines,
                },
                Tags(tags),
            ));
        }
    }
}

pub mod many_small {
    //! Sixteen small reflection-only component types (a struct of two fields each) on every
    //! entity, so each value is a few bytes and the per-value and per-column costs dominate.
    use super::*;

    macro_rules! small_components {
        ($($name:ident),*) => {
            $(
                #[derive(Component, Reflect, Default, Clone, Serialize, Deserialize)]
                #[reflect(Component, Default)]
                pub struct $name {
                    pub level: u8,
                    pub charge: f32,
                }
            )*

            pub fn register(app: &mut App) {
                $(with_reflect::<$name>(app);)*
            }

            pub fn populate(world: &mut World, count: u32) {
                for n in 0..count {
                    let mut entity = world.spawn(Saveable);
                    $(entity.insert($name { level: (n % 7) as u8, charge: n as f32 * 0.25 });)*
                }
            }
        };
    }

    small_components!(
        Flame, Frost, Spark, Venom, Ward, Haste, Slow, Stun, Bleed, Regen, Shield, Rage, Focus,
        Stealth, Root, Silence
    );

    impl Movable for Flame {
        fn nudge(&mut self) {
            self.charge += 0.5;
        }
    }

    /// An app with the sixteen types registered and nothing else (the layouts bench's world).
    pub fn app() -> App {
        Shape::ManySmall.app()
    }
}

pub mod large {
    //! Few, large components: a reflection-only `Waypoints` (48 `Vec2`) and a serde `Samples`
    //! (96 `u16`) on every entity, about 500 bytes of values per entity.
    use super::*;

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Waypoints(pub Vec<Vec2>);

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    pub struct Samples(pub Vec<u16>);

    impl Movable for Samples {
        fn nudge(&mut self) {
            self.0[0] = self.0[0].wrapping_add(1);
        }
    }

    pub fn register(app: &mut App) {
        with_reflect::<Waypoints>(app);
        with_serde::<Samples>(app);
    }

    pub fn populate(world: &mut World, count: u32) {
        let mut rng = Rng::new();
        for _ in 0..count {
            let waypoints = (0..48)
                .map(|_| Vec2::new(rng.unit(), rng.unit()) * 100.0)
                .collect();
            let samples = (0..96).map(|_| rng.below(4096) as u16).collect();
            world.spawn((Saveable, Waypoints(waypoints), Samples(samples)));
        }
    }
}

pub mod reflect_only {
    //! No type has serde: a position, an enum with data, a label, a bag on one entity in four
    //! and an option, in groups of a parent and three children.
    use super::*;

    #[derive(Component, Reflect, Clone, Default, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Pos {
        pub x: f32,
        pub y: f32,
        pub z: f32,
    }

    impl Movable for Pos {
        fn nudge(&mut self) {
            self.x += 0.25;
        }
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub enum Kind {
        Plain,
        Tagged(u32, Vec<u16>),
        Named { name: String, rank: u8 },
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Label(pub String);

    #[derive(Reflect, Clone, Serialize, Deserialize)]
    pub struct Slot {
        pub id: u32,
        pub count: u16,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Bag {
        pub slots: Vec<Slot>,
        pub gold: u64,
    }

    #[derive(Component, Reflect, Clone, Serialize, Deserialize)]
    #[reflect(Component)]
    pub struct Charge(pub Option<u32>);

    pub fn register(app: &mut App) {
        with_reflect::<Pos>(app);
        with_reflect::<Kind>(app);
        with_reflect::<Label>(app);
        with_reflect::<Bag>(app);
        with_reflect::<Charge>(app);
    }

    pub fn populate(world: &mut World, count: u32) {
        let mut rng = Rng::new();
        let mut parent = None;
        for n in 0..count {
            let kind = match n % 3 {
                0 => Kind::Plain,
                1 => Kind::Tagged(rng.below(99), (0..rng.below(6) as u16).collect()),
                _ => Kind::Named {
                    name: format!("{} {n}", WORDS[n as usize % 8]),
                    rank: rng.below(9) as u8,
                },
            };
            let pos = Pos {
                x: rng.unit() * 100.0,
                y: rng.unit() * 100.0,
                z: 0.0,
            };
            let label = Label(format!("thing {n}"));
            let charge = Charge((n % 2 == 0).then(|| rng.below(100)));
            let mut entity = world.spawn((Saveable, pos, kind, label, charge));
            if n % 4 == 0 {
                entity.insert(Bag {
                    slots: (0..1 + rng.below(4))
                        .map(|k| Slot {
                            id: 100 + k,
                            count: rng.below(50) as u16,
                        })
                        .collect(),
                    gold: u64::from(rng.below(10_000)),
                });
                parent = Some(entity.id());
            } else if let Some(parent) = parent {
                entity.insert(ChildOf(parent));
            }
        }
    }
}

/// "p50 … ms, p99 … ms (n runs)" of `samples`, for the benches that judge a p99 (criterion
/// reports means); `None` when nothing was timed (filtered out on the command line).
pub fn percentiles(samples: &mut [std::time::Duration]) -> Option<String> {
    if samples.is_empty() {
        return None;
    }
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    Some(format!(
        "p50 {:.3} ms, p99 {:.3} ms ({} runs)",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples.len()
    ))
}

pub mod handles {
    //! Sprites, as a 2D game has them: every entity a serde `Transform` and a reflection-only
    //! `Look` like Bevy's `Sprite` (an image handle loaded by path, a tint, a flip), one in four
    //! also an `Emblem` holding an untyped handle. The motion moves the `Transform`s. The app
    //! has Bevy's `AssetPlugin`, so build it after the task pools exist (the handles are loaded
    //! through the `AssetServer`).
    use super::*;
    use bevy::asset::UntypedHandle;

    /// The asset behind the handles. Nothing is ever loaded (no loader reads `.art` files): a
    /// handle only needs its path to be saved. Registered for reflection, as an untyped
    /// handle's asset type must be.
    #[derive(Asset, Reflect)]
    pub struct Art;

    #[derive(Component, Reflect, Clone)]
    #[reflect(Component)]
    pub struct Look {
        pub image: Handle<Art>,
        pub tint: Vec4,
        pub flip_x: bool,
    }

    #[derive(Component, Reflect, Clone)]
    #[reflect(Component)]
    pub struct Emblem(pub UntypedHandle);

    pub fn register(app: &mut App) {
        app.add_plugins(AssetPlugin::default())
            .init_asset::<Art>()
            .register_type::<Art>();
        with_serde::<Transform>(app);
        with_reflect::<Look>(app);
        with_reflect::<Emblem>(app);
    }

    pub fn populate(world: &mut World, count: u32) {
        let server = world.resource::<AssetServer>().clone();
        let images: Vec<Handle<Art>> = (0..64)
            .map(|n| server.load(format!("art/sprite-{n}.art")))
            .collect();
        let mut rng = Rng::new();
        for n in 0..count as usize {
            let look = Look {
                image: images[n % images.len()].clone(),
                tint: Vec4::new(1.0, rng.unit(), 0.5, 1.0),
                flip_x: n % 2 == 0,
            };
            let mut entity = world.spawn((Saveable, position(&mut rng), look));
            if n % 4 == 0 {
                entity.insert(Emblem(images[(n / 4) % images.len()].clone().untyped()));
            }
        }
    }
}
