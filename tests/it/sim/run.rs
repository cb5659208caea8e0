//! One simulated run: the devices, the cloud and the oracle, stepped through a list of actions,
//! with every invariant checked after every step and the convergence of the devices at the end.

use super::check::{self, NewerFile, Reader};
use super::device::{Device, Running};
use super::oracle::Oracle;
use super::plan::{Action, Config, Restart, Step};
use super::remote::{SECRETS, SimCloud};
use crate::common::alloc::peak_allocation;
use crate::common::real_world;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{SlotSync, SyncRound};
use bevy_keepsake::format::{SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot;
use bevy_keepsake::store::{SlotLayout, SlotStore, is_temp_file, slot_stem};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use uuid::Uuid;

/// What one step may allocate at once, besides what the files it reads justify: a reader of a
/// file of F bytes may allocate 128 × F and 5 MiB (the format's budget), and the simulator's
/// own bookkeeping of a step (the world it saves, the recording filesystem's copies) stays
/// within 1 MiB more.
pub const MEMORY_SLACK: usize = 6 << 20;

/// How much memory a step that read files of at most `largest` bytes may hold at once.
pub fn memory_bound(largest: u64) -> usize {
    MEMORY_SLACK + 128 * largest as usize
}

/// Where and why a run broke an invariant.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The step after which it was found; `None` for the convergence at the end.
    pub step: Option<usize>,
    pub message: String,
}

/// What a run did, for the report and for the checks that the faults fired.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub steps: usize,
    pub saves: usize,
    pub failed_saves: usize,
    pub deletes: usize,
    pub failed_deletes: usize,
    pub rounds: usize,
    pub arrivals: usize,
    pub choices: usize,
    pub crashes: usize,
    pub power_losses: usize,
    /// Starts after a crash that met a fault or died again.
    pub hard_restarts: usize,
    pub disk_faults: usize,
    pub cloud_faults: usize,
    /// Remote files a device refused (hostile objects met).
    pub refused: usize,
    pub odd_entries: usize,
    pub newer_builds: usize,
    pub long_sessions: usize,
    pub lost_states: usize,
    /// Steps after which a slot of the acting device held one save in two generations (a
    /// promotion or an import cut short leaves the copy it was moving).
    pub twin_copies: usize,
    /// Deletes begun over a slot holding such a second copy.
    pub deletes_over_twins: usize,
    pub peak_bytes: usize,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        let fields = [
            (&mut self.steps, other.steps),
            (&mut self.saves, other.saves),
            (&mut self.failed_saves, other.failed_saves),
            (&mut self.deletes, other.deletes),
            (&mut self.failed_deletes, other.failed_deletes),
            (&mut self.rounds, other.rounds),
            (&mut self.arrivals, other.arrivals),
            (&mut self.choices, other.choices),
            (&mut self.crashes, other.crashes),
            (&mut self.power_losses, other.power_losses),
            (&mut self.hard_restarts, other.hard_restarts),
            (&mut self.disk_faults, other.disk_faults),
            (&mut self.cloud_faults, other.cloud_faults),
            (&mut self.refused, other.refused),
            (&mut self.odd_entries, other.odd_entries),
            (&mut self.newer_builds, other.newer_builds),
            (&mut self.long_sessions, other.long_sessions),
            (&mut self.lost_states, other.lost_states),
            (&mut self.twin_copies, other.twin_copies),
            (&mut self.deletes_over_twins, other.deletes_over_twins),
        ];
        for (total, more) in fields {
            *total += more;
        }
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
    }
}

