//! Values read by a stored layout, without the game's types: what `keepsake dump` prints, and
//! how a load skips a field the type no longer has.
//!
//! A value's bytes are postcard, written by position (see [`TypeLayout`]); [`read`] walks them
//! with the layout the save recorded. Bytes written by a type's own serde code
//! ([`TypeLayout::Serde`], [`TypeLayout::Opaque`], [`TypeLayout::Deep`]) can only be read by
//! that type: a serde type is read by its reflected layout when that has no opaque part (its
//! derive most likely writes that shape), and otherwise the bytes are kept as
//! [`StoredValue::Unreadable`]. Postcard does not delimit values, so such bytes run to the end
//! of the value and the reading stops there.
//!
//! Every length is bounded by the bytes left (an item takes at least one byte) before
//! anything is allocated; values of no bytes (`()`, empty structs) are counted against a
//! limit of their own instead (eight a byte and 4096), which also bounds the reading's time.
//!
//! # Memory
//!
//! A value read is a tree of [`StoredValue`]s (about 90 bytes a node, so a one-byte `u8` of a
//! list is a node), with its type paths and names copied from the layout: far more than its
//! bytes. [`read`] and [`read_prefix`] pay for every node, vector and text from a
//! [`Budget`] of the value's size (four bytes a byte and a megabyte), so a forged value, or a
//! long type path copied into each of thousands of empty structs, is
//! [`StoredValueError::OverBudget`] rather than gigabytes; a legitimate component's value fits
//! by far (a value of some hundred kilobytes of one-byte items does not, and a tool shows the
//! error in its place). [`skip`] measures a value without building it, allocating nothing: how
//! a load passes a field its type no longer has.

use std::fmt::{self, Debug, Display, Formatter, Write as _};

use super::bytes::{ValueBytes, ValueError};
use super::text::{root_name, short_name};
use super::{Field, Leaf, TypeLayout, Variant, VariantFields};
use crate::format::{Budget, OverBudget};

/// Values of no bytes allowed per byte of input, plus [`EMPTY_VALUES_BASE`]: a list of `()`
/// is the one thing whose length the bytes left cannot bound.
const EMPTY_VALUES_PER_BYTE: usize = 8;
/// Values of no bytes allowed whatever the input's size.
const EMPTY_VALUES_BASE: usize = 4096;

/// A value read by a stored layout, without the type that wrote it.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredValue {
    /// A `bool`.
    Bool(bool),
    /// An unsigned integer, whatever its width.
    Unsigned(u128),
    /// A signed integer, whatever its width.
    Signed(i128),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A `char`.
    Char(char),
    /// A `String`.
    String(String),
    /// An entity, by the 64-bit id it had when saved.
    Entity(u64),
    /// A glam float vector or quaternion (`Vec2`...`Vec4`, `Vec3A`, `Quat`), by component.
    Floats(Vec<f32>),
    /// A glam integer vector (`IVec*`, `UVec*`), by component.
    Ints(Vec<i128>),
    /// A struct's fields by name, in the order they were written.
    Struct {
        /// The struct's type path, as the save recorded it.
        type_path: String,
        /// Its fields; after an [`Unreadable`](StoredValue::Unreadable) one, the rest are
        /// missing.
        fields: Vec<(String, StoredValue)>,
    },
    /// A tuple struct's fields, in order.
    TupleStruct {
        /// The tuple struct's type path, as the save recorded it.
        type_path: String,
        /// Its fields.
        fields: Vec<StoredValue>,
    },
    /// A tuple's fields, in order.
    Tuple(Vec<StoredValue>),
    /// A list's items.
    List(Vec<StoredValue>),
    /// An array's items.
    Array(Vec<StoredValue>),
    /// A set's items, in the order they were written.
    Set(Vec<StoredValue>),
    /// A map's entries, key then value, in the order they were written.
    Map(Vec<(StoredValue, StoredValue)>),
    /// An enum's variant and its fields.
    Enum {
        /// The enum's type path, as the save recorded it.
        type_path: String,
        /// The variant's name.
        variant: String,
        /// The variant's fields.
        fields: StoredFields,
    },
    /// An asset handle, by the asset's path.
    AssetPath(String),
    /// An asset handle, by the asset's uuid.
    AssetUuid([u8; 16]),
    /// An untyped asset handle.
    UntypedHandle {
        /// The asset type's path.
        asset_type: String,
        /// The handle: [`AssetPath`](StoredValue::AssetPath) or
        /// [`AssetUuid`](StoredValue::AssetUuid).
        handle: Box<StoredValue>,
    },
    /// Bytes written by a type's own serde code, which only that type can read. They run to
    /// the end of the value (their own end is unknown), so nothing after them was read.
    Unreadable {
        /// The type that wrote them.
        type_path: String,
        /// Every byte from this value's start to the end of the outermost value.
        bytes: Vec<u8>,
    },
}

/// The fields of an enum variant read by a stored layout.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredFields {
    /// No fields.
    Unit,
    /// Fields by position.
    Tuple(Vec<StoredValue>),
    /// Fields by name.
    Struct(Vec<(String, StoredValue)>),
}

