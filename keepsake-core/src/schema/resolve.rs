//! The one rule for "values of this stored layout can be read as today's type", engine-free:
//! a load asks it before reading a column whose layout changed (and only translates its answer
//! onto today's reflected types), and the compatibility guard asks it for its verdict, so the
//! two decide alike on everything a layout says. What a layout does not say, the guard cannot
//! know: whether a field added since has a default (a load without one refuses the value), and
//! whether a type is in the game's type registry. `check_kept_saves` decodes the kept saves
//! with the game's types for those.
//!
//! [`resolve`] compares a stored layout with today's once and returns how each part of a
//! stored value is [`Read`], or the first part that cannot be ([`Incompatible`]). In order:
//!
//! 1. a part that [`reads_as_is`] is read as today's type reads it;
//! 2. a column written by its own serde code (on either side) reads only as is: its bytes are
//!    the type's own; below the column, stored serde bytes read only as is, and a part stored
//!    by structure that today's type writes with serde is read by its reflected structure
//!    (loads build it from dynamic values, not from serde);
//! 3. a leaf reads as a leaf it [widens to](Leaf::widens_to);
//! 4. a value today wrapped in an `Option` reads as `Some` of what it resolves to;
//! 5. parts of one shape resolve part by part: struct fields by name (a stored field today's
//!    type lacks is dropped, if it can be skipped: see [`stored::can_skip`]; a field the save
//!    lacks is listed as missing, to take its default), tuple-struct fields by position (the
//!    same, past the shorter), anonymous tuples only of the same arity, arrays only of the same
//!    length, lists, sets and maps by their items, enum variants by name (a variant of no
//!    fields reads as today's variant of no fields, whatever its kind, as [`reads_as_is`]
//!    has it; a stored variant today's enum lacks is listed as lost: its values do not read);
//! 6. anything else (another shape, an opaque part that changed, a narrowed leaf) is
//!    [`Incompatible`].

use super::stored;
use super::text::{described, pretty, root_name, short};
use super::{Field, Leaf, TypeLayout, UNKNOWN_ASSET, Variant, VariantFields};

/// A part of a stored layout that today's type cannot read: where, and the two layouts there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incompatible {
    /// Where, from the column's type: `game::Stats.hp`.
    pub path: String,
    /// What the save holds there.
    pub stored: String,
    /// What the type has there today.
    pub today: String,
}

/// A stored layout resolved against today's: how to read its values, and what they lose or
/// lack on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolution {
    /// How the root is read.
    pub read: Read,
    /// Stored fields today's type no longer has, read and dropped (`game::Bag.note`).
    pub dropped: Vec<String>,
    /// Today's fields the save lacks, which take their default (`game::Bag.size`).
    pub missing: Vec<String>,
    /// Stored variants today's enum lacks (`game::Mode::Old`): values in them do not read.
    pub lost_variants: Vec<String>,
}

/// How one part of a stored value is read as today's.
#[derive(Clone, Debug, PartialEq)]
pub enum Read {
    /// Byte for byte as today's type reads it.
    AsIs,
    /// A leaf read as a wider one.
    Widen {
        /// The stored leaf.
        from: Leaf,
        /// Today's.
        to: Leaf,
    },
    /// A struct's stored fields, by name.
    Struct(NamedRead),
    /// A tuple struct's stored fields, by position.
    TupleStruct(Vec<FieldRead>),
    /// An anonymous tuple's fields (same arity).
    Tuple(Vec<Read>),
    /// A list's items.
    List(Box<Read>),
    /// An array's items (same length).
    Array(Box<Read>),
    /// A set's items.
    Set(Box<Read>),
    /// A map's keys and values.
    Map {
        /// How keys read.
        key: Box<Read>,
        /// How values read.
        value: Box<Read>,
    },
    /// An enum, by stored variant index.
    Enum(Vec<VariantRead>),
    /// A value read, then made `Some` of today's `Option`.
    WrapSome(Box<Read>),
}

/// Stored named fields, in stored order.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedRead {
    /// Each stored field by its name, kept (today's field of that name) or dropped.
    pub fields: Vec<(String, FieldRead)>,
    /// Today's fields the save lacks, by name.
    pub missing: Vec<String>,
}

/// One stored field.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldRead {
    /// Read into today's field (of the same name, or at the same position).
    Keep(Read),
    /// Read past and dropped: today's type no longer has it.
    Drop(TypeLayout),
}

/// One stored variant.
#[derive(Clone, Debug, PartialEq)]
pub enum VariantRead {
    /// Today's variant of the same name.
    Kept {
        /// The variant's name.
        name: String,
        /// How its fields read.
        fields: VariantFieldsRead,
    },
    /// A variant today's enum lacks.
    Lost(String),
}

