//! The thumbnail hook and `SaveStarted`, headless: a provider that hands a picture over at
//! once, one that answers a frame later, one that never does, one that declines. A save never
//! waits for its picture: its write starts in the frame it is asked in, whatever the provider
//! does. Frames are counted with `app.update()`; the write is held at the filesystem where a
//! test needs to know it started, so nothing depends on timing.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{
    KeepsakeStore, SaveReason, SaveStarted, SaveTarget, ThumbnailCapture, ThumbnailTicket,
    ThumbnailWanted,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::store::testing::Forward;
use bevy_keepsake::testing::{BACKGROUND_WAIT, update_until};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Component, Reflect)]
#[reflect(Component)]
struct Marker(u32);

/// What happened, frame by frame.
#[derive(Resource, Default)]
struct Seen {
    frame: u32,
    started: Vec<(u32, SaveStarted)>,
    completed: Vec<(u32, SaveCompleted)>,
    wanted: Vec<(u32, SaveTarget)>,
    /// Tickets a provider holds on to.
    held: Vec<ThumbnailTicket>,
}

fn app(root: &std::path::Path, capture: Option<ThumbnailCapture>) -> App {
    app_on(root, capture, Forward::os())
}

/// The app, its store on `filesystem`.
fn app_on(root: &std::path::Path, capture: Option<ThumbnailCapture>, filesystem: Forward) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            16,
        )))
        .add_plugins(
            KeepsakePlugins::new("thumbnail-tests")
                .save_root(root)
                .filesystem(Arc::new(filesystem))
                .build()
                .disable::<AutosavePlugin>(),
        )
        .register_saveable::<Marker>()
        .init_resource::<Seen>()
        .add_systems(First, |mut seen: ResMut<Seen>| seen.frame += 1)
        .add_observer(|e: On<SaveStarted>, mut seen: ResMut<Seen>| {
            let frame = seen.frame;
            seen.started.push((frame, *e.event()));
        })
        .add_observer(|e: On<SaveCompleted>, mut seen: ResMut<Seen>| {
            let frame = seen.frame;
            seen.completed.push((frame, e.event().clone()));
        });
    if let Some(capture) = capture {
        app.insert_resource(capture);
    }
    app.world_mut().spawn((Saveable, Marker(7)));
    app.update();
    app
}

fn save_and_wait(app: &mut App, slot: SlotId) -> SaveCompleted {
    let before = app.world().resource::<Seen>().completed.len();
    app.world_mut().write_message(SaveRequest::slot(slot));
    update_until(app, "the save", 200, |w| {
        w.resource::<Seen>().completed.len() > before
    });
    app.world().resource::<Seen>().completed[before].1.clone()
}

fn stored_thumbnail(app: &App, slot: SlotId, generation: u64) -> Option<Vec<u8>> {
    let store = app.world().resource::<KeepsakeStore>();
    store
        .get()
        .unwrap()
        .read_thumbnail(slot, generation)
        .unwrap()
}

#[test]
fn without_a_provider_saves_carry_no_thumbnail_and_report_their_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), None);
    let done = save_and_wait(&mut app, SlotId::Manual(3));
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.started.iter().map(|(_, e)| *e).collect::<Vec<_>>(),
        [SaveStarted {
            target: SaveTarget::Slot(SlotId::Manual(3)),
            reason: SaveReason::Manual
        }]
    );
    assert!(seen.started[0].0 <= seen.completed[0].0);
    assert!(seen.wanted.is_empty());
    assert_eq!(
        stored_thumbnail(&app, SlotId::Manual(3), done.generation),
        None
    );
}

/// A provider that keeps every ticket and never hands anything over.
fn never_answers(app: &mut App) {
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target));
        seen.held.push(e.ticket.clone());
    });
}

/// A filesystem whose new files of the quicksave slot (its durable writes) each report their
/// path, then wait until the test drops the gate's sender.
fn gated_filesystem() -> (Forward, Receiver<PathBuf>, Sender<()>) {
    let (started, writes) = channel();
    let (gate, held) = channel::<()>();
    let (started, held) = (Mutex::new(started), Mutex::new(held));
    let filesystem = Forward::os().on_create_new(move |inner, path| {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !name.starts_with("quick") {
            return inner.create_new(path);
        }
        let _ = started.lock().unwrap().send(path.to_owned());
        // Returns once the test drops its sender.
        let _ = held.lock().unwrap().recv();
        inner.create_new(path)
    });
    (filesystem, writes, gate)
}

