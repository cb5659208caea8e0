//! Cloud saves against a real S3-compatible server (moto, started per test on a free port):
//! two devices sharing one bucket, a server stopped mid-upload, HTTP 500s and slow answers,
//! damaged and forged remote files, and a game quitting with uploads pending.

mod durability;
mod lineage;
mod listing;
mod moto;
mod moto_install;
mod plugin;
mod power_loss;
mod proxy;
mod quoted_credentials;
mod seal;
mod state_file;
mod sync_safety;

use crate::common::{crc_fixup, fixtures, real_world};
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::{self, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use bevy_keepsake::cloud::{
    Connection, Remote, RemoteName, RequestPolicy, SlotSync, SyncCore, SyncRound,
};
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, Timestamp, WorldState};
use bevy_keepsake::snapshot;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use moto::Moto;
use proxy::{Fault, Proxy};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use uuid::Uuid;

const BUCKET: &str = "saves";
const GAME: &str = "cloud-test";

/// The `s3://` URL of the test bucket behind `endpoint`.
fn url(endpoint: &str) -> String {
    format!(
        "s3://{BUCKET}/games?endpoint={endpoint}&region=us-east-1&access_key_id=test&secret_access_key=test"
    )
}

/// Requests that fail fast: no client retries (the sync's own queue retries), short timeouts.
fn quick_policy() -> RequestPolicy {
    RequestPolicy {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        retries: 0,
    }
}

/// A game-shaped world captured for real, so downloaded saves pass the blob checks.
fn world_bundle() -> SaveBundle {
    static BUNDLE: OnceLock<SaveBundle> = OnceLock::new();
    BUNDLE
        .get_or_init(|| {
            let mut app = real_world::app();
            real_world::populate(app.world_mut(), 40);
            let captured = snapshot::capture(app.world_mut()).expect("capture");
            SaveBundle::new(WorldState {
                tick: 7,
                ecs_blob: captured.blob,
                state_hash: captured.state_hash,
            })
        })
        .clone()
}

/// One installation: its own save folder, sync state and runtime, sharing the bucket.
struct Device {
    _dir: tempfile::TempDir,
    store: Arc<SlotStore>,
    core: SyncCore,
    runtime: tokio::runtime::Runtime,
}

impl Device {
    fn new(endpoint: &str, name: &str) -> Device {
        Device::with_policy(endpoint, name, quick_policy())
    }

    fn with_policy(endpoint: &str, name: &str, policy: RequestPolicy) -> Device {
        let dir = tempfile::tempdir().unwrap();
        Device::in_folder(dir, endpoint, name, policy)
    }

    fn in_folder(
        dir: tempfile::TempDir,
        endpoint: &str,
        name: &str,
        policy: RequestPolicy,
    ) -> Device {
        Device::configured(dir, endpoint, name, policy, |config| config)
    }

    /// A device whose store keeps `backups` (the default keeps 3).
    fn with_backups(endpoint: &str, name: &str, backups: u16) -> Device {
        let dir = tempfile::tempdir().unwrap();
        let policy = quick_policy();
        Device::configured(dir, endpoint, name, policy, |config| {
            config.backups(backups)
        })
    }

    /// A device whose store is set up by `configure` from the default configuration.
    fn configured(
        dir: tempfile::TempDir,
        endpoint: &str,
        name: &str,
        policy: RequestPolicy,
        configure: impl FnOnce(StoreConfig) -> StoreConfig,
    ) -> Device {
        let config = configure(StoreConfig::new(dir.path()));
        let remote = Remote::open(&url(endpoint), GAME, "default", &policy).unwrap();
        Device::on_remote(dir, config, remote, name)
    }

    /// A device whose store is set up by `config`, syncing with `remote` (any store: memory, a
    /// fault-injecting wrapper).
    fn on_remote(
        dir: tempfile::TempDir,
        config: StoreConfig,
        remote: Remote,
        name: &str,
    ) -> Device {
        let store = Arc::new(SlotStore::open(config).unwrap());
        let (core, damaged) = SyncCore::open(store.clone(), remote, name);
        assert!(damaged.is_none());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Device {
            _dir: dir,
            store,
            core,
            runtime,
        }
    }

    /// A durable save of the game-shaped world, queued for upload (as the plugin does).
    fn save(&mut self, slot: SlotId) -> Uuid {
        self.save_at(slot, Timestamp::now())
    }

