//! The front of a blob: the entity table, and (since layout version 3) the key table of the
//! unsaved entities saved values may reference. Read once per blob by the cursor, checked
//! entirely before any column is read.
//!
//! # Memory
//!
//! The entity table stays in the blob: [`EntityIds`] reads its ids again when asked, so a
//! table of a million one-byte ids costs no eight-megabyte vector. Checking that no entity is
//! listed twice sorts a scratch copy of the ids' indices (four bytes an id, paid from the
//! reader's budget and given back once the key table is checked); the keys borrow their text
//! from the blob.

use super::layout::KEYS_SINCE;
use crate::error::BlobError;
use crate::wire::BlobReader;
use crate::wire::{read_varint, undelta};

/// An entity that was not saved but that saved values may reference: its id in the saving
/// world and the key the game gave it (a `LevelKey`, or its `Name` where the game opted in).
/// A load resolves the id to the live entity with the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredLevelKey<'a> {
    /// The entity's id in the saving world (`Entity::to_bits`).
    pub entity_id: u64,
    /// Its key.
    pub key: &'a str,
}

/// The saving world's entity ids (`Entity::to_bits`) in entity-index order, read from the
/// blob's entity table when iterated (the table was checked when the blob was opened).
///
/// Compares equal to a slice or vector of the same ids.
#[derive(Clone, Copy)]
pub struct EntityIds<'a> {
    /// The table's deltas (see the layout in the [`blob` module](super)).
    deltas: &'a [u8],
    len: usize,
}

impl<'a> EntityIds<'a> {
    /// How many entities the table lists.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table lists no entity.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ids, in entity-index order.
    pub fn iter(&self) -> EntityIdIter<'a> {
        EntityIdIter {
            deltas: self.deltas,
            previous: 0,
            left: self.len,
        }
    }
}

impl<'a> IntoIterator for EntityIds<'a> {
    type Item = u64;
    type IntoIter = EntityIdIter<'a>;

    fn into_iter(self) -> EntityIdIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &EntityIds<'a> {
    type Item = u64;
    type IntoIter = EntityIdIter<'a>;

    fn into_iter(self) -> EntityIdIter<'a> {
        self.iter()
    }
}

impl PartialEq for EntityIds<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for EntityIds<'_> {}

impl PartialEq<[u64]> for EntityIds<'_> {
    fn eq(&self, other: &[u64]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<u64>> for EntityIds<'_> {
    fn eq(&self, other: &Vec<u64>) -> bool {
        *self == other[..]
    }
}

impl std::fmt::Debug for EntityIds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The ids of an [`EntityIds`], in order.
#[derive(Clone, Debug)]
pub struct EntityIdIter<'a> {
    deltas: &'a [u8],
    previous: u64,
    left: usize,
}

impl Iterator for EntityIdIter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.left = self.left.checked_sub(1)?;
        // The table was read with these very bytes when the blob was opened, so they read.
        let (zigzagged, len) = read_varint(self.deltas, 10).ok()?;
        self.deltas = &self.deltas[len..];
        self.previous = undelta(self.previous, u64::try_from(zigzagged).ok()?);
        Some(self.previous)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for EntityIdIter<'_> {}

/// The entity table and the key table, checked.
pub struct EntityTable<'a> {
    /// The saved entities' ids in the saving world, in entity-index order.
    pub ids: EntityIds<'a>,
    /// The keyed unsaved entities, by ascending id (empty before layout version 3).
    pub keys: Vec<StoredLevelKey<'a>>,
}

