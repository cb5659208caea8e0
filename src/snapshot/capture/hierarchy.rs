//! The order of the entity table: parents before children, siblings in order, and the dense
//! index each saved entity gets in it; the hierarchy it is worked out from, read table by table
//! and kept between captures.

use super::column::{CaptureStats, Changes};
use bevy::ecs::archetype::{Archetype, ArchetypeId};
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::storage::{Table, TableId};
use bevy::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};

/// Dense indices of the saved entities, looked up by entity index without hashing.
pub(crate) struct DenseIndex<'a> {
    entities: &'a [Entity],
    by_entity_index: Vec<u32>,
}

impl<'a> DenseIndex<'a> {
    pub(crate) fn new(entities: &'a [Entity]) -> Self {
        let len = entities
            .iter()
            .map(|entity| entity.index_u32() as usize + 1)
            .max()
            .unwrap_or(0);
        let mut by_entity_index = vec![u32::MAX; len];
        for (dense, entity) in entities.iter().enumerate() {
            by_entity_index[entity.index_u32() as usize] = dense as u32;
        }
        DenseIndex {
            entities,
            by_entity_index,
        }
    }

    pub(crate) fn get(&self, entity: Entity) -> Option<u32> {
        let dense = *self.by_entity_index.get(entity.index_u32() as usize)?;
        (self.entities.get(dense as usize) == Some(&entity)).then_some(dense)
    }
}

/// The entity table the last capture's pool part put in order, kept by the capture cache: the
/// next capture's pool part takes it over when neither the saved entities nor the hierarchy
/// changed. Ordering is a pass over every saved entity through two hash maps, measured at a
/// fifth of a save's pool part on the issue-24 world (`tried`, 100k, 1 % of values changed).
#[derive(Clone, Default)]
pub(crate) struct OrderMemo(Arc<Mutex<Option<LastOrder>>>);

/// An ordered entity table and what it was worked out from.
struct LastOrder {
    matched: Vec<Entity>,
    /// The hierarchy's tables; a table read again is a new `Arc`, so pointer equality says
    /// that no table changed (these clones keep an old table's address from being reused).
    tables: Vec<Arc<TableLinks>>,
    ordered: Arc<[Entity]>,
}

impl LastOrder {
    fn describes(&self, hierarchy: &Hierarchy, matched: &[Entity]) -> bool {
        self.tables.len() == hierarchy.tables.len()
            && self
                .tables
                .iter()
                .zip(&hierarchy.tables)
                .all(|(old, new)| Arc::ptr_eq(old, new))
            && self.matched == matched
    }
}

impl OrderMemo {
    /// `matched` in the order of [`Hierarchy::order`]: the last order when it was worked out
    /// from the same entities and hierarchy tables, else worked out and kept.
    pub(crate) fn order(&self, hierarchy: &Hierarchy, matched: Vec<Entity>) -> Arc<[Entity]> {
        if hierarchy.tables.is_empty() {
            return matched.into();
        }
        let last = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(last) = last()
            .as_ref()
            .filter(|last| last.describes(hierarchy, &matched))
        {
            return Arc::clone(&last.ordered);
        }
        let ordered: Arc<[Entity]> = hierarchy.order(matched.clone()).into();
        *last() = Some(LastOrder {
            matched,
            tables: hierarchy.tables.clone(),
            ordered: Arc::clone(&ordered),
        });
        ordered
    }
}

/// The hierarchy rows of one table as a capture read them: the table's entities, each row's
/// parent (when the table stores `ChildOf`) and children (when it stores `Children`).
#[derive(Default)]
pub(crate) struct TableLinks {
    entities: Vec<Entity>,
    parents: Option<Vec<Entity>>,
    children: Option<ChildLists>,
}

/// Each row's children, back to back: one allocation for a table rather than one per row.
struct ChildLists {
    /// Where each row's children end in `children`.
    ends: Vec<u32>,
    children: Vec<Entity>,
}

