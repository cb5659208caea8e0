//! Type-erased operations on registered types: what capture, decode and apply need to do with a
//! type they only know by its registry entry (build its concrete value from a reflected one,
//! decode it with serde, convert it from an older layout, map its entities, insert it),
//! monomorphised once at registration.

use super::blob::ColumnKind;
use super::typed_capture::{CaptureFn, RefreshFn, ValueEncoding, capture_fn, refresh_fn};
use bevy::ecs::component::ComponentId;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, PartialReflect, TypePath};
use std::any::TypeId;

/// Turns a dynamic value (from the reflection deserializer) into the concrete type, if its
/// fields fit.
pub(crate) type FromPartialFn = fn(Box<dyn PartialReflect>) -> Option<Box<dyn Reflect>>;

/// Decodes a value with its type's own serde implementation.
pub(crate) type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, String>;

/// Converts a value of a legacy type into the current type.
pub(crate) type ConvertFn = fn(Box<dyn Reflect>) -> Option<Box<dyn Reflect>>;

/// Operations on one concrete type, monomorphised at registration.
#[derive(Clone, Copy)]
pub(crate) struct TypeOps {
    pub(crate) type_id: TypeId,
    pub(crate) type_path: &'static str,
    pub(crate) from_partial: FromPartialFn,
    /// Set for types registered with `register_saveable_serde`: decode without reflection.
    pub(crate) decode_serde: Option<DecodeFn>,
}

impl TypeOps {
    pub(crate) fn of<T: Reflect + FromReflect + TypePath>() -> Self {
        TypeOps {
            type_id: TypeId::of::<T>(),
            type_path: T::type_path(),
            from_partial: |partial| {
                T::take_from_reflect(partial)
                    .ok()
                    .map(|value| Box::new(value) as Box<dyn Reflect>)
            },
            decode_serde: None,
        }
    }
}

/// Decodes an older schema version of a type and converts it into the current one.
#[derive(Clone, Copy)]
pub(crate) struct LegacyDecoder {
    pub(crate) version: u32,
    pub(crate) ops: TypeOps,
    pub(crate) convert: ConvertFn,
}

impl LegacyDecoder {
    /// Decodes values stored at schema `version` as `Old` and converts them with `From`.
    pub(crate) fn of<Old, New>(version: u32) -> Self
    where
        Old: Reflect + FromReflect + TypePath,
        New: Reflect + From<Old>,
    {
        LegacyDecoder {
            version,
            ops: TypeOps::of::<Old>(),
            convert: |old| {
                old.take::<Old>()
                    .ok()
                    .map(|old| Box::new(New::from(old)) as Box<dyn Reflect>)
            },
        }
    }
}

/// One registered saveable type.
#[derive(Clone)]
pub(crate) struct SaveableEntry {
    pub(crate) ops: TypeOps,
    pub(crate) kind: ColumnKind,
    pub(crate) version: u32,
    pub(crate) legacy: Vec<LegacyDecoder>,
    pub(crate) capture: CaptureFn,
    /// The incremental capture of the type's column (see [`CaptureCache`](super::CaptureCache)).
    pub(crate) refresh: RefreshFn,
    pub(crate) map_entities: fn(&mut dyn Reflect, &mut dyn EntityMapper),
    pub(crate) component_id: fn(&mut World) -> ComponentId,
    pub(crate) insert: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    pub(crate) insert_resource: fn(&mut World, Box<dyn Reflect>),
}

impl SaveableEntry {
    /// The entry for `T` stored as `kind`, its values encoded with `E`, at schema version 1.
    pub(crate) fn new<T, E>(kind: ColumnKind, decode_serde: Option<DecodeFn>) -> Self
    where
        T: Component + Reflect + FromReflect + TypePath,
        E: ValueEncoding<T>,
    {
        SaveableEntry {
            ops: TypeOps {
                decode_serde,
                ..TypeOps::of::<T>()
            },
            kind,
            version: 1,
            legacy: Vec::new(),
            capture: capture_fn::<T, E>(kind),
            refresh: refresh_fn::<T, E>(kind),
            map_entities: |value, mut mapper| {
                if let Some(value) = value.downcast_mut::<T>() {
                    T::map_entities(value, &mut mapper);
                }
            },
            component_id: |world| world.register_component::<T>(),
            insert: |entity, value| {
                if let Ok(value) = value.take::<T>() {
                    entity.insert(value);
                }
            },
            insert_resource: |world, value| {
                let Ok(value) = value.take::<T>() else { return };
                let id = world.register_component::<T>();
                match world.resource_entities().get(id) {
                    Some(entity) => {
                        world.entity_mut(entity).insert(value);
                    }
                    None => {
                        world.spawn(value);
                    }
                }
            },
        }
    }
}
