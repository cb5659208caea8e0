//! Where the plugin's background work runs: Bevy's async compute pool for jobs, the listing
//! refresh and the save menu's thumbnails, and a thread of lower priority for the pool part of
//! a save, so that the operating system prefers the game's threads to it. A leaf module, so
//! whatever spawns work imports it and not the job runner.
//!
//! # The save thread's priority, per platform
//!
//! | platform | what [`SavePriority::Low`] does |
//! |---|---|
//! | Linux (and Android) | `sched_setscheduler(SCHED_IDLE)` on the save thread: it runs only on a core no normal thread wants, and a game thread that wakes up preempts it at once. If the kernel refuses (a sandbox filtering the call), `setpriority` to nice 19 instead. |
//! | Windows | `SetThreadPriority(THREAD_PRIORITY_BELOW_NORMAL)` on the save thread. |
//! | elsewhere (macOS, iOS, the web) | nothing: the thread runs at the priority it is created with. |
//!
//! Either way the thread is a dedicated one (one per save, created when its write starts), not
//! one of Bevy's pools, whose threads also run the frame's tasks and must keep their priority.
//! The save's result comes back through the same polling as before: the events do not change.

use bevy::tasks::{AsyncComputeTaskPool, TaskPool};
use std::any::Any;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Mutex, PoisonError};

/// Bevy's async compute pool (created if the app has no `TaskPoolPlugin`, as in bare tests).
pub(crate) fn task_pool() -> &'static TaskPool {
    AsyncComputeTaskPool::get_or_init(TaskPool::new)
}

/// The priority of the thread that encodes, compresses and writes a save (the pool part of a
/// save: see the module docs in `pool.rs` for what it does per platform).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bevy::reflect::Reflect)]
pub enum SavePriority {
    /// Below the game's threads, so a save never takes a core from the frame (the default).
    #[default]
    Low,
    /// The priority of any other thread (the platform's default).
    Normal,
}

/// Work running on a thread of its own; its result once it finished.
pub(crate) struct BackgroundThread<T> {
    /// In a mutex only so the handle is `Sync`, as the job queue's work must be; polled through
    /// `&mut self`, it is never locked.
    result: Mutex<Receiver<Result<T, Box<dyn Any + Send>>>>,
}

impl<T> BackgroundThread<T> {
    /// The result, once the work finished. A panic of the work is resumed here, on the polling
    /// thread, as a panic of a pool task would be.
    pub(crate) fn poll(&mut self) -> Option<T> {
        let result = self
            .result
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        match result.try_recv() {
            Ok(Ok(value)) => Some(value),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => panic!("keepsake: the save thread vanished"),
        }
    }
}

/// Runs `work` on a new thread of `priority`. `Err` when the thread cannot be created (then
/// nothing ran).
pub(crate) fn spawn_thread<T: Send + 'static>(
    priority: SavePriority,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<BackgroundThread<T>> {
    let (sender, result) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("keepsake-save".into())
        .spawn(move || {
            if priority == SavePriority::Low
                && let Err(error) = lower_this_thread()
            {
                bevy::log::debug!("keepsake: the save thread keeps its priority: {error}");
            }
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The receiver is gone only when the app dropped the save: nothing to tell.
            let _ = sender.send(outcome);
        })?;
    Ok(BackgroundThread {
        result: Mutex::new(result),
    })
}

/// Lowers the calling thread's priority below that of normal threads (see the module docs).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn lower_this_thread() -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid `sched_param` for the duration of the call; pid 0 is the
    // calling thread (Linux schedules threads, not processes).
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0 {
        return Ok(());
    }
    // SAFETY: no arguments; returns the calling thread's id.
    let thread = unsafe { libc::gettid() };
    // SAFETY: plain integer arguments; the nice value of one thread (its id) is changed.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS as _, thread as _, 19) } == 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

/// Lowers the calling thread's priority below that of normal threads (see the module docs).
#[cfg(windows)]
fn lower_this_thread() -> std::io::Result<()> {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
    };
    // SAFETY: `GetCurrentThread` returns a pseudo-handle to the calling thread, always valid
    // for it, which `SetThreadPriority` accepts.
    if unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL) } != 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

/// Elsewhere the thread keeps its priority (see the module docs).
#[cfg(not(any(target_os = "linux", target_os = "android", windows)))]
fn lower_this_thread() -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The calling thread's scheduling policy and nice value, read back from the kernel.
    fn policy_and_nice() -> (i32, i32) {
        // SAFETY: pid 0 is the calling thread; no pointers.
        let policy = unsafe { libc::sched_getscheduler(0) };
        // SAFETY: as above, for the calling thread's id.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS as _, libc::gettid() as _) };
        (policy, nice)
    }

    fn poll_until_done<T>(mut thread: BackgroundThread<T>) -> T {
        loop {
            if let Some(value) = thread.poll() {
                return value;
            }
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_low_priority_save_thread_runs_under_sched_idle_or_nice_19() {
        let (policy, nice) =
            poll_until_done(spawn_thread(SavePriority::Low, policy_and_nice).unwrap());
        println!(
            "save thread: policy {policy} (SCHED_IDLE is {}), nice {nice}",
            libc::SCHED_IDLE
        );
        assert!(
            policy == libc::SCHED_IDLE || nice == 19,
            "policy {policy}, nice {nice}"
        );
        // The thread that spawned it keeps its own.
        assert_ne!(policy_and_nice().0, libc::SCHED_IDLE);
    }

    #[test]
    fn a_normal_priority_save_thread_keeps_the_default() {
        let here = policy_and_nice();
        let there = poll_until_done(spawn_thread(SavePriority::Normal, policy_and_nice).unwrap());
        assert_eq!(there, here);
    }

    #[test]
    fn a_panic_on_the_save_thread_is_resumed_where_it_is_polled() {
        let thread = spawn_thread(SavePriority::Low, || -> u8 { panic!("boom") }).unwrap();
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_until_done(thread)));
        let message = caught.unwrap_err();
        assert_eq!(message.downcast_ref::<&str>(), Some(&"boom"));
    }
}
