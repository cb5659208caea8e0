//! What the players were promised, kept beside the simulation: every save made (its bytes and
//! what its device recorded holding of the slot when it was made), and per device and slot
//! which confirmed saves must still load and which saves may head the slot.
//!
//! Each exemption is as narrow as the loss it excuses:
//! - a failed delete releases only the saves it did remove (as found once its crash, if any,
//!   was handled) from below the head: a save it left stays bound, and so does a confirmed
//!   save heading the slot that it removed;
//! - damage at rest excuses a save on a device only while that device holds no intact copy of
//!   it (marked when the simulator destroys the last one, lifted when a copy is back), and
//!   when it destroys the player's last confirmed save the slot may fall back only to a save
//!   that save was made over (its backups), never to one the player deleted, nor to one they
//!   passed over while a save they chose over it is intact there;
//! - a save arriving releases a confirmed save only when its own record (what the store wrote
//!   into it, not what the simulator saw) names that save, in its list of ids or in its
//!   version vector: the store decides by that record.

use bevy_keepsake::SlotId;
use bevy_keepsake::format::{FOLLOWS_EXTRA, OVER_UNREAD_EXTRA, SaveBundle, SaveMeta};
use std::collections::{BTreeSet, HashMap, HashSet};
use uuid::Uuid;

/// A save some device made.
pub struct Known {
    /// Its metadata as the store wrote it (with what it was made in view of), once known.
    pub meta: SaveMeta,
    pub bundle: SaveBundle,
    /// The saves it records being made in view of ([`SaveMeta::follows`]): the ones it
    /// supersedes.
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
    /// Saves the player removed here: deleted (a delete that removed them).
    deleted: HashSet<Uuid>,
    /// Saves the player passed over here by choosing another device's save, each with the
    /// saves chosen over it.
    passed_over: HashMap<Uuid, BTreeSet<Uuid>>,
    /// The saves confirmed here: what they were made in view of, the player here moved past.
    made: HashSet<Uuid>,
    /// Saves a delete that failed at its flush may or may not have removed here
    /// ([`Oracle::delete_undecided`]): neither bound nor forbidden.
    undecided: HashSet<Uuid>,
}

/// Damage at rest to a save's last intact copy on a device.
#[derive(Clone, Copy, Debug)]
struct Damage {
    /// When (the oracle's sequence).
    at: u64,
    /// When an intact copy was back on the device, if it is.
    repaired: Option<u64>,
}

#[derive(Default)]
pub struct Oracle {
    known: HashMap<Uuid, Known>,
    books: HashMap<(usize, SlotId), Book>,
    /// Saves whose last intact copy on a device the disk destroyed: what a disk destroys is
    /// not the store's to keep (backups are what make up for it).
    damaged: HashMap<(usize, Uuid), Damage>,
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

    /// A save is about to be made on `device` (its metadata as given to the store).
    pub fn attempt(&mut self, device: usize, meta: SaveMeta, bundle: SaveBundle) {
        let (id, slot) = (meta.save_id, meta.slot);
        let saw = BTreeSet::new();
        self.known.insert(id, Known { meta, bundle, saw });
        let seq = self.tick();
        self.book(device, slot).entered.insert(id, seq);
    }

    /// What the store wrote for a save: its metadata with the saves it records being made in
    /// view of. The oracle orders saves by that record, as the store does.
    pub fn written(&mut self, meta: SaveMeta) {
        if let Some(known) = self.known.get_mut(&meta.save_id) {
            known.saw = meta.follows().into_iter().flatten().collect();
            known.meta = meta;
        }
    }

    /// What the store added to a save that failed, read from its file: only the record of
    /// what it was made in view of (`keepsake.follows`) and over (`keepsake.over_unread`) is
    /// learned; every other field must still read back as the game gave it, or the check
    /// reports a misread.
    pub fn written_follows(&mut self, read: &SaveMeta) {
        let Some(known) = self.known.get(&read.save_id) else {
            return;
        };
        let mut meta = known.meta.clone();
        for key in [FOLLOWS_EXTRA, OVER_UNREAD_EXTRA] {
            match read.extras.get(key) {
                Some(value) => meta.extras.insert(key.to_owned(), value.clone()),
                None => meta.extras.remove(key),
            };
        }
        self.written(meta);
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
        book.deleted.extend(held);
    }

