//! Saves that arrive as finished files (another device's save, through cloud sync), the choice
//! of which generation heads a slot, and small side files kept in the profile folder.
//!
//! An imported file is decoded in full before anything is written ([`SlotStore::decode_import`]
//! makes the [`ImportFile`] that [`SlotStore::import`] takes, so a caller that checks more, such
//! as cloud sync, works on the same decoded file and nothing is decoded twice), then placed as a
//! new generation through the same durable write as a save ([`write_durably`]): it never
//! replaces an existing file.
//!
//! When two devices saved the same slot, the save made later (by [`SaveMeta::created_at`], then
//! by save id for saves of one millisecond) heads it and the other stays below, loadable and listed by [`SlotStore::saves`]; unless the
//! player chose the head over the arriving save's line ([`ImportRules::chosen_at`]), or the
//! arriving save claims a time past this device's clock (see [`ImportRules`]). The save the
//! arriving one is measured against is the newest generation that verifies in full (every
//! checksum, as pruning counts backups): a newest file with a damaged payload is not the
//! head, since a load would pass over it. A save whose only copy here is damaged is placed
//! again when it arrives intact.
//!
//! An arriving save that does not head the slot is placed below the head without the head ever
//! leaving the top: the head is copied two generations up first, the arriving save written
//! between, and the head's old file removed last. A crash at any point leaves a duplicate of
//! the head at worst, never the older save on top. An arriving save that a save of the slot
//! was made in view of is not placed at all ([`ImportOutcome::Superseded`]): below the head
//! it would take the place of a backup newer than it.

use super::durable::{Placement, write_durably};
use super::error::StoreError;
use super::layout::{generation_file_name, is_temp_file, parse_generation_file};
use super::slot_store::{CLOCK_BEHIND, SlotStore, is_plausible};
use crate::format::{self, DecodedSave, FormatError, Lineage, SaveMeta, Timestamp, Versions};
use crate::slot::SlotId;
use std::collections::HashSet;
use uuid::Uuid;

/// One readable generation of a slot, as [`SlotStore::saves`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSave {
    /// The slot.
    pub slot: SlotId,
    /// The generation number.
    pub generation: u64,
    /// Its metadata (without the thumbnail).
    pub meta: SaveMeta,
}

/// A complete save file made elsewhere, decoded and verified in full (header, checksums,
/// decompression, metadata and payload) under the store's limits. Only [`SlotStore::decode_import`] makes one, so
/// [`SlotStore::import`] cannot be handed a file that was not decoded.
#[derive(Debug)]
pub struct ImportFile<'a> {
    bytes: &'a [u8],
    decoded: DecodedSave,
}

impl ImportFile<'_> {
    /// The decoded file, for checks beyond the format's own (such as the world blob's
    /// structure).
    pub fn decoded(&self) -> &DecodedSave {
        &self.decoded
    }

    /// The file's metadata.
    pub fn meta(&self) -> &SaveMeta {
        &self.decoded.meta
    }
}

/// What an import respects besides the saves' creation times ([`SlotStore::import_with`]).
#[derive(Clone, Debug, Default)]
pub struct ImportRules {
    /// Saves pruning never removes after the import; they do not count as backups. Cloud sync
    /// keeps this way the saves the arriving save's device could not have seen: the two are in
    /// conflict until the player chooses, and both stay loadable whatever the backups.
    pub keep: HashSet<Uuid>,
    /// When the player chose the save heading the slot over another device's: an arriving save
    /// dated before then (on any device) does not take the head from it, unless it records
    /// being made in view of the head or over it (see `heads`).
    pub chosen_at: Option<Timestamp>,
    /// When the arriving save reached a storage that dates uploads by its own clock (S3, GCS):
    /// it was made by then, so a creation time up to it is believed though this device's clock
    /// runs behind, by up to a day. `None`: this device's clock alone judges (a folder's times
    /// are the writing device's own, as ahead as its clock may be). Not while the player's
    /// choice stands (`chosen_at`, a time of this device's clock: a save dated after it by
    /// another clock might have been made before it).
    pub uploaded_at: Option<Timestamp>,
}

