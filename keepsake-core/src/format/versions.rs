//! [`Versions`]: a save's version vector, which orders saves of one slot
//! made on different devices however long the line between them, whatever their clocks say.
//!
//! Each save counts itself on its *line*: the device that made it and an epoch, a random id the
//! device picks when it cannot be sure it still holds its own newest save of the slot (the
//! slot was deleted, its files removed, one of them does not read, or the saves it held were
//! another device's only). The vector is the save's own count, then, for every line the slot
//! held a save of, the highest count it held (the maximum over the slot's saves, each of which
//! carries its own vector). A save was made in view of another exactly when its vector holds
//! the other's own count ([`Versions::includes`]): a count is never given twice on one line,
//! since a device goes on counting a line only from its own newest save of it.
//!
//! At most [`MAX_VERSIONS`] lines are kept: the save's own first, then those of the saves it
//! was made in view of, the head's first; the lines past the limit (the ones that went
//! longest without a save carrying them ahead) are dropped. A dropped line only makes a
//! vector hold less, so two saves can look made apart that were not (the clocks then decide,
//! and the player sees a conflict), never ordered the wrong way round.
//!
//! The vector is written in [`FOLLOWS_EXTRA`](super::FOLLOWS_EXTRA), after the save ids: one
//! `@<device id>.<epoch>:<count>` entry per line, the save's own first, only for a save that
//! names its device ([`DEVICE_ID_EXTRA`](super::DEVICE_ID_EXTRA), which cloud sync sets). Builds
//! that read only the ids pass over these entries (they are not save ids), the key and the
//! file format stay as they were, and a save without them (made with cloud sync off, or by an
//! earlier build) is ordered by its ids alone.

use std::fmt::Write as _;

/// What starts a version vector's entry in [`FOLLOWS_EXTRA`](super::FOLLOWS_EXTRA).
pub const VERSION_MARK: char = '@';

/// How many lines a [`Versions`] keeps (see the module docs for which go).
pub const MAX_VERSIONS: usize = 64;

/// One save's version vector, read from its [`FOLLOWS_EXTRA`](super::FOLLOWS_EXTRA) entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versions {
    /// (line, count), the save's own first; no line twice.
    entries: Vec<(String, u64)>,
}

impl Versions {
    /// Reads the vector among the entries of a [`FOLLOWS_EXTRA`](super::FOLLOWS_EXTRA) value (the
    /// ones marked [`VERSION_MARK`]); `None` when there is none, or when one is not an entry
    /// (no line or count, a count of zero): such a save is ordered as if it recorded no
    /// vector. Entries past [`MAX_VERSIONS`] are passed over.
    pub fn parse(follows: &str) -> Option<Versions> {
        let marked = (follows.split(',')).filter_map(|entry| entry.strip_prefix(VERSION_MARK));
        let mut entries: Vec<(String, u64)> = Vec::new();
        for entry in marked.take(MAX_VERSIONS) {
            let (line, count) = entry.rsplit_once(':')?;
            let count: u64 = count.parse().ok().filter(|count| *count > 0)?;
            if !is_line(line) {
                return None;
            }
            if !entries.iter().any(|(seen, _)| seen == line) {
                entries.push((line.to_owned(), count));
            }
        }
        (!entries.is_empty()).then_some(Versions { entries })
    }

    /// The save's own line and count.
    pub fn own(&self) -> (&str, u64) {
        let (line, count) = &self.entries[0];
        (line, *count)
    }

    /// The highest count of `line` the save was made in view of (its own included).
    pub fn count(&self, line: &str) -> Option<u64> {
        let mut entries = self.entries.iter();
        entries
            .find(|(seen, _)| seen == line)
            .map(|(_, count)| *count)
    }

    /// Every (line, count) of the vector, the save's own first.
    pub fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        (self.entries.iter()).map(|(line, count)| (line.as_str(), *count))
    }

    /// Whether the save was made in view of the save whose vector is `other` (or is it).
    pub fn includes(&self, other: &Versions) -> bool {
        let (line, count) = other.own();
        self.count(line).is_some_and(|held| held >= count)
    }

    /// The vector of a new save on `line`, made in view of saves whose vectors are `held`
    /// (the slot's head first): each line's highest count, the own line's one more. `None`
    /// when the own count cannot grow (a hostile vector claimed the largest count).
    pub fn next<'a>(line: &str, held: impl IntoIterator<Item = &'a Versions>) -> Option<Versions> {
        let mut merged = merge(held);
        let own = match merged.iter().position(|(seen, _)| seen == line) {
            Some(at) => merged.remove(at).1.checked_add(1)?,
            None => 1,
        };
        merged.insert(0, (line.to_owned(), own));
        merged.truncate(MAX_VERSIONS);
        Some(Versions { entries: merged })
    }

    /// Each line of `entries` (a line that is not a device's line, and a count of zero,
    /// passed over) with its highest count, in the order the lines first appear, at most
    /// [`MAX_VERSIONS`]: not one save's vector (its first entry is no save's own count) but how
    /// far each line went among many saves, as the record of what a save was made over keeps
    /// it ([`SaveMeta::over_lines`](super::SaveMeta::over_lines)). `None` when none is left.
    pub fn highest<'a>(entries: impl IntoIterator<Item = (&'a str, u64)>) -> Option<Versions> {
        let valid = (entries.into_iter()).filter(|(line, count)| *count > 0 && is_line(line));
        let mut merged = highest_counts(valid);
        merged.truncate(MAX_VERSIONS);
        (!merged.is_empty()).then_some(Versions { entries: merged })
    }

    /// The line a device with id `device` counts on in epoch `epoch`; `None` when the id
    /// cannot name one (empty, or holding something other than ASCII letters, digits, `-`
    /// and `_`).
    pub fn line_of(device: &str, epoch: &str) -> Option<String> {
        is_id(device)
            .then(|| format!("{device}.{epoch}"))
            .filter(|line| is_line(line))
    }

    /// The device id a line is counted for.
    pub fn device_of(line: &str) -> &str {
        line.rsplit_once('.').map_or(line, |(device, _)| device)
    }

    /// A new random epoch (8 hex digits).
    pub fn new_epoch() -> String {
        let id = uuid::Uuid::new_v4();
        let mut epoch = String::with_capacity(8);
        for byte in &id.as_bytes()[..4] {
            let _ = write!(epoch, "{byte:02x}");
        }
        epoch
    }
}