/// Why a value could not be read by its stored layout. `path` names where, from the root's
/// type: `game::Stats.state::Walking.0`, `game::Bag.items[3]`, `game::Map{2}` (entry 2's
/// value), `game::Map{key 2}`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoredValueError {
    /// The bytes end inside the value.
    #[error(
        "{path}: the value ends inside its {what}; the save is cut short, or its values were \
         not written by the layout it records"
    )]
    Truncated {
        /// Where.
        path: String,
        /// The part that was being read.
        what: &'static str,
    },
    /// A varint with more bytes than its type can take.
    #[error("{path}: the {what} is a varint longer than its type allows; the save is damaged")]
    BadVarint {
        /// Where.
        path: String,
        /// The part that was being read.
        what: &'static str,
    },
    /// A number too large for its type.
    #[error("{path}: the {what} does not fit in {bits} bits; the save is damaged")]
    OutOfRange {
        /// Where.
        path: String,
        /// The part that was being read.
        what: &'static str,
        /// Its type's width.
        bits: u32,
    },
    /// A `bool` byte other than 0 and 1.
    #[error("{path}: a bool stored as {byte}, neither 0 nor 1; the save is damaged")]
    InvalidBool {
        /// Where.
        path: String,
        /// The byte.
        byte: u8,
    },
    /// Text that is not UTF-8.
    #[error("{path}: the {what} is not UTF-8; the save is damaged")]
    InvalidUtf8 {
        /// Where.
        path: String,
        /// The part that was being read.
        what: &'static str,
    },
    /// A `char` stored as text of other than one character.
    #[error("{path}: a char stored as {len} bytes of text, not one character; the save is damaged")]
    InvalidChar {
        /// Where.
        path: String,
        /// The text's length in bytes.
        len: usize,
    },
    /// A length larger than the bytes left could hold.
    #[error(
        "{path}: a length of {len} items, more than the {left} bytes left could hold; the save \
         is damaged, or its values were not written by the layout it records"
    )]
    TooLong {
        /// Where.
        path: String,
        /// The length.
        len: u128,
        /// The bytes left.
        left: usize,
    },
    /// An enum variant index past the stored layout's variants.
    #[error(
        "{path}: variant index {index}, but the stored layout has {count} variants; the save is \
         damaged, or its values were not written by the layout it records"
    )]
    VariantOutOfRange {
        /// The enum's path.
        path: String,
        /// The stored index.
        index: u32,
        /// How many variants the layout has.
        count: usize,
    },
    /// An asset handle neither by path nor by uuid.
    #[error("{path}: asset handle kind {index}; only 0 (by path) and 1 (by uuid) exist")]
    HandleKind {
        /// Where.
        path: String,
        /// The stored kind.
        index: u32,
    },
    /// An asset uuid of other than 16 bytes.
    #[error("{path}: an asset uuid of {len} bytes; a uuid has 16")]
    UuidLength {
        /// Where.
        path: String,
        /// Its length.
        len: usize,
    },
    /// More values of no bytes (`()`, empty structs) than the input's size allows.
    #[error(
        "{path}: more than {limit} values that take no bytes (`()`, empty structs) in {size} \
         bytes; refused so that a damaged length cannot exhaust memory"
    )]
    TooManyEmpty {
        /// Where the budget ran out.
        path: String,
        /// The budget.
        limit: usize,
        /// The input's size.
        size: usize,
    },
    /// Bytes after the value.
    #[error(
        "{path}: {count} bytes left over after the value; the save's values were not written \
         by the layout it records, or it is damaged"
    )]
    LeftOver {
        /// The root's name.
        path: String,
        /// How many bytes are left.
        count: usize,
    },
    /// Reading the value asks for more memory than its bytes may cost.
    #[error("{path}: {refused}")]
    OverBudget {
        /// Where.
        path: String,
        /// What asked, and how much.
        refused: OverBudget,
    },
    /// A value that only its type can read, met while measuring a value to skip it.
    #[error(
        "{path}: a {type_path} is written by its own serde code, which only that type can \
         read, so where it ends is unknown and the value cannot be skipped; keep the field in \
         the type, or migrate the save"
    )]
    CannotSkip {
        /// Where.
        path: String,
        /// The type that wrote the bytes.
        type_path: String,
    },
}

/// Reads one value of `layout` that takes all of `bytes`.
///
/// A part only its type can read ([`StoredValue::Unreadable`]) takes the rest of the bytes
/// and ends the reading: the value is returned with the placeholder, without the fields after
/// it. Otherwise bytes left after the value are an error.
pub fn read(layout: &TypeLayout, bytes: &[u8]) -> Result<StoredValue, StoredValueError> {
    let mut reader = Reader::new(layout, bytes, Mode::Read);
    let value = reader.value(layout)?;
    if !reader.ended && reader.left() > 0 {
        return Err(StoredValueError::LeftOver {
            path: root_name(layout),
            count: reader.left(),
        });
    }
    Ok(value)
}

/// Reads one value of `layout` from the front of `bytes`: the value and how many bytes it
/// took, so a caller can skip it. A part only its type can read is an error
/// ([`StoredValueError::CannotSkip`]): where it ends is unknown.
pub fn read_prefix(
    layout: &TypeLayout,
    bytes: &[u8],
) -> Result<(StoredValue, usize), StoredValueError> {
    let mut reader = Reader::new(layout, bytes, Mode::Prefix);
    let value = reader.value(layout)?;
    Ok((value, reader.input.position()))
}

/// How many bytes one value of `layout` takes at the front of `bytes`, read as
/// [`read_prefix`] reads it but building nothing (so allocating nothing): how a load passes a
/// field its type no longer has.
pub fn skip(layout: &TypeLayout, bytes: &[u8]) -> Result<usize, StoredValueError> {
    let mut reader = Reader::new(layout, bytes, Mode::Measure);
    reader.value(layout)?;
    Ok(reader.input.position())
}

/// Whether `bytes` are exactly one value of `layout`, every part read (none only its type
/// can read): evidence that `layout` wrote them.
pub fn reads_whole(layout: &TypeLayout, bytes: &[u8]) -> bool {
    skip(layout, bytes).is_ok_and(|used| used == bytes.len())
}

/// What a [`Reader`] does with a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Reads it, a part only its type can read taking the rest of the bytes.
    Read,
    /// Reads it from the front of the bytes, so it must end where it ends: a part only its
    /// type can read is an error.
    Prefix,
    /// As `Prefix`, building nothing: only where the value ends is wanted.
    Measure,
}

/// Reads values front to back, keeping the path to the part being read for errors.
struct Reader<'a> {
    /// The value's bytes: every primitive is read through them.
    input: ValueBytes<'a>,
    /// Where the reading is, from the root's name; segments are pushed and popped around
    /// each nested value.
    path: String,
    /// How many more values of no bytes may be read.
    empty_left: usize,
    /// Measuring a value to skip it: an unreadable part is an error, not a placeholder.
    skipping: bool,
    /// Whether values are built (else only read past: nothing is allocated for them).
    keep: bool,
    /// What building the value may still allocate.
    budget: Budget,
    /// An unreadable part took the rest of the bytes: nothing more is read.
    ended: bool,
}

impl<'a> Reader<'a> {
    fn new(layout: &TypeLayout, bytes: &'a [u8], mode: Mode) -> Self {
        let keep = mode != Mode::Measure;
        Reader {
            input: ValueBytes::new(bytes),
            path: root_name(layout),
            empty_left: empty_budget(bytes.len()),
            skipping: mode != Mode::Read,
            keep,
            budget: match keep {
                true => Budget::for_input(bytes.len()),
                false => Budget::nothing(),
            },
            ended: false,
        }
    }

    /// Pays for `bytes` the value's `part` is about to allocate (nothing is, when building
    /// nothing).
    fn charge(&self, part: &'static str, bytes: usize) -> Result<(), StoredValueError> {
        if !self.keep {
            return Ok(());
        }
        self.budget
            .charge(part, bytes as u64)
            .map_err(|refused| StoredValueError::OverBudget {
                path: self.path(),
                refused,
            })
    }

    /// Room for `count` values of `part`, paid for (none when building nothing).
    fn vec<T>(&self, part: &'static str, count: usize) -> Result<Vec<T>, StoredValueError> {
        if !self.keep {
            return Ok(Vec::new());
        }
        self.charge(part, count.saturating_mul(size_of::<T>()))?;
        Ok(Vec::with_capacity(count))
    }

