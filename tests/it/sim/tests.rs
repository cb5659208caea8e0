//! The oracle's exemptions are as narrow as the losses they excuse: each test plants a real
//! loss (a defect in what the check reads, or a file removed behind the store's back) in a
//! state where an exemption applies, and the check must still fail.

use super::check::{self, Reader, SlotReader};
use super::disk::{DiskFault, Odd};
use super::oracle::Oracle;
use super::plan::{Config, Rot};
use super::rest::read_all;
use super::run::{MEMORY_SLACK, Sim, memory_bound};
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{SaveBundle, SaveMeta};
use bevy_keepsake::store::{FileSystem, LoadedSave, StoreError};
use uuid::Uuid;

const SLOT: SlotId = SlotId::Manual(0);

fn sim(backups: u16) -> Sim {
    Sim::new(Config {
        devices: 2,
        backups,
        sealed: false,
    })
}

/// A shrunk run as the simulator prints it: each step's time since the one before (ms) and
/// its action.
fn plan(steps: &[(i64, super::plan::Action)]) -> Vec<super::plan::Step> {
    (steps.iter().cloned())
        .map(|(dt_ms, action)| super::plan::Step { dt_ms, action })
        .collect()
}

/// Runs `steps` under `config` and fails with the broken invariant, if any.
#[track_caller]
fn assert_holds(config: Config, steps: &[super::plan::Step]) {
    let outcome = super::run::run(config, steps);
    assert!(outcome.is_ok(), "{:?}", outcome.err());
}

fn generation_path(sim: &Sim, generation: u64) -> std::path::PathBuf {
    let dir = sim.devices[0].profile_dir();
    dir.join(format!("manual-00.g{generation:06}.ksav"))
}

/// Removes a file behind the store's back: a loss no exemption may excuse.
fn lose(sim: &Sim, generation: u64) {
    let disk = &sim.devices[0].disk;
    let path = generation_path(sim, generation);
    disk.paused(|| disk.remove_file(&path))
        .expect("the file was there");
}

/// A planted defect: a load that says the slot is empty, and a choice that fails, though the
/// files are intact and decode.
struct Blind<'a>(Reader<'a>);

impl SlotReader for Blind<'_> {
    fn load(&self, slot: SlotId) -> Result<LoadedSave, StoreError> {
        Err(StoreError::EmptySlot(slot))
    }

    fn generations_of(&self, slot: SlotId, id: Uuid) -> Vec<u64> {
        self.0.generations_of(slot, id)
    }

    fn load_chosen(&self, slot: SlotId, _generation: u64) -> Result<LoadedSave, StoreError> {
        Err(StoreError::EmptySlot(slot))
    }

    fn bytes_hold(&self, slot: SlotId, id: Uuid, meta: &SaveMeta, bundle: &SaveBundle) -> bool {
        self.0.bytes_hold(slot, id, meta, bundle)
    }
}

#[test]
fn a_confirmed_save_no_load_returns_is_lost_though_its_bytes_decode() {
    let mut sim = sim(1);
    sim.save(0, Some(SLOT), 1);
    sim.check_device(0).expect("the save loads");
    let fork = |slot| sim.devices[0].checker_for(slot);
    let reader = Reader {
        store: sim.devices[0].checker().unwrap(),
        fork: &fork,
    };
    let id = Uuid::from_u128(1);
    let known = sim.oracle.known(&id).unwrap();
    assert!(reader.bytes_hold(SLOT, id, &known.meta, &known.bundle));
    let blind = Blind(reader);
    let found = check::check_slot(&sim.oracle, 0, &blind, SLOT, &[], false);
    assert!(
        found.is_err(),
        "a save only its bytes hold passed: {found:?}"
    );
}

#[test]
fn a_failed_delete_that_removed_nothing_leaves_its_save_bound() {
    let mut sim = sim(1);
    sim.save(0, Some(SLOT), 1);
    sim.devices[0].disk.fail_after(1, DiskFault::IoError);
    sim.delete_then_settle(0, SLOT);
    assert_eq!(sim.stats.failed_deletes, 1, "the delete failed");
    sim.check_device(0).expect("the save is still there");
    lose(&sim, 1);
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a save a failed delete left was lost unseen: {found:?}"
    );
}

#[test]
fn damage_to_one_of_two_copies_excuses_nothing() {
    let mut sim = sim(3);
    sim.save(0, Some(SLOT), 1);
    // A duplicate above it, as an interrupted import leaves one.
    let disk = sim.devices[0].disk.clone();
    let bytes = disk.paused(|| read_all(&disk, &generation_path(&sim, 1)));
    assert!(disk.put_at_rest(&generation_path(&sim, 2), &bytes));
    // Files sorted by name: index 1 is the upper copy.
    sim.rot(0, 1, Rot::Truncate(7));
    assert!(!sim.oracle.is_damaged(0, &Uuid::from_u128(1)));
    sim.check_device(0).expect("the lower copy loads");
    lose(&sim, 1);
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "the last intact copy was lost unseen: {found:?}"
    );
}

#[test]
fn a_destroyed_save_lets_the_slot_fall_back_to_its_backups_only() {
    let mut sim = sim(1);
    sim.save(0, Some(SLOT), 1);
    let disk = sim.devices[0].disk.clone();
    let deleted = disk.paused(|| read_all(&disk, &generation_path(&sim, 1)));
    sim.delete_then_settle(0, SLOT);
    sim.save(0, Some(SLOT), 2);
    sim.check_device(0).expect("the new save loads");
    // The disk destroys the player's last save; then the deleted one is back above it.
    sim.rot(0, 0, Rot::Truncate(9));
    assert!(sim.oracle.is_damaged(0, &Uuid::from_u128(2)));
    sim.check_device(0)
        .expect("a destroyed save is the disk's doing");
    assert!(disk.put_at_rest(&generation_path(&sim, 2), &deleted));
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a deleted save headed the slot as a fallback: {found:?}"
    );
}

#[test]
fn an_arriving_save_releases_only_what_its_own_record_names() {
    let mut oracle = Oracle::default();
    let meta = |id: u128, follows: &[u128]| {
        let follows = follows.iter().map(|id| Uuid::from_u128(*id));
        SaveMeta {
            save_id: Uuid::from_u128(id),
            ..SaveMeta::new(SLOT)
        }
        .with_follows(follows)
    };
    let bundle = SaveBundle::new(Default::default());
    oracle.attempt(0, meta(1, &[]), bundle.clone());
    oracle.written(meta(1, &[]));
    oracle.confirm_save(0, SLOT, Uuid::from_u128(1));
    // Made on a device that held save 1 (the simulator saw it there), but its record, which
    // the store orders by, does not name it: the store keeps both as concurrent.
    oracle.attempt(1, meta(2, &[]), bundle.clone());
    oracle.written(meta(2, &[]));
    oracle.arrived(0, SLOT, Uuid::from_u128(2));
    assert_eq!(oracle.must_hold(0, SLOT), [Uuid::from_u128(1)]);
    oracle.attempt(1, meta(3, &[1]), bundle);
    oracle.written(meta(3, &[1]));
    oracle.arrived(0, SLOT, Uuid::from_u128(3));
    assert!(oracle.must_hold(0, SLOT).is_empty());
}

/// Seed 320937 (2 devices, 1 backup, sealed; 150 steps), the oracle's: the player chose
/// their save (1) over another device's (2), and chose again while 1 already headed (the
/// conflict was still shown), then saved 3 over it; the disk destroyed 3 and the slot fell
/// back to its backup, 1. The second choice passed nothing over (the store records none),
/// so 1 is a fallback as any backup; 2, passed over while 1 is intact, still is not.
#[test]
fn choosing_the_save_that_heads_passes_nothing_over() {
    let mut oracle = Oracle::default();
    let meta = |id: u128, follows: &[u128]| {
        let follows = follows.iter().map(|id| Uuid::from_u128(*id));
        SaveMeta {
            save_id: Uuid::from_u128(id),
            ..SaveMeta::new(SLOT)
        }
        .with_follows(follows)
    };
    let id = Uuid::from_u128;
    let bundle = SaveBundle::new(Default::default());
    oracle.attempt(0, meta(1, &[]), bundle.clone());
    oracle.written(meta(1, &[]));
    oracle.confirm_save(0, SLOT, id(1));
    oracle.attempt(1, meta(2, &[]), bundle.clone());
    oracle.written(meta(2, &[]));
    oracle.arrived(0, SLOT, id(2));
    oracle.promoted(0, SLOT, id(1), Some(id(2)));
    oracle.promoted(0, SLOT, id(1), Some(id(1)));
    assert!(!oracle.passed_over(0, SLOT, &id(1)));
    oracle.attempt(0, meta(3, &[1, 2]), bundle);
    oracle.written(meta(3, &[1, 2]));
    oracle.confirm_save(0, SLOT, id(3));
    oracle.damage(0, id(3));
    assert_eq!(oracle.inadmissible_head(0, SLOT, &id(1)), None);
    assert!(oracle.inadmissible_head(0, SLOT, &id(2)).is_some());
}

/// `saves` saves of `SLOT` on `device`, a minute apart (a long session).
fn session(sim: &mut Sim, device: usize, first_id: u128, saves: u128) {
    for id in first_id..first_id + saves {
        sim.pass(60_000);
        sim.save(device, Some(SLOT), id);
    }
}

/// The generation of `SLOT` on device 0 holding the save `id`.
fn generation_of(sim: &Sim, id: u128) -> u64 {
    let saves = sim.devices[0].checker().unwrap().saves_in(SLOT).unwrap();
    let held = saves
        .iter()
        .find(|save| save.meta.save_id == Uuid::from_u128(id));
    held.expect("the save is held").generation
}

/// Issue 49 (seeds 74 and 77, cut down): device-1 took device-0's save and played a long
/// session over it. Its saves from the 17th on name device-0's save in their version vector
/// only (the list of ids keeps 16), and that record is what the store orders by: it prunes
/// device-0's save below them as a backup. The oracle releases the save by the same record.
#[test]
fn a_save_far_along_a_line_releases_what_its_version_vector_covers() {
    let mut oracle = Oracle::default();
    let bundle = SaveBundle::new(Default::default());
    let made = |id: u128, device: &str, held: Option<&SaveMeta>, epoch: &str| {
        let meta = SaveMeta {
            save_id: Uuid::from_u128(id),
            ..SaveMeta::new(SLOT)
        }
        .with_device(device, device)
        .with_follows(held.map(|held| held.save_id));
        meta.with_versions(epoch, held)
    };
    let first = made(1, "desk", None, "e1");
    oracle.attempt(0, first.clone(), bundle.clone());
    oracle.written(first.clone());
    oracle.confirm_save(0, SLOT, first.save_id);
    let mut held = first.clone();
    for id in 100..120 {
        let next = made(id, "laptop", Some(&held), "e2");
        oracle.attempt(1, next.clone(), bundle.clone());
        oracle.written(next.clone());
        held = next;
    }
    assert!(
        !oracle.records(&held.save_id, &first.save_id),
        "not named by id"
    );
    // Made apart: a line that never held the first save releases nothing.
    let apart = made(200, "phone", None, "e3");
    oracle.attempt(2, apart.clone(), bundle.clone());
    oracle.written(apart.clone());
    oracle.arrived(0, SLOT, apart.save_id);
    assert_eq!(oracle.must_hold(0, SLOT), [first.save_id]);
    oracle.arrived(0, SLOT, held.save_id);
    assert!(oracle.must_hold(0, SLOT).is_empty());
}

