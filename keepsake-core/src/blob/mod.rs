//! The `ecs_blob` byte layout, engine-free (no Bevy import): the one table below, the integer
//! encodings (`wire`), a writer, and the one cursor every reader of a blob goes through
//! ([`inspect`], `decode`, `dump`), so a bad byte gets one message everywhere.
//!
//! Readers check every length against the bytes that remain before using it, and every count
//! against the bytes its items take at least; whatever they allocate for a count or a length
//! they pay from the blob's [`Budget`](crate::format::Budget), four bytes per blob byte and a
//! megabyte: a hostile blob is refused ([`BlobError::OverBudget`]) before it makes them
//! allocate more. [`inspect()`] builds no tree and copies no row (its table reads the blob
//! again when asked), so a legitimate blob, however large, stays far within it.
//!
//! [`BlobError::OverBudget`]: crate::error::BlobError::OverBudget
//!
//! # Layout (version 3)
//!
//! Integers are LEB128 varints (the encoding postcard uses); values are postcard. A *delta* is
//! the difference to the previous item of its list (the first item's to 0), wrapping, as a
//! zigzag varint, so runs of neighbouring ids take one byte each.
//!
//! | field | encoding |
//! |-------|----------|
//! | layout version | `u8`, currently `3` (`2` lacks the key table, `1` also the columns' type layouts) |
//! | entity count `N` | varint |
//! | entity ids | `N` deltas: the saving world's `Entity::to_bits`, in dense-index order (parents before children, siblings in order) |
//! | key count `K` | varint (since version 3) |
//! | keyed entities | `K` × (id as a delta, ascending + key as varint length + UTF-8): the unsaved entities with a `LevelKey` (or keyed by `Name`), none of them in the entity table, each key once |
//! | column count `C` | `u32` little-endian |
//! | `C` columns | see below; the blob ends after the last one |
//!
//! A column holds every value of one type:
//!
//! | field | encoding |
//! |-------|----------|
//! | type path | varint length + UTF-8, e.g. `my_game::Health` |
//! | schema version | varint; 1, or one past the highest version the type migrates from (`register_saveable_migration`) |
//! | kind | `u8`: `0` component, `1` resource |
//! | type layout | varint length + the type's layout as [`schema::codec`](crate::schema::codec) writes it (since version 2) |
//! | row count `R` | `u32` little-endian (`1` for a resource) |
//! | `R` rows | component: entity index as a delta (`< N`) + value length (varint) + value; resource: value length + value |
//!
//! Entity references inside values are the saving world's ids; a load maps them through the
//! entity table to the entities it spawns, and through the key table to the live entities
//! with the same keys (a level's door, a scene root). The whole blob is hashed with XXH3-64 into
//! `WorldState::state_hash`, which `bevy_keepsake::snapshot::decode` verifies first.
//!
//! [`inspect()`] reads this table without the game's types (as the `keepsake` command line does);
//! `bevy_keepsake::snapshot::dump` writes every value as RON text through the registered types.

pub(crate) mod cursor;
pub(crate) mod entities;
mod inspect;
mod layout;
mod rows;
pub(crate) mod writer;

pub use crate::error::BlobError;
pub use cursor::StoredRow;
pub use entities::{EntityIdIter, EntityIds, StoredLevelKey};
pub use inspect::{BlobTable, StoredColumn, StoredLayout, inspect, inspect_within};
pub use layout::{BLOB_VERSION, ColumnKind, state_hash};
pub use rows::{StoredRowIter, StoredRows};
