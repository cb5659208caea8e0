//! `keepsake dump <file>`: every stored value with its field names, read through the layout its
//! column records (`snapshot::schema::stored::read`), so no game types are needed: a player's
//! save attached to a bug report can be read as it is.
//!
//! Resources first, then entity by entity, one line each, as the world held them:
//! `#12 (0x10000000c): Transform(translation: [1.0, 2.0, 0.0], …), Name("Ann")`. A value that
//! cannot be read by its layout shows why in its place (and the exit code is 1); a save from
//! before layouts (blob layout 1) shows each value's size, under a note saying where to read
//! them instead.

use crate::examine::{Damage, Examined, examine};
use crate::examine::{Seal, needs_key};
use crate::output::{Outcome, print_json, print_text};
use crate::text;
use keepsake_core::blob::{BlobTable, ColumnKind, StoredColumn};
use keepsake_core::format::DecodeOptions;
use keepsake_core::schema::TypeLayout;
use keepsake_core::schema::stored::{self, StoredValue};
use keepsake_core::schema::text::{short, short_name};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// Said once for a save whose columns have no layouts; each of their values shows its size.
const PREDATES_LAYOUTS: &str = "this save predates layouts: use the game's types \
    (snapshot::dump) to read its values; each shows its size here";

/// Which values to print.
#[derive(Debug, Default)]
pub struct Filter {
    /// Only types whose path contains this.
    pub type_contains: Option<String>,
    /// Only this entity (and no resources).
    pub entity: Option<u32>,
    /// At most this many entities.
    pub rows: Option<usize>,
}

impl Filter {
    fn keeps(&self, column: &StoredColumn<'_>) -> bool {
        self.type_contains
            .as_deref()
            .is_none_or(|text| column.type_path.contains(text))
    }
}

#[derive(Debug, Serialize)]
struct Report {
    file: String,
    status: &'static str,
    damage: Option<Damage>,
    /// The world snapshot's layout version; `null` when it could not be read.
    layout_version: Option<u8>,
    /// Set when the save has columns without layouts (saved before layouts).
    note: Option<&'static str>,
    /// Entities in the save, shown or not.
    entity_count: usize,
    resources: Vec<ValueView>,
    entities: Vec<EntityView>,
    /// Entities the filter keeps but `--rows` leaves out.
    more_entities: usize,
    /// The level keys of unsaved entities the values reference, by id.
    keys: Vec<KeyView>,
    /// Values whose bytes could not be read by their stored layout (each shows its error).
    unreadable: usize,
}

/// A level entity the save references: its id when saved (as entity references show it), and
/// the key a load finds it by.
#[derive(Debug, Serialize)]
struct KeyView {
    id: String,
    key: String,
}

#[derive(Debug, Serialize)]
struct EntityView {
    /// The entity's index in the save.
    index: u32,
    /// Its id when it was saved (`Entity::to_bits`), in hex.
    id: String,
    values: Vec<ValueView>,
}

#[derive(Debug, Serialize)]
struct ValueView {
    type_path: String,
    /// The value's stored bytes.
    bytes: usize,
    /// Its column's layout on one line (`schema::text::short`); `null` in a save from before
    /// layouts.
    layout: Option<String>,
    /// The value read by its layout, with field names; `null` if it could not be read.
    value: Option<String>,
    /// Why it could not be read by its layout.
    error: Option<String>,
}

/// A column with its layout's tree, built once for all its values (`None` in a save from
/// before layouts; the error when the tree is more than the layout's bytes may cost).
struct Column<'t> {
    stored: &'t StoredColumn<'t>,
    layout: Option<Result<TypeLayout, String>>,
}

impl<'t> Column<'t> {
    fn all(table: &'t BlobTable<'t>) -> Vec<Self> {
        let columns = table.columns.iter().map(|stored| Column {
            stored,
            layout: stored
                .layout
                .map(|layout| layout.decode().map_err(|error| error.to_string())),
        });
        columns.collect()
    }
}

