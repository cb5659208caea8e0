//! [`AutosavePlugin`]: autosaves on a timer of play time and when the window loses focus.

use super::core::KeepsakeSystems;
use super::core::schedule_of;
use super::job::{Job, SaveTarget};
use super::requests;
use super::runner::JobQueue;
use super::settings::{AutosaveTimer, KeepsakeSettings};
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowFocused};

/// Autosaves into the autosave ring every [`KeepsakeSettings::autosave_every`] of play time
/// (`Duration::ZERO`: never on a timer) and, if [`KeepsakeSettings::autosave_on_focus_loss`]
/// is on, when the primary window loses focus. A member of
/// [`KeepsakePlugins`](super::KeepsakePlugins); without it, saves come from requests only.
#[derive(Clone, Copy, Debug, Default)]
pub struct AutosavePlugin;

impl Plugin for AutosavePlugin {
    fn build(&self, app: &mut App) {
        let schedule = schedule_of(app, "AutosavePlugin");
        app.add_systems(
            schedule,
            (autosave_on_focus_loss, tick_autosave)
                .chain()
                .after(requests::collect_requests)
                .in_set(KeepsakeSystems::Requests),
        );
    }
}

/// Advances the autosave timer; queues a timed autosave when one is due, unless a save is
/// already running or waiting (it would capture the same world).
fn tick_autosave(
    time: Res<Time>,
    settings: Res<KeepsakeSettings>,
    mut timer: ResMut<AutosaveTimer>,
    mut queue: ResMut<JobQueue>,
) {
    if !timer.tick(time.delta(), settings.autosave_every) {
        return;
    }
    if queue.has_save() {
        debug!("keepsake: autosave skipped, a save is already in flight");
    } else {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}

/// Queues an autosave when the primary window loses focus, if
/// [`KeepsakeSettings::autosave_on_focus_loss`] is on (and no save is already under way).
fn autosave_on_focus_loss(
    mut focus: MessageReader<WindowFocused>,
    primary: Query<(), With<PrimaryWindow>>,
    settings: Res<KeepsakeSettings>,
    mut queue: ResMut<JobQueue>,
) {
    let lost = focus
        .read()
        .any(|event| !event.focused && primary.contains(event.window));
    if lost && settings.autosave_on_focus_loss && !queue.has_save() {
        queue.enqueue(Job::save(SaveTarget::AutosaveRing));
    }
}