impl<'a> EntityTable<'a> {
    /// Reads both tables: ids valid and each entity listed once, keyed ids outside the entity
    /// table, every key used once.
    pub(crate) fn read(reader: &mut BlobReader<'a>, layout_version: u8) -> Result<Self, BlobError> {
        let budget = reader.budget().clone();
        let (ids, keys) = budget.transient(|| {
            let (ids, indices) = read_entity_ids(reader)?;
            let keys = match layout_version >= KEYS_SINCE {
                true => read_keys(reader, &indices)?,
                false => Vec::new(),
            };
            Ok::<_, BlobError>((ids, keys))
        })?;
        // The scratch of indices is gone; the keys stay.
        let section = format_args!("key table ({} keys)", keys.len());
        reader.charge(
            section,
            (keys.capacity() * size_of::<StoredLevelKey<'_>>()) as u64,
        )?;
        Ok(EntityTable { ids, keys })
    }
}

/// The entity table (ids as deltas, each a valid Bevy entity id, each entity listed once),
/// and its entities' indices sorted.
fn read_entity_ids<'a>(
    reader: &mut BlobReader<'a>,
) -> Result<(EntityIds<'a>, Vec<u32>), BlobError> {
    let count = reader.count("entity count", 1)?;
    if count > u32::MAX as usize {
        return Err(malformed(reader.offset(), "more than 2^32 entities"));
    }
    let start = reader.offset();
    let mut indices: Vec<u32> =
        reader.vec(format_args!("entity table ({count} entities)"), count)?;
    let mut bits = 0;
    for _ in 0..count {
        let offset = reader.offset();
        bits = reader.delta(bits, "entity id")?;
        if !is_entity_id(bits) {
            return Err(malformed(
                offset,
                format!("{bits:#x} is not a valid entity id"),
            ));
        }
        indices.push(index_of(bits));
    }
    let ids = EntityIds {
        deltas: reader.since(start),
        len: count,
    };
    indices.sort_unstable();
    if indices.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(repeated_id(ids, start, indices));
    }
    Ok((ids, indices))
}

/// The key table: ids as deltas in ascending order (so none repeats), none of them a saved
/// entity's (by index: one world never has two entities at one index), each key used once.
fn read_keys<'a>(
    reader: &mut BlobReader<'a>,
    saved_indices: &[u32],
) -> Result<Vec<StoredLevelKey<'a>>, BlobError> {
    // An id delta and a key's length, a byte each at least.
    let count = reader.count("key count", 2)?;
    let start = reader.offset();
    let mut keys = reader.vec(format_args!("key table ({count} keys)"), count)?;
    let mut previous = 0;
    for _ in 0..count {
        let offset = reader.offset();
        let entity_id = reader.delta(previous, "keyed entity id")?;
        let key = reader.str_with_len("entity key")?;
        let problem = if !is_entity_id(entity_id) {
            Some(format!("{entity_id:#x} is not a valid entity id"))
        } else if !keys.is_empty() && entity_id <= previous {
            Some(format!("keyed entity id {entity_id:#x} is out of order"))
        } else if saved_indices.binary_search(&index_of(entity_id)).is_ok() {
            Some(format!(
                "keyed entity id {entity_id:#x} is also a saved entity"
            ))
        } else {
            None
        };
        if let Some(reason) = problem {
            return Err(malformed(offset, reason));
        }
        keys.push(StoredLevelKey { entity_id, key });
        previous = entity_id;
    }
    check_keys_once(reader, &keys, start)?;
    Ok(keys)
}

