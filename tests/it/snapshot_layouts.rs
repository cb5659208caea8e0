//! Saves read by name: each column carries its type's layout, and a load resolves it against
//! the type as the game has it today. One test per change a game makes to a type without
//! bumping its schema version: it loads right, or fails with a typed error naming the type and
//! the field, and never loads a value wrong.
//!
//! Each change is two Rust types with one type path (`#[type_path]`, `#[type_name]`): the one
//! the save was written with, and the one a later build of the game loads it with.

use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, DecodedSnapshot, DroppedField, LoadMode, Saveable, SaveableAppExt, SnapshotError,
};
use serde::{Deserialize, Serialize};

/// Saves one entity holding `value` in an app registering `T` alone, and decodes the save in an
/// app registering `U` alone; the decoded snapshot and the app to apply it to.
fn save_then_decode<T, U>(value: T) -> (App, Result<DecodedSnapshot, SnapshotError>)
where
    T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
    U: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
{
    let mut before = App::new();
    before.register_saveable::<T>();
    before.world_mut().spawn((Saveable, value));
    let saved = snapshot::capture(before.world_mut()).unwrap();
    let mut after = App::new();
    after.register_saveable::<U>();
    let decoded = {
        let world = after.world();
        snapshot::decode(
            &saved.blob,
            saved.state_hash,
            world.resource::<snapshot::SaveRegistry>(),
            &world.resource::<AppTypeRegistry>().read(),
        )
    };
    (after, decoded)
}

/// Saves `value` as `T` and loads it as `U`: the loaded value and the fields dropped.
fn save_then_load<T, U>(value: T) -> Result<(U, Vec<DroppedField>), SnapshotError>
where
    T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
    U: Component + Reflect + FromReflect + TypePath + Clone + bevy::reflect::GetTypeRegistration,
{
    let (mut app, decoded) = save_then_decode::<T, U>(value);
    let report = snapshot::apply(app.world_mut(), decoded?, LoadMode::Respawn);
    let world = app.world_mut();
    let loaded = world.query::<&U>().single(world).unwrap().clone();
    Ok((loaded, report.dropped_fields))
}

mod pos {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Pos"]
    pub struct Before {
        pub x: f32,
        pub y: f32,
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Pos"]
    pub struct After {
        pub y: f32,
        pub x: f32,
    }
}

#[test]
fn swapped_fields_load_by_name_not_position() {
    let (loaded, dropped) =
        save_then_load::<pos::Before, pos::After>(pos::Before { x: 1.0, y: 2.0 }).unwrap();
    assert_eq!(loaded, pos::After { x: 1.0, y: 2.0 });
    assert!(dropped.is_empty());
}

mod stats {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct Before {
        pub hp: u32,
        pub level: u8,
    }

    fn starting_xp() -> u64 {
        100
    }

    /// `xp` added with its own default.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct WithXp {
        pub hp: u32,
        pub level: u8,
        #[reflect(default = "starting_xp")]
        pub xp: u64,
    }

    /// A type with no `Default`, so a field of it has no default to take.
    #[derive(Reflect, Clone, Debug, PartialEq)]
    pub struct Title(pub String);

    /// `title` added with no default anywhere.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct WithTitle {
        pub hp: u32,
        pub level: u8,
        pub title: Title,
    }

    /// `mana` added, a `u32` (whose type has `Default`), without an attribute.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct WithMana {
        pub hp: u32,
        pub mana: u32,
        pub level: u8,
    }

    /// `level` widened from `u8` to `u32`, `hp` from `u32` to `i64`.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct Widened {
        pub hp: i64,
        pub level: u32,
    }

    /// `hp` now a `String`.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct HpText {
        pub hp: String,
        pub level: u8,
    }

    /// `level` now optional.
    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Stats"]
    pub struct OptionalLevel {
        pub hp: u32,
        pub level: Option<u8>,
    }
}

#[test]
fn an_added_field_takes_its_default() {
    let before = stats::Before { hp: 30, level: 4 };
    let (loaded, _) = save_then_load::<_, stats::WithXp>(before.clone()).unwrap();
    assert_eq!(
        loaded,
        stats::WithXp {
            hp: 30,
            level: 4,
            xp: 100
        }
    );
    let (loaded, _) = save_then_load::<_, stats::WithMana>(before).unwrap();
    assert_eq!(
        loaded,
        stats::WithMana {
            hp: 30,
            mana: 0,
            level: 4
        }
    );
}

