//! What a new save records being made in view of: the saves its slot holds when it is made.

use super::error::StoreError;
use super::import::{HeldInView, StoredSave};
use super::slot_store::SlotStore;
use crate::format::{self, MAX_VERSIONS, SaveBundle, SaveMeta, Versions};
use crate::slot::SlotId;
use uuid::Uuid;

impl SlotStore {
    /// `meta` made in view of `held` (what the slot holds, as [`held_in_view`] reads it) and
    /// the save encoded with it.
    ///
    /// [`held_in_view`]: Self::held_in_view
    pub(super) fn encode_in_view<'a>(
        &self,
        meta: SaveMeta,
        bundle: &'a SaveBundle,
        held: &HeldInView,
    ) -> Result<(SaveMeta, format::EncodedSave<'a>), StoreError> {
        let meta = self.in_view_of(meta, held);
        let encoded =
            format::encode_cached(&meta, bundle, &self.config().encode, self.chunk_cache())
                .map_err(|source| StoreError::Format {
                    path: self.dir.clone(),
                    source,
                })?;
        Ok((meta, encoded))
    }

    /// `meta` recording what its slot holds now (`held`: its readable generations, newest
    /// first, and the newest generation that did not read), in [`FOLLOWS_EXTRA`]: their ids, then what
    /// each of them was made in view of. Cloud sync orders the save against other devices'
    /// saves of the slot by it, before it trusts clocks. A folder that cannot be listed fails
    /// the save ([`held_in_view`]): a save that recorded nothing would be ordered by its
    /// clock alone.
    ///
    /// [`FOLLOWS_EXTRA`]: crate::format::FOLLOWS_EXTRA
    /// [`held_in_view`]: Self::held_in_view
    fn in_view_of(&self, meta: SaveMeta, (held, newest_unread): &HeldInView) -> SaveMeta {
        let ids = held.iter().map(|save| save.meta.save_id);
        // What each held save was made in view of, the head's first: a conflict's hidden save
        // held below the head has a line of its own.
        let inherited = held
            .iter()
            .flat_map(|save| save.meta.follows().into_iter().flatten());
        let meta = meta.with_follows(ids.chain(inherited));
        let (unread, unread_lines) = match newest_unread {
            Some(_) => self.entered_unread(meta.slot, held),
            None => (Vec::new(), None),
        };
        // What the held saves were made over goes on: a save made after one made over an
        // unread file was made after that file's save too.
        let over = held.iter().flat_map(|save| save.meta.over_unread());
        let over_lines: Vec<Versions> = (unread_lines.into_iter())
            .chain(held.iter().filter_map(|save| save.meta.over_lines()))
            .collect();
        let lines = Versions::highest(over_lines.iter().flat_map(Versions::entries));
        let meta = meta.with_over_unread(unread.into_iter().chain(over), lines);
        self.with_versions(meta, held, *newest_unread)
    }

    /// The saves that entered `slot` here (`entered.rs`) and are not held, the last to enter
    /// first, and how far each line went among all that entered: where a file does not
    /// read, the saves it may hold ([`OVER_UNREAD_EXTRA`]). Every one of them entered before
    /// the new save is made, whatever its place in the slot (an import placed below the head
    /// enters after it). The ids name the newest [`MAX_FOLLOWS`] of them; the lines reach a
    /// session's older saves too, which a device holding one of them orders by its count.
    ///
    /// [`OVER_UNREAD_EXTRA`]: crate::format::OVER_UNREAD_EXTRA
    /// [`MAX_FOLLOWS`]: crate::format::MAX_FOLLOWS
    fn entered_unread(&self, slot: SlotId, held: &[StoredSave]) -> (Vec<Uuid>, Option<Versions>) {
        let Ok(record) = self.entered(slot) else {
            return (Vec::new(), None);
        };
        // The lines raised last (the record keeps them at its end): an old slot's record holds
        // more lines than a save carries, and the newest are the ones just lost (review 63 F7).
        let newest = record.lines.iter().rev().take(MAX_VERSIONS).rev();
        let lines = Versions::highest(newest.map(|(line, count)| (line.as_str(), *count)));
        let is_held = |id: &Uuid| held.iter().any(|save| save.meta.save_id == *id);
        let ids = (record.ids.into_iter().rev())
            .filter(|id| !is_held(id))
            .collect();
        (ids, lines)
    }
}

#[cfg(test)]
mod tests {
    use crate::format::{SaveBundle, SaveMeta, WorldState};
    use crate::slot::SlotId;
    use crate::store::testing::Forward;
    use crate::store::{SaveReceipt, SlotStore, StoreConfig};
    use std::sync::Mutex;

    /// What another writer does between a save's look at its slot and its lock.
    type Meanwhile = Box<dyn FnOnce() + Send>;

    fn save(store: &SlotStore, slot: SlotId, device: &str, tick: u64) -> SaveReceipt {
        let meta = SaveMeta::new(slot).with_device(device, device);
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..Default::default()
        });
        store.save(slot, meta, &bundle).unwrap()
    }

    /// A save placed in the slot after another save of it looked at the slot, but before that
    /// one took the lock, is in that one's record: the record is what the slot held under the
    /// lock. Recording the earlier view would make the two look made apart (a conflict cloud
    /// sync would show on every device), and the later one could lose to it there.
    #[test]
    fn a_save_records_a_save_placed_while_it_waited_for_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path());
        let slot = SlotId::Quick;
        let other = SlotStore::open(config.clone()).unwrap();
        let first = save(&other, slot, "desk", 1);
        let placed = std::sync::Arc::new(Mutex::new(None));
        let meanwhile: Meanwhile = {
            let placed = placed.clone();
            Box::new(move || *placed.lock().unwrap() = Some(save(&other, slot, "desk", 2)))
        };
        // The real filesystem, running `meanwhile` the first time a lock is asked for (the
        // store polls `try_lock`): another writer of the slot (the crash hook's save while an
        // autosave is in flight) gets the lock first.
        let meanwhile = Mutex::new(Some(meanwhile));
        let racing = Forward::os().on_try_lock(move |inner, path| {
            if let Some(meanwhile) = meanwhile.lock().unwrap().take() {
                meanwhile();
            }
            inner.try_lock(path)
        });
        let store = SlotStore::open_with(config, std::sync::Arc::new(racing)).unwrap();
        let last = save(&store, slot, "desk", 3);
        let placed = placed
            .lock()
            .unwrap()
            .take()
            .expect("the other save ran first");
        assert_eq!(store.generations(slot).unwrap(), [3, 2, 1]);
        assert!(
            last.meta.made_in_view_of(placed.save_id),
            "the save does not record the one placed before it: {:?}",
            last.meta.follows().map(Iterator::collect::<Vec<_>>)
        );
        assert!(last.meta.made_in_view_of_save(&placed.meta));
        assert!(last.meta.made_in_view_of(first.save_id));
        // One line of one device: counted on, not started again.
        let versions = last.meta.versions().unwrap();
        let (line, count) = versions.own();
        assert_eq!(placed.meta.versions().unwrap().count(line), Some(count - 1));
    }
}
