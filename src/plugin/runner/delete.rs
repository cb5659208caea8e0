//! Deletes: every generation of a slot removed on the task pool; [`DeleteCompleted`] or
//! [`DeleteFailed`].

use super::queue::{Outcome, Work};
use crate::SlotId;
use crate::plugin::error::KeepsakeError;
use crate::plugin::events::{DeleteCompleted, DeleteFailed, report};
use crate::plugin::pool::task_pool;
use crate::store::SlotStore;
use bevy::prelude::*;
use std::sync::Arc;

/// Deletes on the pool.
pub(super) fn start(slot: SlotId, store: Arc<SlotStore>) -> Box<dyn Work> {
    let task = task_pool().spawn(async move {
        let result = store.delete(slot).map_err(KeepsakeError::from);
        Box::new(Deleted { slot, result }) as Box<dyn Outcome>
    });
    Box::new(task)
}

/// The outcome of a delete that could not start.
pub(super) fn failed(slot: SlotId, error: KeepsakeError) -> Box<dyn Outcome> {
    Box::new(Deleted {
        slot,
        result: Err(error),
    })
}

/// A finished delete: how many files it removed.
struct Deleted {
    slot: SlotId,
    result: Result<usize, KeepsakeError>,
}

impl Outcome for Deleted {
    fn finish(self: Box<Self>, world: &mut World) {
        let slot = self.slot;
        match self.result {
            Ok(files) => report(world, DeleteCompleted { slot, files }),
            Err(error) => {
                let error = Arc::new(error);
                report(world, DeleteFailed { slot, error });
            }
        }
    }
}
