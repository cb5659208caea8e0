//! Applying a [`Delta`] to the world, in this order: the keys resolved, the saved entities
//! with no live counterpart spawned empty (so references to them can be remapped), the rows
//! and resources that name a moved entity added, every value to write decoded (a kept snapshot's) or taken
//! (a decoded one's) and remapped, then the world changed: values written over live ones,
//! missing types inserted and lost ones removed (one archetype move per entity), the spawned
//! entities filled, the unclaimed ones despawned, resources written, children put in order,
//! and the record told what was spawned.
//!
//! Values are written before anything is despawned: a kept child of a despawned parent has
//! its new `ChildOf` by then, and one whose saved `ChildOf` still names the despawned parent
//! (an entity the save does not hold) is detached first, so the despawn does not take it
//! along.

use super::counterparts::{Counterparts, EntityRecord, SavedIds};
use super::delta::{Delta, Op, ValueRef};
use super::order::put_in_order;
use super::refs::Moved;
use super::source::Source;
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::capture::DenseIndex;
use crate::snapshot::load::dynamic_bundle::DynamicBundle;
use crate::snapshot::load::entity_mapping::{ResolvedKeys, SavedEntityMapper};
use crate::snapshot::load::report::{ApplyReport, warn_mapping};
use crate::snapshot::load::world_types::{Placement, WorldTypes};
use crate::snapshot::register::{SaveRegistry, SaveableEntry};
use crate::snapshot::value::ValueReader;
use crate::snapshot::value::assets::HandleLoader;
use bevy::asset::AssetServer;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::any::TypeId;
use std::collections::HashMap;

/// Everything [`run`] applies.
pub(super) struct Job<'a> {
    pub(super) registry: &'a SaveRegistry,
    /// The snapshot's saved entities, by dense index.
    pub(super) saved: &'a [Entity],
    pub(super) keys: Vec<(Entity, String)>,
    pub(super) counterparts: &'a Counterparts,
    pub(super) delta: Delta,
    /// Live saved entities no saved entity is.
    pub(super) despawn: Vec<Entity>,
    pub(super) source: &'a mut dyn Source,
}

/// One value ready to go into the world: the live entity, the registry entry and the value.
type Ready = (Entity, usize, Box<dyn Reflect>);

/// Every value of a job, decoded and remapped.
#[derive(Default)]
struct Values {
    /// The values to write, each with whether it is compared with the live one first (see
    /// [`Op::reordered`](super::delta::Op)).
    writes: Vec<(Ready, bool)>,
    inserts: Vec<Ready>,
    spawns: Vec<Ready>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
}

/// What changing the world did, for the report.
#[derive(Default)]
struct Counts {
    written: usize,
    inserted: usize,
    removed: usize,
    dropped_relationships: usize,
    /// Entities whose `ChildOf` changed or that were spawned: their parents' children may be
    /// out of order.
    moved_children: Vec<Entity>,
}

/// Applies `job` to `world` (see the [module docs](self)) and records what it spawned.
pub(super) fn run(world: &mut World, mut job: Job<'_>, record: &mut EntityRecord) -> ApplyReport {
    let types = WorldTypes::new(world, job.registry.entries());
    let keys = std::mem::take(&mut job.keys);
    let keys = ResolvedKeys::resolve(world, job.registry.level_keys(), keys);
    let spawned = spawn_empty(world, &job.counterparts.unmatched());
    let moved = moved_ids(&job, record.saved_ids(), &spawned, &keys);
    add_referencing_rows(&mut job, &types, &moved);
    add_referencing_resources(&mut job, &types, &moved);
    let entity_map = id_map(&job, &spawned);
    let alive = (record.saved_ids() == SavedIds::ThisWorld).then(|| world.entities());
    let mut mapper = SavedEntityMapper::with_map(entity_map.clone(), keys, alive);
    let values = materialize(
        world,
        (&job.delta, &mut *job.source),
        &types,
        &mut mapper,
        &spawned,
    );
    let (unmapped, dropped_references) = (mapper.unmapped, mapper.dropped);
    let mut counts = apply_values(world, &types, values.writes);
    counts.absorb(change_structure(world, &types, values.inserts, &job));
    counts.absorb(fill_spawned(world, &types, values.spawns));
    counts.dropped_relationships += detach_kept_children(world, &job, &spawned);
    let despawned = despawn(world, &job.despawn);
    for (entry, value) in values.resources {
        (types.entries[entry].insert_resource)(world, value);
    }
    put_children_in_order(world, &job, &spawned, counts.moved_children.clone());
    record.note(world, spawned.iter().map(|&(d, live)| (job.saved[d], live)));
    warn_mapping(counts.dropped_relationships, unmapped, &dropped_references);
    ApplyReport {
        entity_map,
        despawned,
        unmapped_references: unmapped,
        dropped_references,
        dropped_relationships: counts.dropped_relationships,
        kept: job.counterparts.len() - spawned.len(),
        written: counts.written,
        inserted: counts.inserted,
        removed: counts.removed,
        spawned: spawned.len(),
        ..ApplyReport::default()
    }
}