#[test]
fn an_added_field_without_a_default_is_refused_naming_it() {
    let (_, decoded) = save_then_decode::<_, stats::WithTitle>(stats::Before { hp: 30, level: 4 });
    let error = decoded.err().expect("no default for title").to_string();
    assert!(error.contains("game::Stats.title"), "{error}");
    assert!(error.contains("#[reflect(default)]"), "{error}");
}

#[test]
fn a_widened_field_loads_its_value() {
    let (loaded, _) =
        save_then_load::<_, stats::Widened>(stats::Before { hp: 30, level: 200 }).unwrap();
    assert_eq!(loaded, stats::Widened { hp: 30, level: 200 });
}

#[test]
fn a_field_wrapped_in_an_option_loads_as_some() {
    let (loaded, _) =
        save_then_load::<_, stats::OptionalLevel>(stats::Before { hp: 30, level: 7 }).unwrap();
    assert_eq!(
        loaded,
        stats::OptionalLevel {
            hp: 30,
            level: Some(7)
        }
    );
}

#[test]
fn a_field_whose_type_changed_is_a_typed_error_naming_type_and_field() {
    let (_, decoded) = save_then_decode::<_, stats::HpText>(stats::Before { hp: 30, level: 4 });
    match decoded {
        Err(SnapshotError::LayoutChanged {
            type_path,
            path,
            stored,
            today,
            ..
        }) => {
            assert_eq!(type_path, "game::Stats");
            assert_eq!(path, "game::Stats.hp");
            assert_eq!((stored.as_str(), today.as_str()), ("u32", "String"));
        }
        other => panic!("expected LayoutChanged, got {:?}", other.err()),
    }
}

mod bag {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Bag"]
    pub struct Before {
        pub gold: u32,
        pub note: String,
        pub gems: Vec<u8>,
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Bag"]
    pub struct After {
        pub gold: u32,
        pub gems: Vec<u8>,
    }
}

#[test]
fn a_removed_field_is_dropped_and_listed() {
    let before = bag::Before {
        gold: 12,
        note: "from the old mill".into(),
        gems: vec![3, 1, 4],
    };
    let (loaded, dropped) = save_then_load::<_, bag::After>(before).unwrap();
    assert_eq!(
        loaded,
        bag::After {
            gold: 12,
            gems: vec![3, 1, 4]
        }
    );
    assert_eq!(
        dropped,
        [DroppedField {
            type_path: "game::Bag".into(),
            field: "game::Bag.note".into()
        }]
    );
}

mod door {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Door"]
    pub enum Before {
        Open(u32),
        Locked(u32),
        Sealed { runes: Vec<String>, since: f32 },
        Gone,
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Door"]
    pub enum After {
        Sealed { since: f32, runes: Vec<String> },
        Locked(u32),
        Open(u32),
    }
}

#[test]
fn reordered_variants_load_by_name() {
    let cases = [
        (door::Before::Locked(3), door::After::Locked(3)),
        (door::Before::Open(9), door::After::Open(9)),
        (
            door::Before::Sealed {
                runes: vec!["ka".into(), "lo".into()],
                since: 2.5,
            },
            door::After::Sealed {
                since: 2.5,
                runes: vec!["ka".into(), "lo".into()],
            },
        ),
    ];
    for (before, after) in cases {
        let (loaded, _) = save_then_load::<_, door::After>(before).unwrap();
        assert_eq!(loaded, after);
    }
}

#[test]
fn a_value_in_a_removed_variant_is_refused_naming_it() {
    let (_, decoded) = save_then_decode::<_, door::After>(door::Before::Gone);
    let error = decoded
        .err()
        .expect("Gone is not a Door any more")
        .to_string();
    assert!(error.contains("game::Door::Gone"), "{error}");
}

mod glow {
    use super::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Glow"]
    pub struct Before {
        pub radius: f32,
        pub level: u32,
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Glow"]
    pub struct After {
        pub level: u32,
        pub radius: f32,
    }
}

/// Serde bytes are opaque: a reordered serde type is detected by its reflected layout and
/// refused, never read as garbage.
#[test]
fn a_changed_serde_type_is_refused_not_read_as_garbage() {
    let (_, decoded) = save_then_decode::<_, glow::After>(glow::Before {
        radius: 1.5,
        level: 3,
    });
    match decoded {
        Err(SnapshotError::LayoutChanged { type_path, .. }) => assert_eq!(type_path, "game::Glow"),
        other => panic!("expected LayoutChanged, got {:?}", other.err()),
    }
}

#[test]
fn an_unchanged_serde_type_loads() {
    let value = glow::Before {
        radius: 1.5,
        level: 3,
    };
    let (loaded, _) = save_then_load::<_, glow::Before>(value.clone()).unwrap();
    assert_eq!(loaded, value);
}

/// A serde enum that gained variants: each value's bytes name its variant by index.
mod weather {
    use super::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Weather"]
    pub enum Before {
        Sun,
        Rain { mm: f32 },
    }

