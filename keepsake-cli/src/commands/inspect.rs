//! `keepsake inspect <file>`.

use crate::examine::{ChunkChecks, Damage, Examined, Seal, SectionCheck, examine};
use crate::output::{Outcome, print_json, print_text};
use crate::text::{self, Table};
use crate::views::{BlobView, ColumnDetail, HeaderView, MetaView};
use keepsake_core::format::DecodeOptions;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// How much of each column `--values` prints.
#[derive(Clone, Copy, Debug)]
pub struct ValueCaps {
    pub rows: usize,
    pub bytes: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    file: String,
    size: u64,
    status: &'static str,
    damage: Option<Damage>,
    /// For a sealed file: `checked` (with a key) or `unchecked` (without: the payload was
    /// not opened). Absent for unsealed files.
    #[serde(skip_serializing_if = "Option::is_none")]
    seal: Option<Seal>,
    header: Option<HeaderView>,
    sections: Vec<SectionCheck>,
    /// Format version 2: the chunks of the payload.
    chunks: Option<ChunkChecks>,
    metadata: Option<MetaView>,
    /// Stored payload bytes per uncompressed byte.
    compression_ratio: Option<f64>,
    bundle: Option<BundleView>,
    blob: Option<BlobView>,
}

#[derive(Debug, Serialize)]
struct BundleView {
    schema_version: u32,
    tick: u64,
    state_hash: String,
    state_hash_ok: bool,
    /// The game's extra payload entries: key → bytes.
    extras: Vec<(String, usize)>,
}

/// What a column without a layout shows in the LAYOUT column.
const NO_LAYOUT: &str = "no layout (saved before layouts)";

/// How far `--layouts` indents each layout under its column's line.
const LAYOUT_INDENT: &str = "    ";

pub fn run(
    path: &Path,
    values: Option<ValueCaps>,
    layouts: bool,
    options: &DecodeOptions,
    json: bool,
) -> Outcome {
    let examined = match examine(path, options) {
        Ok(examined) => examined,
        Err(error) => {
            eprintln!("keepsake: cannot read {}: {}", path.display(), error.0);
            return Outcome::Trouble;
        }
    };
    let detail = ColumnDetail {
        caps: values.map(|caps| (caps.rows, caps.bytes)),
        layouts,
    };
    let report = report(path, &examined, detail);
    if json {
        print_json(&report);
    } else {
        print_text(&render(&report));
    }
    match report.damage {
        None => Outcome::Clean,
        Some(_) => Outcome::Findings,
    }
}

fn report(path: &Path, examined: &Examined, detail: ColumnDetail) -> Report {
    let blob = match (examined.save.as_ref(), examined.blob_table()) {
        (Some(save), Some(Ok(table))) => Some(BlobView::new(
            save.bundle.world.ecs_blob.len(),
            &table,
            detail,
        )),
        _ => None,
    };
    Report {
        file: path.display().to_string(),
        size: examined.file_len,
        status: if examined.damage.is_some() {
            "damaged"
        } else {
            "ok"
        },
        damage: examined.damage.clone(),
        seal: (examined.seal != Seal::None).then_some(examined.seal),
        header: examined.header.as_ref().map(HeaderView::from),
        sections: examined.sections.clone(),
        chunks: examined.chunks.clone(),
        metadata: examined.meta.as_ref().map(MetaView::from),
        compression_ratio: examined
            .header
            .filter(|h| h.payload_uncompressed_len > 0)
            .map(|h| f64::from(h.payload_len) / f64::from(h.payload_uncompressed_len)),
        bundle: examined.save.as_ref().map(|save| BundleView {
            schema_version: save.bundle.schema_version,
            tick: save.bundle.world.tick,
            state_hash: format!("{:#018x}", save.bundle.world.state_hash),
            state_hash_ok: examined.state_hash_ok() == Some(true),
            extras: save
                .bundle
                .extras
                .iter()
                .map(|(key, bytes)| (key.clone(), bytes.len()))
                .collect(),
        }),
        blob,
    }
}

fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}  ({}, {})",
        report.file,
        text::size(report.size),
        report.status
    );
    if let Some(damage) = &report.damage {
        let _ = writeln!(out, "damaged: {damage}");
    }
    if let Some(note) = report.seal.and_then(Seal::note) {
        let _ = writeln!(out, "{note}");
    }
    if let Some(header) = &report.header {
        let _ = writeln!(
            out,
            "\nformat version {}, {}, payload {} stored / {} uncompressed{}",
            header.format_version,
            header.compression,
            header.payload_len,
            header.payload_uncompressed_len,
            report
                .compression_ratio
                .map(|ratio| format!(" (ratio {:.1}%)", ratio * 100.0))
                .unwrap_or_default()
        );
    }
    if !report.sections.is_empty() {
        render_sections(&mut out, &report.sections, report.chunks.as_ref());
    }
    if let Some(meta) = &report.metadata {
        let _ = write!(out, "\n{}", render_meta(meta));
    }
    if let Some(bundle) = &report.bundle {
        render_bundle(&mut out, bundle);
    }
    if let Some(blob) = &report.blob {
        render_blob(&mut out, blob);
        render_blob_values(&mut out, blob);
    }
    out
}

