//! What a game saves: the [`SaveRegistry`] of saveable types, the [`SaveFilter`] choosing
//! saved entities and the [`SaveKey`]s naming unsaved ones they reference, filled through
//! [`SaveableAppExt`]; and for each type its entry, the
//! operations capture and load call through function pointers built once at registration
//! (its column walk among them, which hands values to a sink the capture provides).

mod app_ext;
mod entry;
mod filter;
mod key;
mod registry;
mod schema_of;
mod walk;

pub use app_ext::SaveableAppExt;
pub(crate) use app_ext::ensure_registry;
pub(crate) use entry::{ConvertFn, SaveableEntry};
pub use filter::{SaveFilter, Saveable};
pub(crate) use key::Keyed;
pub use key::{EntityKeys, SaveKey};
pub use registry::SaveRegistry;
pub(crate) use walk::{ColumnSink, EncodeResource, EncodeRow};