    /// The delete failed (or the process died during it); `held` is what the slot held before
    /// and the save heading it, `left` what it holds once the failure (and a crash, if any)
    /// was handled, and `emptied` whether no generation is left. A delete that left the slot
    /// empty happened; one that left anything removed at most what lay below the head, so
    /// what it removed is set aside, and the head and every save it left stay bound. A slot
    /// holding only files that do not read (its saves damaged) was not emptied: a delete that
    /// failed before removing them did not happen (seed 404023, where it took a save a power
    /// loss brought back below the damaged head for one brought back from a delete).
    ///
    /// A confirmed save the delete removed is released only when it did not head the slot:
    /// the player's own save lies below the head once they chose another device's save over
    /// it. A delete must remove what lies below the head first (removing the head first could
    /// leave an older save on top), so no store can keep such a save through a delete the
    /// player asked for and that stopped half way.
    pub fn delete_interrupted(
        &mut self,
        device: usize,
        slot: SlotId,
        (held, head): (BTreeSet<Uuid>, Option<Uuid>),
        (left, emptied): (&BTreeSet<Uuid>, bool),
    ) {
        if emptied {
            return self.confirm_delete(device, slot, held);
        }
        let book = self.book(device, slot);
        let removed = held
            .difference(left)
            .filter(|id| Some(**id) != head || !book.must_hold.contains(id));
        let removed: Vec<Uuid> = removed.copied().collect();
        for id in &removed {
            book.must_hold.remove(id);
        }
        book.deleted.extend(removed);
    }

    /// A delete failed at its flush after it removed every file of the slot, as the game sees
    /// the folder; none of the removals is durable, so a power loss may bring the saves back,
    /// and a later flush may make them gone. No save of the slot is bound any more (a newer
    /// build's too, which the delete's list of what it held leaves out: seed 612357), nor set
    /// aside: either way is what the disk did, not what the player was told.
    pub fn delete_undecided(&mut self, device: usize, slot: SlotId, held: &BTreeSet<Uuid>) {
        let book = self.book(device, slot);
        let bound = std::mem::take(&mut book.must_hold);
        book.undecided.extend(held.iter().chain(&bound).copied());
    }

    /// Whether a delete that failed at its flush may have removed `id` here (see
    /// [`delete_undecided`](Self::delete_undecided)): this device need not reach it.
    pub fn undecided(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        (self.books.get(&(device, slot))).is_some_and(|book| book.undecided.contains(id))
    }

