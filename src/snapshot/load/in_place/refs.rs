//! Rows (and resources) whose bytes did not change but which name an entity that is now another one (a saved
//! entity spawned again, a keyed level entity found under another id): written anyway, with
//! the reference remapped.

use bevy::prelude::*;
use keepsake_core::wire;
use std::collections::HashSet;

/// The saved ids that name another entity after the apply.
pub(super) enum Moved {
    /// Every saved id names itself: no row needs writing for its references.
    None,
    /// These ids (as `Entity::to_bits`).
    Some(HashSet<u64>),
    /// The snapshot is from elsewhere: every reference is remapped, so every row of a type
    /// that can hold an entity is written.
    All,
}

impl Moved {
    pub(super) fn of(ids: impl Iterator<Item = Entity>) -> Self {
        let ids: HashSet<u64> = ids.map(Entity::to_bits).collect();
        match ids.is_empty() {
            true => Moved::None,
            false => Moved::Some(ids),
        }
    }

    /// Whether a value whose bytes are `bytes` may name a moved id.
    pub(super) fn mentioned_in(&self, bytes: &[u8]) -> bool {
        match self {
            Moved::None => false,
            Moved::All => true,
            Moved::Some(ids) => mentions(bytes, ids),
        }
    }
}

/// Whether `bytes` hold, at some offset, the postcard varint of one of `ids`. Every writer
/// (serde, the reflection plans, Bevy's reflection serializer) writes an `Entity` as the
/// varint of its bits, so a reference is never missed; other bytes may match by chance,
/// which only costs a value written that was the same.
fn mentions(bytes: &[u8], ids: &HashSet<u64>) -> bool {
    (0..bytes.len()).any(|at| match wire::read_varint(&bytes[at..], 10) {
        Ok((value, _)) => u64::try_from(value).is_ok_and(|value| ids.contains(&value)),
        Err(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entity_is_found_wherever_its_varint_sits() {
        let entity = Entity::from_raw_u32(300).unwrap();
        let mut bytes = vec![7, 1, 2];
        wire::put_varint(&mut bytes, entity.to_bits());
        bytes.push(9);
        let moved = Moved::of([entity].into_iter());
        assert!(moved.mentioned_in(&bytes));
        assert!(!moved.mentioned_in(&bytes[..3]));
        assert!(!Moved::None.mentioned_in(&bytes));
    }
}
