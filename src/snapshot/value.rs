//! Encoding one reflected value to bytes and back.
//!
//! Types that reflect `Serialize`/`Deserialize` go through their own serde implementation; other
//! types go through Bevy's reflection serializer. Both write postcard. `Entity` values are
//! always written as their 64-bit id, so references can be remapped on load.

use super::plan_read::Input;
use super::reflect_plan::Plan;
use super::type_ops::TypeOps;
use bevy::prelude::*;
use bevy::reflect::serde::{
    ReflectDeserializerProcessor, ReflectSerializerProcessor, TypedReflectDeserializer,
    TypedReflectSerializer,
};
use bevy::reflect::{
    PartialReflect, ReflectDeserialize, ReflectSerialize, TypeRegistration, TypeRegistry,
};
use postcard::ser_flavors::Flavor;
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde::{Serialize, Serializer};
use std::any::TypeId;
use std::cell::RefCell;

/// Serialises values of one type, with the type data looked up (and its plan built) once.
pub(crate) struct ValueWriter<'a> {
    registry: &'a TypeRegistry,
    path: WritePath<'a>,
}

/// How a type's values are written, chosen once per column.
enum WritePath<'a> {
    /// The type's own serde implementation, through `ReflectSerialize`.
    Serde(&'a ReflectSerialize),
    /// The reflection plan (same bytes as [`WritePath::Generic`]).
    Plan(Plan),
    /// Bevy's reflection serializer, for types the plan does not know.
    Generic,
}

impl<'a> ValueWriter<'a> {
    pub(crate) fn new(registry: &'a TypeRegistry, type_id: TypeId) -> Self {
        let path = match registry.get_type_data::<ReflectSerialize>(type_id) {
            Some(serde) => WritePath::Serde(serde),
            None => Plan::for_type(registry, type_id).map_or(WritePath::Generic, WritePath::Plan),
        };
        ValueWriter { registry, path }
    }

    /// The same writer without the plan: always Bevy's reflection serializer (to compare the
    /// two paths' bytes).
    pub(crate) fn generic(registry: &'a TypeRegistry, type_id: TypeId) -> Self {
        let mut writer = ValueWriter::new(registry, type_id);
        if let WritePath::Plan(_) = writer.path {
            writer.path = WritePath::Generic;
        }
        writer
    }

    /// Whether values are written by the reflection plan.
    pub(crate) fn uses_plan(&self) -> bool {
        matches!(self.path, WritePath::Plan(_))
    }

    /// Appends the postcard encoding of `value` to `out`.
    pub(crate) fn write(&self, value: &dyn Reflect, out: &mut Vec<u8>) -> Result<(), String> {
        match &self.path {
            WritePath::Serde(serde) => append_postcard(&WithSerde { serde, value }, out),
            WritePath::Plan(plan) => plan.write(value.as_partial_reflect(), out),
            WritePath::Generic => append_postcard(
                &TypedReflectSerializer::with_processor(
                    value.as_partial_reflect(),
                    self.registry,
                    &EntityAsBits,
                ),
                out,
            ),
        }
    }
}

/// Appends the postcard encoding of `value` to `out`, copying slices in bulk (postcard's own
/// `Extend` flavor pushes byte by byte).
pub(crate) fn append_postcard<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    postcard::serialize_with_flavor(value, AppendTo(out)).map_err(|error| error.to_string())
}

struct AppendTo<'a>(&'a mut Vec<u8>);

impl Flavor for AppendTo<'_> {
    type Output = ();

    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// Decodes a value with `T`'s own serde implementation (statically dispatched); it must use
/// every byte.
pub(crate) fn decode_with_serde<T: DeserializeOwned + Reflect>(
    bytes: &[u8],
) -> Result<Box<dyn Reflect>, String> {
    let (value, rest) = postcard::take_from_bytes::<T>(bytes).map_err(|error| error.to_string())?;
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the value", rest.len()));
    }
    Ok(Box::new(value))
}

struct WithSerde<'a> {
    serde: &'a ReflectSerialize,
    value: &'a dyn Reflect,
}

impl Serialize for WithSerde<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serde.serialize(self.value, serializer)
    }
}

/// Decodes values of one concrete type.
pub(crate) struct ValueReader<'a> {
    registry: &'a TypeRegistry,
    registration: &'a TypeRegistration,
    serde: Option<&'a ReflectDeserialize>,
    /// The reflection plan, when the type has no serde of its own and the plan knows it.
    plan: Option<Plan>,
    /// A decoded value later values are read over (see [`ValueReader::read_planned`]).
    prototype: RefCell<Option<Box<dyn Reflect>>>,
    ops: TypeOps,
}

