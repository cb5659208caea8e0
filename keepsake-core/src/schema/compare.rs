//! What changed between a stored layout and today's, in words a game developer can act on.
//!
//! [`changes`] walks both layouts side by side. Values of a stored layout are read by it and
//! resolved by name, so a moved field or variant, a widened number or a type that moved to
//! another crate loads as before: those are listed for information, and
//! [`ChangeKind::needs_migration`] marks the changes that saved values cannot load through.
//! Whether a column loads is not decided here but by the one rule both the load and the
//! compatibility guard ask, [`resolve`](super::resolve); these are its words.

use std::fmt::{self, Display, Formatter};

pub use super::resolve::reads_as_is;
use super::resolve::{field_count, resolves_within};
use super::text::{described, root_name, short};
use super::{Field, TypeLayout, UNKNOWN_ASSET, Variant, VariantFields};

/// One difference between a stored layout and today's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Where, from the root's type path: `game::Stats.xp` (a field), `game::Door::Locked.0` (a
    /// variant's field), `game::Bag.items[]` (a list's items), `game::Map{}` (a map's values),
    /// `game::Map{key}` (its keys).
    pub path: String,
    /// What changed there.
    pub kind: ChangeKind,
}

/// What changed at a [`Change`]'s path. Layouts are written as [`short`] spells them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// A field today's type has and the save does not.
    FieldAdded {
        /// The field's layout today.
        layout: String,
    },
    /// A field the save has and today's type does not.
    FieldRemoved {
        /// The field's stored layout.
        layout: String,
    },
    /// The fields of a struct are in another order (they are read by name).
    FieldsReordered,
    /// A variant today's enum has and the save does not.
    VariantAdded {
        /// The variant's name.
        name: String,
    },
    /// A variant the save has and today's enum does not.
    VariantRemoved {
        /// The variant's name.
        name: String,
    },
    /// The variants of an enum are in another order (they are read by name).
    VariantsReordered,
    /// A number now of a wider type, which holds every stored value.
    Widened {
        /// The stored type.
        from: String,
        /// Today's type.
        to: String,
    },
    /// A value now wrapped in an `Option` (stored values load as `Some`).
    WrappedInOption,
    /// A value of another type or shape, which stored values cannot be read into.
    TypeChanged {
        /// The stored layout.
        stored: String,
        /// Today's layout.
        today: String,
    },
    /// A type written by its own serde code whose reflected layout changed: its bytes may
    /// have changed too.
    SerdeLayoutChanged {
        /// The changes in the reflected layout.
        changes: Vec<Change>,
    },
}

impl ChangeKind {
    /// Whether stored values cannot load through this change without a migration: a changed
    /// type, a serde type whose layout changed, a removed variant. An added field is not one:
    /// whether it may take its default is the loader's decision. For the words only (a report
    /// lists these first): whether a column loads is `schema::resolve`'s decision.
    pub fn needs_migration(&self) -> bool {
        matches!(
            self,
            ChangeKind::TypeChanged { .. }
                | ChangeKind::SerdeLayoutChanged { .. }
                | ChangeKind::VariantRemoved { .. }
        )
    }
}

/// What differs between the `stored` layout and `today`'s, in the order of today's fields
/// (removed ones after). Empty when they are equal or differ only in type paths: a type that
/// moved to another module or crate reads as before.
pub fn changes(stored: &TypeLayout, today: &TypeLayout) -> Vec<Change> {
    changes_at(root_name(today), false, stored, today)
}

fn changes_at(
    path: String,
    below_root: bool,
    stored: &TypeLayout,
    today: &TypeLayout,
) -> Vec<Change> {
    let mut walk = Walk {
        path,
        below_root,
        out: Vec::new(),
    };
    walk.compare(stored, today);
    walk.out
}

/// Both layouts walked side by side, with the path to the current node.
struct Walk {
    path: String,
    /// Below the column's root, where a part stored by structure reads as a type today written
    /// by its own serde code (by its reflected structure; see `schema::resolve`).
    below_root: bool,
    out: Vec<Change>,
}