impl ImportRules {
    /// The time a creation time is judged against: this device's clock, or the storage's time
    /// of the upload where that is later and may be believed (see [`uploaded_at`]).
    ///
    /// [`uploaded_at`]: ImportRules::uploaded_at
    fn judged_at(&self, now: Timestamp) -> Timestamp {
        let believed = |uploaded: Timestamp| {
            let behind = CLOCK_BEHIND.as_millis() as i64;
            let furthest = Timestamp::from_unix_millis(now.unix_millis().saturating_add(behind));
            uploaded.min(furthest).max(now)
        };
        match (self.uploaded_at, self.chosen_at) {
            (Some(uploaded), None) => believed(uploaded),
            _ => now,
        }
    }

    /// Whether `arriving` takes the head from the save heading the slot.
    ///
    /// What the saves were made in view of decides first ([`SaveMeta::lineage`]): a save made
    /// with the head in view heads, one the head was made in view of does not, whatever their
    /// clocks say. Between saves made apart (or that record nothing), the most recently made
    /// one heads, unless the player chose the head after it was made, and not when it claims a
    /// time more than [`CLOCK_AHEAD`](super::slot_store::CLOCK_AHEAD) past this device's clock
    /// (a device whose clock runs ahead would otherwise win every import with saves older than
    /// the player's) or, later, past the storage's time of its upload ([`uploaded_at`]: with
    /// this device's clock behind, every other device's newer save looked ahead and never took
    /// the head here, simulator seed 430677). Before the clocks: a save made over the other
    /// while the other's file did not read on its device ([`SaveMeta::made_over_unread_save`]) is
    /// the later one, and heads (a repair brings the other back below it), as a save made in
    /// view of the head does, though the player chose the head here: it comes after the save
    /// they chose (long-run seeds 542713, 547172; the choice's time, on this device's clock,
    /// could not tell, another device's clock hours apart); one that a save the slot holds
    /// below the head was made over (`made_over_below`) is the older, and does not head.
    /// Saves made in the
    /// same millisecond are ordered by save id, so every device that holds both puts the same
    /// one on top, whichever arrived first.
    ///
    /// [`uploaded_at`]: ImportRules::uploaded_at
    fn heads(
        &self,
        arriving: &SaveMeta,
        head: &SaveMeta,
        made_over_below: bool,
        now: Timestamp,
    ) -> bool {
        match arriving.lineage(head) {
            Lineage::Follows => true,
            Lineage::Precedes => false,
            // The player saved one over the other where its file did not read: that one was
            // made later, whatever the clocks say (simulator seeds 129, 433020) and whatever
            // the player chose here: the save it was made over is the one they chose, or older.
            Lineage::Concurrent | Lineage::Unrecorded if arriving.made_over_unread_save(head) => {
                true
            }
            Lineage::Concurrent | Lineage::Unrecorded
                if head.made_over_unread_save(arriving) || made_over_below =>
            {
                false
            }
            Lineage::Concurrent | Lineage::Unrecorded => {
                let created = arriving.created_at;
                let judged_at = self.judged_at(now);
                // Two saves of one device (the slot deleted between them) read one clock:
                // whether it runs ahead of this device's clock says nothing of their order.
                let same_device = arriving
                    .device_id()
                    .is_some_and(|id| head.device_id() == Some(id));
                (head.created_at, head.save_id) < (created, arriving.save_id)
                    && (same_device || is_plausible(created, judged_at))
                    && self.chosen_at.is_none_or(|chosen| created > chosen)
            }
        }
    }
}

/// What [`SlotStore::import`] did with a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportOutcome {
    /// The slot already holds a generation with this save id; nothing was written.
    AlreadyPresent {
        /// The slot.
        slot: SlotId,
        /// The generation holding it.
        generation: u64,
    },
    /// The file is now a generation of its slot.
    Placed(Box<ImportReceipt>),
    /// The player deleted this save from its slot here, or a save made in view of it
    /// ([`SlotStore::is_deleted`]): it is not brought back, and nothing was written.
    Deleted {
        /// The slot.
        slot: SlotId,
    },
    /// The slot holds a save made in view of this one ([`SaveMeta::made_in_view_of_save`]):
    /// its line goes on there, and nothing was written (placed below the head, it would push
    /// the slot's oldest backup out).
    Superseded {
        /// The slot.
        slot: SlotId,
        /// The save here made in view of it.
        by: Uuid,
    },
}