/// What a version vector does not cover stays bound, however far along its line the arriving
/// save is: device-1's session was made apart from device-0's save, and losing that save is
/// caught.
#[test]
fn a_line_made_apart_releases_nothing_by_its_version_vector() {
    let mut sim = sim(3);
    sim.save(0, Some(SLOT), 1);
    sim.sync(0, true);
    session(&mut sim, 1, 100, 20);
    sim.sync(1, true);
    sim.sync(0, true);
    let (newest, first) = (Uuid::from_u128(119), Uuid::from_u128(1));
    assert!(!sim.oracle.records_superseding(&newest, &first));
    assert_eq!(sim.oracle.must_hold(0, SLOT), [first]);
    sim.check_device(0).expect("both lines are kept");
    lose(&sim, generation_of(&sim, 1));
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a save made apart was lost unseen: {found:?}"
    );
}

/// Seed 125, cut down: the player chose another device's save over their own, then deleted
/// the slot, and the delete stopped after removing what lay below the head, their own save
/// among it. A delete must go bottom up (the head first could leave an older save on top):
/// what it removed from below the head is released. A removed head is not.
#[test]
fn a_failed_delete_releases_a_confirmed_save_it_removed_from_below_the_head_only() {
    let bundle = SaveBundle::new(Default::default());
    let meta = |id: u128| {
        SaveMeta {
            save_id: Uuid::from_u128(id),
            ..SaveMeta::new(SLOT)
        }
        .with_follows([])
    };
    let setup = || {
        let mut oracle = Oracle::default();
        for (device, id) in [(0, 1), (1, 2)] {
            oracle.attempt(device, meta(id), bundle.clone());
            oracle.written(meta(id));
        }
        oracle.confirm_save(0, SLOT, Uuid::from_u128(1));
        oracle.arrived(0, SLOT, Uuid::from_u128(2));
        oracle
    };
    let (own, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let mut below = setup();
    below.delete_interrupted(
        0,
        SLOT,
        ([own, other].into(), Some(other)),
        (&[other].into(), false),
    );
    assert!(below.must_hold(0, SLOT).is_empty());
    let mut on_top = setup();
    on_top.delete_interrupted(
        0,
        SLOT,
        ([own, other].into(), Some(own)),
        (&[other].into(), false),
    );
    assert_eq!(
        on_top.must_hold(0, SLOT),
        [own],
        "a removed head stays bound"
    );
}

/// A failed delete that left the player's save below another device's save leaves it bound:
/// losing it afterwards is caught.
#[test]
fn a_failed_delete_that_left_a_save_below_the_head_leaves_it_bound() {
    let mut sim = sim(3);
    sim.save(0, Some(SLOT), 1);
    sim.sync(0, true);
    sim.pass(60_000);
    sim.save(1, Some(SLOT), 2);
    sim.sync(1, true);
    sim.sync(0, true);
    let head = sim.devices[0].checker().unwrap().load(SLOT).unwrap();
    assert_eq!(
        head.meta.save_id,
        Uuid::from_u128(2),
        "the later save heads"
    );
    sim.devices[0].disk.fail_after(1, DiskFault::IoError);
    sim.delete_then_settle(0, SLOT);
    assert_eq!(sim.stats.failed_deletes, 1, "the delete failed");
    sim.check_device(0).expect("the save is still there");
    lose(&sim, generation_of(&sim, 1));
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a save a failed delete left below the head was lost unseen: {found:?}"
    );
}

#[test]
fn an_odd_entry_over_a_save_takes_its_bytes_for_good() {
    let sim = sim(0);
    let disk = &sim.devices[0].disk;
    let path = generation_path(&sim, 1);
    disk.paused(|| disk.create_dir_all(path.parent().unwrap()))
        .unwrap();
    assert!(disk.put_at_rest(&path, b"KPSK a save"));
    disk.add_odd(path.clone(), Odd::Fifo);
    disk.paused(|| disk.remove_file(&path)).unwrap();
    assert!(disk.paused(|| disk.open_read(&path)).is_err());
    assert!(
        !disk
            .names(path.parent().unwrap())
            .contains(&"manual-00.g000001.ksav".to_owned())
    );
}

#[test]
fn the_hostile_objects_are_larger_than_the_memory_bound() {
    let objects = super::rest::hostile_objects(false);
    assert!(objects.huge.len() > MEMORY_SLACK);
    assert!(objects.huge.len() > memory_bound(0));
}

