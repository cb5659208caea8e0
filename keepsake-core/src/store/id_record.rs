//! The text of a slot's side records of saves (`<slot>.deleted`, `<slot>.entered`): save ids,
//! one per line, newest last, then `@<line>:<count>` entries of a version vector (see
//! [`Versions`]), one per line, the line raised last at the end. Each part keeps its newest
//! entries; anything else is passed over (a line a later build may write, a line a power loss
//! cut short).

use crate::format::Versions;
use std::collections::HashSet;
use uuid::Uuid;

/// A side record's ids and line counts.
#[derive(Clone, Debug, Default)]
pub(super) struct IdRecord {
    /// Save ids, oldest first.
    pub(super) ids: Vec<Uuid>,
    /// Each line's highest count, the line raised last at the end.
    pub(super) lines: Vec<(String, u64)>,
}

impl IdRecord {
    /// Reads a record's text.
    pub(super) fn parse(text: &str) -> IdRecord {
        let mut record = IdRecord::default();
        for line in text.lines() {
            if let Ok(id) = Uuid::try_parse(line) {
                record.ids.push(id);
            } else if let Some(versions) = Versions::parse(line) {
                let (line, count) = versions.own();
                record.raise(line, count);
            }
        }
        record
    }

    /// Records `count` on `line`, unless the record holds a higher one there.
    pub(super) fn raise(&mut self, line: &str, count: u64) {
        let held = self.lines.iter().position(|(seen, _)| seen == line);
        let highest = held.map_or(count, |at| self.lines.remove(at).1.max(count));
        self.lines.push((line.to_owned(), highest));
    }

    /// Adds what `other` holds: its ids (after this record's), and each of its lines' counts.
    pub(super) fn merge(&mut self, other: &IdRecord) {
        self.ids.extend(other.ids.iter().copied());
        for (line, count) in &other.lines {
            self.raise(line, *count);
        }
    }

    /// The highest count the record holds on `line`.
    pub(super) fn count(&self, line: &str) -> Option<u64> {
        let held = self.lines.iter().find(|(seen, _)| seen == line);
        held.map(|(_, count)| *count)
    }

    /// The record's text: the newest `kept` ids (each once, at its newest place), then the
    /// `kept` lines raised last.
    pub(super) fn text(&self, kept: usize) -> String {
        let mut seen = HashSet::new();
        let newest_first = self.ids.iter().rev().filter(|id| seen.insert(**id));
        let mut ids: Vec<String> = newest_first
            .take(kept)
            .map(|id| id.simple().to_string())
            .collect();
        ids.reverse();
        let first_kept = self.lines.len().saturating_sub(kept);
        let lines = self.lines[first_kept..]
            .iter()
            .map(|(line, count)| format!("@{line}:{count}"));
        ids.into_iter()
            .chain(lines)
            .map(|line| line + "\n")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::IdRecord;
    use uuid::Uuid;

    /// The text keeps the newest ids, each once at its newest place, and the lines raised last,
    /// each at its highest count; it reads back as written, and a torn last line is passed over.
    #[test]
    fn a_record_keeps_the_newest_ids_and_lines() {
        let mut record = IdRecord {
            ids: (0..20).map(Uuid::from_u128).collect(),
            ..IdRecord::default()
        };
        record.ids.push(Uuid::from_u128(5));
        for (line, count) in [("a.1", 3), ("b.2", 1), ("a.1", 2), ("c.3", 9)] {
            record.raise(line, count);
        }
        let read = IdRecord::parse(&record.text(8));
        assert_eq!(read.ids.len(), 8);
        assert_eq!(read.ids.last(), Some(&Uuid::from_u128(5)));
        assert_eq!(read.ids[0], Uuid::from_u128(13), "the oldest left");
        assert_eq!(
            read.ids
                .iter()
                .filter(|id| **id == Uuid::from_u128(5))
                .count(),
            1
        );
        assert_eq!((read.count("a.1"), read.count("c.3")), (Some(3), Some(9)));

        let mut torn = record.text(2);
        torn.push_str("0123abc");
        assert_eq!(
            IdRecord::parse(&torn).ids,
            record.ids[record.ids.len() - 2..]
        );
        assert_eq!(
            IdRecord::parse(&record.text(2)).count("b.2"),
            None,
            "raised first, left"
        );
    }
}
