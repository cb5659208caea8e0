//! Reading one value: the [`ReadPath`] of its type, chosen once per column, mirroring the
//! writer's `WritePath`.

use super::assets::{HandleLoader, contains_handles};
use super::ops::{DecodeFn, TypeOps};
use super::plan::{Flat, Plan, Prototypes};
use super::resolve::{Incompatible, Resolution};
use crate::snapshot::schema::TypeLayout;
use crate::snapshot::schema::bytes::ValueBytes;
use bevy::prelude::*;
use bevy::reflect::{ReflectDeserialize, TypeRegistration, TypeRegistry};
use std::cell::{OnceCell, RefCell};

/// Decodes values of one concrete type.
pub(crate) struct ValueReader<'a> {
    registry: &'a TypeRegistry,
    registration: &'a TypeRegistration,
    path: ReadPath<'a>,
    ops: TypeOps,
    loader: &'a HandleLoader<'a>,
}

/// How a type's values are read, chosen once per column.
enum ReadPath<'a> {
    /// The type's own serde implementation, statically dispatched: the decoder paired with its
    /// encoding at registration (`register_saveable_serde`).
    TypedSerde(DecodeFn),
    /// The type's own serde implementation, through `ReflectDeserialize`.
    Serde(&'a ReflectDeserialize),
    /// The reflection plan (reads the bytes of [`ReadPath::Generic`]).
    Plan(PlannedReads),
    /// Bevy's reflection deserializer, for types the plan does not know; `handles` says
    /// whether the type can hold an asset handle (then handles are loaded by path).
    Generic { handles: bool },
    /// Values written with another layout of the type, resolved by name (see `resolve`).
    Resolved(Box<Resolution<'a>>),
}

/// The plan of a column's type and the values read so far, which later values are read over.
struct PlannedReads {
    plan: Plan,
    /// A decoded value later values are read over (see [`PlannedReads::read`]).
    prototype: RefCell<Option<Box<dyn Reflect>>>,
    /// Values met in the column so far, read over (see [`Prototypes`]).
    kept: RefCell<Prototypes>,
    /// The flat form of the plan (see `plan::Flat`), once the prototype shows whether the type
    /// is flat.
    flat: OnceCell<Option<Flat>>,
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
        let path = match (ops.decode_serde, registration.data::<ReflectDeserialize>()) {
            (Some(decode), _) => ReadPath::TypedSerde(decode),
            (None, Some(serde)) => ReadPath::Serde(serde),
            (None, None) if contains_handles(registry, ops.type_id) => {
                ReadPath::Generic { handles: true }
            }
            (None, None) => Plan::for_type(registry, ops.type_id)
                .map_or(ReadPath::Generic { handles: false }, |plan| {
                    ReadPath::Plan(PlannedReads::new(plan))
                }),
        };
        Some(ValueReader {
            registry,
            registration,
            path,
            ops,
            loader,
        })
    }

    /// The reader of values written with `stored`, a layout of the type other than today's:
    /// refuses what cannot be resolved by name before any value is read.
    pub(crate) fn resolving(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
        stored: &TypeLayout,
    ) -> Result<Self, Incompatible> {
        let resolution = Resolution::new(registry, ops, loader, stored)?;
        let registration = registry.get(ops.type_id).ok_or_else(|| Incompatible {
            path: ops.type_path.to_owned(),
            stored: ops.type_path.to_owned(),
            today: "a type missing from the type registry".to_owned(),
        })?;
        Ok(ValueReader {
            registry,
            registration,
            path: ReadPath::Resolved(Box::new(resolution)),
            ops,
            loader,
        })
    }

    /// The stored fields today's type no longer has, which reading drops (none unless the
    /// reader resolves another layout).
    pub(crate) fn dropped_fields(&self) -> &[String] {
        match &self.path {
            ReadPath::Resolved(resolution) => resolution.dropped(),
            _ => &[],
        }
    }

    /// The same reader without the plan: always Bevy's reflection deserializer (to compare the
    /// two paths).
    pub(crate) fn generic(
        registry: &'a TypeRegistry,
        ops: TypeOps,
        loader: &'a HandleLoader<'a>,
    ) -> Option<Self> {
        let mut reader = ValueReader::new(registry, ops, loader)?;
        if let ReadPath::Plan(_) = reader.path {
            reader.path = ReadPath::Generic { handles: false };
        }
        Some(reader)
    }

    /// Decodes one value, which must use every byte.
    pub(crate) fn read(&self, bytes: &[u8]) -> Result<Box<dyn Reflect>, String> {
        let value = match &self.path {
            ReadPath::TypedSerde(decode) => return decode(bytes),
            ReadPath::Plan(planned) => return planned.read(bytes, &self.ops),
            ReadPath::Resolved(resolution) => return resolution.read(bytes),
            ReadPath::Serde(serde) => {
                let mut deserializer = postcard::Deserializer::from_bytes(bytes);
                let value = serde
                    .deserialize(&mut deserializer)
                    .map_err(|error| error.to_string())?;
                expect_end(deserializer)?;
                value
            }
            &ReadPath::Generic { handles } => self.read_generic(bytes, handles)?,
        };
        if value.as_any().type_id() != self.ops.type_id {
            return Err(format!(
                "its deserializer produced a {} instead",
                value.reflect_type_path()
            ));
        }
        Ok(value)
    }

    /// Bevy's reflection deserializer, with entities as ids and handles by path.
    fn read_generic(&self, bytes: &[u8], handles: bool) -> Result<Box<dyn Reflect>, String> {
        let (partial, used) =
            self.loader
                .deserialize(self.registration, self.registry, bytes, handles)?;
        let value = (self.ops.from_partial)(partial)
            .ok_or_else(|| format!("the stored fields do not form a {}", self.ops.type_path))?;
        match bytes.len() - used {
            0 => Ok(value),
            left => Err(format!("{left} bytes left over after the value")),
        }
    }
}