/// One empty entity per saved entity with no live counterpart: `(dense, entity)`.
fn spawn_empty(world: &mut World, unmatched: &[usize]) -> Vec<(usize, Entity)> {
    let spawned = unmatched
        .iter()
        .map(|&dense| (dense, world.spawn_empty().id()));
    spawned.collect()
}

/// The saved ids that name another entity after the apply: spawned ones, kept ones the
/// record maps, keyed level entities found under another id or not at all.
fn moved_ids(
    job: &Job<'_>,
    ids: SavedIds,
    spawned: &[(usize, Entity)],
    keys: &ResolvedKeys,
) -> Moved {
    if ids == SavedIds::Elsewhere {
        return Moved::All;
    }
    let spawned = spawned.iter().map(|&(dense, _)| job.saved[dense]);
    let counterparts = job.counterparts;
    let remapped = (0..counterparts.len())
        .filter(|&d| {
            counterparts
                .live(d)
                .is_some_and(|live| live != job.saved[d])
        })
        .map(|d| job.saved[d]);
    Moved::of(spawned.chain(remapped).chain(keys.moved()))
}

/// Saved id → live entity, for the saved entities whose live entity has another id.
fn id_map(job: &Job<'_>, spawned: &[(usize, Entity)]) -> EntityHashMap<Entity> {
    let mut map: EntityHashMap<Entity> = EntityHashMap::default();
    map.extend(
        spawned
            .iter()
            .map(|&(dense, live)| (job.saved[dense], live)),
    );
    let counterparts = job.counterparts;
    for dense in 0..counterparts.len() {
        if let Some(live) = counterparts.live(dense)
            && live != job.saved[dense]
        {
            map.insert(job.saved[dense], live);
        }
    }
    map
}

/// Adds a write for every kept entity's row of a type that can hold an entity whose bytes
/// name a moved id, when nothing else writes it: its reference must be remapped.
fn add_referencing_rows(job: &mut Job<'_>, types: &WorldTypes<'_>, moved: &Moved) {
    if matches!(moved, Moved::None) {
        return;
    }
    let entries = types.entries.iter().enumerate();
    let holding: Vec<usize> = (entries.filter(|(at, _)| types.field_mappers.holds_entities(*at)))
        .map(|(at, _)| at)
        .collect();
    let mut written: HashMap<(Entity, u32), ()> = HashMap::new();
    for op in job.delta.writes.iter().chain(&job.delta.inserts) {
        written.insert((op.entity, op.entry), ());
    }
    for entry in holding {
        let type_path = types.entries[entry].ops.type_path;
        for (dense, bytes, value) in job.source.rows(entry, type_path, job.saved) {
            let Some(entity) = job.counterparts.live(dense) else {
                continue;
            };
            let key = (entity, entry as u32);
            if !written.contains_key(&key) && moved.mentioned_in(&bytes) {
                let value = value.unwrap_or_else(|| job.delta.encoded(&bytes));
                job.delta
                    .writes
                    .push(Op::insert(entity, entry as u32, value));
                written.insert(key, ());
            }
        }
    }
}