/// Refuses a key used twice, naming the first repeat in table order, at its entry's offset
/// (`start` being the first entry's). Sorts a scratch copy of the keys rather than hashing
/// text the file chooses.
fn check_keys_once(
    reader: &BlobReader<'_>,
    keys: &[StoredLevelKey<'_>],
    start: usize,
) -> Result<(), BlobError> {
    let mut sorted: Vec<&str> = reader.vec("key table's check", keys.len())?;
    sorted.extend(keys.iter().map(|key| key.key));
    sorted.sort_unstable();
    if !sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Ok(());
    }
    let repeated = repeated_only(&mut sorted);
    let mut seen: Vec<bool> = reader.vec("key table's check", repeated.len())?;
    seen.resize(repeated.len(), false);
    let mut entries = reader.since(start);
    let mut offset = start;
    for key in keys {
        if let Ok(at) = repeated.binary_search(&key.key) {
            if seen[at] {
                return Err(malformed(
                    offset,
                    format!("the key {:?} is listed twice", key.key),
                ));
            }
            seen[at] = true;
        }
        // The entry was read from these bytes: its id's delta, then the key with its length.
        let delta = read_varint(entries, 10).map_or(0, |(_, len)| len);
        let length = read_varint(&entries[delta..], 10).map_or(0, |(_, len)| len);
        let len = (delta + length + key.key.len()).min(entries.len());
        entries = &entries[len..];
        offset += len;
    }
    Ok(())
}

/// Keeps, of a sorted list, each value that appears more than once (once), and returns them.
fn repeated_only<T: PartialEq + Copy>(sorted: &mut Vec<T>) -> &[T] {
    let mut kept = 0;
    let mut at = 0;
    while at < sorted.len() {
        let value = sorted[at];
        let run = sorted[at..]
            .iter()
            .take_while(|&&other| other == value)
            .count();
        if run > 1 {
            sorted[kept] = value;
            kept += 1;
        }
        at += run;
    }
    sorted.truncate(kept);
    sorted
}

/// The error for the first entity of the table (in its order) whose index an earlier one has,
/// at its byte offset (`start` being the first id's). Only on this error's path: reads the
/// table again, marking in the scratch's spare room which repeated indices it has met.
fn repeated_id(ids: EntityIds<'_>, start: usize, mut indices: Vec<u32>) -> BlobError {
    let repeated = repeated_only(&mut indices).len();
    // At most half the indices repeat, so the marks fit in the room the others left.
    indices.resize(2 * repeated, 0);
    let (repeated_indices, seen) = indices.split_at_mut(repeated);
    let mut offset = start;
    let mut deltas = ids.deltas;
    for (position, bits) in ids.iter().enumerate() {
        if let Ok(at) = repeated_indices.binary_search(&index_of(bits)) {
            if seen[at] == 1 {
                return repeat_error(ids, position, bits, offset);
            }
            seen[at] = 1;
        }
        let len = read_varint(deltas, 10).map_or(deltas.len(), |(_, len)| len);
        deltas = &deltas[len..];
        offset += len;
    }
    malformed(start, "an entity is listed twice")
}

/// The error for the id at `position`, whose index an earlier id has.
fn repeat_error(ids: EntityIds<'_>, position: usize, bits: u64, offset: usize) -> BlobError {
    let earlier = ids
        .iter()
        .take(position)
        .find(|&other| index_of(other) == index_of(bits));
    let reason = match earlier {
        Some(other) if other != bits => format!(
            "entity index {} is listed twice (as {other:#x} and {bits:#x})",
            index_of(bits) ^ u32::MAX
        ),
        _ => format!("entity id {bits:#x} is listed twice"),
    };
    malformed(offset, reason)
}

/// Bevy's rule (`Entity::try_from_bits`): the low 32 bits hold the index as a `NonMaxU32`
/// stores it (the index XOR `u32::MAX`), which is never zero.
fn is_entity_id(bits: u64) -> bool {
    bits as u32 != 0
}

/// An id's index bits (the index as a `NonMaxU32` stores it): one live entity at a time has
/// them, so two saved entities never share them.
fn index_of(bits: u64) -> u32 {
    bits as u32
}

fn malformed(offset: usize, reason: impl Into<String>) -> BlobError {
    BlobError::Malformed {
        offset,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_values_are_kept_once_each() {
        let mut sorted = vec![1, 2, 2, 3, 4, 4, 4, 5];
        assert_eq!(repeated_only(&mut sorted), &[2, 4]);
        let mut none = vec![1, 2, 3];
        assert!(repeated_only(&mut none).is_empty());
    }
}
