//! One value ↔ its postcard bytes, for every way a type can be saved: its own serde
//! implementation (statically dispatched, or through `ReflectSerialize`), a *reflection plan*
//! built once per column from `TypeInfo` (see `plan`), or Bevy's reflection serializer for what
//! the plan does not know. `Entity` values are always written as their 64-bit id, so references
//! can be remapped on load, and asset handles by path ([`assets`]); types that can hold a handle
//! always take Bevy's reflection serializer with the handle processors, never the plan.
//!
//! The writer ([`ValueWriter`]) and the reader ([`ValueReader`]) each pick their path once per
//! column, as an enum; the encoding a type was registered with ([`ValueEncoding`]) carries its
//! own decoder.

pub mod assets;
mod encoding;
mod layout_of;
mod ops;

mod plan;
mod read;
pub(crate) mod reflect_walk;
mod resolve;
mod write;

pub(crate) use encoding::{ValueEncoding, ViaReflect, ViaSerde};
pub(crate) use layout_of::column_layout;
pub(crate) use ops::TypeOps;
pub(crate) use read::ValueReader;
pub(crate) use write::ValueWriter;