    /// A sync round placed another device's save in the slot. A save the player set aside
    /// here (deleted, passed over, or moved past with a save of theirs) that comes back keeps
    /// the place it had, so it may not head the slot over what the player did since; unless
    /// the disk destroyed the player's save that moved past it (then it is the fallback).
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
        // Released only by the arriving save's own record: the store orders by it.
        let gone: Vec<Uuid> = superseded
            .into_iter()
            .filter(|held| self.records_superseding(&id, held))
            .collect();
        let book = self.book(device, slot);
        for held in gone {
            book.must_hold.remove(&held);
        }
    }

    /// A power loss brought `id` into `slot` on `device` after a sync round there failed: the
    /// round placed it, then removed it when its folder flush failed, and the removal did not
    /// last. It counts as placed by a round now (what the next round would place anyway),
    /// only when it never entered the slot here: a save that did (made here, placed before,
    /// pruned or deleted since) coming back is a save brought back from the dead, and one the
    /// player set aside here keeps its place ([`arrived`](Self::arrived)).
    pub fn import_came_back(&mut self, device: usize, slot: SlotId, id: Uuid) {
        let book = self.books.get(&(device, slot));
        if book.is_none_or(|book| !book.entered.contains_key(&id)) {
            self.arrived(device, slot, id);
        }
    }

    /// Whether the save `later` records being made in view of `earlier`, or over it (its file
    /// did not read then: `keepsake.over_unread`): what the store itself can tell. Either
    /// way `earlier` lay in the slot below `later`, a backup the slot may fall back to once
    /// `later` is destroyed.
    pub fn records(&self, later: &Uuid, earlier: &Uuid) -> bool {
        self.known.get(later).is_some_and(|known| {
            known.saw.contains(earlier) || known.meta.over_unread().any(|id| id == *earlier)
        })
    }

    /// Whether the record the store wrote into `later` says it was made in view of `earlier`,
    /// as the store reads it to order the two ([`SaveMeta::made_in_view_of_save`]): its list
    /// of ids, or its version vector. The list is bounded (`MAX_FOLLOWS`), so a save 16 or
    /// more saves further on along a line (a long session on another device) names the
    /// saves it supersedes only in its vector, which covers the whole line.
    pub fn records_superseding(&self, later: &Uuid, earlier: &Uuid) -> bool {
        let (Some(later), Some(earlier)) = (self.known.get(later), self.known.get(earlier)) else {
            return false;
        };
        later.saw.contains(&earlier.meta.save_id) || later.meta.made_in_view_of_save(&earlier.meta)
    }

    /// Whether a save made here in view of `id` has no intact copy here.
    fn moved_past_by_damaged(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(book) = self.books.get(&(device, slot)) else {
            return false;
        };
        let mut made = book.made.iter();
        made.any(|made| self.is_damaged(device, made) && self.follows(made, id))
    }

    /// The player chose `id` to head the slot over `over`, the save heading it. Choosing the
    /// save that already heads the slot (its conflict still shown after an earlier
    /// choice of it) passes nothing over, as the store records it (`use_hidden_save`).
    pub fn promoted(&mut self, device: usize, slot: SlotId, id: Uuid, over: Option<Uuid>) {
        let seq = self.tick();
        let book = self.book(device, slot);
        book.entered.insert(id, seq);
        // Chosen back, it is the player's again (simulator seed 610723).
        book.passed_over.remove(&id);
        if let Some(over) = over.filter(|over| *over != id) {
            book.passed_over.entry(over).or_default().insert(id);
        }
    }

    /// The player chose `chosen` over the slot's head `listed`, whose last copy here the disk
    /// had destroyed (the slot loaded a fallback, passed over too: see
    /// [`promoted`](Self::promoted)). The choice settles the conflict against the slot's head
    /// as the store lists it, loaded or not, and the store records that save as passed over:
    /// once a round repairs it, it stays below the player's choice. Only a head the disk
    /// destroyed: a head that loads is the one [`promoted`](Self::promoted) names.
    pub fn passed_over_destroyed_head(
        &mut self,
        device: usize,
        slot: SlotId,
        listed: Uuid,
        chosen: Uuid,
    ) {
        if listed == chosen || !self.is_damaged(device, &listed) {
            return;
        }
        let book = self.book(device, slot);
        book.passed_over.entry(listed).or_default().insert(chosen);
    }

    /// Whether the player set `id` aside in `slot` on `device` (deleted it, passed it over,
    /// or did so with a save made in view of it, here or where that save was made).
    pub fn set_aside(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(book) = self.books.get(&(device, slot)) else {
            return false;
        };
        let mut aside = book.deleted.iter().chain(book.passed_over.keys());
        aside.any(|aside| aside == id || self.follows(aside, id))
            || book.made.iter().any(|made| self.follows(made, id))
    }

    /// The simulator destroyed the last intact copy of `id` on `device` (the caller checked
    /// that no other is left there).
    pub fn damage(&mut self, device: usize, id: Uuid) {
        let at = self.tick();
        let damage = Damage { at, repaired: None };
        let entry = self.damaged.entry((device, id)).or_insert(damage);
        if entry.repaired.is_some() {
            *entry = damage;
        }
    }

    /// `device` holds an intact copy of each of `intact` again: what was damaged of them is
    /// made up for.
    pub fn holds_intact(&mut self, device: usize, intact: &HashSet<Uuid>) {
        let seq = self.seq;
        for ((at, id), damage) in &mut self.damaged {
            if *at == device && damage.repaired.is_none() && intact.contains(id) {
                damage.repaired = Some(seq);
            }
        }
    }

    /// Whether a save's last copy on `device` is destroyed, as far as the oracle knows.
    pub fn has_damage(&self, device: usize) -> bool {
        let open = self.damaged.iter().filter(|(_, d)| d.repaired.is_none());
        open.into_iter().any(|((at, _), _)| *at == device)
    }

    /// Whether `device` holds no intact copy of `id` because the disk destroyed it.
    pub fn is_damaged(&self, device: usize, id: &Uuid) -> bool {
        self.damaged
            .get(&(device, *id))
            .is_some_and(|damage| damage.repaired.is_none())
    }

    /// Whether the player saved in or deleted `slot` on `device` while its only copy of `id`
    /// was destroyed there: the slot then holds what the player made over it, and a save whose
    /// metadata the disk destroyed could not be recorded as seen. The save is kept where it
    /// was not damaged; this device is not bound to take it back.
    pub fn saved_over_damage(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        let Some(damage) = self.damaged.get(&(device, *id)) else {
            return false;
        };
        self.books.get(&(device, slot)).is_some_and(|book| {
            book.floor > damage.at && damage.repaired.is_none_or(|back| book.floor < back)
        })
    }

    /// Whether `later` was made by a device that held `earlier` (directly, or through the
    /// saves it held): the truth, which a store's bounded record may no longer tell. A save
    /// whose file did not read when `later` was made (listed in `keepsake.over_unread`) is
    /// passed through, not counted: what it was made in view of was held before `later`
    /// (simulator seed 529920: an autosave made over the device's damaged newest one, which
    /// had superseded the head a device whose slot is jammed still shows); the unread save
    /// itself may be another device's that `later`'s device never had (review 62).
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
            let passed_through = known.meta.over_unread().filter(|over| seen.insert(*over));
            stack.extend(passed_through.collect::<Vec<_>>());
        }
        false
    }

    /// The confirmed saves of `device` that `slot` must still hold: every one, the damaged
    /// ones included (a check excuses a damaged one only when it does not load).
    pub fn must_hold(&self, device: usize, slot: SlotId) -> Vec<Uuid> {
        let Some(book) = self.books.get(&(device, slot)) else {
            return Vec::new();
        };
        book.must_hold.iter().copied().collect()
    }

    /// Why `id` may not head `slot` on `device`, if it may not: it entered the slot before the
    /// player's last confirmed save or delete there (an older save brought back). When the
    /// disk destroyed that save, the slot may fall back to what it was made over (its
    /// backups), but never to a save the player deleted, nor to one they passed over while a
    /// save they chose over it is intact.
    pub fn inadmissible_head(&self, device: usize, slot: SlotId, id: &Uuid) -> Option<String> {
        let book = self.books.get(&(device, slot))?;
        let fallback = book
            .floor_save
            .filter(|floor| self.is_damaged(device, floor));
        let backup_of_lost = fallback.is_some_and(|floor| {
            self.records(&floor, id)
                && !book.deleted.contains(id)
                && !self.passed_over_and_kept(device, book, id)
        });
        match book.entered.get(id) {
            Some(&entered) if entered >= book.floor || backup_of_lost => None,
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

    /// Whether the player passed `id` over on `device` (chose another device's save over it).
    pub fn passed_over(&self, device: usize, slot: SlotId, id: &Uuid) -> bool {
        self.books
            .get(&(device, slot))
            .is_some_and(|book| book.passed_over.contains_key(id))
    }

    /// Whether the player passed `id` over and a save they chose over it is still intact on
    /// `device`. A choice keeps the save it passes over one generation below as its backup
    /// ([`SlotStore::promote`]): once the disk destroys every save chosen over it (and the
    /// saves made over those), it is what the slot falls back to, as any backup.
    ///
    /// [`SlotStore::promote`]: bevy_keepsake::store::SlotStore::promote
    fn passed_over_and_kept(&self, device: usize, book: &Book, id: &Uuid) -> bool {
        book.passed_over
            .get(id)
            .is_some_and(|chosen| chosen.iter().any(|c| !self.is_damaged(device, c)))
    }
}