/// Seed 700652 (2 devices, no backups), cut down: device-1's newest save's file is truncated
/// past its metadata, and the process dies in the sync round that repairs it from the cloud.
/// The round fetched device-1's lost saves oldest first; the first import pruned the truncated
/// file, and the crash came before the newest was fetched: from then on nothing showed a save
/// was missing, and the slot stayed headed by an older save for good.
#[test]
fn seed_700652_a_repair_cut_short_by_a_crash_still_ends_at_the_newest_save() {
    use super::plan::{Action, Restart, Step};
    let save = |dt_ms, device, slot, id| Step {
        dt_ms,
        action: Action::Save { device, slot, id },
    };
    let sync = |dt_ms, device| Step {
        dt_ms,
        action: Action::Sync { device },
    };
    let manual = SlotId::Manual;
    let steps = vec![
        save(
            20_000,
            0,
            manual(1),
            168341457064280177457028234073316481322,
        ),
        save(
            20_000,
            0,
            manual(1),
            252060647264986058330240243153612206431,
        ),
        save(20_000, 1, manual(0), 34263016309713702322918827485873890446),
        Step {
            dt_ms: 0,
            action: Action::Delete {
                device: 1,
                slot: manual(0),
            },
        },
        save(
            20_000,
            1,
            manual(0),
            102734718237458803550948393130211169779,
        ),
        save(0, 0, manual(1), 330579927094542928137925586877126429427),
        save(
            400_000,
            0,
            manual(1),
            218718860138898185867981079016898415802,
        ),
        save(
            400_000,
            1,
            manual(0),
            224710039974263229980500775961704985413,
        ),
        save(900, 1, manual(0), 88591613864106971062891813579219234429),
        save(5, 1, manual(0), 323414746227430908025988455659461366033),
        sync(5, 1),
        save(5, 1, manual(0), 224428474343633330530695044534468441221),
        sync(900, 1),
        Step {
            dt_ms: 0,
            action: Action::Rot {
                device: 1,
                file: 1204600460,
                how: Rot::Truncate(798120315),
            },
        },
        Step {
            dt_ms: 20_000,
            action: Action::Die {
                device: 1,
                after: 37,
                power: false,
                pick: 1175381864104330528,
                restart: Restart::Clean,
            },
        },
        sync(400_000, 1),
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// What seed 700652 came down to, in the store: a prune that must keep saves (an import's)
/// never removes a file whose metadata it cannot read, since it cannot tell what that file
/// held; cloud sync tells by that file that the slot still misses a save.
#[test]
fn an_import_keeps_a_file_damaged_past_its_metadata() {
    use bevy_keepsake::store::ImportRules;
    let mut sim = sim(0);
    sim.save(0, Some(SLOT), 1);
    sim.save(1, Some(SLOT), 2);
    let disk = sim.devices[0].disk.clone();
    assert!(disk.rot(&generation_path(&sim, 1), |bytes| bytes.truncate(20)));
    let arriving = sim.devices[1].checker().unwrap();
    let bytes = arriving.read_generation_bytes(SLOT, 1).unwrap();
    let store = sim.devices[0].start().unwrap().store.clone();
    let file = store.decode_import(&bytes).unwrap();
    let rules = ImportRules {
        keep: [Uuid::from_u128(2)].into(),
        ..ImportRules::default()
    };
    store.import_with(file, &rules).unwrap();
    assert_eq!(store.generations(SLOT).unwrap(), [2, 1]);
}

/// Seed 78 (2 devices, no backups, sealed), cut down: device-0's lock file of the slot is one
/// its player may only read (a backup tool or another user left it so), then device-1 saves
/// the slot. The real filesystem locks such a file read-only (`OsFileSystem`: an advisory lock
/// needs no write access), so the slot takes saves and imports; the simulated disk refused the
/// lock, every import into the slot failed, and device-1's save never reached device-0 (seeds
/// 9, 18, 37, 49, 105 the same).
#[test]
fn seed_78_a_lock_file_the_player_may_only_read_lets_the_other_devices_save_in() {
    use super::plan::{Action, OddName, Step};
    let slot = SlotId::Manual(1);
    let steps = [
        Step {
            dt_ms: 0,
            action: Action::OddFile {
                device: 0,
                name: OddName::Lock(slot),
                odd: Odd::ReadOnly,
            },
        },
        Step {
            dt_ms: 5,
            action: Action::Save {
                device: 1,
                slot,
                id: 307031501649295454348269268221570542096,
            },
        },
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: true,
        },
        &steps,
    );
}

/// Seed 72 (2 devices, no backups), cut down: a newer build leaves a save device-0 cannot read
/// in its Quick slot; device-1 saves Quick and syncs; device-0's round fetches that save, which
/// the slot refuses (nothing goes under a newer build's save); then device-0's player deletes
/// Quick. The refusal was recorded under the remote file's name as if the file were from a
/// newer format, so device-1's save never came to the freed slot (seed 28 the same).
#[test]
fn seed_72_a_save_a_newer_builds_save_held_back_arrives_once_the_slot_is_deleted() {
    use super::plan::{Action, Step};
    let save = |dt_ms, device, slot, id| Step {
        dt_ms,
        action: Action::Save { device, slot, id },
    };
    let sync = |dt_ms, device| Step {
        dt_ms,
        action: Action::Sync { device },
    };
    let steps = [
        save(
            5,
            0,
            SlotId::Manual(1),
            289735496370303978225703528370200722297,
        ),
        Step {
            dt_ms: 0,
            action: Action::NewerBuild {
                device: 0,
                slot: SlotId::Quick,
                id: 163344076828731837468867248338664788709,
                unreadable: true,
            },
        },
        save(5, 1, SlotId::Quick, 78399939802233955308211674381704214084),
        sync(900, 1),
        sync(400_000, 0),
        Step {
            dt_ms: 20_000,
            action: Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        },
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// Seed 299, cut down: device-0's slot holds only another device's newest save, made over the
/// player's own last one, and the disk destroys it. The next round repairs the slot from the
/// cloud; cut short after its first import, it left the oldest save in the cloud heading the
/// slot, older than the player's own last save: the round fetched the lost saves oldest
/// first. Here it dies at every call of that round in turn.
#[test]
fn seed_299_a_repair_cut_short_anywhere_never_leaves_an_older_save_on_top() {
    use super::plan::{Action, Restart, Step};
    let step = |dt_ms, action| Step { dt_ms, action };
    let save = |device, id| Action::Save {
        device,
        slot: SLOT,
        id,
    };
    let sync = |device| Action::Sync { device };
    let config = Config {
        devices: 2,
        backups: 0,
        sealed: false,
    };
    for after in 1..=150 {
        let steps = vec![
            step(5, save(1, 0xC)),
            step(5, sync(1)),
            step(60_000, sync(0)),
            step(60_000, save(0, 0xA)),
            step(5, sync(0)),
            step(60_000, sync(1)),
            step(60_000, save(1, 0xB)),
            step(5, sync(1)),
            step(60_000, sync(0)),
            step(
                5,
                Action::Rot {
                    device: 0,
                    file: 0,
                    how: Rot::Truncate(20),
                },
            ),
            step(
                5,
                Action::Die {
                    device: 0,
                    after,
                    power: false,
                    pick: 0,
                    restart: Restart::Clean,
                },
            ),
            step(60_000, sync(0)),
        ];
        let outcome = super::run::run(config, &steps);
        assert!(
            outcome.is_ok(),
            "dying at call {after}: {:?}",
            outcome.err()
        );
    }
}

/// Seed 216 (3 devices, 3 backups), cut down: a newer build saves Quick on device-2, which
/// uploads it; device-1, its clock turned back six hours, fetches it and plays 57 saves of
/// Quick offline. Its last save was made in view of the newer build's save, and must head
/// Quick everywhere. The newer build's save carried no version vector (a build of this library
/// that names its device writes one), so after 16 saves no record linked the two but the
/// clocks, which put the newer build's save on top (seed 120 the same, through saves placed
/// before the ones that named them).
#[test]
fn seed_216_a_newer_builds_save_records_its_version_vector() {
    use super::plan::{Action, Step};
    let quick = SlotId::Quick;
    let step = |dt_ms, action| Step { dt_ms, action };
    let steps = [
        step(
            900,
            Action::Delete {
                device: 2,
                slot: quick,
            },
        ),
        step(
            900,
            Action::NewerBuild {
                device: 2,
                slot: quick,
                id: 47738570964338265810987555693815951634,
                unreadable: false,
            },
        ),
        step(
            20_000,
            Action::ClockJump {
                device: 1,
                by_ms: -21_600_000,
            },
        ),
        step(5, Action::Sync { device: 2 }),
        step(400_000, Action::Sync { device: 1 }),
        step(
            400_000,
            Action::Session {
                device: 1,
                slot: quick,
                saves: 57,
                id: 39027171264370348512217219124351976613,
            },
        ),
    ];
    assert_holds(
        Config {
            devices: 3,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}

/// Seed 101328 (2 devices, 1 backup, sealed), cut down: a save fails (an EIO, with a power
/// loss armed) though its file is in place, and the device loads it after a restart. The
/// oracle knew only what the game asked for, not what the store wrote (the `keepsake.follows`
/// record it adds), and took the save for a misread.
#[test]
fn seed_101328_a_failed_save_whose_file_stayed_loads_as_the_store_wrote_it() {
    use super::plan::{Action, Restart, Step};
    let save = |dt_ms, id| Step {
        dt_ms,
        action: Action::Save {
            device: 0,
            slot: SLOT,
            id,
        },
    };
    let steps = vec![
        save(400_000, 284001126167256651550765888731312129875),
        save(0, 180142772096966038387709501665611710011),
        Step {
            dt_ms: 400_000,
            action: Action::Die {
                device: 0,
                after: 61,
                power: true,
                pick: 1900475969416490875,
                restart: Restart::Clean,
            },
        },
        save(400_000, 3624628200000727263217513719231973764),
        Step {
            dt_ms: 0,
            action: Action::DiskFault {
                device: 0,
                after: 19,
                fault: DiskFault::IoError,
            },
        },
        save(20_000, 223235047381122772146772990487221129902),
        Step {
            dt_ms: 5,
            action: Action::Quit { device: 0 },
        },
        Step {
            dt_ms: 900,
            action: Action::Autosave {
                device: 0,
                id: 17570149634393364884070291329398851650,
            },
        },
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: true,
        },
        &steps,
    );
}

/// The file index [`Sim::rot`] takes for generation `generation` of `SLOT` on device 0 (the
/// save files sorted by name).
fn file_index(sim: &Sim, generation: u64) -> u32 {
    let dev = &sim.devices[0];
    let mut names = dev.disk.tree().list(&dev.profile_dir());
    names.retain(|name| name.ends_with(".ksav"));
    names.sort();
    let name = format!("manual-00.g{generation:06}.ksav");
    let index = names.iter().position(|n| *n == name);
    index.expect("the generation's file is there") as u32
}

/// Device 0: its last save (3) destroyed, the slot on its backup (1); device 1's save (2)
/// arrives and the player chooses it over 1. What the two tests below start from.
fn chose_over_a_backup() -> Sim {
    use super::plan::{Action, Step};
    let mut sim = sim(1);
    sim.save(1, Some(SLOT), 2);
    sim.sync(1, true);
    // Device 0's saves are the newer: its own stays on top when device 1's arrives.
    sim.pass(60_000);
    sim.save(0, Some(SLOT), 1);
    sim.save(0, Some(SLOT), 3);
    sim.rot(
        0,
        file_index(&sim, generation_of(&sim, 3)),
        Rot::Truncate(5),
    );
    assert!(sim.oracle.is_damaged(0, &Uuid::from_u128(3)));
    sim.sync(0, true);
    let choose = Action::ChooseOther {
        device: 0,
        slot: SLOT,
    };
    let step = Step {
        dt_ms: 0,
        action: choose,
    };
    sim.step(&step).expect("the player chooses device 1's save");
    assert!(sim.oracle.passed_over(0, SLOT, &Uuid::from_u128(1)));
    sim.check_device(0).expect("the chosen save heads");
    sim
}

/// Seeds 200203 and 200609 (cut down): a choice keeps the save it passes over one generation
/// below, as its backup. When the disk destroys the chosen save too, the slot falls back to
/// that backup: the disk's doing, not a save brought back.
#[test]
fn a_passed_over_save_is_the_fallback_once_the_save_chosen_over_it_is_destroyed() {
    let mut sim = chose_over_a_backup();
    let chosen = generation_of(&sim, 2);
    sim.rot(0, file_index(&sim, chosen), Rot::Truncate(5));
    assert!(sim.oracle.is_damaged(0, &Uuid::from_u128(2)));
    sim.check_device(0)
        .expect("the backup below a destroyed choice heads");
}

/// The same slot, but the chosen save is removed behind the store's back: no damage at rest
/// excuses the passed-over save heading again.
#[test]
fn a_passed_over_save_heading_over_a_lost_choice_is_seen() {
    let mut sim = chose_over_a_backup();
    lose(&sim, generation_of(&sim, 2));
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a save the player passed over headed the slot again: {found:?}"
    );
}

/// Seed 300982 (3 devices, no backups, sealed; 150 steps), cut down: device-1 loses power
/// once its slots' lock files are made and flushed, a newer build then leaves an unreadable
/// save in Manual(0), and a FIFO appears in place of Manual(1)'s lock file. The simulated
/// disk rebuilt after the power loss numbered its files from the largest one holding bytes,
/// so a lock file (never written) and the newer build's save got one inode: the FIFO emptied
/// both, and the check saw the newer build's save "changed by this build". A real
/// filesystem never gives a new file the inode of a name still in use.
#[test]
fn seed_300982_a_file_made_after_a_power_loss_is_a_file_of_its_own() {
    use super::plan::{Action, Hostile, OddName, Restart, Step};
    use super::remote::CloudFault;
    let step = |dt_ms, action| Step { dt_ms, action };
    let sync = |dt_ms, device| step(dt_ms, Action::Sync { device });
    let steps = [
        step(
            5,
            Action::Autosave {
                device: 1,
                id: 29024920096257961670963125302739711130,
            },
        ),
        step(
            900,
            Action::Die {
                device: 1,
                after: 21,
                power: false,
                pick: 11568262213577545651,
                restart: Restart::Clean,
            },
        ),
        step(
            0,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 206893390452597103310490350330477066936,
            },
        ),
        sync(0, 2),
        step(
            5,
            Action::OddFile {
                device: 1,
                name: OddName::Generation {
                    slot: SlotId::Manual(1),
                    generation: 3,
                },
                odd: Odd::DanglingLink,
            },
        ),
        step(
            20_000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 197315955745621785098504913345310592806,
                unreadable: false,
            },
        ),
        sync(20_000, 1),
        step(
            5,
            Action::Die {
                device: 1,
                after: 57,
                power: true,
                pick: 10509292696063208281,
                restart: Restart::Fault {
                    after: 8,
                    fault: DiskFault::IoError,
                },
            },
        ),
        step(20_000, Action::CloudFault(CloudFault::LostAnswer)),
        sync(0, 1),
        step(
            5,
            Action::Hostile {
                kind: Hostile::Bomb,
                pick: 2665339192971571360,
            },
        ),
        sync(400_000, 1),
        step(
            5,
            Action::NewerBuild {
                device: 1,
                slot: SLOT,
                id: 259814858415344936959015653722690531415,
                unreadable: true,
            },
        ),
        step(
            20_000,
            Action::OddFile {
                device: 1,
                name: OddName::Lock(SlotId::Manual(1)),
                odd: Odd::Fifo,
            },
        ),
    ];
    assert_holds(
        Config {
            devices: 3,
            backups: 0,
            sealed: true,
        },
        &steps,
    );
}

/// The check on a newer build's files is not blind (seed 300982 left it as it was): a newer
/// build's save emptied behind the store's back, by no step the simulator records as the
/// disk's damage, is reported by that check itself (the slot's own checks see it too, here).
#[test]
fn a_newer_builds_save_emptied_behind_the_stores_back_is_seen() {
    let mut sim = sim(0);
    sim.save(0, Some(SLOT), 1);
    sim.newer_build(0, SLOT, 2, true);
    sim.check_device(0).expect("the newer build's save is kept");
    let disk = &sim.devices[0].disk;
    assert!(disk.rot(&generation_path(&sim, 2), Vec::clear));
    assert!(sim.check_device(0).is_err());
    let found = sim.newer_files_kept(0);
    assert!(
        found
            .as_ref()
            .is_err_and(|message| message.contains("a newer build's save")),
        "an emptied newer build's save passed: {found:?}"
    );
}

/// Seed 301008 (3 devices, 3 backups, sealed), cut down: device-0's sync round places
/// device-2's save of `Manual(1)`, the folder flush fails and the save is removed again (the
/// round fails); the player deletes the slot (empty), and a power loss undoes the removal:
/// device-2's save heads the slot, as the next round would have placed it. The oracle only
/// knew saves a round placed while it ran, and took it for a save that never entered.
#[test]
fn seed_301008_an_import_a_power_loss_brings_back_counts_as_placed() {
    use super::disk::DiskFault;
    use super::plan::{Action, Hostile, Restart, Step};
    let step = |dt_ms, action| Step { dt_ms, action };
    let manual = SlotId::Manual;
    let steps = vec![
        step(
            400_000,
            Action::Autosave {
                device: 0,
                id: 5614578038084099661407922575950094592,
            },
        ),
        step(
            20_000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 254127856984832510396726581285269823578,
            },
        ),
        step(
            0,
            Action::Save {
                device: 1,
                slot: manual(0),
                id: 327264432915133248665671412013804051259,
            },
        ),
        step(
            900,
            Action::Save {
                device: 2,
                slot: manual(1),
                id: 62141712717087311938789728324435325458,
            },
        ),
        step(5, Action::Sync { device: 1 }),
        step(5, Action::Sync { device: 0 }),
        step(
            900,
            Action::Autosave {
                device: 0,
                id: 235611228255293338823648745898405620588,
            },
        ),
        step(
            400_000,
            Action::Hostile {
                kind: Hostile::BadKey,
                pick: 3633073215532350884,
            },
        ),
        step(
            0,
            Action::Die {
                device: 0,
                after: 65,
                power: true,
                pick: 4775286878771482170,
                restart: Restart::Fault {
                    after: 1,
                    fault: DiskFault::Full { calls: 4 },
                },
            },
        ),
        step(
            5,
            Action::DiskFault {
                device: 0,
                after: 39,
                fault: DiskFault::SyncFails,
            },
        ),
        step(0, Action::Sync { device: 2 }),
        step(400_000, Action::Sync { device: 0 }),
        step(
            0,
            Action::Delete {
                device: 0,
                slot: manual(1),
            },
        ),
        step(5, Action::Quit { device: 0 }),
        step(0, Action::UploadDue { device: 0 }),
    ];
    assert_holds(
        Config {
            devices: 3,
            backups: 3,
            sealed: true,
        },
        &steps,
    );
}

