//! What a simulated run does: its configuration and the players' actions, all drawn from one
//! seed, and each action carrying every choice it needs, so a run can be replayed and cut down
//! action by action without the seed.

use super::disk::{DiskFault, Odd};
use super::remote::CloudFault;
use crate::common::fixtures::Rng;
use bevy_keepsake::SlotId;
use std::fmt;

/// The shape of one run.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub devices: usize,
    /// Older generations each slot keeps: 0, 1 and the default 3.
    pub backups: u16,
    /// Whether the game seals its saves.
    pub sealed: bool,
}

impl Config {
    pub fn from_seed(seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0xC0FF_1CE5);
        Config {
            devices: 2 + rng.below(2) as usize,
            backups: [0, 1, 3][rng.below(3) as usize],
            sealed: rng.below(4) == 0,
        }
    }
}

/// Slots the simulation uses: few, so devices meet in them often.
pub const MANUAL_SLOTS: u16 = 2;
pub const AUTO_SLOTS: u16 = 2;

/// What can go into the cloud behind the devices' backs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// Random bytes under a name cloud sync writes.
    Garbage,
    /// A copy of an uploaded save under another save's name.
    Duplicate,
    /// An object larger than any save the limits allow.
    Huge,
    /// A key no object-store path can hold (`..`, `.` or an empty segment).
    BadKey,
    /// An uploaded save cut short, under a name of its own.
    Truncated,
    /// An object larger than any save the limits allow, whose listing says it is small: only
    /// a bounded read of its body stops it.
    Understated,
    /// A save file a few kilobytes long whose payload decompresses to megabytes (checksums
    /// valid): memory is charged against the file's size.
    Bomb,
    /// A copy of an uploaded save made by a newer build of the game (a newer format version
    /// in its header, the header's checksum right), under a name of its own.
    NewerFormat,
}

/// A name the store or cloud sync reads or writes in the profile folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OddName {
    /// A save generation's file.
    Generation { slot: SlotId, generation: u64 },
    /// A slot's lock file.
    Lock(SlotId),
    /// A slot's record of deleted saves (only where none was written yet: a record the disk
    /// destroys lets deleted saves come back, which no store can prevent).
    Deleted(SlotId),
    /// The cloud sync state (`cloud-sync.ron`): its device id is lost with it.
    State,
    /// A temporary file's name of another process's interrupted save.
    Temp { slot: SlotId, n: u32 },
}

/// What a restart after a crash meets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// A healthy disk.
    Clean,
    /// A fault at its `after`-th call.
    Fault { after: u32, fault: DiskFault },
    /// Another crash at its `after`-th call (a power loss when `power`).
    Dies { after: u32, power: bool, pick: u64 },
}

/// How a file at rest is damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rot {
    /// One bit flipped, at a position drawn from the number.
    Flip(u32),
    /// Cut at a length drawn from the number.
    Truncate(u32),
}