    /// `Snow` appended after the stored variants, as Bevy 0.20 appended to `Color`.
    #[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Weather"]
    pub enum Appended {
        Sun,
        Rain { mm: f32 },
        Snow(u8),
    }

    /// `Snow` put first: every stored index now names another variant.
    #[derive(Component, Reflect, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[reflect(Component, Serialize, Deserialize)]
    #[type_path = "game"]
    #[type_name = "Weather"]
    pub enum Inserted {
        Snow(u8),
        Sun,
        Rain { mm: f32 },
    }
}

/// Variants appended to a serde enum keep the stored indices' meaning: old saves load as is.
#[test]
fn a_serde_enum_with_appended_variants_loads() {
    let (loaded, dropped) =
        save_then_load::<_, weather::Appended>(weather::Before::Rain { mm: 4.5 }).unwrap();
    assert_eq!(loaded, weather::Appended::Rain { mm: 4.5 });
    assert!(dropped.is_empty());
    let (loaded, _) = save_then_load::<_, weather::Appended>(weather::Before::Sun).unwrap();
    assert_eq!(loaded, weather::Appended::Sun);
}

/// A variant inserted before stored ones would shift every index: refused, never misread.
#[test]
fn a_serde_enum_with_an_inserted_variant_is_refused() {
    let (_, decoded) = save_then_decode::<_, weather::Inserted>(weather::Before::Sun);
    match decoded {
        Err(SnapshotError::LayoutChanged { type_path, .. }) => {
            assert_eq!(type_path, "game::Weather");
        }
        other => panic!("expected LayoutChanged, got {:?}", other.err()),
    }
}

/// Random values of a type saved with one of its layouts and loaded with another: the load
/// either gives every field the value saved under its name (widened, or wrapped in `Some`, where
/// the type changed so) and its default to a field the save lacks, or fails with a typed error.
/// Never a value read wrong.
mod properties {
    use super::*;
    use bevy::reflect::{PartialReflect, ReflectRef};
    use proptest::prelude::*;

    /// The class a hero has, as the first layout of the game had it.
    #[derive(Reflect, Clone, Debug, PartialEq, Default)]
    #[type_path = "game"]
    #[type_name = "Class"]
    pub enum Class {
        #[default]
        Rogue,
        Warrior(u32),
        Mage {
            mana: f32,
        },
    }

    /// `Class` with its variants in another order.
    #[derive(Reflect, Clone, Debug, PartialEq, Default)]
    #[type_path = "game"]
    #[type_name = "Class"]
    pub enum ClassReordered {
        Mage {
            mana: f32,
        },
        Warrior(u32),
        #[default]
        Rogue,
    }

    /// `Class` without `Rogue`.
    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "game"]
    #[type_name = "Class"]
    pub enum ClassNoRogue {
        Warrior(u32),
        Mage { mana: f32 },
    }

    impl Default for ClassNoRogue {
        fn default() -> Self {
            ClassNoRogue::Warrior(0)
        }
    }

    macro_rules! hero {
        ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
            #[derive(Component, Reflect, Clone, Debug, PartialEq, Default)]
            #[reflect(Component, Default)]
            #[type_path = "game"]
            #[type_name = "Hero"]
            pub struct $name { $(pub $field: $ty),* }
        };
    }

