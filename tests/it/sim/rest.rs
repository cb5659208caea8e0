//! What happens to a device's folder and to the cloud behind the game's back: damage at rest,
//! odd entries under the names the store and sync use, a newer build's saves, a lost sync
//! state, and hostile objects in the cloud.

use super::check::{self, NewerFile};
use super::disk::{Odd, SimDisk};
use super::plan::{Hostile, OddName, Rot};
use super::run::{Sim, held_ids, world};
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{RemoteName, STATE_FILE};
use bevy_keepsake::format::{self, FORMAT_VERSION, SaveBundle, SaveMeta, Versions, WorldState};
use bevy_keepsake::store::{FileSystem, entered_record_name, slot_stem};
use bytes::Bytes;
use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::OnceLock;
use uuid::Uuid;

pub fn read_all(disk: &SimDisk, path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Ok(mut file) = disk.open_read(path) {
        let _ = file.read_to_end(&mut bytes);
    }
    bytes
}

fn generation_name(slot: SlotId, generation: u64) -> String {
    format!("{}.g{generation:06}.ksav", slot_stem(slot))
}

/// The objects hostile to memory, made once per test process (outside any step): one larger
/// than any save the limits allow, and for each sealing a bomb (a file of kilobytes whose
/// payload decompresses to 15 MiB).
pub struct HostileObjects {
    pub huge: Bytes,
    pub bomb: Bytes,
}

pub fn hostile_objects(sealed: bool) -> &'static HostileObjects {
    static OBJECTS: [OnceLock<HostileObjects>; 2] = [OnceLock::new(), OnceLock::new()];
    OBJECTS[usize::from(sealed)].get_or_init(|| {
        let config = super::device::store_config(0, sealed);
        let huge = vec![0x4B; super::device::limits().max_file_len() as usize + 1];
        let meta = SaveMeta {
            save_id: Uuid::from_u128(0xB0B),
            ..SaveMeta::new(SlotId::Manual(0))
        }
        .with_follows([]);
        let bundle = SaveBundle::new(WorldState {
            tick: 0,
            ecs_blob: vec![0; 15 << 20],
            state_hash: 0,
        });
        let bomb = format::encode(&meta, &bundle, &config.encode)
            .expect("the bomb encodes")
            .to_vec();
        HostileObjects {
            huge: Bytes::from(huge),
            bomb: Bytes::from(bomb),
        }
    })
}

