//! Which live entity each saved entity is: the same id when the snapshot was captured from this
//! world and the entity is still alive and saved, else the entity an earlier in-place apply
//! spawned for it (the [`EntityRecord`]), else none (it is spawned).

use crate::snapshot::capture::DenseIndex;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::sync::Arc;

/// Where a snapshot's entity ids come from, which decides what a saved id may name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq, Hash)]
pub enum SavedIds {
    /// Captured from this world (a rewind point, a save written in this session): a live
    /// saved entity with a saved id *is* that entity, and a reference to a live entity the
    /// save does not hold still names it.
    #[default]
    ThisWorld,
    /// From another session or device: ids name nothing here. Only entities the record says
    /// an earlier apply of such a snapshot spawned are kept.
    Elsewhere,
}

/// The entities in-place applies spawned for saved ones, so that the next apply of a snapshot
/// holding those saved ids keeps them instead of spawning them again, and so that references
/// to them are remapped. Entries whose entity is gone are dropped at each apply, so the record
/// never outgrows the world.
///
/// ```
/// use bevy_keepsake::snapshot::{EntityRecord, SavedIds};
///
/// let record = EntityRecord::new(SavedIds::ThisWorld);
/// assert!(record.is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct EntityRecord {
    ids: SavedIds,
    /// Saved id → the live entity spawned for it. Shared with a load being prepared on the
    /// task pool, so handing it over copies nothing.
    spawned: Arc<EntityHashMap<Entity>>,
    /// Bumped at every change, so a prepared load can tell its copy is stale.
    revision: u64,
}

impl EntityRecord {
    /// An empty record for snapshots whose ids come from `ids`.
    pub fn new(ids: SavedIds) -> Self {
        EntityRecord {
            ids,
            ..EntityRecord::default()
        }
    }

    /// Where the ids of the snapshots it is used with come from.
    pub fn saved_ids(&self) -> SavedIds {
        self.ids
    }

    /// The live entity an earlier apply spawned for `saved`, if any.
    pub fn get(&self, saved: Entity) -> Option<Entity> {
        self.spawned.get(&saved).copied()
    }

    /// How many saved ids it maps.
    pub fn len(&self) -> usize {
        self.spawned.len()
    }

    /// Whether it maps no saved id.
    pub fn is_empty(&self) -> bool {
        self.spawned.is_empty()
    }

    /// Records the entities a respawning apply spawned (its report's `entity_map`), so that
    /// the next in-place apply of a snapshot with those saved ids keeps them.
    pub(crate) fn note_spawned(&mut self, world: &World, spawned: &EntityHashMap<Entity>) {
        let spawned = spawned.iter().map(|(saved, live)| (*saved, *live));
        self.note(world, spawned);
    }

    pub(super) fn revision(&self) -> u64 {
        self.revision
    }

    /// Records the entities an apply spawned, and forgets the entries whose entity is gone.
    pub(super) fn note(&mut self, world: &World, spawned: impl Iterator<Item = (Entity, Entity)>) {
        let map = Arc::make_mut(&mut self.spawned);
        map.retain(|_, live| world.get_entity(*live).is_ok());
        map.extend(spawned);
        self.revision += 1;
    }
}

/// The saved entities of a snapshot (in its order: the dense index) and the live entity each
/// one is, if any.
#[derive(Clone)]
pub(super) struct Counterparts {
    /// Per saved entity: the live entity it is.
    live: Vec<Option<Entity>>,
    /// Live entity index → dense index of the saved entity it is (`u32::MAX`: none).
    by_live_index: Vec<u32>,
    /// Whether every saved entity is itself, alive and saved, and no other entity is saved.
    identical: bool,
    /// The record revision they were worked out with.
    pub(super) record_revision: u64,
}

impl Counterparts {
    /// Each of `saved` matched against `matched` (the live saved entities) through `record`.
    /// A live entity is claimed once: by a saved entity with its id first, then through the
    /// record.
    pub(super) fn new(saved: &[Entity], matched: &[Entity], record: &EntityRecord) -> Self {
        let live_set = DenseIndex::new(matched);
        let mut claimed = vec![false; matched.len()];
        let mut live: Vec<Option<Entity>> = vec![None; saved.len()];
        if record.ids == SavedIds::ThisWorld {
            for (slot, &entity) in live.iter_mut().zip(saved) {
                if let Some(at) = live_set.get(entity) {
                    claimed[at as usize] = true;
                    *slot = Some(entity);
                }
            }
        }
        for (slot, &entity) in live.iter_mut().zip(saved) {
            let found = record.get(entity).and_then(|l| Some((l, live_set.get(l)?)));
            if let (None, Some((entity, at))) = (*slot, found)
                && !claimed[at as usize]
            {
                claimed[at as usize] = true;
                *slot = Some(entity);
            }
        }
        let identical =
            saved.len() == matched.len() && live.iter().zip(saved).all(|(l, s)| *l == Some(*s));
        Counterparts::from_live(live, identical, record.revision)
    }

    fn from_live(live: Vec<Option<Entity>>, identical: bool, record_revision: u64) -> Self {
        let len = live
            .iter()
            .flatten()
            .map(|e| e.index_u32() as usize + 1)
            .max()
            .unwrap_or(0);
        let mut by_live_index = vec![u32::MAX; len];
        for (dense, entity) in live.iter().enumerate() {
            if let Some(entity) = entity {
                by_live_index[entity.index_u32() as usize] = dense as u32;
            }
        }
        Counterparts {
            live,
            by_live_index,
            identical,
            record_revision,
        }
    }

    /// How many saved entities there are.
    pub(super) fn len(&self) -> usize {
        self.live.len()
    }

    /// The live entity saved entity `dense` is.
    pub(super) fn live(&self, dense: usize) -> Option<Entity> {
        self.live.get(dense).copied().flatten()
    }

    /// Whether a saved entity has a live counterpart here that it had not in `before`, or
    /// another one.
    pub(super) fn matches_beyond(&self, before: &Counterparts) -> bool {
        (0..self.len()).any(|dense| {
            self.live(dense)
                .is_some_and(|e| before.live(dense) != Some(e))
        })
    }

    /// The saved entity (dense index) the live `entity` is, if any.
    pub(super) fn dense_of(&self, entity: Entity) -> Option<usize> {
        let dense = *self.by_live_index.get(entity.index_u32() as usize)?;
        (self.live(dense as usize) == Some(entity)).then_some(dense as usize)
    }

    /// The saved entities with no live counterpart (dense indices, ascending).
    pub(super) fn unmatched(&self) -> Vec<usize> {
        (0..self.live.len())
            .filter(|&d| self.live[d].is_none())
            .collect()
    }

    /// The live saved entities no saved entity is (to despawn).
    pub(super) fn unclaimed(&self, matched: &[Entity]) -> Vec<Entity> {
        if self.identical {
            return Vec::new();
        }
        let free = |entity: &&Entity| self.dense_of(**entity).is_none();
        matched.iter().filter(free).copied().collect()
    }
}
