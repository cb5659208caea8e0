//! A registered type's `Entity` fields: how a load remaps them ([`EntityMapping`], chosen once
//! per type), and which ones it would not ([`unmapped_entity_fields`], named in a warning when
//! the type is registered).
//!
//! Which fields a type's own mapping reaches is code, not layout (`#[entities]` expands into
//! `Component::map_entities`), so it is tried rather than read: a *probe* value is built from
//! the type's reflected layout with a distinct marker entity in every `Entity` it can hold (one
//! item in each list, map and set, the `Some` of each `Option`, each entity-holding variant of
//! an enum in turn), mapped the way a load maps it, and every marker still in place is a field
//! a load would leave naming the saving world's entity. A type no probe can be built for (a
//! field of an opaque type without `#[reflect(Default)]`, a type nested deeper than
//! [`MAX_DEPTH`]) is not reported: the check says nothing rather than something wrong.

use super::entry::SaveableEntry;
use crate::snapshot::value::reflect_walk::{Walk, may_hold, walk};
use bevy::ecs::entity::{EntityHashSet, EntityMapper};
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;
use bevy::reflect::array::DynamicArray;
use bevy::reflect::enums::{DynamicEnum, DynamicVariant, EnumInfo, VariantInfo};
use bevy::reflect::list::DynamicList;
use bevy::reflect::map::{DynamicMap, Map};
use bevy::reflect::set::{DynamicSet, Set};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::structs::DynamicStruct;
use bevy::reflect::tuple::DynamicTuple;
use bevy::reflect::tuple_struct::DynamicTupleStruct;
use bevy::reflect::{NamedField, PartialReflect, TypeInfo, TypeRegistration, TypeRegistry};
use std::any::TypeId;

/// How a load remaps the `Entity` references in a registered type's values.
#[derive(Clone)]
pub(crate) enum EntityMapping {
    /// Its values cannot hold an entity: nothing to map (most types: skipping them matters at
    /// a million values).
    Nothing,
    /// Through `ReflectMapEntities` (`#[reflect(MapEntities)]`): the one way into the entities
    /// of an opaque type, whose layout shows none.
    Reflected(ReflectMapEntities),
    /// Through the component's own `Component::map_entities`: its `#[entities]` fields,
    /// `#[component(map_entities)]`, a relationship's target. Never both this and
    /// [`Reflected`](Self::Reflected), which would map twice.
    Component(fn(&mut dyn Reflect, &mut dyn EntityMapper)),
}

impl EntityMapping {
    /// The mapping of `entry`'s type; without a type registry, its component mapping (the
    /// layout cannot tell that it holds no entity).
    pub(crate) fn of(types: Option<&TypeRegistry>, entry: &SaveableEntry) -> Self {
        let Some(types) = types else {
            return EntityMapping::Component(entry.map_entities);
        };
        let type_id = entry.ops.type_id;
        if let Some(reflected) = types.get_type_data::<ReflectMapEntities>(type_id) {
            return EntityMapping::Reflected(reflected.clone());
        }
        if holds_entities(types, type_id) {
            EntityMapping::Component(entry.map_entities)
        } else {
            EntityMapping::Nothing
        }
    }

    /// Whether the type's values can hold an entity.
    pub(crate) fn holds_entities(&self) -> bool {
        !matches!(self, EntityMapping::Nothing)
    }

    /// Remaps `value`'s entity references through `mapper`.
    pub(crate) fn map(&self, value: &mut dyn Reflect, mapper: &mut dyn EntityMapper) {
        match self {
            EntityMapping::Nothing => {}
            EntityMapping::Reflected(reflected) => {
                reflected.map_entities(value.as_partial_reflect_mut(), mapper);
            }
            EntityMapping::Component(map) => map(value, mapper),
        }
    }
}

/// Whether values of `type_id` can hold an entity: an `Entity` in their layout, or a part
/// whose type maps entities through reflection (an opaque type's entities are not in its
/// layout).
fn holds_entities(types: &TypeRegistry, type_id: TypeId) -> bool {
    may_hold(types, type_id, &|id, registration| {
        id == TypeId::of::<Entity>()
            || registration.is_some_and(|r| r.data::<ReflectMapEntities>().is_some())
    })
}

/// An `Entity` in a registered type's values that a load does not remap: after a load it
/// still holds the saving world's id, which names another entity, or none.
#[derive(Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct UnmappedEntityField {
    /// The registered type.
    pub type_path: String,
    /// The field, from the type: `my_game::Game.player.entity::Some.0`, `my_game::Roster.members[0]`.
    pub field: String,
}