    hero!(Base {
        name: String,
        hp: u32,
        level: u8,
        class: Class
    });
    hero!(Reordered {
        level: u8,
        class: Class,
        hp: u32,
        name: String
    });
    hero!(WithGold {
        name: String,
        gold: u64,
        hp: u32,
        level: u8,
        class: Class
    });
    hero!(NoName {
        hp: u32,
        level: u8,
        class: Class
    });
    hero!(Widened {
        name: String,
        hp: i64,
        level: u32,
        class: Class
    });
    hero!(OptionalLevel { name: String, hp: u32, level: Option<u8>, class: Class });
    hero!(HpText {
        name: String,
        hp: String,
        level: u8,
        class: Class
    });
    hero!(ClassesReordered {
        name: String,
        hp: u32,
        level: u8,
        class: ClassReordered
    });
    hero!(RogueGone {
        name: String,
        hp: u32,
        level: u8,
        class: ClassNoRogue
    });
    hero!(Renamed {
        name: String,
        health: u32,
        level: u8,
        class: Class
    });

    /// One hero's values, from which each layout's value is made.
    #[derive(Clone, Debug)]
    struct Values {
        name: String,
        hp: u32,
        level: u8,
        class: u8,
        power: u32,
        mana: f32,
        gold: u64,
    }

    fn values() -> impl Strategy<Value = Values> {
        (
            ".{0,8}",
            any::<u32>(),
            any::<u8>(),
            0u8..3,
            any::<u32>(),
            -1e6f32..1e6,
            any::<u64>(),
        )
            .prop_map(|(name, hp, level, class, power, mana, gold)| Values {
                name,
                hp,
                level,
                class,
                power,
                mana,
                gold,
            })
    }

    fn class(v: &Values) -> Class {
        match v.class {
            0 => Class::Rogue,
            1 => Class::Warrior(v.power),
            _ => Class::Mage { mana: v.mana },
        }
    }

    /// Saves the hero made from `v` with layout `from` (an index into [`LAYOUTS`]) and loads it
    /// with layout `to`; checks the outcome.
    fn check(from: usize, to: usize, v: &Values) -> Result<(), TestCaseError> {
        let (n, c) = (v.name.clone(), class(v));
        let (hp, level) = (v.hp, v.level);
        let saved: Box<dyn Fn() -> Result<(), TestCaseError>> = match from {
            0 => Box::new(|| {
                load_as(
                    to,
                    Base {
                        name: n.clone(),
                        hp,
                        level,
                        class: c.clone(),
                    },
                )
            }),
            1 => Box::new(|| {
                load_as(
                    to,
                    Reordered {
                        level,
                        class: c.clone(),
                        hp,
                        name: n.clone(),
                    },
                )
            }),
            2 => Box::new(|| {
                load_as(
                    to,
                    WithGold {
                        name: n.clone(),
                        gold: v.gold,
                        hp,
                        level,
                        class: c.clone(),
                    },
                )
            }),
            3 => Box::new(|| {
                load_as(
                    to,
                    NoName {
                        hp,
                        level,
                        class: c.clone(),
                    },
                )
            }),
            4 => Box::new(|| {
                load_as(
                    to,
                    Widened {
                        name: n.clone(),
                        hp: hp.into(),
                        level: level.into(),
                        class: c.clone(),
                    },
                )
            }),
            5 => Box::new(|| {
                let level = (level % 2 == 0).then_some(level);
                load_as(
                    to,
                    OptionalLevel {
                        name: n.clone(),
                        hp,
                        level,
                        class: c.clone(),
                    },
                )
            }),
            6 => Box::new(|| {
                load_as(
                    to,
                    HpText {
                        name: n.clone(),
                        hp: hp.to_string(),
                        level,
                        class: c.clone(),
                    },
                )
            }),
            _ => Box::new(|| {
                load_as(
                    to,
                    Renamed {
                        name: n.clone(),
                        health: hp,
                        level,
                        class: c.clone(),
                    },
                )
            }),
        };
        saved()
    }

