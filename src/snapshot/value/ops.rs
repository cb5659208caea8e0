//! What the value readers need to know of a concrete type they only know by its registry entry:
//! its identity, how to build it from a dynamic value, and its own serde decoder when it has
//! one; monomorphised once at registration.

use bevy::prelude::*;
use bevy::reflect::{FromReflect, PartialReflect, TypePath};
use std::any::TypeId;

/// Turns a dynamic value (from the reflection deserializer) into the concrete type, if its
/// fields fit.
pub(crate) type FromPartialFn = fn(Box<dyn PartialReflect>) -> Option<Box<dyn Reflect>>;

/// Decodes a value with its type's own serde implementation.
pub(crate) type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, String>;

/// Operations on one concrete type, monomorphised at registration.
#[derive(Clone, Copy)]
pub(crate) struct TypeOps {
    pub(crate) type_id: TypeId,
    pub(crate) type_path: &'static str,
    pub(crate) from_partial: FromPartialFn,
    /// Set for types registered with `register_saveable_serde`: decode without reflection
    /// (always paired with [`ViaSerde`](super::ViaSerde) writing, see `ValueEncoding`).
    pub(crate) decode_serde: Option<DecodeFn>,
}

impl TypeOps {
    /// The layout a column of this type is written with.
    pub(crate) fn layout(
        &self,
        registry: &bevy::reflect::TypeRegistry,
    ) -> crate::snapshot::schema::TypeLayout {
        super::column_layout(
            registry,
            self.type_id,
            self.type_path,
            self.decode_serde.is_some(),
        )
    }

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