    /// Adds `item` to `out`, paying for any room it takes (dropped when building nothing).
    fn push<T>(
        &self,
        part: &'static str,
        out: &mut Vec<T>,
        item: T,
    ) -> Result<(), StoredValueError> {
        if !self.keep {
            return Ok(());
        }
        self.budget
            .grow(part, out)
            .map_err(|refused| StoredValueError::OverBudget {
                path: self.path(),
                refused,
            })?;
        out.push(item);
        Ok(())
    }

    /// A copy of `text` (a name, a type path, a string value), paid for (empty when building
    /// nothing).
    fn owned(&self, part: &'static str, text: &str) -> Result<String, StoredValueError> {
        if !self.keep {
            return Ok(String::new());
        }
        self.charge(part, text.len())?;
        Ok(text.to_owned())
    }

    fn left(&self) -> usize {
        self.input.remaining()
    }

    fn path(&self) -> String {
        self.path.clone()
    }

    /// Runs `read` with `segment` appended to the path.
    fn nested<T>(
        &mut self,
        segment: fmt::Arguments<'_>,
        read: impl FnOnce(&mut Self) -> Result<T, StoredValueError>,
    ) -> Result<T, StoredValueError> {
        let mark = self.path.len();
        // Writing to a String cannot fail.
        let _ = self.path.write_fmt(segment);
        let result = read(self);
        self.path.truncate(mark);
        result
    }

    fn value(&mut self, layout: &TypeLayout) -> Result<StoredValue, StoredValueError> {
        let start = self.input.position();
        let value = self.shape(layout)?;
        if self.input.position() == start && !self.ended {
            // The bytes left bound every length except that of a list of values of no bytes.
            self.empty_left =
                self.empty_left
                    .checked_sub(1)
                    .ok_or_else(|| StoredValueError::TooManyEmpty {
                        path: self.path(),
                        limit: empty_budget(self.input.input().len()),
                        size: self.input.input().len(),
                    })?;
        }
        Ok(value)
    }

    fn shape(&mut self, layout: &TypeLayout) -> Result<StoredValue, StoredValueError> {
        Ok(match layout {
            TypeLayout::Leaf(leaf) => self.leaf(*leaf)?,
            TypeLayout::Struct { type_path, fields } => StoredValue::Struct {
                type_path: self.owned("type path", type_path)?,
                fields: self.named(fields)?,
            },
            TypeLayout::TupleStruct { type_path, fields } => StoredValue::TupleStruct {
                type_path: self.owned("type path", type_path)?,
                fields: self.positional(fields)?,
            },
            TypeLayout::Tuple(fields) => StoredValue::Tuple(self.positional(fields)?),
            TypeLayout::List(item) => {
                let len = self.length(item)?;
                StoredValue::List(self.items(item, len)?)
            }
            TypeLayout::Array { item, len } => {
                self.check_length(u128::from(*len), || can_be_empty(item))?;
                StoredValue::Array(self.items(item, *len)?)
            }
            TypeLayout::Set(item) => {
                let len = self.length(item)?;
                StoredValue::Set(self.items(item, len)?)
            }
            TypeLayout::Map { key, value } => self.map(key, value)?,
            TypeLayout::Enum {
                type_path,
                variants,
            } => self.enumeration(type_path, variants)?,
            TypeLayout::Serde {
                type_path,
                reflected,
            } => self.serde(type_path, reflected)?,
            TypeLayout::Handle { .. } => self.handle()?,
            TypeLayout::UntypedHandle => {
                let asset_type = self.string("asset type path")?;
                let handle = self.handle()?;
                if !self.keep {
                    return Ok(handle);
                }
                self.charge("handle", size_of::<StoredValue>())?;
                StoredValue::UntypedHandle {
                    asset_type,
                    handle: Box::new(handle),
                }
            }
            TypeLayout::Opaque { type_path } | TypeLayout::Deep { type_path } => {
                self.unreadable(type_path)?
            }
        })
    }

    fn named(&mut self, fields: &[Field]) -> Result<Vec<(String, StoredValue)>, StoredValueError> {
        let mut out = self.vec("struct's fields", fields.len())?;
        for field in fields {
            let value = self.nested(format_args!(".{}", field.name), |reader| {
                reader.value(&field.layout)
            })?;
            let name = self.owned("field name", &field.name)?;
            self.push("struct's fields", &mut out, (name, value))?;
            if self.ended {
                break;
            }
        }
        Ok(out)
    }

    fn positional(&mut self, fields: &[TypeLayout]) -> Result<Vec<StoredValue>, StoredValueError> {
        let mut out = self.vec("tuple's fields", fields.len())?;
        for (index, field) in fields.iter().enumerate() {
            let value = self.nested(format_args!(".{index}"), |reader| reader.value(field))?;
            self.push("tuple's fields", &mut out, value)?;
            if self.ended {
                break;
            }
        }
        Ok(out)
    }

    /// A list's or set's length, which the bytes left must be able to hold.
    fn length(&mut self, item: &TypeLayout) -> Result<u64, StoredValueError> {
        let len = self.varint(64, "length")?;
        self.check_length(len, || can_be_empty(item))?;
        Ok(len as u64)
    }

    /// Refuses `len` items when they cannot fit in the bytes left, each taking at least one
    /// unless `may_be_empty`.
    fn check_length(
        &self,
        len: u128,
        may_be_empty: impl FnOnce() -> bool,
    ) -> Result<(), StoredValueError> {
        if len > self.left() as u128 && !may_be_empty() {
            return Err(StoredValueError::TooLong {
                path: self.path(),
                len,
                left: self.left(),
            });
        }
        Ok(())
    }

    fn items(&mut self, item: &TypeLayout, len: u64) -> Result<Vec<StoredValue>, StoredValueError> {
        let mut out = self.vec("items", capacity(len, self.left()))?;
        for index in 0..len {
            let value = self.nested(format_args!("[{index}]"), |reader| reader.value(item))?;
            self.push("items", &mut out, value)?;
            if self.ended {
                break;
            }
        }
        Ok(out)
    }

    fn map(
        &mut self,
        key: &TypeLayout,
        value: &TypeLayout,
    ) -> Result<StoredValue, StoredValueError> {
        let len = self.varint(64, "length")?;
        self.check_length(len, || can_be_empty(key) && can_be_empty(value))?;
        let mut out = self.vec("entries", capacity(len as u64, self.left()))?;
        for index in 0..len as u64 {
            let stored_key = self.nested(format_args!("{{key {index}}}"), |r| r.value(key))?;
            if self.ended {
                // The key took the rest of the bytes, the value's with them.
                let rest = StoredValue::Unreadable {
                    type_path: self.owned("type path", &root_name(value))?,
                    bytes: Vec::new(),
                };
                self.push("entries", &mut out, (stored_key, rest))?;
                break;
            }
            let stored_value = self.nested(format_args!("{{{index}}}"), |r| r.value(value))?;
            self.push("entries", &mut out, (stored_key, stored_value))?;
            if self.ended {
                break;
            }
        }
        Ok(StoredValue::Map(out))
    }