impl std::fmt::Display for UnmappedEntityField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (field, owner) = (&self.field, &self.type_path);
        write!(
            f,
            "{field} holds an Entity that a load does not remap: after a load it names \
             whatever entity has the saved id, if any. To remap it, mark each field on the way \
             to it #[entities] and derive MapEntities (use bevy::ecs::entity::MapEntities) on \
             each struct holding such a field (a component's own derive declares #[entities]; \
             a resource's does not); or implement MapEntities for {owner} and add \
             #[reflect(MapEntities)] (use bevy::ecs::reflect::ReflectMapEntities)"
        )
    }
}

/// The `Entity` fields of `entry`'s type that a load would not remap (see the
/// [module docs](self)), in the type's field order.
pub(crate) fn unmapped_entity_fields(
    types: &TypeRegistry,
    entry: &SaveableEntry,
) -> Vec<UnmappedEntityField> {
    let mapping = EntityMapping::of(Some(types), entry);
    let type_id = entry.ops.type_id;
    if !mapping.holds_entities() || !may_hold(types, type_id, &|id, _| is_entity(id)) {
        return Vec::new();
    }
    let mut fields: Vec<String> = Vec::new();
    for variant in 0..MAX_VARIANTS {
        let mut probe = Probe::new(types, variant);
        let Some(dynamic) = probe.build(type_id, 0) else {
            return Vec::new();
        };
        let Some(mut value) = (entry.ops.from_partial)(dynamic) else {
            return Vec::new();
        };
        mapping.map(value.as_mut(), &mut Remarking(0));
        for field in probe.left_in(entry.ops.type_path, value.as_partial_reflect()) {
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
        if !probe.more_variants {
            break;
        }
    }
    let type_path = entry.ops.type_path.to_owned();
    let field = |field| UnmappedEntityField {
        type_path: type_path.clone(),
        field,
    };
    fields.into_iter().map(field).collect()
}

/// How deep a probe goes into nested types before it gives up (a recursive type, such as a
/// tree of `Vec<Self>`, would go on forever).
const MAX_DEPTH: usize = 12;

/// How many probes a type gets at most, one per entity-holding variant of its enums.
const MAX_VARIANTS: usize = 16;

/// The first marker's index: far above the entities of a world registration runs in.
const FIRST_MARKER: u32 = 0x4000_0000;

/// The first index a mapped marker gets, each a different one (so a map keyed by entities
/// keeps its entries apart).
const FIRST_MAPPED: u32 = 0x6000_0000;

fn is_entity(type_id: TypeId) -> bool {
    type_id == TypeId::of::<Entity>()
}

/// Builds one probe value and remembers its markers.
struct Probe<'a> {
    types: &'a TypeRegistry,
    /// Which entity-holding variant each enum takes: the `variant`-th, or its last.
    variant: usize,
    /// Whether some enum has more entity-holding variants than this probe took.
    more_variants: bool,
    markers: EntityHashSet,
}

/// The longest array the probe builds (see [`Probe::build`]).
const MAX_ARRAY_PROBE: usize = 64;

/// `key` when it can be hashed: a dynamic map or set panics on a key that cannot (a
/// `DynamicStruct` or `DynamicTuple` built for a key type, a key type without
/// `#[reflect(Hash)]`), and the probe gives up on it instead.
fn hashable(key: Box<dyn PartialReflect>) -> Option<Box<dyn PartialReflect>> {
    key.reflect_hash().is_some().then_some(key)
}

impl<'a> Probe<'a> {
    fn new(types: &'a TypeRegistry, variant: usize) -> Self {
        Probe {
            types,
            variant,
            more_variants: false,
            markers: EntityHashSet::default(),
        }
    }

    /// A value of `type_id` with a marker in every entity it can hold; `None` when one cannot
    /// be built.
    fn build(&mut self, type_id: TypeId, depth: usize) -> Option<Box<dyn PartialReflect>> {
        if is_entity(type_id) {
            return Some(Box::new(self.marker()?));
        }
        if depth > MAX_DEPTH {
            return None;
        }
        let registration = self.types.get(type_id)?;
        if !may_hold(self.types, type_id, &|id, _| is_entity(id))
            && let Some(default) = default_of(registration)
        {
            return Some(default);
        }
        let depth = depth + 1;
        match registration.type_info() {
            TypeInfo::Struct(info) => self.named(info.iter(), depth).map(boxed),
            TypeInfo::TupleStruct(info) => {
                let mut value = DynamicTupleStruct::default();
                for field in info.iter() {
                    value.insert_boxed(self.build(field.type_id(), depth)?);
                }
                Some(Box::new(value))
            }
            TypeInfo::Tuple(info) => {
                let ids = info.iter().map(|field| field.type_id());
                self.tuple(ids, depth).map(boxed)
            }
            TypeInfo::List(info) => {
                let mut value = DynamicList::default();
                value.push_box(self.build(info.item_ty().id(), depth)?);
                Some(Box::new(value))
            }
            // A large array would be built in full (a million boxed values for a
            // 1024 x 1024 grid): the probe gives up instead.
            TypeInfo::Array(info) if info.capacity() > MAX_ARRAY_PROBE => None,
            TypeInfo::Array(info) => {
                let items = (0..info.capacity()).map(|_| self.build(info.item_ty().id(), depth));
                let items: Option<Vec<_>> = items.collect();
                Some(Box::new(DynamicArray::new(items?.into_boxed_slice())))
            }
            TypeInfo::Map(info) => {
                let mut value = DynamicMap::default();
                let key = hashable(self.build(info.key_ty().id(), depth)?)?;
                value.insert_boxed(key, self.build(info.value_ty().id(), depth)?);
                Some(Box::new(value))
            }
            TypeInfo::Set(info) => {
                let mut value = DynamicSet::default();
                value.insert_boxed(hashable(self.build(info.value_ty().id(), depth)?)?);
                Some(Box::new(value))
            }
            TypeInfo::Enum(info) => self.enumeration(info, depth).map(boxed),
            TypeInfo::Opaque(_) => default_of(registration),
        }
    }

