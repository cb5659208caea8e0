//! The engine-free half of the compatibility guard: the save schema file a game commits
//! ([`file`](mod@file)), the check of one save's columns against it ([`check_blob`]), of a folder of kept
//! saves ([`check_folder`]) and the report ([`CompatReport`]). `bevy_keepsake::compat` adds the
//! game-side helpers (`SaveSchema::of_app`, `assert_schema_file`, `assert_kept_saves_load`)
//! and documents the guard as a whole.

pub(crate) mod check;
pub mod file;
pub(crate) mod folder;
mod report;

pub use check::{ColumnCheck, Verdict, check_blob};
pub use file::{
    Encoding, SCHEMA_FORMAT_VERSION, SaveSchema, SchemaFileError, SchemaSource, SchemaType,
};
pub use folder::{check_folder, check_folder_opened};
pub use report::{CompatReport, SaveCheck};
