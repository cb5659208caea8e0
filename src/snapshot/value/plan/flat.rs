//! A plan whose every leaf has a fixed size and lies inside the value itself (a struct of
//! numbers, glam vectors and entities, nested in structs, tuples and arrays): written by reading
//! each leaf at its offset in the value, with no reflection call per field (issue 52).
//!
//! # Why
//!
//! On the bench world of sixteen small reflection-only components per entity (`many-small`),
//! a capture spent about two fifths of its time walking values through reflection: a
//! `reflect_ref`, a `field_at` and a downcast (two virtual calls) per leaf (`perf`:
//! `write_leaf` 17 %, `Plan::write` 11 %, `field_at` 3 %, `as_reflect` / `as_any` /
//! `type_id` 5 %). Where a type is flat, the leaves' offsets are found once, from the first value
//! a writer meets, and every value is then read as plain memory.
//!
//! # Why it is sound
//!
//! An offset is taken only for a leaf whose reference, given by the value's own reflection,
//! lies wholly inside the value's memory and whose concrete type is the leaf's type (checked
//! through `Any`). A derived `Reflect` hands out `&self.field`, whose offset is the same in every
//! value of the type, so the same offset in another value of that type holds a leaf of that
//! type. Each value is checked to be of the planned type (its `TypeId`) before it is read. What
//! this cannot see is a hand-written `Reflect` whose fields move between values of one type;
//! such an impl breaks the reflection contract that a field is part of its value.
//!
//! The bytes are the plan's (`flat_writes_the_plans_bytes` searches random values of several
//! shapes), so saves do not depend on which path wrote them.

use super::read::{LeafSink, read_leaf};
use super::shape::{Leaf, Plan};
use super::write::{LeafSource, write_leaf};
use crate::snapshot::schema::bytes::ValueBytes;
use crate::snapshot::value::layout_of::leaf_of;
use bevy::reflect::{PartialReflect, ReflectRef};
use std::any::TypeId;

/// A flat type's leaves, by offset in the value, in the order they are written.
#[derive(Debug)]
pub(crate) struct Flat {
    type_id: TypeId,
    leaves: Box<[(usize, Leaf)]>,
}

impl Flat {
    /// The flat form of `plan` read from `value` (a value of the planned type), or `None` when
    /// the type is not flat: a leaf of variable size (a string), a list, map, set or enum, or a
    /// field reflection does not place inside the value.
    pub(crate) fn of(plan: &Plan, value: &dyn PartialReflect) -> Option<Flat> {
        let type_id = concrete_type(value)?;
        let value_range = address_range(value);
        let mut leaves = Vec::new();
        collect(plan, value, &value_range, &mut leaves)?;
        Some(Flat {
            type_id,
            leaves: leaves.into(),
        })
    }

    /// Appends the postcard bytes of `value`, the plan's; refuses a value of another type.
    pub(crate) fn write(
        &self,
        value: &dyn PartialReflect,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.check_type(value)?;
        let base = (value as *const dyn PartialReflect).cast::<u8>();
        for &(offset, leaf) in &self.leaves {
            // SAFETY: `value` is of the type the offsets were taken from (checked above), and
            // each offset holds a leaf of type `leaf` in every value of that type (module docs).
            let at = unsafe { At(base.add(offset)) };
            write_leaf(leaf, &at, out)?;
        }
        Ok(())
    }

    /// Reads a value's leaves from `input` over `value` (a value of the planned type: a clone of
    /// the column's first value), as the plan's `read_into` would; refuses a value of another
    /// type.
    pub(crate) fn read_into(
        &self,
        value: &mut dyn PartialReflect,
        input: &mut ValueBytes<'_>,
    ) -> Result<(), String> {
        self.check_type(value)?;
        let base = (value as *mut dyn PartialReflect).cast::<u8>();
        for &(offset, leaf) in &self.leaves {
            // SAFETY: as in `write`; `value` is borrowed mutably, so nothing else reads it.
            let at = unsafe { AtMut(base.add(offset)) };
            read_leaf(leaf, input, at)?;
        }
        Ok(())
    }

    /// Refuses a value of another type than the one the offsets were taken from.
    fn check_type(&self, value: &dyn PartialReflect) -> Result<(), String> {
        match concrete_type(value) == Some(self.type_id) {
            true => Ok(()),
            false => Err(format!(
                "the flat plan met a value of another type ({})",
                value.reflect_type_path()
            )),
        }
    }
}

/// A leaf in a flat value's memory, written as the type its `Leaf` names.
struct AtMut(*mut u8);

impl LeafSink for AtMut {
    type Out = ();

