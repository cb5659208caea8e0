//! Saves written by an older version of a game: types dropped, renamed and changed.

use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, DecodedSnapshot, LoadMode, SaveRegistry, Saveable, SaveableAppExt, Snapshot,
    SnapshotError,
};

/// The game as it was when the saves were written.
mod old_game {
    use bevy::prelude::*;

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Health"]
    pub struct Health(pub u32);

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game::old_module"]
    #[type_name = "Speed"]
    pub struct Speed(pub f32);

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Mana"]
    pub struct Mana(pub u16);
}

/// The game today: `Health` changed shape, `Speed` moved module, `Mana` was removed.
mod new_game {
    use bevy::prelude::*;

    /// `Health` as version 1 stored it, kept only to read old saves.
    #[derive(Reflect, Clone, Debug, PartialEq)]
    #[type_path = "game::legacy"]
    #[type_name = "HealthV1"]
    pub struct HealthV1(pub u32);

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game"]
    #[type_name = "Health"]
    pub struct Health {
        pub current: f32,
        pub max: f32,
    }

    impl From<HealthV1> for Health {
        fn from(old: HealthV1) -> Self {
            Health {
                current: old.0 as f32,
                max: 100.0,
            }
        }
    }

    #[derive(Component, Reflect, Clone, Debug, PartialEq)]
    #[reflect(Component)]
    #[type_path = "game::movement"]
    #[type_name = "Speed"]
    pub struct Speed(pub f32);
}

fn old_save() -> Snapshot {
    let mut app = App::new();
    app.register_saveable::<old_game::Health>()
        .register_saveable::<old_game::Speed>()
        .register_saveable::<old_game::Mana>();
    let world = app.world_mut();
    world.spawn((
        Saveable,
        old_game::Health(40),
        old_game::Speed(2.5),
        old_game::Mana(7),
    ));
    world.spawn((Saveable, old_game::Health(90)));
    snapshot::capture(world).unwrap()
}

fn new_app() -> App {
    let mut app = App::new();
    app.register_saveable::<new_game::Health>()
        .register_saveable_migration::<new_game::HealthV1, new_game::Health>(1)
        .register_saveable::<new_game::Speed>()
        .register_saveable_rename::<new_game::Speed>("game::old_module::Speed");
    app
}

fn decode(world: &World, snapshot: &Snapshot) -> Result<DecodedSnapshot, SnapshotError> {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    snapshot::decode(
        &snapshot.blob,
        snapshot.state_hash,
        &registry,
        &types.read(),
    )
}

#[test]
fn an_old_save_loads_through_migration_alias_and_skipping() {
    let old = old_save();
    let mut app = new_app();
    let world = app.world_mut();
    let decoded = decode(world, &old).unwrap();
    assert_eq!(decoded.entity_count(), 2);
    let skipped = decoded.skipped_types().to_vec();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].type_path, "game::Mana");
    assert_eq!(skipped[0].values, 1);

    let report = snapshot::apply(world, decoded, LoadMode::Respawn);
    assert_eq!(report.skipped_types, skipped);
    let mut query = world.query::<(&new_game::Health, Option<&new_game::Speed>)>();
    let mut loaded: Vec<_> = query
        .iter(world)
        .map(|(health, speed)| (health.clone(), speed.cloned()))
        .collect();
    loaded.sort_by(|a, b| a.0.current.total_cmp(&b.0.current));
    assert_eq!(
        loaded,
        [
            (
                new_game::Health {
                    current: 40.0,
                    max: 100.0
                },
                Some(new_game::Speed(2.5))
            ),
            (
                new_game::Health {
                    current: 90.0,
                    max: 100.0
                },
                None
            ),
        ]
    );
}

#[test]
fn a_new_save_of_the_migrated_type_round_trips_at_the_new_version() {
    let mut app = new_app();
    let world = app.world_mut();
    world.spawn((
        Saveable,
        new_game::Health {
            current: 3.0,
            max: 8.0,
        },
    ));
    let saved = snapshot::capture(world).unwrap();
    let decoded = decode(world, &saved).unwrap();
    snapshot::apply(world, decoded, LoadMode::Respawn);
    let mut query = world.query::<&new_game::Health>();
    assert_eq!(
        query.single(world).unwrap(),
        &new_game::Health {
            current: 3.0,
            max: 8.0
        }
    );
}

#[test]
fn a_version_without_a_migration_is_a_typed_error_and_the_world_is_untouched() {
    // Today's game has Health at version 2 (one migration): a build that never registered the
    // migration sees an unknown version.
    let mut newer = new_app();
    let saved = {
        let world = newer.world_mut();
        world.spawn((
            Saveable,
            new_game::Health {
                current: 1.0,
                max: 2.0,
            },
        ));
        snapshot::capture(world).unwrap()
    };
    let mut app = App::new();
    app.register_saveable::<new_game::Health>();
    let world = app.world_mut();
    world.spawn((
        Saveable,
        new_game::Health {
            current: 5.0,
            max: 5.0,
        },
    ));
    let error = decode(world, &saved).err().unwrap();
    assert!(
        matches!(&error, SnapshotError::UnknownTypeVersion { type_path, found: 2, current: 1 } if type_path == "game::Health"),
        "{error}"
    );
    assert!(
        error.to_string().contains("register_saveable_migration"),
        "{error}"
    );
    let mut query = world.query::<&new_game::Health>();
    assert_eq!(query.single(world).unwrap().current, 5.0);
}

/// A tuple struct with a field left out of every save, in the middle, gains a field: the
/// stored fields after the skipped one keep their positions (the skipped one takes its default
/// at its own index, not the next stored value).
mod skipping_tuple {
    pub mod old {
        use bevy::prelude::*;

        #[derive(Component, Reflect, Default, Clone, Debug, PartialEq)]
        #[reflect(Component, Default)]
        #[type_path = "game"]
        #[type_name = "Meter"]
        pub struct Meter(pub f32, #[reflect(skip_serializing)] pub f32, pub f32);
    }
    pub mod new {
        use bevy::prelude::*;

        #[derive(Component, Reflect, Default, Clone, Debug, PartialEq)]
        #[reflect(Component, Default)]
        #[type_path = "game"]
        #[type_name = "Meter"]
        pub struct Meter(
            pub f32,
            #[reflect(skip_serializing)] pub f32,
            pub f32,
            #[reflect(default)] pub u8,
        );
    }
}

#[test]
fn a_changed_tuple_struct_keeps_the_fields_after_a_skipped_one_in_place() {
    use skipping_tuple::{new, old};
    let mut old_app = App::new();
    old_app.register_saveable::<old::Meter>();
    old_app
        .world_mut()
        .spawn((Saveable, old::Meter(1.5, 99.0, 2.5)));
    let saved = snapshot::capture(old_app.world_mut()).unwrap();

    let mut app = App::new();
    app.register_saveable::<new::Meter>();
    let decoded = decode(app.world(), &saved).unwrap();
    snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn);
    let world = app.world_mut();
    let meters: Vec<new::Meter> = world.query::<&new::Meter>().iter(world).cloned().collect();
    // The skipped field is not in the save: it takes its default (0.0), and the stored 2.5
    // stays in the third field.
    assert_eq!(meters, [new::Meter(1.5, 0.0, 2.5, 0)]);
}