impl std::fmt::Display for Versions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (at, (line, count)) in self.entries.iter().enumerate() {
            let comma = if at == 0 { "" } else { "," };
            write!(f, "{comma}{VERSION_MARK}{line}:{count}")?;
        }
        Ok(())
    }
}

/// Each line of `all` with its highest count, in the order the lines first appear.
fn merge<'a>(all: impl IntoIterator<Item = &'a Versions>) -> Vec<(String, u64)> {
    highest_counts(all.into_iter().flat_map(Versions::entries))
}

/// Each line of `entries` with its highest count, in the order the lines first appear.
fn highest_counts<'a>(entries: impl IntoIterator<Item = (&'a str, u64)>) -> Vec<(String, u64)> {
    let mut merged: Vec<(String, u64)> = Vec::new();
    for (line, count) in entries {
        match merged.iter_mut().find(|(seen, _)| seen == line) {
            Some((_, kept)) => *kept = (*kept).max(count),
            None => merged.push((line.to_owned(), count)),
        }
    }
    merged
}

/// A device id and an epoch joined by a dot, each a plain id.
fn is_line(line: &str) -> bool {
    line.split_once('.')
        .is_some_and(|(device, epoch)| is_id(device) && is_id(epoch))
}

fn is_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Versions {
        Versions::parse(text).unwrap()
    }

    #[test]
    fn a_vector_reads_back_as_written() {
        let text = "@aa.01:3,@bb.02:7";
        assert_eq!(v(text).to_string(), text);
        let among_ids = format!("{},@aa.01:3,@bb.02:7", uuid::Uuid::nil().simple());
        assert_eq!(v(&among_ids), v(text));
        assert_eq!(v(text).own(), ("aa.01", 3));
        assert_eq!(v(text).count("bb.02"), Some(7));
        for bad in [
            "",
            "aa.01:1",
            "@aa.01",
            "@aa.01:0",
            "@aa:1",
            "@a,@a.01:1",
            "@aa.01:x",
            "@aa.0 1:1",
        ] {
            assert_eq!(Versions::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn highest_keeps_each_lines_highest_count_and_passes_over_what_is_no_line() {
        let entries = [
            ("aa.01", 3),
            ("bb.02", 7),
            ("aa.01", 5),
            ("no line", 9),
            ("cc.03", 0),
        ];
        let highest = Versions::highest(entries).unwrap();
        assert_eq!(highest.to_string(), "@aa.01:5,@bb.02:7");
        assert_eq!(Versions::highest([("no line", 1)]), None);
        let many = (0..MAX_VERSIONS + 5).map(|at| format!("d{at}.01"));
        let many: Vec<String> = many.collect();
        let kept = Versions::highest(many.iter().map(|line| (line.as_str(), 1))).unwrap();
        assert_eq!(kept.entries().count(), MAX_VERSIONS);
    }

    #[test]
    fn the_next_vector_takes_each_lines_highest_count_and_counts_its_own() {
        let head = v("@aa.01:3,@bb.02:7");
        let below = v("@bb.02:9,@cc.03:1");
        let next = Versions::next("aa.01", [&head, &below]).unwrap();
        assert_eq!(next.to_string(), "@aa.01:4,@bb.02:9,@cc.03:1");
        assert!(next.includes(&head) && next.includes(&below));
        assert!(!head.includes(&next) && !head.includes(&below));
        let fresh = Versions::next("dd.04", []).unwrap();
        assert_eq!(fresh.to_string(), "@dd.04:1");
        let full = v(&format!("@aa.01:{}", u64::MAX));
        assert_eq!(Versions::next("aa.01", [&full]), None);
    }

    #[test]
    fn lines_past_the_limit_are_dropped_oldest_first() {
        let mut held: Option<Versions> = None;
        for device in 0..MAX_VERSIONS + 5 {
            let line = format!("d{device}.00");
            held = Versions::next(&line, held.as_ref());
        }
        let last = held.unwrap();
        assert_eq!(last.entries.len(), MAX_VERSIONS);
        assert_eq!(last.own().0, format!("d{}.00", MAX_VERSIONS + 4));
        assert_eq!(last.count("d0.00"), None, "the oldest line went");
        assert_eq!(last.count("d5.00"), Some(1));
    }
}
