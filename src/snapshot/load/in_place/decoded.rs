//! A decoded snapshot (a load, or a rewind to a point put together on the task pool) as an
//! in-place apply reads it: each column's rows by saved entity, with their stored bytes to
//! compare and their values to write; and the comparison with a live capture, made on the
//! task pool ([`prepare`]) and brought up to date on the main thread ([`apply_prepared`]).

use super::counterparts::{Counterparts, EntityRecord};
use super::delta::{Delta, Op, SpawnValue, ValueRef};
use super::order::{SavedChildren, out_of_order, parents_changed_between};
use super::source::{SavedRow, Source};
use super::write::{self, Job};
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::capture::{DenseIndex, Hierarchy, PendingSnapshot, Piece, Rows};
use crate::snapshot::load::decode::{DecodedColumn, DecodedSnapshot, DroppedField, SkippedType};
use crate::snapshot::load::report::ApplyReport;
use crate::snapshot::load::states::{self, SameState};
use crate::snapshot::register::SaveRegistry;
use crate::snapshot::value::assets::RefusedAssetPath;
use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// One decoded column: per row its saved entity (dense index), value and stored bytes.
pub(super) struct TargetColumn {
    entry: usize,
    dense: Vec<u32>,
    values: Vec<Option<Box<dyn Reflect>>>,
    raw: Rows,
    /// Per saved entity: its row (`u32::MAX`: none).
    row_of: Vec<u32>,
}

impl TargetColumn {
    fn new(column: DecodedColumn, entities: usize) -> Self {
        let mut row_of = vec![u32::MAX; entities];
        let (dense, values): (Vec<u32>, Vec<_>) = (column.rows.into_iter())
            .map(|(dense, value)| (dense, Some(value)))
            .unzip();
        for (row, &d) in dense.iter().enumerate() {
            if let Some(slot) = row_of.get_mut(d as usize) {
                *slot = row as u32;
            }
        }
        TargetColumn {
            entry: column.entry,
            dense,
            values,
            raw: column.raw,
            row_of,
        }
    }

    fn row(&self, dense: usize) -> Option<usize> {
        let row = *self.row_of.get(dense)?;
        (row != u32::MAX).then_some(row as usize)
    }
}

/// A decoded snapshot as an in-place apply reads it.
pub(super) struct DecodedTarget {
    pub(super) registry: SaveRegistry,
    /// The saved entities, in entity-table order (the dense index).
    pub(super) saved: Vec<Entity>,
    pub(super) keys: Vec<(Entity, String)>,
    columns: Vec<TargetColumn>,
    /// Per registry entry: its column in `columns`.
    by_entry: Vec<Option<usize>>,
    resources: Vec<(usize, Option<Box<dyn Reflect>>)>,
    resources_raw: Rows,
    pub(super) children: SavedChildren,
    pub(super) skipped: Vec<SkippedType>,
    pub(super) dropped_fields: Vec<DroppedField>,
    refused_asset_paths: Vec<RefusedAssetPath>,
}

impl DecodedTarget {
    pub(super) fn new(snapshot: DecodedSnapshot) -> Self {
        let entities = snapshot.saved_ids.len();
        let columns: Vec<TargetColumn> = (snapshot.components.into_iter())
            .map(|column| TargetColumn::new(column, entities))
            .collect();
        let mut by_entry = vec![None; snapshot.registry.entries().len()];
        for (at, column) in columns.iter().enumerate() {
            by_entry[column.entry] = Some(at);
        }
        let mut target = DecodedTarget {
            registry: snapshot.registry,
            saved: snapshot.saved_ids,
            keys: snapshot.keys,
            columns,
            by_entry,
            resources: (snapshot.resources.into_iter())
                .map(|(entry, value)| (entry, Some(value)))
                .collect(),
            resources_raw: snapshot.resources_raw,
            children: SavedChildren::default(),
            skipped: snapshot.skipped,
            dropped_fields: snapshot.dropped_fields,
            refused_asset_paths: snapshot.refused_asset_paths,
        };
        target.children = target.saved_children();
        target
    }

    /// Each saved parent's saved children in the entity table's order, from the `ChildOf`
    /// column (the hierarchy's order is nowhere else in a decoded snapshot).
    fn saved_children(&self) -> SavedChildren {
        let is_child_of = |c: &&TargetColumn| {
            self.registry.entries()[c.entry].ops.type_id == std::any::TypeId::of::<ChildOf>()
        };
        let Some(column) = self.columns.iter().find(is_child_of) else {
            return SavedChildren::default();
        };
        let pairs = column
            .dense
            .iter()
            .zip(&column.values)
            .filter_map(|(&d, value)| {
                let parent = value.as_ref()?.downcast_ref::<ChildOf>()?.parent();
                Some((self.saved[d as usize], parent))
            });
        SavedChildren::of_pairs(pairs)
    }

