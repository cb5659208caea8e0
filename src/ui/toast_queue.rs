//! The toasts on screen as plain data ([`Toasts`]): what each says, its colour, how long it
//! stays, and which "Saving…" it replaces. Built from the plugin's result events by the toasts
//! plugin, drawn by the view, tested without rendering.

use crate::plugin::{
    DeleteCompleted, DeleteFailed, JobTarget, LoadCompleted, LoadFailed, RewindCompleted,
    RewindError, RewindFailed, SaveCompleted, SaveFailed, SaveReason, SaveStarted,
};
use crate::snapshot::UnsavedComponent;
use bevy::prelude::*;
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

/// What a toast is about: a newer toast on the same topic replaces it in place ("Saving…"
/// turns into "Saved to Manual 3"; each step of a held rewind replaces the last step's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToastTopic {
    /// A save, load or delete of a slot, or a save into the autosave ring.
    Job(JobTarget),
    /// Rewinds.
    Rewind,
}

/// One notice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toast {
    /// What it says.
    pub text: String,
    /// Its colour.
    pub kind: ToastKind,
    /// A newer toast on the same topic replaces it rather than stacking under it.
    pub topic: Option<ToastTopic>,
    /// How long it stays.
    pub lifetime: Duration,
}

impl Toast {
    fn new(text: impl Into<String>, kind: ToastKind, topic: Option<ToastTopic>) -> Self {
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
        let topic = ToastTopic::Job(event.target.job_target());
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
        let topic = ToastTopic::Job(JobTarget::of(event.slot));
        Toast::new(text, ToastKind::Success, Some(topic))
    }

    /// "Save failed: `<reason>`".
    pub fn save_failed(event: &SaveFailed) -> Self {
        let topic = ToastTopic::Job(event.target.job_target());
        Toast::new(
            format!("Save failed: {}", event.error),
            ToastKind::Error,
            Some(topic),
        )
    }

    /// "Loaded Manual 3", with "(restored from backup)" when a backup was used; an error
    /// toast when the loaded entities came back without components the live ones had
    /// ("Loaded Manual 3, but without Sprite, Transform: not in the save").
    pub fn load_completed(event: &LoadCompleted) -> Self {
        let backup = if event.restored_from_backup {
            " (restored from backup)"
        } else {
            ""
        };
        Toast::restored(
            format!("Loaded {}{backup}", event.slot),
            &event.missing_components,
        )
    }

    /// `text`, or when the restored entities lack components, an error naming them.
    fn restored(text: String, missing: &[UnsavedComponent]) -> Self {
        if missing.is_empty() {
            return Toast::new(text, ToastKind::Success, None);
        }
        const NAMED: usize = 3;
        let mut names: Vec<String> = missing.iter().take(NAMED).map(|m| m.short_name()).collect();
        if missing.len() > NAMED {
            names.push(format!("{} more", missing.len() - NAMED));
        }
        let text = format!("{text}, but without {}: not in the save", names.join(", "));
        Toast::new(text, ToastKind::Error, None)
    }

    /// "Load failed: `<reason>`".
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

    /// "Rewound 5.0 s" (an error naming what the restored entities came back without, as a
    /// load's). Each rewind replaces the last one's toast: holding R shows one toast that
    /// counts back.
    pub fn rewind_completed(event: &RewindCompleted) -> Self {
        let seconds = event.age.as_secs_f32();
        let text = format!("Rewound {seconds:.1} s");
        Toast {
            topic: Some(ToastTopic::Rewind),
            ..Toast::restored(text, &event.missing_components)
        }
    }

    /// "Nothing to rewind to yet" when the ring is empty, else "Rewind failed: `<reason>`".
    pub fn rewind_failed(event: &RewindFailed) -> Self {
        let text = match &*event.error {
            RewindError::NoPoint { points: 0, .. } => "Nothing to rewind to yet".to_owned(),
            error => format!("Rewind failed: {error}"),
        };
        Toast::new(text, ToastKind::Error, Some(ToastTopic::Rewind))
    }

    /// "Delete failed: `<reason>`".
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