/// Seed 300824 (2 devices, 3 backups), cut down: device-0's newest save of `Manual(0)`
/// (uploaded) becomes a file the player may not open, the sync state is lost (and with it
/// the device id), and the player deletes the slot. The record of deleted saves could not
/// name the save it could not read, and the next round placed it again: a deleted save back.
#[test]
#[ignore = "seed 300824 is open: its fix (a delete reserving the next count on the line of the \
            newest save it read, per unread generation above it) took other devices' next saves \
            for deleted in 11 of 3,000 long-run seeds, and was taken out; kept to reproduce it"]
fn seed_300824_a_deleted_save_whose_file_did_not_read_stays_deleted() {
    use super::disk::Odd;
    use super::plan::{Action, OddName, Restart, Step};
    let step = |dt_ms, action| Step { dt_ms, action };
    let save = |dt_ms, id| {
        step(
            dt_ms,
            Action::Save {
                device: 0,
                slot: SLOT,
                id,
            },
        )
    };
    let steps = vec![
        step(900, Action::Sync { device: 0 }),
        step(
            400_000,
            Action::Die {
                device: 0,
                after: 42,
                power: true,
                pick: 4667217027467769882,
                restart: Restart::Clean,
            },
        ),
        step(
            900,
            Action::Session {
                device: 0,
                slot: SLOT,
                saves: 53,
                id: 105794207842907103343392828457725996879,
            },
        ),
        save(900, 269941187842029796105897374770678112529),
        save(5, 86635332559221032764742829755984405278),
        save(20_000, 258106940600156312064096146108787190357),
        save(5, 329370086687480871204783917478610796312),
        step(
            900,
            Action::NewerBuild {
                device: 0,
                slot: SLOT,
                id: 269270900663614192967490917000522012654,
                unreadable: true,
            },
        ),
        step(900, Action::Sync { device: 0 }),
        step(
            400_000,
            Action::OddFile {
                device: 0,
                name: OddName::Generation {
                    slot: SLOT,
                    generation: 6,
                },
                odd: Odd::Unreadable,
            },
        ),
        step(
            900,
            Action::LoseState {
                device: 0,
                garble: false,
            },
        ),
        step(
            5,
            Action::Delete {
                device: 0,
                slot: SLOT,
            },
        ),
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}

/// The exemption of seed 301008 is as narrow as the case: a save that entered the slot here
/// before the player's delete (device 1's, placed by a round, then deleted) and comes back
/// as an import a power loss restored is still a deleted save brought back.
#[test]
fn a_deleted_save_back_as_a_restored_import_is_seen() {
    let mut sim = sim(1);
    sim.save(1, Some(SLOT), 2);
    sim.sync(1, true);
    sim.sync(0, true);
    sim.check_device(0).expect("device 1's save heads");
    let disk = sim.devices[0].disk.clone();
    let path = generation_path(&sim, generation_of(&sim, 2));
    let bytes = disk.paused(|| read_all(&disk, &path));
    sim.delete_then_settle(0, SLOT);
    sim.check_device(0).expect("the slot is empty");
    assert!(disk.put_at_rest(&path, &bytes));
    sim.oracle.import_came_back(0, SLOT, Uuid::from_u128(2));
    let found = sim.check_device(0);
    assert!(
        found.is_err(),
        "a save the player deleted here came back unseen: {found:?}"
    );
}

/// Seed 309440 (2 devices, 1 backup), cut down; seeds 312437 and 317351 are the same case.
/// Device 0 holds device 1's newer save of `Manual(1)` over its own, in conflict; the disk
/// truncates that head, so the slot loads a fallback, and the player chooses device 0's
/// hidden save. The store passes over the slot's head as it lists it (the truncated one) and
/// keeps it below the choice once a round repairs it; the oracle knew only the fallback
/// passed over, and demanded device 0 reach the save the player chose against.
#[test]
fn seed_309440_a_choice_over_a_destroyed_head_passes_that_head_over() {
    use super::plan::{Action, Restart, Step};
    let step = |dt_ms, action| Step { dt_ms, action };
    let save = |dt_ms, device, slot, id| step(dt_ms, Action::Save { device, slot, id });
    let auto = |dt_ms, device, id| step(dt_ms, Action::Autosave { device, id });
    let m1 = SlotId::Manual(1);
    let choose = Action::ChooseOther {
        device: 0,
        slot: m1,
    };
    let steps = vec![
        save(400_000, 0, SLOT, 190982312164499518210099426246779100548),
        auto(5, 1, 37559341693970549607361387567028325505),
        save(0, 0, m1, 167753282003737171941407697481125827126),
        save(900, 0, m1, 165169854477707612473962203068507341896),
        save(400_000, 1, m1, 242532032228501338183698895819338005366),
        save(5, 1, m1, 177445806460341851322555786178627549217),
        save(
            900,
            0,
            SlotId::Quick,
            340098043969521159459142809722060107393,
        ),
        step(900, Action::Sync { device: 1 }),
        save(
            900,
            0,
            SlotId::Quick,
            68499955819865937824145279541815847444,
        ),
        auto(5, 0, 122663087471312864198096391955370557678),
        step(0, Action::Sync { device: 0 }),
        step(
            0,
            Action::Die {
                device: 0,
                after: 8,
                power: false,
                pick: 18022060664981596381,
                restart: Restart::Dies {
                    after: 2,
                    power: true,
                    pick: 3449163556875484191,
                },
            },
        ),
        step(20_000, choose.clone()),
        save(5, 0, SLOT, 261243289973512696222688255795575717382),
        auto(400_000, 0, 317569580729397328924885983273560904977),
        step(
            400_000,
            Action::Rot {
                device: 0,
                file: 1757721875,
                how: Rot::Truncate(2987355877),
            },
        ),
        step(400_000, choose),
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// The exemption of seed 309440 is as narrow as the case: a head passed over that the disk
/// did not destroy (it loaded, so the choice named it already) is not set aside by it.
#[test]
fn a_choice_passes_over_a_listed_head_only_when_the_disk_destroyed_it() {
    let mut oracle = Oracle::default();
    let (listed, chosen) = (Uuid::from_u128(1), Uuid::from_u128(2));
    oracle.passed_over_destroyed_head(0, SLOT, listed, chosen);
    assert!(!oracle.set_aside(0, SLOT, &listed));
    oracle.damage(0, listed);
    oracle.passed_over_destroyed_head(0, SLOT, listed, chosen);
    assert!(oracle.set_aside(0, SLOT, &listed));
}

/// Seed 315564 (2 devices, no backups), cut down: device 0 quicksaves and uploads the save,
/// loses its sync state (and with it its device id), and deletes Quick while the read of the
/// save's file meets an EIO. The delete left the generation it could not read out of its
/// record of deleted saves and removed it all the same, so the next round took the save in
/// the cloud for another device's and placed it again. A delete now fails, removing nothing,
/// when a generation cannot be read for a reason that may pass, as a save does.
#[test]
fn seed_315564_a_delete_that_cannot_read_a_save_for_now_removes_nothing() {
    use super::plan::{Action, Step};
    let step = |dt_ms, action| Step { dt_ms, action };
    let quick = SlotId::Quick;
    let steps = [
        step(
            5,
            Action::Save {
                device: 0,
                slot: quick,
                id: 279499810751176663276377185889624387436,
            },
        ),
        step(5, Action::Sync { device: 0 }),
        step(
            0,
            Action::LoseState {
                device: 0,
                garble: true,
            },
        ),
        step(20_000, Action::UploadDue { device: 0 }),
        step(
            0,
            Action::DiskFault {
                device: 0,
                after: 4,
                fault: DiskFault::IoError,
            },
        ),
        step(
            5,
            Action::Delete {
                device: 0,
                slot: quick,
            },
        ),
    ];
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// Long-run seed 402040: device 1 deleted Quick; the record of deleted saves was put in place,
/// then its folder's flush failed, so the delete failed before it removed anything, with the
/// slot's saves named in the record. Sync counted one of them deleted, and the conflict
/// between the two devices' saves was never shown again once the sync state was lost. A
/// delete that removed nothing leaves the record as it was.
#[test]
fn seed_402040_a_delete_whose_record_did_not_flush_names_no_save() {
    use super::plan::{Action, OddName};
    use super::remote::CloudFault;
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 109830796077748629846943005234824437836,
            },
        ),
        (400000, Action::Sync { device: 0 }),
        (5, Action::Sync { device: 1 }),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 172132442706170357345845396004759210338,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 24133990883210394906927149567617507466,
            },
        ),
        (5, Action::CloudFault(CloudFault::Refuses { calls: 3 })),
        (0, Action::Sync { device: 0 }),
        (20000, Action::Sync { device: 1 }),
        (400000, Action::Sync { device: 0 }),
        (
            400000,
            Action::DiskFault {
                device: 1,
                after: 12,
                fault: DiskFault::SyncFails,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (
            900,
            Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
        (
            20000,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (400000, Action::Sync { device: 1 }),
        (
            900,
            Action::OddFile {
                device: 1,
                name: OddName::State,
                odd: Odd::Folder,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: true,
        },
        &steps,
    );
}

/// Long-run seed 402638: device 0 recorded a conflict with F hidden; a newer build's save C
/// and device 1's X were then made in view of F. Importing X kept F whatever the backups (0),
/// as a recorded conflict's hidden save, and pruned C: when the disk destroyed X, the slot
/// loaded F, older than the player's confirmed C. A save made in view of a conflict's hidden
/// save settles it: the import keeps it no longer.
#[test]
fn seed_402638_a_save_made_in_view_of_a_conflicts_hidden_save_settles_it() {
    use super::plan::Action;
    let steps = plan(&[
        (
            0,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 337004680476817950421100850691859695506,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 204095938671014508571693369642620694659,
            },
        ),
        (0, Action::Sync { device: 2 }),
        (
            20000,
            Action::Autosave {
                device: 2,
                id: 111004691297838456671558992870331584021,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 156410794566878021226097466401267143157,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (0, Action::Sync { device: 0 }),
        (
            900,
            Action::Autosave {
                device: 1,
                id: 114184298566602843243163062011497494362,
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(1),
                id: 262901551082728525132219977824140063179,
                unreadable: false,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 180481276633418127854309315385398955287,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            20000,
            Action::Autosave {
                device: 0,
                id: 48077372940423324370875168204103666789,
            },
        ),
        (5, Action::UploadDue { device: 2 }),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 204450728444066145450979958129388518926,
            },
        ),
        (
            900,
            Action::Autosave {
                device: 1,
                id: 239569890940750733286587903120196370264,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 25488501928176457308664106727327266158,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (5, Action::Sync { device: 0 }),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 24751612165404473785270090692034601559,
            },
        ),
        (
            5,
            Action::Rot {
                device: 0,
                file: 2020811418,
                how: Rot::Truncate(1493175755),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// Long-run seed 439224 (the class of seed 300824): device 1 held its own save S over device
/// 0's B (a conflict, B kept as its hidden save), a newer build's save this build cannot read
/// on top; the disk damaged B's file past its metadata, and the player deleted the slot. The
/// delete could name only S from the files; when a dangling link then stood under a save's
/// name, the slot looked damaged and sync brought B back from the cloud into the slot the
/// player had emptied. The slot's record of the saves that entered it names B.
#[test]
fn seed_439224_a_deleted_save_whose_file_did_not_read_does_not_come_back() {
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 9334462390084694579111523090711341903,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 52219488316716864094160798901854425616,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 150750856381363782615278442292640201124,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 85788292617797897032790183532564643482,
            },
        ),
        (400000, Action::Sync { device: 0 }),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 133776696578264558954151923768987100517,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            20000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Manual(1),
                id: 94336103712620987648227795048350393113,
                unreadable: true,
            },
        ),
        (
            5,
            Action::Rot {
                device: 1,
                file: 1542415451,
                how: Rot::Flip(4014062698),
            },
        ),
        (
            0,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            900,
            Action::OddFile {
                device: 1,
                name: OddName::Generation {
                    slot: SlotId::Manual(1),
                    generation: 2,
                },
                odd: Odd::DanglingLink,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: true,
        },
        &steps,
    );
}

/// Long-run seed 430677, first shortest run: device 1's clock ran six hours behind. Device 0's
/// sessions, made apart from device 1's save, were dated six hours past device 1's clock, so
/// none ever took the head there: device 1 kept loading its older save, the player's newest
/// only a conflict's hidden side. The storage (S3, the simulator's bucket) dates each upload by
/// its own clock, and a save was made by then: its date is believed up to it.
#[test]
fn seed_430677_a_device_whose_clock_runs_behind_still_puts_the_newest_save_on_top() {
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            20000,
            Action::OddFile {
                device: 0,
                name: OddName::Generation {
                    slot: SlotId::Quick,
                    generation: 2,
                },
                odd: Odd::Folder,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 249758233684305891298927653162059485464,
            },
        ),
        (
            900,
            Action::Session {
                device: 0,
                slot: SlotId::Quick,
                saves: 49,
                id: 34838031849257575052166042594037304651,
            },
        ),
        (
            20000,
            Action::ClockJump {
                device: 1,
                by_ms: -21600000,
            },
        ),
        (900, Action::Sync { device: 1 }),
        (20000, Action::Sync { device: 0 }),
        (
            0,
            Action::Session {
                device: 0,
                slot: SlotId::Quick,
                saves: 43,
                id: 264586752706999092306297184704546194948,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// Long-run seed 430677, second shortest run: one device, a folder under the name of a save of
/// its quick slot, two sessions of 49 and 43 saves (its clock set six hours back between
/// them). Each save over the folder started a line of its own, the last saves' vectors kept
/// only the newest 64 lines, and the saves no longer named the first save of the slot: sync
/// took it for lost to the folder, and it came back over the player's newest save.
#[test]
fn seed_430677_a_long_session_over_an_odd_entry_still_follows_its_first_save() {
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            20000,
            Action::OddFile {
                device: 0,
                name: OddName::Generation {
                    slot: SlotId::Quick,
                    generation: 2,
                },
                odd: Odd::Folder,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 13892918987247148519964266452470826342,
            },
        ),
        (20000, Action::Sync { device: 0 }),
        (
            900,
            Action::Session {
                device: 0,
                slot: SlotId::Quick,
                saves: 49,
                id: 34838031849257575052166042594037304651,
            },
        ),
        (
            400000,
            Action::ClockJump {
                device: 0,
                by_ms: -21600000,
            },
        ),
        (
            0,
            Action::Session {
                device: 0,
                slot: SlotId::Quick,
                saves: 43,
                id: 264586752706999092306297184704546194948,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// Long-run seed 452648, the model's: device 1's flush of its new profile folder failed, a
/// newer build then wrote its save there, durably, and a power loss in this build's next save
/// took the folder and the newer build's save with it. A newer build flushes the folders to its
/// save as this build does; the model's did not.
#[test]
fn seed_452648_a_newer_builds_save_survives_a_power_loss_after_a_failed_folder_flush() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            5,
            Action::DiskFault {
                device: 1,
                after: 7,
                fault: DiskFault::SyncFails,
            },
        ),
        (
            400000,
            Action::Die {
                device: 1,
                after: 13,
                power: true,
                pick: 15140940396842384476,
                restart: Restart::Clean,
            },
        ),
        (
            400000,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            20000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Manual(0),
                id: 242012218139267961982352290455886524938,
                unreadable: true,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 54081215515727333222692268533424568480,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 1,
            sealed: true,
        },
        &steps,
    );
}

/// Long-run seed 404023, the oracle's: device 0's save B pruned A (no backups) without a
/// folder flush, the disk then cut B's file short, and the player's delete failed before
/// removing anything (a full disk, at the record). The oracle took the delete for done, since
/// no save it could read was left, so when a power loss brought A back below the damaged B,
/// as the fallback a load finds, it took A for a deleted save come back. A delete that leaves
/// any file in the slot did not empty it.
#[test]
fn seed_404023_a_failed_delete_over_a_damaged_save_did_not_empty_the_slot() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(0),
                id: 136614340213199450141809243354969304599,
            },
        ),
        (
            900,
            Action::Autosave {
                device: 2,
                id: 124778255853452288275338147561494577777,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 115103010793640389279292305529833155620,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 281483466148252449267045139740036630989,
            },
        ),
        (
            400000,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 137805726187837677402321587923127355548,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 259479354876770347858755428197400875332,
            },
        ),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 176148492919798705777234992255448523775,
            },
        ),
        (
            900,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(0),
                id: 264040240432368177710804123597538635925,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 7887325691775042384037484164627018232,
            },
        ),
        (
            0,
            Action::DiskFault {
                device: 0,
                after: 23,
                fault: DiskFault::Full { calls: 12 },
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 226402666533029292852716247134401919212,
            },
        ),
        (
            20000,
            Action::Rot {
                device: 0,
                file: 1319590428,
                how: Rot::Truncate(3719157202),
            },
        ),
        (
            20000,
            Action::Delete {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (
            0,
            Action::Die {
                device: 0,
                after: 22,
                power: true,
                pick: 3978322534486734199,
                restart: Restart::Dies {
                    after: 1,
                    power: true,
                    pick: 15052126863558469769,
                },
            },
        ),
        (20000, Action::Sync { device: 0 }),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// Long-run seeds 414391 and 414642: a delete cut short by the process's death (after it
/// removed the slot's saves, before it flushed the folder), the slot empty when the game came
/// back, then a power loss in that session brought the deleted save back. The store flushes
/// its folder when it opens.
#[test]
fn seed_414391_a_delete_cut_short_by_a_crash_stays_done_after_a_power_loss() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            400000,
            Action::Autosave {
                device: 1,
                id: 259548889575146294562022095510237539336,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 80039515198093655156096003019489786827,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 260740922564860969366596873446393029826,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 243884371507180758779233341550263254597,
            },
        ),
        (
            400000,
            Action::Die {
                device: 1,
                after: 33,
                power: false,
                pick: 6660015791813309926,
                restart: Restart::Dies {
                    after: 12,
                    power: true,
                    pick: 14435976243003824352,
                },
            },
        ),
        (900, Action::Quit { device: 1 }),
        (
            400000,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            5,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 191400816480404662134405949078817203156,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 1,
            sealed: true,
        },
        &steps,
    );

    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 324555596216248973810867855661551495715,
            },
        ),
        (
            0,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(0),
                id: 51152302626576219500810772379268401425,
            },
        ),
        (
            20000,
            Action::Die {
                device: 1,
                after: 13,
                power: false,
                pick: 517176528213395876,
                restart: Restart::Fault {
                    after: 7,
                    fault: DiskFault::Full { calls: 12 },
                },
            },
        ),
        (
            900,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            5,
            Action::Die {
                device: 1,
                after: 24,
                power: true,
                pick: 17585700994438094602,
                restart: Restart::Fault {
                    after: 1,
                    fault: DiskFault::SyncFails,
                },
            },
        ),
        (900, Action::Sync { device: 2 }),
        (5, Action::Sync { device: 1 }),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// A save failed at its folder's flush and removed its file again, without a flush; the