/// Adds a write for every saved resource of a type that can hold an entity whose bytes name
/// a moved id, when nothing else writes it: its reference must be remapped (the resource is
/// the same as the live one, but the entity it names came back under another id).
fn add_referencing_resources(job: &mut Job<'_>, types: &WorldTypes<'_>, moved: &Moved) {
    if matches!(moved, Moved::None) {
        return;
    }
    for (at, entry) in types.entries.iter().enumerate() {
        let written = job.delta.resources.iter().any(|&(e, _)| e as usize == at);
        let skip = entry.kind != ColumnKind::Resource || entry.state.is_some() || written;
        if skip || !types.field_mappers.holds_entities(at) {
            continue;
        }
        let Some((bytes, value)) = job.source.resource(at, entry.ops.type_path) else {
            continue;
        };
        if moved.mentioned_in(&bytes) {
            let value = value.unwrap_or_else(|| job.delta.encoded(&bytes));
            job.delta.resources.push((at as u32, value));
        }
    }
}

/// Each value of the job, decoded or taken, and remapped.
fn materialize(
    world: &World,
    (delta, source): (&Delta, &mut dyn Source),
    types: &WorldTypes<'_>,
    mapper: &mut SavedEntityMapper<'_>,
    spawned: &[(usize, Entity)],
) -> Values {
    let type_registry = world.resource::<AppTypeRegistry>().clone();
    let type_registry = type_registry.read();
    let assets = world.get_resource::<AssetServer>().cloned();
    let loader = HandleLoader::new(assets.as_ref());
    let mut decoders = Decoders::new(&type_registry, &loader, types.entries);
    let mut value_of = |entry: usize, value: ValueRef| -> Option<Box<dyn Reflect>> {
        let mut value = match value {
            ValueRef::Encoded { start, end } => {
                decoders.decode(entry, &delta.arena[start as usize..end as usize])?
            }
            other => source.take(other)?,
        };
        types.field_mappers.map(entry, value.as_mut(), mapper);
        Some(value)
    };
    let mut ready = |op: &Op| {
        let entry = op.entry as usize;
        Some(((op.entity, entry, value_of(entry, op.value)?), op.reordered))
    };
    let writes = delta.writes.iter().filter_map(&mut ready).collect();
    let inserts = delta.inserts.iter().filter_map(&mut ready);
    let inserts = inserts.map(|(ready, _)| ready).collect();
    let mut values = Values {
        writes,
        inserts,
        ..Values::default()
    };
    let live_of: HashMap<usize, Entity> = spawned.iter().copied().collect();
    let mut spawns = delta.spawns.clone();
    spawns.sort_by_key(|spawn| (spawn.dense, spawn.entry));
    for spawn in spawns {
        let (entry, live) = (spawn.entry as usize, live_of.get(&(spawn.dense as usize)));
        if let (Some(&live), Some(value)) = (live, value_of(entry, spawn.value)) {
            values.spawns.push((live, entry, value));
        }
    }
    for &(entry, value) in &delta.resources {
        if let Some(value) = value_of(entry as usize, value) {
            values.resources.push((entry as usize, value));
        }
    }
    values
}

/// The value readers of the types a kept snapshot's rows are decoded as, built when first
/// needed (a rewind decodes the few types that changed).
struct Decoders<'a> {
    types: &'a TypeRegistry,
    loader: &'a HandleLoader<'a>,
    entries: &'a [SaveableEntry],
    readers: HashMap<usize, Option<ValueReader<'a>>>,
}

impl<'a> Decoders<'a> {
    fn new(
        types: &'a TypeRegistry,
        loader: &'a HandleLoader<'a>,
        entries: &'a [SaveableEntry],
    ) -> Self {
        Decoders {
            types,
            loader,
            entries,
            readers: HashMap::new(),
        }
    }

    /// Decodes a value this build encoded; `None` (with a warning) if it does not decode.
    fn decode(&mut self, entry: usize, bytes: &[u8]) -> Option<Box<dyn Reflect>> {
        let (types, loader, ops) = (self.types, self.loader, self.entries[entry].ops);
        let reader = self
            .readers
            .entry(entry)
            .or_insert_with(|| ValueReader::new(types, ops, loader));
        match reader.as_ref()?.read(bytes) {
            Ok(value) => Some(value),
            Err(reason) => {
                warn!(
                    "keepsake: a kept {} did not decode: {reason}",
                    ops.type_path
                );
                None
            }
        }
    }
}

