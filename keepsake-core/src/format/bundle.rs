//! `SaveBundle`: the payload of a save file.

use super::pieces::BlobPieces;
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
/// use keepsake_core::format::{SaveBundle, WorldState};
///
/// let bundle = SaveBundle::new(WorldState { tick: 7, ..Default::default() });
/// assert_eq!(bundle.world.tick, 7);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SaveBundle {
    /// Version of this structure's layout, for migrations.
    pub schema_version: u32,
    /// The world snapshot.
    pub world: WorldState,
    /// Free-form data the game stores beside the world, by key.
    pub extras: BTreeMap<String, Vec<u8>>,
    /// Where the snapshot layer says `world.ecs_blob` may be cut (see [`BlobPieces`]): how
    /// the blob was made, not part of the save, so neither written nor compared.
    #[serde(skip)]
    blob_pieces: BlobPieces,
}

/// Two bundles are equal when they save the same thing: their pieces are not compared.
impl PartialEq for SaveBundle {
    fn eq(&self, other: &Self) -> bool {
        let SaveBundle {
            schema_version,
            world,
            extras,
            blob_pieces: _,
        } = self;
        (schema_version, world, extras) == (&other.schema_version, &other.world, &other.extras)
    }
}

impl Eq for SaveBundle {}

impl SaveBundle {
    /// A bundle of the current schema around a world snapshot.
    pub fn new(world: WorldState) -> Self {
        SaveBundle {
            schema_version: BUNDLE_SCHEMA_VERSION,
            world,
            extras: BTreeMap::new(),
            blob_pieces: BlobPieces::default(),
        }
    }

    /// This bundle, its blob cut into `pieces` by the snapshot layer that wrote it.
    pub(crate) fn with_blob_pieces(mut self, pieces: BlobPieces) -> Self {
        self.blob_pieces = pieces;
        self
    }

    /// Where the snapshot layer says the blob may be cut (empty: nowhere, cut it by content).
    pub fn blob_pieces(&self) -> &BlobPieces {
        &self.blob_pieces
    }
}