/// One thing that happens. `dt_ms` is the time that passes before it.
#[derive(Clone, Debug)]
pub enum Action {
    /// A save of a manual slot or the quicksave slot; `id` makes its save id.
    Save {
        device: usize,
        slot: SlotId,
        id: u128,
    },
    /// An autosave (the ring chooses the slot).
    Autosave {
        device: usize,
        id: u128,
    },
    Delete {
        device: usize,
        slot: SlotId,
    },
    /// A full sync round.
    Sync {
        device: usize,
    },
    /// The queued uploads that are due.
    UploadDue {
        device: usize,
    },
    /// "Use the other device's save" on a slot in conflict.
    ChooseOther {
        device: usize,
        slot: SlotId,
    },
    /// The player quits the game; the next action of the device starts it again.
    Quit {
        device: usize,
    },
    /// The game's process dies at its `after`-th filesystem call from now: by a crash (the
    /// page cache survives) or by a power loss (only what was flushed is sure to).
    Die {
        device: usize,
        after: u32,
        power: bool,
        pick: u64,
        /// What the game's start right after meets.
        restart: Restart,
    },
    /// A fault of the disk at its `after`-th call from now.
    DiskFault {
        device: usize,
        after: u32,
        fault: DiskFault,
    },
    /// A save file at rest is damaged.
    Rot {
        device: usize,
        file: u32,
        how: Rot,
    },
    /// Something that is not a regular file the game may use appears under a name the store
    /// or cloud sync reads or writes.
    OddFile {
        device: usize,
        name: OddName,
        odd: Odd,
    },
    /// The player runs a newer build of the game on this device's folder for one save of
    /// `slot`, then comes back to this build: the save is in a newer format this build cannot
    /// read (`unreadable`), or one it reads.
    NewerBuild {
        device: usize,
        slot: SlotId,
        id: u128,
        unreadable: bool,
    },
    /// A long offline session: `saves` saves of one slot in a row, a minute apart, no sync.
    Session {
        device: usize,
        slot: SlotId,
        saves: u8,
        id: u128,
    },
    /// The cloud sync state file is lost (deleted, or garbled): the device's id goes with it.
    LoseState {
        device: usize,
        garble: bool,
    },
    CloudFault(CloudFault),
    Hostile {
        kind: Hostile,
        pick: u64,
    },
    /// The device's clock jumps (back when negative).
    ClockJump {
        device: usize,
        by_ms: i64,
    },
}

/// An action and the time that passes before it.
#[derive(Clone, Debug)]
pub struct Step {
    pub dt_ms: i64,
    pub action: Action,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+{}ms {:?}", self.dt_ms, self.action)
    }
}

/// The steps of a run of `len` actions.
pub fn steps(seed: u64, config: &Config, len: usize) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let off = std::env::var("KEEPSAKE_SIM_OFF").unwrap_or_default();
    (0..len)
        .map(|_| {
            let dt_ms = [0, 5, 900, 20_000, 400_000][rng.below(5) as usize];
            let action = action(&mut rng, config);
            let action = match feature(&action) {
                Some(name) if off.split(',').any(|o| o == name) => Action::Sync { device: 0 },
                _ => action,
            };
            Step { dt_ms, action }
        })
        .collect()
}

/// The model feature an action belongs to, for `KEEPSAKE_SIM_OFF` (a search that looks past
/// a known finding while its fix is elsewhere): its actions become sync rounds.
fn feature(action: &Action) -> Option<&'static str> {
    match action {
        Action::CloudFault(CloudFault::Refuses { .. }) => Some("refuses"),
        Action::Hostile {
            kind: Hostile::Bomb,
            ..
        } => Some("bomb"),
        Action::Hostile {
            kind: Hostile::NewerFormat,
            ..
        }
        | Action::NewerBuild { .. } => Some("newer"),
        Action::Session { .. } => Some("session"),
        // Every trouble of the sync state file (lost, garbled, an odd entry in its place) is
        // one feature: `state`.
        Action::OddFile {
            name: OddName::State,
            ..
        } => Some("state"),
        Action::OddFile { .. } => Some("odd"),
        Action::LoseState { .. } => Some("state"),
        _ => None,
    }
}

