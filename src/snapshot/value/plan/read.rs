//! Reading a value written by a [`Plan`] (or by Bevy's reflection serializer, which writes the
//! same bytes), without Bevy's per-field type-registry lookups and `erased_serde` calls.
//! [`Plan::read`] reads into the dynamic values `FromReflect` builds the concrete type from (the
//! way Bevy's reflection deserializer does); [`Plan::read_into`] reads over an existing value of
//! the type, reusing its allocations, which is how a column's values after the first are read
//! (over a clone of the first): dynamic values cost two `String`s, a hash-map entry and a box per
//! struct field, which dominated decoding before.
//!
//! Two shapes used to fall back to dynamic values on every row, and were a fifth of a load of
//! the real-game bench world (`perf`, 10k entities: `Plan::read` 13.5% and `take_from_reflect`
//! 4.7% of the samples, mostly `Option` fields that are `None` in one row and `Some` in the
//! next): an enum whose variant differs from the one in the value read over, and maps and sets.
//! An enum that changes variant is now replaced by a clone of a value of that variant met
//! earlier in the column ([`Prototypes`]), read over like any other value (and so is a list
//! item beyond the length of the list read over); maps and sets are emptied and refilled entry
//! by entry, without an intermediate dynamic map.
//!
//! Accepts what postcard accepts for the planned shape and refuses the rest with a message
//! naming what was wrong: truncated input, an over-long or out-of-range varint, a `bool` other
//! than 0 or 1, invalid UTF-8, a variant index the enum does not have, an invalid entity id, a
//! length longer than the bytes left.

use super::shape::{Leaf, Plan, VariantPlan, VariantShape};
use crate::snapshot::schema::bytes::{ValueBytes, ValueError};
use bevy::math::{IVec2, IVec3, IVec4, Quat, UVec2, UVec3, UVec4, Vec2, Vec3, Vec3A, Vec4};
use bevy::prelude::*;
use bevy::reflect::array::DynamicArray;
use bevy::reflect::enums::{DynamicEnum, DynamicVariant, Enum};
use bevy::reflect::list::{DynamicList, List};
use bevy::reflect::map::{DynamicMap, Map};
use bevy::reflect::set::{DynamicSet, Set};
use bevy::reflect::structs::DynamicStruct;
use bevy::reflect::tuple::DynamicTuple;
use bevy::reflect::tuple_struct::DynamicTupleStruct;
use bevy::reflect::{PartialReflect, TypeInfo};
use std::any::TypeId;
use std::collections::HashMap;

/// `ValueBytes`' errors in the plan's messages, naming what was being read.
pub(crate) trait Named<T> {
    fn named(self, what: &str) -> Result<T, String>;
}

impl<T> Named<T> for Result<T, ValueError> {
    #[inline]
    fn named(self, what: &str) -> Result<T, String> {
        self.map_err(|error| match error {
            ValueError::BadVarint { .. } => format!("the varint of a {what} is too long"),
            ValueError::OutOfRange { .. } => format!("a {what} out of range"),
            other => other.to_string(),
        })
    }
}

/// An entity id, valid by Bevy's rule.
#[inline]
fn entity(input: &mut ValueBytes<'_>) -> Result<Entity, String> {
    let bits = input.entity_bits().named("entity id")?;
    Entity::try_from_bits(bits).ok_or_else(|| format!("{bits:#x} is not a valid entity id"))
}

/// Concrete values met earlier in a column, read over instead of building values from dynamic
/// ones (see the module docs).
#[derive(Default)]
pub(crate) struct Prototypes {
    /// By (enum type, variant index): replaces an enum read over a value of another variant.
    variants: HashMap<(TypeId, usize), Box<dyn Reflect>>,
    /// By item type: a list item beyond the length of the list read over.
    items: HashMap<TypeId, Box<dyn Reflect>>,
}

impl Prototypes {
    /// A clone of the kept value of `variant` of `enum_type`, if one is kept and clones.
    fn variant(&self, enum_type: TypeId, variant: usize) -> Option<Box<dyn Reflect>> {
        clone_kept(self.variants.get(&(enum_type, variant)).map(Box::as_ref))
    }

    /// Keeps a clone of `value` (an enum now in `variant`) for later rows, when it clones.
    fn keep_variant(&mut self, enum_type: TypeId, variant: usize, value: &dyn PartialReflect) {
        if let Ok(prototype) = value.reflect_clone() {
            self.variants.insert((enum_type, variant), prototype);
        }
    }

