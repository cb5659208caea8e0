//! Decoded values → World. [`LoadMode::InPlace`] goes through the in-place apply (see
//! `in_place`); [`LoadMode::Respawn`] and [`merge`] take these steps, in order: go to the
//! saved `States` through their transitions (`states`), despawn the entities the save filter
//! matches (when respawning), spawn one empty entity per saved entity, look up what each
//! registered type needs in this world, insert each entity's components (entity references
//! remapped, relationships kept only when their target was saved), insert the resources, warn
//! about lost references.

use super::decode::{DecodedColumn, DecodedSnapshot};
use super::dynamic_bundle::DynamicBundle;
use super::entity_mapping::{ResolvedKeys, SavedEntityMapper};
use super::in_place::{self, EntityRecord, SavedIds};
use super::report::{ApplyReport, warn_mapping};
use super::states::{self, SameState};
use super::world_types::{Placement, WorldTypes};
use crate::snapshot::capture::CaptureCache;
use crate::snapshot::register::SaveFilter;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;

/// How a load (or a rewind) changes the saved entities already in the world: the plugin's
/// setting ([`KeepsakeCorePlugin::load_mode`](crate::plugin::KeepsakeCorePlugin::load_mode),
/// at run time [`KeepsakeSettings::load_mode`](crate::plugin::KeepsakeSettings::load_mode)) and
/// [`apply`]'s. Either way the world's saved state becomes the save's; the modes differ in
/// which entities keep their ids and what hooks and observers see. To spawn a save's entities
/// beside the world's instead, see [`merge`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq, Hash)]
pub enum LoadMode {
    /// Keep the saved entities still alive: only the values that differ are written, the
    /// types that differ inserted or removed, the rest spawned or despawned. Kept entities keep
    /// their ids; observers see only what changed (`Changed<T>` for a rewritten value,
    /// `On<Add>` and `On<Remove>` only for what was added or removed: see
    /// [`apply_in_place`](crate::snapshot::apply_in_place)).
    ///
    /// The plugin keeps an entity when the save is of this world (a rewind, a save this
    /// session wrote, or one it loaded before); the first load of a save from another session
    /// spawns everything, as [`Respawn`](Self::Respawn) does. Through [`apply`], the snapshot
    /// is taken as captured from this world, and the whole world is captured first to compare
    /// it (the plugin compares with its capture cache instead).
    #[default]
    InPlace,
    /// Despawn every entity the save filter matches (with its children), then spawn the
    /// save's: every saved entity gets a new id, and `On<Add>` observers see every saved
    /// component again. For games whose observers rebuild state when a saved entity appears.
    Respawn,
}

/// Applies a validated snapshot to the world and returns how saved entities were mapped.
///
/// Saved `States` (`register_saveable_state`) go first: each is asked for through its
/// `NextState` and the `StateTransition` schedule runs (with `StatesPlugin`), so `OnExit` /
/// `OnEnter` run as in play, reading the saved resources, and what they start afresh is then
/// replaced by the save's; a state change they ask for meanwhile is dropped (the saved state
/// stands). A saved state the game is in is entered again when one of its `OnEnter` systems
/// reads a resource the load changes ([`SameState::Reenter`]).
///
/// With [`LoadMode::InPlace`], saved entities alive in this world are kept (see the mode), and
/// [`ApplyReport::entity_map`] lists only the saved entities whose id changed.
///
/// Entity references inside values (`Entity` fields of components that map entities, and
/// `ChildOf`) are remapped to the new entities, and references to keyed unsaved entities (see
/// [`LevelKey`](crate::snapshot::LevelKey)) to the live entities with the same keys; a key no
/// single live entity has is listed in [`ApplyReport::dropped_references`] and warned about
/// once. A reference to an entity that was neither saved nor keyed becomes
/// `Entity::PLACEHOLDER`, counted in [`ApplyReport::unmapped_references`] and logged as
/// a warning; a relationship such as `ChildOf` whose target was not saved is left out instead
/// (the child loads as a root), counted in [`ApplyReport::dropped_relationships`]. Relationship
/// targets (`Children`) are never inserted directly: Bevy rebuilds them from the sources.
pub fn apply(world: &mut World, snapshot: DecodedSnapshot, mode: LoadMode) -> ApplyReport {
    apply_entering(world, snapshot, mode, SameState::Reenter)
}