    fn enumeration(
        &mut self,
        type_path: &str,
        variants: &[Variant],
    ) -> Result<StoredValue, StoredValueError> {
        let index = self.varint(32, "variant index")? as u32;
        let Some(variant) = variants.get(index as usize) else {
            return Err(StoredValueError::VariantOutOfRange {
                path: self.path(),
                index,
                count: variants.len(),
            });
        };
        let fields = self.nested(format_args!("::{}", variant.name), |reader| {
            Ok(match &variant.fields {
                VariantFields::Unit => StoredFields::Unit,
                VariantFields::Tuple(fields) => StoredFields::Tuple(reader.positional(fields)?),
                VariantFields::Struct(fields) => StoredFields::Struct(reader.named(fields)?),
            })
        })?;
        Ok(StoredValue::Enum {
            type_path: self.owned("type path", type_path)?,
            variant: self.owned("variant name", &variant.name)?,
            fields,
        })
    }

    /// A value its type's serde code wrote: read by the reflected layout when that has no
    /// opaque part, since a serde derive writes the shape reflection sees.
    fn serde(
        &mut self,
        type_path: &str,
        reflected: &TypeLayout,
    ) -> Result<StoredValue, StoredValueError> {
        if readable(reflected) {
            let (pos, empty_left) = (self.input.position(), self.empty_left);
            match self.value(reflected) {
                Ok(value) => return Ok(value),
                // A hand-written serde impl (or renamed, skipped fields) writes another shape:
                // its bytes are then the type's own, not damage.
                Err(_) => {
                    self.input.set_position(pos);
                    self.empty_left = empty_left;
                }
            }
        }
        self.unreadable(type_path)
    }

    /// Bytes only `type_path` can read: the rest of the value, ending the reading.
    fn unreadable(&mut self, type_path: &str) -> Result<StoredValue, StoredValueError> {
        if self.skipping {
            return Err(StoredValueError::CannotSkip {
                path: self.path(),
                type_path: type_path.to_owned(),
            });
        }
        let rest = self.input.rest();
        self.charge("unreadable bytes", rest.len())?;
        let bytes = rest.to_vec();
        self.input.advance(rest.len());
        self.ended = true;
        Ok(StoredValue::Unreadable {
            type_path: self.owned("type path", type_path)?,
            bytes,
        })
    }

    /// A `bevy::asset::HandleReference`: variant 0 an asset path, variant 1 a uuid.
    fn handle(&mut self) -> Result<StoredValue, StoredValueError> {
        match self.varint(32, "asset handle kind")? {
            0 => Ok(StoredValue::AssetPath(self.string("asset path")?)),
            1 => {
                let bytes = self.bytes_with_len("asset uuid")?;
                let uuid =
                    <[u8; 16]>::try_from(bytes).map_err(|_| StoredValueError::UuidLength {
                        path: self.path(),
                        len: bytes.len(),
                    })?;
                Ok(StoredValue::AssetUuid(uuid))
            }
            index => Err(StoredValueError::HandleKind {
                path: self.path(),
                index: index as u32,
            }),
        }
    }

    fn leaf(&mut self, leaf: Leaf) -> Result<StoredValue, StoredValueError> {
        let what = leaf.name();
        Ok(match leaf {
            Leaf::Bool => StoredValue::Bool(self.primitive(what, ValueBytes::bool)?),
            Leaf::U8 => StoredValue::Unsigned(self.varint(8, what)?),
            Leaf::I8 => StoredValue::Signed(self.signed(8, what)?),
            Leaf::U16 => StoredValue::Unsigned(self.varint(16, what)?),
            Leaf::U32 => StoredValue::Unsigned(self.varint(32, what)?),
            Leaf::U64 | Leaf::Usize => StoredValue::Unsigned(self.varint(64, what)?),
            Leaf::U128 => StoredValue::Unsigned(self.varint(128, what)?),
            Leaf::I16 => StoredValue::Signed(self.signed(16, what)?),
            Leaf::I32 => StoredValue::Signed(self.signed(32, what)?),
            Leaf::I64 | Leaf::Isize => StoredValue::Signed(self.signed(64, what)?),
            Leaf::I128 => StoredValue::Signed(self.signed(128, what)?),
            Leaf::F32 => StoredValue::F32(self.f32()?),
            Leaf::F64 => StoredValue::F64(self.primitive(what, ValueBytes::f64)?),
            Leaf::Char => self.char()?,
            Leaf::String => StoredValue::String(self.string(what)?),
            Leaf::Entity => StoredValue::Entity(self.varint(64, "entity id")? as u64),
            Leaf::Vec2 => self.floats(2)?,
            Leaf::Vec3 | Leaf::Vec3A => self.floats(3)?,
            Leaf::Vec4 | Leaf::Quat => self.floats(4)?,
            Leaf::IVec2 => self.ints(2, true, what)?,
            Leaf::IVec3 => self.ints(3, true, what)?,
            Leaf::IVec4 => self.ints(4, true, what)?,
            Leaf::UVec2 => self.ints(2, false, what)?,
            Leaf::UVec3 => self.ints(3, false, what)?,
            Leaf::UVec4 => self.ints(4, false, what)?,
        })
    }

    /// A signed `bits`-bit number (zigzag varint; `i8` one raw byte).
    fn signed(&mut self, bits: u32, what: &'static str) -> Result<i128, StoredValueError> {
        self.primitive(what, |input| input.signed(bits))
    }

    /// A glam float vector's `lanes` components, little-endian `f32`s.
    fn floats(&mut self, lanes: usize) -> Result<StoredValue, StoredValueError> {
        let mut floats = self.vec("vector", lanes)?;
        for _ in 0..lanes {
            let float = self.f32()?;
            self.push("vector", &mut floats, float)?;
        }
        Ok(StoredValue::Floats(floats))
    }

    /// A glam integer vector's `lanes` components, 32-bit varints.
    fn ints(
        &mut self,
        lanes: usize,
        signed: bool,
        what: &'static str,
    ) -> Result<StoredValue, StoredValueError> {
        let mut ints = self.vec("vector", lanes)?;
        for _ in 0..lanes {
            let int = match signed {
                true => self.signed(32, what)?,
                false => self.varint(32, what)? as i128,
            };
            self.push("vector", &mut ints, int)?;
        }
        Ok(StoredValue::Ints(ints))
    }

