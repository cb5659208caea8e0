//! The snapshot: registered components and resources captured by reflection into the save
//! bundle's `ecs_blob`, and applied back with entity references remapped and the hierarchy
//! restored.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_keepsake::snapshot::{self, LoadMode, Saveable, SaveableAppExt};
//!
//! #[derive(Component, Reflect, Default, PartialEq, Debug)]
//! struct Health(f32);
//!
//! let mut app = App::new();
//! app.register_saveable::<Health>();
//! let world = app.world_mut();
//! world.spawn((Saveable, Health(7.0)));
//!
//! let snapshot = snapshot::capture(world)?;
//! world.query::<&mut Health>().single_mut(world)?.0 = 1.0;
//!
//! let registry = world.resource::<snapshot::SaveRegistry>().clone();
//! let types = world.resource::<AppTypeRegistry>().clone();
//! let decoded = snapshot::decode(&snapshot.blob, snapshot.state_hash, &registry, &types.read())?;
//! snapshot::apply(world, decoded, LoadMode::Replace);
//! assert_eq!(world.query::<&Health>().single(world)?, &Health(7.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Speed
//!
//! Capture reads each registered type as one typed column (a query per type, no per-entity type
//! lookups, no cloning) and writes each value once. Types with `#[reflect(Serialize,
//! Deserialize)]` are written by their serde implementation; others (reflection-only types,
//! the way most Bevy games write components) by a *reflection plan* built once per column from
//! `TypeInfo`: field order and the kind of every leaf, so each field is one downcast and a
//! direct write, with no type-registry lookup, no processor call and no `erased_serde` call per
//! field. Decoding reads the same plan: the first value of a column into the dynamic values
//! `FromReflect` takes, each later one over a clone of the first (reusing its allocations).
//! The plans write and read exactly the bytes of Bevy's reflection serializer (tests compare
//! them value for value, and against serde derives of the same shape); types they do not know
//! (see `reflect_plan`) keep using Bevy's serializer. Type paths are written once per column,
//! not once per value.
//!
//! Where the time went (`perf` profiles and criterion sub-benchmarks of the real-game benchmark
//! world at 10k entities, 11 of its 17 types reflection-only): capturing through Bevy's
//! reflection serializer took 2.5× as long as with the plans (17 ms against 6.9 ms), the
//! difference being per field: a type-registry lookup for each field's type, the processor
//! call, and `erased_serde` for every primitive and glam leaf. With the plans, what is left is
//! the reflection walk itself (about four virtual calls per leaf: field access and the
//! downcast; `write_leaf` and `Plan::write` are the top items), so the same types registered
//! through serde are still 1.7× faster. Decoding through Bevy's deserializer was dominated by
//! allocation (malloc and free about 35% of the profile): dynamic structs allocate two
//! `String`s and a hash-map entry per field, and `FromReflect` then looks every field up by
//! name. Reading over a clone of the column's first value brought decoding from 45 ms to
//! 30 ms; malloc and free remain the largest items (the clone itself, enums that change
//! variant and maps, which are still built as dynamic values), and serde decodes the same
//! types in 10 ms.
//!
//! # Incremental capture
//!
//! [`CaptureCache`] keeps each registered type's encoded rows between captures, in chunks of
//! [`CHUNK_ROWS`] table rows, and re-encodes only the rows whose change ticks are newer than the
//! last capture (and the chunks whose entities moved: spawns, despawns, inserts and removals);
//! [`PendingSnapshot::finish`] then joins the chunks and hashes the blob without the world, so
//! the plugin runs it on the task pool. The blob is the one [`capture`] writes, byte for byte (a
//! test edits a world at random for 200 steps and compares). A full capture's rows follow its
//! queries' table order, which comes from Bevy's component index; the cache walks tables in that
//! same order. See `incremental` for what invalidates a chunk.
//!
//! # Asset handles
//!
//! `Handle<T>` and `UntypedHandle` anywhere in a reflected value are written by asset path (or
//! constant UUID), in the bytes of Bevy's `HandleSerializeProcessor`, and loaded back through the
//! `AssetServer` by [`decode_with_assets`] after the path is checked. Only types whose reflected
//! layout can hold a handle look for one. See [`assets`].
//!
//! # Reading without the game's types
//!
//! [`inspect`] lists a blob's columns and rows (engine-free; the `keepsake` command line uses
//! it); [`dump`] / [`dump_with_assets`] print the values as RON through the registered types.
//!
//! # `ecs_blob` layout (version 1)
//!
//! Integers are LEB128 varints (the encoding postcard uses); values are postcard. A *delta* is
//! the difference to the previous item of its list (the first item's to 0), wrapping, as a
//! zigzag varint, so runs of neighbouring ids take one byte each.
//!
//! | field | encoding |
//! |-------|----------|
//! | layout version | `u8`, currently `1` |
//! | entity count `N` | varint |
//! | entity ids | `N` deltas: the saving world's `Entity::to_bits`, in dense-index order (parents before children, siblings in order) |
//! | column count `C` | `u32` little-endian |
//! | `C` columns | see below; the blob ends after the last one |
//!
//! A column holds every value of one type:
//!
//! | field | encoding |
//! |-------|----------|
//! | type path | varint length + UTF-8, e.g. `my_game::Health` |
//! | schema version | varint; bumped by each `register_saveable_migration` |
//! | kind | `u8`: `0` component, `1` resource |
//! | row count `R` | `u32` little-endian (`1` for a resource) |
//! | `R` rows | component: entity index as a delta (`< N`) + value length (varint) + value; resource: value length + value |
//!
//! Entity references inside values are the saving world's ids; a load maps them through the
//! entity table to the entities it spawns. The whole blob is hashed with XXH3-64 into
//! `WorldState::state_hash`, which [`decode`] verifies first.
//!
//! [`inspect`] reads this table without the game's types (as the `keepsake` command line does);
//! [`dump`] writes every value as RON text through the registered types.
//!
//! # Evolution
//!
//! - A stored type that is no longer registered is skipped with a warning.
//! - A renamed or moved type: `app.register_saveable_rename::<T>("old::path::T")`.
//! - A changed type: `app.register_saveable_migration::<TV1, T>()`, with
//!   `impl From<TV1> for T`.

mod app_ext;
mod apply;
pub mod assets;
mod blob;
mod capture;
mod decode;
mod dump;
mod dynamic_bundle;
mod entity_mapping;
mod error;
mod filter;
mod incremental;
mod inspect;
mod plan_read;
mod reflect_plan;
mod registry;
mod type_ops;
mod typed_capture;
mod value;

pub use app_ext::SaveableAppExt;
pub(crate) use app_ext::ensure_registry;
pub use apply::{ApplyReport, LoadMode, apply};
pub use assets::{LeftOutHandle, RefusedAssetPath, RuntimeAssetHandles};
pub use blob::{BLOB_VERSION, ColumnKind, state_hash};
pub use capture::{Snapshot, capture, capture_without_plans, planned_type_paths};
pub use decode::{DecodedSnapshot, SkippedType, decode, decode_with_assets, decode_without_plans};
pub use dump::{dump, dump_with_assets};
pub use error::SnapshotError;
pub use filter::{SaveFilter, Saveable};
pub use incremental::{
    CHUNK_ROWS, CaptureCache, CaptureStats, PendingSnapshot, capture_incremental,
};
pub use inspect::{BlobTable, StoredColumn, StoredRow, inspect};
pub use registry::SaveRegistry;
