//! Captures kept in memory (the plugin's rewind points), sharing what they have in common.
//!
//! A [`SnapshotHistory`] turns each capture of one [`CaptureCache`](super::CaptureCache) into a
//! [`KeptSnapshot`]: per column, one node per piece. A piece the next capture reuses keeps its
//! node, so unchanged pieces are shared by every kept snapshot and with the cache. When the next
//! capture *patches* a piece, the piece's node stops holding the piece and keeps only the rows
//! that differ from the patched piece's node: the newest capture is whole and each older one is
//! the rows it had before the newer changed them (reverse deltas, as an undo stack keeps them).
//! So N kept snapshots of a world that changes 1 % between them cost about one set of pieces,
//! shared with the cache, plus N times 1 % of the rows; dropping the oldest frees exactly its
//! own rows, with no work; and the main thread's part of keeping a capture is a lookup per
//! piece and a copy of the changed rows' old values, read through the patches without putting
//! them together.
//!
//! A piece rebuilt rather than patched (its table's entities changed: a spawn or despawn) gets a
//! whole node of its own, and the node of the piece it replaced stays whole, unless it was
//! rebuilt with the same entities and rows (the cache rebuilds the pieces of types that can
//! hold asset handles at every capture): then it shares the last capture's node. Pieces of
//! captures the history did not record get whole nodes too: record every capture of the cache
//! while snapshots are kept.
//!
//! Putting a kept snapshot back together ([`KeptSnapshot::pending`]) lays each node's rows over
//! the newer ones in one pass per piece, and runs off the main thread.

use super::hierarchy::{Hierarchy, OrderMemo};
use super::join::JoinMemo;
use super::keys::KeyTable;
use super::pending::{ColumnId, PendingSnapshot};
use super::piece::{Layer, Piece, PieceParts, Rows};
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// Older rows laid over a newer piece: the rows (ascending, relative to the piece) and their
/// values, in the same order.
pub(super) type OlderRows = (Arc<[usize]>, Arc<Rows>);

/// Layers a node's chain may have before [`Node::chain`] merges them into one.
const MAX_CHAIN: usize = 8;

/// The rows `layers` name (ascending), each with its value in the nearest layer that holds
/// it, for a piece of `rows` rows: without sorting, as chains can be long.
pub(super) fn merge_layers(
    layers: &[(Arc<[usize]>, Arc<Rows>)],
    rows: usize,
) -> (Vec<usize>, Rows) {
    let mut from: Vec<Option<(usize, usize)>> = vec![None; rows];
    for (layer, (changed, _)) in layers.iter().enumerate() {
        for (k, &row) in changed.iter().enumerate() {
            if let Some(slot @ None) = from.get_mut(row) {
                *slot = Some((layer, k));
            }
        }
    }
    let mut changed = Vec::new();
    let mut values = Rows::default();
    for (row, from) in from.into_iter().enumerate() {
        if let Some((layer, k)) = from {
            changed.push(row);
            values.push_raw(layers[layer].1.row(k));
        }
    }
    (changed, values)
}

/// Captures of one [`CaptureCache`](super::CaptureCache), kept as [`KeptSnapshot`]s that share
/// unchanged pieces and keep only the changed rows of older captures (see the
/// module docs in `history.rs`).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, CaptureCache, Saveable, SaveableAppExt, SnapshotHistory};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// let world = app.world_mut();
/// let hero = world.spawn((Saveable, Health(7.0))).id();
///
/// let (mut cache, mut history) = (CaptureCache::default(), SnapshotHistory::default());
/// world.increment_change_tick();
/// let before = history.record(&cache.capture(world)?);
/// let expected = snapshot::capture(world)?.blob;
///
/// world.increment_change_tick();
/// world.get_mut::<Health>(hero).unwrap().0 = 3.0;
/// let _now = history.record(&cache.capture(world)?);
///
/// // The older capture, put together again, is the world as it was.
/// assert_eq!(before.pending().finish().blob, expected);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct SnapshotHistory {
    /// The nodes of the last recorded capture's pieces, by piece id.
    last: HashMap<u64, Arc<Node>>,
    /// The same nodes by column and piece, in the capture's order.
    last_columns: Vec<Vec<Arc<Node>>>,
    /// The last recorded capture's saved entities.
    last_matched: Option<Arc<Matched>>,
    /// The pieces' entity arrays the kept snapshots hold, each counted once however many
    /// columns' pieces and snapshots share it.
    entity_arrays: SharedCount,
    /// The hierarchy tables they hold, each counted once however many snapshots share it.
    hierarchy_tables: SharedCount,
    meter: Meter,
}

