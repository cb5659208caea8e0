//! Blob → world: [`decode`] checks and decodes a blob against the registered types without
//! touching any world (so it runs on the task pool), [`apply`] spawns the entities and inserts
//! the values with entity references remapped and the hierarchy rebuilt, `in_place` changes
//! only what differs in the entities a world still has ([`restore`] for a kept snapshot,
//! [`apply_in_place`] for a decoded one), and [`dump`] shows a blob's values as RON. All read
//! the blob through the one cursor of `blob`.

mod apply;
mod column;
pub(crate) mod decode;
mod dump;
mod dynamic_bundle;
mod entity_mapping;
mod in_place;
mod report;
mod states;
mod world_types;

pub(crate) use apply::apply_entering;
pub use apply::{LoadMode, apply, merge};
pub use decode::{DecodedSnapshot, DroppedField, SkippedType, decode, decode_with_assets};
pub use dump::{dump, dump_with_assets};
pub use entity_mapping::{DroppedReference, LevelKeyMiss};
pub use in_place::{
    EntityRecord, PreparedLoad, SavedIds, apply_in_place, apply_prepared, prepare, restore,
    restore_within,
};
pub use report::ApplyReport;
pub use states::SameState;
