//! Issue 23: cloud sync never loses a save, under the default backups (3) and 0. Each test
//! reproduces one finding of the issue against a real S3 server, and failed before its fix.

use super::GAME;
use super::moto::Moto;
use super::proxy::{Fault, Proxy};
use super::{BUCKET, Device, quick_policy};
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::{ObjectStoreExt, PutPayload};
use bevy_keepsake::cloud::{Remote, STATE_FILE, SlotSync, SyncCore};
use bevy_keepsake::format::Timestamp;

const SLOT: SlotId = SlotId::Quick;

/// The backups a shipped game keeps: the default, and none.
const BACKUPS: [u16; 2] = [3, 0];

fn ago(seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(Timestamp::now().unix_millis() - seconds * 1_000)
}

/// Finding 2: device A saves offline; device B makes `backups + 1` newer saves of the slot.
/// When A comes back, its save reaches the cloud and stays in A's folder, the conflict names
/// it, and the player can choose it. Before, the downloads came first and each import pushed
/// older generations out: A's save was deleted before it was ever uploaded.
#[test]
fn an_offline_save_is_never_crowded_out_by_newer_saves_from_another_device() {
    for backups in BACKUPS {
        let moto = Moto::start();
        moto.create_bucket(BUCKET);
        let mut laptop = Device::with_backups(&moto.endpoint(), "laptop", backups);
        let mut desk = Device::with_backups(&moto.endpoint(), "desk", backups);
        let offline = laptop.save_at(SLOT, ago(600));
        for minute in 0..=i64::from(backups) + 1 {
            desk.save_at(SLOT, ago(500 - minute * 60));
            assert_eq!(desk.sync().error, None);
        }

        let round = laptop.sync();
        assert_eq!(round.error, None, "backups {backups}");
        assert!(
            laptop.ids()[&SLOT].contains(&offline),
            "backups {backups}: deleted"
        );
        let names = super::remote_names(&laptop, &moto.endpoint());
        let id = offline.simple().to_string();
        assert!(
            names.iter().any(|n| n.contains(&id)),
            "backups {backups}: not uploaded"
        );
        let Some(SlotSync::Conflict(conflict)) = round.slots.get(&SLOT) else {
            panic!("backups {backups}: {:?}", round.slots)
        };
        assert_eq!(conflict.hidden_save, offline);
        assert_eq!(conflict.hidden_device, "laptop");

        let picked = laptop.runtime.block_on(laptop.core.use_hidden_save(SLOT));
        assert!(picked.unwrap().is_some());
        assert_eq!(laptop.head(SLOT).save_id, offline, "backups {backups}");
    }
}

/// Finding 3: after the player chose a save over another device's, a save that device made
/// before the choice (uploaded later) does not take the head back; and a save dated far past
/// this device's clock never takes the head from the player's newer save.
#[test]
fn the_players_choice_and_the_local_clock_win_over_remote_timestamps() {
    for backups in BACKUPS {
        let moto = Moto::start();
        moto.create_bucket(BUCKET);
        let mut laptop = Device::with_backups(&moto.endpoint(), "laptop", backups);
        let mut desk = Device::with_backups(&moto.endpoint(), "desk", backups);
        let chosen = laptop.save_at(SLOT, ago(600));
        desk.save_at(SLOT, ago(300));
        desk.sync();
        laptop.sync();
        let picked = laptop.runtime.block_on(laptop.core.use_hidden_save(SLOT));
        assert!(picked.unwrap().is_some());
        assert_eq!(laptop.head(SLOT).save_id, chosen);

        // The desk saved again before the player chose, and uploads only now.
        desk.save_at(SLOT, ago(120));
        desk.sync();
        laptop.sync();
        assert_eq!(
            laptop.head(SLOT).save_id,
            chosen,
            "backups {backups}: choice undone"
        );

        // A device whose clock runs a day ahead.
        let mut ahead = Device::with_backups(&moto.endpoint(), "ahead", backups);
        let tomorrow = Timestamp::from_unix_millis(Timestamp::now().unix_millis() + 86_400_000);
        let future = ahead.save_at(SlotId::Manual(1), tomorrow);
        ahead.sync();
        let own = laptop.save(SlotId::Manual(1));
        let round = laptop.sync();
        assert_eq!(round.error, None);
        assert_eq!(
            laptop.head(SlotId::Manual(1)).save_id,
            own,
            "backups {backups}"
        );
        assert!(
            backups == 0 || laptop.ids()[&SlotId::Manual(1)].contains(&future),
            "backups {backups}: the far-future save is kept below"
        );
    }
}

