//! The ring of rewind points: which points it holds, how they are found, and when the oldest
//! go. Pure bookkeeping over [`SnapshotHistory`]; the systems in `run` drive it.

use super::settings::RewindSettings;
use crate::plugin::restored::RewindPointId;
use crate::snapshot::{KeptSnapshot, PendingSnapshot, SnapshotHistory};
use bevy::prelude::*;
use std::collections::VecDeque;
use std::time::Duration;

/// Which point a rewind goes back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub enum RewindTo {
    /// The `n`-th newest point: `Back(1)` is the newest (undo the last move), `Back(2)` the one
    /// before it. `Back(0)` names no point.
    Back(usize),
    /// The newest point taken at least this long ago (in [`Time`], so paused game time does
    /// not count), or the oldest point when none is that old.
    Ago(Duration),
    /// Exactly this point.
    Point(RewindPointId),
}

/// Points the ring dropped, oldest first, to make room for a new one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, Default, PartialEq)]
pub struct Evicted {
    /// Beyond [`RewindSettings::points`].
    pub for_count: usize,
    /// Over [`RewindSettings::memory_budget`].
    pub for_memory: usize,
}

/// As a player reads it: "1 point back", "5.0 s back", "point 12".
impl std::fmt::Display for RewindTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewindTo::Back(1) => f.write_str("1 point back"),
            RewindTo::Back(n) => write!(f, "{n} points back"),
            RewindTo::Ago(age) => write!(f, "{:.1} s back", age.as_secs_f32()),
            RewindTo::Point(id) => write!(f, "point {}", id.0),
        }
    }
}

/// One rewind point: the world as a capture saw it, kept in memory.
pub struct RewindPoint {
    /// Its number.
    pub id: RewindPointId,
    /// When it was taken ([`Time::elapsed`]).
    pub taken_at: Duration,
    pub(super) kept: KeptSnapshot,
}

impl RewindPoint {
    /// How many saved entities it holds.
    pub fn entities(&self) -> usize {
        self.kept.entities()
    }
}

/// The rewind points of the session, oldest first, and what they hold in memory. Read it to
/// show the ring (a HUD, a timeline); change it through [`RewindRequest`](super::RewindRequest)
/// and [`RewindPointRequest`](super::RewindPointRequest), or
/// [`KeepsakeCommandsExt`](crate::plugin::KeepsakeCommandsExt).
#[derive(Resource, Default)]
pub struct RewindRing {
    points: VecDeque<RewindPoint>,
    history: SnapshotHistory,
    last_id: u64,
}

impl RewindRing {
    /// The points, oldest first.
    pub fn points(&self) -> impl DoubleEndedIterator<Item = &RewindPoint> + ExactSizeIterator {
        self.points.iter()
    }

    /// How many points it holds.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether it holds no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The bytes its points hold (an estimate from above: pieces the capture cache shares
    /// with the newest point count too).
    pub fn memory(&self) -> usize {
        self.history.memory()
    }

    /// Drops every point.
    pub fn clear(&mut self) {
        self.points.clear();
        self.history.clear();
    }

    /// Lets the ring see a capture it does not keep (a save's), so that the points keep only
    /// what changed across it. Every capture of the plugin's cache goes through here or
    /// [`keep`](Self::keep) while the ring holds points.
    pub(crate) fn note(&mut self, pending: &PendingSnapshot) {
        if !self.points.is_empty() {
            drop(self.history.record(pending));
        }
    }

    /// Keeps `pending` as the newest point, then drops the oldest ones beyond the settings'
    /// count or memory budget (never the new one).
    pub(super) fn keep(
        &mut self,
        pending: &PendingSnapshot,
        taken_at: Duration,
        settings: &RewindSettings,
    ) -> (RewindPointId, Evicted) {
        self.last_id += 1;
        let id = RewindPointId(self.last_id);
        let kept = self.history.record(pending);
        self.points.push_back(RewindPoint { id, taken_at, kept });
        (id, self.evict(settings))
    }

    fn evict(&mut self, settings: &RewindSettings) -> Evicted {
        let mut evicted = Evicted::default();
        while self.points.len() > settings.points.max(1) {
            self.points.pop_front();
            evicted.for_count += 1;
        }
        while self.points.len() > 1 && self.memory() > settings.memory_budget {
            self.points.pop_front();
            evicted.for_memory += 1;
        }
        evicted
    }

    /// The point `to` names, if the ring holds it.
    pub fn find(&self, to: RewindTo, now: Duration) -> Option<&RewindPoint> {
        match to {
            RewindTo::Back(n) => n
                .checked_sub(1)
                .and_then(|back| self.points.iter().rev().nth(back)),
            RewindTo::Ago(age) => self
                .points
                .iter()
                .rev()
                .find(|point| now.saturating_sub(point.taken_at) >= age)
                .or(self.points.front()),
            RewindTo::Point(id) => self.points.iter().find(|point| point.id == id),
        }
    }

    /// Drops the points newer than `id` (after a rewind to it: they are a future that did not
    /// happen) and returns how many. After a rewind that respawned every saved entity, the
    /// next capture is kept whole (`respawned`); after one in place, the history goes on, so
    /// the older points stay linked to the captures that follow.
    pub(super) fn forget_after(&mut self, id: RewindPointId, respawned: bool) -> usize {
        let before = self.points.len();
        self.points.retain(|point| point.id <= id);
        if respawned {
            self.history.clear();
        }
        before - self.points.len()
    }
}
