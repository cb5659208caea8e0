//! The layout builder (the library's own file), compiled against the Bevy this build links.

#[path = "../../../../../src/snapshot/value/layout_of.rs"]
pub mod layout_of;
