//! What a simulated run does: its configuration and the players' actions, all drawn from one
//! seed, and each action carrying every choice it needs, so a run can be replayed and cut down
//! action by action without the seed.

use super::disk::DiskFault;
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
    /// Something that is not a regular file appears under a save's name.
    OddFile {
        device: usize,
        slot: SlotId,
        generation: u64,
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
    (0..len)
        .map(|_| Step {
            dt_ms: [0, 5, 900, 20_000, 400_000][rng.below(5) as usize],
            action: action(&mut rng, config),
        })
        .collect()
}

/// One action, by weight: mostly saves and sync rounds, now and then a fault.
fn action(rng: &mut Rng, config: &Config) -> Action {
    let device = rng.below(config.devices as u64) as usize;
    let id = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
    let slot = slot(rng);
    let weights: [(u64, u8); 14] = [
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
        (1, 10),
        (4, 11),
        (3, 12),
        (2, 13),
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
        },
        8 => Action::DiskFault {
            device,
            after: 1 + rng.below(40) as u32,
            fault: match rng.below(3) {
                0 => DiskFault::IoError,
                1 => DiskFault::Full {
                    calls: 1 + rng.below(20) as u32,
                },
                _ => DiskFault::SyncFails,
            },
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
            slot,
            generation: 1 + rng.below(6),
        },
        11 => Action::CloudFault(match rng.below(2) {
            0 => CloudFault::Down {
                calls: 1 + rng.below(6) as u8,
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
            ][rng.below(5) as usize],
            pick: rng.next_u64(),
        },
        _ => Action::ClockJump {
            device,
            by_ms: [-3_600_000, -60_000, 60_000, 3_600_000][rng.below(4) as usize],
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
