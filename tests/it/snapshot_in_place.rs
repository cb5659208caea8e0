//! In-place apply against a full respawn (issue 42): random worlds, random edits, then a
//! snapshot taken before the edits applied in place (through each entry point: a whole-world
//! comparison, a load prepared on the pool with more edits before it lands, a kept rewind
//! point), then captured. The capture must hold what a capture of a world that respawned the
//! snapshot holds, and what the snapshot itself holds, entity ids mapped; and every saved
//! entity still alive before the apply must keep its id.
//!
//! Blobs are compared as `bevy_keepsake::testing::SavedValues`: each entity by the saved id it
//! stands for (through the apply's `entity_map`), each value by its stored layout, each saved
//! parent's saved children in the blob's order. Root order and entity ids are what a respawn
//! cannot keep, so they are what the form leaves out.
//!
//! References outside the save are where the two differ by design: applied in place, a
//! snapshot of this world keeps a reference to a live entity it neither holds nor keys (the
//! id still names it), where a respawn sets it to `Entity::PLACEHOLDER` and leaves a
//! relationship to it out. So every such reference reads "outside", and a `ChildOf` pointing
//! outside is left out of the form, as the respawn leaves it out of the world.

use crate::common::edits::{Edits, Hidden, is_ancestor, pick, world_with};
use crate::common::fixtures::Rng;
use crate::common::real_world::{Stats, Target};
use bevy::prelude::*;
use bevy_keepsake::snapshot::{
    self, ApplyReport, CaptureCache, EntityRecord, KeptSnapshot, LevelKey, LoadMode, SaveRegistry,
    Saveable, SavedIds, Snapshot, SnapshotHistory,
};
use bevy_keepsake::testing::SavedValues;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// The key of the unsaved level root saved entities hang under and point at.
const LEVEL: &str = "level/camp";

/// An unsaved level root (keyed) with a few saved units under it.
fn add_level(world: &mut World) {
    let root = world.spawn(LevelKey::new(LEVEL)).id();
    let units: Vec<Entity> = world
        .query_filtered::<Entity, With<Saveable>>()
        .iter(world)
        .take(5)
        .collect();
    for unit in units {
        world.entity_mut(unit).insert(ChildOf(root));
    }
}

/// Edits the shared roster leaves out: children reordered, units moved under the level root,
/// references to it.
fn more_edits(world: &mut World, rng: &mut Rng, count: u64) {
    let root = world
        .query_filtered::<Entity, With<LevelKey>>()
        .single(world)
        .unwrap();
    for _ in 0..count {
        let Some(entity) = pick(world, rng) else {
            return;
        };
        match rng.below(3) {
            0 => {
                if let Some(mut children) = world.get_mut::<Children>(entity) {
                    children.sort_by_key(|child| std::cmp::Reverse(child.index()));
                }
            }
            1 if !is_ancestor(world, entity, root) => {
                world.entity_mut(entity).insert(ChildOf(root));
            }
            _ => {
                world.entity_mut(entity).insert(Target {
                    entity: Some(root),
                    priority: 3,
                });
            }
        }
    }
}

/// One world's random history: the shared edits, then the extra ones, then a frame.
fn play(world: &mut World, edits: &mut Edits, count: u64) {
    edits.apply(world, count);
    let mut rng = Rng::new(edits.rng.next_u64());
    more_edits(world, &mut rng, count / 3 + 1);
    world.increment_change_tick();
}

fn decode(world: &World, snapshot: &Snapshot) -> snapshot::DecodedSnapshot {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    snapshot::decode(
        &snapshot.blob,
        snapshot.state_hash,
        &registry,
        &types.read(),
    )
    .unwrap()
}

/// How the snapshot is applied in place.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `snapshot::apply` with `LoadMode::InPlace`: the whole world captured and compared.
    Captured,
    /// Prepared against one capture on the pool's side, more edits, applied against another.
    Prepared,
    /// A kept rewind point restored through its reverse deltas.
    Kept,
}

/// The world being applied to and what each path keeps between captures.
struct InPlaceWorld {
    app: App,
    cache: CaptureCache,
    history: SnapshotHistory,
    record: EntityRecord,
}

impl InPlaceWorld {
    /// A capture through the cache, recorded (as the plugin does with every capture).
    fn capture(&mut self) -> snapshot::PendingSnapshot {
        let live = self.cache.capture(self.app.world()).unwrap();
        drop(self.history.record(&live));
        live
    }

    /// Applies `saved` (kept as `kept` at its capture) in place through `path`; `between`
    /// edits the world while a prepared load is on its way. Returns the report and the saved
    /// entities that were alive and saved when the apply landed.
    fn apply(
        &mut self,
        path: Path,
        (saved, kept): (&Snapshot, &KeptSnapshot),
        between: &mut dyn FnMut(&mut World),
    ) -> (ApplyReport, Vec<Entity>) {
        let decoded = decode(self.app.world(), saved);
        if let Path::Captured = path {
            let alive = still_saved(self.app.world_mut(), saved);
            let report = snapshot::apply(self.app.world_mut(), decoded, LoadMode::InPlace);
            return (report, alive);
        }
        let prepared = matches!(path, Path::Prepared).then(|| {
            let live = self.capture();
            let prepared = snapshot::prepare(decoded, &live, &self.record);
            between(self.app.world_mut());
            prepared
        });
        let alive = still_saved(self.app.world_mut(), saved);
        let live = self.capture();
        let world = self.app.world_mut();
        let report = match prepared {
            Some(prepared) => snapshot::apply_prepared(world, prepared, &live, &mut self.record),
            None => snapshot::restore(world, kept, &live, &mut self.record)
                .unwrap()
                .expect("the worlds of these tests hold no States"),
        };
        (report, alive)
    }
}

