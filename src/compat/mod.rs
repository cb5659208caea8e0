//! The compatibility guard: a game finds out in CI, not from players, that an update breaks
//! old saves.
//!
//! 1. The game commits its save schema, every registered type's layout as text
//!    ([`SaveSchema`], written with `SaveSchema::of_app(&app).write_file(…)` or by
//!    [`assert_schema_file`]), so a type change shows in review.
//! 2. It keeps a folder of saves from its earlier releases.
//! 3. Its tests call [`assert_schema_file`] and [`assert_kept_saves_load`], and CI may run
//!    `keepsake compat <schema file> <saves folder>` too: both report, per save, per type and
//!    per field, what changed without a migration, and fail.
//!
//! What the layout check ([`check_blob`], engine-free, the one both use) says of each stored
//! column:
//!
//! | stored column | verdict | fails |
//! |---------------|---------|-------|
//! | today's layout (or one that only lacks variants appended since) | unchanged | no |
//! | changed in ways a load reads by name (fields added, removed, reordered, widened …) | loads by name, changes listed | no |
//! | changed otherwise at the same schema version (a field's type; any change to a serde type) | needs a migration, each change named | yes |
//! | an older version with a registered migration chain | migrates | no |
//! | an older version without one | no migration | yes |
//! | a newer version | written by a newer build | yes |
//! | stored as a component, registered as a resource (or the reverse) | kind changed | yes |
//! | a type not registered today (nor renamed) | skipped on load | no |
//! | a save from before layouts (Bevy 0.19 builds) | cannot be checked by layout | no |
//!
//! A folder with no save in it, or a save that cannot be read, fails too. The layout check
//! cannot know whether an added field has a default; [`check_kept_saves`] decodes every save
//! with the game's real types as well, so that, and whatever else a load would refuse, fails
//! the test with the decode's own error.

pub(crate) mod check;
mod folder;
mod game;
mod report;

pub use crate::snapshot::schema::file::{
    Encoding, SCHEMA_FORMAT_VERSION, SaveSchema, SchemaFileError, SchemaType,
};
pub use check::{ColumnCheck, Verdict, check_blob};
pub use folder::{check_folder, check_folder_opened};
pub use game::{WRITE_SCHEMA_VAR, assert_kept_saves_load, assert_schema_file, check_kept_saves};
pub use report::{CompatReport, SaveCheck};