impl Walk {
    fn push(&mut self, kind: ChangeKind) {
        self.out.push(Change {
            path: self.path.clone(),
            kind,
        });
    }

    /// Runs `walk` with `segment` appended to the path.
    fn nested(&mut self, segment: &str, walk: impl FnOnce(&mut Self)) {
        let (mark, below_root) = (self.path.len(), self.below_root);
        self.path.push_str(segment);
        self.below_root = true;
        walk(self);
        self.below_root = below_root;
        self.path.truncate(mark);
    }

    fn compare(&mut self, stored: &TypeLayout, today: &TypeLayout) {
        if stored == today {
            return;
        }
        if let (TypeLayout::Handle { asset_type }, TypeLayout::Handle { .. }) = (stored, today)
            && asset_type == UNKNOWN_ASSET
        {
            return;
        }
        if let (None, Some(item)) = (stored.option_item(), today.option_item()) {
            return self.wrapped(stored, today, item);
        }
        if let TypeLayout::Serde { reflected, .. } = today
            && self.below_root
            && !matches!(stored, TypeLayout::Serde { .. })
        {
            // Read by its structure, shape against shape (the rule's order).
            if **reflected != *stored {
                self.shape(stored, reflected);
            }
            return;
        }
        self.shape(stored, today);
    }

    /// Two layouts, shape against shape.
    fn shape(&mut self, stored: &TypeLayout, today: &TypeLayout) {
        match (stored, today) {
            (TypeLayout::Leaf(from), TypeLayout::Leaf(to)) if from.widens_to(*to) => {
                self.push(ChangeKind::Widened {
                    from: from.name().to_owned(),
                    to: to.name().to_owned(),
                });
            }
            (TypeLayout::Struct { fields: from, .. }, TypeLayout::Struct { fields: to, .. }) => {
                self.named(from, to);
            }
            (
                TypeLayout::TupleStruct { fields: from, .. },
                TypeLayout::TupleStruct { fields: to, .. },
            )
            | (TypeLayout::Tuple(from), TypeLayout::Tuple(to)) => self.positional(from, to),
            (TypeLayout::List(from), TypeLayout::List(to))
            | (TypeLayout::Set(from), TypeLayout::Set(to)) => {
                self.nested("[]", |walk| walk.compare(from, to));
            }
            (
                TypeLayout::Array { item: from, len },
                TypeLayout::Array {
                    item: to,
                    len: today_len,
                },
            ) if len == today_len => self.nested("[]", |walk| walk.compare(from, to)),
            (TypeLayout::Map { key, value }, TypeLayout::Map { key: k, value: v }) => {
                self.nested("{key}", |walk| walk.compare(key, k));
                self.nested("{}", |walk| walk.compare(value, v));
            }
            (TypeLayout::Enum { variants: from, .. }, TypeLayout::Enum { variants: to, .. }) => {
                self.variants(from, to);
            }
            (
                TypeLayout::Serde {
                    type_path,
                    reflected,
                },
                TypeLayout::Serde {
                    type_path: today_path,
                    reflected: today_reflected,
                },
            ) if type_path == today_path => self.serde(reflected, today_reflected),
            // Opaque, deep and handle layouts, and every pair of different shapes: only an
            // equal layout reads.
            _ => self.type_changed(stored, today),
        }
    }

    fn type_changed(&mut self, stored: &TypeLayout, today: &TypeLayout) {
        let (mut stored_text, mut today_text) = (short(stored), short(today));
        if stored_text == today_text {
            // Same name, another shape (a struct become a tuple struct).
            (stored_text, today_text) = (described(stored), described(today));
        }
        self.push(ChangeKind::TypeChanged {
            stored: stored_text,
            today: today_text,
        });
    }

    /// Stored `T`, today `Option<item>`: wrapped if `T` resolves to `item` (the rule's
    /// decision, `schema::resolve`).
    fn wrapped(&mut self, stored: &TypeLayout, today: &TypeLayout, item: &TypeLayout) {
        if !resolves_within(&self.path, stored, item) {
            return self.type_changed(stored, today);
        }
        // Inside an `Option`, below the column's root even at its path.
        let inner = changes_at(self.path.clone(), true, stored, item);
        self.push(ChangeKind::WrappedInOption);
        self.out.extend(inner);
    }