    fn named<'f>(
        &mut self,
        fields: impl Iterator<Item = &'f NamedField>,
        depth: usize,
    ) -> Option<DynamicStruct> {
        let mut value = DynamicStruct::default();
        for field in fields {
            value.insert_boxed(field.name(), self.build(field.type_id(), depth)?);
        }
        Some(value)
    }

    fn tuple(&mut self, ids: impl Iterator<Item = TypeId>, depth: usize) -> Option<DynamicTuple> {
        let mut value = DynamicTuple::default();
        for id in ids {
            value.insert_boxed(self.build(id, depth)?);
        }
        Some(value)
    }

    /// The probe's variant of an enum: among those that can hold an entity, the `variant`-th
    /// (its last when it has fewer); the first variant when none can.
    fn enumeration(&mut self, info: &EnumInfo, depth: usize) -> Option<DynamicEnum> {
        let holding: Vec<&VariantInfo> = (info.iter())
            .filter(|variant| self.variant_holds_entities(variant))
            .collect();
        let chosen = match holding.len() {
            0 => info.variant_at(0)?,
            n => {
                self.more_variants |= self.variant + 1 < n;
                holding[self.variant.min(n - 1)]
            }
        };
        let variant = match chosen {
            VariantInfo::Unit(_) => DynamicVariant::Unit,
            VariantInfo::Tuple(v) => {
                let ids = v.iter().map(|field| field.type_id());
                DynamicVariant::Tuple(self.tuple(ids, depth)?)
            }
            VariantInfo::Struct(v) => DynamicVariant::Struct(self.named(v.iter(), depth)?),
        };
        Some(DynamicEnum::new(chosen.name(), variant))
    }

    fn variant_holds_entities(&self, variant: &VariantInfo) -> bool {
        let holds = |id| may_hold(self.types, id, &|id, _| is_entity(id));
        match variant {
            VariantInfo::Unit(_) => false,
            VariantInfo::Tuple(v) => v.iter().any(|field| holds(field.type_id())),
            VariantInfo::Struct(v) => v.iter().any(|field| holds(field.type_id())),
        }
    }

    /// A new marker entity.
    fn marker(&mut self) -> Option<Entity> {
        let index = FIRST_MARKER.checked_add(u32::try_from(self.markers.len()).ok()?)?;
        let marker = Entity::from_raw_u32(index)?;
        self.markers.insert(marker);
        Some(marker)
    }

    /// The fields of `value` (the probe, mapped) that still hold one of its markers.
    fn left_in(&self, type_path: &str, value: &dyn PartialReflect) -> Vec<String> {
        let mut left = Vec::new();
        walk(type_path.to_owned(), value, &mut |path, part| {
            let Some(entity) = part.try_downcast_ref::<Entity>() else {
                return Walk::Into;
            };
            if self.markers.contains(entity) {
                left.push(path.to_owned());
            }
            Walk::Skip
        });
        left
    }
}

fn boxed(value: impl PartialReflect) -> Box<dyn PartialReflect> {
    Box::new(value)
}

/// The type's `#[reflect(Default)]` value.
fn default_of(registration: &TypeRegistration) -> Option<Box<dyn PartialReflect>> {
    let default = registration.data::<ReflectDefault>()?.default();
    Some(default.into_partial_reflect())
}

/// Maps every entity to a new one, each to a different one: whatever the mapping reached no
/// longer holds its marker.
struct Remarking(u32);

impl EntityMapper for Remarking {
    fn get_mapped(&mut self, _source: Entity) -> Entity {
        self.0 += 1;
        Entity::from_raw_u32(FIRST_MAPPED.saturating_add(self.0)).unwrap_or(Entity::PLACEHOLDER)
    }

    fn set_mapped(&mut self, _source: Entity, _target: Entity) {}
}
