//! Bringing a kept snapshot (a rewind point) back in place, comparing only what the history
//! says changed since it: the rows its reverse deltas name, and the pieces whose entities
//! changed. Values are decoded from their bytes only for the rows written.

use super::counterparts::{Counterparts, EntityRecord};
use super::delta::{Delta, Op, SpawnValue, ValueRef};
use super::order::{SavedChildren, parents_changed_between};
use super::source::{SavedRow, Source};
use super::write::{self, Job};
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::capture::{ColumnChanges, DenseIndex, KeptSnapshot, PendingSnapshot};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::load::report::ApplyReport;
use crate::snapshot::register::SaveRegistry;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::borrow::Cow;

/// Brings the world back to `kept` in place (see the module docs in `in_place/mod.rs`).
///
/// `live` is a capture of the world taken just before, through the capture cache that took
/// `kept`, and recorded by the history that keeps it ([`SnapshotHistory::record`]): the rows
/// the history says changed between the two are compared, and the pieces whose entities
/// changed, nothing else, and only the values that differ are decoded. Its cost follows what
/// changed since `kept`, not the size of the world.
///
/// `record` is the record of this world's in-place applies ([`SavedIds::ThisWorld`]): a kept
/// snapshot is always of this world.
///
/// [`SnapshotHistory::record`]: crate::snapshot::SnapshotHistory::record
/// [`SavedIds::ThisWorld`]: super::SavedIds::ThisWorld
///
/// `None` when `kept` holds another value of a saved `States` type than the world's
/// (`register_saveable_state`): its transitions must run before anything else is compared,
/// so the point is decoded and applied through [`prepare`](super::prepare),
/// [`PreparedLoad::enter_saved_states`](super::PreparedLoad::enter_saved_states) and
/// [`apply_prepared`](super::apply_prepared) instead (the plugin's rewinds do). The world is
/// then untouched.
pub fn restore(
    world: &mut World,
    kept: &KeptSnapshot,
    live: &PendingSnapshot,
    record: &mut EntityRecord,
) -> Result<Option<ApplyReport>, SnapshotError> {
    restore_within(world, kept, live, record, usize::MAX)
}

/// [`restore`], unless more than `max_values` values would be written, inserted or spawned:
/// then `None`, and the world is untouched (so a caller can restore a far point off the main
/// thread instead, through [`prepare`](super::prepare)), as when the `States` differ.
pub fn restore_within(
    world: &mut World,
    kept: &KeptSnapshot,
    live: &PendingSnapshot,
    record: &mut EntityRecord,
    max_values: usize,
) -> Result<Option<ApplyReport>, SnapshotError> {
    let registry = world
        .get_resource::<SaveRegistry>()
        .ok_or(SnapshotError::NotSetUp("SaveRegistry"))?
        .clone();
    let saved = kept.matched();
    let counterparts = Counterparts::new(saved, live.matched(), record);
    let mut delta = kept_delta(kept, live, &registry, &counterparts);
    let entries = registry.entries();
    let changes_state =
        (delta.resources.iter()).any(|&(entry, _)| entries[entry as usize].state.is_some());
    if delta.values() > max_values || changes_state {
        return Ok(None);
    }
    delta.parents = parents_changed_between(kept.hierarchy(), live.hierarchy());
    let despawn = counterparts.unclaimed(live.matched());
    let job = Job {
        registry: &registry,
        saved,
        keys: kept.keys(),
        counterparts: &counterparts,
        delta,
        despawn,
        source: &mut KeptSource(kept),
    };
    Ok(Some(write::run(world, job, record)))
}

/// A kept snapshot as the apply reads it: values decoded from their bytes.
struct KeptSource<'a>(&'a KeptSnapshot);

impl Source for KeptSource<'_> {
    fn take(&mut self, _value: ValueRef) -> Option<Box<dyn Reflect>> {
        None
    }

    fn rows(&self, _entry: usize, type_path: &str, saved: &[Entity]) -> Vec<SavedRow> {
        let index = DenseIndex::new(saved);
        let mut rows = Vec::new();
        for piece in self.0.column_pieces(type_path) {
            let bytes = piece.bytes();
            for (row, &entity) in piece.entities().iter().enumerate() {
                if let Some(dense) = index.get(entity) {
                    rows.push((dense as usize, bytes.value(row).to_vec(), None));
                }
            }
        }
        rows
    }

    fn resource(&self, _entry: usize, type_path: &str) -> Option<(Vec<u8>, Option<ValueRef>)> {
        let pieces = self.0.column_pieces(type_path);
        let piece = pieces.iter().find(|piece| piece.rows() > 0)?;
        Some((piece.bytes().value(0).to_vec(), None))
    }

    fn children(&self) -> Cow<'_, SavedChildren> {
        Cow::Owned(SavedChildren::of_hierarchy(
            self.0.hierarchy(),
            self.0.matched(),
        ))
    }
}