impl PlannedReads {
    fn new(plan: Plan) -> Self {
        PlannedReads {
            plan,
            prototype: RefCell::new(None),
            kept: RefCell::default(),
            flat: OnceCell::new(),
        }
    }

    /// Decodes one value with the reflection plan; it must use every byte.
    ///
    /// The first value is read into dynamic values and built with `FromReflect`; it is kept as
    /// a prototype, and each later value is read over a clone of it ([`Plan::read_into`]),
    /// which allocates only where the value's own data needs it.
    fn read(&self, bytes: &[u8], ops: &TypeOps) -> Result<Box<dyn Reflect>, String> {
        let mut input = ValueBytes::new(bytes);
        let value = match self.clone_prototype(ops) {
            Some(mut value) => {
                let target = value.as_partial_reflect_mut();
                let flat = (self.flat).get_or_init(|| Flat::of(&self.plan, &*target));
                match flat {
                    Some(flat) => flat.read_into(target, &mut input)?,
                    None => {
                        let kept = &mut self.kept.borrow_mut();
                        self.plan.read_into(target, &mut input, kept)?;
                    }
                }
                value
            }
            None => self.read_first(&mut input, ops)?,
        };
        if input.remaining() > 0 {
            return Err(format!(
                "{} bytes left over after the value",
                input.remaining()
            ));
        }
        Ok(value)
    }

    /// A clone of the prototype to read over, when there is one (and it clones as its type).
    fn clone_prototype(&self, ops: &TypeOps) -> Option<Box<dyn Reflect>> {
        self.prototype
            .borrow()
            .as_ref()
            .and_then(|prototype| prototype.reflect_clone().ok())
            .filter(|clone| clone.as_any().type_id() == ops.type_id)
    }

    /// Reads a value through dynamic values and keeps a clone as the prototype.
    fn read_first(
        &self,
        input: &mut ValueBytes<'_>,
        ops: &TypeOps,
    ) -> Result<Box<dyn Reflect>, String> {
        let partial = self.plan.read(input)?;
        let value = (ops.from_partial)(partial)
            .ok_or_else(|| format!("the stored fields do not form a {}", ops.type_path))?;
        if let Ok(prototype) = value.reflect_clone() {
            *self.prototype.borrow_mut() = Some(prototype);
        }
        Ok(value)
    }
}

/// Refuses bytes after a value read by postcard.
fn expect_end<'de>(
    deserializer: postcard::Deserializer<'de, postcard::de_flavors::Slice<'de>>,
) -> Result<(), String> {
    let rest = deserializer.finalize().map_err(|error| error.to_string())?;
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the value", rest.len()));
    }
    Ok(())
}
