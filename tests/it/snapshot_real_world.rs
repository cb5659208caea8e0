//! The real-game world (hierarchy, entity references, enums, maps, mostly reflection-only
//! types): exact round trip through capture, decode and apply, and the `ecs_blob` against
//! Bevy's `DynamicWorld` postcard encoding of the same world.

use crate::common;

use bevy::prelude::*;
use bevy::world_serialization::serde::DynamicWorldSerializer;
use bevy_keepsake::snapshot::schema::TypeLayout;
use bevy_keepsake::snapshot::{self, LoadMode};
use common::real_world;

fn load_into_fresh_app(saved: &snapshot::Snapshot) -> App {
    let mut fresh = real_world::app();
    let world = fresh.world_mut();
    let registry = world.resource::<snapshot::SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decoded =
        snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
    let report = snapshot::apply(world, decoded, LoadMode::Respawn);
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
fn the_real_game_world_rewritten_as_a_version_1_blob_loads_the_same_values() {
    let mut app = real_world::app();
    real_world::populate(app.world_mut(), 500);
    let before = real_world::rows(app.world_mut());
    let saved = snapshot::capture(app.world()).unwrap();
    let v1 = common::blob_v1::without_layouts(&saved.blob);

    // The same table, without layouts.
    let (new, old) = (
        snapshot::inspect(&saved.blob).unwrap(),
        snapshot::inspect(&v1).unwrap(),
    );
    assert_eq!(
        (new.layout_version, old.layout_version),
        (snapshot::BLOB_VERSION, 1)
    );
    assert_eq!(old.entity_ids, new.entity_ids);
    assert_eq!(old.columns.len(), new.columns.len());
    for (old, new) in old.columns.iter().zip(&new.columns) {
        assert!(
            new.layout.is_some() && old.layout.is_none(),
            "{}",
            old.type_path
        );
        assert_eq!(
            (old.type_path, old.schema_version, old.kind),
            (new.type_path, new.schema_version, new.kind)
        );
        assert_eq!(old.rows, new.rows, "{}", old.type_path);
    }
    // The layouts were all it lost: loaded (as today's layouts), the world is the same.
    let v1_saved = snapshot::Snapshot {
        state_hash: snapshot::state_hash(&v1),
        blob: v1,
        ..saved
    };
    let mut fresh = load_into_fresh_app(&v1_saved);
    assert_eq!(real_world::rows(fresh.world_mut()), before);
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

#[test]
fn every_reflection_only_type_of_the_real_game_world_has_a_plan() {
    let app = real_world::app();
    let mut planned = bevy_keepsake::__private::planned_type_paths(app.world());
    planned.sort();
    let short: Vec<&str> = planned
        .iter()
        .map(|path| path.rsplit("::").next().unwrap())
        .collect();
    assert_eq!(
        short,
        [
            "AiState",
            "Appearance",
            "Attributes",
            "Faction",
            "GameClock",
            "Inventory",
            "Orders",
            "Owner",
            "Stats",
            "Target",
            "Weather"
        ]
    );
}

#[test]
fn the_reflection_plan_writes_the_bytes_of_the_reflection_serializer_and_of_serde() {
    let mut reflected = real_world::app();
    let mut serde = real_world::serde_app();
    real_world::populate(reflected.world_mut(), 1_000);
    real_world::populate(serde.world_mut(), 1_000);
    let planned = snapshot::capture(reflected.world()).unwrap();
    let generic = bevy_keepsake::__private::capture_without_plans(reflected.world()).unwrap();
    let with_serde = snapshot::capture(serde.world()).unwrap();
    assert_eq!(
        planned.blob, generic.blob,
        "plan against reflection serializer"
    );
    assert_same_values_with_serde_layouts(&planned.blob, &with_serde.blob);
}

/// Checks that `with_serde` (written by [`real_world::serde_app`]) holds the same entity table
/// and, column by column, the same type paths and rows (owners and value bytes) as `reflected`
/// (written by [`real_world::app`]). Only the columns' layouts differ: each of `with_serde`'s
/// columns has a `TypeLayout::Serde` layout fingerprinted by the reflected layout, where
/// `reflected` has that layout itself for the reflection-only types (and the same serde
/// layout for the types both apps register with serde).
fn assert_same_values_with_serde_layouts(reflected: &[u8], with_serde: &[u8]) {
    let ours = snapshot::inspect(reflected).unwrap();
    let theirs = snapshot::inspect(with_serde).unwrap();
    assert_eq!(ours.layout_version, snapshot::BLOB_VERSION);
    assert_eq!(theirs.layout_version, snapshot::BLOB_VERSION);
    assert_eq!(ours.entity_ids, theirs.entity_ids, "entity table");
    let paths = |table: &snapshot::BlobTable<'_>| -> Vec<String> {
        table
            .columns
            .iter()
            .map(|c| c.type_path.to_owned())
            .collect()
    };
    assert_eq!(paths(&ours), paths(&theirs), "columns");
    let app = real_world::app();
    let reflection_only = bevy_keepsake::__private::planned_type_paths(app.world());
    let mut serde_in_both = 0;
    for (column, serde_column) in ours.columns.iter().zip(&theirs.columns) {
        let path = column.type_path;
        assert_eq!(
            (column.schema_version, column.kind),
            (serde_column.schema_version, serde_column.kind),
            "{path}"
        );
        assert_eq!(column.rows, serde_column.rows, "rows of {path}");
        let (Some(our_layout), Some(their_layout)) = (&column.layout, &serde_column.layout) else {
            panic!("{path} has no layout");
        };
        let (our_layout, their_layout) =
            (our_layout.decode().unwrap(), their_layout.decode().unwrap());
        let TypeLayout::Serde {
            type_path,
            reflected: fingerprint,
        } = &their_layout
        else {
            panic!("{path} is registered with serde, but its layout is {their_layout:?}");
        };
        assert_eq!(type_path, path);
        if reflection_only.contains(&path) {
            assert!(
                !matches!(our_layout, TypeLayout::Serde { .. }),
                "{path} is reflection-only, but its layout is {our_layout:?}"
            );
            assert_eq!(**fingerprint, our_layout, "fingerprint of {path}");
        } else {
            assert_eq!(our_layout, their_layout, "{path} is serde in both apps");
            serde_in_both += 1;
        }
    }
    // UnitId, Velocity, Durability, Transform, Name, QuestLog (those present in the world).
    assert!(serde_in_both > 0 && serde_in_both < ours.columns.len());
}

#[test]
fn the_other_worlds_write_the_same_bytes_with_and_without_plans() {
    let mut game = common::game_world::reflect_app();
    common::game_world::populate(game.world_mut(), 300);
    assert_eq!(
        snapshot::capture(game.world()).unwrap().blob,
        bevy_keepsake::__private::capture_without_plans(game.world())
            .unwrap()
            .blob
    );
    let mut fuzz = common::fuzz_world::app();
    common::fuzz_world::populate(fuzz.world_mut());
    assert!(!bevy_keepsake::__private::planned_type_paths(fuzz.world()).is_empty());
    assert_eq!(
        snapshot::capture(fuzz.world()).unwrap().blob,
        bevy_keepsake::__private::capture_without_plans(fuzz.world())
            .unwrap()
            .blob
    );
}

/// Decodes `saved` with (or without) reflection plans into a fresh app and describes what it
/// loaded: the rows as text (so NaN equals NaN), with each map's entries sorted (a map's order
/// is not part of its value: Bevy's deserializer does not keep it, the plan does).
fn reload_and_describe(saved: &snapshot::Snapshot, plans: bool) -> Result<String, String> {
    let mut fresh = real_world::app();
    let world = fresh.world_mut();
    let registry = world.resource::<snapshot::SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let decode = match plans {
        true => snapshot::decode,
        false => bevy_keepsake::__private::decode_without_plans,
    };
    let decoded = decode(&saved.blob, saved.state_hash, &registry, &types.read())
        .map_err(|error| error.to_string())?;
    snapshot::apply(world, decoded, LoadMode::Respawn);
    let (mut rows, resources) = real_world::rows(world);
    let mut text = String::new();
    for row in &mut rows {
        let mut attributes: Vec<(String, f32)> = row
            .attributes
            .take()
            .map(|a| a.0.into_iter().collect())
            .unwrap_or_default();
        attributes.sort_by(|a, b| a.0.cmp(&b.0));
        text += &format!("{row:?} {attributes:?}\n");
    }
    text += &format!("{resources:?}");
    Ok(text)
}

#[test]
fn the_reflection_plan_reads_what_the_reflection_deserializer_reads() {
    let mut app = real_world::app();
    real_world::populate(app.world_mut(), 1_000);
    let before = real_world::rows(app.world_mut());
    let saved = snapshot::capture(app.world()).unwrap();
    let planned = reload_and_describe(&saved, true).unwrap();
    let generic = reload_and_describe(&saved, false).unwrap();
    assert_eq!(planned, generic);
    assert_eq!(
        real_world::rows(load_into_fresh_app(&saved).world_mut()),
        before
    );
}

mod properties {
    use super::*;
    use bevy::platform::collections::HashMap;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use real_world::{Appearance, Attributes, Faction, Inventory, ItemStack, Stats};

    fn stats() -> impl Strategy<Value = Stats> {
        (
            any::<f32>(),
            any::<f32>(),
            any::<u8>(),
            any::<u32>(),
            any::<i16>(),
            any::<bool>(),
        )
            .prop_map(|(hp, max_hp, level, xp, armor, alive)| Stats {
                hp,
                max_hp,
                level,
                xp,
                armor,
                alive,
            })
    }

    fn faction() -> impl Strategy<Value = Faction> {
        prop_oneof![
            Just(Faction::Neutral),
            any::<u8>().prop_map(Faction::Player),
            (".{0,40}", any::<u16>()).prop_map(|(name, rank)| Faction::Clan { name, rank }),
        ]
    }

    fn appearance() -> impl Strategy<Value = Appearance> {
        (
            any::<[f32; 2]>(),
            proptest::option::of(any::<[f32; 4]>()),
            any::<[f32; 4]>(),
            any::<i8>(),
            any::<[u8; 4]>(),
        )
            .prop_map(|(scale, tint, facing, layer, palette)| Appearance {
                scale: Vec2::from_array(scale),
                tint: tint.map(Vec4::from_array),
                facing: Quat::from_array(facing),
                layer,
                palette,
            })
    }

    fn inventory() -> impl Strategy<Value = Inventory> {
        (
            vec(
                (any::<u32>(), any::<u16>(), proptest::option::of(".{0,12}")),
                0..6,
            ),
            any::<u64>(),
        )
            .prop_map(|(stacks, gold)| Inventory {
                stacks: stacks
                    .into_iter()
                    .map(|(item, count, label)| ItemStack { item, count, label })
                    .collect(),
                gold,
            })
    }

    fn attributes() -> impl Strategy<Value = Attributes> {
        vec((".{0,10}", any::<f32>()), 0..6).prop_map(|pairs| Attributes(HashMap::from_iter(pairs)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any values: the plan writes the reflection serializer's bytes and serde's bytes,
        /// and reads back what the reflection deserializer reads.
        #[test]
        fn plan_bytes_equal_generic_and_serde_bytes(
            values in vec((stats(), faction(), appearance(), inventory(), attributes()), 1..8)
        ) {
            let mut reflected = real_world::app();
            let mut serde = real_world::serde_app();
            for app in [&mut reflected, &mut serde] {
                for (i, (s, f, a, inv, attr)) in values.iter().enumerate() {
                    app.world_mut().spawn((
                        bevy_keepsake::snapshot::Saveable,
                        real_world::UnitId(i as u32),
                        s.clone(), f.clone(), a.clone(), inv.clone(), attr.clone(),
                    ));
                }
            }
            let planned = snapshot::capture(reflected.world()).unwrap();
            let generic = bevy_keepsake::__private::capture_without_plans(reflected.world()).unwrap();
            let with_serde = snapshot::capture(serde.world()).unwrap();
            prop_assert_eq!(&planned.blob, &generic.blob);
            assert_same_values_with_serde_layouts(&planned.blob, &with_serde.blob);
            prop_assert_eq!(
                reload_and_describe(&planned, true).unwrap(),
                reload_and_describe(&planned, false).unwrap()
            );
        }

        /// Damaged values: the plan's reader accepts exactly what the reflection deserializer
        /// accepts, and reads the same values.
        #[test]
        fn plan_reader_agrees_with_the_reflection_deserializer_on_damaged_blobs(
            flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)
        ) {
            let mut app = real_world::app();
            real_world::populate(app.world_mut(), 30);
            let mut saved = snapshot::capture(app.world()).unwrap();
            for (at, byte) in flips {
                let at = at.index(saved.blob.len());
                saved.blob[at] = byte;
            }
            saved.state_hash = snapshot::state_hash(&saved.blob);
            let planned = reload_and_describe(&saved, true);
            let generic = reload_and_describe(&saved, false);
            prop_assert_eq!(planned.is_ok(), generic.is_ok(), "{:?} / {:?}", planned, generic);
            if let (Ok(planned), Ok(generic)) = (planned, generic) {
                prop_assert_eq!(planned, generic);
            }
        }
    }
}
