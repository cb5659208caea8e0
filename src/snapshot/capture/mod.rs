//! World → `ecs_blob`. Every capture drives the same typed walk of each registered type
//! (`register::walk`) into a sink and writes the blob with the same `blob` writer; the two sinks
//! are the two ways to capture:
//!
//! - a [`CaptureCache`] column keeps the encoded rows in pieces between captures, so a capture
//!   re-encodes only what changed since (the plugin's saves);
//! - a full [`capture`] writes every value straight into the blob. A full capture through a
//!   fresh cache was measured first (it would leave one sink): 24–38 % slower on the snapshot
//!   benchmarks (pieces built, recorded and copied), so the direct sink stays.
//!
//! | file | role |
//! |------|------|
//! | `cache.rs` | the cache between captures; the main thread's part of a capture |
//! | `column.rs` | one type's column during a cached capture: reuse, patch or encode each piece |
//! | `direct.rs` | one type's column during a full capture: each value straight into the blob |
//! | `encode.rs` | the rows a cached capture re-encodes: on the compute pool too, when many |
//! | `piece.rs` | a piece of encoded rows, or a patch of one put together when first read |
//! | `history.rs` | captures kept in memory, sharing unchanged pieces (the plugin's rewind points) |
//! | `hierarchy.rs` | the entity table's order (parents first, kept between captures) and dense indices |
//! | `keys.rs` | the key table: keyed entities the save does not hold, unique keys |
//! | `pending.rs` | the pool's part: order, join, hash ([`PendingSnapshot::finish`]) |
//! | `since.rs` | what changed between a kept snapshot and a later capture: the rows an in-place restore compares |
//! | `join.rs` | the pieces joined into the blob, each row behind its entity index; the last blob's rows taken over |
//! | `full.rs` | [`capture`]: the entity and key tables first, then the direct columns |
//! | `world.rs` | what every capture reads from the world first |
//!
//! The typed walk of each type's values (`register::walk`) hands them to the column; this
//! folder never names a concrete type.
//!
//! Most of a world does not change between two saves, so a [`CaptureCache`] keeps each registered
//! type's column as pieces of up to [`PIECE_ROWS`] table rows: the piece's entities and their
//! length-prefixed values, which are exactly the bytes the blob holds for those rows except the
//! entity index deltas. A capture walks each type's tables in the order a query visits them and,
//! per piece:
//!
//! - reuses it when the table holds the same entities in those rows as at the last capture and
//!   no value's change tick is newer than that capture;
//! - *patches* it when only values changed: the changed rows are encoded, and the patched
//!   piece holds just them until [`PendingSnapshot::finish`] (on the task pool) copies the
//!   other rows in runs from the old piece, so the main thread copies nothing;
//! - rebuilds it when the rows' entities changed (a spawn, despawn, insert or removal moves
//!   entities between tables, and a despawn swaps the table's last row into the hole), when the
//!   table mixes saved and unsaved entities, or when the last capture of the table left
//!   run-time asset handles out (saved as the default handle: every capture reports them).
//!   Handles saved by path are cached like any value: a handle's path is part of the handle.
//!
//! Resources are re-encoded when their change tick is newer. Entity references inside values
//! are written as the saving world's ids, not as entity indices, so moving an entity in the
//! entity table never invalidates a piece. The entity table (the filter's entities, ordered by
//! the hierarchy) is read on the main thread as ids, parents and children, with the key table
//! (every unsaved entity with a `LevelKey`: a few per level); putting it in order,
//! giving each row its entity index and joining the pieces into the blob, then hashing it, is
//! [`PendingSnapshot::finish`], which needs no world and runs on the task pool in the plugin.
//! The order is taken over from the cache's last finished capture when neither the saved
//! entities nor any table's hierarchy changed since (most saves: values change, the hierarchy
//! rarely).
//!
//! The blob is byte for byte the one a full capture writes for the same world (tests edit a world
//! at random for hundreds of steps and compare). Changes made without change detection
//! (`bypass_change_detection`, interior mutability) are not seen, nor are type registrations
//! that change how a type is written (`ReflectSerialize` registered later): call
//! [`CaptureCache::clear`] after them. The cache starts over by itself when the world, the registry
//! or its filter changes, after a failed capture, and when the last capture is too many ticks ago
//! for change ticks to tell.

mod cache;
mod column;
mod direct;
mod encode;
pub(crate) mod full;
mod hierarchy;
mod history;
mod join;
mod keys;
mod pending;
mod piece;
mod since;
mod world;

pub use cache::{CaptureCache, capture_incremental};
pub use column::CaptureStats;
pub use full::capture;
pub(crate) use hierarchy::{DenseIndex, Hierarchy};
pub use history::{KeptSnapshot, SnapshotHistory};
pub use pending::{PendingSnapshot, Snapshot};
pub use piece::PIECE_ROWS;
pub(crate) use piece::{Piece, Rows};
pub(crate) use since::ColumnChanges;
