//! Encoding one reflected value to bytes and back.
//!
//! Types that reflect `Serialize`/`Deserialize` go through their own serde implementation; other
//! types go through Bevy's reflection serializer. Both write postcard. `Entity` values are
//! always written as their 64-bit id, so references can be remapped on load, and asset handles
//! by path (see [`assets`](super::assets)); types that can hold a handle always take Bevy's
//! reflection serializer, with the handle processors, never the plan.

use super::assets::{CaptureAssets, CaptureProblem, HandleLoader, contains_handles, diagnose};
use super::plan_read::{Input, Prototypes};
use super::reflect_plan::Plan;
use super::type_ops::TypeOps;
use bevy::prelude::*;
use bevy::reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
use bevy::reflect::{ReflectDeserialize, ReflectSerialize, TypeRegistration, TypeRegistry};
use postcard::ser_flavors::Flavor;
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde::{Serialize, Serializer};
use std::cell::RefCell;

/// Serialises values of one type, with the type data looked up (and its plan built) once.
pub(crate) struct ValueWriter<'a> {
    registry: &'a TypeRegistry,
    type_path: &'static str,
    path: WritePath<'a>,
    assets: &'a CaptureAssets,
}

/// How a type's values are written, chosen once per column.
enum WritePath<'a> {
    /// The type's own serde implementation, through `ReflectSerialize`.
    Serde(&'a ReflectSerialize),
    /// The reflection plan (same bytes as [`WritePath::Generic`]).
    Plan(Plan),
    /// Bevy's reflection serializer, for types the plan does not know; `handles` says whether
    /// the type can hold an asset handle (only then is every field checked for one).
    Generic { handles: bool },
}

impl<'a> ValueWriter<'a> {
    pub(crate) fn new(
        registry: &'a TypeRegistry,
        ops: &TypeOps,
        assets: &'a CaptureAssets,
    ) -> Self {
        let type_id = ops.type_id;
        let path = match registry.get_type_data::<ReflectSerialize>(type_id) {
            Some(serde) => WritePath::Serde(serde),
            None if contains_handles(registry, type_id) => WritePath::Generic { handles: true },
            None => Plan::for_type(registry, type_id)
                .map_or(WritePath::Generic { handles: false }, WritePath::Plan),
        };
        ValueWriter {
            registry,
            type_path: ops.type_path,
            path,
            assets,
        }
    }

    /// The same writer without the plan: always Bevy's reflection serializer (to compare the
    /// two paths' bytes).
    pub(crate) fn generic(
        registry: &'a TypeRegistry,
        ops: &TypeOps,
        assets: &'a CaptureAssets,
    ) -> Self {
        let mut writer = ValueWriter::new(registry, ops, assets);
        if let WritePath::Plan(_) = writer.path {
            writer.path = WritePath::Generic { handles: false };
        }
        writer
    }

    /// The registered type's path.
    pub(crate) fn type_path(&self) -> &'static str {
        self.type_path
    }

    /// Whether writing a value records asset handles left out of it (so a cached encoding of
    /// the value would lose that report).
    pub(crate) fn records_handles(&self) -> bool {
        matches!(self.path, WritePath::Generic { handles: true })
    }

    /// Whether values are written by the reflection plan.
    pub(crate) fn uses_plan(&self) -> bool {
        matches!(self.path, WritePath::Plan(_))
    }

    /// Appends the postcard encoding of `value` to `out`.
    pub(crate) fn write(
        &self,
        value: &dyn Reflect,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        let written = match &self.path {
            WritePath::Serde(serde) => append_postcard(&WithSerde { serde, value }, out),
            WritePath::Plan(plan) => plan.write(value.as_partial_reflect(), out),
            &WritePath::Generic { handles } => self.write_generic(value, handles, out),
        };
        written.map_err(|reason| self.explain(value, reason))
    }

    /// Bevy's reflection serializer, with entities as ids and handles by path.
    fn write_generic(
        &self,
        value: &dyn Reflect,
        handles: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let processor = self.assets.processor(handles);
        let partial = value.as_partial_reflect();
        let serializer = TypedReflectSerializer::with_processor(partial, self.registry, &processor);
        let written = append_postcard(&serializer, out);
        if handles && written.is_ok() {
            self.assets
                .after_value(self.type_path, partial, self.registry);
        }
        written
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
    /// The reflection plan, when the type has no serde of its own and the plan knows it.
    plan: Option<Plan>,
    /// A decoded value later values are read over (see [`ValueReader::read_planned`]).
    prototype: RefCell<Option<Box<dyn Reflect>>>,
    /// Values met in the column so far, read over (see [`Prototypes`]).
    kept: RefCell<Prototypes>,
    ops: TypeOps,
    loader: &'a HandleLoader<'a>,
    /// Whether the type can hold an asset handle (then it never has a plan).
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
        let handles = serde.is_none() && contains_handles(registry, ops.type_id);
        let plan = match ops.decode_serde {
            Some(_) => None,
            None if handles => None,
            None => Plan::for_type(registry, ops.type_id),
        };
        Some(ValueReader {
            registry,
            registration,
            serde,
            plan,
            prototype: RefCell::new(None),
            kept: RefCell::default(),
            ops,
            loader,
            handles,
        })
    }

    /// The same reader without the plan: always Bevy's reflection deserializer (to compare the
    /// two paths).
    pub(crate) fn generic(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
    ) -> Option<Self> {
        let mut reader = ValueReader::new(registry, ops, loader)?;
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
                plan.read_into(
                    value.as_partial_reflect_mut(),
                    &mut input,
                    &mut self.kept.borrow_mut(),
                )?;
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
