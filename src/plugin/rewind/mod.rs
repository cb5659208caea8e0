//! The rewind ring: rewind points kept in memory (undo in puzzle and tactics games, "rewind
//! time", retry from a moment ago, debugging), restored through the same decode and apply as a
//! load, never touching the disk.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use bevy_keepsake::plugin::{RewindPlugin, RewindTo};
//! use std::time::Duration;
//!
//! fn rewind_key(keys: Res<ButtonInput<KeyCode>>, mut commands: Commands) {
//!     if keys.just_pressed(KeyCode::KeyR) {
//!         commands.rewind_to(RewindTo::Ago(Duration::from_secs(5)));
//!     }
//! }
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(KeepsakePlugins::new("my-game").set(RewindPlugin {
//!         every: Duration::from_millis(500),
//!         ..default()
//!     }))
//!     .add_systems(Update, rewind_key)
//!     .run();
//! ```
//!
//! # How a point is kept
//!
//! A point is a capture through the plugin's capture cache, the one saves use, so its main
//! thread part re-encodes only what changed since the last save or point. The ring keeps it as
//! a [`KeptSnapshot`](crate::snapshot::KeptSnapshot): pieces that did not change are shared
//! with the other points and with the cache; of a piece that changed, the older points keep
//! only the rows that differ. N points of a world that changes 1 % between two of them cost
//! about one capture plus N times 1 % of it, and dropping the oldest frees its rows at once.
//! The patches a point's capture made are put together on the task pool.
//!
//! # How a rewind happens
//!
//! The point's pieces are put back together and decoded on the task pool; the world is changed
//! on the main thread when that is done (in the [`KeepsakeSystems::Jobs`] set), exactly as a
//! load's: every saved entity is despawned and the point's entities are spawned again
//! ([`LoadMode::Respawn`](crate::snapshot::LoadMode::Respawn)), references remapped, keyed
//! level entities found by key. Then:
//!
//! - points newer than the one restored are dropped (the future they held did not happen);
//!   the restored point stays, as the newest, so the same rewind can be made again;
//! - entities spawned after the point are gone, and entity ids change (see
//!   [`RewindCompleted::entity_map`]);
//! - play time and the autosave timer go on: a rewind is part of playing.
//!
//! **A load clears the ring**: the points belong to the timeline the load left, and a rewind
//! must not bring a world back that the loaded save never had.
//!
//! [`KeepsakeSystems::Jobs`]: crate::plugin::KeepsakeSystems::Jobs

mod events;
mod ring;
mod run;
mod settings;

pub use crate::plugin::restored::RewindPointId;
pub use events::{
    RewindCompleted, RewindError, RewindFailed, RewindPointCompleted, RewindPointFailed,
    RewindPointRequest, RewindRequest,
};
pub use ring::{Evicted, RewindPoint, RewindRing, RewindTo};
pub use settings::{RewindSettings, RewindTimer};

#[cfg(feature = "testing")]
pub(crate) use run::rewind_in_flight;

use crate::plugin::capture::CaptureHooks;
use crate::plugin::core::KeepsakeSystems;
use crate::plugin::core::schedule_of;
use crate::plugin::{listing, runner};
use bevy::prelude::*;
use std::time::Duration;

/// The rewind ring: points taken on request or on a timer, kept in memory, and rewinds to them.
/// A member of [`KeepsakePlugins`](crate::plugin::KeepsakePlugins), on by default; without it
/// (`.disable::<RewindPlugin>()`), captures feed no ring and rewind requests go unread. Its
/// fields are the starting values of the [`RewindSettings`] resource, changeable at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RewindPlugin {
    /// The most points the ring holds (at least one is kept); the oldest goes when a new one
    /// would exceed it. Default 60.
    pub points: usize,
    /// Time ([`Time`], which stops while the game is paused) between points the ring takes by
    /// itself; `Duration::ZERO` (the default): only on request.
    pub every: Duration,
    /// The most bytes the points may hold ([`RewindRing::memory`]); the oldest go when a new
    /// point exceeds it (the newest always stays). Default 64 MiB.
    pub memory_budget: usize,
}

impl Default for RewindPlugin {
    fn default() -> Self {
        let RewindSettings {
            points,
            every,
            memory_budget,
        } = RewindSettings::default();
        RewindPlugin {
            points,
            every,
            memory_budget,
        }
    }
}

impl Plugin for RewindPlugin {
    fn build(&self, app: &mut App) {
        let schedule = schedule_of(app, "RewindPlugin");
        let settings = RewindSettings {
            points: self.points,
            every: self.every,
            memory_budget: self.memory_budget,
        };
        add_resources(app, settings);
        add_messages(app);
        // After the runner: a rewind and a load finishing in one frame are seen in that order.
        app.add_systems(
            schedule,
            run::run_rewind
                .in_set(KeepsakeSystems::Jobs)
                .after(runner::run_jobs)
                .before(listing::refresh_listing),
        );
    }
}

/// The ring, its timer and its cursors; the hook that lets the ring see every capture.
fn add_resources(app: &mut App, settings: RewindSettings) {
    app.init_resource::<CaptureHooks>();
    // The ring's points keep only what changed across each capture (a save's, a load's).
    app.world_mut()
        .resource_mut::<CaptureHooks>()
        .add(|world, pending| world.resource_mut::<RewindRing>().note(pending));
    app.insert_resource(settings)
        .init_resource::<RewindRing>()
        .init_resource::<RewindTimer>()
        .init_resource::<run::RewindCursors>()
        .init_resource::<run::Rewinding>()
        .init_resource::<run::InFrameCost>()
        .add_observer(run::clear_on_load);
}

/// The ring's requests (its results are observer events), and the reflection of both.
fn add_messages(app: &mut App) {
    app.add_message::<RewindPointRequest>()
        .add_message::<RewindRequest>()
        .register_type::<RewindSettings>()
        .register_type::<RewindTimer>()
        .register_type::<RewindPointRequest>()
        .register_type::<RewindRequest>()
        .register_type::<RewindPointCompleted>()
        .register_type::<RewindPointFailed>()
        .register_type::<RewindCompleted>()
        .register_type::<RewindFailed>();
}