/// How a kept variant's stored fields read.
#[derive(Clone, Debug, PartialEq)]
pub enum VariantFieldsRead {
    /// No fields on either side (of whatever kind today's variant is).
    Empty,
    /// Tuple fields, by position.
    Tuple(Vec<FieldRead>),
    /// Struct fields, by name.
    Struct(NamedRead),
}

/// Resolves `stored` against `today`, paths starting at today's root name.
pub fn resolve(stored: &TypeLayout, today: &TypeLayout) -> Result<Resolution, Incompatible> {
    resolve_at(&root_name(today), stored, today)
}

/// Resolves `stored` against `today`, paths starting at `root` (a column's type path).
pub fn resolve_at(
    root: &str,
    stored: &TypeLayout,
    today: &TypeLayout,
) -> Result<Resolution, Incompatible> {
    let serde = |layout: &TypeLayout| matches!(layout, TypeLayout::Serde { .. });
    if (serde(stored) || serde(today)) && !reads_as_is(stored, today) {
        // A column's serde bytes are the type's own: only a layout that reads them as is does.
        return Err(Incompatible {
            path: root.to_owned(),
            stored: encoded_as(stored),
            today: encoded_as(today),
        });
    }
    let mut rule = Rule {
        path: root.to_owned(),
        dropped: Vec::new(),
        missing: Vec::new(),
        lost_variants: Vec::new(),
    };
    let read = rule.read(stored, today)?;
    Ok(Resolution {
        read,
        dropped: rule.dropped,
        missing: rule.missing,
        lost_variants: rule.lost_variants,
    })
}

/// Whether a part `stored` below a column's root (at `path`) resolves to `today`: the rule
/// without its first step, which is the column's alone.
pub(crate) fn resolves_within(path: &str, stored: &TypeLayout, today: &TypeLayout) -> bool {
    let mut rule = Rule {
        path: path.to_owned(),
        dropped: Vec::new(),
        missing: Vec::new(),
        lost_variants: Vec::new(),
    };
    rule.read(stored, today).is_ok()
}

/// Whether values written with `stored` read as `today` byte for byte: the layouts are equal
/// but for enums that gained variants after their last stored one. A value names its variant
/// by index, and the stored indices still name the same variants, so this is the one change a
/// type written by its own serde code survives (Bevy 0.20's `Color` gained three); the fast
/// reader takes it too.
pub fn reads_as_is(stored: &TypeLayout, today: &TypeLayout) -> bool {
    use TypeLayout as L;
    match (stored, today) {
        (
            L::Struct { type_path, fields },
            L::Struct {
                type_path: p,
                fields: f,
            },
        ) => type_path == p && fields_read_as_is(fields, f),
        (
            L::TupleStruct { type_path, fields },
            L::TupleStruct {
                type_path: p,
                fields: f,
            },
        ) => type_path == p && all_read_as_is(fields, f),
        (L::Tuple(fields), L::Tuple(f)) => all_read_as_is(fields, f),
        (L::List(item), L::List(i)) | (L::Set(item), L::Set(i)) => reads_as_is(item, i),
        (L::Array { item, len }, L::Array { item: i, len: l }) => len == l && reads_as_is(item, i),
        (L::Map { key, value }, L::Map { key: k, value: v }) => {
            reads_as_is(key, k) && reads_as_is(value, v)
        }
        (
            L::Enum {
                type_path,
                variants,
            },
            L::Enum {
                type_path: p,
                variants: v,
            },
        ) => {
            type_path == p
                && variants.len() <= v.len()
                && variants.iter().zip(v).all(|(old, new)| {
                    old.name == new.name && variant_reads_as_is(&old.fields, &new.fields)
                })
        }
        (
            L::Serde {
                type_path,
                reflected,
            },
            L::Serde {
                type_path: p,
                reflected: r,
            },
        ) => type_path == p && reads_as_is(reflected, r),
        // Saves made before handles named an unregistered asset type wrote `?`.
        (L::Handle { asset_type }, L::Handle { .. }) if asset_type == UNKNOWN_ASSET => true,
        _ => stored == today,
    }
}

fn all_read_as_is(stored: &[TypeLayout], today: &[TypeLayout]) -> bool {
    stored.len() == today.len() && stored.iter().zip(today).all(|(s, t)| reads_as_is(s, t))
}

fn fields_read_as_is(stored: &[Field], today: &[Field]) -> bool {
    stored.len() == today.len()
        && stored
            .iter()
            .zip(today)
            .all(|(s, t)| s.name == t.name && reads_as_is(&s.layout, &t.layout))
}