    fn f32(&mut self) -> Result<f32, StoredValueError> {
        self.primitive("f32", ValueBytes::f32)
    }

    fn char(&mut self) -> Result<StoredValue, StoredValueError> {
        self.primitive("char", ValueBytes::char)
            .map(StoredValue::Char)
    }

    fn string(&mut self, what: &'static str) -> Result<String, StoredValueError> {
        let text = self.primitive(what, ValueBytes::str)?;
        self.owned(what, text)
    }

    fn bytes_with_len(&mut self, what: &'static str) -> Result<&'a [u8], StoredValueError> {
        self.primitive(what, ValueBytes::bytes_with_len)
    }

    /// An unsigned `bits`-bit number (varint; `u8` one raw byte).
    fn varint(&mut self, bits: u32, what: &'static str) -> Result<u128, StoredValueError> {
        self.primitive(what, |input| input.unsigned(bits))
    }

    /// A primitive read by `read` from the value's bytes, its error placed at the path.
    #[inline]
    fn primitive<T>(
        &mut self,
        what: &'static str,
        read: impl FnOnce(&mut ValueBytes<'a>) -> Result<T, ValueError>,
    ) -> Result<T, StoredValueError> {
        read(&mut self.input).map_err(|error| self.at(error, what))
    }

    /// `error`, met reading the `what` at the current path.
    fn at(&self, error: ValueError, what: &'static str) -> StoredValueError {
        let path = self.path();
        match error {
            ValueError::BadVarint { .. } => StoredValueError::BadVarint { path, what },
            ValueError::OutOfRange { bits } => StoredValueError::OutOfRange { path, what, bits },
            ValueError::InvalidBool(byte) => StoredValueError::InvalidBool { path, byte },
            ValueError::InvalidUtf8 => StoredValueError::InvalidUtf8 { path, what },
            ValueError::InvalidChar { len } => StoredValueError::InvalidChar { path, len },
            ValueError::TooLong { len, left } => StoredValueError::TooLong { path, len, left },
            // `ValueError` is non-exhaustive; every other error is bytes that end early.
            _ => StoredValueError::Truncated { path, what },
        }
    }
}

/// How many values of no bytes an input of `size` bytes may hold.
fn empty_budget(size: usize) -> usize {
    size.saturating_mul(EMPTY_VALUES_PER_BYTE)
        .saturating_add(EMPTY_VALUES_BASE)
}

/// Room for `len` items, no more than the bytes left could hold (items of no bytes grow the
/// list as they are read, against their budget).
fn capacity(len: u64, left: usize) -> usize {
    usize::try_from(len).map_or(left, |len| len.min(left))
}

/// Whether a value of `layout` may take no bytes, so a length of them is not bounded by the
/// bytes left. Bytes a type's own serde code writes may be none.
fn can_be_empty(layout: &TypeLayout) -> bool {
    match layout {
        TypeLayout::Struct { fields, .. } => fields.iter().all(|field| can_be_empty(&field.layout)),
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            fields.iter().all(can_be_empty)
        }
        TypeLayout::Array { item, len } => *len == 0 || can_be_empty(item),
        TypeLayout::Serde { .. } | TypeLayout::Opaque { .. } | TypeLayout::Deep { .. } => true,
        _ => false,
    }
}

/// Whether values of `layout` can be skipped (measured by [`skip`]): it has no part only its
/// type can read, opaque or too deep. A serde part counts when its reflected layout has none,
/// since its derive most likely writes that shape; a hand-written serde impl still fails
/// [`skip`] on its values. `schema::resolve` drops a removed field only when this holds.
pub fn can_skip(layout: &TypeLayout) -> bool {
    readable(layout)
}

/// Whether `layout` has no part only its type can read (opaque or too deep), so values of it
/// can be read here.
fn readable(layout: &TypeLayout) -> bool {
    match layout {
        TypeLayout::Opaque { .. } | TypeLayout::Deep { .. } => false,
        TypeLayout::Struct { fields, .. } => fields_readable(fields),
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            fields.iter().all(readable)
        }
        TypeLayout::List(item) | TypeLayout::Set(item) | TypeLayout::Array { item, .. } => {
            readable(item)
        }
        TypeLayout::Map { key, value } => readable(key) && readable(value),
        TypeLayout::Enum { variants, .. } => variants.iter().all(|variant| match &variant.fields {
            VariantFields::Unit => true,
            VariantFields::Tuple(fields) => fields.iter().all(readable),
            VariantFields::Struct(fields) => fields_readable(fields),
        }),
        TypeLayout::Serde { reflected, .. } => readable(reflected),
        TypeLayout::Leaf(_) | TypeLayout::Handle { .. } | TypeLayout::UntypedHandle => true,
    }
}

fn fields_readable(fields: &[Field]) -> bool {
    fields.iter().all(|field| readable(&field.layout))
}

/// RON-like text: `Stats(hp: 3, name: "Ann", state: Walking(1.5))`, `[1, 2]`, `{"a": 1}`,
/// `(1, true)`, `Entity(0x2a)`, `Handle("sprites/coin.png")`; struct names cut to their last
/// segment ([`short_name`]).
impl Display for StoredValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            StoredValue::Bool(value) => write!(f, "{value}"),
            StoredValue::Unsigned(value) => write!(f, "{value}"),
            StoredValue::Signed(value) => write!(f, "{value}"),
            StoredValue::F32(value) => write!(f, "{value:?}"),
            StoredValue::F64(value) => write!(f, "{value:?}"),
            StoredValue::Char(value) => write!(f, "{value:?}"),
            StoredValue::String(value) => write!(f, "{value:?}"),
            StoredValue::Entity(bits) => write!(f, "Entity({bits:#x})"),
            StoredValue::Floats(values) => sequence(f, "[", values.iter().map(Dbg), "]"),
            StoredValue::Ints(values) => sequence(f, "[", values, "]"),
            StoredValue::Struct { type_path, fields } => {
                f.write_str(&short_name(type_path))?;
                sequence(f, "(", fields.iter().map(NamedField), ")")
            }
            StoredValue::TupleStruct { type_path, fields } => {
                f.write_str(&short_name(type_path))?;
                sequence(f, "(", fields, ")")
            }
            StoredValue::Tuple(fields) if fields.len() == 1 => write!(f, "({},)", fields[0]),
            StoredValue::Tuple(fields) => sequence(f, "(", fields, ")"),
            StoredValue::List(items) | StoredValue::Array(items) | StoredValue::Set(items) => {
                sequence(f, "[", items, "]")
            }
            StoredValue::Map(entries) => sequence(f, "{", entries.iter().map(Entry), "}"),
            StoredValue::Enum {
                variant, fields, ..
            } => {
                f.write_str(variant)?;
                match fields {
                    StoredFields::Unit => Ok(()),
                    StoredFields::Tuple(fields) => sequence(f, "(", fields, ")"),
                    StoredFields::Struct(fields) => {
                        sequence(f, "(", fields.iter().map(NamedField), ")")
                    }
                }
            }
            StoredValue::AssetPath(_) | StoredValue::AssetUuid(_) => {
                write!(f, "Handle({})", Reference(self))
            }
            StoredValue::UntypedHandle { asset_type, handle } => {
                let asset = short_name(asset_type);
                write!(f, "UntypedHandle<{asset}>({})", Reference(handle))
            }
            StoredValue::Unreadable { type_path, bytes } => write!(
                f,
                "<{type_path}: {} bytes this build cannot read without the game>",
                bytes.len()
            ),
        }
    }
}

