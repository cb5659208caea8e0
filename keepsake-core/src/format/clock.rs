//! [`Clock`]: where the store and cloud sync read the time, so tests can give each device a
//! clock of its own (skewed, jumping back) without touching the system's.

use super::meta::Timestamp;
use std::fmt;

/// A source of wall-clock time.
///
/// The store reads it to tell a creation time from the future (a device whose clock runs
/// ahead) from a plausible one; cloud sync to schedule retries and to record when a save
/// reached the cloud or when the player chose between two saves. Everything else (a save's
/// own creation time) is the caller's to stamp.
///
/// ```
/// use keepsake_core::format::{Clock, SystemClock, Timestamp};
///
/// #[derive(Debug)]
/// struct Fixed(Timestamp);
///
/// impl Clock for Fixed {
///     fn now(&self) -> Timestamp {
///         self.0
///     }
/// }
///
/// let fixed = Fixed(Timestamp::from_unix_millis(5));
/// assert_eq!(fixed.now().unix_millis(), 5);
/// assert!(SystemClock.now() > fixed.now());
/// ```
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time as this clock tells it.
    fn now(&self) -> Timestamp;
}

/// The system's wall clock ([`Timestamp::now`]): the default everywhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}