/// One capture kept in memory by a [`SnapshotHistory`]; cloning it is cheap (it shares
/// everything).
#[derive(Clone)]
pub struct KeptSnapshot {
    matched: Arc<Matched>,
    hierarchy: Hierarchy,
    keys: Arc<KeyTable>,
    columns: Arc<[(ColumnId, Vec<Arc<Node>>)]>,
    /// The counts of the entity arrays and hierarchy tables it holds: they stop counting when
    /// the last snapshot holding them is dropped (the cache may hold them longer).
    _counted: Arc<[Arc<Counted>]>,
}

impl SnapshotHistory {
    /// Keeps `pending` (a capture of the cache this history records), sharing every piece it
    /// has in common with the last recorded capture; the nodes of the pieces it patched keep
    /// only their changed rows from now on. Call it for every capture of the cache, also
    /// those whose kept snapshot is dropped at once (a save's), so that no patch goes unseen.
    pub fn record(&mut self, pending: &PendingSnapshot) -> KeptSnapshot {
        let mut nodes = HashMap::with_capacity(self.last.len());
        let columns: Vec<(ColumnId, Vec<Arc<Node>>)> = (pending.columns.iter().enumerate())
            .map(|(c, (column, pieces))| {
                let kept = (pieces.iter().enumerate())
                    .map(|(i, piece)| self.node_of(piece, (c, i), &mut nodes));
                (column.clone(), kept.collect())
            })
            .collect();
        self.last = nodes;
        self.last_columns = columns.iter().map(|(_, nodes)| nodes.clone()).collect();
        let counted = self.count_shared(&self.last_columns.concat(), &pending.hierarchy);
        let columns = columns.into();
        KeptSnapshot {
            _counted: counted,
            matched: self.matched(&pending.matched),
            hierarchy: pending.hierarchy.clone(),
            keys: Arc::new(pending.keys.clone()),
            columns,
        }
    }

    /// The bytes the kept snapshots hold: whole pieces (counted even while the cache shares
    /// them), older rows, entity tables, the pieces' entity arrays and the hierarchy tables.
    /// An estimate from above.
    pub fn memory(&self) -> usize {
        self.meter.0.load(Ordering::Relaxed)
    }

    /// Forgets the last capture: the next one is kept whole. Snapshots already kept stay
    /// valid.
    pub fn clear(&mut self) {
        self.last.clear();
        self.last_columns.clear();
        self.last_matched = None;
    }

    /// The counts of the entity arrays of `nodes`' pieces (all whole when a capture is
    /// recorded) and of the hierarchy tables, each shared with the snapshots that hold it
    /// already.
    fn count_shared(&mut self, nodes: &[Arc<Node>], hierarchy: &Hierarchy) -> Arc<[Arc<Counted>]> {
        self.entity_arrays.forget_dropped();
        self.hierarchy_tables.forget_dropped();
        let mut counted = Vec::new();
        for node in nodes {
            if let Body::Whole(piece) = &*node.body() {
                let bytes = size_of_val::<[Entity]>(&piece.entities);
                let meter = &self.meter;
                counted.push(self.entity_arrays.count(&piece.entities, bytes, meter));
            }
        }
        for table in hierarchy.tables() {
            let bytes = table.heap_bytes();
            counted.push(self.hierarchy_tables.count(table, bytes, &self.meter));
        }
        counted.sort_unstable_by_key(|count| Arc::as_ptr(count) as usize);
        counted.dedup_by(|a, b| Arc::ptr_eq(a, b));
        counted.into()
    }

    /// The node of `piece` (the `at`-th of its column): its node from the last capture when the
    /// cache reused it or rebuilt it the same, else a new whole node (and the node of the piece
    /// it patches keeps only the changed rows).
    fn node_of(
        &self,
        piece: &Arc<Piece>,
        at: (usize, usize),
        nodes: &mut HashMap<u64, Arc<Node>>,
    ) -> Arc<Node> {
        let node = match self.last.get(&piece.id()) {
            Some(node) => Arc::clone(node),
            None => self.rebuilt_same(piece, at).unwrap_or_else(|| {
                let node = Node::new(Body::Whole(Arc::clone(piece)), &self.meter);
                self.link_older(piece, &node);
                node
            }),
        };
        nodes.insert(piece.id(), Arc::clone(&node));
        node
    }