/// Where an imported save was placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReceipt {
    /// The slot, from the file's metadata.
    pub slot: SlotId,
    /// The generation now holding the imported save.
    pub generation: u64,
    /// The imported save's metadata.
    pub meta: SaveMeta,
    /// Whether the imported save heads the slot (it was made after every save the slot held).
    pub heads_slot: bool,
    /// The save that headed the slot before, if there was one.
    pub previous_head: Option<SaveMeta>,
}

impl SlotStore {
    /// Decodes a complete save file made elsewhere, in full and under the store's limits, for
    /// [`import`](Self::import). A file from a newer format version is refused with
    /// [`FormatError::NewerVersion`].
    pub fn decode_import<'a>(&self, bytes: &'a [u8]) -> Result<ImportFile<'a>, FormatError> {
        let decoded = format::decode(bytes, &self.config().decode_options())?;
        Ok(ImportFile { bytes, decoded })
    }

    /// Places a decoded save file made elsewhere as a new generation of the slot named in its
    /// metadata, then lets the most recently created save head the slot.
    ///
    /// Refused, writing nothing: a slot outside the layout, and a slot whose newest save is
    /// from a newer format version (the error says so). Not placed: a save the player deleted
    /// from the slot here, or one a deleted save was made in view of
    /// ([`ImportOutcome::Deleted`]), and one a save of the slot was made in view of
    /// ([`ImportOutcome::Superseded`]). Older generations beyond [`StoreConfig::backups`](super::StoreConfig::backups) are
    /// removed afterwards, as after a save.
    pub fn import(&self, file: ImportFile<'_>) -> Result<ImportOutcome, StoreError> {
        self.import_with(file, &ImportRules::default())
    }

    /// [`import`](Self::import) under `rules`: the saves pruning must keep, and the time the
    /// player chose the save heading the slot.
    pub fn import_with(
        &self,
        file: ImportFile<'_>,
        rules: &ImportRules,
    ) -> Result<ImportOutcome, StoreError> {
        let ImportFile { bytes, decoded } = file;
        let meta = decoded.meta;
        let slot = meta.slot;
        self.check_slot(slot)?;
        self.flush_folder_chain()?;
        let _lock = self.lock(slot)?;
        let _ = self.settle_stopped_writes(slot);
        if self.is_deleted(&meta)? {
            return Ok(ImportOutcome::Deleted { slot });
        }
        // A head that cannot be read now must not be taken for missing: the import waits. A
        // generation that does not verify is not the head (nor the arriving save's copy).
        let existing = self.generation_metas(slot, Reading::Place)?;
        if let Some(present) = existing.iter().find(|s| s.meta.save_id == meta.save_id)
            && !self.damaged_above(slot, present, &existing)?
        {
            // An import that placed its file but not its entry (a crash between the two) is
            // named now, as far as the record can be written (the next arrival tries again).
            let _ = self.note_entered(slot, &meta, &existing);
            return Ok(ImportOutcome::AlreadyPresent {
                slot,
                generation: present.generation,
            });
        }
        let generations = self.generations(slot)?;
        let top = match generations.first() {
            Some(&newest) => {
                self.refuse_newer_format(slot, newest)?;
                newest
            }
            None => 0,
        };
        // A save the slot already holds a successor of (made in view of it on its device)
        // is not placed: its line goes on in that successor. Placed below the head, it would
        // count as a backup and push the oldest real one out, and a load that falls back past
        // a damaged head would return it, older than the backups it displaced.
        let successor = existing
            .iter()
            .find(|s| s.meta.save_id != meta.save_id && s.meta.made_in_view_of_save(&meta));
        if let Some(successor) = successor {
            let by = successor.meta.save_id;
            return Ok(ImportOutcome::Superseded { slot, by });
        }
        let head = existing.first();
        let previous_head = head.map(|s| s.meta.clone());
        let heads_slot = self.arriving_heads(&meta, &existing, rules)?;
        let generation = match (heads_slot, head) {
            (false, Some(head)) => self.place_below(slot, head.generation, top, bytes)?,
            _ => self.write_generation(slot, self.above(slot, top)?, bytes)?,
        };
        self.enter_placed(slot, &meta, &existing, generation)?;
        // A listing that misses the file just written (a network folder's stale cache) prunes
        // nothing rather than panicking; the next save prunes.
        let generations = self.generations(slot)?;
        let below_head = generations.get(1..).unwrap_or_default();
        let mut keep = rules.keep.clone();
        keep.extend(line_tips(&existing, &meta));
        // Pruning failures leave an extra old file, as after a save; the import is complete.
        let _ = self.prune(slot, below_head, &keep);
        Ok(ImportOutcome::Placed(Box::new(ImportReceipt {
            slot,
            generation,
            meta,
            heads_slot,
            previous_head,
        })))
    }

    /// Whether `arriving` heads the slot holding `existing` (its readable generations, newest
    /// first): against the head, by the player's choice ([`takes_back_from_settled`]) and
    /// the rules, which are told whether a save the slot holds below the head was made over
    /// the arriving one while its file did not read ([`SaveMeta::made_over_unread_save`]; a
    /// save the player passed over or deleted does not count): where the clocks would decide,
    /// it came before that save, and does not head (a third device's save the clocks put
    /// between them; the repaired save headed over both, long-run seed 555464).
    ///
    /// [`takes_back_from_settled`]: Self::takes_back_from_settled
    fn arriving_heads(
        &self,
        arriving: &SaveMeta,
        existing: &[StoredSave],
        rules: &ImportRules,
    ) -> Result<bool, StoreError> {
        let Some(head) = existing.first() else {
            return Ok(true);
        };
        let settled = self.read_record(arriving.slot)?;
        let made_over_below = (existing.iter())
            .filter(|save| save.meta.save_id != arriving.save_id)
            .filter(|save| !settled.covers(&save.meta))
            .any(|save| save.meta.made_over_unread_save(arriving));
        let now = self.config().now();
        Ok(self.takes_back_from_settled(arriving, &head.meta)?
            || rules.heads(arriving, &head.meta, made_over_below, now))
    }

    /// Whether `arriving`, a save that entered the slot here before (placed again: a repair
    /// from the cloud), takes the head back from `head`, a save the player passed over (the
    /// record of settled saves covers it): such a head is in the slot only as a fallback, so
    /// the save it was passed over for, placed again after its copy here was damaged, heads
    /// whatever the clocks say (simulator seed 520967). A save that never entered the slot
    /// here is ordered by the rules as any other (review 61b G1: the head must not depend on
    /// which of two saves arrives first).
    fn takes_back_from_settled(
        &self,
        arriving: &SaveMeta,
        head: &SaveMeta,
    ) -> Result<bool, StoreError> {
        Ok(self.is_deleted(head)? && self.entered(arriving.slot)?.ids.contains(&arriving.save_id))
    }

    /// `meta`, made in view of the saves its slot holds (`held`, the head first), with its
    /// version vector ([`SaveMeta::with_versions`]). Its device goes on counting the line of
    /// its own save the slot holds when that save carries the line's highest count, and no
    /// save of the slot may hold a later one; otherwise (the slot was deleted or its files
    /// removed, or holds only other devices' saves) it starts a new line with a random epoch:
    /// a count given twice on one line would order saves that were made apart.
    ///
    /// A generation that does not read (`newest_unread` is the newest such) may hold a later
    /// count of the line (the device's newest save, damaged). The slot's record of the saves
    /// that entered it (`entered.rs`) says how far each line went there: the line goes on when
    /// the save lies above every file that does not read and carries that count. Without the
    /// record (lost, or never written), a new line.
    /// Starting a new line at every save over such a file, as this did, made a long session's
    /// vector outgrow its 64 lines, and its saves forgot the ones they were made over
    /// (simulator seed 430677: an odd folder under a save's name, and a session of 92 saves;
    /// an old save of the device came back over the player's newest). The generation order
    /// does not tell: sync repairing a slot places an older save of the device above a
    /// damaged newer one.
    pub(super) fn with_versions(
        &self,
        meta: SaveMeta,
        held: &[StoredSave],
        newest_unread: Option<u64>,
    ) -> SaveMeta {
        let record = self.entered(meta.slot).ok().filter(|r| !r.lines.is_empty());
        let went = |line: &str| record.as_ref().and_then(|record| record.count(line));
        // Never below the count the record says the line reached: a newer save of the line
        // may be gone (damaged, then pruned by a repair that placed an older one again;
        // simulator seed 507184). Over a file that does not read, both: the save lies above
        // it (its count may lag the record's, should the record's write have failed), and it
        // carries the count the record says the line reached.
        let may_go_on = |save: &StoredSave, line: &str, count: u64| match newest_unread {
            None => went(line).is_none_or(|went| went <= count),
            Some(unread) => save.generation > unread && went(line) == Some(count),
        };
        let epoch = meta
            .device_id()
            .and_then(|device| line_to_go_on(device, held, may_go_on))
            .unwrap_or_else(Versions::new_epoch);
        meta.with_versions(&epoch, held.iter().map(|save| &save.meta))
    }

    /// What a new save of `slot` is made in view of: its readable generations with their
    /// metadata, newest first (as [`saves_in`](Self::saves_in) lists them, reading the folder
    /// once), and the newest generation that did not read, if any. A generation that cannot be
    /// read now for a reason that may pass (an I/O error) fails the save: the save would not
    /// record the one it holds, and should the new save's file be damaged later, the slot would
    /// fall back to a save it does not record being made over.
    pub(super) fn held_in_view(&self, slot: SlotId) -> Result<HeldInView, StoreError> {
        self.check_slot(slot)?;
        let generations = self.generations(slot)?;
        let held = self.metas_of(slot, generations.clone(), Reading::View)?;
        let read = |generation: &u64| held.iter().any(|save| save.generation == *generation);
        let newest_unread = generations.into_iter().find(|generation| !read(generation));
        Ok((held, newest_unread))
    }

    /// Every readable generation of every slot with its metadata, newest generation first
    /// within a slot. Damaged generations are left out.
    pub fn saves(&self) -> Result<Vec<StoredSave>, StoreError> {
        let mut saves = Vec::new();
        for slot in self.config().layout.slots() {
            saves.extend(self.generation_metas(slot, Reading::List)?);
        }
        Ok(saves)
    }

    /// The readable generations of one slot with their metadata, newest first.
    pub fn saves_in(&self, slot: SlotId) -> Result<Vec<StoredSave>, StoreError> {
        self.check_slot(slot)?;
        self.generation_metas(slot, Reading::List)
    }

    /// Reads one generation once and checks every checksum it carries, without decompressing
    /// it: whether the file is intact on this disk (as pruning decides what is a backup).
    pub fn verify(&self, slot: SlotId, generation: u64) -> Result<format::SaveSummary, StoreError> {
        self.check_slot(slot)?;
        self.verify_generation(&self.path_of(slot, generation))
    }

    /// Whether an intact copy `present` of a save, below the slot's head, lies under a newer
    /// copy of the same save that does not verify (an interrupted import leaves a duplicate of
    /// the head below; damage at rest to the upper one makes the slot load past both). The
    /// arriving copy is then placed again, as the repair it is.
    fn damaged_above(
        &self,
        slot: SlotId,
        present: &StoredSave,
        intact: &[StoredSave],
    ) -> Result<bool, StoreError> {
        if intact.first().map(|head| head.generation) == Some(present.generation) {
            return Ok(false);
        }
        let listed = self.generation_metas(slot, Reading::List)?;
        Ok(listed.iter().any(|save| {
            save.meta.save_id == present.meta.save_id && save.generation > present.generation
        }))
    }

    /// The whole file of one generation, for copying it elsewhere unchanged.
    pub fn read_generation_bytes(
        &self,
        slot: SlotId,
        generation: u64,
    ) -> Result<Vec<u8>, StoreError> {
        self.check_slot(slot)?;
        let limit = self.config().decode_options().limits.max_file_len();
        self.read_whole(&self.path_of(slot, generation), limit)
    }

    /// Replaces the profile folder's side file `name` durably (temporary file, fsync, rename,
    /// folder fsync). For small state such as the cloud sync queue; `name` must not look like
    /// a save, lock or temporary file.
    pub fn write_profile_file(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        check_side_file_name(name)?;
        self.flush_folder_chain()?;
        write_durably(
            self.fs.as_ref(),
            &self.dir,
            name,
            &[bytes],
            Placement::Replace,
        )
        .map(|_| ())
    }

    /// Reads the profile folder's side file `name`; `None` when it does not exist. Like a
    /// save, it must be a regular file ([`StoreError::NotAFile`]) no larger than the largest
    /// save the limits allow ([`StoreError::FileTooLarge`]).
    pub fn read_profile_file(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_side_file_name(name)?;
        let limit = self.config().decode_options().limits.max_file_len();
        match self.read_whole(&self.dir.join(name), limit) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// The readable generations of `slot` with their metadata, newest first, read as
    /// `reading` says.
    fn generation_metas(
        &self,
        slot: SlotId,
        reading: Reading,
    ) -> Result<Vec<StoredSave>, StoreError> {
        self.metas_of(slot, self.generations(slot)?, reading)
    }

    /// The readable ones of `generations` of `slot` with their metadata, in the order given,
    /// read as `reading` says.
    pub(super) fn metas_of(
        &self,
        slot: SlotId,
        generations: Vec<u64>,
        reading: Reading,
    ) -> Result<Vec<StoredSave>, StoreError> {
        let mut saves = Vec::new();
        for generation in generations {
            let path = self.path_of(slot, generation);
            let read = match reading {
                Reading::List | Reading::View => self.read_summary(&path),
                Reading::Place => self.verify_generation(&path),
            };
            match read {
                Ok(summary) => saves.push(StoredSave {
                    slot,
                    generation,
                    meta: summary.meta,
                }),
                Err(error) if reading != Reading::List && error.may_pass() => {
                    return Err(error);
                }
                // Damaged, gone since the listing, or not ours to read: left out, as a load
                // falls back past it.
                Err(_) => {}
            }
        }
        Ok(saves)
    }

    /// The generation number above `newest`.
    pub(super) fn above(&self, slot: SlotId, newest: u64) -> Result<u64, StoreError> {
        newest
            .checked_add(1)
            .ok_or_else(|| StoreError::GenerationsExhausted {
                slot,
                path: self.path_of(slot, newest),
            })
    }

    fn write_generation(
        &self,
        slot: SlotId,
        generation: u64,
        bytes: &[u8],
    ) -> Result<u64, StoreError> {
        write_durably(
            self.fs.as_ref(),
            &self.dir,
            &generation_file_name(slot, generation),
            &[bytes],
            Placement::New,
        )?;
        Ok(generation)
    }

    /// Places `bytes`, a save older than the slot's newest (`head`, at generation `head`),
    /// below it: `head` is first copied two generations above `top`, then `bytes` written in
    /// between, then `head`'s old copy removed. At every step the newest save heads the slot,
    /// so an interrupted import never leaves the older save on top (and, not yet present, it
    /// is offered again). Returns the generation of the placed save.
    fn place_below(
        &self,
        slot: SlotId,
        head: u64,
        top: u64,
        bytes: &[u8],
    ) -> Result<u64, StoreError> {
        let placed = self.above(slot, top)?;
        let new_head = self.above(slot, placed)?;
        self.copy_generation(slot, head, new_head)?;
        self.write_generation(slot, placed, bytes)?;
        self.remove_generation(slot, head)?;
        Ok(placed)
    }

    /// Names the save just placed at `generation` in the slot's record of what entered it
    /// (see `entered.rs`), durably: an import that failed did not enter. One whose entry
    /// cannot be written takes its file out again and fails, to arrive again: placed unnamed,
    /// a delete over its file once damaged could not name it, and the cloud would bring it
    /// back into the slot the player emptied (simulator seed 545099).
    fn enter_placed(
        &self,
        slot: SlotId,
        meta: &SaveMeta,
        held: &[StoredSave],
        generation: u64,
    ) -> Result<(), StoreError> {
        let entered = self.note_entered(slot, meta, held);
        entered.and_then(|()| self.sync_folder()).inspect_err(|_| {
            let _ = self.remove_generation(slot, generation);
        })
    }

    /// Copies `generation` durably to `to`, after checking it reads.
    fn copy_generation(&self, slot: SlotId, generation: u64, to: u64) -> Result<(), StoreError> {
        let bytes = self.read_generation_bytes(slot, generation)?;
        format::decode(&bytes, &self.config().decode_options()).map_err(|source| {
            StoreError::Format {
                path: self.path_of(slot, generation),
                source,
            }
        })?;
        self.write_generation(slot, to, &bytes).map(|_| ())
    }

    fn remove_generation(&self, slot: SlotId, generation: u64) -> Result<(), StoreError> {
        let old = self.path_of(slot, generation);
        self.fs
            .remove_file(&old)
            .map_err(StoreError::io("remove the copied generation", &old))?;
        self.sync_folder()
    }

    /// Copies `generation` above `newest` durably, then removes the old copy.
    pub(super) fn move_to_top(
        &self,
        slot: SlotId,
        generation: u64,
        newest: u64,
    ) -> Result<u64, StoreError> {
        let top = self.above(slot, newest)?;
        self.copy_generation(slot, generation, top)?;
        self.remove_generation(slot, generation)?;
        Ok(top)
    }
}

