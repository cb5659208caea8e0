//! The schema file's text: exact round trips (every layout shape, hostile names), and every
//! malformed file refused with the line and type it is about, never a panic.

use super::*;
use crate::blob::ColumnKind;
use crate::schema::TypeLayout;
use crate::schema::fixtures::*;
use crate::schema::{Field, Leaf, MAX_DEPTH, Variant, VariantFields};
use proptest::prelude::*;

fn ty(type_path: &str, layout: TypeLayout) -> SchemaType {
    SchemaType {
        type_path: type_path.into(),
        kind: ColumnKind::Component,
        version: 1,
        migrates_from: Vec::new(),
        renamed_from: Vec::new(),
        layout,
    }
}

/// Every node kind once.
fn every_shape() -> SaveSchema {
    let bag = structure(
        "game::Bag",
        vec![
            field("items", TypeLayout::List(Box::new(leaf(Leaf::U16)))),
            field("tags", TypeLayout::Set(Box::new(leaf(Leaf::String)))),
            field(
                "grid",
                TypeLayout::Array {
                    item: Box::new(leaf(Leaf::U8)),
                    len: 9,
                },
            ),
            field(
                "names",
                TypeLayout::Map {
                    key: Box::new(leaf(Leaf::Entity)),
                    value: Box::new(option(leaf(Leaf::Vec3))),
                },
            ),
            field(
                "pair",
                TypeLayout::Tuple(vec![leaf(Leaf::Bool), leaf(Leaf::Char)]),
            ),
            field("unit", TypeLayout::Tuple(Vec::new())),
            field(
                "image",
                TypeLayout::Handle {
                    asset_type: "bevy_image::image::Image".into(),
                },
            ),
            field("any", TypeLayout::UntypedHandle),
            field(
                "blob",
                TypeLayout::Opaque {
                    type_path: "a::B<(f32, u8)>".into(),
                },
            ),
            field(
                "tree",
                TypeLayout::Deep {
                    type_path: "game::Tree".into(),
                },
            ),
            field("state", state()),
        ],
    );
    let mut armor = ty(
        "game::Armor",
        TypeLayout::TupleStruct {
            type_path: "game::Armor".into(),
            fields: vec![leaf(Leaf::F32), structure("game::Empty", Vec::new())],
        },
    );
    armor.kind = ColumnKind::Resource;
    armor.version = 4;
    armor.migrates_from = vec![3, 1];
    armor.renamed_from = vec!["old::Armor".into(), "older::Armor".into()];
    let serde = ty(
        "game::Named",
        TypeLayout::Serde {
            type_path: "game::Named".into(),
            reflected: Box::new(structure("game::Named", vec![field("n", leaf(Leaf::I64))])),
        },
    );
    SaveSchema::new(vec![ty("game::Bag", bag), armor, serde])
}

#[test]
fn every_shape_reads_back_exactly_and_sorted() {
    let schema = every_shape();
    let text = schema.to_text();
    assert_eq!(SaveSchema::parse(&text).unwrap(), schema);
    let paths: Vec<&str> = schema
        .types()
        .iter()
        .map(|t| t.type_path.as_str())
        .collect();
    assert_eq!(paths, ["game::Armor", "game::Bag", "game::Named"]);
    assert!(text.starts_with("keepsake-schema 1\n"), "{text}");
    for line in [
        "type game::Armor\n  kind resource\n  version 4\n  encoding reflect\n  migrates-from 1 3\n  \
         renamed-from old::Armor\n  renamed-from older::Armor\n  layout tuple-struct game::Armor\n    0: f32\n",
        "    names: map\n      {key}: Entity\n      {}: enum core::option::Option<Vec3>\n        variant None\n        tuple-variant Some\n          0: Vec3\n",
        "  encoding serde\n  layout serde game::Named\n    reflected: struct game::Named\n      n: i64\n",
        "    grid: array 9\n      []: u8\n",
    ] {
        assert!(text.contains(line), "{line}\nnot in\n{text}");
    }
    // Comments and blank lines anywhere, and line ends of either kind, change nothing.
    let commented = text
        .replace("\n  kind", "\n\n   # a note\n  kind")
        .replace('\n', "\r\n");
    assert_eq!(SaveSchema::parse(&commented).unwrap(), schema);
}

