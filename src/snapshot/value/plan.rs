//! The reflection fast path: a per-type *plan* built from `TypeInfo` (field order, the kind of
//! every leaf), walked to write a reflected value's postcard bytes directly and to read them
//! back ([`read`](crate::snapshot::value::plan_read)).
//!
//! Bevy's reflection serializer, for every field of every value, looks the field's type up in
//! the type registry (a hash lookup), asks the processor, then either goes through the type's
//! `ReflectSerialize` (an `erased_serde` trait object, one virtual call per primitive) or walks
//! the field. The plan does the lookups once per type and column: a leaf (primitive, `String`,
//! `Entity`, glam vector or quaternion) is one downcast and a direct write, and a nested struct,
//! enum, list, array, map or set is walked with its fields' plans at hand.
//!
//! The plan writes exactly the bytes the reflection serializer writes into postcard (which are
//! the bytes a serde derive of the same shape writes), so saves do not depend on which path
//! wrote them. A type is left to the reflection serializer (no plan) when it or anything inside
//! it is a type the plan does not know: an opaque type other than the leaves above, a nested
//! type with its own `ReflectSerialize` or `ReflectSerializeWithRegistry` (such as asset
//! handles, whose serialization a processor may override), a struct with
//! `#[reflect(skip_serializing)]` fields, or nesting deeper than [`MAX_DEPTH`] (recursive types).

use super::layout_of::leaf_of;
pub(crate) use crate::snapshot::schema::Leaf;
use bevy::math::{IVec2, IVec3, IVec4, Quat, UVec2, UVec3, UVec4, Vec2, Vec3, Vec3A, Vec4};
use bevy::prelude::*;
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::map::Map;
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::{
    PartialReflect, ReflectDeserialize, ReflectRef, ReflectSerialize, TypeInfo, TypeRegistry,
};
use keepsake_core::wire;
use std::any::TypeId;

/// Plans nest at most this deep; deeper (or recursive) types use the reflection serializer.
pub(crate) const MAX_DEPTH: usize = 24;