    /// [`save`](Self::save) with a given creation time.
    fn save_at(&mut self, slot: SlotId, created_at: Timestamp) -> Uuid {
        let meta = SaveMeta {
            created_at,
            ..SaveMeta::new(slot).with_title("camp")
        };
        let meta = self.core.stamp(meta);
        let receipt = self.store.save(slot, meta, &world_bundle()).unwrap();
        self.core.note_save(slot, receipt.save_id).unwrap();
        receipt.save_id
    }

    fn upload(&mut self) -> SyncRound {
        self.runtime.block_on(self.core.upload_due())
    }

    fn sync(&mut self) -> SyncRound {
        self.runtime.block_on(self.core.sync())
    }

    /// Every local save's id, by slot.
    fn ids(&self) -> BTreeMap<SlotId, BTreeSet<Uuid>> {
        let mut ids: BTreeMap<SlotId, BTreeSet<Uuid>> = BTreeMap::new();
        for save in self.store.saves().unwrap() {
            ids.entry(save.slot).or_default().insert(save.meta.save_id);
        }
        ids
    }

    /// The generations of `slot`, for a failure message: generation, save id, creation time,
    /// device.
    fn describe(&self, slot: SlotId) -> String {
        let saves = self.store.saves().unwrap().into_iter();
        let lines: Vec<String> = saves
            .filter(|save| save.slot == slot)
            .map(|save| {
                let meta = &save.meta;
                let device = meta.device_name().unwrap_or("-");
                let created = meta.created_at.unix_millis();
                format!(
                    "g{} {} at {created} by {device}",
                    save.generation, meta.save_id
                )
            })
            .collect();
        lines.join(", ")
    }

    /// The save heading `slot`.
    fn head(&self, slot: SlotId) -> SaveMeta {
        self.store.load(slot).unwrap().meta
    }
}

/// Object names in the profile folder.
fn remote_names(device: &Device, endpoint: &str) -> Vec<String> {
    let remote = Remote::open(&url(endpoint), GAME, "default", &quick_policy()).unwrap();
    device.runtime.block_on(async {
        let listing = remote
            .store()
            .list_with_delimiter(Some(remote.folder()))
            .await
            .unwrap();
        listing
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_owned))
            .collect()
    })
}

/// Two devices play at once, each saving a shared slot and one of its own four times, syncing
/// after each: every save reaches the cloud, and both devices end with the same heads, the
/// newest save of each slot. Under the default backups (3) and 0, each keeps what its backups
/// allow; with room for every save (32), both hold every save.
#[test]
fn two_devices_saving_the_same_and_different_slots_end_with_every_save_on_both() {
    for backups in [3, 0, 32] {
        two_devices_play(backups);
    }
}

fn two_devices_play(backups: u16) {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut desktop = Device::with_backups(&endpoint, "desktop", backups);
    let mut laptop = Device::with_backups(&endpoint, "laptop", backups);

    let play = |device: &mut Device, own: SlotId| {
        let mut made = Vec::new();
        for round in 0..4 {
            made.push(device.save(SlotId::Manual(0)));
            made.push(device.save(own));
            let uploaded = device.upload();
            assert_eq!(uploaded.error, None, "round {round}: {uploaded:?}");
            let synced = device.sync();
            assert_eq!(synced.error, None, "round {round}: {synced:?}");
        }
        made
    };
    let (from_desktop, from_laptop) = std::thread::scope(|scope| {
        let desktop = scope.spawn(|| play(&mut desktop, SlotId::Manual(1)));
        let laptop = scope.spawn(|| play(&mut laptop, SlotId::Manual(2)));
        (desktop.join().unwrap(), laptop.join().unwrap())
    });
    for round in [desktop.sync(), laptop.sync(), desktop.sync()] {
        assert_eq!((round.error, round.pending), (None, 0));
    }

    let all: BTreeSet<Uuid> = from_desktop.iter().chain(&from_laptop).copied().collect();
    assert_eq!(all.len(), 16);
    let names = remote_names(&desktop, &endpoint);
    assert_eq!(names.len(), 16, "backups {backups}: one object per save");
    for id in &all {
        let id = id.simple().to_string();
        assert!(
            names.iter().any(|name| name.contains(&id)),
            "backups {backups}: lost"
        );
    }
    for device in [&desktop, &laptop] {
        let held: BTreeSet<Uuid> = device.ids().into_values().flatten().collect();
        assert!(held.is_subset(&all));
    }
    if backups >= 8 {
        assert_eq!(
            desktop.ids(),
            laptop.ids(),
            "both devices hold the same saves"
        );
        let held: BTreeSet<Uuid> = desktop.ids().into_values().flatten().collect();
        assert_eq!(held, all, "no save was lost");
        assert_eq!(desktop.ids()[&SlotId::Manual(0)].len(), 8);
    }

    for slot in [SlotId::Manual(0), SlotId::Manual(1), SlotId::Manual(2)] {
        let (on_desktop, on_laptop) = (desktop.head(slot), laptop.head(slot));
        let heads = (on_desktop.save_id, on_laptop.save_id);
        assert_eq!(
            heads.0,
            heads.1,
            "backups {backups}: {slot} has one head; desktop holds {}; laptop holds {}",
            desktop.describe(slot),
            laptop.describe(slot)
        );
        let newest = desktop
            .store
            .saves()
            .unwrap()
            .into_iter()
            .filter(|s| s.slot == slot)
            .map(|s| s.meta.created_at)
            .max()
            .unwrap();
        assert_eq!(
            on_desktop.created_at, newest,
            "{slot}: the newest save heads it"
        );
    }
    let head = desktop.head(SlotId::Manual(2));
    assert_eq!(
        head.device_name(),
        Some("laptop"),
        "the device is named in SaveMeta"
    );
    assert_eq!(head.device_id(), Some(laptop.core.device_id()));
}