    /// What differs between entry `entry`'s saved rows and the live pieces of its type, for
    /// the saved entities kept: values to write, types to remove, values to insert.
    pub(super) fn diff_column(
        &self,
        entry: usize,
        live: &[Arc<Piece>],
        counterparts: &Counterparts,
    ) -> Delta {
        let at = self.by_entry.get(entry).copied().flatten();
        let column = at.map(|at| &self.columns[at]);
        let mut delta = Delta::default();
        let mut seen = vec![false; column.map_or(0, |c| c.dense.len())];
        for piece in live {
            let bytes = piece.bytes();
            for (row, &entity) in piece.entities().iter().enumerate() {
                let Some(dense) = counterparts.dense_of(entity) else {
                    continue; // not kept: despawned
                };
                let Some((column, at, saved_row)) =
                    column.and_then(|c| Some((c, at?, c.row(dense)?)))
                else {
                    delta.removes.push((entity, entry as u32));
                    continue;
                };
                seen[saved_row] = true;
                let (saved, live) = (column.raw.row(saved_row), bytes.value(row));
                if saved != live {
                    let value = decoded(at, saved_row);
                    let op = Op::write(entity, entry as u32, value, (saved, live));
                    delta.writes.push(op);
                }
            }
        }
        if let (Some(column), Some(at)) = (column, at) {
            for (row, _) in seen.iter().enumerate().filter(|(_, seen)| !**seen) {
                if let Some(entity) = counterparts.live(column.dense[row] as usize) {
                    let value = decoded(at, row);
                    delta.inserts.push(Op::insert(entity, entry as u32, value));
                }
            }
        }
        delta
    }

    /// Every value of the saved entities `unmatched` (dense, ascending), which are spawned.
    pub(super) fn spawn_values(&self, unmatched: &[usize]) -> Vec<SpawnValue> {
        let mut values = Vec::new();
        for &dense in unmatched {
            for (at, column) in self.columns.iter().enumerate() {
                if let Some(row) = column.row(dense) {
                    values.push(SpawnValue {
                        dense: dense as u32,
                        entry: column.entry as u32,
                        value: decoded(at, row),
                    });
                }
            }
        }
        values
    }

    /// The resources whose stored bytes differ from `live`'s (or that `live` lacks).
    pub(super) fn resources_delta(&self, live: &PendingSnapshot) -> Vec<(u32, ValueRef)> {
        let live_rows: HashMap<&str, &Arc<Piece>> = (live.columns().iter())
            .filter(|(column, pieces)| column.kind == ColumnKind::Resource && !pieces.is_empty())
            .map(|(column, pieces)| (column.type_path, &pieces[0]))
            .collect();
        let mut changed = Vec::new();
        for (index, (entry, _)) in self.resources.iter().enumerate() {
            let path = self.registry.entries()[*entry].ops.type_path;
            let now = live_rows
                .get(path)
                .filter(|c| c.rows() > 0)
                .map(|c| c.bytes().value(0));
            if now != Some(self.resources_raw.row(index)) {
                changed.push((*entry as u32, ValueRef::DecodedResource(index as u32)));
            }
        }
        changed
    }
}

impl Source for DecodedTarget {
    fn take(&mut self, value: ValueRef) -> Option<Box<dyn Reflect>> {
        match value {
            ValueRef::Decoded { column, row } => {
                let column = self.columns.get_mut(column as usize)?;
                column.values.get_mut(row as usize)?.take()
            }
            ValueRef::DecodedResource(index) => self.resources.get_mut(index as usize)?.1.take(),
            ValueRef::Encoded { .. } => None,
        }
    }

    fn rows(&self, entry: usize, _type_path: &str, _saved: &[Entity]) -> Vec<SavedRow> {
        let Some(at) = self.by_entry.get(entry).copied().flatten() else {
            return Vec::new();
        };
        let column = &self.columns[at];
        let rows = column.dense.iter().enumerate();
        rows.map(|(row, &d)| {
            (
                d as usize,
                column.raw.row(row).to_vec(),
                Some(decoded(at, row)),
            )
        })
        .collect()
    }

    fn resource(&self, entry: usize, _type_path: &str) -> Option<(Vec<u8>, Option<ValueRef>)> {
        // A state's value was taken by `enter_saved_states`: it is not written again.
        let held =
            |(at, value): &(usize, Option<Box<dyn Reflect>>)| *at == entry && value.is_some();
        let index = self.resources.iter().position(held)?;
        let bytes = self.resources_raw.row(index).to_vec();
        Some((bytes, Some(ValueRef::DecodedResource(index as u32))))
    }

