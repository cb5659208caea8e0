//! Cloud saves against a local moto server (started here, like the tests do): uploading and
//! downloading a 1 MB save through the sync core beside a bare `object_store` put / get of the
//! same bytes on the same server, and the bytes one save uploads. Needs the `cloud` feature and
//! moto, which it installs into the target folder when missing, as the tests do.
//!
//! The sync core's upload is: queue the save durably, read the generation file, create-only
//! put, record it durably. Its download is: list the folder, get, verify everything, place it
//! durably, record it durably. The bare calls are the put and the get alone.

#[path = "../tests/it/cloud/moto.rs"]
mod moto;
#[path = "../tests/it/cloud/moto_install.rs"]
mod moto_install;
#[path = "../tests/it/common/real_world.rs"]
mod real_world;

use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::path::Path as RemotePath;
use bevy_keepsake::cloud::object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload};
use bevy_keepsake::cloud::{Remote, RequestPolicy, SyncCore};
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

const BUCKET: &str = "bench";
const TARGET_BYTES: usize = 1 << 20;

fn quick() -> bool {
    std::env::var_os("KEEPSAKE_BENCH_QUICK").is_some()
}

fn url(endpoint: &str) -> String {
    format!(
        "s3://{BUCKET}/games?endpoint={endpoint}&region=us-east-1&access_key_id=x&secret_access_key=x"
    )
}

/// The real-game world grown until its save file is about 1 MB (LZ4 where it pays, as saved).
fn one_megabyte_save() -> SaveBundle {
    let bundle_of = |count: u32| {
        let mut app = real_world::app();
        real_world::populate(app.world_mut(), count);
        let captured = snapshot::capture(app.world_mut()).unwrap();
        SaveBundle::new(WorldState {
            tick: 1,
            ecs_blob: captured.blob,
            state_hash: captured.state_hash,
        })
    };
    let file_len = |bundle: &SaveBundle| {
        let meta = SaveMeta::new(SlotId::Manual(0));
        format::encode(&meta, bundle, &EncodeOptions::default())
            .unwrap()
            .len() as usize
    };
    let probe = 1_000;
    let per_entity = file_len(&bundle_of(probe)) / probe as usize;
    bundle_of((TARGET_BYTES / per_entity.max(1)) as u32)
}

struct Bench {
    _moto: moto::Moto,
    runtime: Runtime,
    _dirs: Vec<tempfile::TempDir>,
    uploader: SyncCore,
    downloader: SyncCore,
    remote: Remote,
    bundle: SaveBundle,
    file: Vec<u8>,
}

fn device(endpoint: &str, name: &str, dirs: &mut Vec<tempfile::TempDir>) -> SyncCore {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SlotStore::open(StoreConfig::new(dir.path())).unwrap());
    dirs.push(dir);
    let policy = RequestPolicy::default();
    let remote = Remote::open(&url(endpoint), "bench-game", "default", &policy).unwrap();
    SyncCore::open(store, remote, name).0
}

fn setup() -> Bench {
    let moto = moto::Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let mut dirs = Vec::new();
    let uploader = device(&endpoint, "desktop", &mut dirs);
    let downloader = device(&endpoint, "laptop", &mut dirs);
    // The bare calls use the devices' folder, so both list the same objects (the bare files'
    // names are not ones sync writes, so the devices ignore them).
    let remote = Remote::open(
        &url(&endpoint),
        "bench-game",
        "default",
        &RequestPolicy::default(),
    )
    .unwrap();
    let bundle = one_megabyte_save();
    let meta = SaveMeta::new(SlotId::Manual(0));
    let file = format::encode(&meta, &bundle, &EncodeOptions::default())
        .unwrap()
        .to_vec();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Bench {
        _moto: moto,
        runtime,
        _dirs: dirs,
        uploader,
        downloader,
        remote,
        bundle,
        file,
    }
}

fn save_on(core: &SyncCore, bundle: &SaveBundle) -> uuid::Uuid {
    let meta = core.stamp(SaveMeta::new(SlotId::Manual(0)));
    let receipt = core.store().save(SlotId::Manual(0), meta, bundle).unwrap();
    receipt.save_id
}

fn bare_path(remote: &Remote) -> RemotePath {
    remote
        .folder()
        .clone()
        .join(format!("{}.bin", uuid::Uuid::new_v4().simple()))
}

