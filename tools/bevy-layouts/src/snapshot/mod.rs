//! The library's module tree, as far as its layout builder needs it: the engine-free layouts
//! from `keepsake-core`, and the layout builder's own file included by path
//! (`src/snapshot/value/layout_of.rs` of the repository), so the tool builds the layouts with
//! the same code a save does.

pub use keepsake_core::schema;

pub mod value;
