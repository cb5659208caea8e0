//! A game's save schema as a file it commits: every registered type with its kind, schema
//! version, encoding, the stored versions a migration reads, its old paths and its layout, in
//! a text form made for code review (one field a line, sorted by type path, nothing that
//! changes from one run to the next) and read back exactly by [`SaveSchema::parse`].
//!
//! A type change then shows up twice where it can be stopped: in the diff of the committed file,
//! and in `keepsake compat`, which checks a folder of kept saves against it (see
//! [`compat`](crate::compat)). Engine-free: the game builds its schema with
//! `SaveSchema::of_world` (or `of_app`), and the command line reads the file without the game.
//!
//! # The text form (format version 1)
//!
//! ```text
//! keepsake-schema 1
//! # comments and blank lines are ignored
//!
//! type game::Armor
//!   kind component
//!   version 3
//!   encoding reflect
//!   migrates-from 1 2
//!   renamed-from game::old::Armor
//!   layout struct game::Armor
//!     rating: f32
//!     material: String
//!     slots: list
//!       []: enum game::Slot
//!         variant Empty
//!         tuple-variant Gem
//!           0: u8
//! ```
//!
//! The first line names the format version; a later version is refused with
//! [`SchemaFileError::NewerFormat`]. Each `type` block holds, indented by two spaces, `kind`
//! (`component` or `resource`), `version`, `encoding` (`serde` for a type written by its own
//! serde code, whose layout is then `serde <path>` with its reflected layout below as
//! `reflected:`; else `reflect`), `migrates-from` (the stored versions a migration chain brings
//! to today's type, or none), one `renamed-from` line per old path, and last the `layout`. A
//! layout node is one line, its children indented two more spaces under it:
//!
//! | node | line | children |
//! |------|------|----------|
//! | a leaf | its Rust name: `u32`, `String`, `Entity`, `Vec3` … | none |
//! | struct | `struct <path>` | `<field>: <node>`, in written order |
//! | tuple struct | `tuple-struct <path>` | `0: <node>`, `1: <node>` … |
//! | tuple | `tuple` | `0: <node>` … |
//! | list, set | `list`, `set` | `[]: <node>` |
//! | array | `array <len>` | `[]: <node>` |
//! | map | `map` | `{key}: <node>`, `{}: <node>` |
//! | enum | `enum <path>` | `variant <name>` (unit), `tuple-variant <name>` (then `0: …`), `struct-variant <name>` (then `<field>: …`) |
//! | serde | `serde <path>` | `reflected: <node>` |
//! | asset handle | `handle <asset type path>` | none |
//! | untyped handle, opaque, too deep | `untyped-handle`, `opaque <path>`, `deep <path>` | none |
//!
//! A path or name ends its line and is written as is; one that would not read back the same
//! (empty, with spaces at an end, a control character, starting with `"`; a field name other
//! than letters, digits and `_`) is written in double quotes with `\"`, `\\`, `\n`, `\r`, `\t`
//! and `\u{…}` escapes.

mod parse;
mod write;

pub use parse::SchemaFileError;

use super::TypeLayout;
use crate::snapshot::blob::ColumnKind;

/// The format version [`SaveSchema::to_text`] writes and [`SaveSchema::parse`] reads.
pub const SCHEMA_FORMAT_VERSION: u32 = 1;

/// The first word of a schema file.
pub(crate) const MAGIC: &str = "keepsake-schema";

/// The registered types of a game as its saves record them: one [`SchemaType`] per type,
/// sorted by type path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveSchema {
    types: Vec<SchemaType>,
}

/// One registered type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaType {
    /// Its type path today.
    pub type_path: String,
    /// Component or resource.
    pub kind: ColumnKind,
    /// Its schema version today (1 + the migrations registered).
    pub version: u32,
    /// The older stored versions a migration chain converts to today's type, ascending.
    pub migrates_from: Vec<u32>,
    /// The old type paths whose stored values load as this type, sorted.
    pub renamed_from: Vec<String>,
    /// Its layout, as a save writes it today.
    pub layout: TypeLayout,
}

/// How a type's values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// By the type's own serde code: only the same layout reads them.
    Serde,
    /// Field by field through reflection: read by name when the type changed.
    Reflect,
}

impl Encoding {
    /// `"serde"` or `"reflect"`, as the schema file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Serde => "serde",
            Encoding::Reflect => "reflect",
        }
    }
}

impl SchemaType {
    /// How its values are written: a serde layout means its own serde code.
    pub fn encoding(&self) -> Encoding {
        match self.layout {
            TypeLayout::Serde { .. } => Encoding::Serde,
            _ => Encoding::Reflect,
        }
    }
}

impl SaveSchema {
    /// A schema of `types`, sorted by type path (their lists of versions and old paths too).
    pub fn new(mut types: Vec<SchemaType>) -> Self {
        for ty in &mut types {
            ty.migrates_from.sort_unstable();
            ty.migrates_from.dedup();
            ty.renamed_from.sort();
            ty.renamed_from.dedup();
        }
        types.sort_by(|a, b| a.type_path.cmp(&b.type_path));
        SaveSchema { types }
    }

    /// The types, sorted by type path.
    pub fn types(&self) -> &[SchemaType] {
        &self.types
    }

    /// The type a stored column of `type_path` loads as: by its path or an old path it was
    /// renamed from.
    pub fn lookup(&self, type_path: &str) -> Option<&SchemaType> {
        let by_path = self
            .types
            .binary_search_by(|ty| ty.type_path.as_str().cmp(type_path))
            .ok()
            .map(|index| &self.types[index]);
        by_path.or_else(|| {
            self.types
                .iter()
                .find(|ty| ty.renamed_from.iter().any(|old| old == type_path))
        })
    }

    /// Reads a schema file written by [`write_file`](Self::write_file) (or by hand).
    pub fn read_file(path: impl AsRef<std::path::Path>) -> Result<Self, SchemaFileError> {
        parse::read_file(path.as_ref())
    }

    /// Writes the schema's text to `path` (replacing the file).
    pub fn write_file(&self, path: impl AsRef<std::path::Path>) -> Result<(), SchemaFileError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_text()).map_err(|source| SchemaFileError::Io {
            path: path.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests;
