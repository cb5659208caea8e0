//! One simulated run: the devices, the cloud and the oracle, stepped through a list of actions,
//! with every invariant checked after every step and the convergence of the devices at the end.

use super::device::{self, Device, Running};
use super::oracle::Oracle;
use super::plan::{Action, Config, Hostile, Rot, Step};
use super::remote::SimCloud;
use crate::common::alloc::peak_allocation;
use crate::common::real_world;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{RemoteName, SlotSync};
use bevy_keepsake::format::{self, FOLLOWS_KEY, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot;
use bevy_keepsake::store::{SlotLayout, StoreError};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use uuid::Uuid;

/// The most one step may allocate at once: several times the largest file the simulated
/// game's limits allow (about 1.2 MiB), far below what a hostile input could make a careless
/// reader allocate.
pub const MEMORY_BOUND: usize = 32 << 20;

/// Where and why a run broke an invariant.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The step after which it was found; `None` for the convergence at the end.
    pub step: Option<usize>,
    pub message: String,
}

/// What a run did, for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub steps: usize,
    pub saves: usize,
    pub failed_saves: usize,
    pub deletes: usize,
    pub rounds: usize,
    pub arrivals: usize,
    pub choices: usize,
    pub crashes: usize,
    pub power_losses: usize,
    pub peak_bytes: usize,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        self.steps += other.steps;
        self.saves += other.saves;
        self.failed_saves += other.failed_saves;
        self.deletes += other.deletes;
        self.rounds += other.rounds;
        self.arrivals += other.arrivals;
        self.choices += other.choices;
        self.crashes += other.crashes;
        self.power_losses += other.power_losses;
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
    }
}

/// Runs `steps` under `config`; the first broken invariant stops the run.
pub fn run(config: Config, steps: &[Step]) -> Result<Stats, Failure> {
    let mut sim = Sim::new(config);
    for (index, step) in steps.iter().enumerate() {
        let outcome = catch_unwind(AssertUnwindSafe(|| peak_allocation(|| sim.step(step))));
        let failed = |message| Failure {
            step: Some(index),
            message,
        };
        match outcome {
            Err(panic) => return Err(failed(format!("panicked: {}", panic_text(&panic)))),
            Ok((Err(message), _)) => return Err(failed(message)),
            Ok((Ok(()), peak)) if peak > MEMORY_BOUND => {
                return Err(failed(format!("allocated {peak} bytes at once")));
            }
            Ok((Ok(()), peak)) => sim.stats.peak_bytes = sim.stats.peak_bytes.max(peak),
        }
        sim.stats.steps += 1;
        if std::env::var_os("KEEPSAKE_SIM_TRACE").is_some() {
            eprintln!("{index}: {step:?}");
            (0..sim.devices.len()).for_each(|device| eprintln!("{}", sim.trace(device)));
        }
    }
    let converged = catch_unwind(AssertUnwindSafe(|| sim.converge()));
    let at_end = |message| Failure {
        step: None,
        message,
    };
    match converged {
        Err(panic) => Err(at_end(format!("panicked: {}", panic_text(&panic)))),
        Ok(Err(message)) => Err(at_end(message)),
        Ok(Ok(())) => Ok(sim.stats),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else {
        "a panic".to_owned()
    }
}

/// A small world captured for real, so saves pass the cloud's checks of the blob.
fn world() -> &'static WorldState {
    static WORLD: OnceLock<WorldState> = OnceLock::new();
    WORLD.get_or_init(|| {
        let mut app = real_world::app();
        real_world::populate(app.world_mut(), 3);
        let captured = snapshot::capture(app.world_mut()).expect("capture");
        WorldState {
            tick: 0,
            ecs_blob: captured.blob,
            state_hash: captured.state_hash,
        }
    })
}

struct Sim {
    now_ms: i64,
    /// The simulation's time, which every device's clock reads (through its skew).
    clock_ms: Arc<AtomicI64>,
    devices: Vec<Device>,
    /// A device's pending death: whether it is a power loss, and the crash state's pick.
    deaths: Vec<Option<(bool, u64)>>,
    cloud: SimCloud,
    oracle: Oracle,
    runtime: tokio::runtime::Runtime,
    layout: SlotLayout,
    stats: Stats,
    ticks: u64,
}