impl<'a> ValueReader<'a> {
    /// `None` when the type is missing from the type registry (not registered with
    /// `register_type`).
    pub(crate) fn new(registry: &'a TypeRegistry, ops: TypeOps) -> Option<Self> {
        let registration = registry.get(ops.type_id)?;
        let plan = match ops.decode_serde {
            Some(_) => None,
            None => Plan::for_type(registry, ops.type_id),
        };
        Some(ValueReader {
            registry,
            registration,
            serde: registration.data::<ReflectDeserialize>(),
            plan,
            prototype: RefCell::new(None),
            ops,
        })
    }

    /// The same reader without the plan: always Bevy's reflection deserializer (to compare the
    /// two paths).
    pub(crate) fn generic(registry: &'a TypeRegistry, ops: TypeOps) -> Option<Self> {
        let mut reader = ValueReader::new(registry, ops)?;
        reader.plan = None;
        Some(reader)
    }

    /// Decodes one value with the reflection plan; it must use every byte.
    ///
    /// The first value is read into dynamic values and built with `FromReflect`; it is kept as
    /// a prototype, and each later value is read over a clone of it ([`Plan::read_into`]),
    /// which allocates only where the value's own data needs it.
    fn read_planned(&self, plan: &Plan, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let mut input = Input::new(bytes);
        let clone = self
            .prototype
            .borrow()
            .as_ref()
            .and_then(|prototype| prototype.reflect_clone().ok())
            .filter(|clone| clone.as_any().type_id() == self.ops.type_id);
        let value = match clone {
            Some(mut value) => {
                plan.read_into(value.as_partial_reflect_mut(), &mut input)?;
                value
            }
            None => {
                let partial = plan.read(&mut input)?;
                let value = (self.ops.from_partial)(partial).ok_or_else(|| {
                    format!("the stored fields do not form a {}", self.ops.type_path)
                })?;
                if let Ok(prototype) = value.reflect_clone() {
                    *self.prototype.borrow_mut() = Some(prototype);
                }
                value
            }
        };
        if input.remaining() > 0 {
            return Err(format!(
                "{} bytes left over after the value",
                input.remaining()
            ));
        }
        Ok(value)
    }

    /// Decodes one value, which must use every byte.
    pub(crate) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        if let Some(decode) = self.ops.decode_serde {
            return decode(bytes);
        }
        if let Some(plan) = &self.plan {
            return self.read_planned(plan, bytes);
        }
        let mut deserializer = postcard::Deserializer::from_bytes(bytes);
        let value = match self.serde {
            Some(serde) => serde
                .deserialize(&mut deserializer)
                .map_err(|error| error.to_string())?,
            None => {
                let mut processor = EntityAsBits;
                let partial = TypedReflectDeserializer::with_processor(
                    self.registration,
                    self.registry,
                    &mut processor,
                )
                .deserialize(&mut deserializer)
                .map_err(|error| error.to_string())?;
                (self.ops.from_partial)(partial).ok_or_else(|| {
                    format!("the stored fields do not form a {}", self.ops.type_path)
                })?
            }
        };
        let rest = deserializer.finalize().map_err(|error| error.to_string())?;
        if !rest.is_empty() {
            return Err(format!("{} bytes left over after the value", rest.len()));
        }
        if value.as_any().type_id() != self.ops.type_id {
            return Err(format!(
                "its deserializer produced a {} instead",
                value.reflect_type_path()
            ));
        }
        Ok(value)
    }
}

/// Writes and reads `Entity` as its 64-bit id wherever it appears inside a reflected value.
struct EntityAsBits;

impl ReflectSerializerProcessor for EntityAsBits {
    fn try_serialize<S: Serializer>(
        &self,
        value: &dyn PartialReflect,
        _registry: &TypeRegistry,
        serializer: S,
    ) -> Result<Result<S::Ok, S>, S::Error> {
        match value.try_downcast_ref::<Entity>() {
            Some(entity) => serializer.serialize_u64(entity.to_bits()).map(Ok),
            None => Ok(Err(serializer)),
        }
    }
}

impl ReflectDeserializerProcessor for EntityAsBits {
    fn try_deserialize<'de, D: serde::Deserializer<'de>>(
        &mut self,
        registration: &TypeRegistration,
        _registry: &TypeRegistry,
        deserializer: D,
    ) -> Result<Result<Box<dyn PartialReflect>, D>, D::Error> {
        if registration.type_id() != TypeId::of::<Entity>() {
            return Ok(Err(deserializer));
        }
        let bits = <u64 as serde::Deserialize>::deserialize(deserializer)?;
        let entity = Entity::try_from_bits(bits).ok_or_else(|| {
            <D::Error as serde::de::Error>::custom(format!("{bits:#x} is not a valid entity id"))
        })?;
        Ok(Ok(Box::new(entity)))
    }
}