impl ValueView {
    fn read(column: &Column<'_>, bytes: &[u8]) -> Self {
        let type_path = column.stored.type_path;
        let (value, error) = match &column.layout {
            None => (None, None),
            Some(Err(error)) => (None, Some(error.clone())),
            Some(Ok(layout)) => match stored::read(layout, bytes) {
                Ok(value) => (Some(shown(&value, type_path)), None),
                Err(error) => (None, Some(error.to_string())),
            },
        };
        let layout = match &column.layout {
            Some(Ok(layout)) => Some(short(layout)),
            _ => None,
        };
        ValueView {
            type_path: type_path.to_owned(),
            bytes: bytes.len(),
            layout,
            value,
            error,
        }
    }

    /// The value as a line of the dump shows it, made safe to print.
    fn text(&self) -> String {
        let name = short_name(&self.type_path);
        text::clean(&match (&self.value, &self.error) {
            (Some(value), _) => value.clone(),
            (None, Some(error)) => format!("{name} <{error}>"),
            (None, None) => format!("{name} <{} bytes>", self.bytes),
        })
    }
}

/// A top-level value as the dump shows it: a struct names itself (`Stats(hp: 3)`, a unit
/// struct just `Marker`), an enum is prefixed with its type (`State::Walking(1.5)`), any other
/// shape is wrapped in its column's type name.
fn shown(value: &StoredValue, column_type: &str) -> String {
    match value {
        StoredValue::Struct { type_path, fields } if fields.is_empty() => short_name(type_path),
        StoredValue::Struct { .. }
        | StoredValue::TupleStruct { .. }
        | StoredValue::Unreadable { .. } => value.to_string(),
        StoredValue::Enum { type_path, .. } => format!("{}::{value}", short_name(type_path)),
        _ => format!("{}({value})", short_name(column_type)),
    }
}

