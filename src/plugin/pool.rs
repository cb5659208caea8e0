//! The task pool the plugin's background work runs on: jobs, the listing refresh, and the save
//! menu's thumbnails. A leaf module, so whatever spawns work imports it and not the job runner.

use bevy::tasks::{AsyncComputeTaskPool, TaskPool};

/// Bevy's async compute pool (created if the app has no `TaskPoolPlugin`, as in bare tests).
pub(crate) fn task_pool() -> &'static TaskPool {
    AsyncComputeTaskPool::get_or_init(TaskPool::new)
}