/// Runs `steps` under `config`; the first broken invariant stops the run.
pub fn run(config: Config, steps: &[Step]) -> Result<Stats, Failure> {
    let mut sim = Sim::new(config);
    for (index, step) in steps.iter().enumerate() {
        let outcome = catch_unwind(AssertUnwindSafe(|| sim.step(step)));
        let failed = |message| Failure {
            step: Some(index),
            message,
        };
        match outcome {
            Err(panic) => return Err(failed(format!("panicked: {}", panic_text(&panic)))),
            Ok(Err(message)) => return Err(failed(message)),
            Ok(Ok(())) => {}
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
        Ok(Ok(())) => Ok(sim.finish_stats()),
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
pub fn world() -> &'static WorldState {
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

/// What a death armed on a device does: a power loss or not, the crash state's pick, and what
/// the start right after meets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Death {
    pub power: bool,
    pub pick: u64,
    pub restart: Restart,
}

/// A delete that failed: the device, the slot, what the slot held before and the save that
/// headed it.
pub(super) struct InterruptedDelete {
    device: usize,
    slot: SlotId,
    held: BTreeSet<Uuid>,
    head: Option<Uuid>,
}

pub(super) struct Sim {
    pub now_ms: i64,
    /// The simulation's time, which every device's clock reads (through its skew).
    pub clock_ms: Arc<AtomicI64>,
    pub devices: Vec<Device>,
    /// A device's pending death.
    pub deaths: Vec<Option<Death>>,
    pub cloud: SimCloud,
    pub oracle: Oracle,
    pub runtime: tokio::runtime::Runtime,
    pub layout: SlotLayout,
    pub stats: Stats,
    pub ticks: u64,
    pub config: Config,
    /// A delete that failed, resolved once its crash (if any) was handled.
    pub interrupted_delete: Option<InterruptedDelete>,
    /// Failed saves whose file was not there when they failed: if it appears later, what the
    /// store wrote in it is learned.
    pub unread_failed_saves: Vec<(usize, SlotId, Uuid)>,
    /// Devices whose last full sync round failed: an import it made may have been placed
    /// and removed again (its folder flush failed), a removal a power loss can undo.
    pub rounds_cut: BTreeSet<usize>,
    /// Files of a newer build this build must leave alone.
    pub newer: Vec<NewerFile>,
    /// Slots of a device a newer build saved in, until the player deletes them: this build
    /// may refuse to load or change them ("update the game"), whatever became of the file.
    pub frozen: std::collections::HashSet<(usize, SlotId)>,
    /// The save each file the disk destroyed held, by the file's path: a delete removes the
    /// file, and with it that save, though no listing reads it any more.
    pub destroyed_files: HashMap<(usize, PathBuf), Uuid>,
}

impl Sim {
    pub fn new(config: Config) -> Self {
        let cloud = SimCloud::default();
        let store = super::device::store_config(config.backups, config.sealed);
        let layout = store.layout;
        let now_ms = 1_790_000_000_000;
        let clock_ms = Arc::new(AtomicI64::new(now_ms));
        let devices = (0..config.devices)
            .map(|index| Device::new(index, store.clone(), cloud.clone(), clock_ms.clone()))
            .collect();
        // Made outside any step: the hostile objects are the cloud's, not a device's memory.
        super::rest::hostile_objects(config.sealed);
        world();
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
            config,
            interrupted_delete: None,
            unread_failed_saves: Vec::new(),
            rounds_cut: BTreeSet::new(),
            newer: Vec::new(),
            frozen: Default::default(),
            destroyed_files: HashMap::new(),
        }
    }

    fn finish_stats(&self) -> Stats {
        let mut stats = self.stats;
        stats.disk_faults = self.devices.iter().map(|d| d.disk.counts().faults).sum();
        stats.cloud_faults = self.cloud.counts().faults;
        stats
    }

    /// Lets `ms` pass.
    pub fn pass(&mut self, ms: i64) {
        self.now_ms += ms;
        self.clock_ms.store(self.now_ms, Ordering::Relaxed);
        self.cloud.set_now(self.now_ms);
    }

    /// One step: the action and the restart after a crash, each within the memory bound,
    /// then every invariant on the device it was about.
    pub fn step(&mut self, step: &Step) -> Result<(), String> {
        self.pass(step.dt_ms);
        self.take_largest_reads();
        let (device, peak) = peak_allocation(|| self.act(&step.action));
        self.within_bound(peak)?;
        let Some(device) = device else {
            return Ok(());
        };
        self.recover(device)?;
        self.learn_failed_saves(device);
        self.resolve_delete(device);
        self.count_twins(device);
        self.check_device(device)
    }

    /// Counts a step that left one save in two generations of a slot on `device`.
    fn count_twins(&mut self, device: usize) {
        let Ok(store) = self.devices[device].checker() else {
            return;
        };
        if self.layout.slots().any(|slot| has_twin(&store, slot)) {
            self.stats.twin_copies += 1;
        }
    }

    fn take_largest_reads(&self) -> u64 {
        let disks = self.devices.iter().map(|d| d.disk.take_largest_read());
        disks
            .chain([self.cloud.take_largest_read()])
            .max()
            .unwrap_or(0)
    }

    /// Fails when `peak` bytes at once is more than the files read since the last look justify.
    fn within_bound(&mut self, peak: usize) -> Result<(), String> {
        let largest = self.take_largest_reads();
        if peak > memory_bound(largest) {
            return Err(format!(
                "allocated {peak} bytes at once, reading files of at most {largest} bytes \
                 (bound {})",
                memory_bound(largest)
            ));
        }
        self.stats.peak_bytes = self.stats.peak_bytes.max(peak);
        Ok(())
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
                restart,
            } => {
                self.devices[device].disk.die_after(after);
                self.deaths[device] = Some(Death {
                    power,
                    pick,
                    restart,
                });
            }
            Action::DiskFault {
                device,
                after,
                fault,
            } => self.devices[device].disk.fail_after(after, fault),
            Action::Rot { device, file, how } => self.rot(device, file, how),
            Action::OddFile { device, name, odd } => self.odd_file(device, name, odd),
            Action::NewerBuild {
                device,
                slot,
                id,
                unreadable,
            } => self.newer_build(device, slot, id, unreadable),
            Action::Session {
                device,
                slot,
                saves,
                id,
            } => self.session(device, slot, saves, id),
            Action::LoseState { device, garble } => self.lose_state(device, garble),
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

    /// `saves` saves of one slot a minute apart, with no sync between.
    fn session(&mut self, device: usize, slot: SlotId, saves: u8, id: u128) {
        self.stats.long_sessions += 1;
        for i in 0..u128::from(saves) {
            self.pass(60_000);
            self.save(device, Some(slot), id.wrapping_add(i));
            if self.devices[device].disk.is_dead() {
                return;
            }
        }
    }

    pub fn save(&mut self, device: usize, slot: Option<SlotId>, id: u128) {
        self.ticks += 1;
        let tick = self.ticks;
        let now = self.devices[device].now();
        let dev = &mut self.devices[device];
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
        let save_id = Uuid::from_u128(id);
        let meta = running.core.stamp(SaveMeta {
            save_id,
            created_at: now,
            ..SaveMeta::new(slot).with_title(format!("{name} #{tick}"))
        });
        let bundle = SaveBundle::new(WorldState {
            tick,
            ..world().clone()
        });
        self.oracle.attempt(device, meta.clone(), bundle.clone());
        match running.store.save(slot, meta, &bundle) {
            Ok(receipt) => {
                self.oracle.written(receipt.meta);
                self.oracle.confirm_save(device, slot, save_id);
                let _ = running.core.note_save(slot, save_id);
                self.stats.saves += 1;
            }
            Err(_) => {
                // The file may be in place all the same (the failure came after it): what
                // the store wrote in it is what other devices will read. A file not there now
                // may come back later (a power loss undoes the removal of a save that failed
                // after its rename): it is looked for again once the device restarts.
                if !self.learn_written(device, slot, save_id) {
                    self.unread_failed_saves.push((device, slot, save_id));
                }
                self.stats.failed_saves += 1;
            }
        }
    }

    /// Learns what the store wrote for a save that failed, if its file is there; returns
    /// whether it was.
    fn learn_written(&mut self, device: usize, slot: SlotId, save_id: Uuid) -> bool {
        let dev = &self.devices[device];
        let written = dev.disk.paused(|| {
            let store = dev.checker().ok()?;
            let saves = store.saves_in(slot).ok()?;
            saves.into_iter().find(|s| s.meta.save_id == save_id)
        });
        let found = written.is_some();
        if let Some(written) = written {
            self.oracle.written_follows(&written.meta);
        }
        found
    }

    /// The failed saves of `device` whose file was not there when they failed, looked for
    /// again after a restart of the device and at the end of a run (see `save`).
    pub fn learn_failed_saves(&mut self, device: usize) {
        let pending = std::mem::take(&mut self.unread_failed_saves);
        for (at, slot, save_id) in pending {
            if at != device || !self.learn_written(device, slot, save_id) {
                self.unread_failed_saves.push((at, slot, save_id));
            }
        }
    }

    fn delete(&mut self, device: usize, slot: SlotId) {
        let destroyed = self.destroyed_in(device, slot);
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let mut held = disk.paused(|| held_ids(&running.store, slot));
        held.extend(destroyed);
        let head = disk.paused(|| running.store.load(slot).ok().map(|l| l.meta.save_id));
        if disk.paused(|| has_twin(&running.store, slot)) {
            self.stats.deletes_over_twins += 1;
        }
        match running.store.delete(slot) {
            Ok(_) => {
                self.oracle.confirm_delete(device, slot, held);
                self.newer.retain(|f| (f.device, f.slot) != (device, slot));
                self.frozen.remove(&(device, slot));
                self.stats.deletes += 1;
            }
            Err(_) => {
                self.interrupted_delete = Some(InterruptedDelete {
                    device,
                    slot,
                    held,
                    head,
                });
                self.stats.failed_deletes += 1;
            }
        }
    }

    /// A delete, then what a step does after it (its crash, if any, and what it removed).
    pub fn delete_then_settle(&mut self, device: usize, slot: SlotId) {
        self.delete(device, slot);
        let _ = self.recover(device);
        self.resolve_delete(device);
    }

    /// A failed delete, once its crash (if any) was handled: what it removed is set aside.
    fn resolve_delete(&mut self, device: usize) {
        let Some(InterruptedDelete {
            device: at,
            slot,
            held,
            head,
        }) = self.interrupted_delete.take()
        else {
            return;
        };
        debug_assert_eq!(at, device);
        let dev = &self.devices[device];
        let store = dev.checker();
        let left = store.as_ref().map(|store| held_ids(store, slot));
        let left = left.unwrap_or_default();
        let emptied = store.is_ok_and(|store| store.generations(slot).is_ok_and(|g| g.is_empty()));
        // Emptied only as the game sees the folder: the removals were never flushed (the
        // delete failed at its flush), and a power loss may bring every file back (a newer
        // build's too). Which way it goes, the disk decides later; the delete the player was
        // told failed binds neither (simulator seeds 591600, 592451, 616747).
        let stem = format!("{}.g", slot_stem(slot));
        let durable = dev.disk.durable_tree().list(&dev.profile_dir());
        if emptied && durable.iter().any(|name| name.starts_with(&stem)) {
            self.oracle.delete_undecided(device, slot, &held);
        } else {
            if emptied {
                self.frozen.remove(&(device, slot));
            }
            (self.oracle).delete_interrupted(device, slot, (held, head), (&left, emptied));
        }
        // A newer build's file the delete removed (as the game sees the folder) is the
        // player's doing, however the disk keeps it.
        let tree = dev.disk.tree();
        let present = |path: &std::path::Path| {
            let dir = path.parent().unwrap_or(path);
            tree.list(dir).contains(&file_name(path))
        };
        self.newer
            .retain(|f| f.device != device || present(&f.path));
    }

    /// A full round (`full`) or the uploads that are due. What arrived is told by the slots'
    /// saves before and after, not by the round's receipts: a process that dies in the middle
    /// of a round may have placed a save it never reported.
    pub fn sync(&mut self, device: usize, full: bool) {
        let layout = self.layout;
        let dev = &mut self.devices[device];
        let disk = dev.disk.clone();
        let Some(running) = dev.start() else {
            return;
        };
        let before = disk.paused(|| held_by_slot(&running.store, layout));
        let round = if full {
            self.runtime.block_on(running.core.sync())
        } else {
            self.runtime.block_on(running.core.upload_due())
        };
        let after = disk.paused(|| held_by_slot(&running.store, layout));
        self.stats.rounds += 1;
        if full && round.error.is_some() {
            self.rounds_cut.insert(device);
        } else if full {
            self.rounds_cut.remove(&device);
        }
        self.stats.refused += round.refused.len();
        self.secrets_kept(&round);
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

    /// Panics (a broken invariant of its own) when a round's report shows a credential.
    fn secrets_kept(&self, round: &SyncRound) {
        let shown = format!("{round:?} {:?}", round.error);
        no_secret(&shown, "a sync round's report");
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
        // The save the store lists first: the one a choice passes over, loaded or not.
        let listed = disk.paused(|| {
            running
                .store
                .saves_in(slot)
                .ok()?
                .first()
                .map(|s| s.meta.save_id)
        });
        // Chosen is what heads the slot afterwards: a call that failed after the promotion
        // landed (the state file's write) still made the choice.
        let chosen = self.runtime.block_on(running.core.use_hidden_save(slot));
        if let Err(error) = &chosen {
            no_secret(&format!("{error} {error:?}"), "a choice's error");
        }
        if head_id() == Some(conflict.hidden_save) {
            self.oracle
                .promoted(device, slot, conflict.hidden_save, head);
            if let Some(listed) = listed.filter(|listed| Some(*listed) != head) {
                self.oracle
                    .passed_over_destroyed_head(device, slot, listed, conflict.hidden_save);
            }
            self.stats.choices += 1;
        }
    }

    /// After a device's action: if its process died, the crash (and the power loss), then the
    /// game's start right after, with the faults the plan arms for it; a start that fails is
    /// followed by the player's next try on a healthy disk, which must work and leave no
    /// temporary file.
    fn recover(&mut self, device: usize) -> Result<(), String> {
        let mut restarts = 0;
        while self.devices[device].disk.is_dead() {
            let death = self.deaths[device].take().unwrap_or(Death {
                power: false,
                pick: 0,
                restart: Restart::Clean,
            });
            let dev = &mut self.devices[device];
            dev.stop();
            if death.power {
                self.lose_power(device, death.pick);
            } else {
                self.stats.crashes += 1;
            }
            let dev = &mut self.devices[device];
            dev.disk.heal();
            restarts += 1;
            let restart = if restarts > 2 {
                Restart::Clean
            } else {
                death.restart
            };
            self.restart(device, restart)?;
        }
        Ok(())
    }

    /// A power loss on `device`. After a sync round that failed there, a save it placed and
    /// removed again may be back (the power loss undid the removal): it counts as placed by
    /// that round, now (see [`Oracle::import_came_back`]).
    fn lose_power(&mut self, device: usize, pick: u64) {
        let layout = self.layout;
        let held = |dev: &Device| dev.checker().ok().map(|s| held_by_slot(&s, layout));
        let dev = &self.devices[device];
        let before = self
            .rounds_cut
            .contains(&device)
            .then(|| held(dev))
            .flatten();
        dev.disk.lose_power(pick);
        self.stats.power_losses += 1;
        let (Some(before), Some(after)) = (before, held(dev)) else {
            return;
        };
        let none = BTreeSet::new();
        for (slot, ids) in &after {
            for id in ids.difference(before.get(slot).unwrap_or(&none)) {
                self.oracle.import_came_back(device, *slot, *id);
            }
        }
    }

    /// The start right after a crash, meeting `restart`.
    fn restart(&mut self, device: usize, restart: Restart) -> Result<(), String> {
        let dev = &mut self.devices[device];
        match restart {
            Restart::Clean => {}
            Restart::Fault { after, fault } => dev.disk.fail_after(after, fault),
            Restart::Dies { after, power, pick } => {
                dev.disk.die_after(after);
                self.deaths[device] = Some(Death {
                    power,
                    pick,
                    restart: Restart::Clean,
                });
            }
        }
        let faults = dev.disk.counts().faults;
        self.take_largest_reads();
        let dev = &mut self.devices[device];
        let (started, peak) = peak_allocation(|| dev.try_start().map(|_| ()));
        self.within_bound(peak)?;
        let dev = &mut self.devices[device];
        if dev.disk.is_dead() {
            // Died again: the loop in `recover` handles this crash too.
            self.stats.hard_restarts += 1;
            return Ok(());
        }
        let met_fault = dev.disk.counts().faults != faults;
        self.stats.hard_restarts += usize::from(met_fault);
        if started.is_err() || met_fault {
            // The player starts the game again on a disk that works now.
            dev.stop();
            dev.disk.heal();
            let name = dev.name.clone();
            dev.try_start()
                .map_err(|error| format!("{name} cannot start again after its crash: {error}"))?;
        }
        self.no_temporary_file(device)
    }

    fn no_temporary_file(&self, device: usize) -> Result<(), String> {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let left: Vec<String> = dev.disk.names(&dir);
        let temporary: Vec<&String> = left
            .iter()
            .filter(|name| is_temp_file(name) && dev.disk.odd_at(&dir.join(name)).is_none())
            .collect();
        if temporary.is_empty() {
            return Ok(());
        }
        Err(format!(
            "temporary files left after a restart: {temporary:?}"
        ))
    }

    /// Every invariant on one device's slots, read on a copy of its disk.
    pub fn check_device(&mut self, device: usize) -> Result<(), String> {
        let dev = &self.devices[device];
        let name = dev.name.clone();
        let fork = |slot| dev.checker_for(slot);
        let store = dev.checker();
        let store = store.map_err(|e| format!("{name}: no store opens on its disk: {e}"))?;
        if self.oracle.has_damage(device) {
            let intact = check::intact_ids(&store);
            self.oracle.holds_intact(device, &intact);
        }
        let reader = Reader { store, fork: &fork };
        for slot in self.layout.slots() {
            let frozen = self.frozen.contains(&(device, slot));
            check::check_slot(&self.oracle, device, &reader, slot, &self.newer, frozen)
                .map_err(|message| format!("{name}: {message}"))?;
        }
        self.newer_files_kept(device)
            .map_err(|message| format!("{name}: {message}"))
    }

    /// Every file of a newer build is still there, byte for byte.
    pub(super) fn newer_files_kept(&self, device: usize) -> Result<(), String> {
        let dev = &self.devices[device];
        let tree = dev.disk.tree();
        for file in self.newer.iter().filter(|f| f.device == device) {
            let bytes = dev
                .disk
                .paused(|| super::rest::read_all(&dev.disk, &file.path));
            if bytes != file.bytes {
                let held = tree.list(&dev.profile_dir());
                return Err(format!(
                    "a newer build's save {} ({}) was removed or changed by this build (the \
                     folder holds {held:?})",
                    file.id,
                    file.path.display()
                ));
            }
        }
        Ok(())
    }

    /// The device's save files and the save each holds (`??`: unreadable), for
    /// `KEEPSAKE_SIM_TRACE`. Read on a copy of the disk.
    pub fn trace(&self, device: usize) -> String {
        let dev = &self.devices[device];
        let Ok(store) = dev.checker() else {
            return format!("  {}: no store opens", dev.name);
        };
        let saves = store.saves().unwrap_or_default();
        let listed: Vec<String> = saves
            .iter()
            .map(|s| {
                let id = s.meta.save_id.simple().to_string()[..8].to_owned();
                format!("{:?}.g{}={id}", s.slot, s.generation)
            })
            .collect();
        let names = dev.disk.names(&dev.profile_dir());
        format!("  {}: {} (files {names:?})", dev.name, listed.join(" "))
    }

    pub fn config(&self) -> Config {
        self.config
    }
}

/// Panics when `text` holds a credential the simulated client signs with.
pub fn no_secret(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{what} shows a credential ({secret}): {text}"
        );
    }
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
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
        | Action::NewerBuild { device, .. }
        | Action::Session { device, .. }
        | Action::LoseState { device, .. }
        | Action::ClockJump { device, .. } => device,
        Action::CloudFault(_) | Action::Hostile { .. } => 0,
    }
}

/// The save ids every slot holds.
pub fn held_by_slot(store: &SlotStore, layout: SlotLayout) -> BTreeMap<SlotId, BTreeSet<Uuid>> {
    let slots = layout.slots();
    slots.map(|slot| (slot, held_ids(store, slot))).collect()
}

/// The save ids `slot` holds, as listed (readable generations).
pub fn held_ids(store: &SlotStore, slot: SlotId) -> BTreeSet<Uuid> {
    let saves = store.saves_in(slot).unwrap_or_default();
    saves.iter().map(|save| save.meta.save_id).collect()
}

/// Whether `slot` holds one save in two generations.
pub fn has_twin(store: &SlotStore, slot: SlotId) -> bool {
    let saves = store.saves_in(slot).unwrap_or_default();
    saves.len() > held_ids(store, slot).len()
}

/// What the running game of a device is, for the convergence.
pub fn running(dev: &mut Device) -> Result<&mut Running, String> {
    dev.try_start()
}