#[test]
fn hostile_names_are_quoted_and_read_back() {
    let names = [
        "",
        " lead",
        "trail ",
        "\"quoted\"",
        "a: b",
        "new\nline",
        "tab\there",
        "back\\slash",
        "bell\u{7}",
        "# not a comment",
        "ünïcode",
        "x\u{feff}",
    ];
    let fields: Vec<Field> = names
        .iter()
        .map(|name| field(name, leaf(Leaf::U8)))
        .collect();
    let variants: Vec<Variant> = names
        .iter()
        .map(|name| Variant {
            name: (*name).into(),
            fields: VariantFields::Unit,
        })
        .collect();
    let types = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let path = format!("{name}{index}");
            let layout = match index % 2 {
                0 => structure(name, fields.clone()),
                _ => enumeration(name, variants.clone()),
            };
            let mut ty = ty(&path, layout);
            ty.renamed_from = vec![(*name).into()];
            ty
        })
        .collect();
    let schema = SaveSchema::new(types);
    let text = schema.to_text();
    assert_eq!(SaveSchema::parse(&text).unwrap(), schema, "{text}");
}

fn error_of(text: &str) -> String {
    SaveSchema::parse(text).unwrap_err().to_string()
}

/// Damaged copies of a good file: the line replaced (and by what), how many lines past it
/// the error is (`None`: at the type's own line), the type it names, and its words.
const MALFORMED: [(&str, &str, Option<usize>, &str, &str); 14] = [
    (
        "  kind resource",
        "  kind thing",
        Some(0),
        "game::Armor",
        "kind \"thing\"",
    ),
    (
        "      []: u8",
        "      []: u8\n        0: u8",
        Some(1),
        "game::Bag",
        "no fields or items",
    ),
    (
        "      {}: enum core::option::Option<Vec3>",
        "      {value}: enum x",
        Some(0),
        "game::Bag",
        "expected `{}:`",
    ),
    (
        "  encoding serde",
        "  encoding reflect",
        Some(0),
        "game::Named",
        "expected `encoding serde`",
    ),
    (
        "  migrates-from 1 3",
        "  migrates-from 3 1",
        Some(0),
        "game::Armor",
        "must ascend",
    ),
    (
        "  migrates-from 1 3",
        "  migrates-from 1 4",
        None,
        "game::Armor",
        "not older than version 4",
    ),
    (
        "  version 4",
        "  version +4",
        Some(0),
        "game::Armor",
        "not a number",
    ),
    ("  version 4", "", None, "game::Armor", "no `version` line"),
    (
        "  version 4",
        "  version 4\n  version 4",
        Some(1),
        "game::Armor",
        "given twice",
    ),
    (
        "  kind resource",
        "  colour red",
        Some(0),
        "game::Armor",
        "unknown property",
    ),
    (
        "    0: f32",
        "    1: f32",
        Some(0),
        "game::Armor",
        "expected field `0:`",
    ),
    (
        "    0: f32",
        "\t0: f32",
        Some(0),
        "game::Armor",
        "indented with a tab",
    ),
    (
        "        variant None",
        "        variant \"None",
        Some(0),
        "game::Bag",
        "not a well-formed quoted text",
    ),
    (
        "        variant None",
        "        unit None",
        Some(0),
        "game::Bag",
        "expected a variant",
    ),
];

#[test]
fn malformed_files_name_the_line_and_the_type() {
    let good = every_shape().to_text();
    let line_of = |needle: &str| good.lines().position(|l| l == needle).unwrap() + 1;
    for (needle, replacement, past, type_path, reason) in MALFORMED {
        let lines: Vec<&str> = good
            .lines()
            .map(|l| if l == needle { replacement } else { l })
            .collect();
        let text = lines.join("\n");
        let line = match past {
            Some(past) => line_of(needle) + past,
            None => line_of(&format!("type {type_path}")),
        };
        let error = SaveSchema::parse(&text).unwrap_err();
        let SchemaFileError::Syntax {
            line: at,
            type_path: Some(in_type),
            ..
        } = &error
        else {
            panic!("{reason}: {error:?}");
        };
        assert_eq!((*at, in_type.as_str()), (line, type_path), "{error}");
        assert!(error.to_string().contains(reason), "{reason}: {error}");
    }
    let twice = format!(
        "{good}\n{}",
        good.lines().skip(3).collect::<Vec<_>>().join("\n")
    );
    assert!(error_of(&twice).contains("type game::Armor is listed twice"));
    assert!(error_of("").contains("not a keepsake schema file"));
    assert!(error_of("keepsake-schema one\n").contains("not a keepsake schema file"));
    assert!(error_of("keepsake-schema 0\n").contains("not a keepsake schema file"));
    assert!(matches!(
        SaveSchema::parse("keepsake-schema 2\ntype x\n"),
        Err(SchemaFileError::NewerFormat { found: 2 })
    ));
    assert_eq!(
        SaveSchema::parse("keepsake-schema 1\n").unwrap(),
        SaveSchema::default()
    );
}