/// Writes `open`, the items separated by `, `, then `close`.
fn sequence<T: Display>(
    f: &mut Formatter<'_>,
    open: &str,
    items: impl IntoIterator<Item = T>,
    close: &str,
) -> fmt::Result {
    f.write_str(open)?;
    for (index, item) in items.into_iter().enumerate() {
        if index > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str(close)
}

/// Shows a value with its `Debug` text (floats keep their `.0`).
struct Dbg<T>(T);

impl<T: Debug> Display for Dbg<T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// `name: value`.
struct NamedField<'a>(&'a (String, StoredValue));

impl Display for NamedField<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.0, self.0.1)
    }
}

/// `key: value`.
struct Entry<'a>(&'a (StoredValue, StoredValue));

impl Display for Entry<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.0, self.0.1)
    }
}

/// A handle's reference: its asset path quoted, or its uuid.
struct Reference<'a>(&'a StoredValue);

impl Display for Reference<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            StoredValue::AssetPath(path) => write!(f, "{path:?}"),
            StoredValue::AssetUuid(bytes) => write!(f, "{}", uuid::Uuid::from_bytes(*bytes)),
            other => write!(f, "{other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::fixtures::*;
    use crate::wire::{put_varint_u128, zigzag_i128};

    /// Postcard bytes built by hand.
    #[derive(Default)]
    struct Bytes(Vec<u8>);

    impl Bytes {
        fn varint(mut self, value: u128) -> Self {
            put_varint_u128(&mut self.0, value);
            self
        }

        fn zigzag(self, value: i128) -> Self {
            self.varint(zigzag_i128(value))
        }

        fn raw(mut self, bytes: &[u8]) -> Self {
            self.0.extend_from_slice(bytes);
            self
        }

        fn text(self, text: &str) -> Self {
            self.varint(text.len() as u128).raw(text.as_bytes())
        }

        fn f32(self, value: f32) -> Self {
            self.raw(&value.to_le_bytes())
        }
    }

    fn bytes() -> Bytes {
        Bytes::default()
    }

    fn stats() -> TypeLayout {
        let item = TypeLayout::TupleStruct {
            type_path: "game::Item".into(),
            fields: vec![leaf(Leaf::U16)],
        };
        let tags = TypeLayout::Map {
            key: Box::new(leaf(Leaf::String)),
            value: Box::new(leaf(Leaf::I32)),
        };
        let coins = TypeLayout::Array {
            item: Box::new(leaf(Leaf::U8)),
            len: 2,
        };
        stats_with(vec![
            field("items", TypeLayout::List(Box::new(item))),
            field("tags", tags),
            field(
                "pair",
                TypeLayout::Tuple(vec![leaf(Leaf::U8), leaf(Leaf::Bool)]),
            ),
            field("spot", option(leaf(Leaf::Vec2))),
            field("owner", leaf(Leaf::Entity)),
            field("coins", coins),
        ])
    }

    /// A value of [`stats`], with the state's variant index given.
    fn stats_bytes(state: u128) -> Vec<u8> {
        let bytes = bytes().varint(3).text("Ann").varint(state).f32(1.5);
        let bytes = bytes.varint(2).varint(7).varint(300);
        let bytes = bytes.varint(1).text("a").zigzag(-1).raw(&[4, 1]);
        let bytes = bytes.varint(1).f32(1.0).f32(2.0).varint(42).raw(&[5, 6]);
        bytes.0
    }

    const STATS_TEXT: &str = "Stats(hp: 3, name: \"Ann\", state: Walking(1.5), \
        items: [Item(7), Item(300)], tags: {\"a\": -1}, pair: (4, true), spot: Some([1.0, 2.0]), \
        owner: Entity(0x2a), coins: [5, 6])";

    fn number_cases() -> Vec<(Leaf, Bytes, StoredValue)> {
        use StoredValue::{Signed, Unsigned};
        vec![
            (Leaf::Bool, bytes().raw(&[1]), StoredValue::Bool(true)),
            (Leaf::U8, bytes().raw(&[255]), Unsigned(255)),
            (Leaf::U16, bytes().varint(65_535), Unsigned(65_535)),
            (
                Leaf::U32,
                bytes().varint(u32::MAX.into()),
                Unsigned(u32::MAX.into()),
            ),
            (
                Leaf::U64,
                bytes().varint(u64::MAX.into()),
                Unsigned(u64::MAX.into()),
            ),
            (Leaf::U128, bytes().varint(u128::MAX), Unsigned(u128::MAX)),
            (Leaf::Usize, bytes().varint(300), Unsigned(300)),
            (Leaf::I8, bytes().raw(&[0xff]), Signed(-1)),
            (
                Leaf::I16,
                bytes().zigzag(i16::MIN.into()),
                Signed(i16::MIN.into()),
            ),
            (Leaf::I32, bytes().zigzag(-5), Signed(-5)),
            (
                Leaf::I64,
                bytes().zigzag(i64::MIN.into()),
                Signed(i64::MIN.into()),
            ),
            (Leaf::I128, bytes().zigzag(i128::MIN), Signed(i128::MIN)),
            (Leaf::Isize, bytes().zigzag(7), Signed(7)),
        ]
    }

    fn other_leaf_cases() -> Vec<(Leaf, Bytes, StoredValue)> {
        use StoredValue::Floats;
        vec![
            (Leaf::F32, bytes().f32(1.5), StoredValue::F32(1.5)),
            (
                Leaf::F64,
                bytes().raw(&(-2.25f64).to_le_bytes()),
                StoredValue::F64(-2.25),
            ),
            (Leaf::Char, bytes().text("é"), StoredValue::Char('é')),
            (
                Leaf::String,
                bytes().text("Ann"),
                StoredValue::String("Ann".into()),
            ),
            (
                Leaf::Entity,
                bytes().varint(1 << 40),
                StoredValue::Entity(1 << 40),
            ),
            (
                Leaf::Vec2,
                bytes().f32(1.0).f32(2.0),
                Floats(vec![1.0, 2.0]),
            ),
            (
                Leaf::Vec3,
                bytes().f32(1.0).f32(2.0).f32(3.0),
                Floats(vec![1.0, 2.0, 3.0]),
            ),
            (
                Leaf::Vec3A,
                bytes().f32(0.0).f32(0.5).f32(-1.0),
                Floats(vec![0.0, 0.5, -1.0]),
            ),
            (
                Leaf::Vec4,
                bytes().f32(1.0).f32(2.0).f32(3.0).f32(4.0),
                Floats(vec![1.0, 2.0, 3.0, 4.0]),
            ),
            (
                Leaf::Quat,
                bytes().f32(0.0).f32(0.0).f32(0.0).f32(1.0),
                Floats(vec![0.0, 0.0, 0.0, 1.0]),
            ),
        ]
    }

    fn int_vector_cases() -> Vec<(Leaf, Bytes, StoredValue)> {
        use StoredValue::Ints;
        vec![
            (
                Leaf::IVec2,
                bytes().zigzag(-1).zigzag(i32::MIN.into()),
                Ints(vec![-1, i32::MIN.into()]),
            ),
            (
                Leaf::IVec3,
                bytes().zigzag(1).zigzag(2).zigzag(-3),
                Ints(vec![1, 2, -3]),
            ),
            (
                Leaf::IVec4,
                bytes()
                    .zigzag(0)
                    .zigzag(0)
                    .zigzag(0)
                    .zigzag(i32::MAX.into()),
                Ints(vec![0, 0, 0, i32::MAX.into()]),
            ),
            (
                Leaf::UVec2,
                bytes().varint(u32::MAX.into()).varint(1),
                Ints(vec![u32::MAX.into(), 1]),
            ),
            (
                Leaf::UVec3,
                bytes().varint(1).varint(2).varint(3),
                Ints(vec![1, 2, 3]),
            ),
            (
                Leaf::UVec4,
                bytes().varint(4).varint(3).varint(2).varint(1),
                Ints(vec![4, 3, 2, 1]),
            ),
        ]
    }

    #[test]
    fn every_leaf_reads_as_postcard_writes_it() {
        let mut cases = number_cases();
        cases.extend(other_leaf_cases());
        cases.extend(int_vector_cases());
        for leaf_of_all in Leaf::ALL {
            assert!(
                cases.iter().any(|(leaf, ..)| *leaf == leaf_of_all),
                "{leaf_of_all:?}"
            );
        }
        for (leaf, bytes, expected) in cases {
            assert_eq!(
                read(&TypeLayout::Leaf(leaf), &bytes.0),
                Ok(expected),
                "{leaf:?}"
            );
        }
    }

    #[test]
    fn numbers_past_their_type_are_refused() {
        let error = read(&leaf(Leaf::U16), &bytes().varint(65_536).0).unwrap_err();
        assert!(
            matches!(error, StoredValueError::OutOfRange { bits: 16, .. }),
            "{error}"
        );
        // 19 bytes whose last one carries bits past 128.
        let mut too_big = vec![0xff; 18];
        too_big.push(0x04);
        let error = read(&leaf(Leaf::U128), &too_big).unwrap_err();
        assert!(
            matches!(error, StoredValueError::OutOfRange { bits: 128, .. }),
            "{error}"
        );
        let error = read(&leaf(Leaf::U32), &[0xff; 6]).unwrap_err();
        assert!(
            matches!(error, StoredValueError::BadVarint { .. }),
            "{error}"
        );
    }

    #[test]
    fn a_nested_value_reads_and_prints_as_ron() {
        let value = read(&stats(), &stats_bytes(1)).unwrap();
        assert_eq!(value.to_string(), STATS_TEXT);
        let StoredValue::Struct { type_path, fields } = &value else {
            panic!("{value:?}");
        };
        assert_eq!(type_path, "game::Stats");
        assert_eq!(fields[0], ("hp".into(), StoredValue::Unsigned(3)));
        let jumping = read(&state(), &bytes().varint(2).f32(0.5).0).unwrap();
        assert_eq!(jumping.to_string(), "Jumping(height: 0.5)");
        assert_eq!(read(&state(), &[0]).unwrap().to_string(), "Idle");
    }

    #[test]
    fn every_cut_of_a_value_is_an_error() {
        let bytes = stats_bytes(1);
        for len in 0..bytes.len() {
            assert!(read(&stats(), &bytes[..len]).is_err(), "cut at {len}");
            assert!(
                read_prefix(&stats(), &bytes[..len]).is_err(),
                "cut at {len}"
            );
        }
    }

    #[test]
    fn errors_name_the_path_to_the_part() {
        let bytes = stats_bytes(1);
        // Cut inside the second item.
        let error = read(&stats(), &bytes[..13]).unwrap_err();
        let StoredValueError::Truncated { path, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!(path, "game::Stats.items[1].0");
        let error = read(&stats(), &stats_bytes(5)).unwrap_err();
        assert_eq!(
            error,
            StoredValueError::VariantOutOfRange {
                path: "game::Stats.state".into(),
                index: 5,
                count: 3,
            }
        );
        assert!(
            error
                .to_string()
                .starts_with("game::Stats.state: variant index 5"),
            "{error}"
        );
    }

    #[test]
    fn bytes_left_over_are_counted_and_read_prefix_measures() {
        let mut bytes = stats_bytes(1);
        let len = bytes.len();
        bytes.extend_from_slice(&[9, 9]);
        let error = read(&stats(), &bytes).unwrap_err();
        assert_eq!(
            error,
            StoredValueError::LeftOver {
                path: "game::Stats".into(),
                count: 2,
            }
        );
        let (value, used) = read_prefix(&stats(), &bytes).unwrap();
        assert_eq!(used, len);
        assert_eq!(value.to_string(), STATS_TEXT);
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let list = TypeLayout::List(Box::new(leaf(Leaf::U32)));
        let error = read(&list, &bytes().varint(u64::MAX.into()).varint(1).0).unwrap_err();
        assert!(
            matches!(error, StoredValueError::TooLong { left: 1, .. }),
            "{error}"
        );
        let array = TypeLayout::Array {
            item: Box::new(leaf(Leaf::U8)),
            len: u64::MAX,
        };
        let error = read(&array, &[1, 2]).unwrap_err();
        assert!(matches!(error, StoredValueError::TooLong { .. }), "{error}");
        let text = read(&leaf(Leaf::String), &bytes().varint(u64::MAX.into()).0).unwrap_err();
        assert!(matches!(text, StoredValueError::Truncated { .. }), "{text}");
    }

    #[test]
    fn values_of_no_bytes_are_bounded_by_a_budget() {
        let units = TypeLayout::List(Box::new(TypeLayout::Tuple(vec![])));
        let error = read(&units, &bytes().varint(u64::MAX.into()).0).unwrap_err();
        assert!(
            matches!(error, StoredValueError::TooManyEmpty { .. }),
            "{error}"
        );
        let array = TypeLayout::Array {
            item: Box::new(TypeLayout::Tuple(vec![])),
            len: u64::MAX,
        };
        assert!(matches!(
            read(&array, &[]),
            Err(StoredValueError::TooManyEmpty { .. })
        ));
        // A few are fine, though more than the bytes left.
        let value = read(&units, &[3]).unwrap();
        assert_eq!(value.to_string(), "[(), (), ()]");
    }

    #[test]
    fn invalid_bools_text_and_chars_are_refused() {
        let error = read(&leaf(Leaf::Bool), &[2]).unwrap_err();
        assert!(
            matches!(error, StoredValueError::InvalidBool { byte: 2, .. }),
            "{error}"
        );
        let error = read(&leaf(Leaf::String), &[2, 0xc3, 0x28]).unwrap_err();
        assert!(
            matches!(error, StoredValueError::InvalidUtf8 { .. }),
            "{error}"
        );
        let error = read(&leaf(Leaf::Char), &bytes().text("ab").0).unwrap_err();
        assert!(
            matches!(error, StoredValueError::InvalidChar { len: 2, .. }),
            "{error}"
        );
        assert!(read(&leaf(Leaf::Char), &[0]).is_err());
    }

    fn look() -> TypeLayout {
        TypeLayout::Struct {
            type_path: "game::Look".into(),
            fields: vec![
                field("a", leaf(Leaf::U8)),
                field(
                    "color",
                    TypeLayout::Opaque {
                        type_path: "bevy_color::Color".into(),
                    },
                ),
                field("b", leaf(Leaf::U8)),
            ],
        }
    }

    #[test]
    fn an_unreadable_part_takes_the_rest_and_ends_the_reading() {
        let value = read(&look(), &[1, 9, 9, 9]).unwrap();
        let expected = StoredValue::Struct {
            type_path: "game::Look".into(),
            fields: vec![
                ("a".into(), StoredValue::Unsigned(1)),
                (
                    "color".into(),
                    StoredValue::Unreadable {
                        type_path: "bevy_color::Color".into(),
                        bytes: vec![9, 9, 9],
                    },
                ),
            ],
        };
        assert_eq!(value, expected);
        assert_eq!(
            value.to_string(),
            "Look(a: 1, color: <bevy_color::Color: 3 bytes this build cannot read without the game>)"
        );
        let error = read_prefix(&look(), &[1, 9, 9, 9]).unwrap_err();
        assert_eq!(
            error,
            StoredValueError::CannotSkip {
                path: "game::Look.color".into(),
                type_path: "bevy_color::Color".into(),
            }
        );
        let list = TypeLayout::List(Box::new(look()));
        // The first item's `color` takes the rest: no other item is read.
        let value = read(&list, &[3, 1, 9, 2, 9, 9]).unwrap();
        let text = "[Look(a: 1, color: <bevy_color::Color: 4 bytes this build cannot read \
            without the game>)]";
        assert_eq!(value.to_string(), text);
    }

    #[test]
    fn serde_values_are_read_by_their_reflected_layout_when_they_can_be() {
        let tint = TypeLayout::Struct {
            type_path: "game::Tint".into(),
            fields: vec![field("r", leaf(Leaf::F32))],
        };
        let serde = |reflected: TypeLayout| TypeLayout::Serde {
            type_path: "game::Tint".into(),
            reflected: Box::new(reflected),
        };
        let value = read(&serde(tint), &bytes().f32(0.5).0).unwrap();
        assert_eq!(value.to_string(), "Tint(r: 0.5)");
        let opaque = serde(TypeLayout::Opaque {
            type_path: "game::Raw".into(),
        });
        let value = read(&opaque, &[1, 2]).unwrap();
        assert_eq!(
            value,
            StoredValue::Unreadable {
                type_path: "game::Tint".into(),
                bytes: vec![1, 2],
            }
        );
        // Bytes the reflected shape cannot read are the type's own, not damage.
        let value = read(&serde(leaf(Leaf::Bool)), &[7]).unwrap();
        assert!(matches!(value, StoredValue::Unreadable { ref bytes, .. } if bytes == &[7]));
        assert!(matches!(
            read_prefix(&serde(leaf(Leaf::Bool)), &[7]),
            Err(StoredValueError::CannotSkip { .. })
        ));
    }

    #[test]
    fn handles_read_by_path_or_uuid() {
        let handle = TypeLayout::Handle {
            asset_type: "bevy_image::image::Image".into(),
        };
        let value = read(&handle, &bytes().varint(0).text("sprites/coin.png").0).unwrap();
        assert_eq!(value, StoredValue::AssetPath("sprites/coin.png".into()));
        assert_eq!(value.to_string(), "Handle(\"sprites/coin.png\")");
        let uuid: Vec<u8> = (1..=16).collect();
        let value = read(&handle, &bytes().varint(1).varint(16).raw(&uuid).0).unwrap();
        assert_eq!(
            value.to_string(),
            "Handle(01020304-0506-0708-090a-0b0c0d0e0f10)"
        );
        let short_uuid = bytes().varint(1).varint(15).raw(&uuid[..15]).0;
        assert!(matches!(
            read(&handle, &short_uuid),
            Err(StoredValueError::UuidLength { len: 15, .. })
        ));
        assert!(matches!(
            read(&handle, &[2]),
            Err(StoredValueError::HandleKind { index: 2, .. })
        ));
        let untyped = bytes()
            .text("bevy_image::image::Image")
            .varint(0)
            .text("a.png");
        let value = read(&TypeLayout::UntypedHandle, &untyped.0).unwrap();
        assert_eq!(value.to_string(), "UntypedHandle<Image>(\"a.png\")");
    }

    #[test]
    fn small_shapes_print_as_ron() {
        let one = TypeLayout::Tuple(vec![leaf(Leaf::Char)]);
        assert_eq!(
            read(&one, &bytes().text("x").0).unwrap().to_string(),
            "('x',)"
        );
        let set = TypeLayout::Set(Box::new(leaf(Leaf::I8)));
        assert_eq!(read(&set, &[2, 0xfe, 3]).unwrap().to_string(), "[-2, 3]");
        let vec3 = leaf(Leaf::Vec3);
        let value = read(&vec3, &bytes().f32(1.0).f32(0.0).f32(-0.5).0).unwrap();
        assert_eq!(value.to_string(), "[1.0, 0.0, -0.5]");
    }
}
