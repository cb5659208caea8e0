//! [`AutosavePlugin`]: autosaves on a timer of play time and when the window loses focus, and
//! [`AutosaveTimer`], the timer the game reads, pauses or resets.

use super::LoadCompleted;
use super::core::KeepsakeSystems;
use super::core::schedule_of;
use super::job::{Job, SaveTarget};
use super::requests;
use super::runner::JobQueue;
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowFocused};
use std::time::Duration;

/// Autosaves into the autosave ring every [`every`](Self::every) of play time and, with
/// [`on_focus_loss`](Self::on_focus_loss), when the primary window loses focus. A member of
/// [`KeepsakePlugins`](super::KeepsakePlugins), on by default; without it
/// (`.disable::<AutosavePlugin>()`), saves come from requests only.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
/// use std::time::Duration;
///
/// let keepsake = KeepsakePlugins::new("my-game").set(AutosavePlugin {
///     every: Duration::from_secs(120),
///     ..default()
/// });
/// # let _ = keepsake;
/// ```
///
/// While the game runs, [`AutosaveTimer`] holds the interval: a game pauses it in its menus or
/// on a title screen, where an autosave would only hold what the player did not play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutosavePlugin {
    /// Play time ([`Time`], which stops while the game is paused) between timed autosaves; the
    /// starting value of [`AutosaveTimer::every`]. Default 60 s. Must not be zero.
    pub every: Duration,
    /// Whether an autosave is also made when the primary window loses focus (alt-tab, a laptop
    /// lid, a handheld's suspend button). Default no.
    pub on_focus_loss: bool,
}

impl Default for AutosavePlugin {
    fn default() -> Self {
        AutosavePlugin {
            every: Duration::from_secs(60),
            on_focus_loss: false,
        }
    }
}

impl Plugin for AutosavePlugin {
    fn build(&self, app: &mut App) {
        let schedule = schedule_of(app, "AutosavePlugin");
        app.insert_resource(AutosaveTimer::new(self.every))
            .register_type::<AutosaveTimer>()
            // A timed autosave right after a load would spend a ring slot on the state just
            // loaded.
            .add_observer(|_: On<LoadCompleted>, mut timer: ResMut<AutosaveTimer>| timer.reset());
        app.add_systems(
            schedule,
            tick_autosave
                .after(requests::collect_requests)
                .in_set(KeepsakeSystems::Requests),
        );
        if self.on_focus_loss {
            app.add_systems(
                schedule,
                autosave_on_focus_loss
                    .after(requests::collect_requests)
                    .before(tick_autosave)
                    .in_set(KeepsakeSystems::Requests),
            );
        }
    }
}

/// The autosave timer: play time since the last timed autosave (or load), the interval, and
/// whether autosaves are paused. [`AutosavePlugin`] advances it with virtual time and autosaves
/// into the ring when it reaches [`every`](Self::every); a load starts it over. A game reads it
/// (a "next autosave in 20 s" hint), [`reset`](Self::reset)s it (after the player saved by
/// hand), [`pause`](Self::pause)s it (in menus, on a title screen) or changes the interval.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::{AutosaveTimer, SaveReason};
/// use bevy_keepsake::prelude::*;
///
/// fn no_autosave_right_after_a_manual_save(
///     saved: On<SaveCompleted>,
///     mut timer: ResMut<AutosaveTimer>,
/// ) {
///     if saved.reason == SaveReason::Manual {
///         timer.reset();
///     }
/// }
/// # App::new().add_observer(no_autosave_right_after_a_manual_save);
/// ```
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct AutosaveTimer {
    elapsed: Duration,
    every: Duration,
    paused: bool,
}

impl Default for AutosaveTimer {
    /// The timer of the default `AutosavePlugin` (every 60 s).
    fn default() -> Self {
        AutosaveTimer::new(AutosavePlugin::default().every)
    }
}

impl AutosaveTimer {
    /// # Panics
    ///
    /// If `every` is zero (see [`set_every`](Self::set_every)).
    fn new(every: Duration) -> Self {
        let mut timer = AutosaveTimer {
            elapsed: Duration::ZERO,
            every: Duration::MAX,
            paused: false,
        };
        timer.set_every(every);
        timer
    }

    /// Play time since the last timed autosave (or the last reset).
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Play time between timed autosaves.
    pub fn every(&self) -> Duration {
        self.every
    }

    /// Changes the play time between timed autosaves (the time already counted stays).
    ///
    /// # Panics
    ///
    /// If `every` is zero: [`pause`](Self::pause) the timer to stop autosaves for a while,
    /// `.disable::<AutosavePlugin>()` to have none.
    pub fn set_every(&mut self, every: Duration) {
        assert!(
            !every.is_zero(),
            "keepsake: an autosave interval of zero (`AutosavePlugin::every`): pause the \
             AutosaveTimer to stop autosaves for a while, or `.disable::<AutosavePlugin>()` to \
             have none"
        );
        self.every = every;
    }

    /// Play time left until the next timed autosave (`None` while paused).
    pub fn remaining(&self) -> Option<Duration> {
        (!self.paused).then(|| self.every.saturating_sub(self.elapsed))
    }

    /// Starts counting again from zero.
    pub fn reset(&mut self) {
        self.elapsed = Duration::ZERO;
    }

    /// Stops autosaves, timed and on focus loss, until [`unpause`](Self::unpause); the time
    /// counted so far is kept.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Lets autosaves happen again, the timer going on from where it was paused.
    pub fn unpause(&mut self) {
        self.paused = false;
    }

    /// Whether autosaves are paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Advances by `delta` unless paused; returns whether a timed autosave is due (and starts
    /// over if so).
    fn tick(&mut self, delta: Duration) -> bool {
        if self.paused {
            return false;
        }
        self.elapsed += delta;
        let due = self.elapsed >= self.every;
        if due {
            self.reset();
        }
        due
    }
}

/// Advances the autosave timer; queues a timed autosave when one is due, unless a save is
/// already running or waiting (it would capture the same world).
fn tick_autosave(time: Res<Time>, mut timer: ResMut<AutosaveTimer>, mut queue: ResMut<JobQueue>) {
    if !timer.tick(time.delta()) {
        return;
    }
    if queue.has_save() {
        debug!("keepsake: autosave skipped, a save is already in flight");
    } else {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}

/// Queues an autosave when the primary window loses focus, unless autosaves are paused or a
/// save is already under way. Added only when [`AutosavePlugin::on_focus_loss`] is on.
fn autosave_on_focus_loss(
    mut focus: MessageReader<WindowFocused>,
    primary: Query<(), With<PrimaryWindow>>,
    timer: Res<AutosaveTimer>,
    mut queue: ResMut<JobQueue>,
) {
    let lost = focus
        .read()
        .any(|event| !event.focused && primary.contains(event.window));
    if lost && !timer.is_paused() && !queue.has_save() {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}
