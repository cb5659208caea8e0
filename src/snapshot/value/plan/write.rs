//! The plan's write half: a reflected value's postcard bytes, written directly (the rules of
//! the bytes are `schema::bytes`'s, beside the reader the read half uses).

use super::shape::{Leaf, Plan, VariantShape};
use crate::snapshot::schema::bytes::{
    put_bool, put_f32, put_f64, put_length, put_signed, put_str, put_unsigned, put_variant_index,
};
use bevy::math::{IVec2, IVec3, IVec4, Quat, UVec2, UVec3, UVec4, Vec2, Vec3, Vec3A, Vec4};
use bevy::prelude::*;
use bevy::reflect::map::Map;
use bevy::reflect::{PartialReflect, ReflectRef};

impl Plan {
    /// Appends the postcard bytes of `value`, which must be of the planned type.
    pub(crate) fn write(
        &self,
        value: &dyn PartialReflect,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        // A leaf needs no `reflect_ref` (a virtual call per leaf, and leaves are most calls).
        if let Plan::Leaf(leaf) = self {
            return write_leaf(*leaf, &Reflected(value), out);
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
                put_length(out, list.len());
                write_items(list.iter(), text_fetch(item), |value| {
                    item.write(value, out)
                })
            }
            (Plan::Array(_, item, len), ReflectRef::Array(array)) if array.len() == *len => {
                array.iter().try_for_each(|value| item.write(value, out))
            }
            (Plan::Set(_, item), ReflectRef::Set(set)) => {
                put_length(out, set.len());
                write_items(set.iter(), text_fetch(item), |value| item.write(value, out))
            }
            (Plan::Map(_, entry), ReflectRef::Map(map)) => write_map(entry, map, out),
            (Plan::Enum(_, variants), ReflectRef::Enum(e)) => {
                let index = e.variant_index();
                let variant = variants
                    .get(index)
                    .ok_or_else(|| mismatch(value, "an unknown variant"))?;
                put_variant_index(out, index as u32);
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
    put_length(out, map.len());
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

/// Where [`write_leaf`] takes a leaf's value from: a reflected value ([`Reflected`]), or a
/// flat value's memory (`flat`).
pub(super) trait LeafSource {
    /// The leaf as `T`, the type its `Leaf` names (`leaf_of`'s table).
    fn copied<T: Copy + 'static>(&self) -> Result<T, String>;
    /// A `String` leaf's text.
    fn text(&self) -> Result<&str, String>;
}

/// A leaf given by reflection, downcast to its type.
struct Reflected<'a>(&'a dyn PartialReflect);

impl LeafSource for Reflected<'_> {
    #[inline]
    fn copied<T: Copy + 'static>(&self) -> Result<T, String> {
        self.0
            .try_downcast_ref::<T>()
            .copied()
            .ok_or_else(|| self.expected::<T>())
    }

    fn text(&self) -> Result<&str, String> {
        self.0
            .try_downcast_ref::<String>()
            .map(String::as_str)
            .ok_or_else(|| self.expected::<String>())
    }
}

impl Reflected<'_> {
    fn expected<T>(&self) -> String {
        format!(
            "expected a {} but found a {}",
            std::any::type_name::<T>(),
            self.0.reflect_type_path()
        )
    }
}

/// Writes a leaf as postcard does (the rules are `schema::bytes`'s, beside its reader).
#[inline]
pub(super) fn write_leaf(
    leaf: Leaf,
    value: &impl LeafSource,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match leaf {
        Leaf::Bool => put_bool(out, value.copied::<bool>()?),
        Leaf::U8 => put_unsigned(out, 8, value.copied::<u8>()?.into()),
        Leaf::I8 => put_signed(out, 8, value.copied::<i8>()?.into()),
        Leaf::U16 => put_unsigned(out, 16, value.copied::<u16>()?.into()),
        Leaf::U32 => put_unsigned(out, 32, value.copied::<u32>()?.into()),
        Leaf::U64 => put_unsigned(out, 64, value.copied::<u64>()?.into()),
        Leaf::U128 => put_unsigned(out, 128, value.copied::<u128>()?),
        Leaf::Usize => put_unsigned(out, 64, value.copied::<usize>()? as u128),
        Leaf::I16 => put_signed(out, 16, value.copied::<i16>()?.into()),
        Leaf::I32 => put_signed(out, 32, value.copied::<i32>()?.into()),
        Leaf::I64 => put_signed(out, 64, value.copied::<i64>()?.into()),
        Leaf::I128 => put_signed(out, 128, value.copied::<i128>()?),
        Leaf::Isize => put_signed(out, 64, value.copied::<isize>()? as i128),
        Leaf::F32 => put_f32(out, value.copied::<f32>()?),
        Leaf::F64 => put_f64(out, value.copied::<f64>()?),
        Leaf::Char => put_str(out, value.copied::<char>()?.encode_utf8(&mut [0; 4])),
        Leaf::String => put_str(out, value.text()?),
        Leaf::Entity => put_unsigned(out, 64, value.copied::<Entity>()?.to_bits().into()),
        Leaf::Vec2 => put_f32s(out, &value.copied::<Vec2>()?.to_array()),
        Leaf::Vec3 => put_f32s(out, &value.copied::<Vec3>()?.to_array()),
        Leaf::Vec3A => put_f32s(out, &value.copied::<Vec3A>()?.to_array()),
        Leaf::Vec4 => put_f32s(out, &value.copied::<Vec4>()?.to_array()),
        Leaf::Quat => put_f32s(out, &value.copied::<Quat>()?.to_array()),
        Leaf::IVec2 => put_i32s(out, &value.copied::<IVec2>()?.to_array()),
        Leaf::IVec3 => put_i32s(out, &value.copied::<IVec3>()?.to_array()),
        Leaf::IVec4 => put_i32s(out, &value.copied::<IVec4>()?.to_array()),
        Leaf::UVec2 => put_u32s(out, &value.copied::<UVec2>()?.to_array()),
        Leaf::UVec3 => put_u32s(out, &value.copied::<UVec3>()?.to_array()),
        Leaf::UVec4 => put_u32s(out, &value.copied::<UVec4>()?.to_array()),
    }
    Ok(())
}

fn put_f32s(out: &mut Vec<u8>, values: &[f32]) {
    for &value in values {
        put_f32(out, value);
    }
}

fn put_i32s(out: &mut Vec<u8>, values: &[i32]) {
    for &value in values {
        put_signed(out, 32, value.into());
    }
}

fn put_u32s(out: &mut Vec<u8>, values: &[u32]) {
    for &value in values {
        put_unsigned(out, 32, value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::platform::collections::{HashMap, HashSet};
    use bevy::reflect::TypeRegistry;
    use bevy::reflect::serde::TypedReflectSerializer;
    use std::any::TypeId;

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