/// The saves of a slot (the ones it held, `existing`, and the one arriving) that no other of
/// them was made in view of ([`SaveMeta::made_in_view_of_save`]): the newest of each line of saves
/// made apart, one per device that saved the slot without seeing the others' saves. An import's
/// prune never removes one, whatever the backups: each is this device's only copy of a line the
/// player may want to go on from (a conflict, or the save a conflict hides). A save made in view
/// of others supersedes them, and those go as backups do. Saves that record nothing are left to
/// the caller's [`ImportRules::keep`].
fn line_tips<'a>(
    existing: &'a [StoredSave],
    arriving: &'a SaveMeta,
) -> impl Iterator<Item = Uuid> + 'a {
    let all = move || existing.iter().map(|save| &save.meta).chain([arriving]);
    all()
        .filter(move |meta| meta.follows().is_some() || meta.versions().is_some())
        .filter(move |meta| {
            !all().any(|other| other.save_id != meta.save_id && other.made_in_view_of_save(meta))
        })
        .map(|meta| meta.save_id)
}

/// What a new save of a slot is made in view of ([`SlotStore::held_in_view`]): the readable
/// generations, newest first, and the newest generation that did not read.
pub(super) type HeldInView = (Vec<StoredSave>, Option<u64>);

/// The epoch of the line `device` may go on counting in a slot holding `held`: the line of
/// one of its own saves there that no save there counts further, and that `may_go_on` (given
/// the save, its line and its count) allows.
fn line_to_go_on(
    device: &str,
    held: &[StoredSave],
    may_go_on: impl Fn(&StoredSave, &str, u64) -> bool,
) -> Option<String> {
    let vectors: Vec<Versions> = held.iter().filter_map(|s| s.meta.versions()).collect();
    held.iter().find_map(|save| {
        let versions = save.meta.versions()?;
        let (line, count) = versions.own();
        let (owner, epoch) = line.rsplit_once('.')?;
        let newest = vectors
            .iter()
            .all(|other| other.count(line).is_none_or(|held| held <= count));
        (owner == device && newest && may_go_on(save, line, count)).then(|| epoch.to_owned())
    })
}