    /// Loads `value` with layout `to` and checks it against the saved value.
    fn load_as<T>(to: usize, value: T) -> Result<(), TestCaseError>
    where
        T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
    {
        let saved: Box<dyn PartialReflect> = value.clone_value_for_test();
        match to {
            0 => compare::<T, Base>(value, &*saved),
            1 => compare::<T, Reordered>(value, &*saved),
            2 => compare::<T, WithGold>(value, &*saved),
            3 => compare::<T, NoName>(value, &*saved),
            4 => compare::<T, Widened>(value, &*saved),
            5 => compare::<T, OptionalLevel>(value, &*saved),
            6 => compare::<T, HpText>(value, &*saved),
            7 => compare::<T, ClassesReordered>(value, &*saved),
            8 => compare::<T, RogueGone>(value, &*saved),
            _ => compare::<T, Renamed>(value, &*saved),
        }
    }

    trait CloneForTest {
        fn clone_value_for_test(&self) -> Box<dyn PartialReflect>;
    }

    impl<T: Reflect> CloneForTest for T {
        fn clone_value_for_test(&self) -> Box<dyn PartialReflect> {
            self.reflect_clone().expect("clones").into_partial_reflect()
        }
    }

    fn compare<T, U>(value: T, saved: &dyn PartialReflect) -> Result<(), TestCaseError>
    where
        T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
        U: Component
            + Reflect
            + FromReflect
            + TypePath
            + Clone
            + Default
            + bevy::reflect::GetTypeRegistration,
    {
        match save_then_load::<T, U>(value) {
            Ok((loaded, _)) => {
                let defaults = U::default();
                let (ReflectRef::Struct(loaded_fields), ReflectRef::Struct(saved_fields)) =
                    (loaded.reflect_ref(), saved.reflect_ref())
                else {
                    unreachable!("heroes are structs")
                };
                let ReflectRef::Struct(default_fields) = defaults.reflect_ref() else {
                    unreachable!()
                };
                for (index, (_, field)) in loaded_fields.iter_fields().enumerate() {
                    let name = loaded_fields.name_at(index).unwrap();
                    let expected = saved_fields
                        .field(name)
                        .unwrap_or_else(|| default_fields.field(name).unwrap());
                    prop_assert!(
                        same_value(expected, field),
                        "{name}: saved {expected:?}, loaded {field:?}"
                    );
                }
                Ok(())
            }
            // A typed error naming the stored type: refused, not misread.
            Err(error) => {
                prop_assert!(error.to_string().contains("game::Hero"), "{error}");
                Ok(())
            }
        }
    }

    /// Whether `loaded` holds the value `saved` held: the same number (whatever its integer
    /// type), `Some` of it, or the same variant with the same fields by name.
    fn same_value(saved: &dyn PartialReflect, loaded: &dyn PartialReflect) -> bool {
        if let (Some(a), Some(b)) = (integer(saved), integer(loaded)) {
            return a == b;
        }
        match (saved.reflect_ref(), loaded.reflect_ref()) {
            (_, ReflectRef::Enum(b))
                if b.reflect_type_path().starts_with("core::option::Option<")
                    && !saved
                        .reflect_type_path()
                        .starts_with("core::option::Option<") =>
            {
                b.variant_name() == "Some" && same_value(saved, b.field_at(0).unwrap())
            }
            (ReflectRef::Enum(a), ReflectRef::Enum(b)) => {
                a.variant_name() == b.variant_name()
                    && a.field_len() == b.field_len()
                    && (0..a.field_len()).all(|i| {
                        let field_b = match a.name_at(i) {
                            Some(name) => b.field(name),
                            None => b.field_at(i),
                        };
                        field_b.is_some_and(|fb| same_value(a.field_at(i).unwrap(), fb))
                    })
            }
            _ => saved.reflect_partial_eq(loaded).unwrap_or(false),
        }
    }

    fn integer(value: &dyn PartialReflect) -> Option<i128> {
        macro_rules! try_int {
            ($($ty:ty),*) => {
                $(if let Some(v) = value.try_downcast_ref::<$ty>() { return Some(*v as i128); })*
            };
        }
        try_int!(u8, u16, u32, u64, i8, i16, i32, i64);
        None
    }