/// Simulator seed 520967 and review 61b G2: the player chose their save over the desk's, and
/// the disk then damaged the chosen save's copy here. Sync places it again from the cloud: it
/// heads (the desk's save, passed over, is here only as its fallback), and the passed-over
/// save is not offered as a conflict again.
#[test]
fn a_repaired_choice_heads_and_does_not_offer_the_passed_over_save_again() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let mut laptop = Device::new(&moto.endpoint(), "laptop");
    let mut desk = Device::new(&moto.endpoint(), "desk");
    let chosen = laptop.save_at(SLOT, ago(600));
    desk.save_at(SLOT, ago(300));
    desk.sync();
    laptop.sync();
    let picked = laptop.runtime.block_on(laptop.core.use_hidden_save(SLOT));
    assert!(picked.unwrap().is_some());
    let held = laptop.store.saves_in(SLOT).unwrap();
    let copy = held
        .iter()
        .find(|save| save.meta.save_id == chosen)
        .unwrap();
    std::fs::write(laptop.store.path_of(SLOT, copy.generation), b"rot").unwrap();

    assert_eq!(laptop.sync().error, None);
    assert_eq!(
        laptop.head(SLOT).save_id,
        chosen,
        "{}",
        laptop.describe(SLOT)
    );
    let offered = laptop.core.conflicts(SLOT);
    assert!(offered.is_empty(), "{offered:?}");
}

/// Finding 8: a remote file that cannot be fetched, and one whose answer is not a save, never
/// stop the other downloads or this device's uploads. Before, the first failed download ended
/// the round before any upload, at every round.
#[test]
fn one_bad_remote_object_never_blocks_the_others() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let mut desk = Device::new(&moto.endpoint(), "desk");
    let broken = desk.save_at(SlotId::Manual(0), ago(900));
    let fine = desk.save_at(SlotId::Manual(2), ago(700));
    assert_eq!(desk.sync().error, None);

    let proxy = Proxy::start(moto.port);
    let pattern = leak(broken.simple().to_string());
    for fault in [
        Fault::ServerErrorOnGet(pattern),
        Fault::OversizedGet(pattern, 1 << 20),
    ] {
        let mut laptop = Device::with_policy(&proxy.endpoint(), "laptop", quick_policy());
        let own = laptop.save(SlotId::Manual(3));
        proxy.set(fault);
        let round = laptop.sync();
        assert!(
            round.uploaded.iter().any(|u| u.save_id == own),
            "{fault:?}: {round:?}"
        );
        assert!(
            laptop.ids()[&SlotId::Manual(2)].contains(&fine),
            "{fault:?}: {round:?}"
        );
        assert!(!laptop.ids().contains_key(&SlotId::Manual(0)), "{fault:?}");
        if fault == Fault::ServerErrorOnGet(pattern) {
            // Fetched once the storage answers for it again.
            proxy.set(Fault::Pass);
            laptop.sync();
            assert!(laptop.ids()[&SlotId::Manual(0)].contains(&broken));
        }
    }
}

