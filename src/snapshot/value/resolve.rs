//! Reading values written with another layout of their type: the stored layout (from the save)
//! resolved by name against today's type, the way Avro resolves a writer's schema against a
//! reader's.
//!
//! [`Resolution::new`] asks the one rule, `schema::resolve` (which the compatibility guard asks
//! too), once per column, and translates its answer onto today's `TypeInfo` as a [`Step`]
//! tree: registration lookups, field and variant indices by name, unsaved fields, type
//! defaults. What the rule refuses (a field whose type changed, a serde type whose layout
//! changed, a different shape) is refused before any value is read; the only refusal of the
//! translation is a type missing from the type registry. [`Resolution::read`] then reads each
//! value by the stored layout into dynamic values shaped like today's type, which `FromReflect`
//! turns into it:
//!
//! - struct fields are matched by name, so their order does not matter; a field the save has
//!   and the type lost is read and dropped (and listed, see [`Resolution::dropped`]); a field the
//!   type has and the save lacks is left out, so `FromReflect` gives it its default
//!   (`#[reflect(default)]` on the field, or the type's `#[reflect(Default)]`), else the default
//!   of the field's type (`ReflectDefault`); with none, the value is refused naming the field.
//!   A removed field written by its own serde code with an opaque part cannot be skipped (where
//!   it ends is unknown): the column is refused before reading;
//! - enum variants are matched by name (a variant of no fields reads as today's of no fields,
//!   whatever their kinds); a value in a variant the type lost is refused;
//! - a leaf may widen (`u8` → `u32`, `u32` → `i64`, `f32` → `f64`), and a value may become
//!   `Some` of an `Option` it is now wrapped in;
//! - a part of the value whose layout did not change is read by Bevy's reflection
//!   deserializer (with the entity and handle processors), as the column would be without a
//!   change.
//!
//! This is slower than the reflection plan (dynamic values for every value), and only columns
//! whose layout changed take it.

use super::assets::{HandleLoader, contains_handles};
use super::layout_of::leaf_of;
use super::ops::TypeOps;
use super::plan::{Named, NewValue, read_leaf};
use crate::snapshot::schema::bytes::ValueBytes;
use crate::snapshot::schema::resolve::{
    self as rule, FieldRead, NamedRead, Read, VariantFieldsRead, resolve_at,
};
use crate::snapshot::schema::{Leaf, TypeLayout, stored};
use bevy::prelude::*;
use bevy::reflect::array::DynamicArray;
use bevy::reflect::enums::{DynamicEnum, DynamicVariant, VariantInfo};
use bevy::reflect::list::DynamicList;
use bevy::reflect::map::{DynamicMap, Map};
use bevy::reflect::serde::SerializationData;
use bevy::reflect::set::{DynamicSet, Set};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::structs::DynamicStruct;
use bevy::reflect::tuple::DynamicTuple;
use bevy::reflect::tuple_struct::DynamicTupleStruct;
use bevy::reflect::{PartialReflect, TypeInfo, TypeRegistration, TypeRegistry};
use std::any::TypeId;
use std::cell::Cell;

pub(crate) use crate::snapshot::schema::resolve::Incompatible;

