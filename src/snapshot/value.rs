//! Encoding one reflected value to bytes and back.
//!
//! Types that reflect `Serialize`/`Deserialize` go through their own serde implementation; other
//! types go through Bevy's reflection serializer. Both write postcard. `Entity` values are
//! always written as their 64-bit id, so references can be remapped on load, and asset handles
//! by path (see [`assets`](super::assets)).

use super::assets::{CaptureAssets, CaptureProblem, HandleLoader, contains_handles, diagnose};
use super::type_ops::TypeOps;
use bevy::prelude::*;
use bevy::reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
use bevy::reflect::{ReflectDeserialize, ReflectSerialize, TypeRegistration, TypeRegistry};
use postcard::ser_flavors::Flavor;
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde::{Serialize, Serializer};

/// Serialises values of one type, with the type data looked up once.
pub(crate) struct ValueWriter<'a> {
    registry: &'a TypeRegistry,
    type_path: &'static str,
    serde: Option<&'a ReflectSerialize>,
    assets: &'a CaptureAssets,
    /// Whether the type can hold an asset handle (only then is every field checked for one).
    handles: bool,
}

impl<'a> ValueWriter<'a> {
    pub(crate) fn new(
        registry: &'a TypeRegistry,
        ops: &TypeOps,
        assets: &'a CaptureAssets,
    ) -> Self {
        let serde = registry.get_type_data::<ReflectSerialize>(ops.type_id);
        ValueWriter {
            registry,
            type_path: ops.type_path,
            serde,
            assets,
            handles: serde.is_none() && contains_handles(registry, ops.type_id),
        }
    }

    /// Appends the postcard encoding of `value` to `out`.
    pub(crate) fn write(
        &self,
        value: &dyn Reflect,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        let written = match self.serde {
            Some(serde) => append_postcard(&WithSerde { serde, value }, out),
            None => {
                let processor = self.assets.processor(self.handles);
                let partial = value.as_partial_reflect();
                let serializer =
                    TypedReflectSerializer::with_processor(partial, self.registry, &processor);
                let written = append_postcard(&serializer, out);
                if self.handles && written.is_ok() {
                    self.assets
                        .after_value(self.type_path, partial, self.registry);
                }
                written
            }
        };
        written.map_err(|reason| self.explain(value, reason))
    }

    /// Names the field that could not be saved and what to do, by walking the value.
    fn explain(&self, value: &dyn Reflect, reason: String) -> CaptureProblem {
        let policy = self.assets.policy();
        diagnose(
            self.type_path,
            value.as_partial_reflect(),
            self.registry,
            policy,
        )
        .unwrap_or_else(|| CaptureProblem::whole(self.type_path, reason))
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
    ops: TypeOps,
    loader: &'a HandleLoader<'a>,
    /// Whether the type can hold an asset handle.
    handles: bool,
}

impl<'a> ValueReader<'a> {
    /// `None` when the type is missing from the type registry (not registered with
    /// `register_type`).
    pub(crate) fn new(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
    ) -> Option<Self> {
        let registration = registry.get(ops.type_id)?;
        let serde = registration.data::<ReflectDeserialize>();
        Some(ValueReader {
            registry,
            registration,
            serde,
            ops,
            loader,
            handles: serde.is_none() && contains_handles(registry, ops.type_id),
        })
    }

    /// Decodes one value, which must use every byte.
    pub(crate) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        if let Some(decode) = self.ops.decode_serde {
            return decode(bytes);
        }
        let mut deserializer = postcard::Deserializer::from_bytes(bytes);
        let value = match self.serde {
            Some(serde) => serde
                .deserialize(&mut deserializer)
                .map_err(|error| error.to_string())?,
            None => {
                let mut processor = self.loader.processor(self.handles);
                let partial = TypedReflectDeserializer::with_processor(
                    self.registration,
                    self.registry,
                    &mut processor,
                )
                .deserialize(&mut deserializer)
                .map_err(|error| {
                    self.loader
                        .take_failure()
                        .unwrap_or_else(|| error.to_string())
                })?;
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
