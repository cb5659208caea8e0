//! One simulated installation of the game: its disk, its clock, and the store and sync core
//! its process has open (none while it is not running).

use super::disk::SimDisk;
use super::remote::SimCloud;
use bevy_keepsake::cloud::{Remote, SyncCore};
use bevy_keepsake::format::{Clock, Limits, SealKey, Timestamp};
use bevy_keepsake::store::{ProfileName, SlotLayout, SlotStore, StoreConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A device's clock: the simulation's time, off by the device's own skew.
#[derive(Debug)]
pub struct SimClock {
    sim_ms: Arc<AtomicI64>,
    skew_ms: AtomicI64,
}

impl Clock for SimClock {
    fn now(&self) -> Timestamp {
        let ms = self.sim_ms.load(Ordering::Relaxed) + self.skew_ms.load(Ordering::Relaxed);
        Timestamp::from_unix_millis(ms)
    }
}

pub const ROOT: &str = "/home/player/.local/share/sim/saves";

/// The limits of the simulated game: small enough that an object larger than any save the
/// limits allow is cheap to make (about 16 MiB, made once per test run), large enough that a
/// file whose payload decompresses to many times its size fits them.
pub fn limits() -> Limits {
    Limits {
        max_payload_uncompressed: 16 << 20,
        max_meta: 64 << 10,
        max_thumbnail: 64 << 10,
    }
}

/// The store configuration every device of a run shares.
pub fn store_config(backups: u16, sealed: bool) -> StoreConfig {
    let mut config = StoreConfig::new(ROOT)
        .profile(ProfileName::new("player").unwrap())
        .layout(SlotLayout {
            manual: super::plan::MANUAL_SLOTS,
            auto: super::plan::AUTO_SLOTS,
        })
        .backups(backups);
    config.encode.limits = limits();
    if sealed {
        config = config.seal(SealKey::from_bytes([7; 32]));
    }
    config
}

/// A running game: the store and the sync core.
pub struct Running {
    pub store: Arc<SlotStore>,
    pub core: SyncCore,
}

pub struct Device {
    pub name: String,
    pub disk: SimDisk,
    clock: Arc<SimClock>,
    config: StoreConfig,
    cloud: SimCloud,
    pub running: Option<Running>,
}

impl Device {
    /// Device `index`, its clock reading the simulation's time from `sim_ms`.
    pub fn new(index: usize, config: StoreConfig, cloud: SimCloud, sim_ms: Arc<AtomicI64>) -> Self {
        let clock = Arc::new(SimClock {
            sim_ms,
            skew_ms: AtomicI64::new(0),
        });
        Device {
            name: format!("device-{index}"),
            disk: SimDisk::new(clock.clone()),
            config: config.clock(clock.clone()),
            clock,
            cloud,
            running: None,
        }
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The device's clock jumps by `by_ms` (back when negative).
    pub fn jump_clock(&self, by_ms: i64) {
        self.clock.skew_ms.fetch_add(by_ms, Ordering::Relaxed);
    }

    /// The running game, started if it is not (`None` when it cannot start now, e.g. the disk
    /// refuses the folder).
    pub fn start(&mut self) -> Option<&mut Running> {
        self.try_start().ok()
    }

    /// The running game, started if it is not; why it cannot start, if it cannot.
    pub fn try_start(&mut self) -> Result<&mut Running, String> {
        if self.running.is_none() {
            let fs = Arc::new(self.disk.clone());
            let store = SlotStore::open_with(self.config.clone(), fs).map_err(|e| e.to_string())?;
            let store = Arc::new(store);
            let remote = Arc::new(self.cloud.remote_for(&self.disk));
            let remote = Remote::paginated(remote.clone(), remote, "games", "sim", "player");
            let (core, _) = SyncCore::open(store.clone(), remote, self.name.clone());
            self.running = Some(Running { store, core });
        }
        Ok(self.running.as_mut().expect("started"))
    }

    /// A store over a copy of the disk as it is now (see [`SimDisk::fork`]): what the
    /// simulator's checks read, without starting the game or changing its disk.
    pub fn checker(&self) -> Result<SlotStore, String> {
        let fs = Arc::new(self.disk.fork());
        SlotStore::open_with(self.config.clone(), fs).map_err(|e| e.to_string())
    }

    /// A store over a copy of the disk whose `slot`'s lock name holds no odd entry any more:
    /// what the player has once they moved out what the store's refusal named.
    pub fn checker_for(&self, slot: bevy_keepsake::SlotId) -> Result<SlotStore, String> {
        let disk = self.disk.fork();
        let lock = bevy_keepsake::store::slot_stem(slot) + ".lock";
        disk.move_odd_out(&self.profile_dir().join(lock));
        SlotStore::open_with(self.config.clone(), Arc::new(disk)).map_err(|e| e.to_string())
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The game quits (or its process is gone).
    pub fn stop(&mut self) {
        self.running = None;
    }

    pub fn profile_dir(&self) -> std::path::PathBuf {
        self.config.profile_dir()
    }
}