impl ChildLists {
    fn read(table: &Table, id: ComponentId) -> Option<Self> {
        let mut lists = ChildLists {
            ends: Vec::with_capacity(table.entity_count() as usize),
            children: Vec::new(),
        };
        read_column(table, id, |children: &Children| {
            lists.children.extend_from_slice(children);
            lists.ends.push(lists.children.len() as u32);
        })?;
        Some(lists)
    }

    /// Each row's children, in row order.
    fn iter(&self) -> impl Iterator<Item = &[Entity]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.children[start as usize..end as usize])
    }
}

/// The `ChildOf` and `Children` of the saved entities' tables, read out of the world so the
/// order can be worked out without it (on the task pool, for an incremental capture). Tables
/// are shared with the [`HierarchyCache`] that read them.
#[derive(Clone, Default)]
pub(crate) struct Hierarchy {
    tables: Vec<Arc<TableLinks>>,
}

impl Hierarchy {
    /// The tables read, each shared with the captures that read it unchanged: two captures
    /// of one cache hold the same `Arc` for a table whose entities, `ChildOf` and `Children`
    /// did not change between them.
    pub(crate) fn tables(&self) -> &[Arc<TableLinks>] {
        &self.tables
    }

    /// Each entity's children, in order, from the tables that store `Children`.
    pub(crate) fn children(&self) -> EntityHashMap<&[Entity]> {
        self.maps().1
    }
}

impl TableLinks {
    /// Each row's entity and children, when the table stores `Children`.
    pub(crate) fn children(&self) -> impl Iterator<Item = (Entity, &[Entity])> {
        let lists = self.children.iter().flat_map(ChildLists::iter);
        self.entities.iter().copied().zip(lists)
    }

    /// The bytes its rows take.
    pub(super) fn heap_bytes(&self) -> usize {
        let children = self.children.as_ref().map_or(0, |lists| {
            size_of_val::<[u32]>(&lists.ends) + size_of_val::<[Entity]>(&lists.children)
        });
        size_of_val::<[Entity]>(&self.entities)
            + self
                .parents
                .as_ref()
                .map_or(0, |parents| size_of_val::<[Entity]>(parents))
            + children
    }
}

/// The tables' hierarchy rows of the last capture, by table index: a table whose entities and
/// `ChildOf` / `Children` change ticks are as they were is not read again, so the main thread's
/// part of a capture costs a comparison per unchanged table rather than a lookup and a hash-map
/// insert per entity.
#[derive(Default)]
pub(crate) struct HierarchyCache {
    tables: Vec<Option<Arc<TableLinks>>>,
}

/// The hierarchy's two component ids in a world.
#[derive(Clone, Copy)]
struct LinkIds {
    parent: Option<ComponentId>,
    children: Option<ComponentId>,
}

impl HierarchyCache {
    /// The hierarchy of the tables of `archetypes`, reading again only the tables that changed
    /// since the last capture (`changes`).
    /// Counts the tables read and reused in `stats`.
    pub(crate) fn refresh(
        &mut self,
        world: &World,
        archetypes: &[ArchetypeId],
        changes: &Changes,
        stats: &mut CaptureStats,
    ) -> Hierarchy {
        let ids = LinkIds {
            parent: world.component_id::<ChildOf>(),
            children: world.component_id::<Children>(),
        };
        let mut hierarchy = Hierarchy::default();
        for table_id in linked_tables(world, archetypes, ids) {
            let Some(table) = world.storages().tables.get(table_id) else {
                continue;
            };
            let index = table_id.as_usize();
            if self.tables.len() <= index {
                self.tables.resize(index + 1, None);
            }
            let cached = self.tables[index]
                .take()
                .filter(|links| unchanged(links, table, ids, changes));
            let links = match cached {
                Some(links) => {
                    stats.hierarchy_tables_reused += 1;
                    links
                }
                None => {
                    stats.hierarchy_tables_read += 1;
                    Arc::new(read_links(table, ids))
                }
            };
            self.tables[index] = Some(Arc::clone(&links));
            hierarchy.tables.push(links);
        }
        hierarchy
    }
}

