//! A layout's bytes, as each column of a blob (version 2) stores its type's layout.
//!
//! Every node starts with a tag byte; strings are a varint length and UTF-8; counts are
//! varints (each item takes at least one byte, so a count is never larger than the bytes
//! left).
//!
//! | tag | node | then |
//! |-----|------|------|
//! | `0..=28` | a leaf | nothing: the tag is the leaf's position in [`Leaf::ALL`] |
//! | `0x40` | struct | type path, field count, each field's name and layout |
//! | `0x41` | tuple struct | type path, field count, each field's layout |
//! | `0x42` | tuple | field count, each field's layout |
//! | `0x43` | list | the item's layout |
//! | `0x44` | array | length (varint), the item's layout |
//! | `0x45` | set | the item's layout |
//! | `0x46` | map | the key's layout, the value's layout |
//! | `0x47` | enum | type path, variant count, each variant: name, fields byte (`0` unit, `1` tuple, `2` struct), then a tuple's field count and layouts or a struct's field count, names and layouts |
//! | `0x48` | serde | type path, the type's reflected layout |
//! | `0x49` | asset handle | the asset type's path |
//! | `0x4a` | untyped asset handle | nothing |
//! | `0x4b` | opaque | type path |
//! | `0x4c` | deeper than [`MAX_DEPTH`] | type path |
//!
//! A stored layout nested deeper than [`MAX_DEPTH`] is refused, so a hostile one cannot
//! exhaust the stack.
//!
//! # Memory
//!
//! A layout's bytes are compact (a leaf is one byte) and its tree is not: every node is a
//! [`TypeLayout`] of 56 bytes, every name a `String`. So a blob's readers check a stored layout
//! where it lies ([`check`], which allocates nothing) and build the tree only where it is used
//! (a load whose type changed since the save, `keepsake inspect`), paying for every node,
//! vector and name from a [`Budget`] ([`decode_in`], or [`decode_bytes`] with a budget of the
//! layout's own size): a forged layout of four million one-byte leaves is refused before its
//! 224 MB tree is built. Counts are checked against the bytes their items take at least (a
//! field one, a named field or a variant two).

use super::{Field, Leaf, MAX_DEPTH, TypeLayout, Variant, VariantFields};
use crate::error::BlobError;
use crate::format::Budget;
use crate::wire::BlobReader;
use crate::wire::put_varint;

const STRUCT: u8 = 0x40;
const TUPLE_STRUCT: u8 = 0x41;
const TUPLE: u8 = 0x42;
const LIST: u8 = 0x43;
const ARRAY: u8 = 0x44;
const SET: u8 = 0x45;
const MAP: u8 = 0x46;
const ENUM: u8 = 0x47;
const SERDE: u8 = 0x48;
const HANDLE: u8 = 0x49;
const UNTYPED_HANDLE: u8 = 0x4a;
const OPAQUE: u8 = 0x4b;
const DEEP: u8 = 0x4c;

const UNIT_VARIANT: u8 = 0;
const TUPLE_VARIANT: u8 = 1;
const STRUCT_VARIANT: u8 = 2;

// Here rather than beside the type in `mod.rs`, so that the module does not import its own
// child (an import circle for scripts/check_architecture.py).
impl TypeLayout {
    /// The layout's bytes as a column stores them ([`codec`](self)).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        encode(self, &mut out);
        out
    }
}