impl Sim {
    fn new(config: Config) -> Self {
        let cloud = SimCloud::default();
        let store = device::store_config(config.backups, config.sealed);
        let layout = store.layout;
        let now_ms = 1_790_000_000_000;
        let clock_ms = Arc::new(AtomicI64::new(now_ms));
        let devices = (0..config.devices)
            .map(|index| Device::new(index, store.clone(), cloud.clone(), clock_ms.clone()))
            .collect();
        Sim {
            now_ms,
            clock_ms,
            devices,
            deaths: vec![None; config.devices],
            cloud,
            oracle: Oracle::default(),
            runtime: tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime"),
            layout,
            stats: Stats::default(),
            ticks: 0,
        }
    }

    /// Lets `ms` pass.
    fn pass(&mut self, ms: i64) {
        self.now_ms += ms;
        self.clock_ms.store(self.now_ms, Ordering::Relaxed);
        self.cloud.set_now(self.now_ms);
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        self.pass(step.dt_ms);
        match self.act(&step.action) {
            Some(device) => self.settle(device),
            None => Ok(()),
        }
    }

    /// Does one action; returns the device whose disk it may have changed.
    fn act(&mut self, action: &Action) -> Option<usize> {
        match *action {
            Action::Save { device, slot, id } => self.save(device, Some(slot), id),
            Action::Autosave { device, id } => self.save(device, None, id),
            Action::Delete { device, slot } => self.delete(device, slot),
            Action::Sync { device } => self.sync(device, true),
            Action::UploadDue { device } => self.sync(device, false),
            Action::ChooseOther { device, slot } => self.choose_other(device, slot),
            Action::Quit { device } => self.devices[device].stop(),
            Action::Die {
                device,
                after,
                power,
                pick,
            } => {
                self.devices[device].disk.die_after(after);
                self.deaths[device] = Some((power, pick));
            }
            Action::DiskFault {
                device,
                after,
                fault,
            } => self.devices[device].disk.fail_after(after, fault),
            Action::Rot { device, file, how } => self.rot(device, file, how),
            Action::OddFile {
                device,
                slot,
                generation,
            } => self.odd_file(device, slot, generation),
            Action::CloudFault(fault) => {
                self.cloud.arm(fault);
                return None;
            }
            Action::Hostile { kind, pick } => {
                self.hostile(kind, pick);
                return None;
            }
            Action::ClockJump { device, by_ms } => self.devices[device].jump_clock(by_ms),
        }
        Some(action_device(action))
    }