#[test]
fn a_save_whose_provider_never_answers_is_written_in_the_frame_it_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (filesystem, writes, gate) = gated_filesystem();
    let mut app = app_on(dir.path(), Some(ThumbnailCapture), filesystem);
    never_answers(&mut app);
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Quick));
    app.update(); // the one frame the save is asked in

    let seen = app.world().resource::<Seen>();
    let asked = seen.frame;
    assert_eq!(seen.started.len(), 1, "captured in the frame it was asked");
    assert_eq!(seen.started[0].0, asked);
    assert_eq!(seen.wanted, [(asked, SaveTarget::Slot(SlotId::Quick))]);
    // No further frame: the write is under way already, on its own thread (held at the gate
    // here). Before, it started only after ThumbnailCapture's wait of 4 frames and 150 ms.
    let written = writes.recv_timeout(BACKGROUND_WAIT).unwrap_or_else(|_| {
        panic!("the write did not start in the frame the save was asked in (frame {asked})")
    });
    assert!(written.starts_with(dir.path()), "{}", written.display());
    // And the provider's answer, however soon, no longer reaches the save.
    let late = app.world_mut().resource_mut::<Seen>().held.pop().unwrap();
    assert!(!late.fulfil(b"\x89PNG late".to_vec()));

    drop(gate);
    let done = save_and_wait_for_completion(&mut app);
    assert_eq!(done.slot, SlotId::Quick);
    assert_eq!(stored_thumbnail(&app, SlotId::Quick, done.generation), None);
}

/// Runs frames until the first save completes.
fn save_and_wait_for_completion(app: &mut App) -> SaveCompleted {
    update_until(app, "the save", 200, |w| {
        !w.resource::<Seen>().completed.is_empty()
    });
    app.world().resource::<Seen>().completed[0].1.clone()
}

#[test]
fn a_thumbnail_handed_over_at_once_is_stored_with_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), Some(ThumbnailCapture));
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target));
        assert!(e.ticket.clone().fulfil(b"\x89PNG picture".to_vec()));
        assert!(
            !e.ticket.clone().fulfil(b"\x89PNG second".to_vec()),
            "one picture per save"
        );
    });
    let done = save_and_wait(&mut app, SlotId::Quick);
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.wanted,
        [(seen.started[0].0, SaveTarget::Slot(SlotId::Quick))]
    );
    assert_eq!(
        stored_thumbnail(&app, SlotId::Quick, done.generation).as_deref(),
        Some(&b"\x89PNG picture"[..])
    );
}

#[test]
fn a_thumbnail_handed_over_a_frame_later_is_refused_and_the_save_goes_without() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), Some(ThumbnailCapture));
    never_answers(&mut app);
    // The provider answers one frame after being asked, as a screenshot would at best.
    app.add_systems(Update, |mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        if seen
            .wanted
            .last()
            .is_some_and(|(asked, _)| frame == asked + 1)
        {
            for ticket in seen.held.drain(..) {
                assert!(!ticket.fulfil(b"\x89PNG picture".to_vec()), "too late");
            }
        }
    });
    let done = save_and_wait(&mut app, SlotId::Manual(0));
    assert!(
        app.world().resource::<Seen>().held.is_empty(),
        "the provider did answer"
    );
    assert_eq!(
        stored_thumbnail(&app, SlotId::Manual(0), done.generation),
        None
    );
}

#[test]
fn a_provider_that_declines_does_not_delay_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), Some(ThumbnailCapture));
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target)); // the ticket is dropped: no picture (e.g. headless)
    });
    app.world_mut().write_message(SaveRequest::autosave());
    let done = save_and_wait_for_completion(&mut app);
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.wanted[0].1,
        SaveTarget::AutosaveRing,
        "the autosave ring picks its slot later"
    );
    assert_eq!(done.reason, SaveReason::Autosave);
}
