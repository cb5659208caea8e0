//! Finding 4: listing the cloud folder. A key the storage client cannot read as a path (an
//! empty segment, a `.` or `..` segment) used to fail the whole listing, leaving the device
//! offline for good; now it is skipped and reported once. A round lists page by page and no
//! more than its limit; the next round lists on from where it stopped.

use super::moto::{Moto, http};
use super::{BUCKET, Device, GAME, url};
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::list::{
    PaginatedListOptions, PaginatedListResult, PaginatedListStore,
};
use bevy_keepsake::cloud::object_store::memory::InMemory;
use bevy_keepsake::cloud::object_store::path::Path as RemotePath;
use bevy_keepsake::cloud::object_store::{self, ListResult, ObjectMeta, ObjectStore};
use bevy_keepsake::cloud::{Connection, ListingLimits, Remote, SyncRound};
use bevy_keepsake::store::StoreConfig;
use futures_util::TryStreamExt;
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

const FOLDER: &str = "games/cloud-test/default";

/// Keys object_store cannot read as paths, relative to the profile folder, sorting before,
/// among and after the saves' names (`manual-0N.<ms>…`).
const STRAY: [&str; 6] = [
    "/empty-segment",
    "./dot.ksav",
    "..",
    "../up.ksav",
    "manual-01.x//y",
    "zz/./deep",
];

fn stray_set() -> BTreeSet<String> {
    STRAY.iter().map(|key| (*key).to_owned()).collect()
}

/// Puts `key` into the moto bucket with a raw request, as any S3 client (or a hand-made
/// upload) could: object_store itself cannot name such a key.
fn put_raw(moto: &Moto, key: &str) {
    let (status, _) = http(
        moto.port,
        &format!("PUT /{BUCKET}/{key} HTTP/1.1"),
        b"stray",
    );
    assert_eq!(status, 200, "moto refused to store {key:?}");
}

/// The names of the refused files each round reported.
fn refused(round: &SyncRound) -> Vec<String> {
    round.refused.iter().map(|r| r.name.clone()).collect()
}

/// Saves one save in each of `slots` on `device` and uploads them; returns their ids.
fn saves_uploaded(device: &mut Device, slots: impl IntoIterator<Item = SlotId>) -> Vec<Uuid> {
    let ids: Vec<Uuid> = slots.into_iter().map(|slot| device.save(slot)).collect();
    let round = device.sync();
    assert_eq!(
        (round.error.as_deref(), round.pending),
        (None, 0),
        "{round:?}"
    );
    ids
}

fn holds_all(device: &Device, ids: &[Uuid]) -> bool {
    let held: BTreeSet<Uuid> = device.ids().into_values().flatten().collect();
    ids.iter().all(|id| held.contains(id))
}

/// Against moto: stray keys beside two saves. The other device still downloads both, reports
/// each stray key once, and stays online.
#[test]
fn keys_the_client_cannot_read_are_skipped_and_reported_once() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut desk = Device::new(&endpoint, "desk");
    let ids = saves_uploaded(&mut desk, [SlotId::Manual(0), SlotId::Manual(2)]);
    for key in STRAY {
        put_raw(&moto, &format!("{FOLDER}/{key}"));
    }

    let mut laptop = Device::new(&endpoint, "laptop");
    let round = laptop.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert_eq!(round.connection, Connection::Online);
    assert!(holds_all(&laptop, &ids), "{round:?}");
    let named: BTreeSet<String> = refused(&round).into_iter().collect();
    assert_eq!(named, stray_set(), "{round:?}");

    let again = laptop.sync();
    assert_eq!(again.error, None, "{again:?}");
    assert!(again.refused.is_empty(), "reported once: {again:?}");
    // The uploading device lists past them too.
    let own = desk.save(SlotId::Manual(4));
    let round = desk.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert!(round.uploaded.iter().any(|u| u.save_id == own));
}