    /// The same serde type: its reflected layout is the fingerprint of its bytes.
    /// Variants appended at the end keep its bytes readable (see [`reads_as_is`]): those are
    /// listed as they are, any other change as a whole.
    fn serde(&mut self, stored: &TypeLayout, today: &TypeLayout) {
        let changes = changes_at(self.path.clone(), self.below_root, stored, today);
        if reads_as_is(stored, today) {
            self.out.extend(changes);
        } else if !changes.is_empty() {
            self.push(ChangeKind::SerdeLayoutChanged { changes });
        }
    }

    /// Fields matched by name.
    fn named(&mut self, stored: &[Field], today: &[Field]) {
        let stored_names: Vec<&str> = stored.iter().map(|field| field.name.as_str()).collect();
        let today_names: Vec<&str> = today.iter().map(|field| field.name.as_str()).collect();
        if reordered(&stored_names, &today_names) {
            self.push(ChangeKind::FieldsReordered);
        }
        for field in today {
            let segment = format!(".{}", field.name);
            match stored.iter().find(|old| old.name == field.name) {
                Some(old) => self.nested(&segment, |walk| walk.compare(&old.layout, &field.layout)),
                None => self.nested(&segment, |walk| {
                    walk.push(ChangeKind::FieldAdded {
                        layout: short(&field.layout),
                    });
                }),
            }
        }
        for old in stored {
            if !today.iter().any(|field| field.name == old.name) {
                self.nested(&format!(".{}", old.name), |walk| {
                    walk.push(ChangeKind::FieldRemoved {
                        layout: short(&old.layout),
                    });
                });
            }
        }
    }

    /// Fields matched by position; extra ones at the end are added or removed.
    fn positional(&mut self, stored: &[TypeLayout], today: &[TypeLayout]) {
        for (index, (old, new)) in stored.iter().zip(today).enumerate() {
            self.nested(&format!(".{index}"), |walk| walk.compare(old, new));
        }
        for (index, new) in today.iter().enumerate().skip(stored.len()) {
            self.nested(&format!(".{index}"), |walk| {
                walk.push(ChangeKind::FieldAdded { layout: short(new) });
            });
        }
        for (index, old) in stored.iter().enumerate().skip(today.len()) {
            self.nested(&format!(".{index}"), |walk| {
                walk.push(ChangeKind::FieldRemoved { layout: short(old) });
            });
        }
    }

    /// Variants matched by name.
    fn variants(&mut self, stored: &[Variant], today: &[Variant]) {
        let stored_names: Vec<&str> = stored.iter().map(|variant| variant.name.as_str()).collect();
        let today_names: Vec<&str> = today.iter().map(|variant| variant.name.as_str()).collect();
        if reordered(&stored_names, &today_names) {
            self.push(ChangeKind::VariantsReordered);
        }
        for variant in today {
            match stored.iter().find(|old| old.name == variant.name) {
                Some(old) => self.nested(&format!("::{}", variant.name), |walk| {
                    walk.variant_fields(&old.fields, &variant.fields);
                }),
                None => self.push(ChangeKind::VariantAdded {
                    name: variant.name.clone(),
                }),
            }
        }
        for old in stored {
            if !today.iter().any(|variant| variant.name == old.name) {
                self.push(ChangeKind::VariantRemoved {
                    name: old.name.clone(),
                });
            }
        }
    }

    fn variant_fields(&mut self, stored: &VariantFields, today: &VariantFields) {
        match (stored, today) {
            (VariantFields::Tuple(from), VariantFields::Tuple(to)) => self.positional(from, to),
            (VariantFields::Struct(from), VariantFields::Struct(to)) => self.named(from, to),
            // A variant of no fields is written as its index alone, whatever its kind.
            _ if field_count(stored) == 0 && field_count(today) == 0 => {}
            _ => self.push(ChangeKind::TypeChanged {
                stored: variant_text(stored),
                today: variant_text(today),
            }),
        }
    }
}

