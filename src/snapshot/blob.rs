//! The `ecs_blob` byte layout, from the engine-free [`keepsake_core::blob`] (its own file, so
//! paths through it do not make this module's parent a party to every import).

#[doc(inline)]
pub use keepsake_core::blob::*;
// The writer and cursor the capture and load drive: the core's, not part of its API.
pub(crate) use keepsake_core::__private::{
    BlobCursor, BlobWriter, ColumnHeader, OpenColumn, push_prefixed,
};
