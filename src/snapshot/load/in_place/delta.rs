//! What an in-place apply changes: the values to write over live ones, the components to
//! insert and remove, the saved entities to spawn and the live ones to despawn, found by
//! comparing each saved row's bytes with the live row's.

use bevy::prelude::*;

/// Where a saved value to write comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ValueRef {
    /// Row `row` of decoded column `column` (a load: decoded on the task pool).
    Decoded { column: u32, row: u32 },
    /// The `index`-th decoded resource.
    DecodedResource(u32),
    /// Bytes `start..end` of the delta's arena: a value as today's type writes it, without
    /// its length prefix (a kept snapshot: only the rows written are decoded).
    Encoded { start: u32, end: u32 },
}

/// One value for one entity.
#[derive(Clone, Copy, Debug)]
pub(super) struct Op {
    /// The live entity.
    pub(super) entity: Entity,
    pub(super) entry: u32,
    pub(super) value: ValueRef,
    /// The saved and live bytes differ but hold the same bytes, counted: perhaps the same
    /// map or set in another iteration order (a map decoded by an earlier apply iterates in an
    /// order of its own), so the values are compared before the write.
    pub(super) reordered: bool,
}

impl Op {
    /// A write of `value` over `entity`'s `entry`, whose saved bytes are `saved` and live ones
    /// `live`.
    pub(super) fn write(
        entity: Entity,
        entry: u32,
        value: ValueRef,
        (saved, live): (&[u8], &[u8]),
    ) -> Self {
        Op {
            entity,
            entry,
            value,
            reordered: same_bytes_counted(saved, live),
        }
    }

    /// An insert of `value` into `entity`, which lacks `entry`'s type.
    pub(super) fn insert(entity: Entity, entry: u32, value: ValueRef) -> Self {
        Op {
            entity,
            entry,
            value,
            reordered: false,
        }
    }
}

/// Whether `a` and `b` hold the same bytes, each as many times (a cheap test that two
/// encodings may be the same map in another order: a changed value changes the counts).
fn same_bytes_counted(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut counts = [0i32; 256];
    for (&x, &y) in a.iter().zip(b) {
        counts[x as usize] += 1;
        counts[y as usize] -= 1;
    }
    counts.iter().all(|&count| count == 0)
}

/// A saved entity's value for an entity that is spawned.
#[derive(Clone, Copy, Debug)]
pub(super) struct SpawnValue {
    pub(super) dense: u32,
    pub(super) entry: u32,
    pub(super) value: ValueRef,
}

/// Everything an in-place apply changes, found before the world is touched.
#[derive(Default)]
pub(super) struct Delta {
    /// Values that differ, written over the live ones.
    pub(super) writes: Vec<Op>,
    /// Values of types the live entity lacks.
    pub(super) inserts: Vec<Op>,
    /// Types the live entity has and its saved one does not: (entity, entry).
    pub(super) removes: Vec<(Entity, u32)>,
    /// The values of the saved entities that are spawned.
    pub(super) spawns: Vec<SpawnValue>,
    /// Resources whose value differs.
    pub(super) resources: Vec<(u32, ValueRef)>,
    /// Live parents whose children's order may differ from the saved one.
    pub(super) parents: Vec<Entity>,
    /// The encoded values [`ValueRef::Encoded`] points into.
    pub(super) arena: Vec<u8>,
}

impl Delta {
    /// Keeps `bytes` in the arena and returns where.
    pub(super) fn encoded(&mut self, bytes: &[u8]) -> ValueRef {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(bytes);
        ValueRef::Encoded {
            start,
            end: self.arena.len() as u32,
        }
    }

    /// Adds another delta's changes (of other columns) to this one.
    pub(super) fn extend(&mut self, other: Delta) {
        let shift = self.arena.len() as u32;
        let moved = |value: ValueRef| match value {
            ValueRef::Encoded { start, end } => ValueRef::Encoded {
                start: start + shift,
                end: end + shift,
            },
            decoded => decoded,
        };
        let op = |op: Op| Op {
            value: moved(op.value),
            ..op
        };
        self.writes.extend(other.writes.into_iter().map(op));
        self.inserts.extend(other.inserts.into_iter().map(op));
        self.removes.extend(other.removes);
        let spawn = |s: SpawnValue| SpawnValue {
            value: moved(s.value),
            ..s
        };
        self.spawns.extend(other.spawns.into_iter().map(spawn));
        let resource = |(entry, value)| (entry, moved(value));
        self.resources
            .extend(other.resources.into_iter().map(resource));
        self.parents.extend(other.parents);
        self.arena.extend(other.arena);
    }

    /// How many values it writes, inserts, spawns or sets as a resource.
    pub(super) fn values(&self) -> usize {
        self.writes.len() + self.inserts.len() + self.spawns.len() + self.resources.len()
    }
}