/// How one type is written and read, built from its `TypeInfo`.
#[derive(Clone, Debug)]
pub(crate) enum Plan {
    Leaf(Leaf),
    /// A struct: its fields in declaration order, `(name, plan)`.
    Struct(&'static TypeInfo, Box<[(&'static str, Plan)]>),
    /// A tuple struct's fields in order.
    TupleStruct(&'static TypeInfo, Box<[Plan]>),
    /// A tuple's fields in order.
    Tuple(&'static TypeInfo, Box<[Plan]>),
    /// A list (`Vec`, `VecDeque`...): a length, then the items.
    List(&'static TypeInfo, Box<Plan>),
    /// An array `[T; N]`: the `N` items, no length.
    Array(&'static TypeInfo, Box<Plan>, usize),
    /// A set: a length, then the items.
    Set(&'static TypeInfo, Box<Plan>),
    /// A map: a length, then key and value of each entry.
    Map(&'static TypeInfo, Box<(Plan, Plan)>),
    /// An enum: the variant index, then that variant's fields.
    Enum(&'static TypeInfo, Box<[VariantPlan]>),
}

/// One variant of an enum.
#[derive(Clone, Debug)]
pub(crate) struct VariantPlan {
    pub(crate) name: &'static str,
    pub(crate) shape: VariantShape,
}

/// The fields of an enum variant.
#[derive(Clone, Debug)]
pub(crate) enum VariantShape {
    Unit,
    Tuple(Box<[Plan]>),
    Struct(Box<[(&'static str, Plan)]>),
}

impl Plan {
    /// The planned type, for every plan but a leaf.
    pub(crate) fn type_info(&self) -> Option<&'static TypeInfo> {
        match self {
            Plan::Leaf(_) => None,
            Plan::Struct(info, _)
            | Plan::TupleStruct(info, _)
            | Plan::Tuple(info, _)
            | Plan::List(info, _)
            | Plan::Array(info, ..)
            | Plan::Set(info, _)
            | Plan::Map(info, _)
            | Plan::Enum(info, _) => Some(info),
        }
    }

    /// The plan of `type_id` as the top-level type of a column, or `None` when the reflection
    /// serializer must write it (see the module docs).
    pub(crate) fn for_type(registry: &TypeRegistry, type_id: TypeId) -> Option<Plan> {
        let registration = registry.get(type_id)?;
        if registration.data::<ReflectSerialize>().is_some()
            || registration.data::<ReflectDeserialize>().is_some()
        {
            return None;
        }
        Plan::build(registry, type_id, 0)
    }

    fn build(registry: &TypeRegistry, type_id: TypeId, depth: usize) -> Option<Plan> {
        if let Some(leaf) = leaf_of(type_id) {
            return Some(Plan::Leaf(leaf));
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        let registration = registry.get(type_id)?;
        let custom = registration.data::<ReflectSerialize>().is_some()
            || registration.data::<ReflectDeserialize>().is_some()
            || registration
                .data::<ReflectSerializeWithRegistry>()
                .is_some()
            || registration.data::<SerializationData>().is_some();
        if custom {
            return None;
        }
        let child = |id: TypeId| Plan::build(registry, id, depth + 1);
        let type_info = registration.type_info();
        let plan = match type_info {
            TypeInfo::Struct(info) => Plan::Struct(
                type_info,
                info.iter()
                    .map(|field| Some((field.name(), child(field.type_id())?)))
                    .collect::<Option<_>>()?,
            ),
            TypeInfo::TupleStruct(info) => Plan::TupleStruct(
                type_info,
                info.iter()
                    .map(|field| child(field.type_id()))
                    .collect::<Option<_>>()?,
            ),
            TypeInfo::Tuple(info) => Plan::Tuple(
                type_info,
                info.iter()
                    .map(|field| child(field.type_id()))
                    .collect::<Option<_>>()?,
            ),
            TypeInfo::List(info) => Plan::List(type_info, Box::new(child(info.item_ty().id())?)),
            TypeInfo::Array(info) => Plan::Array(
                type_info,
                Box::new(child(info.item_ty().id())?),
                info.capacity(),
            ),
            TypeInfo::Set(info) => Plan::Set(type_info, Box::new(child(info.value_ty().id())?)),
            TypeInfo::Map(info) => Plan::Map(
                type_info,
                Box::new((child(info.key_ty().id())?, child(info.value_ty().id())?)),
            ),
            TypeInfo::Enum(info) => Plan::Enum(
                type_info,
                info.iter()
                    .map(|variant| variant_plan(variant, &child))
                    .collect::<Option<_>>()?,
            ),
            TypeInfo::Opaque(_) => return None,
        };
        Some(plan)
    }

    /// Appends the postcard bytes of `value`, which must be of the planned type.
    pub(crate) fn write(
        &self,
        value: &dyn PartialReflect,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        // A leaf needs no `reflect_ref` (a virtual call per leaf, and leaves are most calls).
        if let Plan::Leaf(leaf) = self {
            return write_leaf(*leaf, value, out);
        }
        match (self, value.reflect_ref()) {
            (Plan::Struct(_, fields), ReflectRef::Struct(s)) if s.field_len() == fields.len() => {
                for (index, (_, plan)) in fields.iter().enumerate() {
                    plan.write(field(s.field_at(index), value)?, out)?;
                }
                Ok(())
            }
            (Plan::TupleStruct(_, fields), ReflectRef::TupleStruct(s))
                if s.field_len() == fields.len() =>
            {
                for (index, plan) in fields.iter().enumerate() {
                    plan.write(field(s.field(index), value)?, out)?;
                }
                Ok(())
            }
            (Plan::Tuple(_, fields), ReflectRef::Tuple(t)) if t.field_len() == fields.len() => {
                for (index, plan) in fields.iter().enumerate() {
                    plan.write(field(t.field(index), value)?, out)?;
                }
                Ok(())
            }
            (Plan::List(_, item), ReflectRef::List(list)) => {
                write_varint(out, list.len() as u128);
                write_items(list.iter(), text_fetch(item), |value| {
                    item.write(value, out)
                })
            }
            (Plan::Array(_, item, len), ReflectRef::Array(array)) if array.len() == *len => {
                array.iter().try_for_each(|value| item.write(value, out))
            }
            (Plan::Set(_, item), ReflectRef::Set(set)) => {
                write_varint(out, set.len() as u128);
                write_items(set.iter(), text_fetch(item), |value| item.write(value, out))
            }
            (Plan::Map(_, entry), ReflectRef::Map(map)) => write_map(entry, map, out),
            (Plan::Enum(_, variants), ReflectRef::Enum(e)) => {
                let index = e.variant_index();
                let variant = variants
                    .get(index)
                    .ok_or_else(|| mismatch(value, "an unknown variant"))?;
                write_varint(out, index as u128);
                match &variant.shape {
                    VariantShape::Unit => Ok(()),
                    VariantShape::Tuple(fields) => {
                        for (index, plan) in fields.iter().enumerate() {
                            plan.write(field(e.field_at(index), value)?, out)?;
                        }
                        Ok(())
                    }
                    VariantShape::Struct(fields) => {
                        for (index, (_, plan)) in fields.iter().enumerate() {
                            plan.write(field(e.field_at(index), value)?, out)?;
                        }
                        Ok(())
                    }
                }
            }
            _ => Err(mismatch(value, "a value of another shape")),
        }
    }
}

/// Writes a map: its length, then each entry's key and value (`entry` holds their plans).
fn write_map(entry: &(Plan, Plan), map: &dyn Map, out: &mut Vec<u8>) -> Result<(), String> {
    write_varint(out, map.len() as u128);
    let (key_plan, value_plan) = entry;
    let fetch = match (text_fetch(key_plan), text_fetch(value_plan)) {
        (None, None) => None,
        (key_text, value_text) => Some(move |(key, value)| {
            if let Some(fetch) = key_text {
                fetch(key);
            }
            if let Some(fetch) = value_text {
                fetch(value);
            }
        }),
    };
    write_items(map.iter(), fetch, |(key, value)| {
        key_plan.write(key, out)?;
        value_plan.write(value, out)
    })
}

/// How many items of a list, set or map [`write_items`] fetches ahead of writing them.
const FETCH_AHEAD: usize = 16;

/// Writes a container's items (a map's entries); with a `fetch`, in batches of
/// [`FETCH_AHEAD`], each batch passed to `fetch` before any of it is written.
///
/// Why: a string's text is an allocation of its own, so writing a map of strings or a
/// `Vec<String>` that is not in the caches waits for one memory read per string, one after
/// the other (profiled: two fifths of re-encoding the changed maps of strings of a 100k-entity
/// world went to copying their text). Asking for every text of a batch before writing any lets
/// those reads overlap: about a tenth off re-encoding those maps. (Reading each text's first
/// byte instead, which is portable, gained nothing: each such load still held the loop up.)
fn write_items<T: Copy>(
    mut items: impl Iterator<Item = T>,
    fetch: Option<impl Fn(T)>,
    mut write: impl FnMut(T) -> Result<(), String>,
) -> Result<(), String> {
    let Some(fetch) = fetch else {
        return items.try_for_each(write);
    };
    let mut items = items.peekable();
    let mut batch: [Option<T>; FETCH_AHEAD] = [None; FETCH_AHEAD];
    while items.peek().is_some() {
        for (slot, item) in batch.iter_mut().zip(items.by_ref()) {
            fetch(item);
            *slot = Some(item);
        }
        for item in batch.iter_mut().map_while(Option::take) {
            write(item)?;
        }
    }
    Ok(())
}

/// What [`write_items`] does ahead with the items a plan writes: ask for each string's text
/// ([`prefetch`]), so that it is on its way to the caches when it is copied. Other items:
/// nothing.
fn text_fetch(plan: &Plan) -> Option<fn(&dyn PartialReflect)> {
    match plan {
        Plan::Leaf(Leaf::String) => Some(|value| {
            if let Some(text) = value.try_downcast_ref::<String>() {
                prefetch(text.as_ptr());
            }
        }),
        _ => None,
    }
}

/// Asks for the cache line at `address` without waiting for it.
#[cfg(target_arch = "x86_64")]
fn prefetch(address: *const u8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: a prefetch is a hint: it reads nothing into the program and cannot fault, whatever
    // the address (SSE, which `_mm_prefetch` needs, is part of every x86_64 processor).
    unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) }
}

/// Elsewhere the hint is left out (stable Rust has no portable prefetch).
#[cfg(not(target_arch = "x86_64"))]
fn prefetch(_: *const u8) {}

fn variant_plan(
    variant: &VariantInfo,
    child: &impl Fn(TypeId) -> Option<Plan>,
) -> Option<VariantPlan> {
    let shape = match variant {
        VariantInfo::Unit(_) => VariantShape::Unit,
        VariantInfo::Tuple(info) => VariantShape::Tuple(
            info.iter()
                .map(|field| child(field.type_id()))
                .collect::<Option<_>>()?,
        ),
        VariantInfo::Struct(info) => VariantShape::Struct(
            info.iter()
                .map(|field| Some((field.name(), child(field.type_id())?)))
                .collect::<Option<_>>()?,
        ),
    };
    Some(VariantPlan {
        name: variant.name(),
        shape,
    })
}

fn field<'a>(
    field: Option<&'a dyn PartialReflect>,
    parent: &dyn PartialReflect,
) -> Result<&'a dyn PartialReflect, String> {
    field.ok_or_else(|| mismatch(parent, "a missing field"))
}

fn mismatch(value: &dyn PartialReflect, found: &str) -> String {
    format!(
        "the reflection plan of {} met {found}",
        value.reflect_type_path()
    )
}

fn downcast<T: 'static>(value: &dyn PartialReflect) -> Result<&T, String> {
    value.try_downcast_ref::<T>().ok_or_else(|| {
        format!(
            "expected a {} but found a {}",
            std::any::type_name::<T>(),
            value.reflect_type_path()
        )
    })
}

/// Writes a leaf as postcard does: varints for wider integers (zigzag when signed), raw bytes
/// for `u8`/`i8`/`bool`, little-endian floats, length-prefixed UTF-8 for text.
fn write_leaf(leaf: Leaf, value: &dyn PartialReflect, out: &mut Vec<u8>) -> Result<(), String> {
    match leaf {
        Leaf::Bool => out.push(u8::from(*downcast::<bool>(value)?)),
        Leaf::U8 => out.push(*downcast::<u8>(value)?),
        Leaf::I8 => out.push(*downcast::<i8>(value)? as u8),
        Leaf::U16 => write_varint(out, (*downcast::<u16>(value)?).into()),
        Leaf::U32 => write_varint(out, (*downcast::<u32>(value)?).into()),
        Leaf::U64 => write_varint(out, (*downcast::<u64>(value)?).into()),
        Leaf::U128 => write_varint(out, *downcast::<u128>(value)?),
        Leaf::Usize => write_varint(out, *downcast::<usize>(value)? as u128),
        Leaf::I16 => write_signed(out, (*downcast::<i16>(value)?).into()),
        Leaf::I32 => write_signed(out, (*downcast::<i32>(value)?).into()),
        Leaf::I64 => write_signed(out, (*downcast::<i64>(value)?).into()),
        Leaf::I128 => write_signed(out, *downcast::<i128>(value)?),
        Leaf::Isize => write_signed(out, *downcast::<isize>(value)? as i128),
        Leaf::F32 => out.extend_from_slice(&downcast::<f32>(value)?.to_le_bytes()),
        Leaf::F64 => out.extend_from_slice(&downcast::<f64>(value)?.to_le_bytes()),
        Leaf::Char => write_str(out, downcast::<char>(value)?.encode_utf8(&mut [0; 4])),
        Leaf::String => write_str(out, downcast::<String>(value)?),
        Leaf::Entity => write_varint(out, downcast::<Entity>(value)?.to_bits().into()),
        Leaf::Vec2 => write_f32s(out, &downcast::<Vec2>(value)?.to_array()),
        Leaf::Vec3 => write_f32s(out, &downcast::<Vec3>(value)?.to_array()),
        Leaf::Vec3A => write_f32s(out, &downcast::<Vec3A>(value)?.to_array()),
        Leaf::Vec4 => write_f32s(out, &downcast::<Vec4>(value)?.to_array()),
        Leaf::Quat => write_f32s(out, &downcast::<Quat>(value)?.to_array()),
        Leaf::IVec2 => write_i32s(out, &downcast::<IVec2>(value)?.to_array()),
        Leaf::IVec3 => write_i32s(out, &downcast::<IVec3>(value)?.to_array()),
        Leaf::IVec4 => write_i32s(out, &downcast::<IVec4>(value)?.to_array()),
        Leaf::UVec2 => write_u32s(out, &downcast::<UVec2>(value)?.to_array()),
        Leaf::UVec3 => write_u32s(out, &downcast::<UVec3>(value)?.to_array()),
        Leaf::UVec4 => write_u32s(out, &downcast::<UVec4>(value)?.to_array()),
    }
    Ok(())
}

fn write_varint(out: &mut Vec<u8>, value: u128) {
    wire::put_varint_u128(out, value);
}

fn write_signed(out: &mut Vec<u8>, value: i128) {
    wire::put_varint_u128(out, wire::zigzag_i128(value));
}

fn write_str(out: &mut Vec<u8>, text: &str) {
    write_varint(out, text.len() as u128);
    out.extend_from_slice(text.as_bytes());
}

fn write_f32s(out: &mut Vec<u8>, values: &[f32]) {
    for value in values {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn write_i32s(out: &mut Vec<u8>, values: &[i32]) {
    for &value in values {
        write_signed(out, value.into());
    }
}

fn write_u32s(out: &mut Vec<u8>, values: &[u32]) {
    for &value in values {
        write_varint(out, value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::platform::collections::{HashMap, HashSet};
    use bevy::reflect::serde::TypedReflectSerializer;

    #[derive(Reflect)]
    struct Texts {
        lines: Vec<String>,
        counts: HashMap<String, u32>,
        names: HashSet<String>,
        by_id: HashMap<u32, String>,
        pages: Vec<Vec<String>>,
        numbers: Vec<u32>,
    }

    fn texts(len: usize) -> Texts {
        let text = |n: usize| format!("text {n} {}", "x".repeat(n % 40));
        Texts {
            lines: (0..len).map(text).collect(),
            counts: (0..len).map(|n| (text(n), n as u32)).collect(),
            names: (0..len).map(text).collect(),
            by_id: (0..len).map(|n| (n as u32, text(n))).collect(),
            pages: (0..len % 5).map(|_| (0..len).map(text).collect()).collect(),
            numbers: (0..len as u32).collect(),
        }
    }

    /// Strings are fetched ahead in batches (`write_items`): containers of strings shorter than,
    /// as long as and longer than a batch, ending in a full or a partial batch, are written as
    /// Bevy's reflection serializer writes them.
    #[test]
    fn containers_of_strings_of_any_length_write_the_reflection_serializers_bytes() {
        let mut registry = TypeRegistry::default();
        registry.register::<Texts>();
        let plan = Plan::for_type(&registry, TypeId::of::<Texts>()).expect("Texts has a plan");
        let batch = FETCH_AHEAD;
        for len in [0, 1, batch - 1, batch, batch + 1, 2 * batch, 3 * batch + 5] {
            let value = texts(len);
            let mut ours = Vec::new();
            plan.write(&value, &mut ours).unwrap();
            let serializer = TypedReflectSerializer::new(&value, &registry);
            assert_eq!(
                ours,
                postcard::to_allocvec(&serializer).unwrap(),
                "{len} items"
            );
        }
    }
}
