//! Turns requests, hotkeys and the autosave timer into jobs.

use super::events::{
    Checkpoint, DeleteRequest, LoadRequest, RefreshSlots, SaveRequest, SaveTrigger,
};
use super::jobs::{Job, JobKind, JobQueue, JobTarget};
use super::settings::{KeepsakeSettings, Playtime};
use crate::slot::{SlotId, SlotKind};
use bevy::prelude::*;
use std::time::Duration;

/// Reads the request messages and the hotkeys, advances play time and the autosave timer, and
/// queues the resulting jobs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collect_requests(
    mut saves: MessageReader<SaveRequest>,
    mut loads: MessageReader<LoadRequest>,
    mut deletes: MessageReader<DeleteRequest>,
    mut checkpoints: MessageReader<Checkpoint>,
    mut refreshes: MessageReader<RefreshSlots>,
    keys: Option<Res<ButtonInput<KeyCode>>>,
    settings: Res<KeepsakeSettings>,
    time: Res<Time>,
    mut playtime: ResMut<Playtime>,
    mut since_autosave: Local<Duration>,
    mut queue: ResMut<JobQueue>,
) {
    let pressed = |key: Option<KeyCode>| {
        key.zip(keys.as_deref())
            .is_some_and(|(key, keys)| keys.just_pressed(key))
    };
    if pressed(settings.quicksave_key) {
        queue.enqueue(save_job(SlotId::Quick));
    }
    if pressed(settings.quickload_key) {
        queue.enqueue(slot_job(JobKind::Load, SlotId::Quick));
    }
    for request in saves.read() {
        queue.enqueue(save_job(request.slot));
    }
    for request in loads.read() {
        queue.enqueue(slot_job(JobKind::Load, request.slot));
    }
    for request in deletes.read() {
        queue.enqueue(slot_job(JobKind::Delete, request.slot));
    }
    if checkpoints.read().count() > 0 {
        queue.enqueue(save_job(SlotId::Auto(0)));
    }
    if refreshes.read().count() > 0 {
        queue.request_listing();
    }

    playtime.0 += time.delta();
    *since_autosave += time.delta();
    if settings.autosave_every.is_zero() {
        *since_autosave = Duration::ZERO;
    } else if *since_autosave >= settings.autosave_every {
        *since_autosave = Duration::ZERO;
        if queue.has_save() {
            debug!("keepsake: autosave skipped, a save is already in flight");
        } else {
            queue.enqueue(save_job(SlotId::Auto(0)));
        }
    }
}

/// A save of `slot` (any autosave slot means the ring).
fn save_job(slot: SlotId) -> Job {
    let trigger = match slot.kind() {
        SlotKind::Manual => SaveTrigger::Manual,
        SlotKind::Quick => SaveTrigger::Quicksave,
        SlotKind::Auto => SaveTrigger::Autosave,
    };
    Job {
        kind: JobKind::Save(trigger),
        target: JobTarget::of(slot),
        slot: (slot.kind() != SlotKind::Auto).then_some(slot),
    }
}

fn slot_job(kind: JobKind, slot: SlotId) -> Job {
    Job {
        kind,
        target: JobTarget::of(slot),
        slot: Some(slot),
    }
}