    #[inline]
    fn put<T: PartialReflect>(self, value: T) -> Result<(), String> {
        // SAFETY: `read_leaf` puts each leaf as the type its `Leaf` names (`leaf_of`'s table),
        // `Flat::of` recorded this offset only for a leaf of that type, and leaves own nothing
        // (no `String`), so the value overwritten needs no drop.
        unsafe { self.0.cast::<T>().write_unaligned(value) };
        Ok(())
    }

    fn put_str(self, _: &str) -> Result<(), String> {
        Err("a flat plan has no strings".to_owned())
    }
}

/// A leaf in a flat value's memory, read as the type its `Leaf` names.
struct At(*const u8);

impl LeafSource for At {
    #[inline]
    fn copied<T: Copy + 'static>(&self) -> Result<T, String> {
        // SAFETY: `write_leaf` asks each leaf for the type its `Leaf` names (the table of
        // `leaf_of`), and `Flat::of` recorded this offset only for a leaf of that type.
        Ok(unsafe { self.0.cast::<T>().read_unaligned() })
    }

    fn text(&self) -> Result<&str, String> {
        Err("a flat plan has no strings".to_owned())
    }
}

/// The concrete type behind a reflected value, when it is a concrete type.
fn concrete_type(value: &dyn PartialReflect) -> Option<TypeId> {
    Some(value.try_as_reflect()?.as_any().type_id())
}

/// The addresses `value` occupies.
fn address_range(value: &dyn PartialReflect) -> std::ops::Range<usize> {
    let start = (value as *const dyn PartialReflect).cast::<u8>() as usize;
    start..start + std::mem::size_of_val(value)
}

/// Records the leaves of `value` by offset from `value_range`'s start; `None` when the plan
/// or a field is not flat.
fn collect(
    plan: &Plan,
    value: &dyn PartialReflect,
    value_range: &std::ops::Range<usize>,
    leaves: &mut Vec<(usize, Leaf)>,
) -> Option<()> {
    match (plan, value.reflect_ref()) {
        (Plan::Leaf(leaf), _) => {
            let range = address_range(value);
            let inside = range.start >= value_range.start && range.end <= value_range.end;
            let typed = concrete_type(value).and_then(leaf_of) == Some(*leaf);
            (fixed_size(*leaf) && inside && typed).then(|| {
                leaves.push((range.start - value_range.start, *leaf));
            })
        }
        (Plan::Struct(_, plans), ReflectRef::Struct(s)) if s.field_len() == plans.len() => {
            let fields = (0..plans.len()).map(|index| s.field_at(index));
            collect_all(
                plans.iter().map(|(_, plan)| plan),
                fields,
                value_range,
                leaves,
            )
        }
        (Plan::TupleStruct(_, plans), ReflectRef::TupleStruct(s))
            if s.field_len() == plans.len() =>
        {
            let fields = (0..plans.len()).map(|index| s.field(index));
            collect_all(plans.iter(), fields, value_range, leaves)
        }
        (Plan::Tuple(_, plans), ReflectRef::Tuple(t)) if t.field_len() == plans.len() => {
            let fields = (0..plans.len()).map(|index| t.field(index));
            collect_all(plans.iter(), fields, value_range, leaves)
        }
        (Plan::Array(_, item, len), ReflectRef::Array(array)) if array.len() == *len => {
            let items = (0..*len).map(|index| array.get(index));
            collect_all(
                std::iter::repeat_n(&**item, *len),
                items,
                value_range,
                leaves,
            )
        }
        _ => None,
    }
}

/// [`collect`] over fields and their plans, in order.
fn collect_all<'p, 'v>(
    plans: impl Iterator<Item = &'p Plan>,
    fields: impl Iterator<Item = Option<&'v dyn PartialReflect>>,
    value_range: &std::ops::Range<usize>,
    leaves: &mut Vec<(usize, Leaf)>,
) -> Option<()> {
    plans
        .zip(fields)
        .try_for_each(|(plan, field)| collect(plan, field?, value_range, leaves))
}