#[test]
fn crossing_saves_of_one_slot_keep_both_and_the_older_can_be_chosen() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut desktop = Device::new(&endpoint, "desktop");
    let mut handheld = Device::new(&endpoint, "handheld");
    let slot = SlotId::Manual(4);

    // Both save offline-style: neither sees the other's save before making its own.
    let now = Timestamp::now().unix_millis();
    let older = desktop.save_at(slot, Timestamp::from_unix_millis(now - 1_000));
    let newer = handheld.save_at(slot, Timestamp::from_unix_millis(now));
    assert_eq!(handheld.upload().error, None);
    assert_eq!(desktop.upload().error, None);
    let round = desktop.sync();
    assert_eq!(round.arrived.len(), 1);
    let Some(SlotSync::Conflict(conflict)) = round.slots.get(&slot) else {
        panic!("expected a conflict: {round:?}");
    };
    assert_eq!(conflict.hidden_device, "desktop");
    assert_eq!(conflict.hidden_save, older);
    assert_eq!(
        desktop.head(slot).save_id,
        newer,
        "the newest heads the slot"
    );
    assert_eq!(
        desktop.ids()[&slot],
        BTreeSet::from([older, newer]),
        "both kept"
    );

    let generation = desktop
        .runtime
        .block_on(desktop.core.use_hidden_save(slot))
        .unwrap();
    assert!(generation.is_some());
    assert_eq!(
        desktop.head(slot).save_id,
        older,
        "the player chose the other save"
    );
    assert_eq!(desktop.ids()[&slot], BTreeSet::from([older, newer]));
    assert_eq!(desktop.core.slot_states().unwrap()[&slot], SlotSync::Synced);
}

#[test]
fn a_server_stopped_mid_upload_leaves_the_save_queued_until_it_is_back() {
    let mut moto = Moto::start();
    moto.create_bucket(BUCKET);
    let port = moto.port;
    let proxy = Proxy::start(port);
    let mut device = Device::new(&proxy.endpoint(), "desktop");
    assert_eq!(device.sync().connection, Connection::Online);

    let slot = SlotId::Quick;
    let saved = device.save(slot);
    proxy.set(Fault::Hold);
    let round = std::thread::scope(|scope| {
        let upload = scope.spawn(|| device.upload());
        wait_for("the upload to reach the proxy", || proxy.held() == 1);
        moto.stop();
        proxy.release();
        upload.join().unwrap()
    });
    assert!(
        matches!(round.connection, Connection::Offline { .. }),
        "{round:?}"
    );
    assert_eq!(round.pending, 1);
    assert_eq!(round.slots[&slot], SlotSync::Offline);
    assert_eq!(
        device.head(slot).save_id,
        saved,
        "the local save is untouched"
    );

    let moto = Moto::start_on(port);
    moto.create_bucket(BUCKET);
    let round = device.sync();
    assert_eq!((round.error, round.pending), (None, 0));
    assert_eq!(round.uploaded.len(), 1);
    assert_eq!(round.slots[&slot], SlotSync::Synced);
    let mut other = Device::new(&moto.endpoint(), "laptop");
    other.sync();
    assert_eq!(other.head(slot).save_id, saved);
}