#[test]
fn a_layout_nested_deeper_than_any_save_holds_is_refused() {
    let mut text = String::from(
        "keepsake-schema 1\ntype t\n  kind component\n  version 1\n  encoding reflect\n  layout list\n",
    );
    for depth in 0..MAX_DEPTH + 2 {
        let indent = " ".repeat(4 + 2 * depth);
        text.push_str(&format!("{indent}[]: list\n"));
    }
    assert!(
        error_of(&text).contains("nests deeper"),
        "{}",
        error_of(&text)
    );
    // As deep as a stored layout may be reads.
    let mut layout = leaf(Leaf::U8);
    for _ in 0..MAX_DEPTH {
        layout = TypeLayout::List(Box::new(layout));
    }
    let schema = SaveSchema::new(vec![ty("t", layout)]);
    assert_eq!(SaveSchema::parse(&schema.to_text()).unwrap(), schema);
}

fn arb_text() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,6}(::[A-Za-z]{1,5})?",
        any::<String>(),
        proptest::string::string_regex("[ \"\\\\:#\n\t{}\\[\\]0-9a-z]{0,8}").unwrap(),
    ]
    .boxed()
}

fn arb_layout() -> impl Strategy<Value = TypeLayout> {
    let leaf = prop_oneof![
        (0..Leaf::ALL.len()).prop_map(|i| TypeLayout::Leaf(Leaf::ALL[i])),
        arb_text().prop_map(|asset_type| TypeLayout::Handle { asset_type }),
        Just(TypeLayout::UntypedHandle),
        arb_text().prop_map(|type_path| TypeLayout::Opaque { type_path }),
        arb_text().prop_map(|type_path| TypeLayout::Deep { type_path }),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let fields = prop::collection::vec((arb_text(), inner.clone()), 0..4)
            .prop_map(|fields: Vec<(String, TypeLayout)>| {
                fields
                    .into_iter()
                    .map(|(n, l)| field(&n, l))
                    .collect::<Vec<_>>()
            })
            .boxed();
        let variant_fields = prop_oneof![
            Just(VariantFields::Unit),
            prop::collection::vec(inner.clone(), 0..3).prop_map(VariantFields::Tuple),
            fields.clone().prop_map(VariantFields::Struct),
        ];
        prop_oneof![
            (arb_text(), fields.clone()).prop_map(|(p, f): (String, Vec<Field>)| structure(&p, f)),
            (arb_text(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(type_path, fields)| TypeLayout::TupleStruct { type_path, fields }),
            prop::collection::vec(inner.clone(), 0..3).prop_map(TypeLayout::Tuple),
            inner.clone().prop_map(|i| TypeLayout::List(Box::new(i))),
            inner.clone().prop_map(|i| TypeLayout::Set(Box::new(i))),
            (inner.clone(), any::<u64>()).prop_map(|(i, len)| TypeLayout::Array {
                item: Box::new(i),
                len
            }),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| TypeLayout::Map {
                key: Box::new(k),
                value: Box::new(v)
            }),
            (
                arb_text(),
                prop::collection::vec((arb_text(), variant_fields), 0..4)
            )
                .prop_map(|(p, v): (String, Vec<(String, VariantFields)>)| {
                    enumeration(
                        &p,
                        v.into_iter()
                            .map(|(name, fields)| Variant { name, fields })
                            .collect(),
                    )
                }),
            (arb_text(), inner).prop_map(|(type_path, r)| TypeLayout::Serde {
                type_path,
                reflected: Box::new(r)
            }),
        ]
    })
}

proptest! {
    #[test]
    fn any_schema_reads_back_exactly(
        layouts in prop::collection::vec((arb_text(), arb_layout(), 1u32..5, any::<bool>()), 0..4),
        renamed in prop::collection::vec(arb_text(), 0..3),
    ) {
        let mut seen = std::collections::HashSet::new();
        let types = layouts
            .into_iter()
            .filter(|(path, ..)| seen.insert(path.clone()))
            .map(|(type_path, layout, version, resource)| SchemaType {
                type_path,
                kind: if resource { ColumnKind::Resource } else { ColumnKind::Component },
                version,
                migrates_from: (1..version).step_by(2).collect(),
                renamed_from: renamed.clone(),
                layout,
            })
            .collect();
        let schema = SaveSchema::new(types);
        let text = schema.to_text();
        prop_assert_eq!(SaveSchema::parse(&text).unwrap(), schema);
    }

    #[test]
    fn damaged_text_is_an_error_never_a_panic(cut in 0usize..4000, byte in any::<u8>(), at in 0usize..4000) {
        let text = every_shape().to_text();
        let mut bytes = text.into_bytes();
        let at = at % bytes.len();
        bytes[at] = byte;
        bytes.truncate(cut.max(1));
        let _ = SaveSchema::parse(&String::from_utf8_lossy(&bytes));
    }
}