/// The table of the file's sections and their CRC checks.
fn render_sections(out: &mut String, sections: &[SectionCheck], chunks: Option<&ChunkChecks>) {
    let mut table = Table::new(&["SECTION", "OFFSET", "BYTES", "CRC", "CHECK"]);
    table.row(vec![
        "header".into(),
        "0".into(),
        "40".into(),
        "-".into(),
        "ok".into(),
    ]);
    for section in sections {
        let check = match section.crc_computed {
            None => "truncated".to_owned(),
            Some(_) if section.crc_ok() => "ok".to_owned(),
            Some(computed) => format!("MISMATCH (computed {computed:08x})"),
        };
        table.row(vec![
            section.name.into(),
            section.offset.to_string(),
            section.length.to_string(),
            format!("{:08x}", section.crc_stored),
            check,
        ]);
    }
    if let Some(chunks) = chunks {
        table.row(chunk_row(chunks));
    }
    let _ = write!(out, "\n{}", table.render());
}

/// The sections table's line for a version-2 payload's chunks, each checked against its CRC.
fn chunk_row(chunks: &ChunkChecks) -> Vec<String> {
    let check = match chunks.damaged.as_slice() {
        [] => "ok".to_owned(),
        damaged => {
            let list: Vec<String> = damaged.iter().map(usize::to_string).collect();
            format!("MISMATCH in chunk {}", list.join(", "))
        }
    };
    vec![
        format!(
            "{} chunks ({} compressed)",
            chunks.chunks, chunks.compressed
        ),
        chunks.offset.to_string(),
        chunks.stored_bytes.to_string(),
        "-".into(),
        check,
    ]
}

/// The save bundle's fields around the blob.
fn render_bundle(out: &mut String, bundle: &BundleView) {
    let _ = writeln!(
        out,
        "\nbundle schema {}, tick {}, state hash {} ({})",
        bundle.schema_version,
        bundle.tick,
        bundle.state_hash,
        if bundle.state_hash_ok {
            "ok"
        } else {
            "MISMATCH"
        }
    );
    for (key, bytes) in &bundle.extras {
        let _ = writeln!(out, "extra {}: {bytes} bytes", text::clean(key));
    }
}

/// The blob's summary and its table of columns, each with its layout on one line, and in full
/// beneath it with `--layouts`.
fn render_blob(out: &mut String, blob: &BlobView) {
    let _ = writeln!(
        out,
        "\necs_blob: {} bytes, layout {}, {} entities, {} types",
        blob.bytes,
        blob.layout_version,
        blob.entities,
        blob.columns.len()
    );
    if !blob.keys.is_empty() {
        let keys: Vec<String> = blob.keys.iter().map(|key| text::clean(key)).collect();
        let _ = writeln!(out, "level keys: {}", keys.join(", "));
    }
    let mut table = Table::new(&["TYPE", "VERSION", "KIND", "ROWS", "BYTES", "LAYOUT"]);
    for column in &blob.columns {
        table.row(vec![
            text::clean(&column.type_path),
            column.schema_version.to_string(),
            column.kind.into(),
            column.rows.to_string(),
            column.bytes.to_string(),
            column.layout.clone().unwrap_or_else(|| NO_LAYOUT.into()),
        ]);
    }
    if table.is_empty() {
        return;
    }
    // The table's first line is its header, then one line per column.
    let rendered = table.render();
    let mut lines = rendered.lines();
    let _ = writeln!(out, "{}", lines.next().unwrap_or_default());
    for (line, column) in lines.zip(&blob.columns) {
        let _ = writeln!(out, "{line}");
        if let Some(pretty) = &column.layout_pretty {
            for layout_line in pretty.lines() {
                let _ = writeln!(out, "{LAYOUT_INDENT}{}", text::clean(layout_line));
            }
        }
    }
}

/// Each column's raw values (with `--values`).
fn render_blob_values(out: &mut String, blob: &BlobView) {
    for column in &blob.columns {
        let Some(values) = &column.values else {
            continue;
        };
        let _ = writeln!(
            out,
            "\n{} (raw postcard bytes)",
            text::clean(&column.type_path)
        );
        let mut table = Table::new(&["ENTITY", "LEN", "HEX"]);
        for row in values {
            table.row(vec![
                row.entity.map_or("-".into(), |e| e.to_string()),
                row.len.to_string(),
                row.hex.clone(),
            ]);
        }
        if column.rows > values.len() {
            table.row(vec![
                "…".into(),
                String::new(),
                format!("{} more rows", column.rows - values.len()),
            ]);
        }
        out.push_str(&table.render());
    }
}

pub fn render_meta(meta: &MetaView) -> String {
    let mut table = Table::new(&["METADATA", ""]);
    let rows = [
        ("slot", meta.slot.clone()),
        ("title", text::clean(&meta.title)),
        ("created", meta.created_at.clone()),
        (
            "play time",
            text::play_time(std::time::Duration::from_secs_f64(
                meta.play_time_secs.clamp(0.0, 1e15),
            )),
        ),
        ("game tick", meta.game_tick.to_string()),
        ("game version", text::clean(&meta.game_version)),
        ("save id", meta.save_id.clone()),
    ];
    for (name, value) in rows {
        table.row(vec![name.into(), value]);
    }
    for (key, value) in &meta.extras {
        let (name, value) = text::extra(key, value);
        table.row(vec![name, value]);
    }
    table.render()
}
