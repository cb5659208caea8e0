//! Reading values written with another layout of their type: the stored layout (from the save)
//! resolved by name against today's type, the way Avro resolves a writer's schema against a
//! reader's.
//!
//! [`Resolution::new`] compares the two layouts once per column and compiles a [`Step`] tree,
//! refusing before any value is read what cannot be resolved (a field whose type changed, a
//! serde type whose layout changed, a different shape); [`Resolution::read`] then reads each
//! value by the stored layout into dynamic values shaped like today's type, which `FromReflect`
//! turns into it:
//!
//! - struct fields are matched by name, so their order does not matter; a field the save has
//!   and the type lost is read and dropped (and listed, see [`Resolution::dropped`]); a field the
//!   type has and the save lacks is left out, so `FromReflect` gives it its default
//!   (`#[reflect(default)]` on the field, or the type's `#[reflect(Default)]`), else the default
//!   of the field's type (`ReflectDefault`); with none, the value is refused naming the field;
//! - enum variants are matched by name; a value in a variant the type lost is refused;
//! - a leaf may widen (`u8` → `u32`, `u32` → `i64`, `f32` → `f64`), and a value may become
//!   `Some` of an `Option` it is now wrapped in;
//! - a part of the value whose layout did not change is read by Bevy's reflection
//!   deserializer (with the entity and handle processors), as the column would be without a
//!   change.
//!
//! This is slower than the reflection plan (dynamic values for every value), and only columns
//! whose layout changed take it.

use super::assets::{HandleLoader, contains_handles};
use super::layout_of::describe;
use super::ops::TypeOps;
use super::plan_read::{Input, NewValue, read_leaf};
use crate::snapshot::schema::{Leaf, TypeLayout, VariantFields, compare, stored, text};
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

/// A part of a stored layout that today's type cannot read: where, and the two layouts there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Incompatible {
    /// Where, from the column's type: `game::Stats.hp`.
    pub(crate) path: String,
    /// What the save holds there, and what the type has today.
    pub(crate) stored: String,
    pub(crate) today: String,
}

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

/// What compiling the steps collects on the way.
struct Compiler<'a> {
    registry: &'a TypeRegistry,
    dropped: Vec<String>,
    missing: Vec<String>,
}

impl<'a> Resolution<'a> {
    /// Resolves `stored` (the layout a column was written with) against `ops`'s type today.
    pub(crate) fn new(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
        stored: &TypeLayout,
    ) -> Result<Self, Incompatible> {
        let today = ops.layout(registry);
        let serde = |layout: &TypeLayout| matches!(layout, TypeLayout::Serde { .. });
        if (serde(&today) || serde(stored)) && !compare::reads_as_is(stored, &today) {
            // Serde bytes are opaque: only a layout that reads them as is does.
            return Err(Incompatible {
                path: ops.type_path.to_owned(),
                stored: encoded_as(stored),
                today: encoded_as(&today),
            });
        }
        let mut compiler = Compiler {
            registry,
            dropped: Vec::new(),
            missing: Vec::new(),
        };
        let root = compiler.step(stored, ops.type_id, ops.type_path, ops.type_path, 0)?;
        Ok(Resolution {
            root,
            ops,
            registry,
            loader,
            dropped: compiler.dropped,
            missing: compiler.missing,
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
        let mut input = Input::new(bytes);
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
    /// The step reading `stored` as the type `today` (path `today_path`), at `path`.
    fn step(
        &mut self,
        stored: &TypeLayout,
        today: TypeId,
        today_path: &str,
        path: &str,
        depth: usize,
    ) -> Result<Step<'a>, Incompatible> {
        let now = describe(self.registry, today, today_path, depth);
        if compare::reads_as_is(stored, &now) {
            return self.same(stored, today, path);
        }
        let incompatible = || Incompatible {
            path: path.to_owned(),
            stored: text::short(stored),
            today: text::short(&now),
        };
        if let (TypeLayout::Leaf(from), TypeLayout::Leaf(to)) = (stored, &now) {
            return match from.widens_to(*to) {
                true => Ok(Step::Leaf {
                    stored: *from,
                    today: *to,
                }),
                false => Err(incompatible()),
            };
        }
        let registration = self.registry.get(today).ok_or_else(incompatible)?;
        let info = registration.type_info();
        if now.option_item().is_some() && stored.option_item().is_none() {
            return self.wrap_some(stored, info, path, depth);
        }
        self.shape(stored, registration, path, depth)
            .ok_or_else(incompatible)?
    }

    /// A part whose layout did not change.
    fn same(
        &self,
        stored: &TypeLayout,
        today: TypeId,
        path: &str,
    ) -> Result<Step<'a>, Incompatible> {
        if let TypeLayout::Leaf(leaf) = stored {
            return Ok(Step::Leaf {
                stored: *leaf,
                today: *leaf,
            });
        }
        let registration = self.registry.get(today).ok_or_else(|| Incompatible {
            path: path.to_owned(),
            stored: text::short(stored),
            today: "a type missing from the type registry".to_owned(),
        })?;
        Ok(Step::Same {
            registration,
            handles: contains_handles(self.registry, today),
        })
    }

    fn wrap_some(
        &mut self,
        stored: &TypeLayout,
        info: &'static TypeInfo,
        path: &str,
        depth: usize,
    ) -> Result<Step<'a>, Incompatible> {
        let some = match info {
            TypeInfo::Enum(info) => info.variant("Some"),
            _ => None,
        };
        let Some(VariantInfo::Tuple(some)) = some else {
            unreachable!("an Option layout has a Some(T) variant");
        };
        let field = some.field_at(0).expect("Some has one field");
        let inner = self.step(stored, field.type_id(), field.type_path(), path, depth + 1)?;
        Ok(Step::WrapSome {
            info,
            inner: Box::new(inner),
        })
    }

