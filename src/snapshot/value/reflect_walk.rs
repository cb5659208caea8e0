//! Walking reflected values and type layouts: whether a type can hold some leaf type (an asset
//! handle, an entity), and a depth-first visit of a value with a readable path to each part.
//! Shared by asset handles (what to check, which field cannot be saved) and entity mapping
//! (which field held a reference a load dropped).

use bevy::platform::collections::HashSet;
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::{PartialReflect, ReflectRef, TypeInfo, TypeRegistration, TypeRegistry};
use std::any::TypeId;

/// Whether values of `type_id` can hold a part `is_target` picks (given the part's type and
/// its registration), from the reflected layout; types the registry cannot describe count as
/// "maybe".
pub(crate) fn may_hold(
    registry: &TypeRegistry,
    type_id: TypeId,
    is_target: &dyn Fn(TypeId, Option<&TypeRegistration>) -> bool,
) -> bool {
    may_hold_seen(registry, type_id, is_target, &mut HashSet::new())
}

fn may_hold_seen(
    registry: &TypeRegistry,
    type_id: TypeId,
    is_target: &dyn Fn(TypeId, Option<&TypeRegistration>) -> bool,
    seen: &mut HashSet<TypeId>,
) -> bool {
    let registration = registry.get(type_id);
    if is_target(type_id, registration) {
        return true;
    }
    if !seen.insert(type_id) {
        return false; // recursion: already being looked at
    }
    let Some(registration) = registration else {
        return true;
    };
    let mut inner = |id: TypeId| may_hold_seen(registry, id, is_target, seen);
    match registration.type_info() {
        TypeInfo::Struct(info) => info.iter().any(|field| inner(field.type_id())),
        TypeInfo::TupleStruct(info) => info.iter().any(|field| inner(field.type_id())),
        TypeInfo::Tuple(info) => info.iter().any(|field| inner(field.type_id())),
        TypeInfo::List(info) => inner(info.item_ty().id()),
        TypeInfo::Array(info) => inner(info.item_ty().id()),
        TypeInfo::Set(info) => inner(info.value_ty().id()),
        TypeInfo::Map(info) => inner(info.key_ty().id()) || inner(info.value_ty().id()),
        TypeInfo::Enum(info) => info.iter().any(|variant| match variant {
            VariantInfo::Struct(v) => v.iter().any(|f| inner(f.type_id())),
            VariantInfo::Tuple(v) => v.iter().any(|f| inner(f.type_id())),
            VariantInfo::Unit(_) => false,
        }),
        TypeInfo::Opaque(_) => false,
    }
}

/// What [`walk`] does after visiting a part.
pub(crate) enum Walk {
    /// Visits its fields, items and entries.
    Into,
    /// Goes on with its next sibling.
    Skip,
}

/// Visits `value` and, where `visit` says so, its fields, items and entries, depth first, with a
/// readable path to each (`Looks.layers[2].sprite`, `Ai::Chase.target`, `Stats{"hp"}`).
pub(crate) fn walk(
    path: String,
    value: &dyn PartialReflect,
    visit: &mut impl FnMut(&str, &dyn PartialReflect) -> Walk,
) {
    if let Walk::Skip = visit(&path, value) {
        return;
    }
    match value.reflect_ref() {
        ReflectRef::Struct(s) => {
            for i in 0..s.field_len() {
                if let (Some(name), Some(field)) = (s.name_at(i), s.field_at(i)) {
                    walk(format!("{path}.{name}"), field, visit);
                }
            }
        }
        ReflectRef::TupleStruct(s) => {
            for (i, field) in s.iter_fields().enumerate() {
                walk(format!("{path}.{i}"), field, visit);
            }
        }
        ReflectRef::Tuple(t) => {
            for (i, field) in t.iter_fields().enumerate() {
                walk(format!("{path}.{i}"), field, visit);
            }
        }
        ReflectRef::List(list) => {
            for (i, item) in list.iter().enumerate() {
                walk(format!("{path}[{i}]"), item, visit);
            }
        }
        ReflectRef::Array(array) => {
            for (i, item) in array.iter().enumerate() {
                walk(format!("{path}[{i}]"), item, visit);
            }
        }
        ReflectRef::Map(map) => {
            for (key, item) in map.iter() {
                walk(format!("{path}{{{key:?}}}"), item, visit);
            }
        }
        ReflectRef::Set(set) => {
            for item in set.iter() {
                walk(format!("{path}{{..}}"), item, visit);
            }
        }
        ReflectRef::Enum(e) => {
            let variant = e.variant_name();
            for (i, field) in e.iter_fields().enumerate() {
                let name = field.name().map_or_else(|| i.to_string(), str::to_owned);
                walk(format!("{path}::{variant}.{name}"), field.value(), visit);
            }
        }
        ReflectRef::Opaque(_) => {}
        #[allow(unreachable_patterns)]
        _ => {}
    }
}
