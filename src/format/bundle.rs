//! `SaveBundle`: the payload of a save file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version of [`SaveBundle`] this build writes.
pub const BUNDLE_SCHEMA_VERSION: u32 = 1;

/// The snapshot of the game world.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldState {
    /// The game tick the snapshot was taken at.
    pub tick: u64,
    /// The encoded entities, components and resources (written by the snapshot layer).
    /// Serialised as one byte string (the same bytes postcard writes for a `Vec<u8>`, copied
    /// at once instead of element by element).
    #[serde(with = "serde_bytes")]
    pub ecs_blob: Vec<u8>,
    /// A 64-bit hash of `ecs_blob`, verified when the snapshot is applied.
    pub state_hash: u64,
}

/// Everything a save file carries besides its metadata: postcard-encoded, then compressed.
///
/// ```
/// use bevy_keepsake::format::{SaveBundle, WorldState};
///
/// let bundle = SaveBundle::new(WorldState { tick: 7, ..Default::default() });
/// assert_eq!(bundle.world.tick, 7);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveBundle {
    /// Version of this structure's layout, for migrations.
    pub schema_version: u32,
    /// The world snapshot.
    pub world: WorldState,
    /// Free-form data the game stores beside the world, by key.
    pub extras: BTreeMap<String, Vec<u8>>,
}

impl SaveBundle {
    /// A bundle of the current schema around a world snapshot.
    pub fn new(world: WorldState) -> Self {
        SaveBundle {
            schema_version: BUNDLE_SCHEMA_VERSION,
            world,
            extras: BTreeMap::new(),
        }
    }
}
