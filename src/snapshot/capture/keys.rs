//! The key table of a capture: the keyed entities the save does not hold (which saved values
//! may reference), read on the main thread, and the check that no two entities share a key.

use super::column::SavedTables;
use crate::snapshot::blob::StoredLevelKey;
use crate::snapshot::error::{NamedEntity, SnapshotError};
use crate::snapshot::register::{Keyed, SaveRegistry};
use bevy::prelude::*;

/// The keyed entities that are not saved, by ascending id, with their keys.
#[derive(Clone, Default)]
pub(super) struct KeyTable {
    keys: Vec<(u64, String)>,
}

impl KeyTable {
    /// Reads the keyed entities of `world`. Two entities with one [`LevelKey`](crate::snapshot::LevelKey)
    /// (saved or not) are [`SnapshotError::DuplicateLevelKey`], since a load could not tell
    /// which one a reference meant; a name shared by several entities keys none of them.
    pub(super) fn collect(
        world: &World,
        registry: &SaveRegistry,
        saved: &SavedTables,
    ) -> Result<Self, SnapshotError> {
        let unsaved = |archetype| !saved.archetype(archetype);
        let mut keyed = registry.level_keys().collect(world, unsaved);
        keyed.sort_unstable_by_key(|keyed| (keyed.key, keyed.entity.to_bits()));
        refuse_duplicates(world, &keyed)?;
        let keyed = without_shared_names(keyed);
        let mut keys: Vec<(u64, String)> = keyed
            .into_iter()
            .filter(|keyed| !saved.entity(world, keyed.entity))
            .map(|keyed| (keyed.entity.to_bits(), keyed.key.to_owned()))
            .collect();
        keys.sort_unstable_by_key(|(id, _)| *id);
        Ok(KeyTable { keys })
    }

    /// The keyed entities' ids and keys, by ascending id.
    pub(crate) fn entries(&self) -> &[(u64, String)] {
        &self.keys
    }

    /// The table as the blob writer takes it.
    pub(super) fn stored(&self) -> Vec<StoredLevelKey<'_>> {
        self.keys
            .iter()
            .map(|(entity_id, key)| StoredLevelKey {
                entity_id: *entity_id,
                key,
            })
            .collect()
    }
}

/// The first two entities (by key, then id) that share a `LevelKey`, as an error (`keyed` is
/// sorted by key).
fn refuse_duplicates(world: &World, keyed: &[Keyed<'_>]) -> Result<(), SnapshotError> {
    let explicit: Vec<&Keyed<'_>> = keyed.iter().filter(|keyed| !keyed.by_name).collect();
    let Some(pair) = explicit.windows(2).find(|pair| pair[0].key == pair[1].key) else {
        return Ok(());
    };
    let named = |entity: Entity| NamedEntity {
        entity,
        name: world
            .get::<Name>(entity)
            .map(|name| name.as_str().to_owned()),
    };
    Err(SnapshotError::DuplicateLevelKey {
        key: pair[0].key.to_owned(),
        first: named(pair[0].entity),
        second: named(pair[1].entity),
    })
}

/// `keyed` (sorted by key) without the entities keyed by a name another keyed entity shares:
/// a load could not tell them apart, so a reference to one is an ordinary reference to an
/// unsaved entity.
fn without_shared_names(keyed: Vec<Keyed<'_>>) -> Vec<Keyed<'_>> {
    let shared = |i: usize| {
        let key = keyed[i].key;
        (i > 0 && keyed[i - 1].key == key) || keyed.get(i + 1).is_some_and(|next| next.key == key)
    };
    let keep: Vec<bool> = (0..keyed.len())
        .map(|i| !keyed[i].by_name || !shared(i))
        .collect();
    let dropped = keep.iter().filter(|keep| !**keep).count();
    if dropped > 0 {
        debug!(
            "keepsake: {dropped} entities share their name with another, so it is not their key"
        );
    }
    keyed
        .into_iter()
        .zip(keep)
        .filter_map(|(keyed, keep)| keep.then_some(keyed))
        .collect()
}
