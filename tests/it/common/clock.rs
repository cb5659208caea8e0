//! A clock a test sets by hand, for stores, sync and filesystems that read the time.

use bevy_keepsake::format::{Clock, Timestamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A clock that stands still until told to move (forwards or back).
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock showing `unix_millis`.
    pub fn at(unix_millis: i64) -> Arc<Self> {
        Arc::new(ManualClock(AtomicI64::new(unix_millis)))
    }

    /// Moves the clock by `millis` (negative: back).
    pub fn advance(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst))
    }
}
