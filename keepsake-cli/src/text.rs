//! Human output: aligned tables and the formatting of times, sizes, layouts and untrusted text.

use keepsake_core::schema::text::{short, short_name};
use keepsake_core::schema::{Field, TypeLayout, VariantFields};
use std::fmt::Write;
use std::time::Duration;

/// A table printed with every column padded to its widest cell.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&'static str]) -> Self {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table with two spaces between columns and no trailing spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (cell, width) in row.iter().zip(&widths) {
                let _ = write!(line, "{cell:<width$}  ");
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Text from a save file made safe to print: control characters escaped, so a forged title
/// cannot move the cursor or break a table's lines.
pub fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// A metadata extra as a row: the store's record of the saves a save was made in view of
/// (`keepsake.follows`) as `follows` and their ids, the game's own as `extra <key>`.
pub fn extra(key: &str, value: &str) -> (String, String) {
    if key == keepsake_core::format::FOLLOWS_EXTRA {
        let ids: Vec<String> = value.split(',').map(save_id).collect();
        return ("follows".to_owned(), ids.join(", "));
    }
    (format!("extra {}", clean(key)), clean(value))
}

/// A save id the store wrote as 32 hex digits, hyphenated as the `save id` row shows ids.
fn save_id(simple: &str) -> String {
    let hex = simple.len() == 32 && simple.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex {
        return clean(simple);
    }
    let cuts = [(0, 8), (8, 12), (12, 16), (16, 20), (20, 32)];
    let parts: Vec<&str> = cuts.iter().map(|&(a, b)| &simple[a..b]).collect();
    parts.join("-")
}

/// `1.5 KiB`, `12 B`, `3.2 MiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `1:02:03` for a play time.
pub fn play_time(duration: Duration) -> String {
    let secs = duration.as_secs();
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// An RFC 3339 UTC time (`2026-11-22T04:39:02Z`) from Unix milliseconds.
pub fn utc_time(unix_millis: i64) -> String {
    let secs = unix_millis.div_euclid(1000);
    let (days, day_secs) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`), to avoid a date crate for one format.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Lowercase hex of at most `cap` bytes, with `…` when cut.
pub fn hex(bytes: &[u8], cap: usize) -> String {
    let mut out = String::with_capacity(bytes.len().min(cap) * 2 + 3);
    for byte in bytes.iter().take(cap) {
        let _ = write!(out, "{byte:02x}");
    }
    if bytes.len() > cap {
        out.push('…');
    }
    out
}

/// A column's layout on one line, for `inspect`'s table, where the TYPE column already names
/// the type: a struct's or an enum's fields one level deep, each by [`short`] with its paths cut
/// to their last segment (`struct { x: f32, y: f32 }`, `struct (f32)`,
/// `enum { Idle, Walking(f32), Jumping { height: f32 } }`, `serde (reflected: struct (u8))`),
/// any other shape by [`short`]. At most `width` characters (`…` when cut; `inspect --layouts`
/// prints it whole).
pub fn layout_line(layout: &TypeLayout, width: usize) -> String {
    let line = clean(&layout_summary(layout));
    if line.chars().count() <= width {
        return line;
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn layout_summary(layout: &TypeLayout) -> String {
    let item = |layout: &TypeLayout| short_name(&short(layout));
    let named = |fields: &[Field]| -> String {
        let fields: Vec<String> = fields
            .iter()
            .map(|field| format!("{}: {}", field.name, item(&field.layout)))
            .collect();
        match fields.is_empty() {
            true => "{}".to_owned(),
            false => format!("{{ {} }}", fields.join(", ")),
        }
    };
    let positional = |fields: &[TypeLayout]| {
        format!(
            "({})",
            fields.iter().map(item).collect::<Vec<_>>().join(", ")
        )
    };
    if layout.option_item().is_some() {
        return item(layout);
    }
    match layout {
        TypeLayout::Struct { fields, .. } => format!("struct {}", named(fields)),
        TypeLayout::TupleStruct { fields, .. } => format!("struct {}", positional(fields)),
        TypeLayout::Enum { variants, .. } => {
            let variants: Vec<String> = variants
                .iter()
                .map(|variant| match &variant.fields {
                    VariantFields::Unit => variant.name.clone(),
                    VariantFields::Tuple(fields) => {
                        format!("{}{}", variant.name, positional(fields))
                    }
                    VariantFields::Struct(fields) => format!("{} {}", variant.name, named(fields)),
                })
                .collect();
            match variants.is_empty() {
                true => "enum {}".to_owned(),
                false => format!("enum {{ {} }}", variants.join(", ")),
            }
        }
        TypeLayout::Serde { reflected, .. } => {
            format!("serde (reflected: {})", layout_summary(reflected))
        }
        TypeLayout::Opaque { .. } => "opaque (its own serde code)".to_owned(),
        _ => item(layout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_sizes_and_text() {
        assert_eq!(utc_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_time(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc_time(-1000), "1969-12-31T23:59:59Z");
        assert!(utc_time(i64::MIN).len() > 10);
        assert!(utc_time(i64::MAX).len() > 10);
        assert_eq!(size(12), "12 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(play_time(Duration::from_secs(3723)), "1:02:03");
        assert_eq!(clean("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(hex(&[1, 0xab, 3], 2), "01ab…");
        let mut table = Table::new(&["A", "LONGER"]);
        table.row(vec!["wide cell".into(), "x".into()]);
        assert_eq!(table.render(), "A          LONGER\nwide cell  x\n");
    }

    #[test]
    fn layouts_on_one_line_show_fields_one_level_deep() {
        use keepsake_core::schema::{Leaf, Variant};
        let leaf = TypeLayout::Leaf;
        let field = |name: &str, layout| Field {
            name: name.into(),
            layout,
        };
        let item = TypeLayout::Struct {
            type_path: "game::Item".into(),
            fields: vec![field("id", leaf(Leaf::U16))],
        };
        let hero = TypeLayout::Struct {
            type_path: "game::Hero".into(),
            fields: vec![
                field("name", leaf(Leaf::String)),
                field("bag", TypeLayout::List(Box::new(item))),
            ],
        };
        assert_eq!(
            layout_line(&hero, 80),
            "struct { name: String, bag: Vec<Item> }"
        );
        assert_eq!(layout_line(&hero, 12), "struct { na…");
        let mood = TypeLayout::Enum {
            type_path: "game::Mood".into(),
            variants: vec![
                Variant {
                    name: "Calm".into(),
                    fields: VariantFields::Unit,
                },
                Variant {
                    name: "Angry".into(),
                    fields: VariantFields::Tuple(vec![leaf(Leaf::U8)]),
                },
                Variant {
                    name: "Lost".into(),
                    fields: VariantFields::Struct(vec![field("days", leaf(Leaf::U16))]),
                },
            ],
        };
        assert_eq!(
            layout_line(&mood, 80),
            "enum { Calm, Angry(u8), Lost { days: u16 } }"
        );
        let marker = TypeLayout::Serde {
            type_path: "game::Marker".into(),
            reflected: Box::new(TypeLayout::Struct {
                type_path: "game::Marker".into(),
                fields: vec![],
            }),
        };
        assert_eq!(layout_line(&marker, 80), "serde (reflected: struct {})");
        assert_eq!(layout_line(&leaf(Leaf::Vec3), 80), "Vec3");
    }
}