/// Against moto, with pages of 2 keys and 5 keys a round: a folder of 6 saves, 6 stray keys and
/// 2 folder markers (`manual-01/`, which reads as the path `manual-01` and so sorts before the
/// keys listed just ahead of it) takes several rounds, each listing on from the last, until
/// every save has arrived and every stray key was reported exactly once.
#[test]
fn a_capped_listing_continues_over_rounds_past_stray_keys() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut desk = Device::new(&endpoint, "desk");
    let ids = saves_uploaded(&mut desk, (0..6).map(SlotId::Manual));
    for key in STRAY.iter().chain(&["manual-01/", "sub/"]) {
        put_raw(&moto, &format!("{FOLDER}/{key}"));
    }
    let limits = ListingLimits {
        page_objects: 2,
        objects_per_round: 5,
        ..ListingLimits::default()
    };
    let remote = Remote::open(&url(&endpoint), GAME, "default", &super::quick_policy())
        .unwrap()
        .with_listing(limits);
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path());
    let mut laptop = Device::on_remote(dir, config, remote, "laptop");

    let (rounds, reported) = sync_until_all_arrived(&mut laptop, &ids);
    assert!(rounds >= 3, "14 keys at 5 a round: {rounds} rounds");
    let named: BTreeSet<String> = reported.iter().cloned().collect();
    assert_eq!(
        reported.len(),
        named.len(),
        "reported once each: {reported:?}"
    );
    assert_eq!(named, stray_set());
}

/// Syncs `device` until it holds every save of `ids` (at most 20 rounds); returns the number of
/// rounds and every refused name reported on the way (a full cycle of the folder included).
fn sync_until_all_arrived(device: &mut Device, ids: &[Uuid]) -> (usize, Vec<String>) {
    let mut reported = Vec::new();
    let mut rounds = 0;
    while !holds_all(device, ids) {
        assert!(rounds < 20, "not every save arrived: {:?}", device.ids());
        let round = device.sync();
        assert_eq!(round.error, None, "round {rounds}: {round:?}");
        reported.extend(refused(&round));
        rounds += 1;
    }
    // Once more round the whole folder: nothing is reported twice.
    for _ in 0..4 {
        reported.extend(refused(&device.sync()));
    }
    (rounds, reported)
}

/// In-memory storage listed the way S3 lists: pages in key order after a start key, holding
/// `stray` raw keys the client cannot read (a page holding one is refused whole, as
/// object_store's S3 client refuses it), counting what it serves; a request can be made to fail.
struct S3Like {
    memory: Arc<InMemory>,
    stray: Vec<String>,
    served: Mutex<Served>,
}

#[derive(Default)]
struct Served {
    requests: usize,
    /// `requests` when they were last counted.
    requests_counted: usize,
    /// Keys in pages that were answered since the count was last taken.
    keys: usize,
    fail_request: Option<usize>,
}

impl S3Like {
    async fn page(
        &self,
        prefix: &str,
        options: PaginatedListOptions,
    ) -> object_store::Result<PaginatedListResult> {
        let fail = {
            let mut served = self.served.lock().unwrap();
            served.requests += 1;
            served.fail_request == Some(served.requests)
        };
        if fail {
            let source = "injected page failure".into();
            return Err(object_store::Error::Generic {
                store: "S3Like",
                source,
            });
        }
        let listed: Vec<ObjectMeta> = self.memory.list(None).try_collect().await?;
        let after = |key: &str| options.offset.as_deref().is_none_or(|offset| key > offset);
        let mut keys: Vec<(String, Option<ObjectMeta>)> = listed
            .into_iter()
            .map(|meta| (meta.location.to_string(), Some(meta)))
            .chain(self.stray.iter().map(|key| (key.clone(), None)))
            .filter(|(key, _)| key.starts_with(prefix) && after(key))
            .collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let max = options.max_keys.unwrap_or(1000);
        let more = keys.len() > max;
        keys.truncate(max);
        let mut objects = Vec::new();
        for (key, meta) in keys {
            match meta {
                Some(meta) => objects.push(meta),
                None => return Err(RemotePath::parse(&key).unwrap_err().into()),
            }
        }
        self.served.lock().unwrap().keys += objects.len();
        let result = ListResult {
            common_prefixes: Vec::new(),
            objects,
            extensions: Default::default(),
        };
        Ok(PaginatedListResult {
            result,
            page_token: more.then(|| "more".to_owned()),
        })
    }

