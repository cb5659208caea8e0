//! What a game saves: the [`SaveRegistry`] of saveable types, the [`SaveFilter`] choosing
//! saved entities and the [`LevelKey`]s naming unsaved ones they reference, filled through
//! [`SaveableAppExt`]; and for each type its entry, the
//! operations capture and load call through function pointers built once at registration
//! (its column walk among them, which hands values to a sink the capture provides). Beside
//! them: Bevy's own types (`bevy_types`: those a game saves, those Bevy computes), `States`
//! (`states`: saved as `State<S>`, loaded through `NextState<S>`), what saved entities
//! carry that saves leave out (`unsaved`), and how each type's `Entity` fields are remapped on
//! load, with the ones that would not be (`entity_fields`, warned about at registration).

mod app_ext;
mod bevy_types;
mod entity_fields;
mod entry;
mod filter;
mod key;
mod registry;
mod schema_of;
mod states;
mod unsaved;
mod unsaved_children;
mod walk;

pub use app_ext::SaveableAppExt;
pub(crate) use app_ext::ensure_registry;
pub(crate) use bevy_types::bevy_made_assets;
pub(crate) use entity_fields::EntityMapping;
pub use entity_fields::UnmappedEntityField;
pub(crate) use entry::{ConvertFn, Entering, SaveableEntry};
pub use filter::{SaveFilter, Saveable};
pub(crate) use key::Keyed;
pub use key::{LevelKey, LevelKeys};
pub use registry::SaveRegistry;
pub use schema_of::BevySchema;
pub use unsaved::UnsavedComponent;
pub(crate) use unsaved::{LiveComponents, unsaved_components};
pub(crate) use unsaved_children::unsaved_children_except;
pub use unsaved_children::{UnsavedChildren, unsaved_children};
pub(crate) use walk::{ColumnSink, EncodeResource, EncodeRow};
