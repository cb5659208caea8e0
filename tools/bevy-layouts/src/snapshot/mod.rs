//! The library's module tree, as far as its layout builder needs it: its own files, included by
//! path (`src/snapshot/…` of the repository), so the tool builds the layouts with the same
//! code a save does.

#[path = "../../../../src/snapshot/schema/mod.rs"]
pub mod schema;

#[path = "../../../../src/snapshot/error.rs"]
pub mod error;

pub mod blob;
pub mod value;