/// One action, by weight: mostly saves and sync rounds, now and then a fault.
fn action(rng: &mut Rng, config: &Config) -> Action {
    let device = rng.below(config.devices as u64) as usize;
    let id = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
    let slot = slot(rng);
    let weights: [(u64, u8); 17] = [
        (22, 0),
        (8, 1),
        (4, 2),
        (20, 3),
        (4, 4),
        (4, 5),
        (4, 6),
        (6, 7),
        (5, 8),
        (3, 9),
        (3, 10),
        (5, 11),
        (4, 12),
        (2, 13),
        (2, 14),
        (1, 15),
        (1, 16),
    ];
    let total: u64 = weights.iter().map(|(w, _)| w).sum();
    let mut roll = rng.below(total);
    let kind = weights
        .iter()
        .find(|(weight, _)| {
            let hit = roll < *weight;
            roll = roll.saturating_sub(*weight);
            hit
        })
        .map_or(0, |(_, kind)| *kind);
    match kind {
        0 => Action::Save { device, slot, id },
        1 => Action::Autosave { device, id },
        2 => Action::Delete { device, slot },
        3 => Action::Sync { device },
        4 => Action::UploadDue { device },
        5 => Action::ChooseOther { device, slot },
        6 => Action::Quit { device },
        7 => Action::Die {
            device,
            after: 1 + rng.below(80) as u32,
            power: rng.below(2) == 0,
            pick: rng.next_u64(),
            restart: match rng.below(3) {
                0 => Restart::Clean,
                1 => Restart::Fault {
                    after: 1 + rng.below(12) as u32,
                    fault: disk_fault(rng),
                },
                _ => Restart::Dies {
                    after: 1 + rng.below(12) as u32,
                    power: rng.below(2) == 0,
                    pick: rng.next_u64(),
                },
            },
        },
        8 => Action::DiskFault {
            device,
            after: 1 + rng.below(40) as u32,
            fault: disk_fault(rng),
        },
        9 => Action::Rot {
            device,
            file: rng.next_u64() as u32,
            how: match rng.below(2) {
                0 => Rot::Flip(rng.next_u64() as u32),
                _ => Rot::Truncate(rng.next_u64() as u32),
            },
        },
        10 => Action::OddFile {
            device,
            name: odd_name(rng, slot),
            odd: [
                Odd::Fifo,
                Odd::Folder,
                Odd::Unreadable,
                Odd::ReadOnly,
                Odd::DeviceLink,
                Odd::DanglingLink,
            ][rng.below(6) as usize],
        },
        11 => Action::CloudFault(match rng.below(3) {
            0 => CloudFault::Down {
                calls: 1 + rng.below(6) as u8,
            },
            1 => CloudFault::Refuses {
                calls: 1 + rng.below(4) as u8,
            },
            _ => CloudFault::LostAnswer,
        }),
        12 => Action::Hostile {
            kind: [
                Hostile::Garbage,
                Hostile::Duplicate,
                Hostile::Huge,
                Hostile::BadKey,
                Hostile::Truncated,
                Hostile::Understated,
                Hostile::Bomb,
                Hostile::NewerFormat,
            ][rng.below(8) as usize],
            pick: rng.next_u64(),
        },
        13 => Action::ClockJump {
            device,
            by_ms: [
                -26 * HOUR,
                -6 * HOUR,
                -HOUR,
                -60_000,
                60_000,
                HOUR,
                6 * HOUR,
            ][rng.below(7) as usize],
        },
        14 => Action::NewerBuild {
            device,
            slot,
            id,
            unreadable: rng.below(3) != 0,
        },
        15 => Action::Session {
            device,
            slot,
            saves: 40 + rng.below(21) as u8,
            id,
        },
        _ => Action::LoseState {
            device,
            garble: rng.below(2) == 0,
        },
    }
}

const HOUR: i64 = 3_600_000;

fn disk_fault(rng: &mut Rng) -> DiskFault {
    match rng.below(3) {
        0 => DiskFault::IoError,
        1 => DiskFault::Full {
            calls: 1 + rng.below(20) as u32,
        },
        _ => DiskFault::SyncFails,
    }
}

/// A name for an odd entry: mostly save generations, then every other name the store and
/// cloud sync use.
fn odd_name(rng: &mut Rng, slot: SlotId) -> OddName {
    let any_slot = match rng.below(3) {
        0 => SlotId::Auto(rng.below(u64::from(AUTO_SLOTS)) as u16),
        _ => slot,
    };
    match rng.below(8) {
        0..=2 => OddName::Generation {
            slot: any_slot,
            generation: 1 + rng.below(8),
        },
        3 | 4 => OddName::Lock(any_slot),
        5 => OddName::Deleted(any_slot),
        6 => OddName::State,
        _ => OddName::Temp {
            slot: any_slot,
            n: rng.below(1_000_000) as u32,
        },
    }
}

/// A manual slot or the quicksave slot (autosaves choose their own).
fn slot(rng: &mut Rng) -> SlotId {
    match rng.below(u64::from(MANUAL_SLOTS) + 1) {
        0 => SlotId::Quick,
        index => SlotId::Manual(index as u16 - 1),
    }
}
