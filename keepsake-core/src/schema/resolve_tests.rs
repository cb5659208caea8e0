//! The agreement of the compatibility guard and the load, engine-free: random layouts, random
//! edits of them (the changes games make between releases), random values written by the
//! stored layout with the `bytes::put_*` writers, and a walker that reads those values as the
//! rule's [`Read`] says, as a load does (dropped fields through `stored::skip`, the load's own
//! skipper; widened leaves through [`ValueBytes`]).
//!
//! - P1: the guard's verdict is a problem exactly when the rule refuses or loses variants, and
//!   its words agree (no change that needs a migration in a "reads by name", one first in a
//!   "needs migration").
//! - P2: when the rule reads, every generated stored value reads whole (all its bytes, none
//!   past), unless it is in a lost variant.
//! - P3: a layout resolves to itself as is, and the guard calls it unchanged.

use super::bytes::{self, ValueBytes};
use super::resolve::{FieldRead, NamedRead, Read, VariantFieldsRead, VariantRead, resolve};
use super::{Field, Leaf, TypeLayout, Variant, VariantFields, stored};
use crate::compat::Verdict;
use crate::compat::check::layout_verdict;
use proptest::prelude::*;

/// A small deterministic generator (SplitMix64), so one proptest seed is one whole case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const LEAVES: [Leaf; 13] = [
    Leaf::Bool,
    Leaf::U8,
    Leaf::U16,
    Leaf::U32,
    Leaf::U64,
    Leaf::U128,
    Leaf::I8,
    Leaf::I32,
    Leaf::I64,
    Leaf::F32,
    Leaf::F64,
    Leaf::String,
    Leaf::Char,
];
const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

fn leaf(rng: &mut Rng) -> TypeLayout {
    TypeLayout::Leaf(LEAVES[rng.below(LEAVES.len())])
}

fn option(item: TypeLayout) -> TypeLayout {
    TypeLayout::Enum {
        type_path: format!("core::option::Option<{}>", super::text::short(&item)),
        variants: vec![
            Variant {
                name: "None".into(),
                fields: VariantFields::Unit,
            },
            Variant {
                name: "Some".into(),
                fields: VariantFields::Tuple(vec![item]),
            },
        ],
    }
}

fn named_fields(rng: &mut Rng, depth: usize) -> Vec<Field> {
    let mut names = NAMES.to_vec();
    let count = rng.below(4);
    (0..count)
        .map(|_| Field {
            name: names.remove(rng.below(names.len())).into(),
            layout: layout(rng, depth + 1),
        })
        .collect()
}

fn variant_fields(rng: &mut Rng, depth: usize) -> VariantFields {
    match rng.below(5) {
        0 | 1 => VariantFields::Unit,
        2 => VariantFields::Tuple((0..rng.below(3)).map(|_| layout(rng, depth + 1)).collect()),
        _ => VariantFields::Struct(named_fields(rng, depth)),
    }
}

/// A random layout, at most four deep.
fn layout(rng: &mut Rng, depth: usize) -> TypeLayout {
    if depth >= 4 || rng.chance(35) {
        return match rng.below(20) {
            0 => TypeLayout::Opaque {
                type_path: "game::Blob".into(),
            },
            _ => leaf(rng),
        };
    }
    let path = format!("game::T{}", rng.below(3));
    match rng.below(11) {
        0 | 1 => TypeLayout::Struct {
            type_path: path,
            fields: named_fields(rng, depth),
        },
        2 => TypeLayout::TupleStruct {
            type_path: path,
            fields: (0..rng.below(3)).map(|_| layout(rng, depth + 1)).collect(),
        },
        3 => TypeLayout::Tuple(
            (0..1 + rng.below(3))
                .map(|_| layout(rng, depth + 1))
                .collect(),
        ),
        4 => TypeLayout::List(Box::new(layout(rng, depth + 1))),
        5 => TypeLayout::Set(Box::new(layout(rng, depth + 1))),
        6 => TypeLayout::Array {
            item: Box::new(layout(rng, depth + 1)),
            len: rng.below(3) as u64,
        },
        7 => TypeLayout::Map {
            key: Box::new(leaf(rng)),
            value: Box::new(layout(rng, depth + 1)),
        },
        8 => option(layout(rng, depth + 1)),
        9 => TypeLayout::Serde {
            type_path: path,
            reflected: Box::new(layout(rng, depth + 1)),
        },
        _ => TypeLayout::Enum {
            type_path: path,
            variants: (0..1 + rng.below(4))
                .map(|index| Variant {
                    name: format!("V{index}"),
                    fields: variant_fields(rng, depth),
                })
                .collect(),
        },
    }
}