/// How one part of a stored value is read into today's type.
enum Step<'a> {
    /// A leaf, widened when today's is wider.
    Leaf {
        stored: Leaf,
        today: Leaf,
    },
    /// Unchanged: Bevy's reflection deserializer reads it as today's type.
    Same {
        registration: &'a TypeRegistration,
        handles: bool,
    },
    Struct(StructStep<'a>),
    TupleStruct {
        info: &'static TypeInfo,
        fields: Box<[FieldStep<'a>]>,
        /// Today's fields left out of every save (`#[reflect(skip_serializing)]`), by index,
        /// with the serialization data that makes their defaults: each takes its place among
        /// the read ones, so the fields after it keep their positions.
        unsaved: Option<(Box<[usize]>, &'a SerializationData)>,
    },
    Tuple {
        info: &'static TypeInfo,
        fields: Box<[Step<'a>]>,
    },
    List {
        info: &'static TypeInfo,
        item: Box<Step<'a>>,
    },
    Array {
        info: &'static TypeInfo,
        item: Box<Step<'a>>,
        len: usize,
    },
    Set {
        info: &'static TypeInfo,
        item: Box<Step<'a>>,
    },
    Map {
        info: &'static TypeInfo,
        key: Box<Step<'a>>,
        value: Box<Step<'a>>,
    },
    /// By stored variant index: today's variant, or `None` for a variant the type lost.
    Enum {
        info: &'static TypeInfo,
        variants: Box<[VariantStep<'a>]>,
    },
    /// A value today wrapped in an `Option`: read, then made `Some`.
    WrapSome {
        info: &'static TypeInfo,
        inner: Box<Step<'a>>,
    },
}

/// A stored field: read into today's field (by name), or read and dropped.
enum FieldStep<'a> {
    Keep { name: &'static str, step: Step<'a> },
    Drop(TypeLayout),
}

/// A struct (or a struct variant's fields): the stored fields in stored order, and what
/// today's fields the save lacks get.
struct StructStep<'a> {
    info: Option<&'static TypeInfo>,
    fields: Box<[FieldStep<'a>]>,
    /// Today's fields left out of every save (`#[reflect(skip_serializing)]`): their defaults
    /// from the type's serialization data, by field index.
    unsaved: Box<[(&'static str, usize)]>,
    serialization: Option<&'a SerializationData>,
    /// Fields the save lacks whose type has `ReflectDefault`: filled when `FromReflect` alone
    /// finds no default for them.
    type_defaults: Box<[(&'static str, &'a ReflectDefault)]>,
}

/// One stored variant of an enum.
enum VariantStep<'a> {
    Kept {
        index: usize,
        name: &'static str,
        fields: VariantRead<'a>,
    },
    Lost(String),
}

enum VariantRead<'a> {
    Unit,
    Tuple(Box<[FieldStep<'a>]>),
    Struct(StructStep<'a>),
}

/// A column's stored layout, resolved against today's type.
pub(crate) struct Resolution<'a> {
    root: Step<'a>,
    ops: TypeOps,
    registry: &'a TypeRegistry,
    loader: &'a HandleLoader<'a>,
    dropped: Vec<String>,
    missing: Vec<String>,
    /// Set once a value needed its fields' type defaults (then every later value gets them).
    fill_type_defaults: Cell<bool>,
}

/// The translation of the rule's [`Read`] tree onto today's `TypeInfo`.
struct Compiler<'a> {
    registry: &'a TypeRegistry,
}

/// Today's fields of a struct or variant: `(name, type, type path)`.
type TodayFields = [(&'static str, TypeId, &'static str)];

impl<'a> Resolution<'a> {
    /// Resolves `stored` (the layout a column was written with) against `ops`'s type today.
    pub(crate) fn new(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
        stored: &TypeLayout,
    ) -> Result<Self, Incompatible> {
        let resolution = resolve_at(ops.type_path, stored, &ops.layout(registry))?;
        let compiler = Compiler { registry };
        let root = compiler.step(&resolution.read, ops.type_id, ops.type_path, ops.type_path)?;
        Ok(Resolution {
            root,
            ops,
            registry,
            loader,
            dropped: resolution.dropped,
            missing: resolution.missing,
            fill_type_defaults: Cell::new(false),
        })
    }

    /// The stored fields today's type no longer has (`game::Bag.note`), read and dropped.
    pub(crate) fn dropped(&self) -> &[String] {
        &self.dropped
    }

    /// Reads one value by the stored layout as today's type; it must use every byte.
    pub(crate) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let value = self.read_whole(bytes)?;
        if let Some(value) = (self.ops.from_partial)(value) {
            return Ok(value);
        }
        if !self.fill_type_defaults.get() {
            self.fill_type_defaults.set(true);
            if let Some(value) = (self.ops.from_partial)(self.read_whole(bytes)?) {
                return Ok(value);
            }
        }
        Err(self.no_default())
    }

    fn read_whole(&self, bytes: &[u8]) -> Result<Box<dyn PartialReflect>, String> {
        let mut input = ValueBytes::new(bytes);
        let value = self.read_step(&self.root, &mut input)?;
        if input.remaining() > 0 {
            return Err(format!(
                "{} bytes left over after the value",
                input.remaining()
            ));
        }
        Ok(value)
    }

    fn no_default(&self) -> String {
        if self.missing.is_empty() {
            return format!("the stored fields do not form a {}", self.ops.type_path);
        }
        format!(
            "the save lacks {}, which the type gives no default: add #[reflect(default)] to the \
             field (or #[reflect(Default)] to its type), or register a migration",
            self.missing.join(", ")
        )
    }
}

impl<'a> Compiler<'a> {
    /// The step reading a part as `read` says, into the type `today` (path `today_path`), at
    /// `path`.
    fn step(
        &self,
        read: &Read,
        today: TypeId,
        today_path: &str,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        match read {
            Read::AsIs => self.same(today, today_path, path),
            &Read::Widen { from, to } => Ok(Step::Leaf {
                stored: from,
                today: to,
            }),
            _ => {
                let registration = self.registration(today, today_path, path)?;
                self.shape(read, registration, path)
            }
        }
    }

    /// A part whose layout did not change.
    fn same(&self, today: TypeId, today_path: &str, path: &str) -> Result<Step<'a>, Incompatible> {
        if let Some(leaf) = leaf_of(today) {
            return Ok(Step::Leaf {
                stored: leaf,
                today: leaf,
            });
        }
        Ok(Step::Same {
            registration: self.registration(today, today_path, path)?,
            handles: contains_handles(self.registry, today),
        })
    }

    /// Today's type's registration: the one refusal left to the load (the rule knows layouts,
    /// not the registry).
    fn registration(
        &self,
        today: TypeId,
        today_path: &str,
        path: &str,
    ) -> Result<&'a TypeRegistration, Incompatible> {
        self.registry.get(today).ok_or_else(|| Incompatible {
            path: path.to_owned(),
            stored: format!("a value of {today_path}"),
            today: "a type missing from the type registry".to_owned(),
        })
    }

    /// The rule's answer and today's `TypeInfo` disagree: a bug, since today's layout is built
    /// from that `TypeInfo`; refused rather than read wrong.
    fn disagree(path: &str, info: &TypeInfo) -> Incompatible {
        debug_assert!(false, "today's layout and TypeInfo disagree at {path}");
        Incompatible {
            path: path.to_owned(),
            stored: "a part the layout rule resolved".to_owned(),
            today: format!("{} (its layout and TypeInfo disagree)", info.type_path()),
        }
    }

    /// The step for a part read by shape, on today's `TypeInfo`.
    fn shape(
        &self,
        read: &Read,
        registration: &'a TypeRegistration,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        let info = registration.type_info();
        let at = |suffix: &str| format!("{path}{suffix}");
        Ok(match (read, info) {
            (Read::Struct(named), TypeInfo::Struct(today)) => {
                let fields: Vec<_> = (today.iter())
                    .map(|f| (f.name(), f.type_id(), f.type_path()))
                    .collect();
                let serialization = registration.data::<SerializationData>();
                let step = self.named(named, &fields, serialization, path)?;
                Step::Struct(StructStep {
                    info: Some(info),
                    ..step
                })
            }
            (Read::TupleStruct(fields), TypeInfo::TupleStruct(_)) => {
                self.tuple_struct(fields, registration, path)?
            }
            (Read::Tuple(reads), TypeInfo::Tuple(today)) if reads.len() == today.field_len() => {
                let fields = (reads.iter().zip(today.iter()).enumerate())
                    .map(|(index, (read, f))| {
                        self.step(read, f.type_id(), f.type_path(), &at(&format!(".{index}")))
                    })
                    .collect::<Result<_, _>>()?;
                Step::Tuple { info, fields }
            }
            (Read::List(item), TypeInfo::List(today)) => {
                let ty = today.item_ty();
                let item = Box::new(self.step(item, ty.id(), ty.path(), &at("[]"))?);
                Step::List { info, item }
            }
            (Read::Array(item), TypeInfo::Array(today)) => {
                let ty = today.item_ty();
                let item = Box::new(self.step(item, ty.id(), ty.path(), &at("[]"))?);
                let len = today.capacity();
                Step::Array { info, item, len }
            }
            (Read::Set(item), TypeInfo::Set(today)) => {
                let ty = today.value_ty();
                let item = Box::new(self.step(item, ty.id(), ty.path(), &at("[]"))?);
                Step::Set { info, item }
            }
            (Read::Map { key, value }, TypeInfo::Map(today)) => {
                let (k, v) = (today.key_ty(), today.value_ty());
                Step::Map {
                    info,
                    key: Box::new(self.step(key, k.id(), k.path(), &at("{key}"))?),
                    value: Box::new(self.step(value, v.id(), v.path(), &at("{}"))?),
                }
            }
            (Read::Enum(variants), TypeInfo::Enum(_)) => self.enum_step(variants, info, path)?,
            (Read::WrapSome(inner), TypeInfo::Enum(_)) => self.wrap_some(inner, info, path)?,
            _ => return Err(Self::disagree(path, info)),
        })
    }

    /// A tuple struct's stored fields onto today's written ones, by position.
    fn tuple_struct(
        &self,
        fields: &[FieldRead],
        registration: &'a TypeRegistration,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        let info = registration.type_info();
        let TypeInfo::TupleStruct(today) = info else {
            return Err(Self::disagree(path, info));
        };
        let serialization = registration.data::<SerializationData>();
        let kept: Vec<_> = (today.iter().enumerate())
            .filter(|(index, _)| !serialization.is_some_and(|d| d.is_field_skipped(*index)))
            .map(|(_, f)| ("", f.type_id(), f.type_path()))
            .collect();
        let fields = self.positional(fields, &kept, path, info)?;
        // Only types with a skipped field pay for placing them, value after value.
        let unsaved = serialization.and_then(|data| {
            let skipped: Box<[usize]> = (0..today.field_len())
                .filter(|i| data.is_field_skipped(*i))
                .collect();
            (!skipped.is_empty()).then_some((skipped, data))
        });
        Ok(Step::TupleStruct {
            info,
            fields,
            unsaved,
        })
    }

    /// A value read, then made `Some` of today's `Option` (`info`).
    fn wrap_some(
        &self,
        inner: &Read,
        info: &'static TypeInfo,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        let some = match info {
            TypeInfo::Enum(today) => today.variant("Some"),
            _ => None,
        };
        let Some(VariantInfo::Tuple(some)) = some else {
            return Err(Self::disagree(path, info));
        };
        let field = some.field_at(0).ok_or_else(|| Self::disagree(path, info))?;
        let inner = self.step(inner, field.type_id(), field.type_path(), path)?;
        Ok(Step::WrapSome {
            info,
            inner: Box::new(inner),
        })
    }

    /// Stored named fields onto today's, by name, with today's unsaved fields and the type
    /// defaults of the fields the save lacks.
    fn named(
        &self,
        named: &NamedRead,
        today: &TodayFields,
        serialization: Option<&'a SerializationData>,
        path: &str,
    ) -> Result<StructStep<'a>, Incompatible> {
        let find = |name: &str| today.iter().enumerate().find(|(_, f)| f.0 == name);
        let mut fields = Vec::with_capacity(named.fields.len());
        for (name, field) in &named.fields {
            fields.push(match field {
                FieldRead::Keep(read) => {
                    let Some((_, &(name, id, type_path))) = find(name.as_str()) else {
                        return Err(Incompatible {
                            path: format!("{path}.{name}"),
                            stored: "a field the layout rule kept".to_owned(),
                            today: "no such field in the type's TypeInfo".to_owned(),
                        });
                    };
                    let step = self.step(read, id, type_path, &format!("{path}.{name}"))?;
                    FieldStep::Keep { name, step }
                }
                FieldRead::Drop(layout) => FieldStep::Drop(layout.clone()),
            });
        }
        let unsaved = (today.iter().enumerate())
            .filter(|(index, _)| serialization.is_some_and(|d| d.is_field_skipped(*index)))
            .map(|(index, f)| (f.0, index))
            .collect();
        let type_defaults = (named.missing.iter())
            .filter_map(|name| find(name.as_str()))
            .filter_map(|(_, &(name, id, _))| {
                let default = self.registry.get_type_data::<ReflectDefault>(id)?;
                Some((name, default))
            })
            .collect();
        Ok(StructStep {
            info: None,
            fields: fields.into(),
            unsaved,
            serialization,
            type_defaults,
        })
    }

    /// Stored fields onto today's `kept` ones (those written), by position.
    fn positional(
        &self,
        stored: &[FieldRead],
        kept: &TodayFields,
        path: &str,
        info: &TypeInfo,
    ) -> Result<Box<[FieldStep<'a>]>, Incompatible> {
        let mut fields = Vec::with_capacity(stored.len());
        for (index, field) in stored.iter().enumerate() {
            fields.push(match (field, kept.get(index)) {
                (FieldRead::Keep(read), Some(&(_, id, type_path))) => FieldStep::Keep {
                    name: "",
                    step: self.step(read, id, type_path, &format!("{path}.{index}"))?,
                },
                (FieldRead::Drop(layout), _) => FieldStep::Drop(layout.clone()),
                (FieldRead::Keep(_), None) => return Err(Self::disagree(path, info)),
            });
        }
        Ok(fields.into())
    }

    /// An enum's stored variants onto today's, by name.
    fn enum_step(
        &self,
        stored: &[rule::VariantRead],
        info: &'static TypeInfo,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        let TypeInfo::Enum(today) = info else {
            return Err(Self::disagree(path, info));
        };
        let mut variants = Vec::with_capacity(stored.len());
        for variant in stored {
            let (name, fields) = match variant {
                rule::VariantRead::Kept { name, fields } => (name, fields),
                rule::VariantRead::Lost(name) => {
                    variants.push(VariantStep::Lost(name.clone()));
                    continue;
                }
            };
            let index = today
                .index_of(name)
                .ok_or_else(|| Self::disagree(path, info))?;
            let now = today.variant_at(index).expect("index_of found it");
            let at = format!("{path}::{name}");
            let fields = self.variant_fields(fields, now, &at, info)?;
            variants.push(VariantStep::Kept {
                index,
                name: now.name(),
                fields,
            });
        }
        Ok(Step::Enum {
            info,
            variants: variants.into(),
        })
    }

    fn variant_fields(
        &self,
        stored: &VariantFieldsRead,
        today: &'static VariantInfo,
        path: &str,
        info: &TypeInfo,
    ) -> Result<VariantRead<'a>, Incompatible> {
        match (stored, today) {
            // No fields on either side: today's variant of whatever kind, empty.
            (VariantFieldsRead::Empty, VariantInfo::Unit(_)) => Ok(VariantRead::Unit),
            (VariantFieldsRead::Empty, VariantInfo::Tuple(_)) => {
                Ok(VariantRead::Tuple(Box::default()))
            }
            (VariantFieldsRead::Empty, VariantInfo::Struct(_)) => {
                Ok(VariantRead::Struct(StructStep {
                    info: None,
                    fields: Box::default(),
                    unsaved: Box::default(),
                    serialization: None,
                    type_defaults: Box::default(),
                }))
            }
            (VariantFieldsRead::Tuple(fields), VariantInfo::Tuple(now)) => {
                let ids: Vec<_> = now
                    .iter()
                    .map(|f| ("", f.type_id(), f.type_path()))
                    .collect();
                self.positional(fields, &ids, path, info)
                    .map(VariantRead::Tuple)
            }
            (VariantFieldsRead::Struct(named), VariantInfo::Struct(now)) => {
                let today: Vec<_> = (now.iter())
                    .map(|f| (f.name(), f.type_id(), f.type_path()))
                    .collect();
                self.named(named, &today, None, path)
                    .map(VariantRead::Struct)
            }
            _ => Err(Self::disagree(path, info)),
        }
    }
}