fn variant_reads_as_is(stored: &VariantFields, today: &VariantFields) -> bool {
    match (stored, today) {
        (VariantFields::Unit, VariantFields::Unit) => true,
        (VariantFields::Tuple(s), VariantFields::Tuple(t)) => all_read_as_is(s, t),
        (VariantFields::Struct(s), VariantFields::Struct(t)) => fields_read_as_is(s, t),
        // A variant of no fields is written as its index alone, whatever its kind.
        _ => field_count(stored) == 0 && field_count(today) == 0,
    }
}

/// How many fields a variant has.
pub(crate) fn field_count(fields: &VariantFields) -> usize {
    match fields {
        VariantFields::Unit => 0,
        VariantFields::Tuple(fields) => fields.len(),
        VariantFields::Struct(fields) => fields.len(),
    }
}

/// A column's whole layout on one line, saying whether serde wrote it: `serde bytes of struct
/// game::Glow { radius: f32, level: u32 }`.
fn encoded_as(layout: &TypeLayout) -> String {
    let (encoding, shape) = match layout {
        TypeLayout::Serde { reflected, .. } => ("serde bytes of", &**reflected),
        other => ("reflected", other),
    };
    let text = pretty(shape);
    format!(
        "{encoding} {}",
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// The walk of both layouts, with the path to the current part and what it collects.
struct Rule {
    path: String,
    dropped: Vec<String>,
    missing: Vec<String>,
    lost_variants: Vec<String>,
}

impl Rule {
    fn at(&self, segment: std::fmt::Arguments<'_>) -> String {
        format!("{}{segment}", self.path)
    }

    /// Runs `read` with `segment` appended to the path.
    fn nested<T>(
        &mut self,
        segment: &str,
        read: impl FnOnce(&mut Self) -> Result<T, Incompatible>,
    ) -> Result<T, Incompatible> {
        let mark = self.path.len();
        self.path.push_str(segment);
        let result = read(self);
        self.path.truncate(mark);
        result
    }

    fn incompatible(&self, stored: &TypeLayout, today: &TypeLayout) -> Incompatible {
        let (stored, today) = match (short(stored), short(today)) {
            // One path, another shape (a tuple struct made a struct): say which shapes.
            (s, t) if s == t => (described(stored), described(today)),
            spelled => spelled,
        };
        Incompatible {
            path: self.path.clone(),
            stored,
            today,
        }
    }

    fn read(&mut self, stored: &TypeLayout, today: &TypeLayout) -> Result<Read, Incompatible> {
        if reads_as_is(stored, today) {
            return Ok(Read::AsIs);
        }
        match (stored, today) {
            (TypeLayout::Leaf(from), TypeLayout::Leaf(to)) if from.widens_to(*to) => {
                Ok(Read::Widen {
                    from: *from,
                    to: *to,
                })
            }
            (TypeLayout::Leaf(_), TypeLayout::Leaf(_)) => Err(self.incompatible(stored, today)),
            _ if stored.option_item().is_none() && today.option_item().is_some() => {
                let item = today.option_item().expect("checked");
                Ok(Read::WrapSome(Box::new(self.read(stored, item)?)))
            }
            // Read by its structure into dynamic values, never by its serde code (so not
            // `AsIs`, even when the structure is the stored one).
            (stored, TypeLayout::Serde { reflected, .. })
                if !matches!(stored, TypeLayout::Serde { .. }) =>
            {
                self.shape(stored, reflected)
            }
            _ => self.shape(stored, today),
        }
    }

    /// Two layouts of one shape, part by part.
    fn shape(&mut self, stored: &TypeLayout, today: &TypeLayout) -> Result<Read, Incompatible> {
        use TypeLayout as L;
        Ok(match (stored, today) {
            (L::Struct { fields, .. }, L::Struct { fields: now, .. }) => {
                Read::Struct(self.named(fields, now)?)
            }
            (L::TupleStruct { fields, .. }, L::TupleStruct { fields: now, .. }) => {
                Read::TupleStruct(self.positional(fields, now)?)
            }
            (L::Tuple(fields), L::Tuple(now)) if fields.len() == now.len() => Read::Tuple(
                (fields.iter().zip(now).enumerate())
                    .map(|(index, (s, t))| self.nested(&format!(".{index}"), |r| r.read(s, t)))
                    .collect::<Result<_, _>>()?,
            ),
            (L::List(item), L::List(now)) => Read::List(self.item("[]", item, now)?),
            (L::Set(item), L::Set(now)) => Read::Set(self.item("[]", item, now)?),
            (L::Array { item, len }, L::Array { item: now, len: l }) if len == l => {
                Read::Array(self.item("[]", item, now)?)
            }
            (L::Map { key, value }, L::Map { key: k, value: v }) => Read::Map {
                key: self.item("{key}", key, k)?,
                value: self.item("{}", value, v)?,
            },
            (L::Enum { variants, .. }, L::Enum { variants: now, .. }) => {
                Read::Enum(self.variants(variants, now)?)
            }
            _ => return Err(self.incompatible(stored, today)),
        })
    }

    fn item(
        &mut self,
        segment: &str,
        stored: &TypeLayout,
        today: &TypeLayout,
    ) -> Result<Box<Read>, Incompatible> {
        self.nested(segment, |rule| rule.read(stored, today))
            .map(Box::new)
    }

    /// A stored field today's type lacks: dropped when its end can be found.
    fn drop(&mut self, layout: &TypeLayout) -> Result<FieldRead, Incompatible> {
        if !stored::can_skip(layout) {
            return Err(Incompatible {
                path: self.path.clone(),
                stored: short(layout),
                today: "gone (a removed field written by its own serde code: where it ends is \
                        unknown, so it cannot be skipped)"
                    .to_owned(),
            });
        }
        self.dropped.push(self.path.clone());
        Ok(FieldRead::Drop(layout.clone()))
    }

    /// Fields matched by name.
    fn named(&mut self, stored: &[Field], today: &[Field]) -> Result<NamedRead, Incompatible> {
        let mut fields = Vec::with_capacity(stored.len());
        for field in stored {
            let now = today.iter().find(|now| now.name == field.name);
            let read = self.nested(&format!(".{}", field.name), |rule| match now {
                Some(now) => rule.read(&field.layout, &now.layout).map(FieldRead::Keep),
                None => rule.drop(&field.layout),
            })?;
            fields.push((field.name.clone(), read));
        }
        let mut missing = Vec::new();
        for now in today {
            if !stored.iter().any(|field| field.name == now.name) {
                self.missing.push(self.at(format_args!(".{}", now.name)));
                missing.push(now.name.clone());
            }
        }
        Ok(NamedRead { fields, missing })
    }

    /// Fields matched by position: stored ones past today's are dropped, today's past the
    /// stored ones are missing.
    fn positional(
        &mut self,
        stored: &[TypeLayout],
        today: &[TypeLayout],
    ) -> Result<Vec<FieldRead>, Incompatible> {
        let mut fields = Vec::with_capacity(stored.len());
        for (index, field) in stored.iter().enumerate() {
            fields.push(
                self.nested(&format!(".{index}"), |rule| match today.get(index) {
                    Some(now) => rule.read(field, now).map(FieldRead::Keep),
                    None => rule.drop(field),
                })?,
            );
        }
        for index in stored.len()..today.len() {
            self.missing.push(self.at(format_args!(".{index}")));
        }
        Ok(fields)
    }

    /// Variants matched by name.
    fn variants(
        &mut self,
        stored: &[Variant],
        today: &[Variant],
    ) -> Result<Vec<VariantRead>, Incompatible> {
        let mut variants = Vec::with_capacity(stored.len());
        for variant in stored {
            let segment = format!("::{}", variant.name);
            let Some(now) = today.iter().find(|now| now.name == variant.name) else {
                self.lost_variants.push(self.at(format_args!("{segment}")));
                variants.push(VariantRead::Lost(variant.name.clone()));
                continue;
            };
            let fields = self.nested(&segment, |rule| {
                rule.variant_fields(&variant.fields, &now.fields)
            })?;
            variants.push(VariantRead::Kept {
                name: variant.name.clone(),
                fields,
            });
        }
        Ok(variants)
    }

    fn variant_fields(
        &mut self,
        stored: &VariantFields,
        today: &VariantFields,
    ) -> Result<VariantFieldsRead, Incompatible> {
        match (stored, today) {
            // A variant of no fields is written as its index alone, whatever its kind.
            _ if field_count(stored) == 0 && field_count(today) == 0 => {
                Ok(VariantFieldsRead::Empty)
            }
            (VariantFields::Tuple(fields), VariantFields::Tuple(now)) => {
                self.positional(fields, now).map(VariantFieldsRead::Tuple)
            }
            (VariantFields::Struct(fields), VariantFields::Struct(now)) => {
                self.named(fields, now).map(VariantFieldsRead::Struct)
            }
            _ => Err(Incompatible {
                path: self.path.clone(),
                stored: variant_kind(stored).to_owned(),
                today: variant_kind(today).to_owned(),
            }),
        }
    }
}

fn variant_kind(fields: &VariantFields) -> &'static str {
    match fields {
        VariantFields::Unit => "a unit variant",
        VariantFields::Tuple(_) => "a tuple variant",
        VariantFields::Struct(_) => "a struct variant",
    }
}
