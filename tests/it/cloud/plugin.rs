//! The cloud plugin in an app: the device name lands in `SaveMeta`, the menu-facing status
//! follows the uploads, and a game that quits with uploads pending sends them on its next start.

use super::moto::Moto;
use super::proxy::{Fault, Proxy};
use super::{BUCKET, Device, GAME, quick_policy, url, wait_for};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{CloudPlugin, CloudStatus, CloudUploaded, STATE_FILE, SlotSync};
use bevy_keepsake::plugin::KeepsakeStore;
use bevy_keepsake::prelude::*;
use std::path::Path;
use std::time::Duration;

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Gold(u32);

#[derive(Resource, Default)]
struct Uploads(Vec<CloudUploaded>);

fn game(root: &Path, endpoint: &str) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugin::new(GAME)
                .save_root(root)
                .autosave_every(Duration::ZERO),
        )
        .add_plugins(
            CloudPlugin::new(url(endpoint))
                .device_name("handheld")
                .sync_every(None)
                .requests(quick_policy()),
        )
        .register_saveable::<Gold>()
        .init_resource::<Uploads>()
        .add_observer(|e: On<CloudUploaded>, mut uploads: ResMut<Uploads>| {
            uploads.0.push(*e.event())
        });
    app.world_mut().spawn((Saveable, Gold(12)));
    app.update();
    app
}

/// Runs frames until `done` holds for the app (the sync thread works meanwhile).
fn update_until(app: &mut App, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    wait_for(what, || {
        app.update();
        done(app)
    });
}

#[test]
fn a_game_quitting_with_uploads_pending_uploads_them_on_its_next_start() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let proxy = Proxy::start(moto.port);
    let root = tempfile::tempdir().unwrap();
    let slot = SlotId::Manual(0);

    proxy.set(Fault::ServerError);
    let mut app = game(root.path(), &proxy.endpoint());
    update_until(&mut app, "the first sync round", |app| {
        app.world().resource::<CloudStatus>().rounds >= 1
    });
    app.world_mut().write_message(SaveRequest::slot(slot));
    update_until(&mut app, "the save to be offline", |app| {
        app.world().resource::<CloudStatus>().slot(slot) == Some(&SlotSync::Offline)
    });
    let store = app
        .world()
        .resource::<KeepsakeStore>()
        .get()
        .unwrap()
        .clone();
    let saved = store.load(slot).unwrap().meta;
    assert_eq!(
        saved.device_name(),
        Some("handheld"),
        "SaveMeta names the device"
    );
    drop(app); // the player quits: nothing waits for the network
    let queue = std::fs::read_to_string(root.path().join("default").join(STATE_FILE)).unwrap();
    assert!(
        queue.contains(&saved.save_id.to_string()),
        "the upload is queued durably:\n{queue}"
    );

    proxy.set(Fault::Pass);
    let mut app = game(root.path(), &proxy.endpoint());
    update_until(&mut app, "the queued upload", |app| {
        let status = app.world().resource::<CloudStatus>();
        status.pending == 0 && status.slot(slot) == Some(&SlotSync::Synced)
    });
    let uploads = &app.world().resource::<Uploads>().0;
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0].save_id, saved.save_id);

    let mut laptop = Device::new(&moto.endpoint(), "laptop");
    assert_eq!(laptop.sync().arrived.len(), 1);
    assert_eq!(laptop.head(slot).save_id, saved.save_id);
}