/// The children of a layout, to pick a node to edit.
fn children(layout: &mut TypeLayout) -> Vec<&mut TypeLayout> {
    match layout {
        TypeLayout::Struct { fields, .. } => fields.iter_mut().map(|f| &mut f.layout).collect(),
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            fields.iter_mut().collect()
        }
        TypeLayout::List(item) | TypeLayout::Set(item) | TypeLayout::Array { item, .. } => {
            vec![&mut **item]
        }
        TypeLayout::Map { key, value } => vec![&mut **key, &mut **value],
        TypeLayout::Serde { reflected, .. } => vec![&mut **reflected],
        TypeLayout::Enum { variants, .. } => variants
            .iter_mut()
            .flat_map(|variant| match &mut variant.fields {
                VariantFields::Unit => Vec::new(),
                VariantFields::Tuple(fields) => fields.iter_mut().collect(),
                VariantFields::Struct(fields) => fields.iter_mut().map(|f| &mut f.layout).collect(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Applies one random edit somewhere in `layout`.
fn edit(rng: &mut Rng, layout: &mut TypeLayout) {
    let count = children(layout).len();
    if count > 0 && rng.chance(60) {
        let pick = rng.below(count);
        return edit(rng, children(layout).swap_remove(pick));
    }
    edit_here(rng, layout);
}

fn edit_here(rng: &mut Rng, node: &mut TypeLayout) {
    match (rng.below(6), &mut *node) {
        (0, _) => *node = option(node.clone()),
        (1, TypeLayout::Serde { reflected, .. }) => *node = (**reflected).clone(),
        (1, other) => {
            *node = TypeLayout::Serde {
                type_path: "game::S".into(),
                reflected: Box::new(other.clone()),
            }
        }
        (2, TypeLayout::Leaf(_)) => *node = leaf(rng),
        (2, other) => {
            if let Some(item) = other.option_item() {
                *node = item.clone();
            } else if let Some(path) = type_path_mut(other) {
                path.push('2');
            }
        }
        (_, TypeLayout::Struct { fields, .. }) => edit_fields(rng, fields),
        (_, TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields)) => {
            match rng.chance(50) && !fields.is_empty() {
                true => drop(fields.pop()),
                false => fields.push(leaf(rng)),
            }
        }
        (_, TypeLayout::Array { len, .. }) => *len += 1,
        (_, TypeLayout::Enum { variants, .. }) => edit_variants(rng, variants),
        (_, TypeLayout::Leaf(_)) => *node = leaf(rng),
        _ => *node = layout(rng, 3),
    }
}

fn type_path_mut(layout: &mut TypeLayout) -> Option<&mut String> {
    match layout {
        TypeLayout::Struct { type_path, .. }
        | TypeLayout::TupleStruct { type_path, .. }
        | TypeLayout::Enum { type_path, .. }
        | TypeLayout::Serde { type_path, .. } => Some(type_path),
        _ => None,
    }
}

fn edit_fields(rng: &mut Rng, fields: &mut Vec<Field>) {
    match rng.below(4) {
        0 if !fields.is_empty() => drop(fields.remove(rng.below(fields.len()))),
        1 if fields.len() > 1 => fields.rotate_left(1),
        2 if !fields.is_empty() => {
            let at = rng.below(fields.len());
            fields[at].name.push('x');
        }
        _ => {
            let name = NAMES
                .iter()
                .find(|name| !fields.iter().any(|f| f.name == **name));
            if let Some(name) = name {
                fields.push(Field {
                    name: (*name).into(),
                    layout: leaf(rng),
                });
            }
        }
    }
}

fn edit_variants(rng: &mut Rng, variants: &mut Vec<Variant>) {
    let fresh = Variant {
        name: format!("N{}", rng.below(9)),
        fields: VariantFields::Unit,
    };
    match rng.below(5) {
        0 => variants.push(fresh),
        1 => variants.insert(rng.below(variants.len() + 1), fresh),
        2 if variants.len() > 1 => drop(variants.remove(rng.below(variants.len()))),
        3 if variants.len() > 1 => variants.rotate_left(1),
        _ => {
            // Another kind, with no fields or some.
            let at = rng.below(variants.len());
            variants[at].fields = match rng.below(3) {
                0 => VariantFields::Unit,
                1 => VariantFields::Tuple(Vec::new()),
                _ => VariantFields::Struct(Vec::new()),
            };
        }
    }
}

/// Bytes an opaque value is given here (the walker knows; `stored::skip` cannot).
const OPAQUE_LEN: usize = 2;

/// A random value of `layout`, written with the writers the plan uses.
fn write_value(rng: &mut Rng, layout: &TypeLayout, out: &mut Vec<u8>) {
    match layout {
        TypeLayout::Leaf(leaf) => write_leaf(rng, *leaf, out),
        TypeLayout::Struct { fields, .. } => {
            for field in fields {
                write_value(rng, &field.layout, out);
            }
        }
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            for field in fields {
                write_value(rng, field, out);
            }
        }
        TypeLayout::List(item) | TypeLayout::Set(item) => {
            let len = rng.below(3);
            bytes::put_length(out, len);
            (0..len).for_each(|_| write_value(rng, item, out));
        }
        TypeLayout::Array { item, len } => (0..*len).for_each(|_| write_value(rng, item, out)),
        TypeLayout::Map { key, value } => {
            let len = rng.below(3);
            bytes::put_length(out, len);
            for _ in 0..len {
                write_value(rng, key, out);
                write_value(rng, value, out);
            }
        }
        TypeLayout::Enum { variants, .. } => {
            let index = rng.below(variants.len());
            bytes::put_variant_index(out, index as u32);
            match &variants[index].fields {
                VariantFields::Unit => {}
                VariantFields::Tuple(fields) => {
                    fields.iter().for_each(|f| write_value(rng, f, out))
                }
                VariantFields::Struct(fields) => {
                    fields.iter().for_each(|f| write_value(rng, &f.layout, out))
                }
            }
        }
        TypeLayout::Serde { reflected, .. } => write_value(rng, reflected, out),
        _ => out.extend_from_slice(&[0xAB; OPAQUE_LEN]),
    }
}

fn write_leaf(rng: &mut Rng, leaf: Leaf, out: &mut Vec<u8>) {
    let raw = rng.next();
    let wide = (u128::from(rng.next()) << 64) | u128::from(raw);
    // Small values often, the type's whole range sometimes.
    let keep = |bits: u32| match rng_small(raw) {
        true => wide & 0xff,
        false if bits == 128 => wide,
        false => wide & ((1u128 << bits) - 1),
    };
    match leaf {
        Leaf::Bool => bytes::put_bool(out, raw & 1 == 1),
        Leaf::F32 => bytes::put_f32(out, f32::from_bits(raw as u32)),
        Leaf::F64 => bytes::put_f64(out, f64::from_bits(raw)),
        Leaf::String => bytes::put_str(out, &"é".repeat((raw % 3) as usize)),
        Leaf::Char => bytes::put_char(out, ['a', 'é', '😀'][(raw % 3) as usize]),
        _ => match leaf.integer().expect("an integer leaf") {
            (false, bits) => bytes::put_unsigned(out, bits, keep(bits)),
            (true, bits) => {
                let value = keep(bits);
                // Sign-extend from `bits`.
                let shift = 128 - bits;
                bytes::put_signed(out, bits, ((value << shift) as i128) >> shift);
            }
        },
    }
}

fn rng_small(raw: u64) -> bool {
    raw >> 60 < 12
}

/// Reads past one value of `layout` (as the generator writes them), checking its bytes.
fn measure(layout: &TypeLayout, input: &mut ValueBytes<'_>) -> Result<(), String> {
    let fail = |error: bytes::ValueError| error.to_string();
    match layout {
        TypeLayout::Leaf(leaf) => read_leaf(*leaf, input).map(drop),
        TypeLayout::Struct { fields, .. } => {
            fields.iter().try_for_each(|f| measure(&f.layout, input))
        }
        TypeLayout::TupleStruct { fields, .. } | TypeLayout::Tuple(fields) => {
            fields.iter().try_for_each(|f| measure(f, input))
        }
        TypeLayout::List(item) | TypeLayout::Set(item) => {
            (0..input.length(0).map_err(fail)?).try_for_each(|_| measure(item, input))
        }
        TypeLayout::Array { item, len } => (0..*len).try_for_each(|_| measure(item, input)),
        TypeLayout::Map { key, value } => (0..input.length(0).map_err(fail)?)
            .try_for_each(|_| measure(key, input).and_then(|()| measure(value, input))),
        TypeLayout::Enum { variants, .. } => {
            let index = input.variant_index().map_err(fail)? as usize;
            let variant = variants.get(index).ok_or("variant out of range")?;
            match &variant.fields {
                VariantFields::Unit => Ok(()),
                VariantFields::Tuple(fields) => fields.iter().try_for_each(|f| measure(f, input)),
                VariantFields::Struct(fields) => {
                    fields.iter().try_for_each(|f| measure(&f.layout, input))
                }
            }
        }
        TypeLayout::Serde { reflected, .. } => measure(reflected, input),
        _ => input.take(OPAQUE_LEN).map(drop).map_err(fail),
    }
}

/// A leaf's value as a number (integers), or nothing to compare.
fn read_leaf(leaf: Leaf, input: &mut ValueBytes<'_>) -> Result<Option<i128>, String> {
    let fail = |error: bytes::ValueError| error.to_string();
    Ok(match leaf {
        Leaf::Bool => input.bool().map(|_| None).map_err(fail)?,
        Leaf::F32 => input.f32().map(|_| None).map_err(fail)?,
        Leaf::F64 => input.f64().map(|_| None).map_err(fail)?,
        Leaf::String => input.str().map(|_| None).map_err(fail)?,
        Leaf::Char => input.char().map(|_| None).map_err(fail)?,
        _ => match leaf.integer().expect("an integer leaf") {
            (false, bits) => Some(input.unsigned(bits).map_err(fail)?.try_into().unwrap_or(-1)),
            (true, bits) => Some(input.signed(bits).map_err(fail)?),
        },
    })
}

/// What reading a value as the rule says met.
#[derive(Debug, PartialEq)]
enum Walked {
    Read,
    /// A value in a variant today's enum lacks (a load refuses it).
    Lost,
}

/// Reads a value stored as `stored` the way `read` says, as today's `today`.
fn walk(
    read: &Read,
    stored: &TypeLayout,
    today: &TypeLayout,
    input: &mut ValueBytes<'_>,
) -> Result<Walked, String> {
    let today = match (stored, today) {
        (stored, TypeLayout::Serde { reflected, .. })
            if !matches!(stored, TypeLayout::Serde { .. }) && !matches!(read, Read::AsIs) =>
        {
            &**reflected
        }
        _ => today,
    };
    match (read, stored, today) {
        (Read::AsIs, ..) => measure(stored, input).map(|()| Walked::Read),
        (Read::Widen { from, to }, ..) => {
            let value = read_leaf(*from, input)?;
            match (value, to.integer()) {
                (Some(value), Some((signed, bits))) => {
                    let fits = match signed {
                        true => value >= -(1i128 << (bits - 1).min(126)) || bits == 128,
                        false => value >= 0,
                    };
                    fits.then_some(Walked::Read)
                        .ok_or(format!("{value} does not fit a {}", to.name()))
                }
                _ => Ok(Walked::Read),
            }
        }
        (Read::WrapSome(inner), stored, today) => walk(
            inner,
            stored,
            today.option_item().ok_or("not an option")?,
            input,
        ),
        (
            Read::Struct(named),
            TypeLayout::Struct { fields, .. },
            TypeLayout::Struct { fields: now, .. },
        ) => walk_named(named, fields, now, input),
        (
            Read::TupleStruct(reads),
            TypeLayout::TupleStruct { fields, .. },
            TypeLayout::TupleStruct { fields: now, .. },
        ) => walk_positional(reads, fields, now, input),
        (Read::Tuple(reads), TypeLayout::Tuple(fields), TypeLayout::Tuple(now)) => {
            all(reads.iter().zip(fields).zip(now), |((r, s), t)| {
                walk(r, s, t, input)
            })
        }
        _ => walk_items(read, stored, today, input),
    }
}

/// Lists, sets, arrays, maps and enums.
fn walk_items(
    read: &Read,
    stored: &TypeLayout,
    today: &TypeLayout,
    input: &mut ValueBytes<'_>,
) -> Result<Walked, String> {
    let fail = |error: bytes::ValueError| error.to_string();
    match (read, stored, today) {
        (Read::List(r), TypeLayout::List(s), TypeLayout::List(t))
        | (Read::Set(r), TypeLayout::Set(s), TypeLayout::Set(t)) => {
            let len = input.length(0).map_err(fail)?;
            all(0..len, |_| walk(r, s, t, input))
        }
        (Read::Array(r), TypeLayout::Array { item: s, len }, TypeLayout::Array { item: t, .. }) => {
            all(0..*len, |_| walk(r, s, t, input))
        }
        (
            Read::Map { key, value },
            TypeLayout::Map { key: sk, value: sv },
            TypeLayout::Map { key: tk, value: tv },
        ) => {
            let len = input.length(0).map_err(fail)?;
            all(0..len, |_| match walk(key, sk, tk, input)? {
                Walked::Lost => Ok(Walked::Lost),
                Walked::Read => walk(value, sv, tv, input),
            })
        }
        (
            Read::Enum(reads),
            TypeLayout::Enum { variants, .. },
            TypeLayout::Enum { variants: now, .. },
        ) => {
            let index = input.variant_index().map_err(fail)? as usize;
            match (reads.get(index), variants.get(index)) {
                (Some(VariantRead::Lost(_)), _) => Ok(Walked::Lost),
                (Some(VariantRead::Kept { name, fields }), Some(variant)) => {
                    let today = now
                        .iter()
                        .find(|v| &v.name == name)
                        .ok_or("no such variant")?;
                    walk_variant(fields, &variant.fields, &today.fields, input)
                }
                _ => Err("variant index out of range".into()),
            }
        }
        _ => Err(format!(
            "the rule said {read:?} for {stored:?} as {today:?}"
        )),
    }
}

/// Runs `step` over `items`, stopping at the first lost variant.
fn all<T>(
    items: impl IntoIterator<Item = T>,
    mut step: impl FnMut(T) -> Result<Walked, String>,
) -> Result<Walked, String> {
    for item in items {
        if step(item)? == Walked::Lost {
            return Ok(Walked::Lost);
        }
    }
    Ok(Walked::Read)
}

/// A dropped field, passed over by the load's own skipper.
fn skip(layout: &TypeLayout, input: &mut ValueBytes<'_>) -> Result<Walked, String> {
    let used = stored::skip(layout, input.rest()).map_err(|error| error.to_string())?;
    input.advance(used);
    Ok(Walked::Read)
}

fn walk_named(
    named: &NamedRead,
    stored: &[Field],
    today: &[Field],
    input: &mut ValueBytes<'_>,
) -> Result<Walked, String> {
    all(named.fields.iter().zip(stored), |((name, field), s)| {
        assert_eq!(name, &s.name, "the rule's fields are in stored order");
        match field {
            FieldRead::Drop(layout) => skip(layout, input),
            FieldRead::Keep(read) => {
                let t = today
                    .iter()
                    .find(|t| &t.name == name)
                    .ok_or("no such field")?;
                walk(read, &s.layout, &t.layout, input)
            }
        }
    })
}

fn walk_positional(
    reads: &[FieldRead],
    stored: &[TypeLayout],
    today: &[TypeLayout],
    input: &mut ValueBytes<'_>,
) -> Result<Walked, String> {
    all(
        reads.iter().zip(stored).enumerate(),
        |(index, (field, s))| match field {
            FieldRead::Drop(layout) => skip(layout, input),
            FieldRead::Keep(read) => walk(read, s, today.get(index).ok_or("no such field")?, input),
        },
    )
}

fn walk_variant(
    read: &VariantFieldsRead,
    stored: &VariantFields,
    today: &VariantFields,
    input: &mut ValueBytes<'_>,
) -> Result<Walked, String> {
    match (read, stored, today) {
        (VariantFieldsRead::Empty, ..) => Ok(Walked::Read),
        (VariantFieldsRead::Tuple(reads), VariantFields::Tuple(s), VariantFields::Tuple(t)) => {
            walk_positional(reads, s, t, input)
        }
        (VariantFieldsRead::Struct(named), VariantFields::Struct(s), VariantFields::Struct(t)) => {
            walk_named(named, s, t, input)
        }
        _ => Err("variant fields of another kind".into()),
    }
}

/// One case: a layout, 1-3 edits, and eight values.
fn check_case(seed: u64) {
    let mut rng = Rng(seed);
    let stored = layout(&mut rng, 0);
    let mut today = stored.clone();
    for _ in 0..1 + rng.below(3) {
        edit(&mut rng, &mut today);
    }
    // P3.
    assert_eq!(resolve(&stored, &stored).map(|r| r.read), Ok(Read::AsIs));
    assert_eq!(layout_verdict(&stored, &stored), Verdict::Unchanged);
    // P1.
    let resolution = resolve(&stored, &today);
    let verdict = layout_verdict(&stored, &today);
    let reads = resolution
        .as_ref()
        .is_ok_and(|resolution| resolution.lost_variants.is_empty());
    assert_eq!(
        !verdict.is_problem(),
        reads,
        "{stored:?}\n{today:?}\n{verdict:?}"
    );
    match &verdict {
        Verdict::ReadsByName(changes) => {
            assert!(
                !changes.iter().any(|c| c.kind.needs_migration()),
                "{verdict:?}"
            )
        }
        Verdict::NeedsMigration(changes) => assert!(
            changes[0].kind.needs_migration(),
            "{stored:?}\n{today:?}\n{verdict:?}"
        ),
        _ => {}
    }
    // P2.
    let Ok(resolution) = resolution else {
        return;
    };
    for _ in 0..8 {
        let mut value = Vec::new();
        write_value(&mut rng, &stored, &mut value);
        let mut input = ValueBytes::new(&value);
        let walked = walk(&resolution.read, &stored, &today, &mut input);
        let walked = walked.unwrap_or_else(|error| {
            panic!("{error}\nstored {stored:?}\ntoday {today:?}\nvalue {value:x?}")
        });
        if walked == Walked::Read {
            assert_eq!(input.remaining(), 0, "{stored:?}\n{today:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_guard_says_reads_exactly_when_a_load_reads(seed in any::<u64>()) {
        check_case(seed);
    }
}

fn s(type_path: &str, fields: Vec<(&str, TypeLayout)>) -> TypeLayout {
    TypeLayout::Struct {
        type_path: type_path.into(),
        fields: fields
            .into_iter()
            .map(|(name, layout)| Field {
                name: name.into(),
                layout,
            })
            .collect(),
    }
}

fn enumeration(variants: Vec<(&str, VariantFields)>) -> TypeLayout {
    TypeLayout::Enum {
        type_path: "game::Mode".into(),
        variants: variants
            .into_iter()
            .map(|(name, fields)| Variant {
                name: name.into(),
                fields,
            })
            .collect(),
    }
}

/// D1: a tuple of another arity does not load (the reader matches tuples by arity); the guard
/// used to call it "reads by name" (a field added).
#[test]
fn a_tuple_of_another_arity_needs_a_migration() {
    let u32 = TypeLayout::Leaf(Leaf::U32);
    let stored = s(
        "game::P",
        vec![("at", TypeLayout::Tuple(vec![u32.clone()]))],
    );
    let today = s(
        "game::P",
        vec![("at", TypeLayout::Tuple(vec![u32.clone(), u32]))],
    );
    assert!(resolve(&stored, &today).is_err());
    let Verdict::NeedsMigration(changes) = layout_verdict(&stored, &today) else {
        panic!("{:?}", layout_verdict(&stored, &today));
    };
    assert_eq!(changes[0].path, "game::P.at");
}

/// D2: a unit variant read as a variant of no fields of another kind (both are the index
/// alone), in an enum that needs resolving for another change.
#[test]
fn a_variant_of_no_fields_reads_as_one_of_another_kind() {
    let stored = enumeration(vec![("A", VariantFields::Unit), ("B", VariantFields::Unit)]);
    let today = enumeration(vec![
        ("B", VariantFields::Unit),
        ("A", VariantFields::Tuple(Vec::new())),
    ]);
    let resolution = resolve(&stored, &today).expect("reads");
    let Read::Enum(variants) = resolution.read else {
        panic!("{:?}", resolution.read);
    };
    assert_eq!(
        variants[0],
        VariantRead::Kept {
            name: "A".into(),
            fields: VariantFieldsRead::Empty
        }
    );
    assert!(matches!(
        layout_verdict(&stored, &today),
        Verdict::ReadsByName(_)
    ));
}

/// D3: a removed field whose end cannot be found (an opaque part written by its own serde
/// code) cannot be skipped, so the column does not load; the guard used to call it "reads by
/// name" (a field removed).
#[test]
fn a_removed_field_that_cannot_be_skipped_needs_a_migration() {
    let blob = TypeLayout::Serde {
        type_path: "game::Blob".into(),
        reflected: Box::new(TypeLayout::Opaque {
            type_path: "game::Blob".into(),
        }),
    };
    let hp = ("hp", TypeLayout::Leaf(Leaf::U32));
    let stored = s("game::P", vec![hp.clone(), ("blob", blob)]);
    let today = s("game::P", vec![hp]);
    let refused = resolve(&stored, &today).unwrap_err();
    assert_eq!(refused.path, "game::P.blob");
    let Verdict::NeedsMigration(changes) = layout_verdict(&stored, &today) else {
        panic!("{:?}", layout_verdict(&stored, &today));
    };
    assert_eq!(changes[0].path, "game::P.blob");
    assert!(changes[0].kind.needs_migration());
    // A removed field that can be skipped still reads by name.
    let stored = s(
        "game::P",
        vec![
            ("hp", TypeLayout::Leaf(Leaf::U32)),
            ("n", TypeLayout::Leaf(Leaf::U8)),
        ],
    );
    let today = s("game::P", vec![("hp", TypeLayout::Leaf(Leaf::U32))]);
    assert!(matches!(
        layout_verdict(&stored, &today),
        Verdict::ReadsByName(_)
    ));
}
