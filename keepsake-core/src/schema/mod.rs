//! Type layouts, engine-free: what a saved value's bytes mean, written once per column of a
//! blob (format version 2) so a save describes itself.
//!
//! A value is postcard bytes written by position; without a record of the layout that wrote
//! them, a reader can only assume today's, and a reordered field or enum variant is read
//! exchanged without an error. A [`TypeLayout`] is that record: struct, tuple-struct and enum
//! shapes with their field and variant names and their types, down to the leaves. A load
//! compares a column's stored layout with the one today's type has: equal, the fast plan reads
//! the values as before; different, the values are read by the stored layout and resolved by
//! name against today's type. Whether they can be is decided once, by [`resolve`], which both
//! the load and the compatibility guard ask; [`compare`] tells what changed, in words a game
//! developer can act on. Every reader of value bytes decodes postcard's primitives through
//! [`bytes::ValueBytes`], and the reflection plan writes them with the writers beside it.
//!
//! The bytes of a layout ([`codec`]) are specified in the table there; [`text`] renders a
//! layout for people (`keepsake inspect`), and [`stored`] reads values by a layout without the
//! game's types (`keepsake dump`). [`compat::file`](mod@crate::compat::file) writes a game's registered types and their layouts
//! as a text file it commits, which `keepsake compat` checks kept saves against.
//!
//! A stored layout and a value read by it are both far larger in memory than in their bytes (a
//! one-byte leaf is a 56-byte [`TypeLayout`], a one-byte `u8` of a list a `StoredValue`): their
//! readers pay for what they build from a [`Budget`](crate::format::Budget) of four bytes per
//! input byte and a megabyte, and check or measure without building where that is all that is
//! wanted ([`codec::check`], [`stored::skip`]). See each module's "Memory".

pub mod bytes;
pub mod codec;
pub mod compare;
#[cfg(test)]
pub(crate) mod fixtures;
mod leaf;
pub mod resolve;
#[cfg(test)]
mod resolve_tests;
pub mod stored;
pub mod text;

pub use leaf::Leaf;

/// The layout of one type, as its values are written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeLayout {
    /// A value written without looking at its structure (a number, text, an entity id, a glam
    /// vector).
    Leaf(Leaf),
    /// A struct's named fields, in the order they are written.
    Struct {
        /// The struct's type path.
        type_path: String,
        /// Its fields, in the order they are written.
        fields: Vec<Field>,
    },
    /// A tuple struct's fields, in order.
    TupleStruct {
        /// The tuple struct's type path.
        type_path: String,
        /// Its fields, in order.
        fields: Vec<TypeLayout>,
    },
    /// A tuple's fields, in order.
    Tuple(Vec<TypeLayout>),
    /// A list (`Vec`, `VecDeque`...): a length, then the items.
    List(Box<TypeLayout>),
    /// An array `[T; len]`: the items, no length.
    Array {
        /// The items' layout.
        item: Box<TypeLayout>,
        /// How many items every value has.
        len: u64,
    },
    /// A set: a length, then the items.
    Set(Box<TypeLayout>),
    /// A map: a length, then each entry's key and value.
    Map {
        /// The keys' layout.
        key: Box<TypeLayout>,
        /// The values' layout.
        value: Box<TypeLayout>,
    },
    /// An enum: the variant's index in `variants`, then that variant's fields.
    Enum {
        /// The enum's type path.
        type_path: String,
        /// Its variants, in the order of their stored indices.
        variants: Vec<Variant>,
    },
    /// Bytes written by the type's own serde implementation, which only that type can read;
    /// `reflected` is the type's reflected layout, kept as its fingerprint (a change to it
    /// means the serde bytes may have changed too).
    Serde {
        /// The type's path.
        type_path: String,
        /// The type's reflected layout (its fingerprint).
        reflected: Box<TypeLayout>,
    },
    /// An asset handle of `asset_type`, written by path (or uuid).
    Handle {
        /// The asset type's path.
        asset_type: String,
    },
    /// An untyped asset handle: its asset type's path, then the handle by path (or uuid).
    UntypedHandle,
    /// A type reflection does not look inside (its own serde implementation writes it).
    Opaque {
        /// The type's path.
        type_path: String,
    },
    /// A type nested deeper than [`MAX_DEPTH`] (a recursive type), known by its path only.
    Deep {
        /// The type's path.
        type_path: String,
    },
}

/// A named field of a struct or a struct variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// The field's layout.
    pub layout: TypeLayout,
}

/// One variant of an enum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// The variant's name.
    pub name: String,
    /// Its fields.
    pub fields: VariantFields,
}

/// The fields of an enum variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VariantFields {
    /// No fields.
    Unit,
    /// Fields by position.
    Tuple(Vec<TypeLayout>),
    /// Named fields.
    Struct(Vec<Field>),
}

/// The asset type of a [`TypeLayout::Handle`] whose asset type was not known when it was
/// written (saves made before handles named it from the handle's own type).
pub const UNKNOWN_ASSET: &str = "?";

/// Layouts nest at most this deep; a deeper type is described as [`TypeLayout::Deep`], and a
/// stored layout nested deeper is refused.
pub const MAX_DEPTH: usize = 24;

impl TypeLayout {
    /// The type's path for the shapes that carry one (structs, enums, serde and opaque types).
    pub fn type_path(&self) -> Option<&str> {
        match self {
            TypeLayout::Struct { type_path, .. }
            | TypeLayout::TupleStruct { type_path, .. }
            | TypeLayout::Enum { type_path, .. }
            | TypeLayout::Serde { type_path, .. }
            | TypeLayout::Opaque { type_path }
            | TypeLayout::Deep { type_path } => Some(type_path),
            TypeLayout::Handle { asset_type } => Some(asset_type),
            _ => None,
        }
    }

    /// Whether this is `core::option::Option<T>`, with `T`'s layout.
    pub fn option_item(&self) -> Option<&TypeLayout> {
        let TypeLayout::Enum {
            type_path,
            variants,
        } = self
        else {
            return None;
        };
        if !type_path.starts_with("core::option::Option<") {
            return None;
        }
        match variants.as_slice() {
            [none, some] if none.name == "None" && some.name == "Some" => match &some.fields {
                VariantFields::Tuple(fields) if fields.len() == 1 => Some(&fields[0]),
                _ => None,
            },
            _ => None,
        }
    }
}