impl Counts {
    fn absorb(&mut self, other: Counts) {
        self.written += other.written;
        self.inserted += other.inserted;
        self.removed += other.removed;
        self.dropped_relationships += other.dropped_relationships;
        self.moved_children.extend(other.moved_children);
    }
}

/// Writes each value over the live one (see `SaveableEntry::write` for what observers see).
/// A relationship whose target is gone is removed instead, as a respawn would leave it out.
fn apply_values(world: &mut World, types: &WorldTypes<'_>, writes: Vec<(Ready, bool)>) -> Counts {
    let mut counts = Counts::default();
    let child_of = child_of_entry(types.entries);
    for ((entity, entry, value), reordered) in writes {
        if reordered && same_value(world, entity, &types.entries[entry], value.as_ref()) {
            continue;
        }
        let Ok(mut live) = world.get_entity_mut(entity) else {
            continue;
        };
        match types.placement(entry, value.as_ref(), live.world()) {
            Placement::Bundle | Placement::Typed => {
                (types.entries[entry].write)(&mut live, value);
                counts.written += 1;
            }
            Placement::RebuiltByBevy => continue,
            Placement::DroppedRelationship => {
                live.remove_by_id(types.component_ids[entry]);
                counts.dropped_relationships += 1;
            }
        }
        if Some(entry) == child_of {
            counts.moved_children.push(entity);
        }
    }
    counts
}

/// Whether `entity`'s value of `entry`'s type equals `value` (by reflection).
fn same_value(world: &World, entity: Entity, entry: &SaveableEntry, value: &dyn Reflect) -> bool {
    let live = world.get_entity(entity).ok();
    let live = live.as_ref().and_then(|live| (entry.get)(live));
    live.and_then(|live| value.reflect_partial_eq(live.as_partial_reflect())) == Some(true)
}

/// The registry entry of `ChildOf`, if registered.
fn child_of_entry(entries: &[SaveableEntry]) -> Option<usize> {
    entries
        .iter()
        .position(|entry| entry.ops.type_id == TypeId::of::<ChildOf>())
}

/// Inserts the types kept entities lack and removes those their saved ones do not have,
/// entity by entity: the inserts in one archetype move, the removals in another.
fn change_structure(
    world: &mut World,
    types: &WorldTypes<'_>,
    mut inserts: Vec<Ready>,
    job: &Job<'_>,
) -> Counts {
    let mut counts = Counts::default();
    let child_of = child_of_entry(types.entries);
    inserts.sort_by_key(|(entity, ..)| *entity);
    let mut bundle = DynamicBundle::default();
    let mut inserts = inserts.into_iter().peekable();
    while let Some(&(entity, ..)) = inserts.peek() {
        let values = std::iter::from_fn(|| inserts.next_if(|(e, ..)| *e == entity));
        let values: Vec<(usize, Box<dyn Reflect>)> =
            values.map(|(_, entry, v)| (entry, v)).collect();
        if values.iter().any(|(entry, _)| Some(*entry) == child_of) {
            counts.moved_children.push(entity);
        }
        let Ok(mut live) = world.get_entity_mut(entity) else {
            continue;
        };
        counts.inserted += values.len();
        counts.dropped_relationships += insert_values(&mut live, values, types, &mut bundle);
    }
    let mut removes = job.delta.removes.clone();
    removes.sort_unstable();
    for group in removes.chunk_by(|a, b| a.0 == b.0) {
        let entity = group[0].0;
        let ids: Vec<_> = (group.iter())
            .filter(|(_, entry)| !types.rebuilt_by_bevy(*entry as usize))
            .map(|(_, entry)| types.component_ids[*entry as usize])
            .collect();
        if let Ok(mut live) = world.get_entity_mut(entity) {
            live.remove_by_ids(&ids);
            counts.removed += ids.len();
        }
    }
    counts
}

