//! What the game asks of the ring (messages), and what the ring reports (observer events,
//! triggered once), as the plugin's other requests and results are
//! (the `events` module beside says why).

use super::ring::{Evicted, RewindTo};
use crate::plugin::restored::RewindPointId;
use crate::snapshot::{DroppedField, DroppedReference, SnapshotError, UnsavedComponent};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::sync::Arc;
use std::time::Duration;

/// Asks for a rewind point: the world as this frame's capture sees it (the previous frame's
/// end), kept in memory. Asked for while a rewind is under way, it is taken once the rewind
/// landed, of the world it brought back.
#[derive(Message, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq)]
pub struct RewindPointRequest;

/// Asks for the world to go back to a rewind point.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct RewindRequest {
    /// Which point.
    pub to: RewindTo,
}

/// A rewind point was taken (the result of a [`RewindPointRequest`] or of the ring's timer).
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct RewindPointCompleted {
    /// Its number.
    pub point: RewindPointId,
    /// How many saved entities it holds.
    pub entities: usize,
    /// Time the main thread spent on it: the capture of what changed since the last capture,
    /// and keeping it.
    pub capture_time: Duration,
    /// Points in the ring now.
    pub points: usize,
    /// Bytes they hold ([`RewindRing::memory`](super::RewindRing::memory)).
    pub memory: usize,
    /// Older points dropped to make room.
    pub evicted: Evicted,
}

/// Taking a rewind point failed (the capture failed: see the error); the ring is unchanged.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct RewindPointFailed {
    /// What went wrong.
    #[reflect(ignore)]
    pub error: Arc<SnapshotError>,
}

/// The world went back to a rewind point: in place (the saved entities still alive kept, with
/// only what differs changed), or, with [`LoadMode::Respawn`](crate::plugin::LoadMode), every
/// saved entity spawned again from it.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct RewindCompleted {
    /// The point restored; it stays in the ring, as its newest point.
    pub point: RewindPointId,
    /// How long ago it was taken.
    pub age: Duration,
    /// Newer points dropped: they were a future that did not happen.
    pub forgotten: usize,
    /// Entity id at the point → the entity standing for it now, for the entities whose id
    /// changed (spawned again because they were gone, or all of them with
    /// [`LoadMode::Respawn`](crate::plugin::LoadMode)). An id the map does not hold is the
    /// same entity as at the point.
    #[reflect(ignore)]
    pub entity_map: Arc<EntityHashMap<Entity>>,
    /// References to keyed level entities that found no live entity with their key (see
    /// [`LoadCompleted::dropped_references`](crate::plugin::LoadCompleted::dropped_references)).
    #[reflect(ignore)]
    pub dropped_references: Arc<Vec<DroppedReference>>,
    /// Stored fields the types no longer have (only after a hot reload changed a type).
    #[reflect(ignore)]
    pub dropped_fields: Arc<Vec<DroppedField>>,
    /// Component types the restored entities came back without that the live ones had (see
    /// [`LoadCompleted::missing_components`](crate::plugin::LoadCompleted::missing_components)).
    #[reflect(ignore)]
    pub missing_components: Arc<Vec<UnsavedComponent>>,
    /// Time the main thread spent on the rewind in the frame it landed: comparing the point
    /// with the world and changing what differs.
    pub apply_time: Duration,
}

/// A rewind failed; the world is untouched.
#[derive(Event, Clone, Debug, Reflect)]
#[reflect(from_reflect = false, Debug)]
pub struct RewindFailed {
    /// The point asked for.
    pub to: RewindTo,
    /// What went wrong.
    #[reflect(ignore)]
    pub error: Arc<RewindError>,
}

/// Why a rewind failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewindError {
    /// The ring holds no such point.
    #[error("no rewind point {to}: the ring holds {points}")]
    NoPoint {
        /// The point asked for.
        to: RewindTo,
        /// How many points the ring holds.
        points: usize,
    },
    /// Another rewind is being put together; this one was not started.
    #[error("a rewind is already under way (to point {})", .0.0)]
    InProgress(RewindPointId),
    /// The point could not be read back (its types changed since it was taken).
    #[error("the rewind point could not be read back: {0}")]
    Snapshot(#[from] SnapshotError),
    /// A slot was loaded while the rewind to this point was being put together: the point is
    /// of the timeline the load left, so the rewind was dropped.
    #[error("the rewind to point {} was dropped: a slot was loaded meanwhile", .0.0)]
    SupersededByLoad(RewindPointId),
}