    /// The step for two layouts of one shape (struct and struct...), `None` when the shapes
    /// differ.
    fn shape(
        &mut self,
        stored: &TypeLayout,
        registration: &'a TypeRegistration,
        path: &str,
        depth: usize,
    ) -> Option<Result<Step<'a>, Incompatible>> {
        let info = registration.type_info();
        let at = |suffix: &str| format!("{path}{suffix}");
        let depth = depth + 1;
        Some(match (stored, info) {
            (TypeLayout::Struct { fields, .. }, TypeInfo::Struct(_)) => self
                .struct_step(fields, registration, path, depth - 1)
                .map(Step::Struct),
            (TypeLayout::TupleStruct { fields, .. }, TypeInfo::TupleStruct(today)) => {
                let ids: Vec<_> = today.iter().map(|f| (f.type_id(), f.type_path())).collect();
                self.tuple_fields(fields, &ids, path, depth - 1)
                    .map(|fields| Step::TupleStruct { info, fields })
            }
            (TypeLayout::Tuple(fields), TypeInfo::Tuple(today))
                if fields.len() == today.field_len() =>
            {
                (fields.iter().zip(today.iter()).enumerate())
                    .map(|(index, (stored, field))| {
                        let at = at(&format!(".{index}"));
                        self.step(stored, field.type_id(), field.type_path(), &at, depth)
                    })
                    .collect::<Result<_, _>>()
                    .map(|fields| Step::Tuple { info, fields })
            }
            (TypeLayout::List(item), TypeInfo::List(today)) => {
                let ty = today.item_ty();
                self.step(item, ty.id(), ty.path(), &at("[]"), depth)
                    .map(|item| Step::List {
                        info,
                        item: Box::new(item),
                    })
            }
            (TypeLayout::Array { item, len }, TypeInfo::Array(today))
                if *len == today.capacity() as u64 =>
            {
                let ty = today.item_ty();
                self.step(item, ty.id(), ty.path(), &at("[]"), depth)
                    .map(|item| Step::Array {
                        info,
                        item: Box::new(item),
                        len: today.capacity(),
                    })
            }
            (TypeLayout::Set(item), TypeInfo::Set(today)) => {
                let ty = today.value_ty();
                self.step(item, ty.id(), ty.path(), &at("[]"), depth)
                    .map(|item| Step::Set {
                        info,
                        item: Box::new(item),
                    })
            }
            (TypeLayout::Map { key, value }, TypeInfo::Map(today)) => {
                self.map_step(key, value, info, today, path, depth)
            }
            (TypeLayout::Enum { variants, .. }, TypeInfo::Enum(_)) => {
                self.enum_step(variants, registration, path, depth - 1)
            }
            _ => return None,
        })
    }
}

