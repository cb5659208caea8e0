//! What the commands report, as plain serialisable data (the JSON output is these structs).

use crate::text;
use keepsake_core::blob::{BlobTable, StoredColumn};
use keepsake_core::format::{Header, SaveMeta};
use keepsake_core::schema::TypeLayout;
use keepsake_core::schema::text::pretty;
use serde::Serialize;
use std::collections::BTreeMap;

/// A save's metadata.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MetaView {
    pub slot: String,
    pub title: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub created_at_unix_ms: i64,
    pub play_time_secs: f64,
    pub game_tick: u64,
    pub game_version: String,
    pub save_id: String,
    pub extras: BTreeMap<String, String>,
}

impl From<&SaveMeta> for MetaView {
    fn from(meta: &SaveMeta) -> Self {
        MetaView {
            slot: meta.slot.to_string(),
            title: meta.title.clone(),
            created_at: text::utc_time(meta.created_at.unix_millis()),
            created_at_unix_ms: meta.created_at.unix_millis(),
            play_time_secs: meta.playtime.as_secs_f64(),
            game_tick: meta.game_tick,
            game_version: meta.game_version.clone(),
            save_id: meta.save_id.to_string(),
            extras: meta.extras.clone(),
        }
    }
}

/// The verified header's fields.
#[derive(Debug, Serialize)]
pub struct HeaderView {
    pub format_version: u16,
    pub compression: &'static str,
    pub meta_len: u32,
    pub thumbnail_len: u32,
    pub payload_len: u32,
    pub payload_uncompressed_len: u32,
    pub file_len: u64,
}

impl From<&Header> for HeaderView {
    fn from(header: &Header) -> Self {
        HeaderView {
            format_version: header.version,
            compression: header.compression.name(),
            meta_len: header.meta_len,
            thumbnail_len: header.thumbnail_len,
            payload_len: header.payload_len,
            payload_uncompressed_len: header.payload_uncompressed_len,
            file_len: header.file_len(),
        }
    }
}

/// One column of the world snapshot.
#[derive(Debug, Serialize)]
pub struct ColumnView {
    pub type_path: String,
    pub schema_version: u32,
    pub kind: &'static str,
    pub rows: usize,
    pub bytes: usize,
    /// The layout the values were written with, on one line (see [`text::layout_line`]);
    /// `null` in a save from before layouts (blob layout 1).
    pub layout: Option<String>,
    /// With `inspect --layouts`: the layout over several lines (`schema::text::pretty`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_pretty: Option<String>,
    /// With `inspect --values`: the first rows' raw bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<RowView>>,
}

/// One stored value's raw bytes.
#[derive(Debug, Serialize)]
pub struct RowView {
    /// Index in the snapshot's entity table; `null` for a resource.
    pub entity: Option<u32>,
    pub len: usize,
    /// Hex of at most the capped number of bytes (`…` when cut).
    pub hex: String,
}

/// A layout over several lines (`schema::text::pretty`); a type written by its own serde code
/// also shows its reflected layout expanded, the shape its bytes most likely have.
fn pretty_with_reflected(layout: &TypeLayout) -> String {
    match layout {
        TypeLayout::Serde { reflected, .. } if pretty(reflected).contains('\n') => {
            format!("{}\nreflected: {}", pretty(layout), pretty(reflected))
        }
        _ => pretty(layout),
    }
}

/// The widest a layout's one-line summary is in a table.
const LAYOUT_WIDTH: usize = 72;

/// What `inspect` shows of each column beyond its counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct ColumnDetail {
    /// `--values`: at most this many rows, at most this many bytes each.
    pub caps: Option<(usize, usize)>,
    /// `--layouts`: each layout in full.
    pub layouts: bool,
}

impl ColumnView {
    pub fn new(column: &StoredColumn<'_>, detail: ColumnDetail) -> Self {
        let caps = detail.caps;
        // The cursor checked that the layout reads; its tree may still be more than its bytes
        // may cost (a forged layout), which shows as its error.
        let layout = column
            .layout
            .map(|layout| layout.decode().map_err(|error| format!("<{error}>")));
        let values = caps.map(|(rows, bytes)| {
            column
                .rows
                .iter()
                .take(rows)
                .map(|row| RowView {
                    entity: row.entity_index,
                    len: row.value.len(),
                    hex: text::hex(row.value, bytes),
                })
                .collect()
        });
        ColumnView {
            type_path: column.type_path.to_owned(),
            schema_version: column.schema_version,
            kind: column.kind.name(),
            rows: column.rows.len(),
            bytes: column.bytes,
            layout: layout.as_ref().map(|layout| match layout {
                Ok(layout) => text::layout_line(layout, LAYOUT_WIDTH),
                Err(error) => error.clone(),
            }),
            layout_pretty: layout
                .as_ref()
                .filter(|_| detail.layouts)
                .map(|layout| match layout {
                    Ok(layout) => pretty_with_reflected(layout),
                    Err(error) => error.clone(),
                }),
            values,
        }
    }
}

/// The world snapshot's table.
#[derive(Debug, Serialize)]
pub struct BlobView {
    pub bytes: usize,
    pub layout_version: u8,
    pub entities: usize,
    /// The level keys of the unsaved entities saved values reference.
    pub keys: Vec<String>,
    pub columns: Vec<ColumnView>,
}

impl BlobView {
    pub fn new(blob_len: usize, table: &BlobTable<'_>, detail: ColumnDetail) -> Self {
        BlobView {
            bytes: blob_len,
            layout_version: table.layout_version,
            entities: table.entity_count(),
            keys: table.keys.iter().map(|key| key.key.to_owned()).collect(),
            columns: table
                .columns
                .iter()
                .map(|column| ColumnView::new(column, detail))
                .collect(),
        }
    }
}