/// player deleted the slot (empty, as far as they could tell); a power loss brought the
/// failed save's file back and it headed the deleted slot. A delete of an empty slot flushes
/// the folder, so the emptiness it confirms lasts.
#[test]
fn seed_513651_a_delete_of_an_empty_slot_keeps_a_failed_saves_file_away_after_a_power_loss() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            0,
            Action::Autosave {
                device: 0,
                id: 139836727644803847494907710018362186110,
            },
        ),
        (
            20000,
            Action::Die {
                device: 0,
                after: 44,
                power: true,
                pick: 2258447139961643912,
                restart: Restart::Dies {
                    after: 11,
                    power: false,
                    pick: 7373288893536178549,
                },
            },
        ),
        (
            0,
            Action::DiskFault {
                device: 0,
                after: 18,
                fault: DiskFault::SyncFails,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 110764719392679964374025949038813505267,
            },
        ),
        (
            20000,
            Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
        (400000, Action::Sync { device: 0 }),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}
/// The same defect, as a choice and a damaged head meet it: the save made over the passed
/// over one took a count the line had reached already, and sync placed older saves above
/// it.
#[test]
fn seed_513930_a_save_over_a_passed_over_save_does_not_repeat_its_lines_count() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            400000,
            Action::Autosave {
                device: 0,
                id: 76386367648771767585789126426340520395,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 155966552232898807767169620533103325231,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 162789862210112240947798732990424522560,
            },
        ),
        (900, Action::Sync { device: 0 }),
        (0, Action::Sync { device: 1 }),
        (
            900,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 84008773483782353075822979119221512043,
            },
        ),
        (
            5,
            Action::Rot {
                device: 1,
                file: 3452765135,
                how: Rot::Flip(749973112),
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 273126081404379209362852892561059905752,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 151167055105971188985221230168399096604,
            },
        ),
        (
            400000,
            Action::Die {
                device: 1,
                after: 62,
                power: true,
                pick: 11924204160262347087,
                restart: Restart::Dies {
                    after: 6,
                    power: false,
                    pick: 8762792342161632072,
                },
            },
        ),
        (
            900,
            Action::Autosave {
                device: 1,
                id: 336465325007825985569247451099308635803,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 265736424787904702344020615355036825013,
            },
        ),
        (
            400000,
            Action::Rot {
                device: 1,
                file: 2140743630,
                how: Rot::Flip(2143555712),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// The player chose one save over another device's newest, which the disk then destroyed;
/// an older save of that line, arriving later, headed the slot over their choice. Passing a
/// save over settles what it was made over, as a delete does.
#[test]
fn seed_501703_an_older_save_of_a_line_the_player_passed_over_stays_settled() {
    use super::plan::Action;
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 243469023324921330779612752876052002622,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 271602488799032270792454195678459598751,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 0,
                id: 169398149970307383799210051121977451523,
            },
        ),
        (
            900,
            Action::Rot {
                device: 1,
                file: 6577385,
                how: Rot::Truncate(1161153193),
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 55577575056595955924837702596894766259,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 28216289900808532669740161977508679504,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 138837551635170777266006058132382110007,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 1,
                id: 296280858664353868481169534121629465990,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 263775807086430794078494521239013551882,
            },
        ),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 184954917843903978126181707226381082707,
            },
        ),
        (
            0,
            Action::ClockJump {
                device: 1,
                by_ms: -93600000,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 87901264461555196232093677217568256530,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 99683978577822363523446325881667039134,
            },
        ),
        (400000, Action::UploadDue { device: 0 }),
        (
            400000,
            Action::Delete {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (900, Action::Sync { device: 1 }),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 138184526666212148084972187009358263636,
            },
        ),
        (
            5,
            Action::Rot {
                device: 1,
                file: 3365179252,
                how: Rot::Flip(3111416650),
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 209749173485027102089950523530903238912,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 221069392456380924992182914069099365462,
            },
        ),
        (900, Action::Sync { device: 0 }),
        (0, Action::Sync { device: 1 }),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 304302665650279285751266831503538157452,
            },
        ),
        (
            5,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
        (
            400000,
            Action::Rot {
                device: 1,
                file: 285834772,
                how: Rot::Truncate(3025197606),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}
/// The newest save of a line was destroyed, then pruned by the repair that placed an older
/// one of the line again (0 backups): the next save took the gone save's count, looked older
/// than a save the other device held, and never reached it. The slot's record of what
/// entered it keeps the count the line reached.
#[test]
fn seed_507184_a_save_over_a_repaired_older_save_does_not_repeat_a_gone_newer_ones_count() {
    use super::plan::Action;
    use super::remote::CloudFault;
    let steps = plan(&[
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 198522187506857228775805791455211898020,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 108081877602993085338934903047966298491,
            },
        ),
        (
            900,
            Action::Autosave {
                device: 0,
                id: 277975717310829775952219626887018897149,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 315884680940269501144261918993734835412,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 2944651012283734240865794397878344336,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 230967787591312740375470442120034373833,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 104651538976989768485947516127882634620,
            },
        ),
        (0, Action::Sync { device: 0 }),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 167049009534297492595890639572375661560,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 222153214350748727268948987742921831435,
            },
        ),
        (900, Action::CloudFault(CloudFault::Refuses { calls: 2 })),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 23365580278512687453178842477010876641,
            },
        ),
        (
            5,
            Action::Delete {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (20000, Action::UploadDue { device: 0 }),
        (
            20000,
            Action::Rot {
                device: 0,
                file: 1279364126,
                how: Rot::Truncate(3337628690),
            },
        ),
        (0, Action::Sync { device: 0 }),
        (
            20000,
            Action::DiskFault {
                device: 0,
                after: 29,
                fault: DiskFault::SyncFails,
            },
        ),
        (900, Action::Sync { device: 0 }),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 140772849911565595297171698726694397113,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// Found in the model, not the store: the player deleted a slot whose newest file the disk
/// had destroyed (so no listing named its save), and the oracle then asked the slot to take
/// back a save that destroyed one had been made over. A delete removes the saves of the
/// destroyed files too (`Sim::destroyed_files`).
#[test]
fn seed_505286_a_delete_removes_the_save_of_a_file_the_disk_destroyed() {
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            400000,
            Action::Autosave {
                device: 2,
                id: 43895659429568895356744638312473912914,
            },
        ),
        (
            20000,
            Action::OddFile {
                device: 1,
                name: OddName::Lock(SlotId::Quick),
                odd: Odd::Folder,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 309206422053908881912626139427617590824,
            },
        ),
        (
            0,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 271502266131463566405322912799120535701,
                unreadable: false,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 142504950555565975123381231038270889755,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 242538108933571130805100943508308728508,
            },
        ),
        (20000, Action::Sync { device: 0 }),
        (0, Action::Sync { device: 1 }),
        (
            20000,
            Action::Autosave {
                device: 2,
                id: 138982686911798454955603039397471981622,
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 287846569543668405111827973038429115593,
            },
        ),
        (
            20000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(0),
                id: 73312239822973727441015764006467445850,
                unreadable: true,
            },
        ),
        (0, Action::Sync { device: 2 }),
        (
            20000,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 172849501900442756412344131471777061677,
            },
        ),
        (
            20000,
            Action::Save {
                device: 2,
                slot: SlotId::Quick,
                id: 139077647328653321766889246104961311160,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 2,
                id: 175442926498073543916937115832892970033,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 277157696253225550173195937304796509640,
            },
        ),
        (
            400000,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 166412507628456059759256833747454824071,
            },
        ),
        (
            900,
            Action::Autosave {
                device: 0,
                id: 275430955081117678690365616401726919030,
            },
        ),
        (900, Action::Sync { device: 1 }),
        (
            5,
            Action::Autosave {
                device: 0,
                id: 276565083543829989716544922613385243297,
            },
        ),
        (400000, Action::Sync { device: 2 }),
        (900, Action::Sync { device: 0 }),
        (
            400000,
            Action::Rot {
                device: 0,
                file: 2837261062,
                how: Rot::Truncate(3468029435),
            },
        ),
        (
            900,
            Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}