/// Appends `layout`'s bytes to `out`.
pub fn encode(layout: &TypeLayout, out: &mut Vec<u8>) {
    match layout {
        TypeLayout::Leaf(leaf) => out.push(leaf.byte()),
        TypeLayout::Struct { type_path, fields } => {
            out.push(STRUCT);
            put_str(out, type_path);
            put_fields(out, fields);
        }
        TypeLayout::TupleStruct { type_path, fields } => {
            out.push(TUPLE_STRUCT);
            put_str(out, type_path);
            put_layouts(out, fields);
        }
        TypeLayout::Tuple(fields) => {
            out.push(TUPLE);
            put_layouts(out, fields);
        }
        TypeLayout::List(item) => tagged(out, LIST, item),
        TypeLayout::Array { item, len } => {
            out.push(ARRAY);
            put_varint(out, *len);
            encode(item, out);
        }
        TypeLayout::Set(item) => tagged(out, SET, item),
        TypeLayout::Map { key, value } => {
            tagged(out, MAP, key);
            encode(value, out);
        }
        TypeLayout::Enum {
            type_path,
            variants,
        } => {
            out.push(ENUM);
            put_str(out, type_path);
            put_varint(out, variants.len() as u64);
            variants
                .iter()
                .for_each(|variant| put_variant(out, variant));
        }
        TypeLayout::Serde {
            type_path,
            reflected,
        } => {
            out.push(SERDE);
            put_str(out, type_path);
            encode(reflected, out);
        }
        TypeLayout::Handle { asset_type } => {
            out.push(HANDLE);
            put_str(out, asset_type);
        }
        TypeLayout::UntypedHandle => out.push(UNTYPED_HANDLE),
        TypeLayout::Opaque { type_path } => {
            out.push(OPAQUE);
            put_str(out, type_path);
        }
        TypeLayout::Deep { type_path } => {
            out.push(DEEP);
            put_str(out, type_path);
        }
    }
}

fn tagged(out: &mut Vec<u8>, tag: u8, inner: &TypeLayout) {
    out.push(tag);
    encode(inner, out);
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_layouts(out: &mut Vec<u8>, layouts: &[TypeLayout]) {
    put_varint(out, layouts.len() as u64);
    layouts.iter().for_each(|layout| encode(layout, out));
}

fn put_fields(out: &mut Vec<u8>, fields: &[Field]) {
    put_varint(out, fields.len() as u64);
    for field in fields {
        put_str(out, &field.name);
        encode(&field.layout, out);
    }
}

fn put_variant(out: &mut Vec<u8>, variant: &Variant) {
    put_str(out, &variant.name);
    match &variant.fields {
        VariantFields::Unit => out.push(UNIT_VARIANT),
        VariantFields::Tuple(fields) => {
            out.push(TUPLE_VARIANT);
            put_layouts(out, fields);
        }
        VariantFields::Struct(fields) => {
            out.push(STRUCT_VARIANT);
            put_fields(out, fields);
        }
    }
}

/// Reads one layout from `reader`, refusing unknown tags, nesting deeper than [`MAX_DEPTH`]
/// and counts larger than the bytes left, and paying for the tree from the reader's budget.
pub(crate) fn decode(reader: &mut BlobReader<'_>) -> Result<TypeLayout, BlobError> {
    reader.charge(NODES, NODE)?;
    decode_at(reader, 0)
}

/// Reads a layout from bytes that hold exactly one, paying for its tree from a budget of
/// their own size ([`Budget::for_input`]).
pub fn decode_bytes(bytes: &[u8]) -> Result<TypeLayout, BlobError> {
    decode_in(bytes, &Budget::for_input(bytes.len()))
}

/// Reads a layout from bytes that hold exactly one, paying for its tree from `budget` (the
/// budget of the blob the layout is part of).
pub fn decode_in(bytes: &[u8], budget: &Budget) -> Result<TypeLayout, BlobError> {
    let mut reader = BlobReader::with_budget(bytes, budget.clone());
    let layout = decode(&mut reader)?;
    expect_end(&reader)?;
    Ok(layout)
}

/// Checks that `bytes` hold exactly one layout, as [`decode_bytes`] reads it, without building
/// it (nothing is allocated): what a blob's readers do with every layout. Returns the bytes
/// its tree would take, as [`decode_in`] charges them, so a reader can tell whether it fits
/// the budget a load would build it from.
pub fn check(bytes: &[u8]) -> Result<u64, BlobError> {
    let mut reader = BlobReader::with_budget(bytes, Budget::nothing());
    let tree = check_at(&mut reader, 0)?;
    expect_end(&reader)?;
    Ok(tree.saturating_add(NODE))
}

/// The bytes of one node of a tree, as a boxed or listed layout takes them.
const NODE: u64 = size_of::<TypeLayout>() as u64;

/// What a refusal names: the tree's nodes, vectors and names.
const NODES: &str = "type layout";

fn expect_end(reader: &BlobReader<'_>) -> Result<(), BlobError> {
    if reader.is_empty() {
        return Ok(());
    }
    Err(BlobError::Malformed {
        offset: reader.offset(),
        reason: format!("{} bytes left after the layout", reader.remaining()),
    })
}

fn check_depth(offset: usize, depth: usize) -> Result<(), BlobError> {
    if depth > MAX_DEPTH {
        return Err(BlobError::Malformed {
            offset,
            reason: format!("a type layout nests deeper than {MAX_DEPTH} levels"),
        });
    }
    Ok(())
}

fn unknown_tag(offset: usize, tag: u8) -> BlobError {
    BlobError::Malformed {
        offset,
        reason: format!("{tag:#04x} is not a layout tag this build knows"),
    }
}

fn decode_at(reader: &mut BlobReader<'_>, depth: usize) -> Result<TypeLayout, BlobError> {
    let offset = reader.offset();
    check_depth(offset, depth)?;
    let tag = reader.byte("layout tag")?;
    if let Some(leaf) = Leaf::from_byte(tag) {
        return Ok(TypeLayout::Leaf(leaf));
    }
    let inner = |reader: &mut BlobReader<'_>| {
        reader.charge(NODES, NODE)?;
        decode_at(reader, depth + 1).map(Box::new)
    };
    Ok(match tag {
        STRUCT => TypeLayout::Struct {
            type_path: string(reader, "struct type path")?,
            fields: fields(reader, depth)?,
        },
        TUPLE_STRUCT => TypeLayout::TupleStruct {
            type_path: string(reader, "tuple struct type path")?,
            fields: layouts(reader, depth)?,
        },
        TUPLE => TypeLayout::Tuple(layouts(reader, depth)?),
        LIST => TypeLayout::List(inner(reader)?),
        ARRAY => {
            let len = reader.varint("array length")?;
            TypeLayout::Array {
                item: inner(reader)?,
                len,
            }
        }
        SET => TypeLayout::Set(inner(reader)?),
        MAP => TypeLayout::Map {
            key: inner(reader)?,
            value: inner(reader)?,
        },
        ENUM => TypeLayout::Enum {
            type_path: string(reader, "enum type path")?,
            variants: variants(reader, depth)?,
        },
        SERDE => TypeLayout::Serde {
            type_path: string(reader, "serde type path")?,
            reflected: inner(reader)?,
        },
        HANDLE => TypeLayout::Handle {
            asset_type: string(reader, "asset type path")?,
        },
        UNTYPED_HANDLE => TypeLayout::UntypedHandle,
        OPAQUE => TypeLayout::Opaque {
            type_path: string(reader, "opaque type path")?,
        },
        DEEP => TypeLayout::Deep {
            type_path: string(reader, "deep type path")?,
        },
        other => return Err(unknown_tag(offset, other)),
    })
}