/// How a listing of a slot's saves reads each generation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// Header and metadata only; a generation that does not read is left out, as a damaged
    /// one (listings, which must stay cheap).
    List,
    /// Header and metadata only, for what a new save records holding and what a delete
    /// records removing: a damaged generation is left out, but one that cannot be read for a
    /// reason that may pass fails the listing.
    View,
    /// Every checksum, as pruning does ([`SlotStore::verify_generation`]): the generation that
    /// heads the slot for an import must be one a load returns. A generation that cannot be
    /// read for a reason that may pass (an I/O error other than a missing file or a denied
    /// permission) fails the listing: deciding where a save goes needs every generation.
    Place,
}

impl StoreError {
    /// Whether the error is about a save from a newer format version (in a file, or heading a
    /// slot): nothing is wrong with the file, this build is too old for it.
    pub fn is_newer_format(&self) -> bool {
        matches!(
            self,
            StoreError::Format {
                source: FormatError::NewerVersion { .. },
                ..
            } | StoreError::NewerFormat { .. }
        )
    }
}

fn check_side_file_name(name: &str) -> Result<(), StoreError> {
    let reason = if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        Some("it must be a plain file name")
    } else if parse_generation_file(name).is_some()
        || is_temp_file(name)
        || name.ends_with(".lock")
        || name.ends_with(".tmp")
    {
        Some("it looks like a save, lock or temporary file")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(StoreError::InvalidName {
            what: "profile file",
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::ImportRules;
    use crate::format::{SaveMeta, Timestamp, Versions};
    use crate::slot::SlotId;

    const HOUR: i64 = 3_600_000;

    fn made(device: &str, at: i64) -> SaveMeta {
        SaveMeta {
            created_at: Timestamp::from_unix_millis(at),
            ..SaveMeta::new(SlotId::Quick).with_device(device, device)
        }
    }

    /// Long-run seed 430677: this device's clock runs six hours behind. Another device's save
    /// made apart from the head, dated by the true time, heads once the storage's time of its
    /// upload vouches for its date; not on this device's clock alone, not while the player's
    /// choice (a time of this device's clock) stands, and not past a day of the storage's word.
    #[test]
    fn a_storage_dated_upload_vouches_for_a_save_dated_past_this_devices_clock() {
        let truth = 1_800_000_000_000;
        let now = Timestamp::from_unix_millis(truth - 6 * HOUR);
        let head = made("aaaaaaaaaaaa", truth - 6 * HOUR - 60_000);
        let arriving = made("bbbbbbbbbbbb", truth);
        let uploaded = Timestamp::from_unix_millis(truth + 1_000);
        let rules = |uploaded_at, chosen_at| ImportRules {
            uploaded_at,
            chosen_at,
            ..ImportRules::default()
        };
        assert!(!rules(None, None).heads(&arriving, &head, false, now));
        assert!(rules(Some(uploaded), None).heads(&arriving, &head, false, now));
        let chosen = Some(Timestamp::from_unix_millis(now.unix_millis() - 60_000));
        assert!(!rules(Some(uploaded), chosen).heads(&arriving, &head, false, now));

        let far = made("bbbbbbbbbbbb", now.unix_millis() + 30 * HOUR);
        let far_upload = Timestamp::from_unix_millis(now.unix_millis() + 40 * HOUR);
        assert!(!rules(Some(far_upload), None).heads(&far, &head, false, now));
    }

    /// Long-run seeds 542991, 547172: a save made over the head while its file did not read
    /// (named by id, or within how far its line went there) heads, whatever the clocks say,
    /// and though the player chose the head here: it comes after the head, as a save made in
    /// view of it does. A save of the head's line past that count is not made over it: the
    /// clocks decide.
    #[test]
    fn a_save_made_over_the_head_heads_whatever_the_clocks_and_a_choice() {
        let now = Timestamp::from_unix_millis(1_800_000_000_000);
        let on_line = |at, epoch: &str, head: Option<&SaveMeta>| {
            let held = head.into_iter();
            made("aaaaaaaaaaaa", at)
                .with_follows([])
                .with_versions(epoch, held)
        };
        let head = on_line(now.unix_millis() - HOUR, "e1", None);
        let later_on_line = on_line(now.unix_millis() - HOUR, "e1", Some(&head));
        let reached = Versions::parse("@aaaaaaaaaaaa.e1:1");
        let over = made("bbbbbbbbbbbb", now.unix_millis() - 7 * HOUR)
            .with_follows([])
            .with_over_unread([], reached)
            .with_versions("e2", []);
        let chosen = Some(Timestamp::from_unix_millis(now.unix_millis() - 60_000));
        for chosen_at in [None, chosen] {
            let rules = ImportRules {
                chosen_at,
                ..ImportRules::default()
            };
            assert!(
                rules.heads(&over, &head, false, now),
                "chosen at {chosen_at:?}"
            );
            assert!(
                !rules.heads(&head, &over, false, now),
                "chosen at {chosen_at:?}"
            );
            assert!(!rules.heads(&over, &later_on_line, false, now));
        }
    }
}
