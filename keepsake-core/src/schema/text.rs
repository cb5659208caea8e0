//! Layouts as people read them: [`short`] on one line (error messages, change lists), and
//! [`pretty`] over several lines (`keepsake inspect`).

use super::{Field, TypeLayout, Variant, VariantFields};

/// How far each nesting level of [`pretty`] is indented.
const INDENT: usize = 4;

/// The layout's type on one line, as Rust spells it: `u32`, `Vec<String>`, `[f32; 4]`,
/// `(u8, bool)`, `HashMap<String, Entity>`, `Option<Vec2>`, `Handle<bevy_image::image::Image>`,
/// or the type path of a struct, enum or serde type.
pub fn short(layout: &TypeLayout) -> String {
    if let Some(item) = layout.option_item() {
        return format!("Option<{}>", short(item));
    }
    match layout {
        TypeLayout::Leaf(leaf) => leaf.name().to_owned(),
        TypeLayout::List(item) => format!("Vec<{}>", short(item)),
        TypeLayout::Array { item, len } => format!("[{}; {len}]", short(item)),
        TypeLayout::Set(item) => format!("HashSet<{}>", short(item)),
        TypeLayout::Map { key, value } => format!("HashMap<{}, {}>", short(key), short(value)),
        TypeLayout::Tuple(fields) => tuple(fields.iter().map(short).collect()),
        TypeLayout::Handle { asset_type } => format!("Handle<{asset_type}>"),
        TypeLayout::UntypedHandle => "UntypedHandle".to_owned(),
        TypeLayout::Struct { type_path, .. }
        | TypeLayout::TupleStruct { type_path, .. }
        | TypeLayout::Enum { type_path, .. }
        | TypeLayout::Serde { type_path, .. }
        | TypeLayout::Opaque { type_path }
        | TypeLayout::Deep { type_path } => type_path.clone(),
    }
}

/// A layout with its kind, to tell apart two shapes [`short`] spells alike.
pub fn described(layout: &TypeLayout) -> String {
    let kind = match layout {
        TypeLayout::Struct { .. } => "struct",
        TypeLayout::TupleStruct { .. } => "tuple struct",
        TypeLayout::Enum { .. } => "enum",
        TypeLayout::Serde { .. } => "serde type",
        TypeLayout::Opaque { .. } => "opaque type",
        TypeLayout::Deep { .. } => "type nested too deep to describe",
        _ => return short(layout),
    };
    format!("{kind} {}", short(layout))
}

/// A type path with every path in it cut to its last segment, generics kept:
/// `game::Stats` → `Stats`, `core::option::Option<alloc::string::String>` →
/// `Option<String>`, `[game::Cell; 4]` → `[Cell; 4]`. For readable dumps; not unique.
pub fn short_name(type_path: &str) -> String {
    let mut out = String::with_capacity(type_path.len());
    let mut path = String::new();
    let flush = |path: &mut String, out: &mut String| {
        out.push_str(path.rsplit("::").next().unwrap_or_default());
        path.clear();
    };
    for character in type_path.chars() {
        if character.is_alphanumeric() || character == '_' || character == ':' {
            path.push(character);
        } else {
            flush(&mut path, &mut out);
            out.push(character);
        }
    }
    flush(&mut path, &mut out);
    out
}

/// The name a path into a value of `layout` starts with (`game::Stats` in
/// `game::Stats.hp`): its type path, or [`short`] for a shape that has none.
pub(crate) fn root_name(layout: &TypeLayout) -> String {
    match layout {
        // A handle's `type_path` is its asset's, not the handle's.
        TypeLayout::Handle { .. } => short(layout),
        _ => layout
            .type_path()
            .map_or_else(|| short(layout), str::to_owned),
    }
}