impl<'a> Compiler<'a> {
    fn map_step(
        &mut self,
        key: &TypeLayout,
        value: &TypeLayout,
        info: &'static TypeInfo,
        today: &bevy::reflect::map::MapInfo,
        path: &str,
        depth: usize,
    ) -> Result<Step<'a>, Incompatible> {
        let (k, v) = (today.key_ty(), today.value_ty());
        let key = self.step(key, k.id(), k.path(), &format!("{path}{{key}}"), depth)?;
        let value = self.step(value, v.id(), v.path(), &format!("{path}{{}}"), depth)?;
        Ok(Step::Map {
            info,
            key: Box::new(key),
            value: Box::new(value),
        })
    }

    /// A struct's stored fields matched by name against today's.
    fn struct_step(
        &mut self,
        stored: &[crate::snapshot::schema::Field],
        registration: &'a TypeRegistration,
        path: &str,
        depth: usize,
    ) -> Result<StructStep<'a>, Incompatible> {
        let TypeInfo::Struct(info) = registration.type_info() else {
            unreachable!("struct_step is given a struct");
        };
        let today: Vec<_> = info
            .iter()
            .map(|f| (f.name(), f.type_id(), f.type_path()))
            .collect();
        let serialization = registration.data::<SerializationData>();
        self.named_fields(stored, &today, serialization, path, depth)
            .map(|step| StructStep {
                info: Some(registration.type_info()),
                ..step
            })
    }

    /// Stored named fields against today's `(name, type, path)` fields.
    fn named_fields(
        &mut self,
        stored: &[crate::snapshot::schema::Field],
        today: &[(&'static str, TypeId, &'static str)],
        serialization: Option<&'a SerializationData>,
        path: &str,
        depth: usize,
    ) -> Result<StructStep<'a>, Incompatible> {
        let is_unsaved =
            |index: usize| serialization.is_some_and(|data| data.is_field_skipped(index));
        let mut fields = Vec::with_capacity(stored.len());
        for field in stored {
            let at = format!("{path}.{}", field.name);
            let found = today
                .iter()
                .enumerate()
                .find(|(_, (name, ..))| *name == field.name);
            fields.push(match found {
                Some((index, &(name, id, type_path))) if !is_unsaved(index) => FieldStep::Keep {
                    name,
                    step: self.step(&field.layout, id, type_path, &at, depth + 1)?,
                },
                _ => {
                    self.dropped.push(at);
                    FieldStep::Drop(field.layout.clone())
                }
            });
        }
        let mut unsaved = Vec::new();
        let mut type_defaults = Vec::new();
        for (index, &(name, id, _)) in today.iter().enumerate() {
            if is_unsaved(index) {
                unsaved.push((name, index));
            } else if !stored.iter().any(|field| field.name == name) {
                self.missing.push(format!("{path}.{name}"));
                if let Some(default) = self.registry.get_type_data::<ReflectDefault>(id) {
                    type_defaults.push((name, default));
                }
            }
        }
        Ok(StructStep {
            info: None,
            fields: fields.into(),
            unsaved: unsaved.into(),
            serialization,
            type_defaults: type_defaults.into(),
        })
    }

    /// Stored tuple fields against today's, by position: stored fields beyond today's are
    /// dropped; today's beyond the stored ones are missing.
    fn tuple_fields(
        &mut self,
        stored: &[TypeLayout],
        today: &[(TypeId, &'static str)],
        path: &str,
        depth: usize,
    ) -> Result<Box<[FieldStep<'a>]>, Incompatible> {
        let mut fields = Vec::with_capacity(stored.len());
        for (index, layout) in stored.iter().enumerate() {
            let at = format!("{path}.{index}");
            fields.push(match today.get(index) {
                Some(&(id, type_path)) => FieldStep::Keep {
                    name: "",
                    step: self.step(layout, id, type_path, &at, depth + 1)?,
                },
                None => {
                    self.dropped.push(at);
                    FieldStep::Drop(layout.clone())
                }
            });
        }
        for index in stored.len()..today.len() {
            self.missing.push(format!("{path}.{index}"));
        }
        Ok(fields.into())
    }

    /// An enum's stored variants matched by name against today's.
    fn enum_step(
        &mut self,
        stored: &[crate::snapshot::schema::Variant],
        registration: &'a TypeRegistration,
        path: &str,
        depth: usize,
    ) -> Result<Step<'a>, Incompatible> {
        let info = registration.type_info();
        let TypeInfo::Enum(today) = info else {
            unreachable!("enum_step is given an enum");
        };
        let mut variants = Vec::with_capacity(stored.len());
        for variant in stored {
            let Some(index) = today.index_of(&variant.name) else {
                variants.push(VariantStep::Lost(variant.name.clone()));
                continue;
            };
            let now = today.variant_at(index).expect("index_of found it");
            let at = format!("{path}::{}", variant.name);
            let fields = self.variant_fields(&variant.fields, now, &at, depth)?;
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
        &mut self,
        stored: &VariantFields,
        today: &'static VariantInfo,
        path: &str,
        depth: usize,
    ) -> Result<VariantRead<'a>, Incompatible> {
        match (stored, today) {
            (VariantFields::Unit, VariantInfo::Unit(_)) => Ok(VariantRead::Unit),
            (VariantFields::Tuple(fields), VariantInfo::Tuple(now)) => {
                let ids: Vec<_> = now.iter().map(|f| (f.type_id(), f.type_path())).collect();
                self.tuple_fields(fields, &ids, path, depth)
                    .map(VariantRead::Tuple)
            }
            (VariantFields::Struct(fields), VariantInfo::Struct(now)) => {
                let today: Vec<_> = now
                    .iter()
                    .map(|f| (f.name(), f.type_id(), f.type_path()))
                    .collect();
                self.named_fields(fields, &today, None, path, depth)
                    .map(VariantRead::Struct)
            }
            _ => Err(Incompatible {
                path: path.to_owned(),
                stored: variant_kind(stored).to_owned(),
                today: variant_kind_now(today).to_owned(),
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

fn variant_kind_now(variant: &VariantInfo) -> &'static str {
    match variant {
        VariantInfo::Unit(_) => "a unit variant",
        VariantInfo::Tuple(_) => "a tuple variant",
        VariantInfo::Struct(_) => "a struct variant",
    }
}

impl Resolution<'_> {
    fn read_step(
        &self,
        step: &Step<'_>,
        input: &mut Input<'_>,
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
            Step::TupleStruct { info, fields } => {
                let mut value = DynamicTupleStruct::default();
                value.set_represented_type(Some(info));
                for field in self.read_tuple_fields(fields, input)? {
                    value.insert_boxed(field);
                }
                Ok(Box::new(value))
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
                for _ in 0..input.length(1)? {
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
                for _ in 0..input.length(1)? {
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
                for _ in 0..input.length(1)? {
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
        input: &mut Input<'_>,
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
        input: &mut Input<'_>,
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
        input: &mut Input<'_>,
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
        input: &mut Input<'_>,
    ) -> Result<Box<dyn PartialReflect>, String> {
        let stored = input.unsigned(32, "variant index")? as usize;
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

/// A column's whole layout on one line, saying whether serde wrote it: `serde bytes of struct
/// game::Glow { radius: f32, level: u32 }`.
fn encoded_as(layout: &TypeLayout) -> String {
    let (encoding, shape) = match layout {
        TypeLayout::Serde { reflected, .. } => ("serde bytes of", &**reflected),
        other => ("reflected", other),
    };
    let text = text::pretty(shape);
    format!(
        "{encoding} {}",
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// Reads past a stored field today's type no longer has (measuring it, building nothing).
fn skip(layout: &TypeLayout, input: &mut Input<'_>) -> Result<(), String> {
    let used = stored::skip(layout, input.rest()).map_err(|error| error.to_string())?;
    input.advance(used);
    Ok(())
}

/// Reads a `stored` leaf as the wider `today` leaf.
fn widen(
    stored: Leaf,
    today: Leaf,
    input: &mut Input<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    if (stored, today) == (Leaf::F32, Leaf::F64) {
        return Ok(Box::new(f64::from(input.f32()?)));
    }
    let Some((signed, bits)) = stored.integer() else {
        return Err(format!(
            "a {} cannot be read as a {}",
            stored.name(),
            today.name()
        ));
    };
    // Postcard writes `u8` and `i8` as raw bytes, wider integers as varints.
    let value: i128 = match (signed, bits) {
        (false, 8) => input.array::<1>()?[0].into(),
        (true, 8) => (input.array::<1>()?[0] as i8).into(),
        (true, _) => input.signed(bits, stored.name())?,
        (false, _) => i128::try_from(input.unsigned(bits, stored.name())?)
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
