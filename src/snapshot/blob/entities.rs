//! The front of a blob: the entity table, and (since layout version 3) the key table of the
//! unsaved entities saved values may reference. Read once per blob by the cursor, checked
//! entirely before any column is read.

use super::layout::KEYS_SINCE;
use super::reader::BlobReader;
use crate::snapshot::error::SnapshotError;
use std::collections::HashSet;

/// An entity that was not saved but that saved values may reference: its id in the saving
/// world and the key the game gave it (a `SaveKey`, or its `Name` where the game opted in).
/// A load resolves the id to the live entity with the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredKey<'a> {
    /// The entity's id in the saving world (`Entity::to_bits`).
    pub entity_id: u64,
    /// Its key.
    pub key: &'a str,
}

/// The entity table and the key table, checked.
pub(crate) struct EntityTable<'a> {
    /// The saved entities' ids in the saving world, in entity-index order.
    pub(crate) ids: Vec<u64>,
    /// The keyed unsaved entities, by ascending id (empty before layout version 3).
    pub(crate) keys: Vec<StoredKey<'a>>,
}

impl<'a> EntityTable<'a> {
    /// Reads both tables: ids valid and listed once, keyed ids outside the entity table,
    /// every key used once.
    pub(crate) fn read(
        reader: &mut BlobReader<'a>,
        layout_version: u8,
    ) -> Result<Self, SnapshotError> {
        let ids = read_entity_ids(reader)?;
        let keys = match layout_version >= KEYS_SINCE {
            true => read_keys(reader, &ids)?,
            false => Vec::new(),
        };
        Ok(EntityTable { ids, keys })
    }
}

/// The entity table: ids as deltas, each a valid Bevy entity id and listed once.
fn read_entity_ids(reader: &mut BlobReader<'_>) -> Result<Vec<u64>, SnapshotError> {
    let table = reader.clone();
    let count = reader.count("entity count")?;
    if count > u32::MAX as usize {
        return Err(malformed(reader.offset(), "more than 2^32 entities"));
    }
    let mut ids = Vec::with_capacity(count);
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
        ids.push(bits);
    }
    match first_repeat(&ids) {
        None => Ok(ids),
        Some(position) => Err(repeated_id(table, &ids, position)),
    }
}

/// The key table: ids as deltas in ascending order (so none repeats), none of them a saved
/// entity's, each key used once.
fn read_keys<'a>(
    reader: &mut BlobReader<'a>,
    saved_ids: &[u64],
) -> Result<Vec<StoredKey<'a>>, SnapshotError> {
    let count = reader.count("key count")?;
    let mut sorted_saved = saved_ids.to_vec();
    sorted_saved.sort_unstable();
    let mut keys = Vec::with_capacity(count);
    let mut seen = HashSet::with_capacity(count);
    let mut previous = 0;
    for _ in 0..count {
        let offset = reader.offset();
        let entity_id = reader.delta(previous, "keyed entity id")?;
        let key = reader.str_with_len("entity key")?;
        let problem = if !is_entity_id(entity_id) {
            Some(format!("{entity_id:#x} is not a valid entity id"))
        } else if !keys.is_empty() && entity_id <= previous {
            Some(format!("keyed entity id {entity_id:#x} is out of order"))
        } else if sorted_saved.binary_search(&entity_id).is_ok() {
            Some(format!(
                "keyed entity id {entity_id:#x} is also a saved entity"
            ))
        } else if !seen.insert(key) {
            Some(format!("the key {key:?} is listed twice"))
        } else {
            None
        };
        if let Some(reason) = problem {
            return Err(malformed(offset, reason));
        }
        keys.push(StoredKey { entity_id, key });
        previous = entity_id;
    }
    Ok(keys)
}

/// The position of the first id that repeats an earlier one. Sorting a copy finds whether there
/// is one without hashing ids the file chooses (a hash set of them cost a fast hash that a
/// forged file could flood, or a slow one that took a few percent of a load).
fn first_repeat(ids: &[u64]) -> Option<usize> {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).find(|pair| pair[0] == pair[1])?;
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().position(|&id| !seen.insert(id))
}

/// The error for the id at `position`, which repeats an earlier one, at its byte offset
/// (found by reading the table again from its start: only on this error's path).
fn repeated_id(mut table: BlobReader<'_>, ids: &[u64], position: usize) -> SnapshotError {
    let mut offset = table.offset();
    if table.count("entity count").is_ok() {
        for _ in 0..=position {
            offset = table.offset();
            if table.varint("entity id").is_err() {
                break;
            }
        }
    }
    malformed(
        offset,
        format!("entity id {:#x} is listed twice", ids[position]),
    )
}

/// Bevy's rule (`Entity::try_from_bits`): the low 32 bits hold the index as a `NonMaxU32`
/// stores it (the index XOR `u32::MAX`), which is never zero.
fn is_entity_id(bits: u64) -> bool {
    bits as u32 != 0
}

fn malformed(offset: usize, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Malformed {
        offset,
        reason: reason.into(),
    }
}