pub fn run(path: &Path, filter: &Filter, options: &DecodeOptions, json: bool) -> Outcome {
    let examined = match examine(path, options) {
        Ok(examined) => examined,
        Err(error) => {
            eprintln!("keepsake: cannot read {}: {}", path.display(), error.0);
            return Outcome::Trouble;
        }
    };
    if examined.seal == Seal::Unchecked {
        eprintln!("keepsake: {}", needs_key(path));
        return Outcome::Trouble;
    }
    let Some(report) = report(path, &examined, filter) else {
        return Outcome::Trouble;
    };
    if json {
        print_json(&report);
    } else {
        print_text(&render(&report, filter));
    }
    if report.damage.is_some() || report.unreadable > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// The report, or `None` (said on stderr) when `--entity` names no entity of the save.
fn report(path: &Path, examined: &Examined, filter: &Filter) -> Option<Report> {
    let mut report = Report {
        file: path.display().to_string(),
        status: if examined.damage.is_some() {
            "damaged"
        } else {
            "ok"
        },
        damage: examined.damage.clone(),
        layout_version: None,
        note: None,
        entity_count: 0,
        resources: Vec::new(),
        entities: Vec::new(),
        more_entities: 0,
        keys: Vec::new(),
        unreadable: 0,
    };
    // A damaged file whose world snapshot still reads (a wrong hash) is dumped as far as it goes.
    let Some(Ok(table)) = examined.blob_table() else {
        return Some(report);
    };
    if let Some(index) = filter.entity
        && index as usize >= table.entity_count()
    {
        eprintln!(
            "keepsake: {} holds {} entities: there is no entity #{index}",
            path.display(),
            table.entity_count()
        );
        return None;
    }
    report.layout_version = Some(table.layout_version);
    if table.columns.iter().any(|column| column.layout.is_none()) {
        report.note = Some(PREDATES_LAYOUTS);
    }
    report.entity_count = table.entity_count();
    let columns = Column::all(&table);
    if filter.entity.is_none() {
        report.resources = resources(&columns, filter);
    }
    (report.entities, report.more_entities) = entities(&table, &columns, filter);
    report.keys = table
        .keys
        .iter()
        .map(|key| KeyView {
            id: format!("{:#x}", key.entity_id),
            key: key.key.to_owned(),
        })
        .collect();
    report.unreadable = report
        .resources
        .iter()
        .chain(report.entities.iter().flat_map(|entity| &entity.values))
        .filter(|value| value.error.is_some())
        .count();
    Some(report)
}

fn resources(columns: &[Column<'_>], filter: &Filter) -> Vec<ValueView> {
    columns
        .iter()
        .filter(|column| column.stored.kind == ColumnKind::Resource && filter.keeps(column.stored))
        .flat_map(|column| {
            column
                .stored
                .rows
                .iter()
                .map(move |row| ValueView::read(column, row.value))
        })
        .collect()
}

/// The entities the filter keeps, each with its values in stored column order, and how many
/// more `--rows` leaves out. Only the entities shown are read.
fn entities(
    table: &BlobTable<'_>,
    columns: &[Column<'_>],
    filter: &Filter,
) -> (Vec<EntityView>, usize) {
    let mut by_entity: Vec<Vec<(&Column<'_>, &[u8])>> = vec![Vec::new(); table.entity_count()];
    let components = columns.iter().filter(|column| {
        column.stored.kind == ColumnKind::Component && filter.keeps(column.stored)
    });
    for column in components {
        for row in &column.stored.rows {
            let values = row
                .entity_index
                .and_then(|index| by_entity.get_mut(index as usize));
            if let Some(values) = values {
                values.push((column, row.value));
            }
        }
    }
    let kept = by_entity
        .into_iter()
        .enumerate()
        .filter(|(index, values)| match filter.entity {
            Some(wanted) => *index == wanted as usize,
            // With --type, the entities that have a value of a matching type.
            None => filter.type_contains.is_none() || !values.is_empty(),
        });
    let cap = filter.rows.unwrap_or(usize::MAX);
    let ids: Vec<u64> = table.entity_ids.iter().collect();
    let (mut shown, mut more) = (Vec::new(), 0);
    for (index, values) in kept {
        if shown.len() >= cap {
            more += 1;
            continue;
        }
        shown.push(EntityView {
            index: index as u32,
            id: format!("{:#x}", ids[index]),
            values: values
                .into_iter()
                .map(|(column, bytes)| ValueView::read(column, bytes))
                .collect(),
        });
    }
    (shown, more)
}

fn render(report: &Report, filter: &Filter) -> String {
    let mut out = String::new();
    let layout = report
        .layout_version
        .map(|version| format!(", layout {version}, {} entities", report.entity_count))
        .unwrap_or_default();
    let _ = writeln!(out, "{}  ({}{layout})", report.file, report.status);
    if let Some(damage) = &report.damage {
        let _ = writeln!(out, "damaged: {damage}");
    }
    if report.layout_version.is_none() {
        out.push_str("the save's world snapshot cannot be read: nothing to dump\n");
        return out;
    }
    if let Some(note) = report.note {
        let _ = writeln!(out, "note: {note}");
    }
    if !report.resources.is_empty() {
        out.push_str("\nresources:\n");
        for value in &report.resources {
            let _ = writeln!(out, "  {}", value.text());
        }
    }
    if !report.entities.is_empty() || report.more_entities > 0 {
        out.push_str("\nentities:\n");
        render_entities(&mut out, report);
    }
    if !report.keys.is_empty() {
        out.push_str(
            "
level keys (unsaved entities saved values reference):\n",
        );
        for key in &report.keys {
            let _ = writeln!(out, "  {}: {:?}", key.id, text::clean(&key.key));
        }
    }
    if report.resources.is_empty() && report.entities.is_empty() && report.more_entities == 0 {
        let _ = match &filter.type_contains {
            Some(text) => writeln!(out, "\nno values of a type whose path contains {text:?}"),
            None => writeln!(out, "\nno values"),
        };
    }
    if report.unreadable > 0 {
        let _ = writeln!(
            out,
            "\n{} values could not be read by their stored layouts; each shows why in its place",
            report.unreadable
        );
    }
    out
}

/// One line per entity: `#index (id): value, value, …`.
fn render_entities(out: &mut String, report: &Report) {
    for entity in &report.entities {
        let values: Vec<String> = entity.values.iter().map(ValueView::text).collect();
        let _ = match values.is_empty() {
            true => writeln!(out, "  #{} ({})", entity.index, entity.id),
            false => writeln!(
                out,
                "  #{} ({}): {}",
                entity.index,
                entity.id,
                values.join(", ")
            ),
        };
    }
    if report.more_entities > 0 {
        let _ = writeln!(out, "  … {} more entities (--rows)", report.more_entities);
    }
}