/// What differs between `kept` and `live`, column by column.
fn kept_delta(
    kept: &KeptSnapshot,
    live: &PendingSnapshot,
    registry: &SaveRegistry,
    counterparts: &Counterparts,
) -> Delta {
    let changes = kept.changes_since(live);
    let saved = DenseIndex::new(kept.matched());
    let mut delta = Delta::default();
    for column in &changes.columns {
        let Some((entry, _)) = registry.lookup(column.type_path) else {
            continue;
        };
        match column.kind {
            ColumnKind::Resource => resource_change(column, entry as u32, &mut delta),
            ColumnKind::Component => {
                paired_writes(column, entry as u32, &mut delta);
                let context = (kept.matched(), &saved, counterparts);
                unpaired(column, entry as u32, context, &mut delta);
            }
        }
    }
    delta
}

/// The rows of pieces both captures hold whose bytes differ: written over the live values
/// (the entities are the same ones, alive and saved).
fn paired_writes(column: &ColumnChanges, entry: u32, delta: &mut Delta) {
    for pairs in &column.pairs {
        for (k, &row) in pairs.rows.iter().enumerate() {
            let (saved, live) = (pairs.kept.value(k), pairs.live.value(k));
            if saved != live {
                let value = delta.encoded(saved);
                let entity = pairs.entities[row];
                delta
                    .writes
                    .push(Op::write(entity, entry, value, (saved, live)));
            }
        }
    }
}

/// The rows of pieces whose entities changed, compared entity by entity: a kept entity's
/// value written or inserted, a type it no longer has removed, a spawned entity's values.
fn unpaired(
    column: &ColumnChanges,
    entry: u32,
    (saved, saved_index, counterparts): (&[Entity], &DenseIndex<'_>, &Counterparts),
    delta: &mut Delta,
) {
    let mut kept_rows: EntityHashMap<(usize, usize)> = EntityHashMap::default();
    for (at, piece) in column.kept_only.iter().enumerate() {
        kept_rows.extend(
            piece
                .entities()
                .iter()
                .enumerate()
                .map(|(row, e)| (*e, (at, row))),
        );
    }
    for piece in &column.live_only {
        let bytes = piece.bytes();
        for (row, &entity) in piece.entities().iter().enumerate() {
            let Some(dense) = counterparts.dense_of(entity) else {
                continue; // not kept: despawned
            };
            match kept_rows.remove(&saved[dense]) {
                Some((at, kept_row)) => {
                    let old = column.kept_only[at].bytes().value(kept_row);
                    let live = bytes.value(row);
                    if old != live {
                        let value = delta.encoded(old);
                        delta
                            .writes
                            .push(Op::write(entity, entry, value, (old, live)));
                    }
                }
                None => delta.removes.push((entity, entry)),
            }
        }
    }
    for (saved_entity, (at, row)) in kept_rows {
        let Some(dense) = saved_index.get(saved_entity) else {
            continue;
        };
        let value = delta.encoded(column.kept_only[at].bytes().value(row));
        match counterparts.live(dense as usize) {
            Some(entity) => delta.inserts.push(Op::insert(entity, entry, value)),
            None => delta.spawns.push(SpawnValue {
                dense,
                entry,
                value,
            }),
        }
    }
}

/// A resource whose value changed since `kept` (a changed resource's piece is encoded anew,
/// never patched, so its kept and live pieces are both unpaired).
fn resource_change(column: &ColumnChanges, entry: u32, delta: &mut Delta) {
    let row = |pieces: &[std::sync::Arc<crate::snapshot::capture::Piece>]| {
        let piece = pieces.iter().find(|piece| piece.rows() > 0)?;
        Some(piece.bytes().value(0).to_vec())
    };
    let (Some(kept), now) = (row(&column.kept_only), row(&column.live_only)) else {
        return;
    };
    if now.as_ref() != Some(&kept) {
        let value = delta.encoded(&kept);
        delta.resources.push((entry, value));
    }
}
