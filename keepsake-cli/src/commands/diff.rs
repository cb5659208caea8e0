//! `keepsake diff <a> <b>`: metadata differences, then per stored type the rows only in A, only
//! in B and changed, matched by saved entity index and compared by value bytes.

use crate::examine::{Examined, examine};
use crate::examine::{Seal, needs_key};
use crate::output::{Outcome, print_json};
use crate::text::{self, Table};
use crate::views::MetaView;
use keepsake_core::blob::{BlobTable, StoredColumn};
use keepsake_core::format::DecodeOptions;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

/// How many entity indices a human line lists before `…`.
const LISTED: usize = 8;

#[derive(Debug, Serialize)]
struct Report {
    a: String,
    b: String,
    equal: bool,
    /// Metadata and bundle fields that differ.
    fields: Vec<FieldDiff>,
    entities: (usize, usize),
    /// Every stored type of either save, by type path.
    types: Vec<TypeDiff>,
}

#[derive(Debug, Serialize)]
struct FieldDiff {
    field: String,
    a: String,
    b: String,
}

#[derive(Debug, Serialize)]
struct TypeDiff {
    type_path: String,
    kind: &'static str,
    /// Schema version in each save, `null` where the type is not stored.
    schema_version: (Option<u32>, Option<u32>),
    /// Entity indices (`null` for a resource) of rows only in A, only in B, or in both with
    /// different bytes.
    only_in_a: Vec<Option<u32>>,
    only_in_b: Vec<Option<u32>>,
    changed: Vec<Option<u32>>,
    same: usize,
}

impl TypeDiff {
    fn differs(&self) -> bool {
        !(self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.changed.is_empty())
            || self.schema_version.0 != self.schema_version.1
    }
}

pub fn run(a: &Path, b: &Path, options: &DecodeOptions, json: bool) -> Outcome {
    let (Some(left), Some(right)) = (readable(a, options), readable(b, options)) else {
        return Outcome::Trouble;
    };
    let (Some(Ok(table_a)), Some(Ok(table_b))) = (left.blob_table(), right.blob_table()) else {
        unreachable_damage();
        return Outcome::Trouble;
    };
    let mut fields = meta_diffs(&left, &right);
    let (save_a, save_b) = (left.save.as_ref(), right.save.as_ref());
    if let (Some(save_a), Some(save_b)) = (save_a, save_b) {
        push_if_differs(
            &mut fields,
            "bundle tick",
            save_a.bundle.world.tick,
            save_b.bundle.world.tick,
        );
        let keys: BTreeSet<&String> = save_a
            .bundle
            .extras
            .keys()
            .chain(save_b.bundle.extras.keys())
            .collect();
        for key in keys {
            let describe = |value: Option<&Vec<u8>>| {
                value.map_or("(none)".into(), |bytes| format!("{} bytes", bytes.len()))
            };
            let (x, y) = (save_a.bundle.extras.get(key), save_b.bundle.extras.get(key));
            if x != y {
                fields.push(FieldDiff {
                    field: format!("bundle extra {key}"),
                    a: describe(x),
                    b: describe(y),
                });
            }
        }
    }
    let types = type_diffs(&table_a, &table_b);
    let entities = (table_a.entity_count(), table_b.entity_count());
    let equal = fields.is_empty() && entities.0 == entities.1 && !types.iter().any(|t| t.differs());
    let report = Report {
        a: a.display().to_string(),
        b: b.display().to_string(),
        equal,
        fields,
        entities,
        types,
    };
    if json {
        print_json(&report);
    } else {
        print!("{}", render(&report));
    }
    if equal {
        Outcome::Clean
    } else {
        Outcome::Findings
    }
}

/// Examines a file that must be intact to be compared; says why when it is not.
fn readable(path: &Path, options: &DecodeOptions) -> Option<Examined> {
    match examine(path, options) {
        Err(error) => {
            eprintln!("keepsake: cannot read {}: {}", path.display(), error.0);
            None
        }
        Ok(examined) if examined.seal == Seal::Unchecked => {
            eprintln!("keepsake: cannot compare: {}", needs_key(path));
            None
        }
        Ok(examined) => match &examined.damage {
            Some(damage) => {
                eprintln!(
                    "keepsake: cannot compare {}: it is damaged in the {damage}",
                    path.display()
                );
                None
            }
            None => Some(examined),
        },
    }
}

/// An intact file always has a readable blob table (`examine` checks it); kept as a message
/// rather than a panic in case that ever changes.
fn unreachable_damage() {
    eprintln!("keepsake: a save passed its checks but its world snapshot could not be read");
}

fn push_if_differs<T: PartialEq + ToString>(fields: &mut Vec<FieldDiff>, field: &str, a: T, b: T) {
    if a != b {
        fields.push(FieldDiff {
            field: field.to_owned(),
            a: a.to_string(),
            b: b.to_string(),
        });
    }
}