    /// The last capture's node at `at` when `piece` was rebuilt with the same entities and rows
    /// (the cache rebuilds every capture the pieces of types that can hold asset handles):
    /// points then share it as they share a reused piece.
    fn rebuilt_same(&self, piece: &Piece, (column, index): (usize, usize)) -> Option<Arc<Node>> {
        let node = self.last_columns.get(column)?.get(index)?;
        let same = match &*node.body() {
            Body::Whole(old) => old.same_as(piece),
            Body::Older { .. } => false,
        };
        same.then(|| Arc::clone(node))
    }

    /// When `piece` patches a piece of the last capture, that piece's node becomes the rows
    /// the patch changed, as they were, over `node`.
    fn link_older(&self, piece: &Piece, node: &Arc<Node>) {
        let PieceParts::Patch { old, changed, .. } = piece.parts() else {
            return;
        };
        if let Some(older) = self.last.get(&old.id()) {
            older.make_older(node, changed);
        }
    }

    /// The saved entities of a capture, shared with the last one's when they are the same.
    fn matched(&mut self, entities: &[Entity]) -> Arc<Matched> {
        if let Some(last) = &self.last_matched
            && *last.entities == *entities
        {
            return Arc::clone(last);
        }
        let matched = Arc::new(Matched {
            _counted: Counted::new(&self.meter, size_of_val(entities)),
            entities: entities.into(),
        });
        self.last_matched = Some(Arc::clone(&matched));
        matched
    }
}

impl KeptSnapshot {
    /// How many entities the kept capture holds.
    pub fn entities(&self) -> usize {
        self.matched.entities.len()
    }

    /// The saved entities, archetype by archetype, as the capture found them.
    pub(crate) fn matched(&self) -> &[Entity] {
        &self.matched.entities
    }

    /// The saved entities' hierarchy as the capture read it.
    pub(crate) fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// The keyed unsaved entities the capture found, by ascending id.
    pub(crate) fn keys(&self) -> Vec<(Entity, String)> {
        let entries = self.keys.entries().iter();
        let valid =
            entries.filter_map(|(id, key)| Some((Entity::try_from_bits(*id)?, key.clone())));
        valid.collect()
    }

    /// The pieces of `type_path`'s column, put together.
    pub(crate) fn column_pieces(&self, type_path: &str) -> Vec<Arc<Piece>> {
        let column = self.columns.iter().find(|(c, _)| c.type_path == type_path);
        column.map_or_else(Vec::new, |(_, nodes)| {
            nodes.iter().map(Node::piece).collect()
        })
    }

    /// Each column's header and nodes, in the capture's order.
    pub(super) fn columns(&self) -> &[(ColumnId, Vec<Arc<Node>>)] {
        &self.columns
    }

    /// The kept capture put back together, ready for
    /// [`PendingSnapshot::finish`] to write the blob the capture would have written. Lays the
    /// older rows over the newer ones piece by piece (a copy of each piece that changed since),
    /// so run it off the main thread. The pieces it puts together are kept whole from then on.
    pub fn pending(&self) -> PendingSnapshot {
        let columns = self
            .columns
            .iter()
            .map(|(column, nodes)| (column.clone(), nodes.iter().map(Node::piece).collect()))
            .collect();
        PendingSnapshot {
            matched: self.matched.entities.to_vec(),
            hierarchy: self.hierarchy.clone(),
            order: OrderMemo::default(),
            joins: JoinMemo::default(),
            keys: (*self.keys).clone(),
            columns,
            handles_left_out: Vec::new(),
        }
    }
}

/// A capture's saved entities, counted while kept.
struct Matched {
    entities: Box<[Entity]>,
    _counted: Counted,
}

/// One piece's rows as a history keeps them.
pub(super) struct Node {
    body: Mutex<Body>,
    meter: Meter,
}

#[derive(Clone)]
enum Body {
    /// The piece itself.
    Whole(Arc<Piece>),
    /// The rows of `newer`, except `changed` (ascending), whose values here are `values`.
    Older {
        newer: Arc<Node>,
        changed: Arc<[usize]>,
        values: Arc<Rows>,
    },
}

impl Body {
    fn heap_bytes(&self) -> usize {
        match self {
            Body::Whole(piece) => piece.heap_bytes(),
            Body::Older {
                changed, values, ..
            } => values.heap_bytes() + size_of_val::<[usize]>(changed),
        }
    }
}

impl Node {
    fn new(body: Body, meter: &Meter) -> Arc<Node> {
        meter.add(body.heap_bytes());
        Arc::new(Node {
            body: Mutex::new(body),
            meter: meter.clone(),
        })
    }

