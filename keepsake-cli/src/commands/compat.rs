//! `keepsake schema <save>` and `keepsake compat <schema file> <saves folder>`: the layouts a
//! save records, as a schema file; and every save of a folder checked against a schema file,
//! by the library's own check (`compat::check_folder`), so the command line and a game's tests
//! judge alike.

use crate::examine::examine;
use crate::examine::{Seal, needs_key};
use crate::output::{Outcome, print_json, print_text};
use keepsake_core::compat::{self, CompatReport, SaveSchema, SchemaType};
use keepsake_core::format::DecodeOptions;
use serde::Serialize;
use std::path::Path;

/// `keepsake schema <save> [-o file]`.
pub fn schema(path: &Path, output: Option<&Path>, options: &DecodeOptions) -> Outcome {
    let schema = match recorded_schema(path, options) {
        Ok(schema) => schema,
        Err(message) => {
            eprintln!("keepsake: {}: {message}", path.display());
            return Outcome::Trouble;
        }
    };
    match output {
        None => print_text(&schema.to_text()),
        Some(output) => {
            if let Err(error) = schema.write_file(output) {
                eprintln!("keepsake: {error}");
                return Outcome::Trouble;
            }
        }
    }
    Outcome::Clean
}

/// The schema a save records: each column's type, kind, version and layout. A save does not
/// record a game's migrations or renames, so those are left out.
fn recorded_schema(path: &Path, options: &DecodeOptions) -> Result<SaveSchema, String> {
    let examined = examine(path, options).map_err(|e| e.0.to_string())?;
    if examined.seal == Seal::Unchecked {
        return Err(needs_key(path));
    }
    if let Some(damage) = &examined.damage {
        return Err(format!("the save is damaged: {damage}"));
    }
    let table = examined
        .blob_table()
        .ok_or("the save has no world snapshot")?
        .map_err(|e| e.to_string())?;
    let types = table.columns.into_iter().map(|column| {
        let layout = column.layout.ok_or_else(|| {
            format!(
                "the save was written before saves recorded layouts ({} has none): make the \
                 schema with a save from today's build, or with SaveSchema::of_app in the game",
                column.type_path
            )
        })?;
        let layout = layout.decode().map_err(|error| error.to_string())?;
        Ok(SchemaType {
            type_path: column.type_path.to_owned(),
            kind: column.kind,
            version: column.schema_version,
            migrates_from: Vec::new(),
            renamed_from: Vec::new(),
            layout,
        })
    });
    Ok(SaveSchema::new(types.collect::<Result<_, String>>()?))
}

/// `keepsake compat <schema file> <folder>`.
pub fn run(schema_file: &Path, folder: &Path, options: &DecodeOptions, json: bool) -> Outcome {
    let schema = match SaveSchema::read_file(schema_file) {
        Ok(schema) => schema,
        Err(error) => {
            eprintln!("keepsake: {}: {error}", schema_file.display());
            return Outcome::Trouble;
        }
    };
    let report = compat::check_folder_opened(&schema, folder, options);
    if json {
        print_json(&Json::of(&report));
    } else {
        print_text(&report.to_string());
    }
    if report.folder_error.is_some() || report.saves.is_empty() {
        Outcome::Trouble
    } else if report.passed() {
        Outcome::Clean
    } else {
        Outcome::Findings
    }
}

#[derive(Serialize)]
struct Json {
    folder: String,
    schema_types: usize,
    problems: usize,
    folder_error: Option<String>,
    saves: Vec<JsonSave>,
}

#[derive(Serialize)]
struct JsonSave {
    path: String,
    problems: usize,
    error: Option<String>,
    columns: Vec<JsonColumn>,
}

#[derive(Serialize)]
struct JsonColumn {
    type_path: String,
    loads_as: Option<String>,
    stored_version: u32,
    problem: bool,
    /// The column's line of the text report, without its mark.
    verdict: String,
    /// What changed, one sentence each (`game::Stats.hp: u32 in the save, String today`).
    changes: Vec<JsonChange>,
}

#[derive(Serialize)]
struct JsonChange {
    path: String,
    needs_migration: bool,
    text: String,
}

impl Json {
    fn of(report: &CompatReport) -> Self {
        let saves = report.saves.iter().map(|save| JsonSave {
            path: save.path.display().to_string(),
            problems: save.problems(),
            error: save.error.clone(),
            columns: save.columns.iter().map(JsonColumn::of).collect(),
        });
        Json {
            folder: report.folder.display().to_string(),
            schema_types: report.schema_types,
            problems: report.problems(),
            folder_error: report.folder_error.clone(),
            saves: saves.collect(),
        }
    }
}

impl JsonColumn {
    fn of(column: &compat::ColumnCheck) -> Self {
        let changes = match &column.verdict {
            compat::Verdict::ReadsByName(changes) | compat::Verdict::NeedsMigration(changes) => {
                changes.as_slice()
            }
            _ => &[],
        };
        let text = column.to_string();
        let first = text.lines().next().unwrap_or_default();
        JsonColumn {
            type_path: column.type_path.clone(),
            loads_as: column.loads_as.clone(),
            stored_version: column.stored_version,
            problem: column.verdict.is_problem(),
            verdict: first.split_once(": ").map_or(first, |(_, v)| v).to_owned(),
            changes: changes
                .iter()
                .map(|change| JsonChange {
                    path: change.path.clone(),
                    needs_migration: change.kind.needs_migration(),
                    text: change.to_string(),
                })
                .collect(),
        }
    }
}
