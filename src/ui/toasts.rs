//! Short notices in the corner ("Saving…", "Saved to Manual 3", "Save failed: …"), shown
//! whether or not the menu is open. The queue is plain data; the texts come from the plugin's
//! result events.

use super::{SaveMenuSystems, ScreenshotCurtain, view};
use crate::plugin::{
    DeleteCompleted, DeleteFailed, JobTarget, LoadCompleted, LoadFailed, SaveCompleted, SaveFailed,
    SaveReason, SaveStarted,
};
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass};
use std::collections::VecDeque;
use std::time::Duration;

/// How a toast is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToastKind {
    /// Something is under way.
    Progress,
    /// Something finished.
    Success,
    /// Something failed; shown longer.
    Error,
}

/// One notice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toast {
    /// What it says.
    pub text: String,
    /// Its colour.
    pub kind: ToastKind,
    /// A "Saving…" toast is replaced by its result rather than stacked under it.
    pub topic: Option<JobTarget>,
    /// How long it stays.
    pub lifetime: Duration,
}

impl Toast {
    fn new(text: impl Into<String>, kind: ToastKind, topic: Option<JobTarget>) -> Self {
        let lifetime = match kind {
            ToastKind::Progress => Duration::from_secs(10),
            ToastKind::Success => Duration::from_millis(2500),
            ToastKind::Error => Duration::from_secs(6),
        };
        Toast {
            text: text.into(),
            kind,
            topic,
            lifetime,
        }
    }

    /// "Saving…".
    pub fn save_started(event: &SaveStarted) -> Self {
        let topic = event.target.job_target();
        Toast::new("Saving\u{2026}", ToastKind::Progress, Some(topic))
    }

    /// "Saved to Manual 3", "Quicksaved" or "Autosaved".
    pub fn save_completed(event: &SaveCompleted) -> Self {
        let text = match event.reason {
            SaveReason::Manual => format!("Saved to {}", event.slot),
            SaveReason::Quicksave => "Quicksaved".to_owned(),
            SaveReason::Autosave => "Autosaved".to_owned(),
            SaveReason::Exit => "Saved on exit".to_owned(),
        };
        let topic = JobTarget::of(event.slot);
        Toast::new(text, ToastKind::Success, Some(topic))
    }

    /// "Save failed: <reason>".
    pub fn save_failed(event: &SaveFailed) -> Self {
        let topic = event.target.job_target();
        Toast::new(
            format!("Save failed: {}", event.error),
            ToastKind::Error,
            Some(topic),
        )
    }

    /// "Loaded Manual 3", with "(restored from backup)" when a backup was used.
    pub fn load_completed(event: &LoadCompleted) -> Self {
        let backup = if event.restored_from_backup {
            " (restored from backup)"
        } else {
            ""
        };
        Toast::new(
            format!("Loaded {}{backup}", event.slot),
            ToastKind::Success,
            None,
        )
    }

    /// "Load failed: <reason>".
    pub fn load_failed(event: &LoadFailed) -> Self {
        Toast::new(
            format!("Load failed: {}", event.error),
            ToastKind::Error,
            None,
        )
    }

    /// "Deleted Manual 3" ("Manual 3 is already empty" when there was nothing to delete).
    pub fn delete_completed(event: &DeleteCompleted) -> Self {
        let text = match event.files {
            0 => format!("{} is already empty", event.slot),
            _ => format!("Deleted {}", event.slot),
        };
        Toast::new(text, ToastKind::Success, None)
    }

    /// "Delete failed: <reason>".
    pub fn delete_failed(event: &DeleteFailed) -> Self {
        Toast::new(
            format!("Delete failed: {}", event.error),
            ToastKind::Error,
            None,
        )
    }
}

/// A toast on screen, with the time it appeared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownToast {
    /// The toast.
    pub toast: Toast,
    /// When it appeared (real time since startup).
    pub since: Duration,
}

/// The toasts on screen, oldest first.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct Toasts {
    shown: VecDeque<ShownToast>,
}

impl Toasts {
    /// At most this many toasts are shown; older ones make room.
    pub const MAX_SHOWN: usize = 4;

    /// Shows `toast` from `now`, replacing the toast of the same topic (so "Saving…" turns
    /// into "Saved to Manual 3" in place).
    pub fn push(&mut self, toast: Toast, now: Duration) {
        let shown = ShownToast { toast, since: now };
        let same_topic = self
            .shown
            .iter()
            .position(|old| old.toast.topic.is_some() && old.toast.topic == shown.toast.topic);
        match same_topic {
            Some(index) => self.shown[index] = shown,
            None => {
                self.shown.push_back(shown);
                while self.shown.len() > Self::MAX_SHOWN {
                    self.shown.pop_front();
                }
            }
        }
    }

    /// Removes toasts whose time is up.
    pub fn expire(&mut self, now: Duration) {
        self.shown
            .retain(|shown| now.saturating_sub(shown.since) < shown.toast.lifetime);
    }

    /// The toasts on screen, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &ShownToast> {
        self.shown.iter()
    }

    /// Whether there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }
}

/// Toasts for every save, load and delete, menu open or not. Part of
/// [`SaveMenuPlugins`](super::SaveMenuPlugins); works without the menu too.
#[derive(Clone, Copy, Debug, Default)]
pub struct SaveToastsPlugin;

impl Plugin for SaveToastsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Toasts>()
            .init_resource::<ScreenshotCurtain>()
            .add_observer(toast_on::<SaveStarted>(Toast::save_started))
            .add_observer(toast_on::<SaveCompleted>(Toast::save_completed))
            .add_observer(toast_on::<SaveFailed>(Toast::save_failed))
            .add_observer(toast_on::<LoadCompleted>(Toast::load_completed))
            .add_observer(toast_on::<LoadFailed>(Toast::load_failed))
            .add_observer(toast_on::<DeleteCompleted>(Toast::delete_completed))
            .add_observer(toast_on::<DeleteFailed>(Toast::delete_failed))
            .add_systems(Update, expire_toasts.in_set(SaveMenuSystems::Input))
            .add_systems(
                EguiPrimaryContextPass,
                show_toasts.in_set(SaveMenuSystems::Draw),
            );
    }
}

/// An observer that shows the toast `make` builds from each `E`.
fn toast_on<E: Event>(make: fn(&E) -> Toast) -> impl Fn(On<E>, ResMut<Toasts>, Res<Time<Real>>) {
    move |event: On<E>, mut toasts: ResMut<Toasts>, time: Res<Time<Real>>| {
        toasts.push(make(event.event()), time.elapsed());
    }
}

fn expire_toasts(mut toasts: ResMut<Toasts>, time: Res<Time<Real>>) {
    toasts.expire(time.elapsed());
}

/// Draws the toasts, except on a frame whose picture is being taken.
fn show_toasts(
    mut contexts: EguiContexts,
    toasts: Res<Toasts>,
    curtain: Res<ScreenshotCurtain>,
    frames: Res<FrameCount>,
) -> Result {
    if toasts.is_empty() || curtain.hides(frames.0) {
        return Ok(());
    }
    view::draw_toasts(contexts.ctx_mut()?, &toasts);
    Ok(())
}
