//! The children's order: a saved parent's saved children come back in the order the save
//! lists them (a capture orders siblings as the parent's `Children` does). Spawned children
//! are appended to their parent's `Children` and a rewritten `ChildOf` moves a child to the
//! end, so the parents an apply touched, and those whose children changed since the snapshot,
//! are put back in order: only the saved children's order is compared, and a parent whose
//! saved children are in order is left alone.

use crate::snapshot::capture::{DenseIndex, Hierarchy};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// Each saved parent's saved children, in the saved order (by saved ids).
#[derive(Clone, Default)]
pub(super) struct SavedChildren(EntityHashMap<Vec<Entity>>);

impl SavedChildren {
    /// The order a kept capture's hierarchy gives: each parent's `Children` then, without the
    /// unsaved ones.
    pub(super) fn of_hierarchy(hierarchy: &Hierarchy, saved: &[Entity]) -> Self {
        let index = DenseIndex::new(saved);
        let children = hierarchy.children().into_iter().map(|(parent, children)| {
            let saved_children = children.iter().copied().filter(|c| index.get(*c).is_some());
            (parent, saved_children.collect::<Vec<Entity>>())
        });
        let saved_parents = children
            .filter(|(parent, children)| index.get(*parent).is_some() && children.len() > 1);
        SavedChildren(saved_parents.collect())
    }

    /// The order of `(child, parent)` pairs listed in the entity table's order (parents
    /// first, siblings in order): a decoded snapshot's `ChildOf` column.
    pub(super) fn of_pairs(pairs: impl Iterator<Item = (Entity, Entity)>) -> Self {
        let mut children: EntityHashMap<Vec<Entity>> = EntityHashMap::default();
        for (child, parent) in pairs {
            children.entry(parent).or_default().push(child);
        }
        children.retain(|_, children| children.len() > 1);
        SavedChildren(children)
    }

    /// The saved children of saved parent `parent`, in order (none when fewer than two).
    pub(super) fn of(&self, parent: Entity) -> Option<&[Entity]> {
        self.0.get(&parent).map(Vec::as_slice)
    }

    /// The saved parents it orders.
    pub(super) fn parents(&self) -> impl Iterator<Item = Entity> + '_ {
        self.0.keys().copied()
    }
}

/// The parents (with two children or more) of the tables of `after` that `before` does not
/// hold: their children were added, removed or moved between the two captures.
pub(super) fn parents_changed_between(before: &Hierarchy, after: &Hierarchy) -> Vec<Entity> {
    let old: HashSet<*const _> = before.tables().iter().map(Arc::as_ptr).collect();
    let changed = after
        .tables()
        .iter()
        .filter(|t| !old.contains(&Arc::as_ptr(t)));
    let parents = changed.flat_map(|table| table.children().filter(|(_, c)| c.len() > 1));
    parents.map(|(parent, _)| parent).collect()
}

/// Whether live parent `parent`'s children, as `children` lists them, hold `want` (live
/// entities, in the saved order) in another order.
pub(super) fn out_of_order(children: &[Entity], want: &[Entity]) -> bool {
    let wanted: HashSet<Entity> = want.iter().copied().collect();
    !children
        .iter()
        .filter(|c| wanted.contains(c))
        .eq(want.iter())
}

/// Puts `parent`'s children in the order of `want` (live entities); children `want` does not
/// list (unsaved ones) go after them, in their order. Returns whether it had to.
pub(super) fn put_in_order(world: &mut World, parent: Entity, want: &[Entity]) -> bool {
    let Some(children) = world.get::<Children>(parent) else {
        return false;
    };
    if !out_of_order(children, want) {
        return false;
    }
    let position: EntityHashMap<usize> = want.iter().enumerate().map(|(i, e)| (*e, i)).collect();
    if let Some(mut children) = world.get_mut::<Children>(parent) {
        children.sort_by_key(|child| position.get(child).copied().unwrap_or(usize::MAX));
    }
    true
}