fn meta_diffs(left: &Examined, right: &Examined) -> Vec<FieldDiff> {
    let mut fields = Vec::new();
    let (Some(ma), Some(mb)) = (&left.meta, &right.meta) else {
        return fields;
    };
    let (a, b) = (MetaView::from(ma), MetaView::from(mb));
    push_if_differs(&mut fields, "slot", a.slot, b.slot);
    push_if_differs(&mut fields, "title", a.title, b.title);
    push_if_differs(&mut fields, "created", a.created_at, b.created_at);
    push_if_differs(
        &mut fields,
        "play time",
        text::play_time(ma.playtime),
        text::play_time(mb.playtime),
    );
    push_if_differs(&mut fields, "game tick", a.game_tick, b.game_tick);
    push_if_differs(&mut fields, "game version", a.game_version, b.game_version);
    push_if_differs(&mut fields, "save id", a.save_id, b.save_id);
    let keys: BTreeSet<&String> = a.extras.keys().chain(b.extras.keys()).collect();
    for key in keys {
        let value = |extras: &BTreeMap<String, String>| {
            (extras.get(key)).map_or_else(|| "(none)".into(), |value| text::extra(key, value).1)
        };
        let (name, _) = text::extra(key, "");
        push_if_differs(&mut fields, &name, value(&a.extras), value(&b.extras));
    }
    let thumbnail = |meta: &keepsake_core::format::SaveMeta| {
        meta.thumbnail
            .as_ref()
            .map_or("(none)".into(), |png| format!("{} bytes", png.len()))
    };
    if ma.thumbnail != mb.thumbnail {
        fields.push(FieldDiff {
            field: "thumbnail".into(),
            a: thumbnail(ma),
            b: thumbnail(mb),
        });
    }
    fields
}

fn type_diffs(a: &BlobTable<'_>, b: &BlobTable<'_>) -> Vec<TypeDiff> {
    let by_path = |table: &BlobTable<'_>| -> BTreeMap<String, usize> {
        table
            .columns
            .iter()
            .enumerate()
            .map(|(i, column)| (column.type_path.to_owned(), i))
            .collect()
    };
    let (paths_a, paths_b) = (by_path(a), by_path(b));
    let paths: BTreeSet<&String> = paths_a.keys().chain(paths_b.keys()).collect();
    paths
        .into_iter()
        .map(|path| {
            let column_a = paths_a.get(path).map(|&i| &a.columns[i]);
            let column_b = paths_b.get(path).map(|&i| &b.columns[i]);
            compare_columns(path, column_a, column_b)
        })
        .collect()
}

fn compare_columns(
    path: &str,
    a: Option<&StoredColumn<'_>>,
    b: Option<&StoredColumn<'_>>,
) -> TypeDiff {
    let rows = |column: Option<&StoredColumn<'_>>| -> BTreeMap<Option<u32>, Vec<u8>> {
        column.map_or_else(BTreeMap::new, |column| {
            column
                .rows
                .iter()
                .map(|row| (row.entity_index, row.value.to_vec()))
                .collect()
        })
    };
    let (rows_a, rows_b) = (rows(a), rows(b));
    let mut diff = TypeDiff {
        type_path: path.to_owned(),
        kind: a.or(b).map_or("component", |column| column.kind.name()),
        schema_version: (a.map(|c| c.schema_version), b.map(|c| c.schema_version)),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        changed: Vec::new(),
        same: 0,
    };
    for (entity, value) in &rows_a {
        match rows_b.get(entity) {
            None => diff.only_in_a.push(*entity),
            Some(other) if other != value => diff.changed.push(*entity),
            Some(_) => diff.same += 1,
        }
    }
    diff.only_in_b = rows_b
        .keys()
        .filter(|entity| !rows_a.contains_key(entity))
        .copied()
        .collect();
    diff
}

fn render(report: &Report) -> String {
    let mut out = format!(
        "a: {}\nb: {}\n",
        text::clean(&report.a),
        text::clean(&report.b)
    );
    if report.equal {
        out.push_str("\nthe saves are equal\n");
        return out;
    }
    if !report.fields.is_empty() {
        let mut table = Table::new(&["FIELD", "A", "B"]);
        for field in &report.fields {
            table.row(vec![
                text::clean(&field.field),
                text::clean(&field.a),
                text::clean(&field.b),
            ]);
        }
        let _ = write!(out, "\n{}", table.render());
    }
    let _ = writeln!(
        out,
        "\nentities: {} in a, {} in b",
        report.entities.0, report.entities.1
    );
    let mut table = Table::new(&[
        "TYPE",
        "ONLY IN A",
        "ONLY IN B",
        "CHANGED",
        "SAME",
        "ENTITIES",
    ]);
    for diff in report.types.iter().filter(|t| t.differs()) {
        let mut type_path = text::clean(&diff.type_path);
        if diff.schema_version.0 != diff.schema_version.1 {
            let version = |v: Option<u32>| v.map_or("-".into(), |v| v.to_string());
            let _ = write!(
                type_path,
                " (version {} → {})",
                version(diff.schema_version.0),
                version(diff.schema_version.1)
            );
        }
        table.row(vec![
            type_path,
            diff.only_in_a.len().to_string(),
            diff.only_in_b.len().to_string(),
            diff.changed.len().to_string(),
            diff.same.to_string(),
            entity_summary(diff),
        ]);
    }
    out.push_str(&table.render());
    let unchanged = report.types.iter().filter(|t| !t.differs()).count();
    if unchanged > 0 {
        let _ = writeln!(out, "{unchanged} other types are equal");
    }
    out
}

/// `-1 +4 ~0 ~2`: entity indices only in a (`-`), only in b (`+`), changed (`~`), capped.
fn entity_summary(diff: &TypeDiff) -> String {
    let marked = diff
        .only_in_a
        .iter()
        .map(|e| ('-', e))
        .chain(diff.only_in_b.iter().map(|e| ('+', e)))
        .chain(diff.changed.iter().map(|e| ('~', e)));
    let total = diff.only_in_a.len() + diff.only_in_b.len() + diff.changed.len();
    let mut parts: Vec<String> = marked
        .take(LISTED)
        .map(|(mark, entity)| match entity {
            Some(index) => format!("{mark}{index}"),
            None => format!("{mark}resource"),
        })
        .collect();
    if total > LISTED {
        parts.push(format!("… ({total} in all)"));
    }
    parts.join(" ")
}