    fn body(&self) -> MutexGuard<'_, Body> {
        self.body.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn replace(&self, body: &mut Body, with: Body) {
        self.meter.add(with.heap_bytes());
        self.meter.sub(body.heap_bytes());
        *body = with;
    }

    /// A whole node whose piece `newer`'s piece patched keeps only the rows `changed`, as
    /// they were.
    fn make_older(&self, newer: &Arc<Node>, changed: Arc<[usize]>) {
        let mut body = self.body();
        let Body::Whole(piece) = &*body else {
            return; // only a whole node's piece is patched by the next capture
        };
        let values = Arc::new(piece.rows_at(&changed));
        let newer = Arc::clone(newer);
        self.replace(
            &mut body,
            Body::Older {
                newer,
                changed,
                values,
            },
        );
    }

    /// The rows that differ between this node and the newer captures, as layers (nearest
    /// first: changed rows, ascending, and their values here or in a capture between), and
    /// the whole piece the chain ends in. Puts no piece together; a chain longer than
    /// [`MAX_CHAIN`] is merged into one layer over the node it ends in first, so that every
    /// capture after a point (saves, points, rewinds) does not make each later walk longer.
    pub(super) fn chain(self: &Arc<Self>) -> (Vec<OlderRows>, Arc<Piece>) {
        let mut layers = Vec::new();
        let mut node = Arc::clone(self);
        let end = loop {
            let body = node.body().clone();
            match body {
                Body::Whole(piece) => break piece,
                Body::Older {
                    newer,
                    changed,
                    values,
                } => {
                    layers.push((changed, values));
                    node = newer;
                }
            }
        };
        if layers.len() > MAX_CHAIN {
            let (changed, values) = merge_layers(&layers, end.rows());
            let (changed, values): OlderRows = (changed.into(), Arc::new(values));
            let merged = Body::Older {
                newer: node,
                changed: Arc::clone(&changed),
                values: Arc::clone(&values),
            };
            self.replace(&mut self.body(), merged);
            layers = vec![(changed, values)];
        }
        (layers, end)
    }

    /// The node's rows as a piece: its own piece, or the newer piece it ends in with the
    /// older rows of every node on the way laid over it (the nearest first). The piece put
    /// together replaces the node's body, freeing the newer nodes no one else holds.
    pub(super) fn piece(self: &Arc<Self>) -> Arc<Piece> {
        let (layers, newest) = self.chain();
        if layers.is_empty() {
            return newest;
        }
        let over: Vec<Layer<'_>> = layers
            .iter()
            .map(|(changed, values)| Layer { changed, values })
            .collect();
        let rows = Rows::layered(newest.bytes(), &over);
        let piece = Arc::new(Piece::ready(Arc::clone(&newest.entities), rows));
        self.replace(&mut self.body(), Body::Whole(Arc::clone(&piece)));
        piece
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let body = self.body.get_mut().unwrap_or_else(PoisonError::into_inner);
        self.meter.sub(body.heap_bytes());
    }
}

/// The bytes a history's kept snapshots hold, shared by everything it counts.
#[derive(Clone, Default)]
struct Meter(Arc<AtomicUsize>);

impl Meter {
    fn add(&self, bytes: usize) {
        self.0.fetch_add(bytes, Ordering::Relaxed);
    }

    fn sub(&self, bytes: usize) {
        self.0.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Allocations kept snapshots share (with each other and with the cache), each counted once,
/// by address, for as long as a snapshot holds its count. While a snapshot holds the count it
/// holds the allocation too, so the address cannot be reused meanwhile.
#[derive(Default)]
struct SharedCount(HashMap<usize, Weak<Counted>>);

impl SharedCount {
    /// The count of `shared`, made when no snapshot holds one.
    fn count<T: ?Sized>(&mut self, shared: &Arc<T>, bytes: usize, meter: &Meter) -> Arc<Counted> {
        let address = Arc::as_ptr(shared).cast::<()>() as usize;
        if let Some(counted) = self.0.get(&address).and_then(Weak::upgrade) {
            return counted;
        }
        let counted = Arc::new(Counted::new(meter, bytes));
        self.0.insert(address, Arc::downgrade(&counted));
        counted
    }

    fn forget_dropped(&mut self) {
        self.0.retain(|_, counted| counted.strong_count() > 0);
    }
}

/// Bytes counted on a [`Meter`] for as long as it lives.
struct Counted {
    meter: Meter,
    bytes: usize,
}

impl Counted {
    fn new(meter: &Meter, bytes: usize) -> Self {
        meter.add(bytes);
        Counted {
            meter: meter.clone(),
            bytes,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.meter.sub(self.bytes);
    }
}