/// [`decode_at`]'s walk, building nothing: the bytes the node's tree would take besides the
/// node itself (its boxes, vectors and names, as [`decode_at`] pays for them).
fn check_at(reader: &mut BlobReader<'_>, depth: usize) -> Result<u64, BlobError> {
    let offset = reader.offset();
    check_depth(offset, depth)?;
    let tag = reader.byte("layout tag")?;
    if Leaf::from_byte(tag).is_some() {
        return Ok(0);
    }
    let path = match tag {
        STRUCT => Some("struct type path"),
        TUPLE_STRUCT => Some("tuple struct type path"),
        ENUM => Some("enum type path"),
        SERDE => Some("serde type path"),
        HANDLE => Some("asset type path"),
        OPAQUE => Some("opaque type path"),
        DEEP => Some("deep type path"),
        ARRAY | TUPLE | LIST | SET | MAP | UNTYPED_HANDLE => None,
        other => return Err(unknown_tag(offset, other)),
    };
    let name = match path {
        Some(what) => reader.str_with_len(what)?.len() as u64,
        None => 0,
    };
    if tag == ARRAY {
        reader.varint("array length")?;
    }
    let boxed =
        |reader: &mut BlobReader<'_>| Ok::<_, BlobError>(NODE + check_at(reader, depth + 1)?);
    let inner = match tag {
        STRUCT => check_fields(reader, depth)?,
        TUPLE_STRUCT | TUPLE => check_layouts(reader, depth)?,
        LIST | ARRAY | SET | SERDE => boxed(reader)?,
        MAP => boxed(reader)?.saturating_add(boxed(reader)?),
        ENUM => check_variants(reader, depth)?,
        _ => 0,
    };
    Ok(name.saturating_add(inner))
}