    fn children(&self) -> Cow<'_, SavedChildren> {
        Cow::Borrowed(&self.children)
    }
}

fn decoded(column: usize, row: usize) -> ValueRef {
    ValueRef::Decoded {
        column: column as u32,
        row: row as u32,
    }
}

/// A decoded snapshot compared with a capture of the world, on the task pool, ready for
/// [`apply_prepared`] on the main thread: only what changed in the world since that capture
/// is compared again there.
pub struct PreparedLoad {
    target: DecodedTarget,
    counterparts: Counterparts,
    /// Per type: the capture's piece ids and what differed in them.
    verdicts: HashMap<&'static str, (Vec<u64>, Delta)>,
    /// The capture's saved entities and hierarchy.
    matched: Vec<Entity>,
    hierarchy: Hierarchy,
    /// Kept parents whose saved children were out of order in the capture.
    misordered: Vec<Entity>,
}

impl PreparedLoad {
    /// Goes to the saved `States` (see
    /// [`register_saveable_state`](crate::snapshot::SaveableAppExt::register_saveable_state))
    /// through their transitions, as a respawning load does first, and takes them out of the
    /// apply: when a transition runs, the saved resources that differ from the world's are put
    /// in place before it (so `OnExit` and `OnEnter` read them), and a change of a saved state
    /// the transition systems ask for is dropped. `same` says whether a saved state the game
    /// is in is entered again. Call it before the capture [`apply_prepared`] compares with, so
    /// that capture holds what the transitions did. Returns whether a transition ran.
    pub fn enter_saved_states(&mut self, world: &mut World, same: SameState) -> bool {
        let entries = self.target.registry.entries();
        let states = (self.target.resources.iter_mut())
            .filter(|(entry, _)| entries[*entry].state.is_some())
            .filter_map(|(entry, value)| Some((*entry, value.take()?)))
            .collect();
        let resources: Vec<_> = (self.target.resources.iter())
            .filter_map(|(entry, value)| Some((*entry, value.as_deref()?)))
            .collect();
        states::enter_states(world, entries, states, &resources, same)
    }

    /// How many saved entities the snapshot holds.
    pub fn entity_count(&self) -> usize {
        self.target.saved.len()
    }

    /// Saved asset paths that were refused when the snapshot was decoded (see
    /// [`DecodedSnapshot::refused_asset_paths`]).
    pub fn refused_asset_paths(&self) -> &[RefusedAssetPath] {
        &self.target.refused_asset_paths
    }
}

/// Compares `snapshot` with `live` (a capture of the world it will be applied to, taken
/// through the capture cache the world's saves use), off the main thread: which saved
/// entities are live ones (through `record`), and, type by type, which values differ. See
/// [`apply_prepared`].
pub fn prepare(
    snapshot: DecodedSnapshot,
    live: &PendingSnapshot,
    record: &EntityRecord,
) -> PreparedLoad {
    let target = DecodedTarget::new(snapshot);
    let counterparts = Counterparts::new(&target.saved, live.matched(), record);
    let mut verdicts = HashMap::new();
    for (column, pieces) in live.columns() {
        let Some((entry, _)) = target.registry.lookup(column.type_path) else {
            continue;
        };
        if column.kind == ColumnKind::Component {
            let ids = pieces.iter().map(|piece| piece.id()).collect();
            let delta = target.diff_column(entry, pieces, &counterparts);
            verdicts.insert(column.type_path, (ids, delta));
        }
    }
    let misordered = misordered(&target, &counterparts, live.hierarchy());
    PreparedLoad {
        matched: live.matched().to_vec(),
        hierarchy: live.hierarchy().clone(),
        target,
        counterparts,
        verdicts,
        misordered,
    }
}

/// The kept parents whose saved children `hierarchy` lists in another order.
fn misordered(
    target: &DecodedTarget,
    counterparts: &Counterparts,
    hierarchy: &Hierarchy,
) -> Vec<Entity> {
    let index = DenseIndex::new(&target.saved);
    let live_children = hierarchy.children();
    let live_of = |saved: Entity| counterparts.live(index.get(saved)? as usize);
    let mut parents = Vec::new();
    for parent in target.children.parents() {
        let Some(live_parent) = live_of(parent) else {
            continue;
        };
        let want: Option<Vec<Entity>> = (target.children.of(parent).unwrap_or_default())
            .iter()
            .map(|&child| live_of(child))
            .collect();
        let (Some(want), Some(children)) = (want, live_children.get(&live_parent)) else {
            continue; // a child is spawned: its parent is put in order anyway
        };
        if out_of_order(children, &want) {
            parents.push(live_parent);
        }
    }
    parents
}