    /// Pairs that must load: the edits resolution is for.
    const MUST_LOAD: [(usize, usize); 8] = [
        (0, 1),
        (1, 0),
        (0, 2),
        (2, 0),
        (0, 3),
        (0, 4),
        (0, 5),
        (0, 7),
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn any_edit_loads_right_or_is_refused(
            from in 0usize..8,
            to in 0usize..10,
            v in values(),
        ) {
            check(from, to, &v)?;
        }

        #[test]
        fn the_edits_resolution_is_for_always_load(pair in 0usize..MUST_LOAD.len(), v in values()) {
            let (from, to) = MUST_LOAD[pair];
            // `compare` accepts a refusal; here a refusal is a failure.
            let (n, c) = (v.name.clone(), class(&v));
            let loaded = match (from, to) {
                (0, _) => save_then_decode_ok::<Base>(to, Base { name: n, hp: v.hp, level: v.level, class: c }),
                (1, _) => save_then_decode_ok::<Reordered>(to, Reordered { level: v.level, class: c, hp: v.hp, name: n }),
                _ => save_then_decode_ok::<WithGold>(to, WithGold { name: n, gold: v.gold, hp: v.hp, level: v.level, class: c }),
            };
            prop_assert!(loaded.is_ok(), "{from} → {to}: {:?}", loaded.err());
            check(from, to, &v)?;
        }
    }

    fn save_then_decode_ok<T>(to: usize, value: T) -> Result<(), SnapshotError>
    where
        T: Component + Reflect + FromReflect + TypePath + bevy::reflect::GetTypeRegistration,
    {
        let decoded = match to {
            0 => save_then_decode::<T, Base>(value).1,
            1 => save_then_decode::<T, Reordered>(value).1,
            2 => save_then_decode::<T, WithGold>(value).1,
            3 => save_then_decode::<T, NoName>(value).1,
            4 => save_then_decode::<T, Widened>(value).1,
            5 => save_then_decode::<T, OptionalLevel>(value).1,
            _ => save_then_decode::<T, ClassesReordered>(value).1,
        };
        decoded.map(|_| ())
    }
}

/// What layouts cost in bytes: every column's layout, against the whole blob, for the worlds
/// the benchmarks save (the game world of small components, the real-game world of strings,
/// maps, enums and serde types) at 1k entities; printed for `BENCHMARKS.md`, and held under 5 %.
#[test]
fn layouts_take_a_few_percent_of_a_blob() {
    type World = (
        &'static str,
        fn() -> App,
        fn(&mut bevy::prelude::World, u32),
    );
    let worlds: [World; 3] = [
        (
            "game world",
            crate::common::game_world::app,
            crate::common::game_world::populate,
        ),
        (
            "real-game world",
            crate::common::real_world::app,
            crate::common::real_world::populate,
        ),
        (
            "real-game world, serde types",
            crate::common::real_world::serde_app,
            crate::common::real_world::populate,
        ),
    ];
    for (name, app, populate) in worlds {
        for count in [1_000, 10_000] {
            let mut app = app();
            populate(app.world_mut(), count);
            let saved = snapshot::capture(app.world()).unwrap();
            let table = snapshot::inspect(&saved.blob).unwrap();
            let layout_bytes: usize = table
                .columns
                .iter()
                .map(|column| column.layout.as_ref().map_or(0, |l| l.bytes().len() + 1))
                .sum();
            let share = layout_bytes as f64 / saved.blob.len() as f64;
            println!(
                "{name}, {count} entities: {layout_bytes} layout bytes in a {} byte blob ({:.2} %)",
                saved.blob.len(),
                share * 100.0
            );
            assert!(share < 0.05, "{name} at {count}: {:.2} %", share * 100.0);
        }
    }
}

mod reshaped {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Health"]
    pub struct Before(pub u32);

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Health"]
    pub struct After {
        pub current: f32,
    }
}

/// A type that kept its path but changed its shape: the error says which shapes (the path
/// alone reads the same on both sides).
#[test]
fn a_type_made_another_shape_is_refused_naming_both_shapes() {
    let (_, decoded) = save_then_decode::<_, reshaped::After>(reshaped::Before(40));
    match decoded {
        Err(SnapshotError::LayoutChanged { stored, today, .. }) => assert_eq!(
            (stored.as_str(), today.as_str()),
            ("tuple struct game::Health", "struct game::Health")
        ),
        other => panic!("expected LayoutChanged, got {:?}", other.err()),
    }
}