    /// A clone of the kept list item of `item_type`, if one is kept and clones.
    fn item(&self, item_type: TypeId) -> Option<Box<dyn Reflect>> {
        clone_kept(self.items.get(&item_type).map(Box::as_ref))
    }

    /// Keeps a clone of `item` for later lists, when it clones.
    fn keep_item(&mut self, item_type: TypeId, item: &dyn PartialReflect) {
        if let Ok(prototype) = item.reflect_clone() {
            self.items.insert(item_type, prototype);
        }
    }
}

fn clone_kept(kept: Option<&dyn Reflect>) -> Option<Box<dyn Reflect>> {
    kept?.reflect_clone().ok()
}

/// The fewest bytes a value of `plan` can take (to bound forged lengths).
fn min_size(plan: &Plan) -> usize {
    match plan {
        Plan::Leaf(Leaf::F32 | Leaf::F64) => 4,
        Plan::Leaf(_) => 1,
        Plan::Struct(_, fields) => fields.iter().map(|(_, plan)| min_size(plan)).sum(),
        Plan::TupleStruct(_, fields) | Plan::Tuple(_, fields) => fields.iter().map(min_size).sum(),
        Plan::Array(_, item, len) => min_size(item).saturating_mul(*len),
        Plan::List(..) | Plan::Set(..) | Plan::Map(..) | Plan::Enum(..) => 1,
    }
}

impl Plan {
    /// Reads one value of the planned type as the dynamic value `FromReflect` turns into it.
    pub(crate) fn read(
        &self,
        input: &mut ValueBytes<'_>,
    ) -> Result<Box<dyn PartialReflect>, String> {
        match self {
            Plan::Leaf(leaf) => read_leaf(*leaf, input, NewValue),
            Plan::Struct(info, fields) => read_struct(info, fields, input),
            Plan::TupleStruct(info, fields) => {
                let mut value = DynamicTupleStruct::default();
                value.set_represented_type(Some(*info));
                for plan in fields.iter() {
                    value.insert_boxed(plan.read(input)?);
                }
                Ok(Box::new(value))
            }
            Plan::Tuple(info, fields) => {
                let mut value = read_tuple(fields, input)?;
                value.set_represented_type(Some(*info));
                Ok(Box::new(value))
            }
            Plan::List(info, item) => read_list(info, item, input),
            Plan::Array(info, item, len) => {
                let items = (0..*len)
                    .map(|_| item.read(input))
                    .collect::<Result<Box<[_]>, _>>()?;
                let mut value = DynamicArray::new(items);
                value.set_represented_type(Some(*info));
                Ok(Box::new(value))
            }
            Plan::Set(info, item) => read_set(info, item, input),
            Plan::Map(info, entry) => read_map(info, entry, input),
            Plan::Enum(info, variants) => read_enum(info, variants, input),
        }
    }
}

