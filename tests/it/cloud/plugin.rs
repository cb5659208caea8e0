//! The cloud plugin in an app: the device name lands in `SaveMeta`, the menu-facing status
//! follows the uploads, a game that quits with uploads pending sends them on its next start,
//! and the exit save reaches the cloud before the app closes (or is reported left behind).

use super::moto::Moto;
use super::proxy::{Fault, Proxy};
use super::{BUCKET, Device, GAME, quick_policy, remote_names, url};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{
    CloudExitUploadEnded, CloudPlugin, CloudSaveUploaded, CloudStatus, ExitUploadOutcome,
    RemoteName, STATE_FILE, SlotSync,
};
use bevy_keepsake::plugin::{KeepsakeStore, SaveTarget};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Gold(u32);

#[derive(Resource, Default)]
struct Uploads(Vec<CloudSaveUploaded>);

/// The exit's reports (written in the last frame, so read by an observer).
#[derive(Resource, Default)]
struct ExitUploads(Vec<CloudExitUploadEnded>);

fn game(root: &Path, endpoint: &str) -> App {
    game_saving_on_exit(root, endpoint, SaveOnExit::Off)
}

fn game_saving_on_exit(root: &Path, endpoint: &str, on_exit: SaveOnExit) -> App {
    game_syncing_with(root, url(endpoint), on_exit)
}

fn game_syncing_with(root: &Path, cloud_url: String, on_exit: SaveOnExit) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugins::new(GAME)
                .save_root(root)
                .set(ExitSavePlugin {
                    save_on_exit: on_exit,
                })
                .disable::<AutosavePlugin>(),
        )
        .add_plugins(
            CloudPlugin::new(cloud_url)
                .device_name("handheld")
                .sync_every(None)
                .requests(quick_policy()),
        )
        .register_saveable::<Gold>()
        .init_resource::<Uploads>()
        .init_resource::<ExitUploads>()
        .add_observer(|e: On<CloudSaveUploaded>, mut uploads: ResMut<Uploads>| {
            uploads.0.push(*e.event())
        })
        .add_observer(
            |e: On<CloudExitUploadEnded>, mut exits: ResMut<ExitUploads>| {
                exits.0.push(e.event().clone())
            },
        );
    app.world_mut().spawn((Saveable, Gold(12)));
    app.update();
    app
}

/// Runs frames until `done` holds for the app's world (`testing::update_until`; the sync
/// thread works meanwhile).
fn update_until(app: &mut App, what: &str, done: impl FnMut(&World) -> bool) {
    testing::update_until(app, what, 200, done);
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
    update_until(&mut app, "the first sync round", |world| {
        world.resource::<CloudStatus>().rounds >= 1
    });
    app.world_mut().write_message(SaveRequest::slot(slot));
    update_until(&mut app, "the save to be offline", |world| {
        world.resource::<CloudStatus>().slot(slot) == Some(&SlotSync::Offline)
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
    update_until(&mut app, "the queued upload", |world| {
        let status = world.resource::<CloudStatus>();
        status.pending == 0 && status.slot(slot) == Some(&SlotSync::Synced)
    });
    let uploads = &app.world().resource::<Uploads>().0;
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0].save_id, saved.save_id);

    let mut laptop = Device::new(&moto.endpoint(), "laptop");
    assert_eq!(laptop.sync().arrived.len(), 1);
    assert_eq!(laptop.head(slot).save_id, saved.save_id);
}

/// The exit save goes to this slot.
const EXIT_SLOT: SlotId = SlotId::Manual(3);

fn save_on_exit(max_wait: Duration) -> SaveOnExit {
    SaveOnExit::On {
        target: SaveTarget::Slot(EXIT_SLOT),
        max_wait,
    }
}

/// Waits for the first sync round, then makes a save in `slot` and waits until it is durable
/// (not for its upload).
fn play_and_save(app: &mut App, slot: SlotId) -> Uuid {
    update_until(app, "the first sync round", |world| {
        world.resource::<CloudStatus>().rounds >= 1
    });
    app.world_mut().write_message(SaveRequest::slot(slot));
    update_until(app, "the save", |world| head(world, slot).is_some());
    head(app.world(), slot).unwrap()
}

/// The save heading `slot` in the app's store.
fn head(world: &World, slot: SlotId) -> Option<Uuid> {
    let store = world.resource::<KeepsakeStore>().get().unwrap();
    let saves = store.saves_in(slot).unwrap();
    saves
        .into_iter()
        .max_by_key(|s| s.generation)
        .map(|s| s.meta.save_id)
}

/// Sends `AppExit` and runs the exit frame; returns the exit's report.
fn exit(app: &mut App) -> CloudExitUploadEnded {
    app.world_mut().write_message(AppExit::Success);
    app.update();
    let exits = &app.world().resource::<ExitUploads>().0;
    assert_eq!(exits.len(), 1, "one report per exit: {exits:?}");
    exits[0].clone()
}

/// The save ids in the profile's cloud folder.
fn remote_ids(device: &Device, endpoint: &str) -> Vec<Uuid> {
    let names = remote_names(device, endpoint);
    let parsed = names.iter().filter_map(|name| RemoteName::parse(name));
    parsed.map(|name| name.save_id).collect()
}

