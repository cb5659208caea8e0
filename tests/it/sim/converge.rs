//! The end of a run: faults stop, every game starts again and sync rounds run; then every
//! device must reach every other device's newest save of each slot.

use super::run::{Sim, held_ids, running};
use bevy_keepsake::SlotId;
use bevy_keepsake::store::StoreError;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// What one device shows at the end of a run.
#[derive(Default)]
pub struct View {
    heads: BTreeMap<SlotId, Uuid>,
    /// Every recorded conflict's hidden save, by slot.
    conflicts: BTreeMap<SlotId, BTreeSet<Uuid>>,
    held: BTreeMap<SlotId, BTreeSet<Uuid>>,
    /// Slots a newer build's save holds: this build changes nothing in them ("update the
    /// game").
    frozen: BTreeSet<SlotId>,
}

impl Sim {
    /// Faults stop, every game restarts, rounds run; then every device must reach every other
    /// device's newest save of each slot: as its head, as the hidden save of a recorded
    /// conflict that loads (and that does not follow the head: a save made after the head, in
    /// view of it, heads), or through a save of its own made after it.
    pub fn converge(&mut self) -> Result<(), String> {
        self.cloud.heal();
        for dev in &mut self.devices {
            dev.disk.heal();
            dev.stop();
        }
        self.deaths.iter_mut().for_each(|death| *death = None);
        for dev in &mut self.devices {
            let name = dev.name.clone();
            running(dev).map_err(|e| format!("{name} cannot start on a healthy disk: {e}"))?;
        }
        for _ in 0..3 {
            for device in 0..self.devices.len() {
                self.pass(1_000);
                self.sync(device, true);
                if std::env::var_os("KEEPSAKE_SIM_TRACE").is_some() {
                    eprintln!("end: sync of device-{device}");
                    (0..self.devices.len()).for_each(|d| eprintln!("{}", self.trace(d)));
                    for slot in self.layout.slots() {
                        eprintln!("{slot:?}: {}", self.describe(slot));
                    }
                }
            }
        }
        for device in 0..self.devices.len() {
            self.learn_failed_saves(device);
            self.check_device(device)?;
        }
        let views: Vec<View> = (0..self.devices.len()).map(|d| self.view(d)).collect();
        for (from, view) in views.iter().enumerate() {
            for (slot, head) in &view.heads {
                for (to, other) in views.iter().enumerate().filter(|(to, _)| *to != from) {
                    if self.oracle.set_aside(to, *slot, head)
                        || self.oracle.undecided(to, *slot, head)
                        || self.oracle.saved_over_damage(to, *slot, head)
                        || other.frozen.contains(slot)
                    {
                        continue;
                    }
                    if let Err(why) = self.reaches(to, other, *slot, head) {
                        let (to, from) = (to.to_string(), from.to_string());
                        let held = self.describe(*slot);
                        return Err(format!(
                            "after the faults stopped, device-{to} does not reach device-{from}'s newest save {head} of {slot:?}: {why}\n{held}"
                        ));
                    }
                }
            }
        }
        (0..self.devices.len()).try_for_each(|device| self.autosave_works(device))
    }

    /// On a healthy disk an autosave goes through, unless every slot of the ring is one this
    /// build must not write (a newer build's save in it, or an odd entry under its lock name
    /// other than a file it may only read, which is locked read-only): the ring passes over a
    /// slot it cannot save in.
    fn autosave_works(&mut self, device: usize) -> Result<(), String> {
        let dev = &self.devices[device];
        let dir = dev.profile_dir();
        let usable = (0..self.layout.auto).map(SlotId::Auto).any(|slot| {
            let lock = dir.join(format!("{}.lock", bevy_keepsake::store::slot_stem(slot)));
            let frozen = self.frozen.contains(&(device, slot));
            let odd = dev.disk.odd_at(&lock);
            odd.is_none_or(|odd| odd == super::disk::Odd::ReadOnly) && !frozen
        });
        let saves = self.stats.saves;
        self.ticks += 1;
        let id = 0xA5A5_0000_0000_0000_0000_0000_0000_0000 | u128::from(self.ticks);
        self.save(device, None, id);
        if usable && self.stats.saves == saves {
            let name = &self.devices[device].name;
            return Err(format!(
                "{name} cannot autosave on a healthy disk, though a slot of its ring is usable"
            ));
        }
        self.check_device(device)
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
                let over: Vec<String> = save.meta.over_unread().map(|id| short(&id)).collect();
                lines.push(format!(
                    "    g{} {} by {} at {} in view of {follows:?}, over unread {over:?}",
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
        let mut view = View::default();
        for slot in layout.slots() {
            match running.store.load(slot) {
                Ok(loaded) => {
                    view.heads.insert(slot, loaded.meta.save_id);
                }
                Err(StoreError::NewerFormat { .. }) => {
                    view.frozen.insert(slot);
                }
                Err(_) => {}
            }
            let hidden = running.core.conflicts(slot).into_iter();
            let hidden = hidden.map(|conflict| conflict.hidden_save).collect();
            view.conflicts.insert(slot, hidden);
            view.held.insert(slot, held_ids(&running.store, slot));
        }
        let frozen = self.frozen.iter().filter(|(at, _)| *at == device);
        view.frozen.extend(frozen.map(|(_, slot)| *slot));
        // A slot whose lock name an odd entry holds (other than a file it may only read,
        // which can be locked read-only) is not this build's to write: saves and imports
        // into it are refused until the player moves the entry out.
        let dir = self.devices[device].profile_dir();
        let disk = &self.devices[device].disk;
        let jammed = layout.slots().filter(|slot| {
            let lock = dir.join(format!("{}.lock", bevy_keepsake::store::slot_stem(*slot)));
            disk.odd_at(&lock)
                .is_some_and(|odd| odd != super::disk::Odd::ReadOnly)
        });
        view.frozen.extend(jammed);
        view
    }

    /// Whether device `to` shows `save` (or a save made after it, in view of it) as the head
    /// of `slot` or as a recorded conflict it holds. A conflict hiding a save made in view of
    /// the head does not count: that save is the newer one, and the head an older save on top.
    fn reaches(&self, to: usize, view: &View, slot: SlotId, save: &Uuid) -> Result<(), String> {
        let at_or_after = |id: &Uuid| id == save || self.oracle.follows(id, save);
        let head = view.heads.get(&slot);
        if head.is_some_and(at_or_after) {
            return Ok(());
        }
        let holds = |id: &Uuid| view.held.get(&slot).is_some_and(|held| held.contains(id));
        let over_head = |id: &Uuid| {
            head.is_some_and(|head| {
                self.oracle.follows(id, head) && !self.oracle.passed_over(to, slot, id)
            })
        };
        let conflicts = view.conflicts.get(&slot).into_iter().flatten();
        let shown: Vec<&Uuid> = conflicts
            .filter(|id| at_or_after(id) && holds(id))
            .collect();
        if let Some(newer) = shown.iter().find(|id| over_head(id)) {
            return Err(format!(
                "it shows {newer} only as a conflict, below {head:?}, an older save it was made \
                 in view of"
            ));
        }
        if !shown.is_empty() {
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
