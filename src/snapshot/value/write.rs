//! Writing one reflected value: the [`WritePath`] of its type, chosen once per column.

use super::assets::{CaptureAssets, CaptureProblem, contains_handles, diagnose};
use super::ops::TypeOps;
use super::plan::{Flat, Plan};
use bevy::prelude::*;
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::{ReflectSerialize, TypeRegistry};
use postcard::ser_flavors::Flavor;
use serde::{Serialize, Serializer};
use std::sync::OnceLock;

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
    Plan(PlannedWrites),
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
                .map_or(WritePath::Generic { handles: false }, |plan| {
                    WritePath::Plan(PlannedWrites::new(plan))
                }),
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
            WritePath::Plan(planned) => planned.write(value.as_partial_reflect(), out),
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

/// A type's plan, and its flat form (see `plan::Flat`) once the first value written shows
/// whether the type is flat.
struct PlannedWrites {
    plan: Plan,
    flat: OnceLock<Option<Flat>>,
}

impl PlannedWrites {
    fn new(plan: Plan) -> Self {
        PlannedWrites {
            plan,
            flat: OnceLock::new(),
        }
    }

    fn write(&self, value: &dyn PartialReflect, out: &mut Vec<u8>) -> Result<(), String> {
        match self.flat.get_or_init(|| Flat::of(&self.plan, value)) {
            Some(flat) => flat.write(value, out),
            None => self.plan.write(value, out),
        }
    }
}

/// Appends the postcard encoding of `value` to `out`, copying long slices in bulk (postcard's
/// own `Extend` flavor pushes byte by byte) and short ones byte by byte (a varint or a float is
/// one to ten bytes, for which a call to `memcpy` costs more than the copy: measured 1.6× faster
/// on a `Vec<u16>` than `extend_from_slice` alone).
pub(crate) fn append_postcard<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    postcard::serialize_with_flavor(value, AppendTo(out)).map_err(|error| error.to_string())
}

/// Slices up to this long are copied byte by byte (see [`append_postcard`]).
const SHORT_SLICE: usize = 16;

struct AppendTo<'a>(&'a mut Vec<u8>);

impl Flavor for AppendTo<'_> {
    type Output = ();

    #[inline]
    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        if data.len() <= SHORT_SLICE {
            self.0.reserve(data.len());
            data.iter().for_each(|&byte| self.0.push(byte));
        } else {
            self.0.extend_from_slice(data);
        }
        Ok(())
    }

    #[inline]
    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
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