/// The saved entities of `saved` that are alive and saved in `world`.
fn still_saved(world: &mut World, saved: &Snapshot) -> Vec<Entity> {
    let table = snapshot::inspect(&saved.blob).unwrap();
    let live: BTreeSet<Entity> = world
        .query_filtered::<Entity, With<Saveable>>()
        .iter(world)
        .collect();
    let ids = table
        .entity_ids
        .iter()
        .map(|b| Entity::try_from_bits(b).unwrap());
    ids.filter(|e| live.contains(e)).collect()
}

fn check(seed: u64, path: Path, (before, after): (u64, u64)) {
    let (mut respawned, app) = (world_with(300), world_with(300));
    let mut world = InPlaceWorld {
        app,
        cache: CaptureCache::default(),
        history: SnapshotHistory::default(),
        record: EntityRecord::new(SavedIds::ThisWorld),
    };
    let (mut edits, mut same_edits) = (Edits::new(seed, 5_000_000), Edits::new(seed, 5_000_000));
    for app in [&mut world.app, &mut respawned] {
        add_level(app.world_mut());
    }
    play(world.app.world_mut(), &mut edits, before);
    play(respawned.world_mut(), &mut same_edits, before);
    let saved = snapshot::capture(world.app.world()).unwrap();
    let live = world.cache.capture(world.app.world()).unwrap();
    let kept = world.history.record(&live);
    play(world.app.world_mut(), &mut edits, after);
    play(respawned.world_mut(), &mut same_edits, after);

    let mut between = |w: &mut World| play(w, &mut edits, after / 2 + 1);
    let (report, alive) = world.apply(path, (&saved, &kept), &mut between);
    play(respawned.world_mut(), &mut same_edits, after / 2 + 1);
    let decoded = decode(respawned.world(), &saved);
    let respawn = snapshot::apply(respawned.world_mut(), decoded, LoadMode::Respawn);

    let expected = SavedValues::of(&saved.blob);
    let in_place = snapshot::capture(world.app.world()).unwrap();
    let in_place = SavedValues::loaded(&in_place.blob, &report.entity_map);
    let again = snapshot::capture(respawned.world()).unwrap();
    let again = SavedValues::loaded(&again.blob, &respawn.entity_map);
    in_place.assert_same(&again, &format!("{path:?}: in place and respawned"));
    in_place.assert_same(&expected, &format!("{path:?}: in place and the snapshot"));
    for entity in alive {
        assert!(
            world.app.world().get_entity(entity).is_ok()
                && !report.entity_map.contains_key(&entity),
            "{path:?}: {entity} was alive and saved, and did not keep its id"
        );
    }

    // The same snapshot again, after more play: entities the first apply spawned are found
    // through the record.
    play(world.app.world_mut(), &mut edits, after);
    let (report, _) = world.apply(path, (&saved, &kept), &mut |_| {});
    let in_place = snapshot::capture(world.app.world()).unwrap();
    let in_place = SavedValues::loaded(&in_place.blob, &report.entity_map);
    in_place.assert_same(
        &expected,
        &format!("{path:?}: the second apply and the snapshot"),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn in_place_equals_respawn_after_random_edits(
        seed in 1u64..u64::MAX,
        path in prop_oneof![Just(Path::Captured), Just(Path::Prepared), Just(Path::Kept)],
        before in 0u64..40,
        after in 1u64..40,
    ) {
        check(seed, path, (before, after));
    }
}

#[test]
fn an_in_place_apply_with_nothing_changed_writes_nothing() {
    let mut app = world_with(500);
    add_level(app.world_mut());
    let world = app.world_mut();
    let saved = snapshot::capture(world).unwrap();
    let report = snapshot::apply(world, decode(world, &saved), LoadMode::InPlace);
    assert_eq!(
        (
            report.kept,
            report.written,
            report.inserted,
            report.removed,
            report.spawned
        ),
        (saved.entities, 0, 0, 0, 0)
    );
    assert!(report.entity_map.is_empty() && report.despawned == 0);
}

/// A saved entity the save filter leaves out when the load starts (hidden: no counterpart
/// then) and takes in again before the apply lands is kept, and gets back the saved type it
/// lost, although that type's pieces did not change in between.
#[test]
fn an_entity_matched_only_when_the_apply_lands_gets_the_saved_types_it_lacks() {
    let mut app = world_with(50);
    let world = app.world_mut();
    let unit = (world.query_filtered::<Entity, With<Stats>>().iter(world))
        .next()
        .unwrap();
    let stats = world.get::<Stats>(unit).unwrap().clone();
    let saved = snapshot::capture(world).unwrap();
    world.entity_mut(unit).remove::<Stats>().insert(Hidden);

    let mut cache = CaptureCache::default();
    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    let live = cache.capture(world).unwrap();
    let prepared = snapshot::prepare(decode(world, &saved), &live, &record);
    world.entity_mut(unit).remove::<Hidden>();
    let live = cache.capture(world).unwrap();
    let report = snapshot::apply_prepared(world, prepared, &live, &mut record);

    assert_eq!(world.get::<Stats>(unit), Some(&stats), "{report:?}");
    assert_eq!(report.spawned, 0, "the entity is kept, not spawned again");
}
