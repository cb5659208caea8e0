//! The invariants checked on one device after every step, through the code a player's load
//! runs: on a store opened over a copy of the device's disk (so a check never starts the
//! game, never changes its disk, and never hides a fault from the game's own start).

use super::oracle::Oracle;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{SaveBundle, SaveMeta};
use bevy_keepsake::store::{LoadedSave, SlotStore, StoreError};
use std::collections::HashSet;
use uuid::Uuid;

/// How a check reads a device's slots: the player's load, and the player's choice of a save
/// held below the head followed by a load (on a fresh copy of the disk each time). A trait so
/// a test can plant a defect in what the check reads and see the check catch it.
pub trait SlotReader {
    fn load(&self, slot: SlotId) -> Result<LoadedSave, StoreError>;
    /// The generations of `slot` holding `id` (as its listing reads them).
    fn generations_of(&self, slot: SlotId, id: Uuid) -> Vec<u64>;
    /// What a load returns after the player chose `generation` to head `slot`.
    fn load_chosen(&self, slot: SlotId, generation: u64) -> Result<LoadedSave, StoreError>;
    /// Whether a generation of `slot` holding `id` decodes to `meta` and `bundle` by its bytes
    /// alone: only for a slot a newer format version holds, which this build refuses to load
    /// or change (the newer build reads it).
    fn bytes_hold(&self, slot: SlotId, id: Uuid, meta: &SaveMeta, bundle: &SaveBundle) -> bool;
}

/// The real reader: a store over a copy of the disk, and a way to make another copy for the
/// player's choice of a save in a slot (with what the store's refusal would name moved out of
/// the slot's lock name).
pub struct Reader<'a> {
    pub store: SlotStore,
    pub fork: &'a dyn Fn(SlotId) -> Result<SlotStore, String>,
}

impl SlotReader for Reader<'_> {
    fn load(&self, slot: SlotId) -> Result<LoadedSave, StoreError> {
        self.store.load(slot)
    }

    fn generations_of(&self, slot: SlotId, id: Uuid) -> Vec<u64> {
        let saves = self.store.saves_in(slot).unwrap_or_default();
        let held = saves.iter().filter(|save| save.meta.save_id == id);
        held.map(|save| save.generation).collect()
    }

    fn load_chosen(&self, slot: SlotId, generation: u64) -> Result<LoadedSave, StoreError> {
        let store = (self.fork)(slot).map_err(|reason| StoreError::Io {
            action: "open a copy of",
            path: reason.into(),
            source: std::io::Error::other("the simulator's copy of the disk"),
        })?;
        store.promote(slot, generation, None)?;
        store.load(slot)
    }

    fn bytes_hold(&self, slot: SlotId, id: Uuid, meta: &SaveMeta, bundle: &SaveBundle) -> bool {
        let options = self.store.config().decode_options();
        self.generations_of(slot, id).into_iter().any(|generation| {
            let bytes = self.store.read_generation_bytes(slot, generation);
            let decoded = bytes
                .ok()
                .and_then(|b| bevy_keepsake::format::decode(&b, &options).ok());
            decoded.is_some_and(|d| same_save(meta, bundle, &d.meta, &d.bundle))
        })
    }
}

/// Whether a save read back is the one made, byte for byte: its payload and its metadata as
/// the store wrote it (what it records being made in view of included).
pub fn same_save(
    made: &SaveMeta,
    bundle: &SaveBundle,
    read: &SaveMeta,
    read_bundle: &SaveBundle,
) -> bool {
    made == read && bundle == read_bundle
}

/// What a device holds that the simulator put there from a newer build: files this build
/// cannot read, which it must neither prune nor replace.
#[derive(Clone, Debug)]
pub struct NewerFile {
    pub device: usize,
    pub slot: SlotId,
    pub path: std::path::PathBuf,
    pub bytes: Vec<u8>,
    pub id: Uuid,
}

/// The invariants on one slot: what loads is a save some device made, byte for byte, and one
/// that may head the slot; every confirmed save the slot must hold loads, exactly, through a
/// player's load (or the player's choice of it, then a load); only a save the disk destroyed
/// here is excused.
pub fn check_slot(
    oracle: &Oracle,
    device: usize,
    reader: &dyn SlotReader,
    slot: SlotId,
    newer: &[NewerFile],
    frozen: bool,
) -> Result<(), String> {
    let newer_here: Vec<&NewerFile> = newer
        .iter()
        .filter(|file| file.device == device && file.slot == slot)
        .collect();
    let loaded = reader.load(slot);
    let head = match loaded {
        Ok(loaded) => Some(check_head(oracle, device, slot, loaded)?),
        Err(StoreError::EmptySlot(_) | StoreError::AllGenerationsDamaged { .. }) => None,
        Err(StoreError::NewerFormat { .. }) if frozen => None,
        Err(error) => return Err(format!("{slot:?} does not load on a healthy disk: {error}")),
    };
    for id in oracle.must_hold(device, slot) {
        if head == Some(id) || newer_here.iter().any(|file| file.id == id) {
            continue;
        }
        if holds(oracle, reader, slot, id, frozen) || oracle.is_damaged(device, &id) {
            continue;
        }
        return Err(format!(
            "the confirmed save {id} of {slot:?} is lost: no load returns it (head {head:?}, \
             generations holding it {:?})",
            reader.generations_of(slot, id)
        ));
    }
    Ok(())
}

/// Checks what heads a slot; returns its id.
fn check_head(
    oracle: &Oracle,
    device: usize,
    slot: SlotId,
    loaded: LoadedSave,
) -> Result<Uuid, String> {
    let id = loaded.meta.save_id;
    let known = oracle
        .known(&id)
        .ok_or_else(|| format!("{slot:?} loads {id}, a save no device made"))?;
    if !same_save(&known.meta, &known.bundle, &loaded.meta, &loaded.bundle) {
        return Err(format!(
            "{slot:?} loads {id} with other bytes than were saved"
        ));
    }
    if let Some(why) = oracle.inadmissible_head(device, slot, &id) {
        return Err(why);
    }
    Ok(id)
}

/// Whether the save `id`, held below the head, loads once the player chooses it; in a slot a
/// newer build's file holds (`frozen`), where this build refuses to change anything, whether
/// its bytes are intact.
fn holds(oracle: &Oracle, reader: &dyn SlotReader, slot: SlotId, id: Uuid, frozen: bool) -> bool {
    let Some(known) = oracle.known(&id) else {
        return false;
    };
    let chosen = reader
        .generations_of(slot, id)
        .into_iter()
        .any(|generation| {
            reader
                .load_chosen(slot, generation)
                .is_ok_and(|l| same_save(&known.meta, &known.bundle, &l.meta, &l.bundle))
        });
    chosen || (frozen && reader.bytes_hold(slot, id, &known.meta, &known.bundle))
}

/// The saves `store` holds an intact copy of (every checksum verifies, in the slot its name
/// says).
pub fn intact_ids(store: &SlotStore) -> HashSet<Uuid> {
    let saves = store.saves().unwrap_or_default();
    let intact = saves
        .iter()
        .filter(|save| store.verify(save.slot, save.generation).is_ok());
    intact.map(|save| save.meta.save_id).collect()
}
