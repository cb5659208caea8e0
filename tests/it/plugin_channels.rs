//! One channel per outcome (issue 51 item 2): requests are messages, results observer events,
//! and no type is both. Checked twice: at compile time (a result that is also a `Message`, or
//! a request that is also an `Event`, fails to build this file), and at run time (one save,
//! load, rewind point, rewind, delete and two failures each trigger their result exactly once,
//! and `WorldRestored` once per load and per rewind).

use crate::common::keepsake_app::{self, Seen};
use bevy::prelude::*;
use bevy_keepsake::plugin::{
    DeleteCompleted, DeleteFailed, DeleteRequest, LoadRequest, RefreshSlotsRequest, RestoredFrom,
    RewindCompleted, RewindFailed, RewindPointCompleted, RewindPointFailed, RewindPointId,
    RewindPointRequest, RewindRequest, SaveRequest, SaveStarted,
};
use bevy_keepsake::prelude::*;
use std::any::type_name;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// `<T as NotA<IsMessage, _>>::check()` builds only when `T` is not a `Message` (with both
/// impls applying, the second parameter cannot be inferred), and likewise for `Event`.
trait NotA<Kind, Which> {
    fn check() {}
}
enum IsMessage {}
enum IsEvent {}
impl<T, K> NotA<K, ()> for T {}
impl<T: Message> NotA<IsMessage, u8> for T {}
impl<T: Event> NotA<IsEvent, u8> for T {}

macro_rules! results_are_not_messages {
    ($($t:ty),* $(,)?) => {$( <$t as NotA<IsMessage, _>>::check(); )*};
}
macro_rules! requests_are_not_events {
    ($($t:ty),* $(,)?) => {$( <$t as NotA<IsEvent, _>>::check(); )*};
}

#[test]
fn no_type_is_both_a_message_and_an_event() {
    results_are_not_messages!(
        SaveStarted,
        SaveCompleted,
        SaveFailed,
        LoadCompleted,
        LoadFailed,
        DeleteCompleted,
        DeleteFailed,
        RewindPointCompleted,
        RewindPointFailed,
        RewindCompleted,
        RewindFailed,
        WorldRestored,
    );
    requests_are_not_events!(
        SaveRequest,
        LoadRequest,
        DeleteRequest,
        RefreshSlotsRequest,
        RewindPointRequest,
        RewindRequest,
    );
}

#[cfg(feature = "cloud")]
#[test]
fn no_cloud_type_is_both_a_message_and_an_event() {
    use bevy_keepsake::cloud::{
        CloudExitUploadEnded, CloudSaveArrived, CloudSaveRefused, CloudSaveUploaded,
        UseHiddenSaveRequest,
    };
    results_are_not_messages!(
        CloudSaveArrived,
        CloudSaveRefused,
        CloudSaveUploaded,
        CloudExitUploadEnded,
    );
    requests_are_not_events!(UseHiddenSaveRequest);
}

/// How many times each result type was triggered, by type name.
#[derive(Resource, Default)]
struct Triggered(BTreeMap<&'static str, usize>);

fn count<E: Event>(app: &mut App) {
    app.add_observer(|_: On<E>, mut triggered: ResMut<Triggered>| {
        *triggered.0.entry(short::<E>()).or_default() += 1;
    });
}

fn short<E>() -> &'static str {
    type_name::<E>().rsplit("::").next().unwrap()
}

fn triggered(app: &App) -> BTreeMap<&'static str, usize> {
    app.world().resource::<Triggered>().0.clone()
}

/// Updates until `done` holds for the counts (fails after 10 s of real time).
fn until(app: &mut App, what: &str, done: impl Fn(&BTreeMap<&'static str, usize>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(&triggered(app)) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        app.update();
        std::thread::yield_now();
    }
}

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
struct Gold(u32);

#[test]
fn each_result_is_triggered_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = keepsake_app::app(dir.path());
    app.register_saveable::<Gold>().init_resource::<Triggered>();
    count::<SaveStarted>(&mut app);
    count::<SaveCompleted>(&mut app);
    count::<SaveFailed>(&mut app);
    count::<LoadCompleted>(&mut app);
    count::<LoadFailed>(&mut app);
    count::<DeleteCompleted>(&mut app);
    count::<DeleteFailed>(&mut app);
    count::<RewindPointCompleted>(&mut app);
    count::<RewindPointFailed>(&mut app);
    count::<RewindCompleted>(&mut app);
    count::<RewindFailed>(&mut app);
    count::<WorldRestored>(&mut app);
    app.world_mut().spawn((Saveable, Gold(10)));
    app.update();

    keepsake_app::save(&mut app, SlotId::Manual(0));
    keepsake_app::load(&mut app, SlotId::Manual(0));
    keepsake_app::rewind_point(&mut app);
    keepsake_app::rewind(&mut app);
    app.world_mut().commands().delete_save(SlotId::Manual(0));
    until(&mut app, "the delete", |seen| {
        seen.contains_key("DeleteCompleted")
    });
    app.world_mut().commands().load(SlotId::Manual(0)); // deleted: fails
    until(&mut app, "the failed load", |seen| {
        seen.contains_key("LoadFailed")
    });
    app.world_mut().commands().rewind(5); // the ring holds one point: fails
    until(&mut app, "the failed rewind", |seen| {
        seen.contains_key("RewindFailed")
    });
    for _ in 0..5 {
        app.update(); // anything sent twice, or late, would arrive here
    }

    let want: BTreeMap<&'static str, usize> = [
        ("SaveStarted", 1),
        ("SaveCompleted", 1),
        ("LoadCompleted", 1),
        ("RewindPointCompleted", 1),
        ("RewindCompleted", 1),
        ("WorldRestored", 2),
        ("DeleteCompleted", 1),
        ("LoadFailed", 1),
        ("RewindFailed", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(triggered(&app), want);
    let restored = &app.world().resource::<Seen>().restored;
    let from: Vec<_> = restored.iter().map(|restored| restored.from).collect();
    assert_eq!(
        from,
        [
            RestoredFrom::Load(SlotId::Manual(0)),
            RestoredFrom::Rewind(RewindPointId(1))
        ]
    );
}