fn read_struct(
    info: &'static TypeInfo,
    fields: &[(&'static str, Plan)],
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    let mut value = read_struct_fields(fields, input)?;
    value.set_represented_type(Some(info));
    Ok(Box::new(value))
}

fn read_struct_fields(
    fields: &[(&'static str, Plan)],
    input: &mut ValueBytes<'_>,
) -> Result<DynamicStruct, String> {
    let mut value = DynamicStruct::default();
    for (name, plan) in fields.iter() {
        value.insert_boxed(*name, plan.read(input)?);
    }
    Ok(value)
}

fn read_tuple(fields: &[Plan], input: &mut ValueBytes<'_>) -> Result<DynamicTuple, String> {
    let mut value = DynamicTuple::default();
    for plan in fields.iter() {
        value.insert_boxed(plan.read(input)?);
    }
    Ok(value)
}

fn read_list(
    info: &'static TypeInfo,
    item: &Plan,
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    let len = input.length(min_size(item)).named("length")?;
    let mut value = DynamicList::default();
    value.set_represented_type(Some(info));
    for _ in 0..len {
        value.push_box(item.read(input)?);
    }
    Ok(Box::new(value))
}

fn read_set(
    info: &'static TypeInfo,
    item: &Plan,
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    let len = input.length(min_size(item)).named("length")?;
    let mut value = DynamicSet::default();
    value.set_represented_type(Some(info));
    for _ in 0..len {
        value.insert_boxed(item.read(input)?);
    }
    Ok(Box::new(value))
}

fn read_map(
    info: &'static TypeInfo,
    entry: &(Plan, Plan),
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    let mut value = DynamicMap::default();
    value.set_represented_type(Some(info));
    read_map_entries(entry, input, &mut |key, item| {
        value.insert_boxed(key, item);
    })?;
    Ok(Box::new(value))
}

/// Reads a map's length and entries, handing each to `insert`.
fn read_map_entries(
    (key, item): &(Plan, Plan),
    input: &mut ValueBytes<'_>,
    insert: &mut dyn FnMut(Box<dyn PartialReflect>, Box<dyn PartialReflect>),
) -> Result<(), String> {
    let len = input
        .length(min_size(key) + min_size(item))
        .named("length")?;
    for _ in 0..len {
        let key = key.read(input)?;
        insert(key, item.read(input)?);
    }
    Ok(())
}

fn read_enum(
    info: &'static TypeInfo,
    variants: &[VariantPlan],
    input: &mut ValueBytes<'_>,
) -> Result<Box<dyn PartialReflect>, String> {
    let index = input.variant_index().named("variant index")? as usize;
    let variant = variants.get(index).ok_or_else(|| {
        format!(
            "variant index {index} is out of range for {} ({} variants)",
            info.type_path(),
            variants.len()
        )
    })?;
    let fields = match &variant.shape {
        VariantShape::Unit => DynamicVariant::Unit,
        VariantShape::Tuple(fields) => DynamicVariant::Tuple(read_tuple(fields, input)?),
        VariantShape::Struct(fields) => DynamicVariant::Struct(read_struct_fields(fields, input)?),
    };
    let mut value = DynamicEnum::new_with_index(index, variant.name, fields);
    value.set_represented_type(Some(info));
    Ok(Box::new(value))
}

/// Where a decoded leaf goes: a new boxed value ([`NewValue`]) or over an existing one
/// ([`Over`]). [`read_leaf`] decodes each leaf once for both.
/// Where [`read_leaf`] puts a leaf: a new value, over a reflected value, or into a flat value's
/// memory (`flat`).
pub(crate) trait LeafSink {
    type Out;
    fn put<T: PartialReflect>(self, value: T) -> Result<Self::Out, String>;
    fn put_str(self, text: &str) -> Result<Self::Out, String>;
}

/// A leaf read as a new value (what dynamic values are built from).
pub(crate) struct NewValue;

impl LeafSink for NewValue {
    type Out = Box<dyn PartialReflect>;

    fn put<T: PartialReflect>(self, value: T) -> Result<Self::Out, String> {
        Ok(Box::new(value))
    }

    fn put_str(self, text: &str) -> Result<Self::Out, String> {
        Ok(Box::new(text.to_owned()))
    }
}

/// A leaf read over a value of its type (a `String` reuses its buffer).
struct Over<'t>(&'t mut dyn PartialReflect);

impl LeafSink for Over<'_> {
    type Out = ();

    fn put<T: PartialReflect>(self, value: T) -> Result<(), String> {
        match self.0.try_downcast_mut::<T>() {
            Some(slot) => *slot = value,
            None => self
                .0
                .try_apply(&value)
                .map_err(|error| error.to_string())?,
        }
        Ok(())
    }

    fn put_str(self, text: &str) -> Result<(), String> {
        match self.0.try_downcast_mut::<String>() {
            Some(string) => {
                string.clear();
                string.push_str(text);
                Ok(())
            }
            None => self.put(text.to_owned()),
        }
    }
}

/// Decodes a leaf as postcard writes it, into `sink`.
pub(crate) fn read_leaf<S: LeafSink>(
    leaf: Leaf,
    input: &mut ValueBytes<'_>,
    sink: S,
) -> Result<S::Out, String> {
    let what = leaf.name();
    match leaf {
        Leaf::Bool => sink.put(input.bool().named(what)?),
        Leaf::U8 => sink.put(input.unsigned(8).named(what)? as u8),
        Leaf::I8 => sink.put(input.signed(8).named(what)? as i8),
        Leaf::U16 => sink.put(input.unsigned(16).named(what)? as u16),
        Leaf::U32 => sink.put(input.unsigned(32).named(what)? as u32),
        Leaf::U64 => sink.put(input.unsigned(64).named(what)? as u64),
        Leaf::U128 => sink.put(input.unsigned(128).named(what)?),
        Leaf::Usize => sink.put(
            usize::try_from(input.unsigned(64).named(what)?)
                .map_err(|_| "a usize out of range".to_owned())?,
        ),
        Leaf::I16 => sink.put(input.signed(16).named(what)? as i16),
        Leaf::I32 => sink.put(input.signed(32).named(what)? as i32),
        Leaf::I64 => sink.put(input.signed(64).named(what)? as i64),
        Leaf::I128 => sink.put(input.signed(128).named(what)?),
        Leaf::Isize => sink.put(
            isize::try_from(input.signed(64).named(what)?)
                .map_err(|_| "an isize out of range".to_owned())?,
        ),
        Leaf::F32 => sink.put(input.f32().named(what)?),
        Leaf::F64 => sink.put(input.f64().named(what)?),
        Leaf::Char => sink.put(input.char().named(what)?),
        Leaf::String => sink.put_str(input.str().named(what)?),
        Leaf::Entity => sink.put(entity(input)?),
        Leaf::Vec2 => sink.put(Vec2::from_array(input.lanes_f32().named(what)?)),
        Leaf::Vec3 => sink.put(Vec3::from_array(input.lanes_f32().named(what)?)),
        Leaf::Vec3A => sink.put(Vec3A::from_array(input.lanes_f32().named(what)?)),
        Leaf::Vec4 => sink.put(Vec4::from_array(input.lanes_f32().named(what)?)),
        Leaf::Quat => sink.put(Quat::from_array(input.lanes_f32().named(what)?)),
        Leaf::IVec2 => sink.put(IVec2::from_array(input.lanes_i32().named(what)?)),
        Leaf::IVec3 => sink.put(IVec3::from_array(input.lanes_i32().named(what)?)),
        Leaf::IVec4 => sink.put(IVec4::from_array(input.lanes_i32().named(what)?)),
        Leaf::UVec2 => sink.put(UVec2::from_array(input.lanes_u32().named(what)?)),
        Leaf::UVec3 => sink.put(UVec3::from_array(input.lanes_u32().named(what)?)),
        Leaf::UVec4 => sink.put(UVec4::from_array(input.lanes_u32().named(what)?)),
    }
}

impl Plan {
    /// Reads one value of the planned type over `target`, a value of the same type, reusing
    /// its allocations: structs, tuples, arrays and enums that keep their variant are
    /// overwritten field by field, lists and maps are refilled, and an enum that changes
    /// variant is replaced through `try_apply` (which builds the new variant with
    /// `FromReflect`). Reads exactly the bytes [`Plan::read`] reads and refuses the same input;
    /// `target` is left partly overwritten when it fails.
    pub(crate) fn read_into(
        &self,
        target: &mut dyn PartialReflect,
        input: &mut ValueBytes<'_>,
        prototypes: &mut Prototypes,
    ) -> Result<(), String> {
        use bevy::reflect::ReflectMut;
        match (self, target.reflect_mut()) {
            (Plan::Leaf(leaf), _) => read_leaf(*leaf, input, Over(target)),
            (Plan::Struct(_, fields), ReflectMut::Struct(s)) => {
                for (index, (_, plan)) in fields.iter().enumerate() {
                    plan.read_into(field_mut(s.field_at_mut(index))?, input, prototypes)?;
                }
                Ok(())
            }
            (Plan::TupleStruct(_, fields), ReflectMut::TupleStruct(s)) => {
                for (index, plan) in fields.iter().enumerate() {
                    plan.read_into(field_mut(s.field_mut(index))?, input, prototypes)?;
                }
                Ok(())
            }
            (Plan::Tuple(_, fields), ReflectMut::Tuple(t)) => {
                for (index, plan) in fields.iter().enumerate() {
                    plan.read_into(field_mut(t.field_mut(index))?, input, prototypes)?;
                }
                Ok(())
            }
            (Plan::Array(_, item, _), ReflectMut::Array(array)) => {
                for index in 0..array.len() {
                    item.read_into(field_mut(array.get_mut(index))?, input, prototypes)?;
                }
                Ok(())
            }
            (Plan::List(_, item), ReflectMut::List(list)) => {
                item.read_list_into(list, input, prototypes)
            }
            (Plan::Enum(info, variants), ReflectMut::Enum(e)) => {
                let mut peek = *input;
                let index = peek.variant_index().named("variant index")? as usize;
                if index != e.variant_index() || index >= variants.len() {
                    return self.replace_variant(info.type_id(), index, target, input, prototypes);
                }
                *input = peek;
                read_variant_into(&variants[index].shape, e, input, prototypes)
            }
            (Plan::Map(_, entry), ReflectMut::Map(map)) => {
                map.retain(&mut |_, _| false);
                read_map_entries(entry, input, &mut |key, item| {
                    map.insert_boxed(key, item);
                })
            }
            (Plan::Set(_, item), ReflectMut::Set(set)) => {
                let len = input.length(min_size(item)).named("length")?;
                set.retain(&mut |_| false);
                for _ in 0..len {
                    set.insert_boxed(item.read(input)?);
                }
                Ok(())
            }
            // A shape mismatch: read anew and apply over the target.
            _ => {
                let value = self.read(input)?;
                clear_collection(target);
                target
                    .try_apply(value.as_ref())
                    .map_err(|error| error.to_string())
            }
        }
    }
}

impl Plan {
    /// Refills `list` with a stored list of this plan's items, reading over the items it has.
    fn read_list_into(
        &self,
        list: &mut dyn List,
        input: &mut ValueBytes<'_>,
        prototypes: &mut Prototypes,
    ) -> Result<(), String> {
        let len = input.length(min_size(self)).named("length")?;
        while list.len() > len {
            list.pop();
        }
        for index in 0..len {
            match list.get_mut(index) {
                Some(existing) => self.read_into(existing, input, prototypes)?,
                None => self.push_onto(list, input, prototypes)?,
            }
        }
        Ok(())
    }
}

/// Reads the fields of an enum's stored variant over `target`, which holds that variant.
fn read_variant_into(
    shape: &VariantShape,
    target: &mut dyn Enum,
    input: &mut ValueBytes<'_>,
    prototypes: &mut Prototypes,
) -> Result<(), String> {
    let (tuple, named): (&[Plan], &[(&'static str, Plan)]) = match shape {
        VariantShape::Unit => (&[], &[]),
        VariantShape::Tuple(fields) => (&fields[..], &[]),
        VariantShape::Struct(fields) => (&[], &fields[..]),
    };
    let plans = tuple.iter().chain(named.iter().map(|(_, plan)| plan));
    for (index, plan) in plans.enumerate() {
        plan.read_into(field_mut(target.field_at_mut(index))?, input, prototypes)?;
    }
    Ok(())
}

impl Plan {
    /// Reads a list item (this plan) and pushes it onto `list`: over a clone of an item met
    /// earlier when there is one, else built from dynamic values (and kept for the next time).
    /// Leaves are read as concrete values anyway.
    fn push_onto(
        &self,
        list: &mut dyn List,
        input: &mut ValueBytes<'_>,
        prototypes: &mut Prototypes,
    ) -> Result<(), String> {
        let Some(item_type) = self.type_info().map(TypeInfo::type_id) else {
            list.push(self.read(input)?);
            return Ok(());
        };
        if let Some(mut item) = prototypes.item(item_type) {
            self.read_into(item.as_partial_reflect_mut(), input, prototypes)?;
            list.push(item.into_partial_reflect());
            return Ok(());
        }
        list.push(self.read(input)?);
        if let Some(pushed) = list.get(list.len() - 1) {
            prototypes.keep_item(item_type, pushed);
        }
        Ok(())
    }

    /// Reads an enum (this plan) whose stored variant `index` is not the one `target` holds,
    /// and puts it in `target`: over a clone of a value of that variant met earlier when there
    /// is one, else built from dynamic values (and kept for the next time).
    fn replace_variant(
        &self,
        enum_type: TypeId,
        index: usize,
        target: &mut dyn PartialReflect,
        input: &mut ValueBytes<'_>,
        prototypes: &mut Prototypes,
    ) -> Result<(), String> {
        let replacement = prototypes
            .variant(enum_type, index)
            .zip(target.try_as_reflect_mut());
        if let Some((mut value, target)) = replacement {
            self.read_into(value.as_partial_reflect_mut(), input, prototypes)?;
            return target.set(value).map_err(|value| {
                format!(
                    "a {} is not a {}",
                    value.reflect_type_path(),
                    target.reflect_type_path()
                )
            });
        }
        let value = self.read(input)?;
        target
            .try_apply(value.as_ref())
            .map_err(|error| error.to_string())?;
        prototypes.keep_variant(enum_type, index, target);
        Ok(())
    }
}

/// Empties a map or a set, so applying a read one over it leaves only the read entries.
fn clear_collection(target: &mut dyn PartialReflect) {
    use bevy::reflect::ReflectMut;
    match target.reflect_mut() {
        ReflectMut::Map(map) => map.retain(&mut |_, _| false),
        ReflectMut::Set(set) => set.retain(&mut |_| false),
        _ => {}
    }
}

fn field_mut(field: Option<&mut dyn PartialReflect>) -> Result<&mut dyn PartialReflect, String> {
    field.ok_or_else(|| "a field the plan expects is missing".to_owned())
}
