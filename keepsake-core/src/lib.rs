//! # keepsake-core
//!
//! The engine-free core of [bevy_keepsake](https://docs.rs/bevy_keepsake): everything about a
//! save that needs no game engine. The `keepsake` command line is built on this crate alone;
//! `bevy_keepsake` re-exports it at the paths games use (`bevy_keepsake::format`,
//! `bevy_keepsake::store`, `bevy_keepsake::SlotId`, `bevy_keepsake::snapshot::schema`, …).
//!
//! Nothing here depends on Bevy, and CI proves it: it builds and tests this crate alone and
//! checks that no Bevy crate is in its dependency tree.
//!
//! # Architecture
//!
//! Each module imports only the ones listed above it, so there is no circle between them.
//!
//! | module | what it holds | imports |
//! |---|---|---|
//! | [`SlotId`] | slot identities | nothing |
//! | [`format`](mod@format) | the save file: header, metadata, thumbnail, payload (postcard + LZ4 + CRC32, chunks, sealing), the memory budget | slot |
//! | [`store`] | slots, profiles, durable atomic writes, generations and backups, listings, imports | slot, format |
//! | [`error`] | [`BlobError`](error::BlobError), the byte layer's error | format |
//! | [`wire`] | varints, zigzag, and the bounded field reader of blobs | format, error |
//! | [`schema`] | type layouts: their bytes, their text, their comparison, values read by layout | format, error, wire |
//! | [`blob`] | the `ecs_blob` byte layout: the writer, the one cursor, [`inspect`](blob::inspect) | format, error, wire, schema |
//! | [`legacy`] | the layouts of Bevy 0.19's own types, for saves written before layouts | schema |
//! | [`compat`] | the save schema file and the check of saves against it | everything above |

mod slot;

pub mod format;
pub mod store;

pub mod error;
pub mod wire;

pub mod schema;

pub mod blob;

pub mod legacy;

pub mod compat;

#[doc(hidden)]
pub mod __private;

pub use slot::{SlotId, SlotKind};
