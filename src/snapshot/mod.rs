//! The snapshot: registered components and resources captured by reflection into the save
//! bundle's `ecs_blob`, and applied back with entity references remapped and the hierarchy
//! restored. References to unsaved entities that carry a [`LevelKey`] (level geometry, a scene
//! root) are written by key and resolved on load to the live entity with that key.
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
//! snapshot::apply(world, decoded, LoadMode::Respawn);
//! assert_eq!(world.query::<&Health>().single(world)?, &Health(7.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Architecture
//!
//! One folder per role; each imports only the folders above it in this table, so a change to
//! one role lands in one folder:
//!
//! | folder | role | imports |
//! |--------|------|---------|
//! | [`blob`], [`schema`] | the `ecs_blob` byte layout (the writer, the one cursor every reader uses, [`inspect`]) and type layouts: re-exported from the engine-free [`keepsake_core`], which the compiler keeps free of Bevy | (another crate) |
//! | `value` | one value ↔ bytes: serde, reflection plans, Bevy's reflection serializer, asset handles | `blob` |
//! | `register` | what a game saves: [`SaveRegistry`], [`SaveableAppExt`], the filter, each type's operations | `blob`, `value` |
//! | `capture` | world → blob: [`CaptureCache`] (a full [`capture`] is a capture through a fresh cache) | `blob`, `value`, `register` |
//! | `load` | blob → world: [`decode`], [`apply`], [`dump`], entity mapping | `blob`, `value`, `register` |
//!
//! # Speed
//!
//! Capture reads each registered type as one typed column (table by table, no per-entity type
//! lookups, no cloning) and encodes each value once, into its piece; the pieces are then joined
//! into the blob. Types with `#[reflect(Serialize,
//! Deserialize)]` are written by their serde implementation; others (reflection-only types,
//! the way most Bevy games write components) by a *reflection plan* built once per column from
//! `TypeInfo`: field order and the kind of every leaf, so each field is one downcast and a
//! direct write, with no type-registry lookup, no processor call and no `erased_serde` call per
//! field. Decoding reads the same plan: the first value of a column into the dynamic values
//! `FromReflect` takes, each later one over a clone of the first (reusing its allocations).
//! The plans write and read exactly the bytes of Bevy's reflection serializer (tests compare
//! them value for value, and against serde derives of the same shape); types they do not know
//! (see `value::plan`) keep using Bevy's serializer. Type paths are written once per column,
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
//! # Asset handles
//!
//! `Handle<T>` and `UntypedHandle` anywhere in a reflected value are written by asset path (or
//! constant UUID), in the bytes of Bevy's `HandleSerializeProcessor`, and loaded back through the
//! `AssetServer` by [`decode_with_assets`] after the path is checked. Only types whose reflected
//! layout can hold a handle look for one. See [`assets`].
//!
//! # Reading without the game's types
//!
//! [`inspect`] lists a blob's columns and rows, with each column's type layout (engine-free;
//! the `keepsake` command line uses it), and [`schema::stored`] reads the values by those
//! layouts with their field names; [`dump`] / [`dump_with_assets`] print the values as RON
//! through the registered types.
//!
//! # Layout and evolution
//!
//! The `ecs_blob` byte layout is specified in [`blob`]; since layout version 2 each column
//! carries its type's layout ([`schema`]), so a save says what its bytes mean. Types evolve as
//! follows:
//!
//! - A changed type with no schema version bump is read by name against its stored layout:
//!   fields in any order, added fields at their default, removed fields dropped (listed in
//!   [`DecodedSnapshot::dropped_fields`]), variants by name, widened numbers, `T` → `Option<T>`;
//!   anything else is [`SnapshotError::LayoutChanged`] before a value is read. A type encoded
//!   with serde is read only with the layout it was written with.
//! - A stored type that is no longer registered is skipped with a warning.
//! - A renamed or moved type: `app.register_saveable_rename::<T>("old::path::T")`.
//! - Any other change: `app.register_saveable_migration::<TV1, T>(1)` (values stored at
//!   schema version 1 read as `TV1`), with `impl From<TV1> for T`.
//! - Saves from before layouts (Bevy 0.19 games): the layouts of Bevy's own types that changed
//!   in Bevy 0.20 ship with the crate, generated by `tools/bevy-layouts`.

pub mod blob;
pub(crate) mod capture;
mod error;
pub(crate) mod load;
mod register;
pub mod schema;
mod value;

pub use blob::{
    BLOB_VERSION, BlobTable, ColumnKind, EntityIdIter, EntityIds, StoredColumn, StoredLayout,
    StoredLevelKey, StoredRow, StoredRowIter, StoredRows, state_hash,
};

/// Reads and checks the table of an `ecs_blob` without the game's types: the engine-free
/// [`blob::inspect`], with its error as a [`SnapshotError`] like the rest of this module's.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt, ColumnKind};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// app.world_mut().spawn((Saveable, Health(7.0)));
/// let captured = snapshot::capture(app.world_mut())?;
///
/// let table = snapshot::inspect(&captured.blob)?;
/// assert_eq!(table.entity_count(), 1);
/// let health = table.columns.iter().find(|c| c.type_path.ends_with("::Health")).unwrap();
/// assert_eq!((health.kind, health.rows.len()), (ColumnKind::Component, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(blob: &[u8]) -> Result<BlobTable<'_>, SnapshotError> {
    Ok(blob::inspect(blob)?)
}
pub use capture::{
    CaptureCache, CaptureStats, KeptSnapshot, PIECE_ROWS, PendingSnapshot, Snapshot,
    SnapshotHistory, capture, capture_incremental,
};
pub use error::{NamedEntity, SnapshotError};
pub(crate) use load::apply_entering;
pub use load::{
    ApplyReport, DecodedSnapshot, DroppedField, DroppedReference, EntityRecord, LevelKeyMiss,
    LoadMode, PreparedLoad, SameState, SavedIds, SkippedType, apply, apply_in_place,
    apply_prepared, decode, decode_with_assets, dump, dump_with_assets, merge, prepare, restore,
    restore_within,
};
pub use register::{
    BevySchema, LevelKey, LevelKeys, SaveFilter, SaveRegistry, Saveable, SaveableAppExt,
    UnmappedEntityField, UnsavedChildren, UnsavedComponent, unsaved_children,
};
pub(crate) use register::{
    LiveComponents, ensure_registry, unsaved_children_except, unsaved_components,
};
pub use value::assets;
pub use value::assets::{LeftOutHandle, RefusedAssetPath, RuntimeAssetHandles};