    /// The requests made and the keys in answered pages since the last call.
    fn take_served(&self) -> (usize, usize) {
        let mut served = self.served.lock().unwrap();
        let requests = served.requests - served.requests_counted;
        served.requests_counted = served.requests;
        (requests, std::mem::take(&mut served.keys))
    }
}

/// `#[async_trait]`'s form of the trait method, written out.
impl PaginatedListStore for S3Like {
    fn list_paginated<'life0, 'life1, 'async_trait>(
        &'life0 self,
        prefix: Option<&'life1 str>,
        options: PaginatedListOptions,
    ) -> Pin<
        Box<dyn Future<Output = object_store::Result<PaginatedListResult>> + Send + 'async_trait>,
    >
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(self.page(prefix.unwrap_or(""), options))
    }
}

/// In memory, under the default backups (3) and 0: the same recovery through the paginated
/// interface (halving pages down to the stray key), no round making more requests or answered
/// with more keys than its limits, and a page that fails stops the round as offline until the
/// next one.
#[test]
fn a_paginated_listing_recovers_from_stray_keys_within_its_limit() {
    for backups in [3, 0] {
        let memory = Arc::new(InMemory::new());
        let desk_remote = Remote::new(memory.clone(), "games", GAME, "default");
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path()).backups(backups);
        let mut desk = Device::on_remote(dir, config, desk_remote, "desk");
        let ids = saves_uploaded(&mut desk, (0..5).map(SlotId::Manual));

        let pages = Arc::new(S3Like {
            memory: memory.clone(),
            stray: STRAY.iter().map(|key| format!("{FOLDER}/{key}")).collect(),
            served: Mutex::default(),
        });
        let limits = ListingLimits {
            page_objects: 4,
            objects_per_round: 6,
            requests_per_round: 4,
        };
        let remote = Remote::paginated(memory.clone(), pages.clone(), "games", GAME, "default")
            .with_listing(limits);
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path()).backups(backups);
        let mut laptop = Device::on_remote(dir, config, remote, "laptop");

        pages.served.lock().unwrap().fail_request = Some(2);
        let failed = laptop.sync();
        assert!(failed.error.is_some(), "{failed:?}");
        assert!(matches!(failed.connection, Connection::Offline { .. }));

        let mut reported = Vec::new();
        let mut rounds = 0;
        while !holds_all(&laptop, &ids) {
            assert!(rounds < 20, "backups {backups}: {:?}", laptop.ids());
            pages.take_served();
            let round = laptop.sync();
            assert_eq!(round.error, None, "backups {backups}: {round:?}");
            let (requests, keys) = pages.take_served();
            assert!(keys <= limits.objects_per_round, "{keys} keys");
            assert!(requests <= limits.requests_per_round, "{requests} requests");
            reported.extend(refused(&round));
            rounds += 1;
        }
        for _ in 0..4 {
            reported.extend(refused(&laptop.sync()));
        }
        let named: BTreeSet<String> = reported.iter().cloned().collect();
        assert_eq!(reported.len(), named.len(), "{reported:?}");
        assert_eq!(named, stray_set(), "backups {backups}");
    }
}

/// A store without paginated listing (memory here) is listed through the adapter, within the
/// same limits: a folder larger than one round's limit arrives over several rounds.
#[test]
fn a_streamed_listing_is_capped_and_continues_over_rounds() {
    let memory = Arc::new(InMemory::new());
    let limits = ListingLimits {
        page_objects: 2,
        objects_per_round: 3,
        ..ListingLimits::default()
    };
    let on_memory = |name: &str| {
        let remote = Remote::new(memory.clone(), "games", GAME, "default").with_listing(limits);
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path());
        Device::on_remote(dir, config, remote, name)
    };
    let mut desk = on_memory("desk");
    let ids = saves_uploaded(&mut desk, (0..7).map(SlotId::Manual));
    let mut laptop = on_memory("laptop");
    let first = laptop.sync();
    assert_eq!(first.arrived.len(), 3, "one round's limit: {first:?}");
    let (rounds, reported) = sync_until_all_arrived(&mut laptop, &ids);
    assert!(rounds >= 2, "{rounds}");
    assert!(reported.is_empty(), "{reported:?}");
}
