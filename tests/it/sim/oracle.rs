//! What the players were promised, kept beside the simulation: every save made (its bytes and
//! what its device held of the slot when it was made), and per device and slot which confirmed
//! saves must still load and which saves may head the slot.

use bevy_keepsake::SlotId;
use bevy_keepsake::format::{SaveBundle, SaveMeta};
use std::collections::{BTreeSet, HashMap, HashSet};
use uuid::Uuid;

/// A save some device made.
pub struct Known {
    pub meta: SaveMeta,
    pub bundle: SaveBundle,
    /// The saves its device held in the slot when it was made: the ones it supersedes.
    pub saw: BTreeSet<Uuid>,
}

/// One slot of one device.
#[derive(Default)]
struct Book {
    /// This device's confirmed save that must still load (its newest, until the player's own
    /// later save or delete of the slot, here or on a device that had seen it, supersedes it).
    must_hold: BTreeSet<Uuid>,
    /// When the last confirmed save or delete of the slot here happened: a head that entered
    /// the slot before it is a save brought back from the dead.
    floor: u64,
    /// The save of that confirmation (`None`: a delete, or nothing yet).
    floor_save: Option<Uuid>,
    /// When each save entered the slot here: made here (confirmed or not), placed by a sync
    /// round, or chosen by the player.
    entered: HashMap<Uuid, u64>,
    /// Saves the player set aside here: deleted, or passed over by choosing another device's
    /// save.
    set_aside: HashSet<Uuid>,
    /// The saves confirmed here: what they were made in view of, the player here moved past.
    made: HashSet<Uuid>,
}

#[derive(Default)]
pub struct Oracle {
    known: HashMap<Uuid, Known>,
    books: HashMap<(usize, SlotId), Book>,
    /// Saves whose file was damaged at rest on a device: what a disk destroys is not the
    /// store's to keep (backups are what make up for it).
    /// When each was damaged (the oracle's sequence).
    damaged: HashMap<(usize, Uuid), u64>,
    seq: u64,
}

impl Oracle {
    fn book(&mut self, device: usize, slot: SlotId) -> &mut Book {
        self.books.entry((device, slot)).or_default()
    }

    fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    pub fn known(&self, id: &Uuid) -> Option<&Known> {
        self.known.get(id)
    }

    /// A save is about to be made on `device`.
    pub fn attempt(
        &mut self,
        device: usize,
        meta: SaveMeta,
        bundle: SaveBundle,
        saw: BTreeSet<Uuid>,
    ) {
        let (id, slot) = (meta.save_id, meta.slot);
        self.known.insert(id, Known { meta, bundle, saw });
        let seq = self.tick();
        self.book(device, slot).entered.insert(id, seq);
    }

    /// The save call returned `Ok`.
    pub fn confirm_save(&mut self, device: usize, slot: SlotId, id: Uuid) {
        let book = self.book(device, slot);
        book.floor = book.entered[&id];
        book.floor_save = Some(id);
        book.must_hold = [id].into();
        book.made.insert(id);
    }

    /// The delete call returned `Ok`: the saves the slot held (`held`) are the player's to
    /// have thrown away here, though other devices keep them.
    pub fn confirm_delete(&mut self, device: usize, slot: SlotId, held: BTreeSet<Uuid>) {
        let seq = self.tick();
        let book = self.book(device, slot);
        book.floor = seq;
        book.floor_save = None;
        book.must_hold.clear();
        book.set_aside.extend(held);
    }

    /// The delete failed or the process died during it: the player wanted the saves gone, so
    /// none must stay, but none older than the floor may come back either.
    pub fn delete_interrupted(&mut self, device: usize, slot: SlotId, held: BTreeSet<Uuid>) {
        let book = self.book(device, slot);
        book.must_hold.clear();
        book.set_aside.extend(held);
    }