/// A tuple's items as Rust writes the tuple: `()`, `(u8,)`, `(u8, bool)`.
fn tuple(items: Vec<String>) -> String {
    match items.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// The layout over several lines, Rust-like: a struct's fields and an enum's variants
/// indented under its path, nested types expanded.
///
/// ```text
/// struct game::Stats {
///     hp: u32,
///     state: enum game::State {
///         Idle,
///         Walking(f32),
///         Jumping { height: f32 },
///     },
/// }
/// ```
///
/// A collection of structs or enums shows the item expanded inside its brackets
/// (`Vec<struct game::Item {`…`}>`); a serde type shows its path and its reflected layout on
/// one line, since its bytes are whatever its serde code writes.
pub fn pretty(layout: &TypeLayout) -> String {
    let mut out = String::new();
    write(&mut out, layout, 0);
    out
}

/// Whether [`pretty`] spreads the layout over several lines: it is, or holds, a struct or an
/// enum other than an `Option` of a one-line type.
fn expands(layout: &TypeLayout) -> bool {
    if let Some(item) = layout.option_item() {
        return expands(item);
    }
    match layout {
        TypeLayout::Struct { .. } | TypeLayout::TupleStruct { .. } | TypeLayout::Enum { .. } => {
            true
        }
        TypeLayout::List(item) | TypeLayout::Set(item) | TypeLayout::Array { item, .. } => {
            expands(item)
        }
        TypeLayout::Map { key, value } => expands(key) || expands(value),
        TypeLayout::Tuple(fields) => fields.iter().any(expands),
        _ => false,
    }
}

/// Writes `layout` from the current position of `out`; its later lines are indented by
/// `indent` (the indentation of the line it starts on).
fn write(out: &mut String, layout: &TypeLayout, indent: usize) {
    if !expands(layout) {
        out.push_str(&pretty_line(layout));
        return;
    }
    if let Some(item) = layout.option_item() {
        return wrapped(out, "Option<", &[item], ">", indent);
    }
    match layout {
        TypeLayout::Struct { type_path, fields } => {
            out.push_str(&format!("struct {type_path} "));
            named_block(out, fields, indent);
        }
        TypeLayout::TupleStruct { type_path, fields } => {
            out.push_str(&format!("struct {type_path}"));
            positional(out, fields, indent);
        }
        TypeLayout::Enum {
            type_path,
            variants,
        } => enum_block(out, type_path, variants, indent),
        TypeLayout::Tuple(fields) => positional(out, fields, indent),
        TypeLayout::List(item) => wrapped(out, "Vec<", &[item], ">", indent),
        TypeLayout::Set(item) => wrapped(out, "HashSet<", &[item], ">", indent),
        TypeLayout::Array { item, len } => wrapped(out, "[", &[item], &format!("; {len}]"), indent),
        TypeLayout::Map { key, value } => wrapped(out, "HashMap<", &[key, value], ">", indent),
        // `expands` is false for every other shape, handled above.
        _ => out.push_str(&pretty_line(layout)),
    }
}

/// A layout that fits on one line: [`short`], except that a serde type also shows its
/// reflected layout.
fn pretty_line(layout: &TypeLayout) -> String {
    match layout {
        TypeLayout::Serde {
            type_path,
            reflected,
        } => format!("serde {type_path} (reflected: {})", short(reflected)),
        _ => short(layout),
    }
}

/// `open`, the items separated by `, ` (each written in full, so a struct item expands in
/// place), then `close`: `Vec<struct game::Item {`…`}>`.
fn wrapped(out: &mut String, open: &str, items: &[&TypeLayout], close: &str, indent: usize) {
    out.push_str(open);
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        write(out, item, indent);
    }
    out.push_str(close);
}

/// Starts a new line indented by `indent`.
fn new_line(out: &mut String, indent: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent));
}

/// `{ a: u32, b: f32 }` when every field fits on one line (struct variants), else one field a
/// line; `{}` for none.
fn named_fields(out: &mut String, fields: &[Field], indent: usize) {
    if fields.iter().any(|field| expands(&field.layout)) {
        return named_block(out, fields, indent);
    }
    let inline: Vec<String> = fields
        .iter()
        .map(|field| format!("{}: {}", field.name, pretty_line(&field.layout)))
        .collect();
    if inline.is_empty() {
        out.push_str("{}");
    } else {
        out.push_str(&format!("{{ {} }}", inline.join(", ")));
    }
}