/// Inserts one entity's values, in one archetype move where their types allow. Returns how
/// many relationships were left out.
fn insert_values(
    live: &mut EntityWorldMut<'_>,
    values: Vec<(usize, Box<dyn Reflect>)>,
    types: &WorldTypes<'_>,
    bundle: &mut DynamicBundle,
) -> usize {
    let mut dropped = 0;
    for (entry, value) in values {
        match types.placement(entry, value.as_ref(), live.world()) {
            Placement::Typed => (types.entries[entry].insert)(live, value),
            Placement::Bundle => bundle.push(types.component_ids[entry], value),
            Placement::RebuiltByBevy => {}
            Placement::DroppedRelationship => dropped += 1,
        }
    }
    bundle.insert_into(live);
    dropped
}

/// Gives the spawned entities their values (sorted by entity, then type), parents first.
fn fill_spawned(world: &mut World, types: &WorldTypes<'_>, spawns: Vec<Ready>) -> Counts {
    let mut counts = Counts::default();
    let mut bundle = DynamicBundle::default();
    let mut spawns = spawns.into_iter().peekable();
    while let Some(&(entity, ..)) = spawns.peek() {
        let values = std::iter::from_fn(|| spawns.next_if(|(e, ..)| *e == entity));
        let values: Vec<(usize, Box<dyn Reflect>)> =
            values.map(|(_, entry, v)| (entry, v)).collect();
        counts.moved_children.push(entity);
        if let Ok(mut live) = world.get_entity_mut(entity) {
            counts.dropped_relationships += insert_values(&mut live, values, types, &mut bundle);
        }
    }
    counts
}

/// Takes the kept and spawned entities out of the despawned ones' `Children`, so a despawn
/// does not take them along: their saved `ChildOf` names an entity the save does not hold (a
/// respawn leaves such a relationship out too). Returns how many.
fn detach_kept_children(world: &mut World, job: &Job<'_>, spawned: &[(usize, Entity)]) -> usize {
    let spawned: EntityHashSet = spawned.iter().map(|&(_, entity)| entity).collect();
    let kept =
        |entity: &Entity| job.counterparts.dense_of(*entity).is_some() || spawned.contains(entity);
    let children: Vec<Entity> = (job.despawn.iter())
        .filter_map(|&entity| world.get::<Children>(entity))
        .flat_map(|children| children.iter().filter(|c| kept(c)))
        .collect();
    for &child in &children {
        world.entity_mut(child).remove::<ChildOf>();
    }
    children.len()
}

/// Despawns the live saved entities no saved entity is (with their children); returns how
/// many.
fn despawn(world: &mut World, entities: &[Entity]) -> usize {
    let gone = entities.iter().filter(|&&entity| {
        // A child may already be gone with its parent.
        world.get_entity(entity).is_ok() && world.despawn(entity)
    });
    gone.count()
}

/// Puts back in the saved order the children of the parents the apply or the world since
/// the snapshot may have disordered: those the delta names, and the parents of the entities
/// whose `ChildOf` changed or that were spawned.
fn put_children_in_order(
    world: &mut World,
    job: &Job<'_>,
    spawned: &[(usize, Entity)],
    moved_children: Vec<Entity>,
) {
    let mut parents: Vec<Entity> = job.delta.parents.clone();
    parents.extend(
        moved_children
            .iter()
            .filter_map(|&child| Some(world.get::<ChildOf>(child)?.parent())),
    );
    if parents.is_empty() {
        return;
    }
    let mut seen = EntityHashSet::default();
    parents.retain(|parent| seen.insert(*parent));
    let children = job.source.children();
    let index = DenseIndex::new(job.saved);
    let spawned_dense: EntityHashMap<usize> = spawned.iter().map(|&(d, e)| (e, d)).collect();
    let spawned_live: HashMap<usize, Entity> = spawned.iter().copied().collect();
    let to_live = |saved: Entity| {
        let dense = index.get(saved)? as usize;
        job.counterparts
            .live(dense)
            .or_else(|| spawned_live.get(&dense).copied())
    };
    for parent in parents {
        let dense = job
            .counterparts
            .dense_of(parent)
            .or_else(|| spawned_dense.get(&parent).copied());
        let Some(saved_children) = dense.and_then(|d| children.of(job.saved[d])) else {
            continue;
        };
        let want: Vec<Entity> = saved_children.iter().filter_map(|&c| to_live(c)).collect();
        put_in_order(world, parent, &want);
    }
}
