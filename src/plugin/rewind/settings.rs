//! How many rewind points the ring keeps, how often it takes one by itself, and its memory
//! budget; and the timer that takes them.

use bevy::prelude::*;
use std::time::Duration;

/// The rewind ring's settings while the game runs, starting from
/// [`RewindPlugin`](super::RewindPlugin)'s fields; change them at any time (a smaller count or
/// budget takes effect at the next point).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::RewindSettings;
/// use std::time::Duration;
///
/// // "Rewind time" only during a boss fight: a point every half second, the last 30 seconds.
/// fn boss_fight_begins(mut settings: ResMut<RewindSettings>) {
///     settings.every = Duration::from_millis(500);
///     settings.points = 60;
/// }
/// # let _ = boss_fight_begins;
/// ```
#[derive(Resource, Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, PartialEq, Default)]
pub struct RewindSettings {
    /// The most points the ring holds (at least one is kept); the oldest goes when a new one
    /// would exceed it. Default 60.
    pub points: usize,
    /// Time ([`Time`], which stops while the game is paused) between points the ring takes by
    /// itself; `Duration::ZERO` (the default): only on request.
    pub every: Duration,
    /// The most bytes the points may hold ([`RewindRing::memory`](super::RewindRing::memory));
    /// the oldest go when a new point exceeds it (the newest always stays). Default 64 MiB.
    pub memory_budget: usize,
}

impl Default for RewindSettings {
    fn default() -> Self {
        RewindSettings {
            points: 60,
            every: Duration::ZERO,
            memory_budget: 64 << 20,
        }
    }
}

/// Time since the last rewind point (or since the last rewind); a point is taken when it
/// reaches [`RewindSettings::every`].
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, PartialEq, Default)]
pub struct RewindTimer {
    elapsed: Duration,
}

impl RewindTimer {
    /// Advances by `delta`; whether a point is due (and then starts again).
    pub(super) fn tick(&mut self, delta: Duration, every: Duration) -> bool {
        if every.is_zero() {
            return false;
        }
        self.elapsed += delta;
        if self.elapsed < every {
            return false;
        }
        self.elapsed = Duration::ZERO;
        true
    }

    /// Starts counting again (a point was just taken, or the world was rewound).
    pub fn reset(&mut self) {
        self.elapsed = Duration::ZERO;
    }
}