impl Resolution<'_> {
    fn read_step(
        &self,
        step: &Step<'_>,
        input: &mut ValueBytes<'_>,
    ) -> Result<Box<dyn PartialReflect>, String> {
        match step {
            Step::Leaf { stored, today } if stored == today => read_leaf(*stored, input, NewValue),
            &Step::Leaf { stored, today } => widen(stored, today, input),
            &Step::Same {
                registration,
                handles,
            } => self.read_same(registration, handles, input),
            Step::Struct(step) => {
                let mut value = self.read_named(step, input)?;
                value.set_represented_type(step.info);
                Ok(Box::new(value))
            }
            Step::TupleStruct {
                info,
                fields,
                unsaved,
            } => {
                let read = self.read_tuple_fields(fields, input)?;
                Ok(Box::new(tuple_struct_value(info, read, unsaved.as_ref())))
            }
            Step::Tuple { info, fields } => {
                let mut value = DynamicTuple::default();
                value.set_represented_type(Some(info));
                for field in fields.iter() {
                    value.insert_boxed(self.read_step(field, input)?);
                }
                Ok(Box::new(value))
            }
            Step::List { info, item } => {
                let mut value = DynamicList::default();
                value.set_represented_type(Some(info));
                for _ in 0..input.length(1).named("length")? {
                    value.push_box(self.read_step(item, input)?);
                }
                Ok(Box::new(value))
            }
            Step::Array { info, item, len } => {
                let items = (0..*len)
                    .map(|_| self.read_step(item, input))
                    .collect::<Result<Box<[_]>, _>>()?;
                let mut value = DynamicArray::new(items);
                value.set_represented_type(Some(info));
                Ok(Box::new(value))
            }
            Step::Set { info, item } => {
                let mut value = DynamicSet::default();
                value.set_represented_type(Some(info));
                for _ in 0..input.length(1).named("length")? {
                    value.insert_boxed(self.read_step(item, input)?);
                }
                Ok(Box::new(value))
            }
            Step::Map {
                info,
                key,
                value: item,
            } => {
                let mut value = DynamicMap::default();
                value.set_represented_type(Some(info));
                for _ in 0..input.length(1).named("length")? {
                    let key = self.read_step(key, input)?;
                    value.insert_boxed(key, self.read_step(item, input)?);
                }
                Ok(Box::new(value))
            }
            Step::Enum { info, variants } => self.read_enum(info, variants, input),
            Step::WrapSome { info, inner } => {
                let mut some = DynamicTuple::default();
                some.insert_boxed(self.read_step(inner, input)?);
                let mut value = DynamicEnum::new_with_index(1, "Some", DynamicVariant::Tuple(some));
                value.set_represented_type(Some(info));
                Ok(Box::new(value))
            }
        }
    }

    /// An unchanged part, read by Bevy's reflection deserializer from where the input is.
    fn read_same(
        &self,
        registration: &TypeRegistration,
        handles: bool,
        input: &mut ValueBytes<'_>,
    ) -> Result<Box<dyn PartialReflect>, String> {
        let (value, used) =
            self.loader
                .deserialize(registration, self.registry, input.rest(), handles)?;
        input.advance(used);
        Ok(value)
    }

    /// The stored fields of a struct (or struct variant), read by name, with today's unsaved
    /// fields and (once needed) type defaults filled in.
    fn read_named(
        &self,
        step: &StructStep<'_>,
        input: &mut ValueBytes<'_>,
    ) -> Result<DynamicStruct, String> {
        let mut value = DynamicStruct::default();
        for field in step.fields.iter() {
            match field {
                FieldStep::Keep { name, step } => {
                    value.insert_boxed(*name, self.read_step(step, input)?)
                }
                FieldStep::Drop(layout) => skip(layout, input)?,
            }
        }
        if let Some(data) = step.serialization {
            for &(name, index) in step.unsaved.iter() {
                if let Some(default) = data.generate_default(index) {
                    value.insert_boxed(name, default.into_partial_reflect());
                }
            }
        }
        if self.fill_type_defaults.get() {
            for &(name, default) in step.type_defaults.iter() {
                value.insert_boxed(name, default.default().into_partial_reflect());
            }
        }
        Ok(value)
    }

    fn read_tuple_fields(
        &self,
        fields: &[FieldStep<'_>],
        input: &mut ValueBytes<'_>,
    ) -> Result<Vec<Box<dyn PartialReflect>>, String> {
        let mut values = Vec::with_capacity(fields.len());
        for field in fields {
            match field {
                FieldStep::Keep { step, .. } => values.push(self.read_step(step, input)?),
                FieldStep::Drop(layout) => skip(layout, input)?,
            }
        }
        Ok(values)
    }

    fn read_enum(
        &self,
        info: &'static TypeInfo,
        variants: &[VariantStep<'_>],
        input: &mut ValueBytes<'_>,
    ) -> Result<Box<dyn PartialReflect>, String> {
        let stored = input.variant_index().named("variant index")? as usize;
        let (index, name, fields) = match variants.get(stored) {
            Some(VariantStep::Kept {
                index,
                name,
                fields,
            }) => (*index, *name, fields),
            Some(VariantStep::Lost(name)) => {
                return Err(format!(
                    "the save holds {}::{name}, a variant the type no longer has; register a \
                     migration to map it",
                    info.type_path()
                ));
            }
            None => {
                return Err(format!(
                    "variant index {stored} is out of range for the stored layout of {} ({} variants)",
                    info.type_path(),
                    variants.len()
                ));
            }
        };
        let variant = match fields {
            VariantRead::Unit => DynamicVariant::Unit,
            VariantRead::Tuple(fields) => {
                let mut tuple = DynamicTuple::default();
                for field in self.read_tuple_fields(fields, input)? {
                    tuple.insert_boxed(field);
                }
                DynamicVariant::Tuple(tuple)
            }
            VariantRead::Struct(step) => DynamicVariant::Struct(self.read_named(step, input)?),
        };
        let mut value = DynamicEnum::new_with_index(index, name, variant);
        value.set_represented_type(Some(info));
        Ok(Box::new(value))
    }
}

/// Reads past a stored field today's type no longer has (measuring it, building nothing).
fn skip(layout: &TypeLayout, input: &mut ValueBytes<'_>) -> Result<(), String> {
    let used = stored::skip(layout, input.rest()).map_err(|error| error.to_string())?;
    input.advance(used);
    Ok(())
}

/// Reads a `stored` leaf as the wider `today` leaf.
fn widen(
    stored: Leaf,
    today: Leaf,
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    if (stored, today) == (Leaf::F32, Leaf::F64) {
        return Ok(Box::new(f64::from(input.f32().named("f32")?)));
    }
    let Some((signed, bits)) = stored.integer() else {
        return Err(format!(
            "a {} cannot be read as a {}",
            stored.name(),
            today.name()
        ));
    };
    let value: i128 = match signed {
        true => input.signed(bits).named(stored.name())?,
        false => i128::try_from(input.unsigned(bits).named(stored.name())?)
            .map_err(|_| format!("a {} too large for a {}", stored.name(), today.name()))?,
    };
    let out_of_range = || format!("{value} does not fit in a {}", today.name());
    Ok(match today {
        Leaf::U16 => Box::new(u16::try_from(value).map_err(|_| out_of_range())?),
        Leaf::U32 => Box::new(u32::try_from(value).map_err(|_| out_of_range())?),
        Leaf::U64 => Box::new(u64::try_from(value).map_err(|_| out_of_range())?),
        Leaf::U128 => Box::new(u128::try_from(value).map_err(|_| out_of_range())?),
        Leaf::Usize => Box::new(usize::try_from(value).map_err(|_| out_of_range())?),
        Leaf::I16 => Box::new(i16::try_from(value).map_err(|_| out_of_range())?),
        Leaf::I32 => Box::new(i32::try_from(value).map_err(|_| out_of_range())?),
        Leaf::I64 => Box::new(i64::try_from(value).map_err(|_| out_of_range())?),
        Leaf::I128 => Box::new(value),
        Leaf::Isize => Box::new(isize::try_from(value).map_err(|_| out_of_range())?),
        _ => return Err(out_of_range()),
    })
}

/// A tuple struct's value from the fields read, in order, with the default of each field left
/// out of every save put at its own index (a field after it must not slide into its place).
fn tuple_struct_value(
    info: &'static TypeInfo,
    read: Vec<Box<dyn PartialReflect>>,
    unsaved: Option<&(Box<[usize]>, &SerializationData)>,
) -> DynamicTupleStruct {
    let mut value = DynamicTupleStruct::default();
    value.set_represented_type(Some(info));
    let len = match info {
        TypeInfo::TupleStruct(today) => today.field_len(),
        _ => read.len(),
    };
    let mut read = read.into_iter();
    for index in 0..len {
        let skipped = unsaved.filter(|(indices, _)| indices.contains(&index));
        let field = match skipped {
            Some((_, data)) => data
                .generate_default(index)
                .map(|d| d.into_partial_reflect()),
            // The fields the save lacks are at the end: `FromReflect` gives them defaults.
            None => read.next(),
        };
        let Some(field) = field else { break };
        value.insert_boxed(field);
    }
    value
}
