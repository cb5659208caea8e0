//! A registered type's entry: what capture, decode and apply need to do with a type they only
//! know by its registry entry (walk its column, build and decode its values, convert them from
//! an older layout, map their entities, insert them), monomorphised once at registration, the
//! way `ReflectComponent` is a table of function pointers built once.

use super::walk::{RefreshFn, refresh_fn};
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::value::{TypeOps, ValueEncoding};
use bevy::ecs::component::ComponentId;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, TypePath, TypeRegistry};
use std::sync::{Arc, OnceLock};

/// Converts a value of a legacy type into the current type.
pub(crate) type ConvertFn = fn(Box<dyn Reflect>) -> Option<Box<dyn Reflect>>;

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
    /// The capture of the type's column (see [`CaptureCache`](crate::snapshot::CaptureCache)).
    pub(crate) refresh: RefreshFn,
    pub(crate) map_entities: fn(&mut dyn Reflect, &mut dyn EntityMapper),
    pub(crate) component_id: fn(&mut World) -> ComponentId,
    pub(crate) insert: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    pub(crate) insert_resource: fn(&mut World, Box<dyn Reflect>),
    /// The type's layout, encoded on first use and shared by the registry's clones: every save
    /// writes it and every load compares it, and describing a type walks its whole `TypeInfo`.
    /// Types are registered at startup, before the first save or load builds it.
    layout: Arc<OnceLock<Arc<[u8]>>>,
}

impl SaveableEntry {
    /// The entry for `T` stored as `kind`, its values encoded (and decoded) with `E`, at schema
    /// version 1.
    pub(crate) fn new<T, E>(kind: ColumnKind) -> Self
    where
        T: Component + Reflect + FromReflect + TypePath,
        E: ValueEncoding<T>,
    {
        SaveableEntry {
            ops: TypeOps {
                decode_serde: E::DECODE,
                ..TypeOps::of::<T>()
            },
            kind,
            version: 1,
            legacy: Vec::new(),
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
            layout: Arc::default(),
        }
    }

    /// The type's layout as a save writes it (see [`layout`](Self::layout)).
    pub(crate) fn layout_bytes(&self, types: &TypeRegistry) -> Arc<[u8]> {
        let bytes = self
            .layout
            .get_or_init(|| self.ops.layout(types).to_bytes().into());
        bytes.clone()
    }
}