/// Applies a snapshot [`prepare`]d on the task pool, in place: `live` is a capture of the
/// world taken now, through the same capture cache as the prepared one, so that the types
/// whose pieces did not change since are taken as compared, and only the others are
/// compared again here (see the module docs in `in_place/mod.rs`).
pub fn apply_prepared(
    world: &mut World,
    prepared: PreparedLoad,
    live: &PendingSnapshot,
    record: &mut EntityRecord,
) -> ApplyReport {
    let PreparedLoad {
        mut target,
        counterparts,
        mut verdicts,
        matched,
        hierarchy,
        misordered,
    } = prepared;
    drop_unentered_states(&mut target);
    let trusted = counterparts.record_revision == record.revision();
    // A saved entity matched now but not (or with another live entity) when the verdicts
    // were made has no rows in them: every type is compared again.
    let (counterparts, rematched) = match trusted && matched == live.matched() {
        true => (counterparts, false),
        false => {
            let now = Counterparts::new(&target.saved, live.matched(), record);
            let rematched = now.matches_beyond(&counterparts);
            (now, rematched)
        }
    };
    let mut delta = Delta::default();
    for (column, pieces) in live.columns() {
        let Some((entry, _)) = target.registry.lookup(column.type_path) else {
            continue;
        };
        if column.kind == ColumnKind::Resource {
            continue;
        }
        let ids: Vec<u64> = pieces.iter().map(|piece| piece.id()).collect();
        match verdicts.remove(column.type_path) {
            Some((then, mut kept)) if trusted && !rematched && then == ids => {
                kept.inserts
                    .retain(|op| counterparts.dense_of(op.entity).is_some());
                delta.extend(kept);
            }
            _ => delta.extend(target.diff_column(entry, pieces, &counterparts)),
        }
    }
    delta.spawns = target.spawn_values(&counterparts.unmatched());
    delta.resources = target.resources_delta(live);
    delta.parents = misordered;
    delta
        .parents
        .extend(parents_changed_between(&hierarchy, live.hierarchy()));
    let despawn = counterparts.unclaimed(live.matched());
    let registry = target.registry.clone();
    let saved = std::mem::take(&mut target.saved);
    let keys = std::mem::take(&mut target.keys);
    let job = Job {
        registry: &registry,
        saved: &saved,
        keys,
        counterparts: &counterparts,
        delta,
        despawn,
        source: &mut target,
    };
    let mut report = write::run(world, job, record);
    report.skipped_types = std::mem::take(&mut target.skipped);
    report.dropped_fields = std::mem::take(&mut target.dropped_fields);
    drop_off_thread(target);
    report
}

/// Frees what an apply did not take off the main thread, on the async compute pool when the
/// app has one: the values of every row it did not write, most of a load's (at 100k entities,
/// tens of milliseconds of frees).
fn drop_off_thread<T: Send + 'static>(leftover: T) {
    match AsyncComputeTaskPool::try_get() {
        Some(pool) => pool.spawn(async move { drop(leftover) }).detach(),
        None => drop(leftover),
    }
}

/// Saved `States` not entered before the apply ([`PreparedLoad::enter_saved_states`]) are
/// left as they are, with a warning: asked for now, their transitions would run after the
/// apply, and `OnEnter` would build afresh over the loaded world.
fn drop_unentered_states(target: &mut DecodedTarget) {
    let entries = target.registry.entries();
    let resources = target.resources.iter_mut();
    let states = resources.filter(|(entry, _)| entries[*entry].state.is_some());
    for (entry, value) in states {
        if value.take().is_some() {
            warn!(
                "keepsake: the save's {} was not entered before the apply in place, so the \
                 state is left as it is (call PreparedLoad::enter_saved_states before the \
                 capture the apply compares with, or use snapshot::apply)",
                entries[*entry].ops.type_path
            );
        }
    }
}

/// Applies `snapshot` in place, comparing it with `live` (a capture of the world taken now)
/// on the main thread: [`prepare`] and [`apply_prepared`] in one go. Saved `States` are not
/// entered (their transitions would change the world `live` shows): the state is left as it
/// is, with a warning; [`apply`](crate::snapshot::apply) with
/// [`LoadMode::InPlace`](crate::snapshot::LoadMode::InPlace) enters them first.
pub fn apply_in_place(
    world: &mut World,
    snapshot: DecodedSnapshot,
    live: &PendingSnapshot,
    record: &mut EntityRecord,
) -> ApplyReport {
    let prepared = prepare(snapshot, live, record);
    apply_prepared(world, prepared, live, record)
}
