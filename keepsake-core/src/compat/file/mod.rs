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
mod types;
mod write;

pub use parse::{MAX_SCHEMA_FILE_LEN, SchemaFileError};
pub use types::{Encoding, SCHEMA_FORMAT_VERSION, SaveSchema, SchemaSource, SchemaType};

#[cfg(test)]
mod tests;