#[test]
fn a_slot_whose_save_was_damaged_before_its_upload_shows_no_cloud_state() {
    // Nothing listens on this port: every request fails, as offline.
    let endpoint = format!("http://127.0.0.1:{}", moto::free_port());
    let mut device = Device::new(&endpoint, "handheld");
    device.save(SlotId::Quick);
    let damaged = SlotId::Manual(0);
    device.save(damaged);
    device.save(SlotId::Manual(1));
    let file = std::fs::read_dir(device.store.dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("manual-00.") && name.ends_with(".ksav")
        })
        .unwrap();
    let len = std::fs::metadata(&file).unwrap().len() as usize;
    std::fs::write(&file, vec![0u8; len]).unwrap();
    assert!(device.store.saves_in(damaged).unwrap().is_empty());

    let round = device.upload();
    assert!(
        matches!(round.connection, Connection::Offline { .. }),
        "{round:?}"
    );
    assert_eq!(round.slots.get(&SlotId::Quick), Some(&SlotSync::Offline));
    assert_eq!(
        round.slots.get(&SlotId::Manual(1)),
        Some(&SlotSync::Offline)
    );
    assert_eq!(
        round.slots.get(&damaged),
        None,
        "no readable save, so no claim about the cloud"
    );
}

#[test]
fn server_errors_and_slow_answers_are_retried_and_never_touch_local_saves() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let proxy = Proxy::start(moto.port);
    let policy = RequestPolicy {
        timeout: Duration::from_millis(1500),
        ..quick_policy()
    };
    let mut device = Device::with_policy(&proxy.endpoint(), "desktop", policy);
    let slot = SlotId::Manual(0);

    proxy.set(Fault::ServerError);
    let saved = device.save(slot);
    let round = device.upload();
    assert!(
        matches!(round.connection, Connection::Offline { .. }),
        "{round:?}"
    );
    assert!(
        round
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("upload"),
        "{round:?}"
    );
    assert!(proxy.requests() > 0, "the request went through the proxy");
    assert_eq!(
        (round.pending, round.slots[&slot].clone()),
        (1, SlotSync::Offline)
    );
    let due = device.core.next_upload_due().unwrap();
    assert!(due > Timestamp::now(), "a failed upload backs off");

    proxy.set(Fault::Delay(Duration::from_secs(4)));
    let round = device.sync();
    assert!(
        matches!(round.connection, Connection::Offline { .. }),
        "a slow server times out"
    );
    assert_eq!(device.head(slot).save_id, saved);

    proxy.set(Fault::Delay(Duration::from_millis(300)));
    let round = device.sync();
    assert_eq!((round.error, round.pending), (None, 0), "slow but in time");
    assert_eq!(round.uploaded.len(), 1);
    assert_eq!(round.slots[&slot], SlotSync::Synced);
    assert_eq!(device.store.generations(slot).unwrap(), vec![1]);
}

#[test]
fn a_save_whose_upload_was_never_attempted_is_uploaded_by_the_next_start() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    let mut device = Device::in_folder(dir, &endpoint, "desktop", quick_policy());
    assert_eq!(device.sync().error, None);
    let saved = device.save(SlotId::Auto(2));
    // The game is killed before the sync thread did anything with the save.
    let Device {
        _dir: dir,
        store,
        core,
        runtime,
    } = device;
    drop((core, runtime, store));

    let mut restarted = Device::in_folder(dir, &endpoint, "desktop", quick_policy());
    assert_eq!(restarted.store.dir(), root.join("default"));
    let round = restarted.sync();
    assert_eq!((round.error, round.pending), (None, 0));
    assert_eq!(round.uploaded.len(), 1);
    assert_eq!(round.uploaded[0].save_id, saved);
    let mut laptop = Device::new(&endpoint, "laptop");
    laptop.sync();
    assert_eq!(laptop.head(SlotId::Auto(2)).save_id, saved);
}

