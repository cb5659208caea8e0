//! The reflection fast path: a per-type *plan* built from `TypeInfo` (field order, the kind of
//! every leaf), walked to write a reflected value's postcard bytes directly and to read them
//! back (`read`; the two halves sit side by side here, `write` and `read`, over the plan's
//! `shape`).
//!
//! Bevy's reflection serializer, for every field of every value, looks the field's type up in
//! the type registry (a hash lookup), asks the processor, then either goes through the type's
//! `ReflectSerialize` (an `erased_serde` trait object, one virtual call per primitive) or walks
//! the field. The plan does the lookups once per type and column: a leaf (primitive, `String`,
//! `Entity`, glam vector or quaternion) is one downcast and a direct write, and a nested struct,
//! enum, list, array, map or set is walked with its fields' plans at hand.
//!
//! The plan writes exactly the bytes the reflection serializer writes into postcard (which are
//! the bytes a serde derive of the same shape writes), so saves do not depend on which path
//! wrote them. A type is left to the reflection serializer (no plan) when it or anything inside
//! it is a type the plan does not know: an opaque type other than the leaves above, a nested
//! type with its own `ReflectSerialize` or `ReflectSerializeWithRegistry` (such as asset
//! handles, whose serialization a processor may override), a struct with
//! `#[reflect(skip_serializing)]` fields, or nesting deeper than `MAX_DEPTH` (recursive types).

mod flat;
mod read;
mod shape;
mod write;

pub(crate) use flat::Flat;
pub(crate) use read::{Named, NewValue, Prototypes, read_leaf};
pub(crate) use shape::Plan;
