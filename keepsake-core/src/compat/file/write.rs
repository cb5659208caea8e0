//! [`SaveSchema::to_text`]: the schema file's text (see the table in the [module](super)).

use super::parse::SchemaFileError;
use super::types::{MAGIC, SCHEMA_FORMAT_VERSION, SaveSchema, SchemaType};
use crate::schema::{Field, TypeLayout, Variant, VariantFields};
use std::fmt::Write;

/// How far each level is indented.
const INDENT: usize = 2;

impl SaveSchema {
    /// The schema as the text a game commits: deterministic, one field a line.
    pub fn to_text(&self) -> String {
        let mut out = format!("{MAGIC} {SCHEMA_FORMAT_VERSION}\n");
        out.push_str(
            "# The types this game saves and their layouts (bevy_keepsake). Regenerate it when a\n\
             # saved type changes; `keepsake compat <this file> <saves>` checks kept saves against it.\n",
        );
        for ty in &self.types {
            out.push('\n');
            write_type(&mut out, ty);
        }
        out
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

fn write_type(out: &mut String, ty: &SchemaType) {
    let _ = writeln!(out, "type {}", text(&ty.type_path));
    let _ = writeln!(out, "  kind {}", ty.kind.name());
    let _ = writeln!(out, "  version {}", ty.version);
    let _ = writeln!(out, "  encoding {}", ty.encoding().name());
    if !ty.migrates_from.is_empty() {
        let versions: Vec<String> = ty.migrates_from.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "  migrates-from {}", versions.join(" "));
    }
    for old in &ty.renamed_from {
        let _ = writeln!(out, "  renamed-from {}", text(old));
    }
    node(out, "layout ", &ty.layout, INDENT);
}

/// Writes `layout`'s line, prefixed by `label`, at `indent`, then its children.
fn node(out: &mut String, label: &str, layout: &TypeLayout, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
    out.push_str(label);
    out.push_str(&head(layout));
    out.push('\n');
    let inner = indent + INDENT;
    match layout {
        TypeLayout::Struct { fields, .. } => named(out, fields, inner),
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            positional(out, fields, inner);
        }
        TypeLayout::List(item) | TypeLayout::Set(item) | TypeLayout::Array { item, .. } => {
            node(out, "[]: ", item, inner);
        }
        TypeLayout::Map { key, value } => {
            node(out, "{key}: ", key, inner);
            node(out, "{}: ", value, inner);
        }
        TypeLayout::Enum { variants, .. } => {
            variants.iter().for_each(|v| variant(out, v, inner));
        }
        TypeLayout::Serde { reflected, .. } => node(out, "reflected: ", reflected, inner),
        TypeLayout::Leaf(_)
        | TypeLayout::Handle { .. }
        | TypeLayout::UntypedHandle
        | TypeLayout::Opaque { .. }
        | TypeLayout::Deep { .. } => {}
    }
}

/// A node's own line, without its children.
fn head(layout: &TypeLayout) -> String {
    match layout {
        TypeLayout::Leaf(leaf) => leaf.name().to_owned(),
        TypeLayout::Struct { type_path, .. } => format!("struct {}", text(type_path)),
        TypeLayout::TupleStruct { type_path, .. } => format!("tuple-struct {}", text(type_path)),
        TypeLayout::Tuple(_) => "tuple".to_owned(),
        TypeLayout::List(_) => "list".to_owned(),
        TypeLayout::Array { len, .. } => format!("array {len}"),
        TypeLayout::Set(_) => "set".to_owned(),
        TypeLayout::Map { .. } => "map".to_owned(),
        TypeLayout::Enum { type_path, .. } => format!("enum {}", text(type_path)),
        TypeLayout::Serde { type_path, .. } => format!("serde {}", text(type_path)),
        TypeLayout::Handle { asset_type } => format!("handle {}", text(asset_type)),
        TypeLayout::UntypedHandle => "untyped-handle".to_owned(),
        TypeLayout::Opaque { type_path } => format!("opaque {}", text(type_path)),
        TypeLayout::Deep { type_path } => format!("deep {}", text(type_path)),
    }
}

fn named(out: &mut String, fields: &[Field], indent: usize) {
    for field in fields {
        node(
            out,
            &format!("{}: ", name(&field.name)),
            &field.layout,
            indent,
        );
    }
}

fn positional(out: &mut String, fields: &[TypeLayout], indent: usize) {
    for (index, field) in fields.iter().enumerate() {
        node(out, &format!("{index}: "), field, indent);
    }
}

fn variant(out: &mut String, variant: &Variant, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
    let keyword = match variant.fields {
        VariantFields::Unit => "variant",
        VariantFields::Tuple(_) => "tuple-variant",
        VariantFields::Struct(_) => "struct-variant",
    };
    let _ = writeln!(out, "{keyword} {}", text(&variant.name));
    match &variant.fields {
        VariantFields::Unit => {}
        VariantFields::Tuple(fields) => positional(out, fields, indent + INDENT),
        VariantFields::Struct(fields) => named(out, fields, indent + INDENT),
    }
}

/// A text that ends its line: as is when it reads back the same, else quoted.
pub(super) fn text(value: &str) -> String {
    let plain = !value.is_empty()
        && !value.starts_with('"')
        && value.trim() == value
        && !value.chars().any(char::is_control);
    if plain {
        value.to_owned()
    } else {
        quoted(value)
    }
}

/// A field name, which a `: ` follows: as is when it is letters, digits and `_`, else quoted.
pub(super) fn name(value: &str) -> String {
    let plain = !value.is_empty() && value.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        value.to_owned()
    } else {
        quoted(value)
    }
}

fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
