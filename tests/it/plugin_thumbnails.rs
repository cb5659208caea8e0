//! The thumbnail hook and `SaveStarted`, headless: a provider that delivers, one that never
//! does, one that declines. Waits are set in frames only (`max_wait_time: ZERO`), so nothing
//! depends on timing.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_keepsake::plugin::{
    KeepsakeStore, SaveReason, SaveStarted, SaveTarget, ThumbnailCapture, ThumbnailTicket,
    ThumbnailWanted,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::update_until;
use std::time::{Duration, Instant};

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
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            16,
        )))
        .add_plugins(
            KeepsakePlugins::new("thumbnail-tests")
                .save_root(root)
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

#[test]
fn a_delivered_thumbnail_is_stored_with_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(
        dir.path(),
        Some(ThumbnailCapture {
            max_wait_frames: 50,
            max_wait_time: Duration::ZERO,
        }),
    );
    // This provider delivers two frames after being asked, like a screenshot would.
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target));
        seen.held.push(e.ticket.clone());
    })
    .add_systems(Update, |mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        if seen
            .wanted
            .last()
            .is_some_and(|(asked, _)| frame == asked + 2)
        {
            for ticket in seen.held.drain(..) {
                assert!(ticket.fulfil(b"\x89PNG picture".to_vec()));
            }
        }
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
    let slots_listing_frame = seen.completed[0].0;
    assert!(slots_listing_frame >= seen.wanted[0].0 + 2);
}

#[test]
fn a_save_stops_waiting_after_max_wait_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(
        dir.path(),
        Some(ThumbnailCapture {
            max_wait_frames: 6,
            max_wait_time: Duration::ZERO,
        }),
    );
    // This provider never delivers and never lets go of the ticket.
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target));
        seen.held.push(e.ticket.clone());
    });
    let done = save_and_wait(&mut app, SlotId::Manual(0));
    let seen = app.world().resource::<Seen>();
    let (asked, _) = seen.wanted[0];
    let (completed, _) = seen.completed[0];
    assert!(
        completed > asked + 6,
        "the write starts only after the wait: asked at {asked}, completed at {completed}"
    );
    assert_eq!(
        stored_thumbnail(&app, SlotId::Manual(0), done.generation),
        None
    );
    // A late delivery finds nobody waiting.
    let late = app.world_mut().resource_mut::<Seen>().held.pop().unwrap();
    assert!(!late.fulfil(b"late".to_vec()));
}

#[test]
fn a_provider_that_declines_does_not_delay_the_save() {
    let dir = tempfile::tempdir().unwrap();
    // A wait this long would make the save time out below if it were waited out.
    let mut app = app(
        dir.path(),
        Some(ThumbnailCapture {
            max_wait_frames: u32::MAX,
            max_wait_time: Duration::from_secs(3600),
        }),
    );
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        let frame = seen.frame;
        seen.wanted.push((frame, e.target)); // the ticket is dropped: no picture (e.g. headless)
    });
    app.world_mut().write_message(SaveRequest::autosave());
    let what = "the save, not waiting for the declined thumbnail";
    update_until(&mut app, what, 200, |w| {
        !w.resource::<Seen>().completed.is_empty()
    });
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.wanted[0].1,
        SaveTarget::AutosaveRing,
        "the autosave ring picks its slot later"
    );
    assert_eq!(seen.completed[0].1.reason, SaveReason::Autosave);
}

#[test]
fn a_save_also_waits_out_max_wait_time() {
    let dir = tempfile::tempdir().unwrap();
    let wait = Duration::from_millis(80);
    let mut app = app(
        dir.path(),
        Some(ThumbnailCapture {
            max_wait_frames: 0,
            max_wait_time: wait,
        }),
    );
    app.add_observer(|e: On<ThumbnailWanted>, mut seen: ResMut<Seen>| {
        seen.held.push(e.ticket.clone()); // never delivers
    });
    let asked = Instant::now();
    let done = save_and_wait(&mut app, SlotId::Manual(1));
    assert!(
        asked.elapsed() >= wait,
        "zero frames, but the time bound still holds the write back"
    );
    assert_eq!(
        stored_thumbnail(&app, SlotId::Manual(1), done.generation),
        None
    );
}
