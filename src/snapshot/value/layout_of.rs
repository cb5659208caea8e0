//! The [`TypeLayout`] of a registered type: how its values are written, built from its
//! `TypeInfo` by the rules Bevy's reflection serializer follows with our processors (and which
//! the reflection plan writes the same bytes for). Written into every column of a save, and
//! compared on load with the layout today's type has.
//!
//! The rules, in the order the serializer applies them: a leaf the plan knows (`Entity` as its
//! id, which our processor writes) is a leaf; an asset handle is written by path; a type with
//! its own serde implementation (`ReflectSerialize`, `ReflectSerializeWithRegistry`) writes
//! opaque bytes, described by its reflected layout as a fingerprint; everything else by its
//! structure, leaving out fields marked `#[reflect(skip_serializing)]` as the serializer does.
//!
//! This file depends on nothing of the crate but the engine-free `schema`, so the tool that
//! writes the layouts of an older Bevy (`tools/bevy-layouts`) compiles it against that Bevy.

use super::super::schema::{
    Field, Leaf, MAX_DEPTH, TypeLayout, UNKNOWN_ASSET, Variant, VariantFields,
};
use bevy::asset::{ReflectHandle, UntypedHandle};
use bevy::math::{IVec2, IVec3, IVec4, Quat, UVec2, UVec3, UVec4, Vec2, Vec3, Vec3A, Vec4};
use bevy::prelude::Entity;
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::{ReflectSerialize, TypeInfo, TypeRegistration, TypeRegistry};
use std::any::TypeId;

/// The leaf `type_id` is written as, if it is one.
pub(crate) fn leaf_of(type_id: TypeId) -> Option<Leaf> {
    macro_rules! leaves {
        ($($ty:ty => $leaf:ident),* $(,)?) => {
            $(if type_id == TypeId::of::<$ty>() { return Some(Leaf::$leaf); })*
        };
    }
    leaves!(
        bool => Bool, u8 => U8, u16 => U16, u32 => U32, u64 => U64, u128 => U128,
        usize => Usize, i8 => I8, i16 => I16, i32 => I32, i64 => I64, i128 => I128,
        isize => Isize, f32 => F32, f64 => F64, char => Char, String => String,
        Entity => Entity, Vec2 => Vec2, Vec3 => Vec3, Vec3A => Vec3A, Vec4 => Vec4,
        Quat => Quat, IVec2 => IVec2, IVec3 => IVec3, IVec4 => IVec4, UVec2 => UVec2,
        UVec3 => UVec3, UVec4 => UVec4,
    );
    None
}

/// The layout of a column of `type_id`: its own serde bytes when `serde_encoded` (registered
/// with `register_saveable_serde`) or when it has `ReflectSerialize`, else its structure.
pub(crate) fn column_layout(
    registry: &TypeRegistry,
    type_id: TypeId,
    type_path: &str,
    serde_encoded: bool,
) -> TypeLayout {
    match registry.get(type_id) {
        Some(registration) if serde_encoded => TypeLayout::Serde {
            type_path: type_path.to_owned(),
            reflected: Box::new(structure(registry, registration, 0)),
        },
        _ => describe(registry, type_id, type_path, 0),
    }
}

/// The layout of a value of `type_id` (known as `type_path`) nested `depth` deep.
pub(crate) fn describe(
    registry: &TypeRegistry,
    type_id: TypeId,
    type_path: &str,
    depth: usize,
) -> TypeLayout {
    if let Some(leaf) = leaf_of(type_id) {
        return TypeLayout::Leaf(leaf);
    }
    if type_id == TypeId::of::<UntypedHandle>() {
        return TypeLayout::UntypedHandle;
    }
    let Some(registration) = registry.get(type_id) else {
        return opaque(type_path);
    };
    if registration.data::<ReflectHandle>().is_some() {
        // `Handle<A>`'s one generic names the asset type, registered or not.
        let generics = registration.type_info().generics();
        return TypeLayout::Handle {
            asset_type: generics
                .first()
                .map_or(UNKNOWN_ASSET, |asset| asset.type_path())
                .to_owned(),
        };
    }
    if depth >= MAX_DEPTH {
        return TypeLayout::Deep {
            type_path: type_path.to_owned(),
        };
    }
    if registration.data::<ReflectSerialize>().is_some()
        || registration
            .data::<ReflectSerializeWithRegistry>()
            .is_some()
    {
        return TypeLayout::Serde {
            type_path: type_path.to_owned(),
            reflected: Box::new(structure(registry, registration, depth + 1)),
        };
    }
    structure(registry, registration, depth)
}

