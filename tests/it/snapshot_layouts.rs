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
    let report = snapshot::apply(app.world_mut(), decoded?, LoadMode::Replace);
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
    let (_, decoded) =
        save_then_decode::<_, stats::WithTitle>(stats::Before { hp: 30, level: 4 });
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
    let error = decoded.err().expect("Gone is not a Door any more").to_string();
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