/// `bytes`, a save file, as a newer build would write it: the header's format version one
/// past this build's, the header's checksum right.
pub fn as_newer_format(bytes: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    if bytes.len() >= format::HEADER_LEN {
        bytes[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        let crc = crc32fast::hash(&bytes[..36]);
        bytes[36..40].copy_from_slice(&crc.to_le_bytes());
    }
    bytes
}

impl Sim {
    /// The saves `device` holds an intact copy of.
    fn intact_on(&self, device: usize) -> std::collections::HashSet<Uuid> {
        let store = self.devices[device].checker();
        store.map(|s| check::intact_ids(&s)).unwrap_or_default()
    }

    /// After the disk destroyed a copy of `id` on `device`: damage, when no intact copy is
    /// left there.
    fn destroyed(&mut self, device: usize, id: Uuid) {
        if !self.intact_on(device).contains(&id) {
            self.oracle.damage(device, id);
        }
    }

    /// A newer build's file at `path` is gone or changed, by the disk: its save is damaged.
    fn newer_file_destroyed(&mut self, device: usize, path: &Path) {
        let gone: Vec<NewerFile> = self
            .newer
            .iter()
            .filter(|f| f.device == device && f.path == path)
            .cloned()
            .collect();
        self.newer
            .retain(|f| !(f.device == device && f.path == path));
        for file in gone {
            self.oracle.damage(device, file.id);
        }
    }

    /// The save id the file at `path` holds, by its metadata.
    fn id_at(&self, device: usize, path: &Path) -> Option<Uuid> {
        let disk = &self.devices[device].disk;
        let bytes = disk.paused(|| read_all(disk, path));
        let summary = format::read_summary(&mut Cursor::new(&bytes), &Default::default());
        summary.ok().map(|summary| summary.meta.save_id)
    }

    /// Damages one of the device's save files at rest.
    pub fn rot(&mut self, device: usize, file: u32, how: Rot) {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let mut names: Vec<String> = dev.disk.tree().list(&dir);
        names.retain(|name| name.ends_with(".ksav") && dev.disk.odd_at(&dir.join(name)).is_none());
        if names.is_empty() {
            return;
        }
        names.sort();
        let path = dir.join(&names[file as usize % names.len()]);
        let id = self.id_at(device, &path);
        self.devices[device].disk.rot(&path, |bytes| match how {
            Rot::Flip(at) if !bytes.is_empty() => {
                let at = at as usize % (bytes.len() * 8);
                bytes[at / 8] ^= 1 << (at % 8);
            }
            Rot::Truncate(at) => bytes.truncate(at as usize % bytes.len().max(1)),
            Rot::Flip(_) => {}
        });
        self.newer_file_destroyed(device, &path);
        if let Some(id) = id {
            self.destroyed_files.insert((device, path), id);
            self.destroyed(device, id);
        }
    }

    /// The saves held by the files of `slot` on `device` the disk destroyed, that are there
    /// still (`Sim::destroyed_files`): what a delete removes with them.
    pub fn destroyed_in(&self, device: usize, slot: SlotId) -> Vec<Uuid> {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let stem = format!("{}.g", slot_stem(slot));
        let names = dev.disk.tree().list(&dir);
        let of_slot = names.into_iter().filter(|name| name.starts_with(&stem));
        of_slot
            .filter_map(|name| {
                let path = dir.join(name);
                let id = *self.destroyed_files.get(&(device, path.clone()))?;
                // The name may hold another save by now (a slot deleted and saved in again).
                (self.id_at(device, &path).is_none_or(|now| now == id)).then_some(id)
            })
            .collect()
    }

    /// Puts an odd entry under one of the names the store and sync use.
    pub fn odd_file(&mut self, device: usize, name: OddName, odd: Odd) {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let path = match name {
            OddName::Generation { slot, generation } => dir.join(generation_name(slot, generation)),
            OddName::Lock(slot) => dir.join(format!("{}.lock", slot_stem(slot))),
            OddName::Deleted(slot) => {
                let path = dir.join(format!("{}.deleted", slot_stem(slot)));
                if dev.disk.tree().list(&dir).contains(&file_name(&path)) {
                    return;
                }
                path
            }
            OddName::State => dir.join(STATE_FILE),
            OddName::Temp { slot, n } => {
                let pid = 4_000_000 + n % 1000;
                dir.join(format!("{}.{pid}-{n}.tmp", generation_name(slot, 1)))
            }
        };
        if dev.disk.odd_at(&path).is_some() {
            return;
        }
        let id = self.id_at(device, &path);
        self.devices[device].disk.add_odd(path.clone(), odd);
        self.stats.odd_entries += 1;
        if odd.destroys() {
            self.newer_file_destroyed(device, &path);
            if let Some(id) = id {
                self.destroyed(device, id);
            }
        }
    }

    /// The player runs a newer build for one save of `slot`: written as that build writes it
    /// (durably, made in view of what the slot holds, a newer build's file among it), in a
    /// format this build reads or not, then comes back to this build.
    pub fn newer_build(&mut self, device: usize, slot: SlotId, id: u128, unreadable: bool) {
        self.devices[device].stop();
        let Ok(store) = self.devices[device].checker() else {
            return;
        };
        let Some(newest) = store.generations(slot).ok().map(|g| g.first().copied()) else {
            return;
        };
        let generation = newest.unwrap_or(0) + 1;
        let readable = store.saves_in(slot).unwrap_or_default();
        let mut held: Vec<Uuid> = held_ids(&store, slot).into_iter().collect();
        let newer_here = self
            .newer
            .iter()
            .filter(|f| f.device == device && f.slot == slot);
        held.extend(newer_here.map(|f| f.id));
        let destroyed = self.destroyed_in(device, slot);
        // As this build does: over a file that does not read, how far each line went among
        // what entered the slot; and what the held saves were made over.
        let dir = self.devices[device].profile_dir();
        let entered = (!destroyed.is_empty())
            .then(|| entered_lines(&self.devices[device].disk, &dir, slot))
            .flatten();
        let over_lines: Vec<Versions> = (entered.into_iter())
            .chain(readable.iter().filter_map(|s| s.meta.over_lines()))
            .collect();
        let lines = Versions::highest(over_lines.iter().flat_map(Versions::entries));
        let now = self.devices[device].now();
        let meta = SaveMeta {
            save_id: Uuid::from_u128(id),
            created_at: now,
            ..SaveMeta::new(slot).with_title(format!("newer build #{id}"))
        }
        .with_device("0e0e0e0e0e0e", "newer build")
        .with_follows(held)
        // As this build does: the saves it was made over whose files did not read.
        .with_over_unread(destroyed, lines)
        // A build of this library or later names its device, so it writes the save's version
        // vector too (on a line of its own: each newer build's save starts one). Without it
        // the save would be one from a build before vectors, whose place in a line of saves
        // its successors' lists of ids keep only so far back (see `Versions`).
        .with_versions(
            &format!("{:08x}", id as u32),
            readable.iter().map(|s| &s.meta),
        );
        self.ticks += 1;
        let bundle = SaveBundle::new(WorldState {
            tick: self.ticks,
            ..world().clone()
        });
        let config = self.devices[device].config().clone();
        let Ok(encoded) = format::encode(&meta, &bundle, &config.encode) else {
            return;
        };
        let bytes = match unreadable {
            true => as_newer_format(&encoded.to_vec()),
            false => encoded.to_vec(),
        };
        let dir = self.devices[device].profile_dir();
        note_entered_at_rest(&self.devices[device].disk, &dir, &meta);
        let path = dir.join(generation_name(slot, generation));
        if !self.devices[device].disk.put_at_rest(&path, &bytes) {
            return;
        }
        self.stats.newer_builds += 1;
        self.oracle.attempt(device, meta.clone(), bundle);
        self.oracle.written(meta.clone());
        self.oracle.confirm_save(device, slot, meta.save_id);
        if unreadable {
            self.frozen.insert((device, slot));
            let id = meta.save_id;
            self.newer.push(NewerFile {
                device,
                slot,
                path,
                bytes,
                id,
            });
        }
    }

    /// The sync state file is deleted or garbled while the game is not running.
    pub fn lose_state(&mut self, device: usize, garble: bool) {
        let dev = &mut self.devices[device];
        dev.stop();
        let path = dev.profile_dir().join(STATE_FILE);
        if dev.disk.odd_at(&path).is_some() {
            return;
        }
        let lost = match garble {
            true => dev
                .disk
                .rot(&path, |bytes| bytes.iter_mut().for_each(|b| *b ^= 0x5A)),
            false => dev.disk.paused(|| dev.disk.remove_file(&path)).is_ok(),
        };
        self.stats.lost_states += usize::from(lost);
    }

    /// Puts something into the cloud that no device of the game made.
    pub fn hostile(&mut self, kind: Hostile, pick: u64) {
        const FOLDER: &str = "games/sim/player";
        let uploaded: Vec<(String, Bytes)> = self
            .cloud
            .objects()
            .into_iter()
            .filter(|(key, data)| key.starts_with(FOLDER) && data.len() < 1 << 20)
            .collect();
        let name = RemoteName {
            slot: SlotId::Manual((pick % 2) as u16),
            created_ms: self.now_ms,
            device_id: "0badc0ffee00".to_owned(),
            save_id: Uuid::from_u64_pair(pick, 0x5151),
        };
        let key = format!("{FOLDER}/{name}");
        let copy = || {
            let (_, bytes) = uploaded.get(pick as usize % uploaded.len().max(1))?;
            Some(bytes.clone())
        };
        let objects = hostile_objects(self.config().sealed);
        let (bytes, listed) = match kind {
            Hostile::Garbage => {
                let len = 64 + (pick % 4096) as usize;
                let bytes: Vec<u8> = (0..len).map(|i| (pick >> (i % 56)) as u8).collect();
                (Some(Bytes::from(bytes)), None)
            }
            Hostile::Duplicate => (copy(), None),
            Hostile::Truncated => (copy().map(|b| b.slice(..b.len() / 2)), None),
            Hostile::Huge => (Some(objects.huge.clone()), None),
            Hostile::Understated => (Some(objects.huge.clone()), Some(4_096)),
            Hostile::Bomb => (Some(objects.bomb.clone()), None),
            Hostile::NewerFormat => (copy().map(|b| Bytes::from(as_newer_format(&b))), None),
            Hostile::BadKey => {
                let bad = ["../x.ksav", "a//b.ksav", "./quick-00.ksav", ".."];
                let bad = bad[pick as usize % bad.len()];
                let bytes = Bytes::from_static(b"not a save");
                self.cloud.put_raw(format!("{FOLDER}/{bad}"), bytes, None);
                return;
            }
        };
        if let Some(bytes) = bytes {
            self.cloud.put_raw(key, bytes, listed);
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Each line's highest count in `slot`'s record of what entered it (its `@` lines), as this
/// build reads it; `None` when it holds none.
fn entered_lines(disk: &SimDisk, dir: &Path, slot: SlotId) -> Option<Versions> {
    let text = read_all(disk, &dir.join(entered_record_name(slot)));
    let counts: Vec<Versions> = (String::from_utf8_lossy(&text).lines())
        .filter_map(Versions::parse)
        .collect();
    Versions::highest(counts.iter().map(Versions::own))
}

/// A newer build names its save in the slot's record of the saves that entered it, before the
/// file, as this build does (its id, and its own count): a delete here then names it, though
/// its file does not read here.
fn note_entered_at_rest(disk: &SimDisk, dir: &Path, meta: &SaveMeta) {
    let path = dir.join(entered_record_name(meta.slot));
    let mut line = format!("{}\n", meta.save_id.simple());
    if let Some(versions) = meta.versions() {
        let (own, count) = versions.own();
        line += &format!("@{own}:{count}\n");
    }
    if !disk.rot(&path, |old| old.extend_from_slice(line.as_bytes())) {
        disk.put_at_rest(&path, line.as_bytes());
    }
}