fn opaque(type_path: &str) -> TypeLayout {
    TypeLayout::Opaque {
        type_path: type_path.to_owned(),
    }
}

/// The layout of a type's reflected structure, whatever serde implementation it has.
fn structure(registry: &TypeRegistry, registration: &TypeRegistration, depth: usize) -> TypeLayout {
    let info = registration.type_info();
    let child = |type_id: TypeId, path: &str| describe(registry, type_id, path, depth + 1);
    let skipped = registration.data::<SerializationData>();
    let kept = |index: usize| skipped.is_none_or(|data| !data.is_field_skipped(index));
    match info {
        TypeInfo::Struct(info) => TypeLayout::Struct {
            type_path: info.type_path().to_owned(),
            fields: (info.iter().enumerate())
                .filter(|(index, _)| kept(*index))
                .map(|(_, field)| Field {
                    name: field.name().to_owned(),
                    layout: child(field.type_id(), field.type_path()),
                })
                .collect(),
        },
        TypeInfo::TupleStruct(info) => TypeLayout::TupleStruct {
            type_path: info.type_path().to_owned(),
            fields: (info.iter().enumerate())
                .filter(|(index, _)| kept(*index))
                .map(|(_, field)| child(field.type_id(), field.type_path()))
                .collect(),
        },
        TypeInfo::Tuple(info) => TypeLayout::Tuple(
            info.iter()
                .map(|field| child(field.type_id(), field.type_path()))
                .collect(),
        ),
        TypeInfo::List(info) => {
            TypeLayout::List(Box::new(child(info.item_ty().id(), info.item_ty().path())))
        }
        TypeInfo::Array(info) => TypeLayout::Array {
            item: Box::new(child(info.item_ty().id(), info.item_ty().path())),
            len: info.capacity() as u64,
        },
        TypeInfo::Set(info) => TypeLayout::Set(Box::new(child(
            info.value_ty().id(),
            info.value_ty().path(),
        ))),
        TypeInfo::Map(info) => TypeLayout::Map {
            key: Box::new(child(info.key_ty().id(), info.key_ty().path())),
            value: Box::new(child(info.value_ty().id(), info.value_ty().path())),
        },
        TypeInfo::Enum(info) => TypeLayout::Enum {
            type_path: info.type_path().to_owned(),
            variants: info
                .iter()
                .map(|variant| describe_variant(variant, &child))
                .collect(),
        },
        TypeInfo::Opaque(info) => opaque(info.type_path()),
    }
}

fn describe_variant(variant: &VariantInfo, child: &impl Fn(TypeId, &str) -> TypeLayout) -> Variant {
    let fields = match variant {
        VariantInfo::Unit(_) => VariantFields::Unit,
        VariantInfo::Tuple(info) => VariantFields::Tuple(
            info.iter()
                .map(|field| child(field.type_id(), field.type_path()))
                .collect(),
        ),
        VariantInfo::Struct(info) => VariantFields::Struct(
            info.iter()
                .map(|field| Field {
                    name: field.name().to_owned(),
                    layout: child(field.type_id(), field.type_path()),
                })
                .collect(),
        ),
    };
    Variant {
        name: variant.name().to_owned(),
        fields,
    }
}