/// A struct's fields one a line inside braces; `{}` for none.
fn named_block(out: &mut String, fields: &[Field], indent: usize) {
    out.push('{');
    for field in fields {
        new_line(out, indent + INDENT);
        out.push_str(&format!("{}: ", field.name));
        write(out, &field.layout, indent + INDENT);
        out.push(',');
    }
    if !fields.is_empty() {
        new_line(out, indent);
    }
    out.push('}');
}

/// Positional fields in parentheses: on one line when each fits on one, else one a line.
fn positional(out: &mut String, fields: &[TypeLayout], indent: usize) {
    if !fields.iter().any(expands) {
        let items: Vec<String> = fields.iter().map(pretty_line).collect();
        return out.push_str(&format!("({})", items.join(", ")));
    }
    out.push('(');
    for field in fields {
        new_line(out, indent + INDENT);
        write(out, field, indent + INDENT);
        out.push(',');
    }
    new_line(out, indent);
    out.push(')');
}

/// `enum path {` with a variant a line, each with its fields, then `}`.
fn enum_block(out: &mut String, type_path: &str, variants: &[Variant], indent: usize) {
    out.push_str(&format!("enum {type_path} {{"));
    let inner = indent + INDENT;
    for variant in variants {
        new_line(out, inner);
        out.push_str(&variant.name);
        match &variant.fields {
            VariantFields::Unit => {}
            VariantFields::Tuple(fields) => positional(out, fields, inner),
            VariantFields::Struct(fields) => {
                out.push(' ');
                named_fields(out, fields, inner);
            }
        }
        out.push(',');
    }
    if !variants.is_empty() {
        new_line(out, indent);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Leaf;
    use crate::schema::fixtures::*;

    fn stats() -> TypeLayout {
        stats_with(Vec::new())
    }

    #[test]
    fn short_spells_each_shape_as_rust_does() {
        let cases = [
            (leaf(Leaf::U32), "u32"),
            (
                TypeLayout::List(Box::new(leaf(Leaf::String))),
                "Vec<String>",
            ),
            (
                TypeLayout::Array {
                    item: Box::new(leaf(Leaf::F32)),
                    len: 4,
                },
                "[f32; 4]",
            ),
            (TypeLayout::Set(Box::new(leaf(Leaf::U8))), "HashSet<u8>"),
            (
                TypeLayout::Map {
                    key: Box::new(leaf(Leaf::String)),
                    value: Box::new(leaf(Leaf::Entity)),
                },
                "HashMap<String, Entity>",
            ),
            (
                TypeLayout::Tuple(vec![leaf(Leaf::U8), leaf(Leaf::Bool)]),
                "(u8, bool)",
            ),
            (TypeLayout::Tuple(vec![leaf(Leaf::U8)]), "(u8,)"),
            (TypeLayout::Tuple(vec![]), "()"),
            (option(leaf(Leaf::Vec2)), "Option<Vec2>"),
            (
                TypeLayout::Handle {
                    asset_type: "bevy_image::image::Image".into(),
                },
                "Handle<bevy_image::image::Image>",
            ),
            (TypeLayout::UntypedHandle, "UntypedHandle"),
            (stats(), "game::Stats"),
            (state(), "game::State"),
            (
                TypeLayout::Opaque {
                    type_path: "game::Blob".into(),
                },
                "game::Blob",
            ),
        ];
        for (layout, expected) in cases {
            assert_eq!(short(&layout), expected);
        }
    }

    #[test]
    fn short_names_keep_the_last_segment_of_every_path() {
        assert_eq!(short_name("game::Stats"), "Stats");
        assert_eq!(short_name("Stats"), "Stats");
        assert_eq!(
            short_name("core::option::Option<alloc::string::String>"),
            "Option<String>"
        );
        assert_eq!(
            short_name("std::collections::HashMap<game::Id, [game::Cell; 4]>"),
            "HashMap<Id, [Cell; 4]>"
        );
        assert_eq!(root_name(&stats()), "game::Stats");
        assert_eq!(root_name(&leaf(Leaf::U8)), "u8");
        let handle = TypeLayout::Handle {
            asset_type: "bevy_image::image::Image".into(),
        };
        assert_eq!(root_name(&handle), "Handle<bevy_image::image::Image>");
    }

    #[test]
    fn pretty_expands_nested_structs_and_enums() {
        let expected = "\
struct game::Stats {
    hp: u32,
    name: String,
    state: enum game::State {
        Idle,
        Walking(f32),
        Jumping { height: f32 },
    },
}";
        assert_eq!(pretty(&stats()), expected);
    }

    #[test]
    fn pretty_expands_struct_items_of_collections_and_options() {
        let item = TypeLayout::TupleStruct {
            type_path: "game::Item".into(),
            fields: vec![leaf(Leaf::U32)],
        };
        let bag = TypeLayout::Struct {
            type_path: "game::Bag".into(),
            fields: vec![
                field("items", TypeLayout::List(Box::new(item.clone()))),
                field(
                    "by_name",
                    TypeLayout::Map {
                        key: Box::new(leaf(Leaf::String)),
                        value: Box::new(option(item)),
                    },
                ),
                field("ids", TypeLayout::Set(Box::new(leaf(Leaf::U64)))),
                field("owner", option(leaf(Leaf::Entity))),
                field(
                    "empty",
                    TypeLayout::Struct {
                        type_path: "game::Marker".into(),
                        fields: vec![],
                    },
                ),
            ],
        };
        let expected = "\
struct game::Bag {
    items: Vec<struct game::Item(u32)>,
    by_name: HashMap<String, Option<struct game::Item(u32)>>,
    ids: HashSet<u64>,
    owner: Option<Entity>,
    empty: struct game::Marker {},
}";
        assert_eq!(pretty(&bag), expected);
    }

    #[test]
    fn pretty_puts_variants_with_struct_fields_on_their_own_lines() {
        let door = TypeLayout::Enum {
            type_path: "game::Door".into(),
            variants: vec![
                variant("Open", VariantFields::Unit),
                variant("Held", VariantFields::Tuple(vec![stats()])),
                variant(
                    "Locked",
                    VariantFields::Struct(vec![
                        field("key", leaf(Leaf::U32)),
                        field("by", TypeLayout::Tuple(vec![leaf(Leaf::U8), state()])),
                    ]),
                ),
            ],
        };
        let expected = "\
enum game::Door {
    Open,
    Held(
        struct game::Stats {
            hp: u32,
            name: String,
            state: enum game::State {
                Idle,
                Walking(f32),
                Jumping { height: f32 },
            },
        },
    ),
    Locked {
        key: u32,
        by: (
            u8,
            enum game::State {
                Idle,
                Walking(f32),
                Jumping { height: f32 },
            },
        ),
    },
}";
        assert_eq!(pretty(&door), expected);
    }

    #[test]
    fn pretty_shows_a_serde_type_with_its_reflected_layout() {
        let color = TypeLayout::Struct {
            type_path: "game::Tint".into(),
            fields: vec![field(
                "color",
                TypeLayout::Serde {
                    type_path: "bevy_color::color::Color".into(),
                    reflected: Box::new(TypeLayout::List(Box::new(leaf(Leaf::F32)))),
                },
            )],
        };
        let expected = "\
struct game::Tint {
    color: serde bevy_color::color::Color (reflected: Vec<f32>),
}";
        assert_eq!(pretty(&color), expected);
        assert_eq!(pretty(&leaf(Leaf::Quat)), "Quat");
    }
}