fn check_layouts(reader: &mut BlobReader<'_>, depth: usize) -> Result<u64, BlobError> {
    let count = reader.count("field count", 1)?;
    (0..count).try_fold(items::<TypeLayout>(count), |tree, _| {
        Ok(tree.saturating_add(check_at(reader, depth + 1)?))
    })
}

fn check_fields(reader: &mut BlobReader<'_>, depth: usize) -> Result<u64, BlobError> {
    let count = reader.count("field count", 2)?;
    (0..count).try_fold(items::<Field>(count), |tree, _| {
        let name = reader.str_with_len("field name")?.len() as u64;
        Ok(tree.saturating_add(name + check_at(reader, depth + 1)?))
    })
}

fn check_variants(reader: &mut BlobReader<'_>, depth: usize) -> Result<u64, BlobError> {
    let count = reader.count("variant count", 2)?;
    (0..count).try_fold(items::<Variant>(count), |tree, _| {
        let name = reader.str_with_len("variant name")?;
        let fields_offset = reader.offset();
        let fields = match reader.byte("variant fields")? {
            UNIT_VARIANT => 0,
            TUPLE_VARIANT => check_layouts(reader, depth)?,
            STRUCT_VARIANT => check_fields(reader, depth)?,
            other => return Err(bad_variant_fields(fields_offset, name, other)),
        };
        Ok(tree.saturating_add(name.len() as u64 + fields))
    })
}

fn bad_variant_fields(offset: usize, name: &str, byte: u8) -> BlobError {
    BlobError::Malformed {
        offset,
        reason: format!("variant {name} has fields byte {byte}; only 0, 1 and 2 exist"),
    }
}

/// The bytes of a vector of `count` values of `T`.
fn items<T>(count: usize) -> u64 {
    (count as u64).saturating_mul(size_of::<T>() as u64)
}

/// A name or type path, paid for.
fn string(reader: &mut BlobReader<'_>, what: &'static str) -> Result<String, BlobError> {
    let text = reader.str_with_len(what)?;
    reader.charge(NODES, text.len() as u64)?;
    Ok(text.to_owned())
}

fn layouts(reader: &mut BlobReader<'_>, depth: usize) -> Result<Vec<TypeLayout>, BlobError> {
    let count = reader.count("field count", 1)?;
    let mut layouts = reader.vec(format_args!("{NODES} ({count} fields)"), count)?;
    for _ in 0..count {
        layouts.push(decode_at(reader, depth + 1)?);
    }
    Ok(layouts)
}

fn fields(reader: &mut BlobReader<'_>, depth: usize) -> Result<Vec<Field>, BlobError> {
    let count = reader.count("field count", 2)?;
    let mut fields = reader.vec(format_args!("{NODES} ({count} named fields)"), count)?;
    for _ in 0..count {
        fields.push(Field {
            name: string(reader, "field name")?,
            layout: decode_at(reader, depth + 1)?,
        });
    }
    Ok(fields)
}