    fn save(&mut self, device: usize, slot: Option<SlotId>, id: u128) {
        self.ticks += 1;
        let tick = self.ticks;
        let now = self.devices[device].now();
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let name = dev.name.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let slot = match slot {
            Some(slot) => slot,
            None => match running.store.next_autosave_slot() {
                Ok(slot) => slot,
                Err(_) => return,
            },
        };
        let saw = disk.paused(|| held_ids(running, slot));
        let meta = running.core.stamp(SaveMeta {
            save_id: Uuid::from_u128(id),
            created_at: now,
            ..SaveMeta::new(slot).with_title(format!("{name} #{tick}"))
        });
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..world().clone()
        });
        self.oracle
            .attempt(device, meta.clone(), bundle.clone(), saw);
        match running.store.save(slot, meta, &bundle) {
            Ok(_) => {
                self.oracle.confirm_save(device, slot, Uuid::from_u128(id));
                let _ = running.core.note_save(slot, Uuid::from_u128(id));
                self.stats.saves += 1;
            }
            Err(_) => self.stats.failed_saves += 1,
        }
    }

    fn delete(&mut self, device: usize, slot: SlotId) {
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let held = disk.paused(|| held_ids(running, slot));
        match running.store.delete(slot) {
            Ok(_) => {
                self.oracle.confirm_delete(device, slot, held);
                self.stats.deletes += 1;
            }
            Err(_) => self.oracle.delete_interrupted(device, slot, held),
        }
    }

    /// A full round (`full`) or the uploads that are due. What arrived is told by the slots'
    /// saves before and after, not by the round's receipts: a process that dies in the middle
    /// of a round may have placed a save it never reported.
    fn sync(&mut self, device: usize, full: bool) {
        let layout = self.layout;
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let before = disk.paused(|| held_by_slot(running, layout));
        let round = if full {
            self.runtime.block_on(running.core.sync())
        } else {
            self.runtime.block_on(running.core.upload_due())
        };
        let after = disk.paused(|| held_by_slot(running, layout));
        self.stats.rounds += 1;
        // The receipts name the saves placed and pruned again within the round, too.
        let placed = round.arrived.iter().map(|r| (r.slot, r.meta.save_id));
        let appeared = after
            .iter()
            .flat_map(|(slot, ids)| ids.difference(&before[slot]).map(move |id| (*slot, *id)));
        let arrived: BTreeSet<(SlotId, Uuid)> = placed.chain(appeared).collect();
        for (slot, id) in arrived {
            self.oracle.arrived(device, slot, id);
            self.stats.arrivals += 1;
        }
    }

    fn choose_other(&mut self, device: usize, slot: SlotId) {
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let Ok(states) = running.core.slot_states() else {
            return;
        };
        let Some(SlotSync::Conflict(conflict)) = states.get(&slot) else {
            return;
        };
        let head_id = || disk.paused(|| running.store.load(slot).ok().map(|h| h.meta.save_id));
        let head = head_id();
        // Chosen is what heads the slot afterwards: a call that failed after the promotion
        // landed (the state file's write) still made the choice.
        let _ = self.runtime.block_on(running.core.use_hidden_save(slot));
        if head_id() == Some(conflict.hidden_save) {
            self.oracle
                .promoted(device, slot, conflict.hidden_save, head);
            self.stats.choices += 1;
        }
    }

    /// Puts something that is not a file under a save's name; a save file there is gone with
    /// it, as damage at rest.
    fn odd_file(&mut self, device: usize, slot: SlotId, generation: u64) {
        let dev = &self.devices[device];
        let path = dev
            .profile_dir()
            .join(format!("{}.g{generation:06}.ksav", stem(slot)));
        let bytes = dev.disk.paused(|| read_all(&dev.disk, &path));
        let options = Default::default();
        if let Ok(summary) = format::read_summary(&mut Cursor::new(&bytes), &options) {
            self.oracle.damage(device, summary.meta.save_id);
        }
        dev.disk.add_special(path);
    }

    /// Damages one of the device's save files at rest.
    fn rot(&mut self, device: usize, file: u32, how: Rot) {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let mut names: Vec<String> = dev.disk.tree().list(&dir);
        names.retain(|name| name.ends_with(".ksav"));
        if names.is_empty() {
            return;
        }
        names.sort();
        let path = dir.join(&names[file as usize % names.len()]);
        let bytes = dev.disk.paused(|| read_all(&dev.disk, &path));
        let id = format::read_summary(&mut Cursor::new(&bytes), &Default::default())
            .map(|summary| summary.meta.save_id);
        dev.disk.rot(&path, |bytes| match how {
            Rot::Flip(at) if !bytes.is_empty() => {
                let at = at as usize % (bytes.len() * 8);
                bytes[at / 8] ^= 1 << (at % 8);
            }
            Rot::Truncate(at) => bytes.truncate(at as usize % bytes.len().max(1)),
            Rot::Flip(_) => {}
        });
        if let Ok(id) = id {
            self.oracle.damage(device, id);
        }
    }

    /// Puts something into the cloud that no device of the game made.
    fn hostile(&mut self, kind: Hostile, pick: u64) {
        const FOLDER: &str = "games/sim/player";
        let uploaded: Vec<(String, Vec<u8>)> = self
            .cloud
            .objects()
            .into_iter()
            .filter(|(key, _)| key.starts_with(FOLDER))
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
        match kind {
            Hostile::Garbage => {
                let len = 64 + (pick % 4096) as usize;
                let bytes = (0..len).map(|i| (pick >> (i % 56)) as u8).collect();
                self.cloud.put_raw(key, bytes);
            }
            Hostile::Duplicate => {
                if let Some(bytes) = copy() {
                    self.cloud.put_raw(key, bytes);
                }
            }
            Hostile::Truncated => {
                if let Some(mut bytes) = copy() {
                    bytes.truncate(bytes.len() / 2);
                    self.cloud.put_raw(key, bytes);
                }
            }
            Hostile::Huge => {
                let len = device::limits().max_file_len() as usize + 1;
                self.cloud.put_raw(key, vec![0x4B; len]);
            }
            Hostile::BadKey => {
                let bad = ["../x.ksav", "a//b.ksav", "./quick-00.ksav", ".."];
                let bad = bad[pick as usize % bad.len()];
                self.cloud
                    .put_raw(format!("{FOLDER}/{bad}"), b"not a save".to_vec());
            }
        }
    }

    /// After a device's action: its crash, if it died, then every invariant on its slots.
    fn settle(&mut self, device: usize) -> Result<(), String> {
        let dev = &mut self.devices[device];
        if dev.disk.is_dead() {
            dev.stop();
            match self.deaths[device].take() {
                Some((true, pick)) => {
                    dev.disk.lose_power(pick);
                    self.stats.power_losses += 1;
                }
                _ => self.stats.crashes += 1,
            }
            dev.disk.heal();
            let disk = dev.disk.clone();
            if disk.paused(|| dev.start().is_none()) {
                return Err(format!("{} cannot start again after its crash", dev.name));
            }
            let left: Vec<String> = disk.tree().list(&dev.profile_dir());
            let temporary: Vec<&String> = left.iter().filter(|n| n.ends_with(".tmp")).collect();
            if !temporary.is_empty() {
                return Err(format!(
                    "temporary files left after a restart: {temporary:?}"
                ));
            }
        }
        self.check_device(device)
    }

    /// Every invariant on one device's slots, looked at with its disk's faults off.
    fn check_device(&mut self, device: usize) -> Result<(), String> {
        let layout = self.layout;
        let oracle = &self.oracle;
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let name = dev.name.clone();
        disk.paused(|| {
            let running = dev
                .start()
                .ok_or_else(|| format!("{name} cannot start on a healthy disk"))?;
            for slot in layout.slots() {
                check_slot(oracle, device, running, slot)
                    .map_err(|message| format!("{name}: {message}"))?;
            }
            Ok(())
        })
    }

    /// Faults stop, every game restarts, rounds run; then every device must reach every other
    /// device's newest save of each slot: as its head, as the hidden save of a recorded
    /// conflict that loads, or through a save of its own made after it.
    fn converge(&mut self) -> Result<(), String> {
        self.cloud.heal();
        for dev in &mut self.devices {
            dev.disk.heal();
            dev.stop();
        }
        self.deaths.iter_mut().for_each(|death| *death = None);
        for _ in 0..3 {
            for device in 0..self.devices.len() {
                self.pass(1_000);
                self.sync(device, true);
            }
        }
        for device in 0..self.devices.len() {
            self.check_device(device)?;
        }
        let views: Vec<View> = (0..self.devices.len()).map(|d| self.view(d)).collect();
        for (from, view) in views.iter().enumerate() {
            for (slot, head) in &view.heads {
                if self.oracle.is_damaged(from, head) {
                    continue;
                }
                for (to, other) in views.iter().enumerate().filter(|(to, _)| *to != from) {
                    if self.oracle.set_aside(to, *slot, head)
                        || self.oracle.saved_over_damage(to, *slot, head)
                    {
                        continue;
                    }
                    if let Err(why) = self.reaches(other, *slot, head) {
                        let (to, from) = (to.to_string(), from.to_string());
                        let held = self.describe(*slot);
                        return Err(format!(
                            "after the faults stopped, device-{to} does not reach device-{from}'s newest save {head} of {slot:?}: {why}\n{held}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The device's save files and the save each holds (`??`: unreadable), for
    /// `KEEPSAKE_SIM_TRACE`. Read with faults paused, without starting the game.
    fn trace(&self, device: usize) -> String {
        use bevy_keepsake::store::FileSystem;
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        dev.disk.paused(|| {
            let mut names = dev.disk.list_dir(&dir).unwrap_or_default();
            names.sort();
            let files = names.iter().map(|name| name.to_string_lossy());
            let saves = files.filter(|name| name.ends_with(".ksav")).map(|name| {
                let bytes = read_all(&dev.disk, &dir.join(&*name));
                let options = Default::default();
                let summary = format::read_summary(&mut Cursor::new(&bytes), &options);
                let id = summary.map(|s| s.meta.save_id.simple().to_string()[..8].to_owned());
                format!("{name}={}", id.unwrap_or_else(|_| "??".to_owned()))
            });
            format!("  {}: {}", dev.name, saves.collect::<Vec<_>>().join(" "))
        })
    }

    /// What every device holds in `slot`, for a failure's message: each save's id, maker,
    /// time and what it was made in view of (ids cut to 8 digits), and the conflicts.
    fn describe(&mut self, slot: SlotId) -> String {
        let short = |id: &Uuid| id.simple().to_string()[..8].to_owned();
        let mut lines = Vec::new();
        for device in 0..self.devices.len() {
            let name = self.devices[device].name.clone();
            let Some(running) = self.devices[device].start() else {
                continue;
            };
            let saves = running.store.saves_in(slot).unwrap_or_default();
            let conflicts: Vec<String> = running
                .core
                .conflicts(slot)
                .iter()
                .map(|c| short(&c.hidden_save))
                .collect();
            lines.push(format!("  {name}: conflicts {conflicts:?}"));
            for save in saves {
                let follows: Vec<String> = save
                    .meta
                    .follows()
                    .map(|ids| ids.map(|id| short(&id)).collect())
                    .unwrap_or_default();
                lines.push(format!(
                    "    g{} {} by {} at {} in view of {follows:?}",
                    save.generation,
                    short(&save.meta.save_id),
                    save.meta.device_name().unwrap_or("?"),
                    save.meta.created_at.unix_millis() - 1_790_000_000_000,
                ));
            }
        }
        lines.join("\n")
    }

    /// What a device shows: the save heading each slot, and the conflicts.
    fn view(&mut self, device: usize) -> View {
        let layout = self.layout;
        let Some(running) = self.devices[device].start() else {
            return View::default();
        };
        let heads = layout
            .slots()
            .filter_map(|slot| Some((slot, running.store.load(slot).ok()?.meta.save_id)))
            .collect();
        let conflicts = layout
            .slots()
            .map(|slot| {
                let hidden = running.core.conflicts(slot).into_iter();
                (slot, hidden.map(|conflict| conflict.hidden_save).collect())
            })
            .collect();
        let held = layout
            .slots()
            .map(|slot| (slot, held_ids(running, slot)))
            .collect();
        View {
            heads,
            conflicts,
            held,
        }
    }

    /// Whether a device shows `save` (or a save made after it, in view of it) as the head of
    /// `slot` or as a recorded conflict it holds.
    fn reaches(&self, view: &View, slot: SlotId, save: &Uuid) -> Result<(), String> {
        let at_or_after = |id: &Uuid| id == save || self.oracle.follows(id, save);
        let head = view.heads.get(&slot);
        if head.is_some_and(at_or_after) {
            return Ok(());
        }
        let holds = |id: &Uuid| view.held.get(&slot).is_some_and(|held| held.contains(id));
        let conflicts = view.conflicts.get(&slot).into_iter().flatten();
        if conflicts.filter(|id| at_or_after(id)).any(holds) {
            return Ok(());
        }
        let held = holds(save);
        let named = view.conflicts.get(&slot).is_some_and(|c| c.contains(save));
        match (named, held) {
            (true, true) => Ok(()),
            (true, false) => Err("its conflict names it, but it does not load".into()),
            (false, true) => Err(format!(
                "it holds it, but neither heads the slot with it nor shows it as a conflict (head {head:?})"
            )),
            (false, false) => Err(format!("it does not hold it (head {head:?})")),
        }
    }
}

/// What one device shows at the end of a run.
#[derive(Default)]
struct View {
    heads: BTreeMap<SlotId, Uuid>,
    /// Every recorded conflict's hidden save, by slot.
    conflicts: BTreeMap<SlotId, BTreeSet<Uuid>>,
    held: BTreeMap<SlotId, BTreeSet<Uuid>>,
}

/// The device an action of a device is about.
fn action_device(action: &Action) -> usize {
    match *action {
        Action::Save { device, .. }
        | Action::Autosave { device, .. }
        | Action::Delete { device, .. }
        | Action::Sync { device }
        | Action::UploadDue { device }
        | Action::ChooseOther { device, .. }
        | Action::Quit { device }
        | Action::Die { device, .. }
        | Action::DiskFault { device, .. }
        | Action::Rot { device, .. }
        | Action::OddFile { device, .. }
        | Action::ClockJump { device, .. } => device,
        Action::CloudFault(_) | Action::Hostile { .. } => 0,
    }
}

/// The save ids every slot holds.
fn held_by_slot(running: &Running, layout: SlotLayout) -> BTreeMap<SlotId, BTreeSet<Uuid>> {
    let slots = layout.slots();
    slots.map(|slot| (slot, held_ids(running, slot))).collect()
}

/// The save ids `slot` holds, as listed (readable generations).
fn held_ids(running: &Running, slot: SlotId) -> BTreeSet<Uuid> {
    let saves = running.store.saves_in(slot).unwrap_or_default();
    saves.iter().map(|save| save.meta.save_id).collect()
}

fn stem(slot: SlotId) -> String {
    match slot {
        SlotId::Manual(index) => format!("manual-{index:02}"),
        SlotId::Auto(index) => format!("auto-{index:02}"),
        SlotId::Quick => "quick-00".to_owned(),
    }
}

fn read_all(disk: &super::disk::SimDisk, path: &std::path::Path) -> Vec<u8> {
    use bevy_keepsake::store::FileSystem;
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(mut file) = disk.open_read(path) {
        let _ = file.read_to_end(&mut bytes);
    }
    bytes
}

/// Whether a save read back is the one made: the same payload and metadata, but for what the
/// store adds to the metadata itself (the saves it was made in view of).
fn same_save(
    made: &SaveMeta,
    bundle: &SaveBundle,
    read: &SaveMeta,
    read_bundle: &SaveBundle,
) -> bool {
    let mut read = read.clone();
    read.extras.remove(FOLLOWS_KEY);
    let mut made = made.clone();
    made.extras.remove(FOLLOWS_KEY);
    made == read && bundle == read_bundle
}

/// The invariants on one slot: what loads is a save some device made, byte for byte, and one
/// that may head the slot; every confirmed save the slot must hold is there and reads exactly.
fn check_slot(
    oracle: &Oracle,
    device: usize,
    running: &Running,
    slot: SlotId,
) -> Result<(), String> {
    match running.store.load(slot) {
        Ok(loaded) => {
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
        }
        Err(StoreError::EmptySlot(_) | StoreError::AllGenerationsDamaged { .. }) => {}
        Err(error) => return Err(format!("{slot:?} does not load on a healthy disk: {error}")),
    }
    let must = oracle.must_hold(device, slot);
    if must.is_empty() {
        return Ok(());
    }
    let saves = running.store.saves_in(slot).map_err(|e| e.to_string())?;
    for id in must {
        let holds = saves
            .iter()
            .filter(|save| save.meta.save_id == id)
            .any(|save| {
                let options = running.store.config().decode_options();
                running
                    .store
                    .read_generation_bytes(slot, save.generation)
                    .ok()
                    .and_then(|bytes| format::decode(&bytes, &options).ok())
                    .zip(oracle.known(&id))
                    .is_some_and(|(decoded, known)| {
                        same_save(&known.meta, &known.bundle, &decoded.meta, &decoded.bundle)
                    })
            });
        if !holds {
            return Err(format!(
                "the confirmed save {id} of {slot:?} is lost (the slot holds {:?})",
                saves
                    .iter()
                    .map(|s| (s.generation, s.meta.save_id))
                    .collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}
