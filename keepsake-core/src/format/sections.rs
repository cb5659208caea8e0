//! The postcard sections of a file, the metadata and the payload's bundle, decoded with their
//! maps paid for from the read's [`Budget`]: an `extras` entry of a few bytes in the file is a
//! B-tree entry of about a hundred bytes in memory, so a forged map of a million tiny entries
//! is refused before it is built, while its keys and values (borrowed from the input until
//! they are paid for) cost what they weigh.

use super::budget::Budget;
use super::error::{FormatError, Section};
use super::meta::SaveMeta;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

/// What one map entry costs besides its key's and value's own bytes: a key and a value in a
/// B-tree node, counted twice since a map filled in ascending order (as written) keeps its
/// nodes about half full, and a share of the node's header and of the inner nodes.
const ENTRY_COST: u64 = 2 * (size_of::<String>() + size_of::<Vec<u8>>()) as u64 + 16;

/// [`SaveBundle`](super::SaveBundle)'s postcard layout with the snapshot blob borrowed from the
/// buffer, so that an owned buffer can become the blob (see `decode::decode_bundle`). Must list
/// the same fields in the same order as `SaveBundle` and `WorldState`; the round-trip tests
/// decode through it.
pub(crate) struct BundleView<'a> {
    pub(crate) schema_version: u32,
    pub(crate) world: WorldView<'a>,
    pub(crate) extras: BTreeMap<String, Vec<u8>>,
}

#[derive(Deserialize)]
pub(crate) struct WorldView<'a> {
    pub(crate) tick: u64,
    pub(crate) ecs_blob: &'a [u8],
    pub(crate) state_hash: u64,
}

/// Decodes `bytes`, which must be exactly one value, through `seed`; a refusal of the budget
/// (which serde's error cannot carry) is returned as [`FormatError::OverBudget`].
pub(crate) fn decode_exact<'de, S: DeserializeSeed<'de>>(
    section: Section,
    bytes: &'de [u8],
    seed: S,
    budget: &Budget,
) -> Result<S::Value, FormatError> {
    let decode_error = |source| match budget.refusal() {
        Some(refused) => FormatError::OverBudget(refused),
        None => FormatError::Decode { section, source },
    };
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    let value = seed.deserialize(&mut deserializer).map_err(decode_error)?;
    let rest = deserializer.finalize().map_err(decode_error)?;
    if !rest.is_empty() {
        return Err(FormatError::UnusedBytes {
            section,
            extra: rest.len(),
        });
    }
    Ok(value)
}

/// Decodes a [`SaveMeta`] (the fields of its serde derive, in order), its extras paid for.
pub(crate) struct MetaSeed<'b>(pub(crate) &'b Budget);

const META_FIELDS: &[&str] = &[
    "save_id",
    "slot",
    "created_at",
    "playtime",
    "game_tick",
    "title",
    "game_version",
    "extras",
];

impl<'de> DeserializeSeed<'de> for MetaSeed<'_> {
    type Value = SaveMeta;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<SaveMeta, D::Error> {
        deserializer.deserialize_struct("SaveMeta", META_FIELDS, self)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'_> {
    type Value = SaveMeta;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("save metadata")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SaveMeta, A::Error> {
        let extras = Extras::<String>::new(self.0, "metadata's extras");
        Ok(SaveMeta {
            save_id: element(&mut seq, 0)?,
            slot: element(&mut seq, 1)?,
            created_at: element(&mut seq, 2)?,
            playtime: element(&mut seq, 3)?,
            game_tick: element(&mut seq, 4)?,
            title: element(&mut seq, 5)?,
            game_version: element(&mut seq, 6)?,
            extras: seeded(&mut seq, 7, extras)?,
            thumbnail: None,
        })
    }
}

/// Decodes a [`BundleView`], its extras paid for.
pub(crate) struct BundleSeed<'b>(pub(crate) &'b Budget);

impl<'de> DeserializeSeed<'de> for BundleSeed<'_> {
    type Value = BundleView<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let fields = &["schema_version", "world", "extras"];
        deserializer.deserialize_struct("SaveBundle", fields, self)
    }
}

impl<'de> Visitor<'de> for BundleSeed<'_> {
    type Value = BundleView<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a save bundle")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let extras = Extras::<Vec<u8>>::new(self.0, "payload's extras");
        Ok(BundleView {
            schema_version: element(&mut seq, 0)?,
            world: element(&mut seq, 1)?,
            extras: seeded(&mut seq, 2, extras)?,
        })
    }
}

fn element<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(
    seq: &mut A,
    index: usize,
) -> Result<T, A::Error> {
    seq.next_element()?
        .ok_or_else(|| de::Error::invalid_length(index, &"every field of the section"))
}

fn seeded<'de, A: SeqAccess<'de>, S: DeserializeSeed<'de>>(
    seq: &mut A,
    index: usize,
    seed: S,
) -> Result<S::Value, A::Error> {
    seq.next_element_seed(seed)?
        .ok_or_else(|| de::Error::invalid_length(index, &"every field of the section"))
}

/// An extras map (`String` keys, values of `V`), each entry paid for before its key and value
/// are copied out of the input.
struct Extras<'b, V> {
    budget: &'b Budget,
    section: &'static str,
    value: PhantomData<V>,
}

impl<'b, V> Extras<'b, V> {
    fn new(budget: &'b Budget, section: &'static str) -> Self {
        Extras {
            budget,
            section,
            value: PhantomData,
        }
    }
}

/// A map value read borrowed from the input, then owned.
trait ExtraValue<'de>: Sized {
    type Borrowed: Deserialize<'de>;
    fn len(borrowed: &Self::Borrowed) -> usize;
    fn own(borrowed: Self::Borrowed) -> Self;
}

impl<'de> ExtraValue<'de> for String {
    type Borrowed = &'de str;
    fn len(borrowed: &&'de str) -> usize {
        borrowed.len()
    }
    fn own(borrowed: &'de str) -> Self {
        borrowed.to_owned()
    }
}

impl<'de> ExtraValue<'de> for Vec<u8> {
    type Borrowed = &'de [u8];
    fn len(borrowed: &&'de [u8]) -> usize {
        borrowed.len()
    }
    fn own(borrowed: &'de [u8]) -> Self {
        borrowed.to_vec()
    }
}

impl<'de, V: ExtraValue<'de>> DeserializeSeed<'de> for Extras<'_, V> {
    type Value = BTreeMap<String, V>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, V: ExtraValue<'de>> Visitor<'de> for Extras<'_, V> {
    type Value = BTreeMap<String, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of extras")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut extras = BTreeMap::new();
        let mut entries = 0usize;
        while let Some(key) = map.next_key::<&'de str>()? {
            let value: V::Borrowed = map.next_value()?;
            entries += 1;
            let cost = ENTRY_COST + (key.len() + V::len(&value)) as u64;
            self.budget
                .charge(format_args!("{} ({entries} entries)", self.section), cost)
                .map_err(de::Error::custom)?;
            extras.insert(key.to_owned(), V::own(value));
        }
        Ok(extras)
    }
}