    /// A sync round placed another device's save in the slot. A save the player set aside
    /// here (deleted, passed over, or moved past with a save of theirs) that comes back keeps
    /// the place it had, so it may not head the slot over what the player did since; unless
    /// the disk damaged the player's save that moved past it (then it is the fallback).
    pub fn arrived(&mut self, device: usize, slot: SlotId, id: Uuid) {
        let seq = self.tick();
        if self.set_aside(device, slot, &id) && !self.moved_past_by_damaged(device, slot, &id) {
            return;
        }
        let superseded: Vec<Uuid> = {
            let book = self.book(device, slot);
            book.entered.insert(id, seq);
            book.must_hold.iter().copied().collect()
        };
        let gone: Vec<Uuid> = superseded
            .into_iter()
            .filter(|held| self.follows(&id, held))
            .collect();
        let book = self.book(device, slot);
        for held in gone {
            book.must_hold.remove(&held);
        }
    }

    /// Whether a save made here in view of `id` was damaged at rest here.
    fn moved_past_by_damaged(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(book) = self.books.get(&(device, slot)) else {
            return false;
        };
        let mut made = book.made.iter();
        made.any(|made| self.is_damaged(device, made) && self.follows(made, id))
    }

    /// The player chose `id` to head the slot over `over`, the save heading it.
    pub fn promoted(&mut self, device: usize, slot: SlotId, id: Uuid, over: Option<Uuid>) {
        let seq = self.tick();
        let book = self.book(device, slot);
        book.entered.insert(id, seq);
        book.set_aside.extend(over);
    }

    /// Whether the player set `id` aside in `slot` on `device` (deleted it, passed it over,
    /// or did so with a save made in view of it, here or where that save was made).
    pub fn set_aside(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(book) = self.books.get(&(device, slot)) else {
            return false;
        };
        let mut aside = book.set_aside.iter();
        aside.any(|aside| aside == id || self.follows(aside, id))
            || book.made.iter().any(|made| self.follows(made, id))
    }

    pub fn damage(&mut self, device: usize, id: Uuid) {
        let seq = self.tick();
        self.damaged.entry((device, id)).or_insert(seq);
    }

    pub fn is_damaged(&self, device: usize, id: &Uuid) -> bool {
        self.damaged.contains_key(&(device, *id))
    }

    /// Whether the player saved in or deleted `slot` on `device` after its copy of `id` was
    /// damaged there: the slot then holds what the player made over it, and a save whose
    /// metadata the disk destroyed could not be recorded as seen. The save is kept where it
    /// was not damaged; this device is not bound to take it back.
    pub fn saved_over_damage(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(&damaged) = self.damaged.get(&(device, *id)) else {
            return false;
        };
        self.books
            .get(&(device, slot))
            .is_some_and(|book| book.floor > damaged)
    }

    /// Whether `later` was made by a device that held `earlier` (directly, or through the
    /// saves it held).
    pub fn follows(&self, later: &Uuid, earlier: &Uuid) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![*later];
        while let Some(id) = stack.pop() {
            let Some(known) = self.known.get(&id) else {
                continue;
            };
            for saw in &known.saw {
                if saw == earlier {
                    return true;
                }
                if seen.insert(*saw) {
                    stack.push(*saw);
                }
            }
        }
        false
    }

    /// The confirmed saves of `device` that `slot` must still hold (damaged ones left out).
    pub fn must_hold(&self, device: usize, slot: SlotId) -> Vec<Uuid> {
        let Some(book) = self.books.get(&(device, slot)) else {
            return Vec::new();
        };
        let held = book.must_hold.iter();
        held.filter(|id| !self.is_damaged(device, id))
            .copied()
            .collect()
    }

    /// Why `id` may not head `slot` on `device`, if it may not: it entered the slot before the
    /// player's last confirmed save or delete there (an older save brought back), unless that
    /// save's own file was damaged (then the slot falls back to what it kept).
    pub fn inadmissible_head(&self, device: usize, slot: SlotId, id: &Uuid) -> Option<String> {
        let book = self.books.get(&(device, slot))?;
        let fallback = book
            .floor_save
            .is_some_and(|floor| self.is_damaged(device, &floor));
        match book.entered.get(id) {
            Some(&entered) if entered >= book.floor || fallback => None,
            Some(_) => Some(format!(
                "{id} heads {slot:?}, but it entered the slot before the player's last \
                 confirmed save or delete there ({:?})",
                book.floor_save
            )),
            None => Some(format!(
                "{id} heads {slot:?} but never entered it on this device"
            )),
        }
    }
}