/// The tables of `archetypes` that store `ChildOf` or `Children`, each once.
fn linked_tables(world: &World, archetypes: &[ArchetypeId], ids: LinkIds) -> Vec<TableId> {
    let has = |archetype: &Archetype, id: Option<ComponentId>| {
        id.is_some_and(|id| archetype.contains(id))
    };
    let mut tables = Vec::new();
    for archetype in archetypes
        .iter()
        .filter_map(|&id| world.archetypes().get(id))
    {
        let linked = has(archetype, ids.parent) || has(archetype, ids.children);
        if linked && !tables.contains(&archetype.table_id()) {
            tables.push(archetype.table_id());
        }
    }
    tables
}

/// Whether `links` still describes `table`: the same entities in the same rows, and no
/// `ChildOf` or `Children` changed since the last capture.
fn unchanged(links: &TableLinks, table: &Table, ids: LinkIds, changes: &Changes) -> bool {
    let ticks_unchanged = |id: Option<ComponentId>| {
        id.and_then(|id| table.get_changed_ticks_slice_for(id))
            .is_none_or(|ticks| !changes.any_changed(ticks))
    };
    links.entities == table.entities()
        && ticks_unchanged(ids.parent)
        && ticks_unchanged(ids.children)
}

/// Reads a table's hierarchy rows.
fn read_links(table: &Table, ids: LinkIds) -> TableLinks {
    TableLinks {
        entities: table.entities().to_vec(),
        parents: ids
            .parent
            .and_then(|id| read_column(table, id, |child_of: &ChildOf| child_of.parent())),
        children: ids.children.and_then(|id| ChildLists::read(table, id)),
    }
}

/// Each row's `read` of the table's column `id`, which holds `C` values.
fn read_column<C: Component, R>(
    table: &Table,
    id: ComponentId,
    mut read: impl FnMut(&C) -> R,
) -> Option<Vec<R>> {
    // SAFETY: `id` is `C`'s component id, so its column holds `C` values, and the shared
    // borrow of the world keeps anything from writing to them while they are read.
    let cells = unsafe { table.get_data_slice_for::<C>(id) }?;
    let values = cells.iter().map(|cell| {
        // SAFETY: as above: no `&mut C` to this row can exist while the world is borrowed.
        let value = unsafe { &*cell.get() };
        read(value)
    });
    Some(values.collect())
}

impl Hierarchy {
    /// Reads the hierarchy of the tables of `archetypes` (a full capture: nothing cached).
    pub(crate) fn collect(world: &World, archetypes: &[ArchetypeId]) -> Self {
        let changes = Changes::everything(world.read_change_tick());
        let mut stats = CaptureStats::default();
        HierarchyCache::default().refresh(world, archetypes, &changes, &mut stats)
    }

    /// Orders saved entities so that every parent comes before its children and siblings keep
    /// their order, which lets a load rebuild each `Children` list exactly. Entities of the
    /// tables that are not saved are looked at only as parents of saved ones (never followed).
    pub(crate) fn order(&self, matched: Vec<Entity>) -> Vec<Entity> {
        if self.tables.is_empty() {
            return matched;
        }
        let (parents, children) = self.maps();
        let saved: EntityHashSet = matched.iter().copied().collect();
        let mut ordered = Vec::with_capacity(matched.len());
        let mut stack = Vec::new();
        for &root in &matched {
            let has_saved_parent = parents
                .get(&root)
                .is_some_and(|parent| saved.contains(parent));
            if has_saved_parent {
                continue;
            }
            stack.push(root);
            while let Some(entity) = stack.pop() {
                ordered.push(entity);
                if let Some(children) = children.get(&entity) {
                    stack.extend(children.iter().rev().filter(|child| saved.contains(*child)));
                }
            }
        }
        ordered
    }

    /// Each entity's parent, and each entity's children, from the tables.
    fn maps(&self) -> (EntityHashMap<Entity>, EntityHashMap<&[Entity]>) {
        let (mut parents, mut children) = (EntityHashMap::default(), EntityHashMap::default());
        for table in &self.tables {
            if let Some(list) = &table.parents {
                parents.extend(table.entities.iter().copied().zip(list.iter().copied()));
            }
            if let Some(lists) = &table.children {
                children.extend(table.entities.iter().copied().zip(lists.iter()));
            }
        }
        (parents, children)
    }
}