fn variants(reader: &mut BlobReader<'_>, depth: usize) -> Result<Vec<Variant>, BlobError> {
    let count = reader.count("variant count", 2)?;
    let mut variants = reader.vec(format_args!("{NODES} ({count} variants)"), count)?;
    for _ in 0..count {
        let name = string(reader, "variant name")?;
        let offset = reader.offset();
        let fields = match reader.byte("variant fields")? {
            UNIT_VARIANT => VariantFields::Unit,
            TUPLE_VARIANT => VariantFields::Tuple(layouts(reader, depth)?),
            STRUCT_VARIANT => VariantFields::Struct(fields(reader, depth)?),
            other => return Err(bad_variant_fields(offset, &name, other)),
        };
        variants.push(Variant { name, fields });
    }
    Ok(variants)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TypeLayout {
        TypeLayout::Struct {
            type_path: "game::Door".into(),
            fields: vec![
                Field {
                    name: "state".into(),
                    layout: TypeLayout::Enum {
                        type_path: "game::DoorState".into(),
                        variants: vec![
                            Variant {
                                name: "Open".into(),
                                fields: VariantFields::Unit,
                            },
                            Variant {
                                name: "Locked".into(),
                                fields: VariantFields::Tuple(vec![TypeLayout::Leaf(Leaf::U32)]),
                            },
                            Variant {
                                name: "Jammed".into(),
                                fields: VariantFields::Struct(vec![Field {
                                    name: "since".into(),
                                    layout: TypeLayout::Leaf(Leaf::F64),
                                }]),
                            },
                        ],
                    },
                },
                Field {
                    name: "keys".into(),
                    layout: TypeLayout::Map {
                        key: Box::new(TypeLayout::Leaf(Leaf::String)),
                        value: Box::new(TypeLayout::List(Box::new(TypeLayout::Leaf(Leaf::Entity)))),
                    },
                },
                Field {
                    name: "corners".into(),
                    layout: TypeLayout::Array {
                        item: Box::new(TypeLayout::Tuple(vec![
                            TypeLayout::Leaf(Leaf::Vec2),
                            TypeLayout::Set(Box::new(TypeLayout::Leaf(Leaf::U8))),
                        ])),
                        len: 4,
                    },
                },
                Field {
                    name: "look".into(),
                    layout: TypeLayout::Serde {
                        type_path: "bevy_color::color::Color".into(),
                        reflected: Box::new(TypeLayout::Opaque {
                            type_path: "x".into(),
                        }),
                    },
                },
                Field {
                    name: "image".into(),
                    layout: TypeLayout::Handle {
                        asset_type: "bevy_image::image::Image".into(),
                    },
                },
                Field {
                    name: "any".into(),
                    layout: TypeLayout::UntypedHandle,
                },
                Field {
                    name: "deep".into(),
                    layout: TypeLayout::Deep {
                        type_path: "game::Tree".into(),
                    },
                },
                Field {
                    name: "pair".into(),
                    layout: TypeLayout::TupleStruct {
                        type_path: "game::Pair".into(),
                        fields: vec![TypeLayout::Leaf(Leaf::I8), TypeLayout::Leaf(Leaf::Bool)],
                    },
                },
            ],
        }
    }

    #[test]
    fn every_node_reads_back_as_written() {
        let layout = sample();
        assert_eq!(decode_bytes(&layout.to_bytes()).unwrap(), layout);
    }

    #[test]
    fn every_cut_of_a_layout_is_a_typed_error() {
        let bytes = sample().to_bytes();
        for len in 0..bytes.len() {
            assert!(decode_bytes(&bytes[..len]).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn an_unknown_tag_is_named() {
        let error = decode_bytes(&[0x7f]).unwrap_err().to_string();
        assert!(error.contains("0x7f is not a layout tag"), "{error}");
    }

    #[test]
    fn nesting_is_bounded_before_the_stack() {
        let mut bytes = vec![LIST; 10_000];
        bytes.push(Leaf::U8.byte());
        let error = decode_bytes(&bytes).unwrap_err().to_string();
        assert!(error.contains("nests deeper than"), "{error}");
    }

    #[test]
    fn the_check_costs_the_tree_as_decoding_pays_for_it() {
        let bytes = sample().to_bytes();
        let budget = Budget::for_input(bytes.len());
        decode_in(&bytes, &budget).unwrap();
        assert_eq!(check(&bytes).unwrap(), budget.used());
        for len in 0..bytes.len() {
            assert!(check(&bytes[..len]).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn a_tree_beyond_its_budget_is_refused_naming_what_asked() {
        // A tuple of a million one-byte leaves: a megabyte of layout, 56 of tree.
        let mut bytes = vec![TUPLE];
        put_varint(&mut bytes, 1 << 20);
        bytes.resize(bytes.len() + (1 << 20), Leaf::U8.byte());
        let cost = check(&bytes).unwrap();
        assert!(cost > 50 << 20, "{cost}");
        let error = decode_bytes(&bytes).unwrap_err().to_string();
        assert!(
            error.contains("type layout (1048576 fields) asks for"),
            "{error}"
        );
    }

    #[test]
    fn a_huge_count_is_refused_before_allocating() {
        let mut bytes = vec![TUPLE];
        put_varint(&mut bytes, u64::MAX >> 1);
        let error = decode_bytes(&bytes).unwrap_err().to_string();
        assert!(error.contains("more than the"), "{error}");
    }
}