/// A save file as another device would upload it, with its remote name.
fn foreign_file(slot: SlotId, bundle: &SaveBundle, minutes_ahead: i64) -> (RemoteName, Vec<u8>) {
    let meta = SaveMeta {
        created_at: Timestamp::from_unix_millis(
            Timestamp::now().unix_millis() + minutes_ahead * 60_000,
        ),
        ..SaveMeta::new(slot).with_device("0123456789ab", "intruder")
    };
    let bytes = format::encode(&meta, bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec();
    (RemoteName::for_save(&meta, "0123456789ab"), bytes)
}

/// A save file from the next format version (its header checksum valid), as a newer build of
/// the game on another device would upload it.
fn newer_format_file(slot: SlotId, minutes_ahead: i64) -> (RemoteName, Vec<u8>) {
    let (name, mut bytes) = foreign_file(slot, &world_bundle(), minutes_ahead);
    bytes[4..6].copy_from_slice(&(format::FORMAT_VERSION + 1).to_le_bytes());
    let header_crc = crc32fast::hash(&bytes[..36]).to_le_bytes();
    bytes[36..40].copy_from_slice(&header_crc);
    (name, bytes)
}

#[test]
fn damaged_forged_and_newer_remote_files_never_replace_or_hide_a_local_save() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut device = Device::new(&endpoint, "desktop");
    let slot = SlotId::Manual(0);
    let local = device.save(slot);
    assert_eq!(device.sync().error, None);

    let mut files = Vec::new();
    // Garbage under a well-formed name.
    let (name, _) = foreign_file(slot, &world_bundle(), 1);
    files.push((name, b"not a save at all".to_vec()));
    // One flipped payload byte: the payload CRC fails.
    let (name, mut bytes) = foreign_file(slot, &world_bundle(), 2);
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    files.push((name, bytes.clone()));
    // The same with every checksum made valid again.
    let (name, _) = foreign_file(slot, &world_bundle(), 3);
    files.push((name, crc_fixup::with_valid_checksums(&bytes).unwrap()));
    // Every checksum valid and postcard well-formed, but the world blob is hostile.
    let blob = fixtures::game_like_blob(4096, 9);
    let hostile = SaveBundle::new(WorldState {
        tick: 1,
        state_hash: snapshot::state_hash(&blob),
        ecs_blob: blob,
    });
    files.push(foreign_file(slot, &hostile, 4));
    // A valid blob whose stored state hash does not match it.
    let mut mismatched = world_bundle();
    mismatched.world.state_hash ^= 1;
    files.push(foreign_file(slot, &mismatched, 5));
    // A valid save renamed to claim another save id.
    let (mut name, bytes) = foreign_file(slot, &world_bundle(), 6);
    name.save_id = Uuid::new_v4();
    files.push((name, bytes));
    // A valid save of another slot renamed into this one.
    let (mut name, bytes) = foreign_file(SlotId::Manual(5), &world_bundle(), 7);
    name.slot = slot;
    files.push((name, bytes));
    let refused_count = files.len();
    // A save from a newer format version (valid header checksum): skipped, not refused.
    files.push(newer_format_file(slot, 8));

    let remote = Remote::open(&url(&endpoint), GAME, "default", &quick_policy()).unwrap();
    device.runtime.block_on(async {
        for (name, bytes) in &files {
            let payload = PutPayload::from(bytes.clone());
            remote
                .store()
                .put(&remote.path_of(name), payload)
                .await
                .unwrap();
        }
    });

    // Uploads are create-only: the server refuses to replace an object (If-None-Match: *).
    let (name, bytes) = &files[0];
    let replaced = device.runtime.block_on(remote.store().put_opts(
        &remote.path_of(name),
        PutPayload::from(bytes.clone()),
        PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        },
    ));
    assert!(
        matches!(replaced, Err(object_store::Error::AlreadyExists { .. })),
        "{replaced:?}"
    );

    let round = device.sync();
    assert_eq!(round.error, None);
    assert!(round.arrived.is_empty(), "{round:?}");
    assert_eq!(round.refused.len(), refused_count, "{:#?}", round.refused);
    assert_eq!(device.store.generations(slot).unwrap(), vec![1]);
    assert_eq!(device.head(slot).save_id, local);
    assert_eq!(
        device.store.saves().unwrap().len(),
        1,
        "no other slot gained a save"
    );
    let again = device.sync();
    assert!(
        again.refused.is_empty() && again.arrived.is_empty(),
        "{again:?}"
    );
}

/// Polls `done` until it holds (the work happens on other threads), failing after 30 s.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
