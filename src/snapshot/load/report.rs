//! What applying a snapshot did ([`ApplyReport`]), and the one warning per kind of reference
//! a load could not keep.

use super::decode::{DroppedField, SkippedType};
use super::entity_mapping::DroppedReference;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

/// What applying a snapshot did.
#[derive(Clone, Debug, Default)]
pub struct ApplyReport {
    /// Saved entity id → the entity spawned for it.
    pub entity_map: EntityHashMap<Entity>,
    /// Entities despawned first ([`LoadMode::Respawn`](crate::snapshot::LoadMode::Respawn)).
    pub despawned: usize,
    /// References to entities that were neither saved nor keyed (see
    /// [`LevelKey`](crate::snapshot::LevelKey)), now pointing at `Entity::PLACEHOLDER`.
    pub unmapped_references: usize,
    /// References to keyed unsaved entities that no single live entity answers to, by type,
    /// field and key: now `Entity::PLACEHOLDER` (a `ChildOf` among them is left out).
    pub dropped_references: Vec<DroppedReference>,
    /// Relationship components (such as `ChildOf`) left out because their target was not
    /// saved: the entity is loaded without that relationship (a child becomes a root).
    pub dropped_relationships: usize,
    /// Stored types that were skipped.
    pub skipped_types: Vec<SkippedType>,
    /// Stored fields their types no longer have, dropped on load.
    pub dropped_fields: Vec<DroppedField>,
    /// Saved entities kept in place (an in-place apply): their ids did not change, and
    /// [`entity_map`](Self::entity_map) leaves them out.
    pub kept: usize,
    /// Values written over a kept entity's different one.
    pub written: usize,
    /// Components inserted into kept entities that lacked them.
    pub inserted: usize,
    /// Components removed from kept entities whose saved ones lack them.
    pub removed: usize,
    /// Saved entities spawned.
    pub spawned: usize,
}

/// The warnings of a load about references it could not keep.
pub(super) fn warn_mapping(relationships: usize, unmapped: usize, dropped: &[DroppedReference]) {
    warn_dropped_relationships(relationships);
    warn_unmapped_references(unmapped);
    warn_dropped_references(dropped);
}

fn warn_dropped_relationships(dropped: usize) {
    if dropped > 0 {
        warn!(
            "keepsake: {dropped} relationship(s) (such as ChildOf) pointed at entities that were not saved and were left out"
        );
    }
}

/// One warning for the whole load, listing every dropped keyed reference.
fn warn_dropped_references(dropped: &[DroppedReference]) {
    if dropped.is_empty() {
        return;
    }
    let list: Vec<String> = dropped.iter().map(ToString::to_string).collect();
    warn!(
        "keepsake: {} reference(s) into the level found no entity and now point at Entity::PLACEHOLDER: {}",
        dropped.len(),
        list.join("; ")
    );
}

fn warn_unmapped_references(unmapped: usize) {
    if unmapped > 0 {
        warn!(
            "keepsake: {unmapped} reference(s) to entities that were not saved now point at Entity::PLACEHOLDER"
        );
    }
}
