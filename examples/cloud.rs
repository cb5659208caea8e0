//! Cloud saves, headless, against a local folder as the remote: a laptop saves, the save is
//! uploaded; a desktop starts, downloads it, verifies it and loads it.
//!
//! `CloudPlugin::new(url)` beside `KeepsakePlugins` uploads every durable save and downloads
//! other devices' saves (at start, on `RefreshSlotsRequest`, every `sync_every`). The URL here is a
//! `file://` folder (written durably, as saves are); a game gives `s3://bucket/prefix?…` or
//! `gs://…` instead, nothing else changes. The two devices are two apps with their own save
//! folders, one after the other in this process.
//!
//! Run: `cargo run --features cloud --example cloud` (exits non-zero if the desktop did not
//! get the laptop's save).
use bevy::prelude::*;
use bevy_keepsake::cloud::{CloudPlugin, CloudSaveArrived, CloudSaveUploaded, CloudStatus};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::{TestSaves, run_until};
use std::path::Path;

/// The player's progress. Saved.
#[derive(Resource, Reflect, Default)]
#[reflect(Resource)]
struct Chapter(u32);

/// One device: its own save folder, the shared cloud folder at `url`.
fn device(saves: &Path, url: &str, name: &str) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(KeepsakePlugins::new("cloud-example").save_root(saves))
        .add_plugins(CloudPlugin::new(url).device_name(name))
        .register_saveable::<Chapter>()
        .init_resource::<Chapter>()
        .add_observer(|failed: On<SaveFailed>| panic!("save failed: {}", failed.error))
        .add_observer(|failed: On<LoadFailed>| panic!("load failed: {}", failed.error))
        .add_systems(Update, |status: Res<CloudStatus>| {
            if let Some(why) = &status.stopped {
                panic!("cloud sync did not start: {why}");
            }
        });
    app.finish();
    app.cleanup();
    app
}

/// How many frames a result may take, not counting those while the plugin's work runs in the
/// background (see `bevy_keepsake::testing::run_until`).
const FRAMES: u32 = 20;

fn main() {
    let [cloud, laptop_saves, desktop_saves] = [(); 3].map(|_| TestSaves::new());
    let url = format!("file://{}", cloud.root().display());

    let mut laptop = device(laptop_saves.root(), &url, "laptop");
    laptop.world_mut().resource_mut::<Chapter>().0 = 7;
    laptop.world_mut().commands().save(SlotId::Manual(0));
    let uploaded = run_until::<CloudSaveUploaded>(&mut laptop, FRAMES);
    println!(
        "laptop uploaded {} ({} bytes)",
        uploaded.slot, uploaded.bytes
    );
    drop(laptop);
    let folder = cloud.root().join("cloud-example/default");
    for file in std::fs::read_dir(&folder).expect("the profile's cloud folder") {
        println!("  in the cloud: {}", file.unwrap().file_name().display());
    }

    let mut desktop = device(desktop_saves.root(), &url, "desktop");
    let arrived = run_until::<CloudSaveArrived>(&mut desktop, FRAMES); // the sync at start
    println!(
        "desktop got {} from {:?}",
        arrived.slot, arrived.device_name
    );
    assert_eq!(arrived.slot, SlotId::Manual(0));
    assert!(arrived.heads_slot, "the laptop's save is the slot's newest");
    assert_eq!(arrived.device_name.as_deref(), Some("laptop"));

    desktop.world_mut().commands().load(SlotId::Manual(0));
    let loaded = run_until::<LoadCompleted>(&mut desktop, FRAMES);
    assert_eq!(
        loaded.meta.device_name(),
        Some("laptop"),
        "made on the laptop"
    );
    assert_eq!(
        desktop.world().resource::<Chapter>().0,
        7,
        "the laptop's chapter"
    );
    let sync = desktop
        .world()
        .resource::<CloudStatus>()
        .slot(SlotId::Manual(0))
        .cloned();
    println!("desktop loaded chapter 7; the slot's sync state: {sync:?}");
}
