//! A global allocator that tracks, per thread, the peak of bytes allocated during a closure.
//!
//! A test binary opts in with
//! `#[global_allocator] static ALLOC: common::alloc::CountingAlloc = common::alloc::CountingAlloc;`
//! and then calls [`peak_allocation`]. Tracking is per thread, so tests running in parallel in the
//! same binary do not disturb each other's figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes allocated by the current thread while a measurement runs.
pub struct CountingAlloc;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn record(delta: isize) {
    let _ = CURRENT.try_with(|current| {
        let now = current.get() + delta;
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; we only count sizes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, passed on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which got it from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        record(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller upholds `realloc`'s size contract.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(new_size as isize - layout.size() as isize);
        }
        new
    }
}

/// Runs `f` and returns its result with the peak number of bytes the current thread had
/// allocated at once during the call (above what it held before).
pub fn peak_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    CURRENT.with(|current| current.set(0));
    PEAK.with(|peak| peak.set(0));
    let result = f();
    let peak = PEAK.with(Cell::get).max(0) as usize;
    (result, peak)
}

/// Runs `f` and returns its result with the bytes the current thread held after the call
/// beyond what it held before: what the call allocated and kept, less what it freed of what
/// was there before.
pub fn net_allocation<R>(f: impl FnOnce() -> R) -> (R, isize) {
    let before = CURRENT.with(Cell::get);
    let result = f();
    (result, CURRENT.with(Cell::get) - before)
}