/// Whether the names both lists have come in another order.
fn reordered(stored: &[&str], today: &[&str]) -> bool {
    let stored_common = stored.iter().filter(|name| today.contains(name));
    let today_common = today.iter().filter(|name| stored.contains(name));
    !stored_common.eq(today_common)
}

/// A variant's fields on one line: `a unit variant`, `(u32, f32)`, `{ height: f32 }`.
fn variant_text(fields: &VariantFields) -> String {
    match fields {
        VariantFields::Unit => "a unit variant".to_owned(),
        VariantFields::Tuple(fields) => {
            let fields: Vec<String> = fields.iter().map(short).collect();
            format!("({})", fields.join(", "))
        }
        VariantFields::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|field| format!("{}: {}", field.name, short(&field.layout)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }
}

/// One sentence: `game::Stats.hp: u32 in the save, String today`.
impl Display for Change {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.kind {
            ChangeKind::FieldAdded { layout } => {
                write!(f, "{path}: a field the save does not have ({layout})")
            }
            ChangeKind::FieldRemoved { layout } => write!(
                f,
                "{path}: a field the type no longer has ({layout}); its saved values are skipped"
            ),
            ChangeKind::FieldsReordered => {
                write!(f, "{path}: fields in another order (read by name)")
            }
            ChangeKind::VariantAdded { name } => {
                write!(
                    f,
                    "{path}: variant {name} is new; the save has no values of it"
                )
            }
            ChangeKind::VariantRemoved { name } => write!(
                f,
                "{path}: variant {name} is gone; saved values of it need a migration"
            ),
            ChangeKind::VariantsReordered => {
                write!(f, "{path}: variants in another order (read by name)")
            }
            ChangeKind::Widened { from, to } => {
                write!(
                    f,
                    "{path}: {from} in the save, {to} today (every saved value fits)"
                )
            }
            ChangeKind::WrappedInOption => {
                write!(
                    f,
                    "{path}: wrapped in an Option today (saved values load as Some)"
                )
            }
            ChangeKind::TypeChanged { stored, today } => {
                write!(f, "{path}: {stored} in the save, {today} today")
            }
            ChangeKind::SerdeLayoutChanged { changes } => {
                let changes: Vec<String> = changes.iter().map(Change::to_string).collect();
                write!(
                    f,
                    "{path}: written by its own serde code, and its layout changed ({}); its \
                     saved bytes may no longer read",
                    changes.join("; ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Leaf;
    use crate::schema::fixtures::*;

    fn change(path: &str, kind: ChangeKind) -> Change {
        Change {
            path: path.into(),
            kind,
        }
    }

    fn texts(changes: &[Change]) -> Vec<String> {
        changes.iter().map(Change::to_string).collect()
    }

    #[test]
    fn equal_layouts_and_moved_types_have_no_changes() {
        let stats = structure("game::Stats", vec![field("hp", leaf(Leaf::U32))]);
        assert!(changes(&stats, &stats).is_empty());
        let moved = structure("other_crate::Stats", vec![field("hp", leaf(Leaf::U32))]);
        assert!(changes(&stats, &moved).is_empty());
    }

    #[test]
    fn fields_are_matched_by_name() {
        let stored = structure(
            "game::Stats",
            vec![
                field("hp", leaf(Leaf::U32)),
                field("name", leaf(Leaf::String)),
                field("mana", leaf(Leaf::U16)),
            ],
        );
        let today = structure(
            "game::Stats",
            vec![
                field("name", leaf(Leaf::String)),
                field("hp", leaf(Leaf::String)),
                field("xp", leaf(Leaf::U32)),
            ],
        );
        let found = changes(&stored, &today);
        assert_eq!(
            found,
            vec![
                change("game::Stats", ChangeKind::FieldsReordered),
                change(
                    "game::Stats.hp",
                    ChangeKind::TypeChanged {
                        stored: "u32".into(),
                        today: "String".into(),
                    },
                ),
                change(
                    "game::Stats.xp",
                    ChangeKind::FieldAdded {
                        layout: "u32".into()
                    }
                ),
                change(
                    "game::Stats.mana",
                    ChangeKind::FieldRemoved {
                        layout: "u16".into()
                    }
                ),
            ]
        );
        assert_eq!(
            texts(&found),
            [
                "game::Stats: fields in another order (read by name)",
                "game::Stats.hp: u32 in the save, String today",
                "game::Stats.xp: a field the save does not have (u32)",
                "game::Stats.mana: a field the type no longer has (u16); its saved values are \
                 skipped",
            ]
        );
        assert!(found[1].kind.needs_migration());
        assert!(
            !found[2].kind.needs_migration(),
            "the loader decides about defaults"
        );
        assert!(!found[3].kind.needs_migration());
        assert!(!found[0].kind.needs_migration());
    }

    #[test]
    fn positional_fields_are_matched_by_position() {
        let tuple_struct = |fields| TypeLayout::TupleStruct {
            type_path: "game::Pair".into(),
            fields,
        };
        let stored = tuple_struct(vec![leaf(Leaf::U8), leaf(Leaf::Bool)]);
        let today = tuple_struct(vec![leaf(Leaf::U16)]);
        assert_eq!(
            texts(&changes(&stored, &today)),
            [
                "game::Pair.0: u8 in the save, u16 today (every saved value fits)",
                "game::Pair.1: a field the type no longer has (bool); its saved values are skipped",
            ]
        );
        let stored = TypeLayout::Tuple(vec![leaf(Leaf::U8)]);
        let today = TypeLayout::Tuple(vec![leaf(Leaf::U8), leaf(Leaf::F32)]);
        assert_eq!(
            changes(&stored, &today),
            [change(
                "(u8, f32).1",
                ChangeKind::FieldAdded {
                    layout: "f32".into()
                }
            )]
        );
    }

    fn door(variants: Vec<Variant>) -> TypeLayout {
        enumeration("game::Door", variants)
    }

    #[test]
    fn variants_are_matched_by_name() {
        let stored = door(vec![
            variant("Open", VariantFields::Unit),
            variant("Locked", VariantFields::Tuple(vec![leaf(Leaf::U32)])),
            variant("Jammed", VariantFields::Unit),
        ]);
        let today = door(vec![
            variant("Locked", VariantFields::Tuple(vec![leaf(Leaf::String)])),
            variant("Open", VariantFields::Unit),
            variant("Broken", VariantFields::Unit),
        ]);
        let found = changes(&stored, &today);
        assert_eq!(
            texts(&found),
            [
                "game::Door: variants in another order (read by name)",
                "game::Door::Locked.0: u32 in the save, String today",
                "game::Door: variant Broken is new; the save has no values of it",
                "game::Door: variant Jammed is gone; saved values of it need a migration",
            ]
        );
        assert_eq!(found[0].kind, ChangeKind::VariantsReordered);
        assert_eq!(
            found[2].kind,
            ChangeKind::VariantAdded {
                name: "Broken".into()
            }
        );
        assert_eq!(
            found[3].kind,
            ChangeKind::VariantRemoved {
                name: "Jammed".into()
            }
        );
        assert!(found[3].kind.needs_migration());
        assert!(!found[2].kind.needs_migration());
    }

    #[test]
    fn variant_fields_of_another_kind_are_a_type_change() {
        let height = || vec![field("height", leaf(Leaf::F32))];
        let stored = door(vec![
            variant("Open", VariantFields::Unit),
            variant("Ajar", VariantFields::Struct(height())),
            variant("Shut", VariantFields::Tuple(vec![])),
        ]);
        let today = door(vec![
            variant("Open", VariantFields::Tuple(vec![leaf(Leaf::U8)])),
            variant("Ajar", VariantFields::Struct(vec![])),
            variant("Shut", VariantFields::Unit),
        ]);
        assert_eq!(
            texts(&changes(&stored, &today)),
            [
                "game::Door::Open: a unit variant in the save, (u8) today",
                "game::Door::Ajar.height: a field the type no longer has (f32); its saved \
                 values are skipped",
            ]
        );
    }

    #[test]
    fn numbers_widen_and_values_wrap_in_options() {
        assert_eq!(
            changes(&leaf(Leaf::U32), &leaf(Leaf::I64)),
            [change(
                "i64",
                ChangeKind::Widened {
                    from: "u32".into(),
                    to: "i64".into(),
                },
            )]
        );
        assert_eq!(
            changes(&leaf(Leaf::U32), &leaf(Leaf::I32))[0].kind,
            ChangeKind::TypeChanged {
                stored: "u32".into(),
                today: "i32".into(),
            }
        );
        let stored = structure("game::Stats", vec![field("weapon", leaf(Leaf::U32))]);
        let wrap = |item| structure("game::Stats", vec![field("weapon", option(item))]);
        assert_eq!(
            texts(&changes(&stored, &wrap(leaf(Leaf::U32)))),
            ["game::Stats.weapon: wrapped in an Option today (saved values load as Some)"]
        );
        assert_eq!(
            changes(&stored, &wrap(leaf(Leaf::U64))),
            [
                change("game::Stats.weapon", ChangeKind::WrappedInOption),
                change(
                    "game::Stats.weapon",
                    ChangeKind::Widened {
                        from: "u32".into(),
                        to: "u64".into(),
                    },
                ),
            ]
        );
        assert_eq!(
            texts(&changes(&stored, &wrap(leaf(Leaf::String)))),
            ["game::Stats.weapon: u32 in the save, Option<String> today"]
        );
    }

    #[test]
    fn collection_items_have_their_own_paths() {
        let bag = |item| {
            structure(
                "game::Bag",
                vec![field("items", TypeLayout::List(Box::new(item)))],
            )
        };
        assert_eq!(
            changes(&bag(leaf(Leaf::U8)), &bag(leaf(Leaf::U16)))[0].path,
            "game::Bag.items[]"
        );
        let map = |key, value| TypeLayout::Map {
            key: Box::new(key),
            value: Box::new(value),
        };
        let stored = map(leaf(Leaf::String), leaf(Leaf::U8));
        let today = map(leaf(Leaf::Entity), leaf(Leaf::Bool));
        let paths: Vec<String> = changes(&stored, &today)
            .into_iter()
            .map(|change| change.path)
            .collect();
        assert_eq!(
            paths,
            ["HashMap<Entity, bool>{key}", "HashMap<Entity, bool>{}"]
        );
        let array = |len| TypeLayout::Array {
            item: Box::new(leaf(Leaf::F32)),
            len,
        };
        assert_eq!(
            texts(&changes(&array(3), &array(4))),
            ["[f32; 4]: [f32; 3] in the save, [f32; 4] today"]
        );
        let set = TypeLayout::Set(Box::new(leaf(Leaf::U8)));
        let list = TypeLayout::List(Box::new(leaf(Leaf::U8)));
        assert!(changes(&set, &list)[0].kind.needs_migration());
    }

    #[test]
    fn serde_types_compare_by_their_reflected_layout() {
        let serde = |type_path: &str, reflected| TypeLayout::Serde {
            type_path: type_path.into(),
            reflected: Box::new(reflected),
        };
        let rgb = |blue| {
            let mut fields = vec![field("r", leaf(Leaf::F32)), field("g", leaf(Leaf::F32))];
            fields.extend(blue);
            structure("game::Rgb", fields)
        };
        let stored = serde("game::Rgb", rgb(None));
        let today = serde("game::Rgb", rgb(Some(field("b", leaf(Leaf::F32)))));
        let found = changes(&stored, &today);
        assert_eq!(
            found,
            [change(
                "game::Rgb",
                ChangeKind::SerdeLayoutChanged {
                    changes: vec![change(
                        "game::Rgb.b",
                        ChangeKind::FieldAdded {
                            layout: "f32".into()
                        },
                    )],
                },
            )]
        );
        assert!(found[0].kind.needs_migration());
        assert_eq!(
            found[0].to_string(),
            "game::Rgb: written by its own serde code, and its layout changed (game::Rgb.b: a \
             field the save does not have (f32)); its saved bytes may no longer read"
        );
        let moved = serde("other::Rgb", rgb(None));
        assert_eq!(
            texts(&changes(&stored, &moved)),
            ["other::Rgb: game::Rgb in the save, other::Rgb today"]
        );
    }

    #[test]
    fn opaque_and_handle_layouts_compare_by_equality() {
        let opaque = |type_path: &str| TypeLayout::Opaque {
            type_path: type_path.into(),
        };
        assert!(changes(&opaque("game::Raw"), &opaque("game::Raw")).is_empty());
        assert!(
            changes(&opaque("game::Raw"), &opaque("game::Raw2"))[0]
                .kind
                .needs_migration()
        );
        let handle = |asset_type: &str| TypeLayout::Handle {
            asset_type: asset_type.into(),
        };
        assert_eq!(
            texts(&changes(&handle("game::Level"), &handle("game::Map"))),
            ["Handle<game::Map>: Handle<game::Level> in the save, Handle<game::Map> today"]
        );
        let stored = structure("game::Pair", vec![]);
        let today = TypeLayout::TupleStruct {
            type_path: "game::Pair".into(),
            fields: vec![],
        };
        assert_eq!(
            texts(&changes(&stored, &today)),
            ["game::Pair: struct game::Pair in the save, tuple struct game::Pair today"]
        );
    }

    fn weather(variants: &[&str]) -> TypeLayout {
        let variant = |name: &&str| match *name {
            "Rain" => variant(
                "Rain",
                VariantFields::Struct(vec![field("mm", leaf(Leaf::F32))]),
            ),
            name => variant(name, VariantFields::Unit),
        };
        enumeration("game::Weather", variants.iter().map(variant).collect())
    }

    #[test]
    fn only_variants_appended_at_the_end_read_as_is() {
        let stored = weather(&["Sun", "Rain"]);
        assert!(reads_as_is(&stored, &stored));
        assert!(reads_as_is(&stored, &weather(&["Sun", "Rain", "Snow"])));
        assert!(!reads_as_is(&stored, &weather(&["Snow", "Sun", "Rain"])));
        assert!(!reads_as_is(&stored, &weather(&["Rain", "Sun"])));
        assert!(!reads_as_is(&stored, &weather(&["Sun"])));
        let sky = |weather| structure("game::Sky", vec![field("weather", weather)]);
        assert!(reads_as_is(
            &sky(stored.clone()),
            &sky(weather(&["Sun", "Rain", "Snow"]))
        ));
        let grown = structure(
            "game::Sky",
            vec![
                field("weather", stored.clone()),
                field("wind", leaf(Leaf::F32)),
            ],
        );
        assert!(!reads_as_is(&sky(stored), &grown));
    }

    #[test]
    fn a_serde_enum_with_appended_variants_needs_no_migration() {
        let serde = |reflected| TypeLayout::Serde {
            type_path: "game::Weather".into(),
            reflected: Box::new(reflected),
        };
        let stored = serde(weather(&["Sun", "Rain"]));
        let appended = changes(&stored, &serde(weather(&["Sun", "Rain", "Snow"])));
        assert_eq!(
            texts(&appended),
            ["game::Weather: variant Snow is new; the save has no values of it"]
        );
        assert!(!appended[0].kind.needs_migration());
        let inserted = changes(&stored, &serde(weather(&["Snow", "Sun", "Rain"])));
        assert!(inserted[0].kind.needs_migration(), "{inserted:?}");
    }

    #[test]
    fn a_handle_of_an_unknown_asset_type_reads_as_any_handle() {
        let handle = |asset_type: &str| TypeLayout::Handle {
            asset_type: asset_type.into(),
        };
        let image = handle("bevy_image::image::Image");
        assert!(reads_as_is(&handle(UNKNOWN_ASSET), &image));
        assert!(changes(&handle(UNKNOWN_ASSET), &image).is_empty());
        assert!(!reads_as_is(&handle("game::Map"), &image));
    }
}
