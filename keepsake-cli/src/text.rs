//! Human output: aligned tables and the formatting of times, sizes and untrusted text.

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
}