/// [`apply`], entering again the saved states the game is in as `same` says (a rewind stays).
pub(crate) fn apply_entering(
    world: &mut World,
    snapshot: DecodedSnapshot,
    mode: LoadMode,
    same: SameState,
) -> ApplyReport {
    match mode {
        LoadMode::InPlace => apply_in_place_captured(world, snapshot, same),
        LoadMode::Respawn => respawn(world, snapshot, Existing::Despawn, same),
    }
}

/// Spawns a validated snapshot's entities beside the world's, leaving every entity already in
/// the world as it is (to add a saved group of entities to a level, say), and inserts its
/// resources. Saved `States`, references and relationships are handled as by [`apply`]; every
/// saved entity gets a new id, listed in [`ApplyReport::entity_map`].
pub fn merge(world: &mut World, snapshot: DecodedSnapshot) -> ApplyReport {
    respawn(world, snapshot, Existing::Keep, SameState::Reenter)
}

/// What a respawning apply does with the entities the save filter matches.
#[derive(Clone, Copy)]
enum Existing {
    /// Despawned first ([`LoadMode::Respawn`]).
    Despawn,
    /// Left beside the spawned ones ([`merge`]).
    Keep,
}

/// [`LoadMode::InPlace`] through [`apply`]: the world is captured whole to be compared, and
/// captured again after the saved `States`' transitions ran, if they ran.
fn apply_in_place_captured(
    world: &mut World,
    snapshot: DecodedSnapshot,
    same: SameState,
) -> ApplyReport {
    let mut cache = CaptureCache::default();
    let live = match cache.capture(world) {
        Ok(live) => live,
        Err(error) => {
            warn!("keepsake: the world could not be compared ({error}); respawning instead");
            return respawn(world, snapshot, Existing::Despawn, same);
        }
    };
    let mut record = EntityRecord::new(SavedIds::ThisWorld);
    let mut prepared = in_place::prepare(snapshot, &live, &record);
    if !prepared.enter_saved_states(world, same) {
        return in_place::apply_prepared(world, prepared, &live, &mut record);
    }
    match cache.capture(world) {
        Ok(now) => in_place::apply_prepared(world, prepared, &now, &mut record),
        Err(error) => {
            // The first capture of this world worked; a second one failing is not expected.
            error!("keepsake: the world could not be compared after its States changed ({error})");
            in_place::apply_prepared(world, prepared, &live, &mut record)
        }
    }
}

/// [`LoadMode::Respawn`] and [`merge`].
fn respawn(
    world: &mut World,
    snapshot: DecodedSnapshot,
    existing: Existing,
    same: SameState,
) -> ApplyReport {
    let DecodedSnapshot {
        registry,
        saved_ids,
        keys,
        components,
        mut resources,
        resources_raw: _,
        skipped,
        dropped_fields,
        refused_asset_paths: _,
    } = snapshot;
    // The saved states first, through their transitions (OnExit, OnEnter), as in play.
    states::restore_states(world, registry.entries(), &mut resources, same);

    let despawned = match existing {
        Existing::Despawn => despawn_saved_entities(world, registry.filter()),
        Existing::Keep => 0,
    };
    // Keys are looked up before the spawn: a reference into the level means the level's
    // entity, never one this load brings.
    let keys = ResolvedKeys::resolve(world, registry.level_keys(), keys);
    let spawned = spawn_empty_entities(world, saved_ids.len());
    let mut mapper = SavedEntityMapper::new(&saved_ids, &spawned, keys);
    let types = WorldTypes::new(world, registry.entries());
    let dropped_relationships = insert_components(world, &types, &spawned, components, &mut mapper);
    insert_resources(world, &types, resources, &mut mapper);
    warn_mapping(dropped_relationships, mapper.unmapped, &mapper.dropped);

    ApplyReport {
        entity_map: mapper.map,
        despawned,
        unmapped_references: mapper.unmapped,
        dropped_references: mapper.dropped,
        dropped_relationships,
        skipped_types: skipped,
        dropped_fields,
        spawned: spawned.len(),
        ..ApplyReport::default()
    }
}