/// The proxy takes `&'static str` patterns; a test leaks two small strings.
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// Finding 8: a download is capped at the store's file limit while it is read, whatever the
/// listing said: the storage answers with a body far larger than the object it listed, and
/// the file is refused as too large instead of being held whole.
#[test]
fn a_download_larger_than_the_limit_is_refused_while_it_is_read() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let mut desk = Device::new(&moto.endpoint(), "desk");
    let listed = desk.save(SlotId::Manual(0));
    desk.sync();

    let proxy = Proxy::start(moto.port);
    let dir = tempfile::tempdir().unwrap();
    let laptop_policy = quick_policy();
    let mut laptop = Device::configured(dir, &proxy.endpoint(), "laptop", laptop_policy, |c| {
        let mut config = c;
        config.encode.limits.max_payload_uncompressed = 1 << 20;
        config.encode.limits.max_thumbnail = 0;
        config
    });
    let limit = laptop.store.config().decode_options().limits.max_file_len();
    let oversized = usize::try_from(limit).unwrap() + (1 << 20);
    proxy.set(Fault::OversizedGet(
        leak(listed.simple().to_string()),
        oversized,
    ));
    let round = laptop.sync();
    assert_eq!(round.refused.len(), 1, "{round:?}");
    let reason = &round.refused[0].reason;
    assert!(reason.contains("larger than"), "{round:?}");
    // Read up to just past the limit, not the whole answer.
    assert!(
        !reason.contains(&format!("it is {oversized} bytes")),
        "{reason}"
    );
}

/// Finding 8: a remote save from a newer format version is fetched once; later starts remember
/// it (until the game is updated) instead of downloading it again at every start. And the sync
/// state forgets a file once it has left the cloud, so it never grows without bound.
#[test]
fn a_newer_format_remote_file_is_not_downloaded_at_every_start() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let proxy = Proxy::start(moto.port);
    let mut laptop = Device::with_policy(&proxy.endpoint(), "laptop", quick_policy());
    let (name, bytes) = super::newer_format_file(SlotId::Manual(0), 0);
    let remote = Remote::open(
        &super::url(&moto.endpoint()),
        GAME,
        "default",
        &quick_policy(),
    );
    let remote = remote.unwrap();
    let location = remote.path_of(&name);
    laptop.runtime.block_on(async {
        let payload = PutPayload::from(bytes);
        remote.store().put(&location, payload).await.unwrap();
    });
    assert_eq!(laptop.sync().error, None);

    // The next start: a new sync core on the same folder.
    let next = Remote::open(
        &super::url(&proxy.endpoint()),
        GAME,
        "default",
        &quick_policy(),
    );
    let (core, damaged) = SyncCore::open(laptop.store.clone(), next.unwrap(), "laptop");
    assert!(damaged.is_none());
    laptop.core = core;
    let before = proxy.requests();
    assert_eq!(laptop.sync().error, None);
    assert_eq!(
        proxy.requests() - before,
        1,
        "only the listing, no download"
    );

    // Gone from the cloud, it is gone from the state file.
    let store = laptop.store.clone();
    let state = || String::from_utf8(store.read_profile_file(STATE_FILE).unwrap().unwrap());
    assert!(state().unwrap().contains(&name.to_string()));
    laptop
        .runtime
        .block_on(remote.store().delete(&location))
        .unwrap();
    laptop.sync();
    assert!(!state().unwrap().contains(&name.to_string()));
}

/// Finding 9: a save whose file was damaged on this disk after it was written (its header and
/// metadata still read, so it is listed) is checked in full before upload and not sent for
/// other devices to refuse; the round says why, and the other saves go up.
#[test]
fn a_save_damaged_on_disk_is_not_uploaded() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let mut laptop = Device::new(&moto.endpoint(), "laptop");
    let damaged = laptop.save(SlotId::Manual(0));
    let intact = laptop.save(SlotId::Manual(1));
    let path = laptop.store.path_of(SlotId::Manual(0), 1);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(laptop.store.saves_in(SlotId::Manual(0)).unwrap().len(), 1);

    let round = laptop.sync();
    let uploaded: Vec<_> = round.uploaded.iter().map(|u| u.save_id).collect();
    assert_eq!(uploaded, [intact], "{round:?}");
    assert_eq!(round.refused.len(), 1, "{round:?}");
    assert!(
        round.refused[0]
            .name
            .contains(&damaged.simple().to_string())
    );
    assert!(round.refused[0].reason.contains("damaged"), "{round:?}");
    let names = super::remote_names(&laptop, &moto.endpoint());
    assert!(
        !names
            .iter()
            .any(|n| n.contains(&damaged.simple().to_string()))
    );
    let again = laptop.sync();
    assert!(
        again.refused.is_empty() && again.pending == 0,
        "retried: {again:?}"
    );
}
