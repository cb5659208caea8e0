//! `keepsake verify <paths>…`: every file checked end to end, the others still checked after a
//! damaged one.

use crate::examine::{Seal, examine};
use crate::folders::save_files;
use crate::output::{Outcome, print_json};
use crate::text::{self, Table};
use keepsake_core::format::{DecodeOptions, Sealing};
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize)]
struct Report {
    files: Vec<FileResult>,
    checked: usize,
    damaged: usize,
    unreadable: usize,
    /// Files in the given folders that are not save files (not `*.ksav`), passed over.
    ignored: usize,
}

#[derive(Debug, Serialize)]
struct FileResult {
    path: String,
    /// `ok`, `damaged` or `unreadable`.
    status: &'static str,
    /// For a damaged file: `file`, `header`, `metadata`, `thumbnail`, `payload`, `seal` or
    /// `ecs_blob`.
    section: Option<&'static str>,
    message: Option<String>,
    /// For a sealed file: `checked` (with a key; a broken seal is damage in section `seal`)
    /// or `unchecked` (without: its CRCs were checked, not its seal). With a key, `none` for
    /// an unsealed file. Otherwise absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    seal: Option<Seal>,
}

pub fn run(paths: &[PathBuf], options: &DecodeOptions, json: bool) -> Outcome {
    let mut report = Report {
        files: Vec::new(),
        checked: 0,
        damaged: 0,
        unreadable: 0,
        ignored: 0,
    };
    for path in paths {
        for file in expand(path, &mut report) {
            let result = check(&file, options);
            match result.status {
                "damaged" => report.damaged += 1,
                "unreadable" => report.unreadable += 1,
                _ => {}
            }
            report.checked += 1;
            report.files.push(result);
        }
    }
    if json {
        print_json(&report);
    } else {
        print!("{}", render(&report));
    }
    if report.unreadable > 0 || report.checked == 0 {
        Outcome::Trouble
    } else if report.damaged > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// A file as itself; a folder as its save files (and those of its profile folders).
fn expand(path: &Path, report: &mut Report) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    match save_files(path, 1) {
        Ok((files, ignored)) => {
            report.ignored += ignored;
            files
        }
        Err(error) => {
            report.unreadable += 1;
            report.files.push(FileResult {
                path: path.display().to_string(),
                status: "unreadable",
                section: None,
                message: Some(format!("cannot list the folder: {error}")),
                seal: None,
            });
            Vec::new()
        }
    }
}

/// What `verify` with a key says of an intact file that is not sealed.
const NOT_SEALED: &str =
    "not sealed (a game that seals its saves loads it only if it accepts unsealed saves)";

fn check(path: &Path, options: &DecodeOptions) -> FileResult {
    let path_text = path.display().to_string();
    match examine(path, options) {
        Err(error) => FileResult {
            path: path_text,
            status: "unreadable",
            section: None,
            message: Some(error.0.to_string()),
            seal: None,
        },
        Ok(examined) => {
            // With a key the seal is what is being checked: an unsealed file says so.
            let keyed = options.seal != Sealing::Off && examined.header.is_some();
            let seal = (examined.seal != Seal::None || keyed).then_some(examined.seal);
            let note = match examined.seal {
                Seal::None if keyed => Some(NOT_SEALED),
                seal => seal.note(),
            };
            match examined.damage {
                None => FileResult {
                    path: path_text,
                    status: "ok",
                    section: None,
                    message: note.map(str::to_owned),
                    seal,
                },
                Some(damage) => FileResult {
                    path: path_text,
                    status: "damaged",
                    section: Some(damage.section),
                    message: Some(damage.message),
                    seal,
                },
            }
        }
    }
}

fn render(report: &Report) -> String {
    let mut table = Table::new(&["FILE", "STATUS", "SECTION", "PROBLEM"]);
    for file in &report.files {
        table.row(vec![
            text::clean(&file.path),
            file.status.into(),
            file.section.unwrap_or("-").into(),
            file.message.as_deref().map_or("-".into(), text::clean),
        ]);
    }
    let mut out = table.render();
    let _ = writeln!(
        out,
        "\n{} checked: {} ok, {} damaged, {} unreadable; {} other files ignored",
        report.checked,
        report.files.iter().filter(|f| f.status == "ok").count(),
        report.damaged,
        report.unreadable,
        report.ignored
    );
    if report.checked == 0 {
        out.push_str("no save files found\n");
    }
    out
}
