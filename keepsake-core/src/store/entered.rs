//! What entered each slot: `<slot>.entered` beside its saves names every save placed in the
//! slot here (a save made here, an import from the cloud), one id per line, newest last, the
//! last [`ENTERED_KEPT`] kept. A delete adds them all to the slot's record of deleted saves
//! (`deleted.rs`).
//!
//! Why: a delete names what it removes by reading each generation's metadata, and a
//! generation that does not read when the player deletes the slot (damaged past its metadata,
//! a file a newer build wrote in a format this build cannot read, an odd entry in its place)
//! cannot be named from its file. Unnamed, its save came back from the cloud into the slot the
//! player had emptied: by the repair of a slot that holds a file that does not read, or once
//! the sync state, which knew the save, was lost (simulator seeds 300824, 400541, 439224). Its
//! id, written here before its file was, still names it.
//!
//! The record is a hint, written before the save's own file and made durable by that save's
//! folder flush: the file is flushed (fsync) and renamed into place, one more fsync a save.
//! A record that cannot be written does not fail the save (the save would be named as before
//! this record existed, by reading its file); one that does not read counts as empty, except
//! for a reason that may pass, which refuses the delete before anything is removed, as a
//! generation that cannot be read now does.

use super::durable::replace_flushed_later;
use super::error::StoreError;
use super::layout::slot_stem;
use super::slot_store::SlotStore;
use crate::slot::SlotId;
use uuid::Uuid;

/// How many ids a slot's record of what entered it keeps (the newest): more than a slot holds
/// whatever its backups (older ones were made in view of by the saves after them, which name
/// them).
pub const ENTERED_KEPT: usize = 256;

/// The name of a slot's record of the saves that entered it.
pub fn entered_record_name(slot: SlotId) -> String {
    format!("{}.entered", slot_stem(slot))
}

/// The ids a record's text names, oldest first: anything that is not an id is passed over (a
/// line cut short by a power loss, a line a later build may write).
fn parse(text: &str) -> Vec<Uuid> {
    text.lines()
        .filter_map(|line| Uuid::try_parse(line).ok())
        .collect()
}

/// A record's text: `ids`' newest [`ENTERED_KEPT`], each once.
fn text(ids: &[Uuid]) -> String {
    let mut newest_first: Vec<&Uuid> = Vec::new();
    for id in ids.iter().rev() {
        if newest_first.len() < ENTERED_KEPT && !newest_first.contains(&id) {
            newest_first.push(id);
        }
    }
    (newest_first.iter().rev())
        .map(|id| format!("{}\n", id.simple()))
        .collect()
}

impl SlotStore {
    /// The saves that entered `slot` here, as far as its record goes (see the module docs in
    /// `entered.rs`): empty when the record does not read for good; an error when it fails
    /// for a reason that may pass (an I/O error).
    pub(super) fn entered(&self, slot: SlotId) -> Result<Vec<Uuid>, StoreError> {
        match self.read_profile_file(&entered_record_name(slot)) {
            Ok(Some(bytes)) => Ok(parse(&String::from_utf8_lossy(&bytes))),
            Err(error) if error.may_pass() => Err(error),
            Ok(None) | Err(_) => Ok(Vec::new()),
        }
    }

    /// Adds `id` to `slot`'s record of what entered it, before the save's file is written.
    /// Call it under the slot's lock. Best effort: a record that cannot be read now is left as
    /// it is (rewritten, it would lose the ids it holds), and one that cannot be written does
    /// not stop the save.
    pub(super) fn note_entered(&self, slot: SlotId, id: Uuid) {
        let Ok(mut ids) = self.entered(slot) else {
            return;
        };
        if ids.last() == Some(&id) {
            return;
        }
        ids.push(id);
        let text = text(&ids);
        let name = entered_record_name(slot);
        let _ = replace_flushed_later(self.fs.as_ref(), &self.dir, &name, &[text.as_bytes()]);
    }
}

#[cfg(test)]
mod tests {
    use super::{ENTERED_KEPT, parse, text};
    use uuid::Uuid;

    /// The text keeps the newest ids, each once at its newest place, and reads back as it was
    /// written; a torn last line is passed over.
    #[test]
    fn a_record_keeps_the_newest_ids_each_once() {
        let ids: Vec<Uuid> = (0..ENTERED_KEPT as u128 + 10)
            .map(Uuid::from_u128)
            .collect();
        let mut with_repeat = ids.clone();
        with_repeat.push(Uuid::from_u128(20));
        let read = parse(&text(&with_repeat));
        assert_eq!(read.len(), ENTERED_KEPT);
        assert_eq!(read.last(), Some(&Uuid::from_u128(20)));
        assert_eq!(read[0], Uuid::from_u128(10), "the oldest ten left");
        assert_eq!(
            read.iter().filter(|id| **id == Uuid::from_u128(20)).count(),
            1
        );

        let mut torn = text(&ids[..3]);
        torn.push_str("0123abc");
        assert_eq!(parse(&torn), ids[..3]);
    }
}