/// Whether a leaf's bytes are all inside the value (not a `String`'s text).
fn fixed_size(leaf: Leaf) -> bool {
    leaf != Leaf::String
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::{IVec2, Quat, UVec3, Vec2, Vec3, Vec3A, Vec4};
    use bevy::prelude::*;
    use bevy::reflect::TypeRegistry;
    use bevy::reflect::serde::TypedReflectSerializer;
    use proptest::prelude::*;

    #[derive(Reflect, Debug, Clone)]
    struct Small {
        level: u8,
        charge: f32,
    }

    #[derive(Reflect, Debug, Clone)]
    struct Body(Vec3, Quat, Vec3A, bool);

    #[derive(Reflect, Debug, Clone)]
    struct Mixed {
        small: Small,
        pair: (i16, u64),
        grid: [IVec2; 3],
        target: Entity,
        glyph: char,
        big: (u128, i128, usize, isize, i8),
        wide: (f64, Vec2, Vec4, UVec3, u16, u32, i32, i64),
        #[reflect(ignore)]
        _skipped: u32,
        body: Body,
    }

    #[derive(Reflect, Debug, Clone)]
    struct NotFlat {
        name: String,
        level: u8,
    }

    #[derive(Reflect, Debug, Clone)]
    enum AlsoNotFlat {
        A(u8),
        B,
    }

    fn registry() -> TypeRegistry {
        let mut registry = TypeRegistry::default();
        registry.register::<Mixed>();
        registry.register::<Small>();
        registry.register::<NotFlat>();
        registry.register::<AlsoNotFlat>();
        registry
    }

    /// Writes `value` by its flat plan (which must exist) and checks the bytes against the
    /// reflection plan's and Bevy's reflection serializer's.
    fn check_flat<T: Reflect>(registry: &TypeRegistry, first: &T, value: &T) {
        let plan = Plan::for_type(registry, TypeId::of::<T>()).expect("a plan");
        let flat = Flat::of(&plan, first).expect("a flat type");
        let (mut by_flat, mut by_plan) = (Vec::new(), Vec::new());
        flat.write(value, &mut by_flat).unwrap();
        plan.write(value, &mut by_plan).unwrap();
        assert_eq!(by_flat, by_plan);
        let serializer = TypedReflectSerializer::new(value, registry);
        assert_eq!(by_flat, postcard::to_allocvec(&serializer).unwrap());
    }

    fn mixed() -> impl Strategy<Value = Mixed> {
        let numbers = (
            any::<u8>(),
            any::<f32>(),
            any::<(i16, u64)>(),
            any::<[(i32, i32); 3]>(),
            1..u32::MAX,
            any::<char>(),
            any::<(u128, i128, usize, isize, i8)>(),
        );
        let more = (
            any::<(f64, f32, f32, u32, u16, u32, i32, i64)>(),
            any::<[f32; 11]>(),
            any::<bool>(),
        );
        (numbers, more).prop_map(
            |((level, charge, pair, grid, index, glyph, big), (wide, f, flag))| Mixed {
                small: Small { level, charge },
                pair,
                grid: grid.map(|(x, y)| IVec2::new(x, y)),
                target: Entity::from_raw_u32(index).unwrap(),
                glyph,
                big,
                wide: (
                    wide.0,
                    Vec2::new(wide.1, wide.2),
                    Vec4::new(f[7], f[8], f[9], f[10]),
                    UVec3::splat(wide.3),
                    wide.4,
                    wide.5,
                    wide.6,
                    wide.7,
                ),
                _skipped: 7,
                body: Body(
                    Vec3::new(f[0], f[1], f[2]),
                    Quat::from_xyzw(f[3], f[4], f[5], f[6]),
                    Vec3A::new(f[2], f[1], f[0]),
                    flag,
                ),
            },
        )
    }

    /// Reads `value`'s bytes by the flat plan over a clone of `first`, and writes the result
    /// again: the same bytes.
    fn check_read<T: Reflect + Clone>(registry: &TypeRegistry, first: &T, value: &T) {
        let plan = Plan::for_type(registry, TypeId::of::<T>()).expect("a plan");
        let flat = Flat::of(&plan, first).expect("a flat type");
        let mut bytes = Vec::new();
        plan.write(value, &mut bytes).unwrap();
        let mut read = first.clone();
        let mut input = ValueBytes::new(&bytes);
        flat.read_into(&mut read, &mut input).unwrap();
        assert_eq!(input.remaining(), 0);
        let mut again = Vec::new();
        plan.write(&read, &mut again).unwrap();
        assert_eq!(again, bytes);
    }

    proptest! {
        /// Any two values of a flat type: the offsets found on the first write the second as
        /// the plan and Bevy's reflection serializer write it, and read it back over the first.
        #[test]
        fn flat_writes_the_plans_bytes(first in mixed(), value in mixed()) {
            let registry = registry();
            check_flat(&registry, &first, &value);
            check_flat(&registry, &first.small, &value.small);
            check_read(&registry, &first, &value);
        }
    }

    #[test]
    fn strings_enums_and_other_types_are_not_flat() {
        let registry = registry();
        let plan = |id| Plan::for_type(&registry, id).expect("a plan");
        let not_flat = NotFlat {
            name: "x".into(),
            level: 1,
        };
        assert!(Flat::of(&plan(TypeId::of::<NotFlat>()), &not_flat).is_none());
        assert!(Flat::of(&plan(TypeId::of::<AlsoNotFlat>()), &AlsoNotFlat::A(1)).is_none());
        let small = Small {
            level: 1,
            charge: 2.0,
        };
        let flat = Flat::of(&plan(TypeId::of::<Small>()), &small).expect("flat");
        let error = flat.write(&not_flat, &mut Vec::new()).unwrap_err();
        assert!(error.contains("another type"), "{error}");
    }
}
