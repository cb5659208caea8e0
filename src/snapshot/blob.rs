//! The `ecs_blob` byte layout, from the engine-free [`keepsake_core::blob`] (its own file, so
//! paths through it do not make this module's parent a party to every import).

#[doc(inline)]
pub use keepsake_core::blob::*;