/// Despawns the entities `filter` matches (the ones a save would capture) and returns how many.
fn despawn_saved_entities(world: &mut World, filter: &SaveFilter) -> usize {
    let (existing, _) = filter
        .resolve(world)
        .map(|filter| filter.matching_entities(world))
        .unwrap_or_default();
    let mut despawned = 0;
    for entity in existing {
        // A child may already be gone with its parent.
        if world.get_entity(entity).is_ok() && world.despawn(entity) {
            despawned += 1;
        }
    }
    despawned
}

/// Spawns one empty entity per saved entity, in entity table order.
fn spawn_empty_entities(world: &mut World, count: usize) -> Vec<Entity> {
    (0..count).map(|_| world.spawn_empty().id()).collect()
}

/// Inserts the component values into the spawned entities, each entity's in one archetype
/// move, taking them from the front of every column in turn (each is sorted by entity). Returns
/// how many relationships were left out.
fn insert_components(
    world: &mut World,
    types: &WorldTypes<'_>,
    spawned: &[Entity],
    components: Vec<DecodedColumn>,
    mapper: &mut SavedEntityMapper<'_>,
) -> usize {
    let mut dropped_relationships = 0;
    let mut bundle = DynamicBundle::default();
    let mut columns: Vec<_> = components
        .into_iter()
        .map(|column| (column.entry, column.rows.into_iter().peekable()))
        .collect();
    for (entity_index, &entity) in (0u32..).zip(spawned) {
        let values = columns.iter_mut().filter_map(|(entry, rows)| {
            let (_, value) = rows.next_if(|&(index, _)| index == entity_index)?;
            Some((*entry, value))
        });
        let Ok(mut entity) = world.get_entity_mut(entity) else {
            // A game's observer despawned it while an earlier entity's values went in: its
            // values are taken off the columns and dropped.
            values.for_each(drop);
            continue;
        };
        dropped_relationships +=
            insert_entity_components(&mut entity, values, types, mapper, &mut bundle);
    }
    dropped_relationships
}

/// Remaps one entity's values and inserts them. Returns how many relationships were left out.
fn insert_entity_components(
    entity: &mut EntityWorldMut,
    values: impl Iterator<Item = (usize, Box<dyn Reflect>)>,
    types: &WorldTypes<'_>,
    mapper: &mut SavedEntityMapper<'_>,
    bundle: &mut DynamicBundle,
) -> usize {
    let mut dropped_relationships = 0;
    for (entry_index, mut value) in values {
        types.field_mappers.map(entry_index, value.as_mut(), mapper);
        match types.placement(entry_index, value.as_ref(), entity.world()) {
            Placement::Typed => (types.entries[entry_index].insert)(entity, value),
            Placement::Bundle => bundle.push(types.component_ids[entry_index], value),
            Placement::RebuiltByBevy => {}
            Placement::DroppedRelationship => dropped_relationships += 1,
        }
    }
    bundle.insert_into(entity);
    dropped_relationships
}

/// Remaps the resources' entity references and inserts them.
fn insert_resources(
    world: &mut World,
    types: &WorldTypes<'_>,
    resources: Vec<(usize, Box<dyn Reflect>)>,
    mapper: &mut SavedEntityMapper<'_>,
) {
    for (entry_index, mut value) in resources {
        types.field_mappers.map(entry_index, value.as_mut(), mapper);
        (types.entries[entry_index].insert_resource)(world, value);
    }
}
