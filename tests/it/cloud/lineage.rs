//! Issue 49, item 1: a device whose clock runs behind goes on from another device's save for
//! longer than a save's list of ids reaches. Its newest save must head the slot on every
//! device, with no conflict shown: the line is plain, whatever the clocks say and however many
//! saves lie between.

use super::moto::Moto;
use super::{BUCKET, Device, SyncRound, quick_policy};
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::SlotSync;
use bevy_keepsake::format::{Clock, MAX_FOLLOWS, Timestamp};
use std::sync::Arc;
use uuid::Uuid;

const SLOT: SlotId = SlotId::Quick;

/// The backups a shipped game keeps: the default, and none.
const BACKUPS: [u16; 2] = [3, 0];

/// The system's clock, off by a fixed amount (negative: behind).
#[derive(Debug)]
struct Skewed(i64);

impl Clock for Skewed {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(Timestamp::now().unix_millis() + self.0)
    }
}

const HOUR: i64 = 3_600_000;

/// A device whose store (and so its sync and its saves' times) reads a clock `skew_ms` off.
fn device(endpoint: &str, name: &str, backups: u16, skew_ms: i64) -> (Device, Arc<Skewed>) {
    let clock = Arc::new(Skewed(skew_ms));
    let dir = tempfile::tempdir().unwrap();
    let shared = clock.clone();
    let device = Device::configured(dir, endpoint, name, quick_policy(), |config| {
        config.backups(backups).clock(shared)
    });
    (device, clock)
}

/// Every slot state a round reported is free of a conflict.
fn assert_no_conflict(round: &SyncRound, who: &str) {
    assert_eq!(round.error, None, "{who}: {round:?}");
    if let Some(SlotSync::Conflict(conflict)) = round.slots.get(&SLOT) {
        panic!("{who}: a plain line shown as a conflict: {conflict:?}");
    }
}

/// The desk saves S0 and syncs; a laptop whose clock runs an hour behind downloads it, plays
/// on and quicksaves `offline` times before its next sync. The desk, the laptop and a
/// brand-new device then all load the laptop's newest save, and none shows a conflict.
fn a_long_line_from_a_clock_behind(backups: u16, offline: usize) {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let endpoint = moto.endpoint();
    let (mut desk, _) = device(&endpoint, "desk", backups, 0);
    let (mut laptop, laptop_clock) = device(&endpoint, "laptop", backups, -HOUR);
    let case = format!("backups {backups}, {offline} saves offline");

    let first = desk.save(SLOT);
    assert_no_conflict(&desk.sync(), &case);
    assert_no_conflict(&laptop.sync(), &case);
    assert_eq!(
        laptop.head(SLOT).save_id,
        first,
        "{case}: S0 reached the laptop"
    );

    let mut newest = Uuid::nil();
    for _ in 0..offline {
        newest = laptop.save_at(SLOT, laptop_clock.now());
    }
    assert_no_conflict(&laptop.sync(), &format!("{case}: laptop"));
    assert_no_conflict(&desk.sync(), &format!("{case}: desk"));
    let (mut fresh, _) = device(&endpoint, "fresh", backups, 0);
    assert_no_conflict(&fresh.sync(), &format!("{case}: new device"));
    // A second round changes nothing: what arrived is settled.
    for (who, device) in [
        ("desk", &mut desk),
        ("laptop", &mut laptop),
        ("new device", &mut fresh),
    ] {
        assert_no_conflict(&device.sync(), &format!("{case}: {who}, again"));
        assert_eq!(
            device.head(SLOT).save_id,
            newest,
            "{case}: {who} loads the laptop's newest save; it holds {}",
            device.describe(SLOT)
        );
        assert!(device.core.conflicts(SLOT).is_empty(), "{case}: {who}");
    }
}

#[test]
fn a_device_behind_that_saved_past_the_follows_list_heads_everywhere() {
    const { assert!(20 > MAX_FOLLOWS && 45 > 2 * MAX_FOLLOWS) };
    for backups in BACKUPS {
        for offline in [20, 45] {
            a_long_line_from_a_clock_behind(backups, offline);
        }
    }
}
