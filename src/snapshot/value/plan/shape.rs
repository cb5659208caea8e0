//! What a plan is: the shape of a type, built once from its `TypeInfo` (see the module docs of
//! `plan`).

pub(crate) use crate::snapshot::schema::Leaf;
use crate::snapshot::value::layout_of::leaf_of;
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::{ReflectDeserialize, ReflectSerialize, TypeInfo, TypeRegistry};
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
}

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