#[test]
fn the_exit_save_is_in_the_cloud_when_the_exit_frame_ends() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let root = tempfile::tempdir().unwrap();
    let on_exit = save_on_exit(Duration::from_secs(20));
    let mut app = game_saving_on_exit(root.path(), &endpoint, on_exit);
    let played = play_and_save(&mut app, SlotId::Manual(0));

    let report = exit(&mut app);
    let exit_save = head(app.world(), EXIT_SLOT).expect("the exit save is on disk");
    let mut laptop = Device::new(&endpoint, "laptop");
    let in_cloud = remote_ids(&laptop, &endpoint);
    assert!(in_cloud.contains(&exit_save), "{in_cloud:?}");
    assert!(in_cloud.contains(&played), "{in_cloud:?}");
    assert_eq!(report.outcome, ExitUploadOutcome::Done, "{report:?}");
    assert!(report.not_uploaded.is_empty(), "{report:?}");
    let upload = report.uploaded.iter().find(|u| u.save_id == exit_save);
    assert_eq!(upload.map(|u| u.slot), Some(EXIT_SLOT), "{report:?}");
    drop(app);

    // The other device opens: the first's exit save is there, with its device.
    assert_eq!(laptop.sync().error, None);
    let arrived = laptop.head(EXIT_SLOT);
    assert_eq!(arrived.save_id, exit_save);
    assert_eq!(arrived.device_name(), Some("handheld"));
}

#[test]
fn an_exit_with_the_server_unreachable_names_what_it_left_and_the_next_start_uploads_it() {
    // Nothing listens on this port: every request is refused at once, as with a stopped server.
    let unreachable = format!("http://127.0.0.1:{}", super::moto::free_port());
    let root = tempfile::tempdir().unwrap();
    let on_exit = save_on_exit(Duration::from_secs(20));
    let mut app = game_saving_on_exit(root.path(), &unreachable, on_exit);
    let played = play_and_save(&mut app, SlotId::Manual(0));

    let report = exit(&mut app);
    let exit_save = head(app.world(), EXIT_SLOT).expect("the exit save is on disk");
    assert!(
        matches!(&report.outcome, ExitUploadOutcome::Failed(reason) if reason.contains("upload")),
        "{report:?}"
    );
    assert!(report.uploaded.is_empty(), "{report:?}");
    for (slot, save) in [(EXIT_SLOT, exit_save), (SlotId::Manual(0), played)] {
        assert!(
            report.not_uploaded.contains(&(slot, save)),
            "{slot} is named: {report:?}"
        );
    }
    drop(app);

    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let mut app = game(root.path(), &moto.endpoint());
    update_until(&mut app, "the first sync round", |world| {
        world.resource::<CloudStatus>().rounds >= 1
    });
    let status = app.world().resource::<CloudStatus>();
    assert_eq!((status.pending, status.last_error.clone()), (0, None));
    let mut uploaded: Vec<Uuid> = app
        .world()
        .resource::<Uploads>()
        .0
        .iter()
        .map(|u| u.save_id)
        .collect();
    uploaded.sort();
    let mut left = vec![exit_save, played];
    left.sort();
    assert_eq!(uploaded, left, "the first round uploads what the exit left");
    let mut laptop = Device::new(&moto.endpoint(), "laptop");
    assert_eq!(laptop.sync().error, None);
    assert_eq!(laptop.head(EXIT_SLOT).save_id, exit_save);
}

#[test]
fn an_exit_with_the_server_hanging_gives_up_when_its_wait_is_over() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let proxy = Proxy::start(moto.port);
    let root = tempfile::tempdir().unwrap();
    let max_wait = Duration::from_millis(500);
    let mut app = game_saving_on_exit(root.path(), &proxy.endpoint(), save_on_exit(max_wait));
    update_until(&mut app, "the first sync round", |world| {
        world.resource::<CloudStatus>().rounds >= 1
    });

    proxy.set(Fault::Hold);
    let report = exit(&mut app);
    proxy.release();
    let exit_save = head(app.world(), EXIT_SLOT).expect("the exit save is on disk");
    // The held request would end only with the 5 s request timeout, reported as `Failed`:
    // `TimedOut` says the exit stopped waiting on its own deadline, not on the network.
    assert_eq!(report.outcome, ExitUploadOutcome::TimedOut, "{report:?}");
    assert_eq!(report.not_uploaded, vec![(EXIT_SLOT, exit_save)]);
}

#[test]
fn an_exit_with_cloud_sync_off_waits_for_nothing_and_names_the_session_saves() {
    let root = tempfile::tempdir().unwrap();
    let on_exit = save_on_exit(Duration::from_secs(20));
    // A URL no storage answers to: cloud sync stays off, local saving goes on.
    let mut app = game_syncing_with(root.path(), "ftp://nowhere/saves".into(), on_exit);
    assert!(app.world().resource::<CloudStatus>().stopped.is_some());
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    update_until(&mut app, "the save", |world| {
        head(world, SlotId::Manual(0)).is_some()
    });
    let played = head(app.world(), SlotId::Manual(0)).unwrap();

    let report = exit(&mut app);
    let exit_save = head(app.world(), EXIT_SLOT).expect("the exit save is on disk");
    assert!(
        matches!(report.outcome, ExitUploadOutcome::SyncOff(_)),
        "{report:?}"
    );
    let mut left = report.not_uploaded.clone();
    left.sort();
    assert_eq!(
        left,
        vec![(SlotId::Manual(0), played), (EXIT_SLOT, exit_save)]
    );
}