/// This device's clock ran hours behind. Another device's save came in and headed; the disk
/// destroyed its file, the player saved over the slot, and sync's repair brought the other
/// device's save back on top by its clock. The player's save records the saves it was made
/// over while their files did not read (`keepsake.over_unread`).
#[test]
fn seed_129_a_repaired_save_does_not_head_over_the_save_made_while_it_did_not_read() {
    use super::plan::Action;
    let steps = plan(&[
        (
            900,
            Action::Autosave {
                device: 0,
                id: 71348857502643040489235711345521309828,
            },
        ),
        (
            400000,
            Action::ClockJump {
                device: 1,
                by_ms: -21600000,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 137650879815986798303205942769647892813,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 150189658913133543818373555026311284660,
            },
        ),
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 4989033577024703620088514567250349027,
            },
        ),
        (
            900,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(1),
                id: 179696263135859214520684596541661932551,
                unreadable: true,
            },
        ),
        (
            20000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 34368742021702319440219296668745484173,
                unreadable: true,
            },
        ),
        (
            400000,
            Action::Autosave {
                device: 1,
                id: 8335630306199522327635847494788758405,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 27273301854373790333953786722842320265,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 1,
                id: 67374394369052975945293333871314467634,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 126604521009005633874716381088667918899,
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 143604023327648138208496200881567803613,
                unreadable: false,
            },
        ),
        (20000, Action::Sync { device: 0 }),
        (20000, Action::Sync { device: 1 }),
        (
            0,
            Action::DiskFault {
                device: 1,
                after: 38,
                fault: DiskFault::Full { calls: 18 },
            },
        ),
        (400000, Action::Sync { device: 1 }),
        (
            400000,
            Action::Rot {
                device: 1,
                file: 2259771877,
                how: Rot::Truncate(1981349817),
            },
        ),
        (
            0,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
        (
            20000,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 290120183381759521867400178871387782053,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}
/// Found in the model: a save that failed left its file, and the oracle learned from it only
/// what the store adds to a save's record of what it was made in view of, not the saves it
/// was made over while their files did not read (`keepsake.over_unread`): it took the file
/// for a misread.
#[test]
fn seed_520073_a_failed_saves_record_of_what_it_was_saved_over_is_learned() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 196067415044391711223038927536106447883,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (
            5,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(1),
                id: 135871082005888112257555077138844488974,
                unreadable: true,
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 283264144632612426210561468284619276323,
            },
        ),
        (
            400000,
            Action::Autosave {
                device: 0,
                id: 26069929033071338950251098774553473937,
            },
        ),
        (
            0,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(1),
                id: 193985071443070655459221544649411320994,
                unreadable: true,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 13895432336761756115955947468075124159,
            },
        ),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 241639954260908685939997787065430186812,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 1,
                id: 155950887556387218336792138815050778805,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 311563304864807089363277074998781551926,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 246805751696522973222573930106404179442,
            },
        ),
        (
            20000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Quick,
                id: 2959413013839649689021539905527681812,
                unreadable: false,
            },
        ),
        (
            900,
            Action::Rot {
                device: 0,
                file: 3327423142,
                how: Rot::Flip(1678594978),
            },
        ),
        (
            0,
            Action::Die {
                device: 0,
                after: 57,
                power: false,
                pick: 2014635779938771847,
                restart: Restart::Fault {
                    after: 2,
                    fault: DiskFault::Full { calls: 7 },
                },
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(0),
                id: 181131837188772657623299282173635260033,
                unreadable: true,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 164359249620021996579349683580174770145,
            },
        ),
        (
            900,
            Action::Autosave {
                device: 0,
                id: 232779617061030758762579084660673042103,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// A device's clock went six hours back; the disk destroyed its quicksave's file, and a
/// newer build saved over the slot. The other device kept the older save on top by the
/// clocks, the player's newest only a conflict's hidden side. The newer build's save records
/// the save it was made over (`keepsake.over_unread`), and heads there.
#[test]
fn seed_433020_a_save_made_over_a_destroyed_save_heads_over_it_on_other_devices() {
    use super::plan::Action;
    let steps = plan(&[
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 194337063302764227823249109873179727167,
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 74063584896184573740407780373845239442,
                unreadable: true,
            },
        ),
        (900, Action::Sync { device: 1 }),
        (
            0,
            Action::ClockJump {
                device: 1,
                by_ms: -21600000,
            },
        ),
        (
            900,
            Action::Rot {
                device: 1,
                file: 2545946404,
                how: Rot::Flip(551116002),
            },
        ),
        (
            0,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Quick,
                id: 55389246849610901942435124670736351890,
                unreadable: false,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}
/// The player chose their save over another device's; the disk then damaged the chosen
/// save's copy and destroyed the save they made after it. Sync placed the chosen save again
/// from the cloud, below the save the player had passed over (the only one that still
/// verified, and newer by the clocks), which then headed the slot.
#[test]
fn seed_520967_a_repaired_choice_heads_over_the_save_the_player_passed_over() {
    use super::plan::Action;
    let steps = plan(&[
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 23959210881290157187592876067497964669,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 307209720248648759188429912762899339085,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 241626633521487702901259812448716584126,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 148840500632448672413344891073628763037,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            400000,
            Action::Autosave {
                device: 0,
                id: 207881330999481328472690688030124789799,
            },
        ),
        (20000, Action::Sync { device: 0 }),
        (
            0,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (
            0,
            Action::Rot {
                device: 0,
                file: 3959067848,
                how: Rot::Flip(898878295),
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 51291931814565512523583164209856150120,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 0,
                id: 222030831128579974348482950289830387305,
            },
        ),
        (
            900,
            Action::Rot {
                device: 0,
                file: 1260989146,
                how: Rot::Flip(3309500100),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 531876 (150 steps): a save's entry in the slot's record of what entered it
/// failed (a disk fault); its file was truncated later and the player deleted the slot; the
/// delete did not name it, and once the sync state was lost the cloud brought it back into
/// the emptied slot. Every later write of the record names the saves the slot holds.
#[test]
fn seed_531876_a_save_whose_entry_failed_comes_back_into_the_slot_the_player_deleted() {
    use super::plan::Action;
    let steps = plan(&[
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 120834156964218196302835344582034795346,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 145354167211128384771107817969904615259,
            },
        ),
        (
            5,
            Action::DiskFault {
                device: 1,
                after: 28,
                fault: DiskFault::SyncFails,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 334734912821882526122451988428412161637,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 337517698624483764008202849506957771071,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 275414958965337185955971861653998726190,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 42537561915688149537922399264323604252,
            },
        ),
        (
            400000,
            Action::Autosave {
                device: 0,
                id: 286711347592073474246420394426051647669,
            },
        ),
        (0, Action::Sync { device: 0 }),
        (900, Action::Sync { device: 1 }),
        (
            20000,
            Action::Rot {
                device: 1,
                file: 106293340,
                how: Rot::Truncate(1799144807),
            },
        ),
        (
            0,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            400000,
            Action::LoseState {
                device: 1,
                garble: false,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 526044 (150 steps): a 52-save session uploaded, the newest file's payload
/// truncated (its metadata still reads), and the process killed during a delete of the slot
/// after it removed two older files. The record of deleted saves stayed as the delete wrote
/// it (naming the saves left too: `note_delete_stopped` never ran), so sync never repaired the
/// damaged newest save left, and the slot loaded the one below it while another device headed
/// with the intact copy. The delete's note (`<slot>.deleting`) now settles the record at the
/// next start.
#[test]
fn seed_526044_a_delete_killed_part_way_leaves_a_damaged_survivor_unrepaired() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            900,
            Action::Session {
                device: 0,
                slot: SlotId::Quick,
                saves: 52,
                id: 57064042738352468708225742211374820156,
            },
        ),
        (5, Action::UploadDue { device: 0 }),
        (
            400000,
            Action::Rot {
                device: 0,
                file: 3514578167,
                how: Rot::Truncate(2209639330),
            },
        ),
        (
            900,
            Action::Die {
                device: 0,
                after: 18,
                power: false,
                pick: 7978795758110897766,
                restart: Restart::Fault {
                    after: 9,
                    fault: DiskFault::IoError,
                },
            },
        ),
        (
            5,
            Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 529920 (150 steps): a device's newest autosave (which had superseded the
/// device's older one) did not read, and its next autosave was made over it, in a new line;
/// another device whose slot is jammed (a folder under its lock name) kept showing the
/// oldest. The save made over the unread one names both in `keepsake.over_unread`, and the
/// oracle now counts what a save was made over as held before it.
#[test]
fn seed_529920_a_save_made_over_an_unread_file_reaches_what_that_file_superseded() {
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            900,
            Action::Autosave {
                device: 1,
                id: 260943612875050885132427152278102705555,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 135642405085264707296125430171646004101,
            },
        ),
        (
            900,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(1),
                id: 70966062356248402160585022192877126892,
            },
        ),
        (400000, Action::Sync { device: 1 }),
        (900, Action::Sync { device: 0 }),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 230729729948034838279509327948288325968,
            },
        ),
        (
            900,
            Action::Save {
                device: 2,
                slot: SlotId::Manual(0),
                id: 107024346763598064707769145363386551691,
            },
        ),
        (0, Action::Sync { device: 2 }),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 221498104622494077162828036384039575233,
            },
        ),
        (
            20000,
            Action::Autosave {
                device: 0,
                id: 307259149936045767752127697771847128906,
            },
        ),
        (0, Action::Sync { device: 0 }),
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 273209668721933177505576609216224882553,
            },
        ),
        (
            900,
            Action::OddFile {
                device: 2,
                name: OddName::Lock(SlotId::Auto(0)),
                odd: Odd::Folder,
            },
        ),
        (400000, Action::Sync { device: 1 }),
        (
            900,
            Action::Rot {
                device: 1,
                file: 2571794624,
                how: Rot::Truncate(4187106250),
            },
        ),
        (
            5,
            Action::Autosave {
                device: 1,
                id: 127265933788809454403817398321972410240,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 3,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 542173 (150 steps): another device's save in the slot stopped reading, the
/// player saved over it (naming it as made over, unread), a later save pruned its file, and
/// the player deleted the slot with every file reading. The delete did not name the unread
/// save, and once the sync state was garbled the cloud brought it back into the emptied slot.
#[test]
fn seed_542173_a_save_the_slot_held_unread_comes_back_after_a_delete() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            5,
            Action::Autosave {
                device: 1,
                id: 229637356183904222049359300366934851074,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 193867643853099465093985065476861012430,
            },
        ),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 317871436572163566178838907276192562842,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 55504720302467296421252787761405009321,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (20000, Action::Sync { device: 1 }),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 182080681176596644702759994659056560399,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 306580546004088878174268794256359726564,
            },
        ),
        (
            400000,
            Action::LoseState {
                device: 1,
                garble: true,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (
            900,
            Action::Die {
                device: 1,
                after: 68,
                power: true,
                pick: 8676634898260118199,
                restart: Restart::Dies {
                    after: 11,
                    power: false,
                    pick: 13512569673126752557,
                },
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 46081339508738481312010870304403866844,
            },
        ),
        (
            20000,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 322234241522168980443697824034696884194,
            },
        ),
        (
            5,
            Action::Rot {
                device: 1,
                file: 4060454143,
                how: Rot::Flip(3997402445),
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 242431313082842588592051580427533215315,
            },
        ),
        (
            400000,
            Action::DiskFault {
                device: 1,
                after: 14,
                fault: DiskFault::SyncFails,
            },
        ),
        (
            5,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 308877357430170914345997120701229870975,
            },
        ),
        (
            20000,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}
/// Simulator seed 545099 (150 steps), open: an import placed its file and a power loss took
/// its entry in the slot's record of what entered it (the disk full on the restart), the
/// file was truncated past its metadata before the next sync round, and the player deleted
/// the slot: the delete could not name the save, and sync brought it back into the emptied
/// slot. An import whose entry cannot be written now takes its file out and fails, and its
/// entry is flushed with the folder; the window between the file and its entry is left
/// (closing it needs the entry written first, marked as not yet placed). Since stop 63 these
/// steps pass only because the delete's note moved the disk's faults to other calls.
#[test]
#[ignore = "open: a power loss between an import's file and its entry (see the doc)"]
fn seed_545099_an_import_whose_entry_failed_comes_back_after_a_delete() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (5, Action::Sync { device: 0 }),
        (
            400000,
            Action::Die {
                device: 0,
                after: 41,
                power: true,
                pick: 1160282935071573360,
                restart: Restart::Fault {
                    after: 10,
                    fault: DiskFault::Full { calls: 16 },
                },
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 261917936882725587992953825588722455669,
            },
        ),
        (900, Action::Quit { device: 0 }),
        (5, Action::Sync { device: 1 }),
        (900, Action::Sync { device: 0 }),
        (
            900,
            Action::Rot {
                device: 0,
                file: 418096453,
                how: Rot::Truncate(3333020053),
            },
        ),
        (
            900,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (
            400000,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
        (
            400000,
            Action::Autosave {
                device: 0,
                id: 255233981284959868818871402829141018311,
            },
        ),
        (
            5,
            Action::Delete {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 532031 (150 steps), open: the player chose their save over another
/// device's (copied on top, its old copy left below by an interrupted promotion), the copy on
/// top was damaged, the delete that followed failed, and a save with 1 backup pruned the
/// chosen save's old copy, keeping the passed-over one; when the disk then destroyed that
/// save, the slot fell back to the save the player had passed over. A prune that keeps the
/// chosen save before a passed-over one (read from the record of deleted saves) would close
/// it; not built yet.
#[test]
#[ignore = "open: a prune keeps the passed-over save over the chosen one's copy (see the doc)"]
fn seed_532031_a_prune_keeps_the_passed_over_save_over_the_chosen_one() {
    use super::plan::{Action, OddName, Restart};
    let steps = plan(&[
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 108941349738817016005604892351401438201,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 267661852264085993690654398315006826186,
            },
        ),
        (
            900,
            Action::Rot {
                device: 0,
                file: 1231729496,
                how: Rot::Flip(3892830102),
            },
        ),
        (
            5,
            Action::Autosave {
                device: 1,
                id: 37933567964124220994737973571131720201,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 277612946858074101445206966040866034283,
            },
        ),
        (
            900,
            Action::DiskFault {
                device: 0,
                after: 22,
                fault: DiskFault::Full { calls: 2 },
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 66015878144325966949959745683880432178,
            },
        ),
        (900, Action::Sync { device: 0 }),
        (900, Action::Sync { device: 1 }),
        (
            5,
            Action::DiskFault {
                device: 1,
                after: 37,
                fault: DiskFault::IoError,
            },
        ),
        (
            20000,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 1,
                slot: SlotId::Manual(0),
                id: 330159507246020515868803109848618034911,
                unreadable: true,
            },
        ),
        (
            400000,
            Action::Die {
                device: 1,
                after: 61,
                power: false,
                pick: 5776427486708480894,
                restart: Restart::Fault {
                    after: 1,
                    fault: DiskFault::SyncFails,
                },
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 23807733600627901464291463601918907574,
            },
        ),
        (
            20000,
            Action::ChooseOther {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            5,
            Action::Rot {
                device: 1,
                file: 1956736288,
                how: Rot::Truncate(3506555106),
            },
        ),
        (
            900,
            Action::Die {
                device: 1,
                after: 25,
                power: true,
                pick: 9300714667766634133,
                restart: Restart::Dies {
                    after: 9,
                    power: true,
                    pick: 3940931814807938715,
                },
            },
        ),
        (20000, Action::Quit { device: 1 }),
        (
            5,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(1),
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 231195685733273678243806026781228918062,
            },
        ),
        (
            0,
            Action::OddFile {
                device: 1,
                name: OddName::Generation {
                    slot: SlotId::Manual(1),
                    generation: 4,
                },
                odd: Odd::Fifo,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: false,
        },
        &steps,
    );
}

/// Simulator seed 564678 (150 steps): another device's two saves; the newer arrived (the
/// older, superseded, was not placed), its file was then damaged, and the player deleted the
/// slot: the delete named the damaged save through the slot's record of what entered it, but
/// not the older save of its line, which the cloud then placed in the emptied slot. The
/// record's line counts go into the record of deleted saves too.
#[test]
fn seed_564678_an_older_save_of_a_deleted_unread_saves_line_comes_back() {
    use super::plan::Action;
    use super::remote::CloudFault;
    let steps = plan(&[
        (0, Action::CloudFault(CloudFault::LostAnswer)),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 236461123988726194278389785132657511792,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 120408922093677604591469879163279921798,
            },
        ),
        (5, Action::Sync { device: 0 }),
        (0, Action::Sync { device: 1 }),
        (
            400000,
            Action::Rot {
                device: 1,
                file: 3084357608,
                how: Rot::Truncate(1533111436),
            },
        ),
        (
            900,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: true,
        },
        &steps,
    );
}

/// Long-run seed 562392 (150 steps): a device's long session (52 saves) of a slot whose first
/// save had reached the other device; the newest file truncated, the clock a day back, and the
/// player saved over it. The save named the session's newest 16 saves as made over, not the
/// first; its line started again, and the other device kept the older save on top, the
/// player's newest only a conflict. The save now carries how far each line went in the slot
/// (`keepsake.over_unread`'s `@` entries).
#[test]
fn seed_562392_a_save_over_a_long_lost_session_heads_over_its_first_save_elsewhere() {
    use super::plan::Action;
    let steps = plan(&[
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 101120904312933519628442116396241066006,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            20000,
            Action::Session {
                device: 1,
                slot: SlotId::Manual(1),
                saves: 52,
                id: 302958690227204684706412595726674417177,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 197921293966962214352495147514707404578,
            },
        ),
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 238794151003583375609791461064718690493,
            },
        ),
        (
            20000,
            Action::Rot {
                device: 1,
                file: 1064371454,
                how: Rot::Truncate(117750481),
            },
        ),
        (
            20000,
            Action::ClockJump {
                device: 1,
                by_ms: -93600000,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 120064235494074504223229310911926748076,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// Long-run seed 542991 (150 steps): as seed 562392, and the player had chosen the head on the
/// receiving device (a conflict settled there, long before): the rule that a save made over
/// another heads was off while a choice stood, and the clocks, a day apart, kept the older
/// save on top. A save made over the head comes after it, whatever was chosen there.
#[test]
fn seed_542991_a_save_made_over_the_chosen_head_heads_there() {
    use super::plan::Action;
    let steps = plan(&[
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 160491445124849509716905630658025144664,
            },
        ),
        (20000, Action::Sync { device: 1 }),
        (
            5,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            0,
            Action::Session {
                device: 1,
                slot: SlotId::Quick,
                saves: 59,
                id: 121414630435581675534696917692420280276,
            },
        ),
        (0, Action::Sync { device: 1 }),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 195046102994974478654723374346159912667,
            },
        ),
        (20000, Action::Sync { device: 0 }),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 36460307687406543575366721397781429323,
            },
        ),
        (
            400000,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
        (
            400000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Quick,
                id: 329271114614080929619817557849147617437,
                unreadable: false,
            },
        ),
        (
            400000,
            Action::ClockJump {
                device: 1,
                by_ms: -21600000,
            },
        ),
        (400000, Action::Sync { device: 0 }),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 123668144589418937232485973549133066145,
            },
        ),
        (900, Action::Sync { device: 1 }),
        (
            0,
            Action::Session {
                device: 1,
                slot: SlotId::Quick,
                saves: 55,
                id: 296232625166849581808836602080344888649,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 168709898188018169375521571457842299425,
            },
        ),
        (
            900,
            Action::Rot {
                device: 1,
                file: 1493222239,
                how: Rot::Truncate(2321064072),
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 278996286399431960932570651807854538893,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: false,
        },
        &steps,
    );
}
/// Long-run seed 582649 (150 steps): a delete whose folder flush failed (the disk restarted
/// with flushes failing after a power loss) named the slot's save in the record of deleted
/// saves, as removed, though its removal did not last; the save came back with the next
/// start, and sync, taking it for one the player deleted, hid its conflict with another
/// device's save that headed over it. The delete's note (`<slot>.deleting`) outlived the
/// record's failed rewrite, and the next start settled the record to what was removed.
#[test]
fn seed_582649_a_delete_whose_removal_did_not_last_leaves_its_save_the_players() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 94368723584677585443471959965865687713,
            },
        ),
        (
            400000,
            Action::ClockJump {
                device: 1,
                by_ms: 3600000,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 279226029993729750266381305604507138504,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 54245689433567030387567678336917434750,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 130231384337513962045378328559986927454,
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 64545109844865584711207433783708545829,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (
            20000,
            Action::Die {
                device: 0,
                after: 19,
                power: true,
                pick: 11392690224588410945,
                restart: Restart::Fault {
                    after: 10,
                    fault: DiskFault::SyncFails,
                },
            },
        ),
        (
            400000,
            Action::Delete {
                device: 0,
                slot: SlotId::Manual(0),
            },
        ),
        (
            5,
            Action::Session {
                device: 0,
                slot: SlotId::Manual(1),
                saves: 53,
                id: 282583297881450191919350029019235061733,
            },
        ),
        (
            5,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}
/// Long-run seed 555464 (150 steps): the player saved over the device's own save whose file
/// did not read (named in `keepsake.over_unread`); a sync round then placed a third device's
/// older save (by the clocks) on top, and the repair of the unread save, measured against
/// that head only, headed over both. A save the slot holds was made over it: it does not head.
#[test]
fn seed_555464_a_repaired_save_does_not_head_over_the_save_made_over_it() {
    use super::plan::Action;
    use super::remote::CloudFault;
    let steps = plan(&[
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 256097032559823707153491752276977539562,
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 235906279035794790522260098836248333117,
            },
        ),
        (
            400000,
            Action::Delete {
                device: 1,
                slot: SlotId::Quick,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 67787356383840313989776103152495322528,
            },
        ),
        (
            400000,
            Action::ClockJump {
                device: 1,
                by_ms: -21600000,
            },
        ),
        (20000, Action::CloudFault(CloudFault::Refuses { calls: 2 })),
        (400000, Action::Sync { device: 1 }),
        (900, Action::UploadDue { device: 0 }),
        (20000, Action::Sync { device: 1 }),
        (
            20000,
            Action::Autosave {
                device: 1,
                id: 205841376059604872645871826128481156114,
            },
        ),
        (
            5,
            Action::LoseState {
                device: 1,
                garble: false,
            },
        ),
        (
            900,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 33040630663540970522684518370475976383,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 175319118102312618116525841825000821228,
            },
        ),
        (
            0,
            Action::Rot {
                device: 1,
                file: 4114436607,
                how: Rot::Flip(2488229611),
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 150444491404788021291816067991979383285,
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: true,
        },
        &steps,
    );
}
/// The process died in the player's choice after the chosen save's copy landed, before the
/// save it passed over was named; the disk then destroyed the save made over the choice (0
/// backups), and the slot fell back to the save turned down, placed again from the cloud and
/// heading by the clocks (the store's choice now writes a note first: `choosing.rs`).
#[test]
fn seed_614680_a_choice_cut_short_still_names_the_save_it_passed_over() {
    use super::plan::{Action, Restart};
    use super::remote::CloudFault;
    let steps = plan(&[
        (
            900,
            Action::Autosave {
                device: 1,
                id: 165158690371191807617736916061288950600,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 163542026926531912473453854413323718045,
            },
        ),
        (
            5,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 44305611848406626569132541599047782362,
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 200304695775478475922598737136039325376,
            },
        ),
        (400000, Action::UploadDue { device: 1 }),
        (0, Action::CloudFault(CloudFault::LostAnswer)),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 50139908137552554491794138466921584985,
            },
        ),
        (400000, Action::Sync { device: 0 }),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 3820265015095927549551196187978886693,
            },
        ),
        (
            5,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 57611180249958454991848889849739343812,
            },
        ),
        (900, Action::Sync { device: 0 }),
        (
            900,
            Action::Die {
                device: 0,
                after: 28,
                power: true,
                pick: 17550301560958381128,
                restart: Restart::Dies {
                    after: 10,
                    power: false,
                    pick: 18270225695448078103,
                },
            },
        ),
        (
            900,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Manual(1),
            },
        ),
        (
            900,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 87328253713160394386798841346920981163,
            },
        ),
        (
            5,
            Action::Autosave {
                device: 0,
                id: 324052958734273259185719308316588721538,
            },
        ),
        (
            900,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Quick,
                id: 242422178793266856273694451662652700694,
                unreadable: true,
            },
        ),
        (
            400000,
            Action::Rot {
                device: 0,
                file: 4208810524,
                how: Rot::Flip(3207130096),
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 332574550409586000713047292382605807849,
            },
        ),
        (
            20000,
            Action::Die {
                device: 0,
                after: 2,
                power: false,
                pick: 11128740714683308464,
                restart: Restart::Dies {
                    after: 9,
                    power: true,
                    pick: 16962188354989527589,
                },
            },
        ),
        (
            20000,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Quick,
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 131576070099524810642487800472490103125,
            },
        ),
        (
            0,
            Action::Rot {
                device: 0,
                file: 3253399622,
                how: Rot::Truncate(1862575633),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 0,
            sealed: true,
        },
        &steps,
    );
}
/// The player passed a save over, then chose it back, made a save over it and the disk
/// destroyed that save: the slot falls back to its backup, the save chosen back (the
/// oracle had kept counting it as passed over).
#[test]
fn seed_610723_a_save_chosen_back_is_a_backup_again() {
    use super::plan::{Action, Restart};
    let steps = plan(&[
        (
            0,
            Action::DiskFault {
                device: 1,
                after: 6,
                fault: DiskFault::Full { calls: 15 },
            },
        ),
        (0, Action::Sync { device: 1 }),
        (
            900,
            Action::Autosave {
                device: 1,
                id: 299626329756841303645157800134322434755,
            },
        ),
        (
            400000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(1),
                id: 60093680147800157634594135344053011520,
            },
        ),
        (
            20000,
            Action::Autosave {
                device: 0,
                id: 69400999979777122401268374301999511429,
            },
        ),
        (
            0,
            Action::Save {
                device: 1,
                slot: SlotId::Quick,
                id: 194632968016212164195351468384766273327,
            },
        ),
        (
            0,
            Action::Save {
                device: 0,
                slot: SlotId::Quick,
                id: 219705899738844843482905034073213817183,
            },
        ),
        (
            20000,
            Action::Autosave {
                device: 0,
                id: 38432663833161832266683408818549772744,
            },
        ),
        (
            0,
            Action::Session {
                device: 0,
                slot: SlotId::Manual(1),
                saves: 60,
                id: 79931218385689115852479413720971902042,
            },
        ),
        (
            20000,
            Action::Session {
                device: 0,
                slot: SlotId::Manual(0),
                saves: 55,
                id: 309739918547318092150600065451836956420,
            },
        ),
        (
            0,
            Action::Autosave {
                device: 0,
                id: 179431437247349209417306993023285328103,
            },
        ),
        (5, Action::Sync { device: 1 }),
        (20000, Action::Sync { device: 0 }),
        (
            5,
            Action::Die {
                device: 0,
                after: 77,
                power: true,
                pick: 4607503746749616417,
                restart: Restart::Dies {
                    after: 2,
                    power: true,
                    pick: 1698227038721118410,
                },
            },
        ),
        (0, Action::Sync { device: 0 }),
        (
            20000,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Manual(1),
            },
        ),
        (
            5,
            Action::Autosave {
                device: 1,
                id: 82177049787531212967706184976256016535,
            },
        ),
        (
            0,
            Action::Rot {
                device: 0,
                file: 2366243318,
                how: Rot::Truncate(2581890043),
            },
        ),
        (
            900,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Manual(0),
                id: 18116382305850217016252080676036939624,
                unreadable: true,
            },
        ),
        (0, Action::Sync { device: 0 }),
        (
            20000,
            Action::NewerBuild {
                device: 0,
                slot: SlotId::Quick,
                id: 160816824921051974906880543626373866549,
                unreadable: true,
            },
        ),
        (400000, Action::Sync { device: 1 }),
        (900, Action::Sync { device: 0 }),
        (
            400000,
            Action::ChooseOther {
                device: 0,
                slot: SlotId::Manual(1),
            },
        ),
        (
            20000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(1),
                id: 38327474126131460789759456154707254852,
            },
        ),
        (
            20000,
            Action::Rot {
                device: 0,
                file: 1578230038,
                how: Rot::Truncate(531813308),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 1,
            sealed: true,
        },
        &steps,
    );
}
/// A delete over a record of deleted saves this user may not read failed at its record's
/// write (a full disk), and its note could never be settled: the settle read that record and
/// refused. Every write of the slot ran with the note unsettled, and the saves it named were
/// hidden (the save, confirmed, never shown again). The settle now rebuilds such a record
/// from the note.
#[test]
fn seed_640027_a_dead_delete_over_an_unreadable_record_is_settled() {
    use super::disk::Odd;
    use super::plan::{Action, OddName};
    let steps = plan(&[
        (
            900,
            Action::OddFile {
                device: 1,
                name: OddName::Deleted(SlotId::Manual(0)),
                odd: Odd::Unreadable,
            },
        ),
        (
            20000,
            Action::Save {
                device: 1,
                slot: SlotId::Manual(0),
                id: 207657331771632499265179844992600143736,
            },
        ),
        (
            5,
            Action::LoseState {
                device: 1,
                garble: false,
            },
        ),
        (
            900,
            Action::DiskFault {
                device: 1,
                after: 32,
                fault: DiskFault::Full { calls: 15 },
            },
        ),
        (
            400000,
            Action::Save {
                device: 0,
                slot: SlotId::Manual(0),
                id: 291199675803287405883335227426464162993,
            },
        ),
        (
            20000,
            Action::Delete {
                device: 1,
                slot: SlotId::Manual(0),
            },
        ),
    ]);
    assert_holds(
        Config {
            devices: 2,
            backups: 3,
            sealed: false,
        },
        &steps,
    );
}