fn upload(c: &mut Criterion, bench: &mut Bench) {
    let mut group = c.benchmark_group("cloud_upload_1mb");
    group.sample_size(10);
    if quick() {
        group.measurement_time(Duration::from_secs(3));
    }
    let Bench {
        runtime,
        uploader,
        remote,
        bundle,
        file,
        ..
    } = bench;
    // Setup (an untimed local save) and the measured upload both need the core.
    let uploader = RefCell::new(uploader);
    group.bench_function("keepsake", |b| {
        b.iter_batched(
            || save_on(&uploader.borrow(), bundle),
            |save_id| {
                let mut uploader = uploader.borrow_mut();
                uploader.note_save(SlotId::Manual(0), save_id).unwrap();
                let round = runtime.block_on(uploader.upload_due());
                assert_eq!(round.uploaded.len(), 1, "{round:?}");
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("bare_put", |b| {
        b.iter_batched(
            || (bare_path(remote), PutPayload::from(file.clone())),
            |(path, payload)| {
                let options = PutOptions {
                    mode: PutMode::Create,
                    ..PutOptions::default()
                };
                runtime
                    .block_on(remote.store().put_opts(&path, payload, options))
                    .unwrap();
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn download(c: &mut Criterion, bench: &mut Bench) {
    let mut group = c.benchmark_group("cloud_download_1mb");
    group.sample_size(10);
    if quick() {
        group.measurement_time(Duration::from_secs(3));
    }
    let Bench {
        runtime,
        uploader,
        downloader,
        remote,
        bundle,
        file,
        ..
    } = bench;
    // The bare calls first, on the folder the sync core lists (its listing cost grows with
    // every object, so measuring them after the core's downloads would flatter the core).
    let path = bare_path(remote);
    runtime
        .block_on(remote.store().put(&path, PutPayload::from(file.clone())))
        .unwrap();
    group.bench_function("bare_get", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let got = remote.store().get(&path).await.unwrap();
                got.bytes().await.unwrap()
            })
        })
    });
    group.bench_function("bare_list_and_get", |b| {
        b.iter(|| {
            runtime.block_on(async {
                remote
                    .store()
                    .list_with_delimiter(Some(remote.folder()))
                    .await
                    .unwrap();
                let got = remote.store().get(&path).await.unwrap();
                got.bytes().await.unwrap()
            })
        })
    });
    // Everything already uploaded is downloaded once, outside the measurement.
    runtime.block_on(downloader.sync());
    group.bench_function("keepsake", |b| {
        b.iter_batched(
            || {
                let save_id = save_on(uploader, bundle);
                uploader.note_save(SlotId::Manual(0), save_id).unwrap();
                runtime.block_on(uploader.upload_due());
            },
            |()| {
                let round = runtime.block_on(downloader.sync());
                assert_eq!(round.arrived.len(), 1, "{round:?}");
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Bytes one save sends, and the payload before compression (for the codec evaluation, the
/// uncompressed payload is also written to `<target>/cloud-bench-payload.bin`).
fn bytes_per_save(bench: &mut Bench) {
    let save_id = save_on(&bench.uploader, &bench.bundle);
    bench
        .uploader
        .note_save(SlotId::Manual(0), save_id)
        .unwrap();
    let round = bench.runtime.block_on(bench.uploader.upload_due());
    let sent = round.uploaded.first().map_or(0, |u| u.bytes);
    let stored = SaveMeta::new(SlotId::Manual(0));
    let raw = EncodeOptions {
        compression: format::Compression::None,
        ..EncodeOptions::default()
    };
    let uncompressed = format::encode(&stored, &bench.bundle, &raw)
        .unwrap()
        .to_vec();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "target".into());
    let _ = std::fs::write(target.join("cloud-bench-payload.bin"), &uncompressed);
    let blob = bench.bundle.world.ecs_blob.len();
    println!("cloud bytes per save (real-game world, {blob} bytes of world blob):");
    println!("  uploaded (the .ksav file, LZ4): {sent} bytes");
    println!("  same save uncompressed: {} bytes", uncompressed.len());
    println!(
        "  at 1 Mbps: {:.2} s per upload",
        sent as f64 * 8.0 / 1_000_000.0
    );
}

fn cloud(c: &mut Criterion) {
    let mut bench = setup();
    bytes_per_save(&mut bench);
    upload(c, &mut bench);
    download(c, &mut bench);
}

criterion_group!(benches, cloud);
criterion_main!(benches);
