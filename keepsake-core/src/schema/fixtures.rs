//! Layouts built by hand for the schema's unit tests.

use super::text::short;
use super::{Field, Leaf, TypeLayout, Variant, VariantFields};

pub(crate) fn leaf(leaf: Leaf) -> TypeLayout {
    TypeLayout::Leaf(leaf)
}

pub(crate) fn field(name: &str, layout: TypeLayout) -> Field {
    Field {
        name: name.into(),
        layout,
    }
}

pub(crate) fn structure(type_path: &str, fields: Vec<Field>) -> TypeLayout {
    TypeLayout::Struct {
        type_path: type_path.into(),
        fields,
    }
}

pub(crate) fn variant(name: &str, fields: VariantFields) -> Variant {
    Variant {
        name: name.into(),
        fields,
    }
}

pub(crate) fn enumeration(type_path: &str, variants: Vec<Variant>) -> TypeLayout {
    TypeLayout::Enum {
        type_path: type_path.into(),
        variants,
    }
}

/// `Option<item>`, its path spelled as [`short`] spells `item`.
pub(crate) fn option(item: TypeLayout) -> TypeLayout {
    enumeration(
        &format!("core::option::Option<{}>", short(&item)),
        vec![
            variant("None", VariantFields::Unit),
            variant("Some", VariantFields::Tuple(vec![item])),
        ],
    )
}

/// An enum with a unit, a tuple and a struct variant.
pub(crate) fn state() -> TypeLayout {
    enumeration(
        "game::State",
        vec![
            variant("Idle", VariantFields::Unit),
            variant("Walking", VariantFields::Tuple(vec![leaf(Leaf::F32)])),
            variant(
                "Jumping",
                VariantFields::Struct(vec![field("height", leaf(Leaf::F32))]),
            ),
        ],
    )
}

/// `game::Stats { hp: u32, name: String, state: State }` and then `more` fields.
pub(crate) fn stats_with(more: Vec<Field>) -> TypeLayout {
    let mut fields = vec![
        field("hp", leaf(Leaf::U32)),
        field("name", leaf(Leaf::String)),
        field("state", state()),
    ];
    fields.extend(more);
    structure("game::Stats", fields)
}
