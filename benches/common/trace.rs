//! Per-frame traces for `scripts/bench_report.py`'s plots: with `KEEPSAKE_BENCH_TRACES=DIR`,
//! every frame a scenario times is kept in order and written to `DIR/<name>.csv` as
//! `frame,ms,mark` (the mark says what was asked in that frame, empty for none). Without the
//! variable nothing is kept, so the bench's printed figures do not depend on it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

thread_local! {
    /// The frames since the last [`write`] or [`discard`], and the mark for the next frame.
    static FRAMES: RefCell<(Vec<(Duration, &'static str)>, &'static str)> =
        const { RefCell::new((Vec::new(), "")) };
}

fn folder() -> Option<&'static PathBuf> {
    static FOLDER: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOLDER
        .get_or_init(|| std::env::var_os("KEEPSAKE_BENCH_TRACES").map(PathBuf::from))
        .as_ref()
}

/// Marks the next frame [`frame`] records with what was asked in it.
pub fn mark(what: &'static str) {
    FRAMES.with_borrow_mut(|(_, next)| *next = what);
}

/// Records one frame's time (with the pending mark, if any).
pub fn frame(time: Duration) {
    FRAMES.with_borrow_mut(|(frames, next)| {
        if folder().is_some() {
            frames.push((time, std::mem::take(next)));
        } else {
            *next = "";
        }
    });
}

/// Forgets the frames recorded since the last write (warm-ups, scenarios not plotted).
pub fn discard() {
    FRAMES.with_borrow_mut(|(frames, next)| {
        frames.clear();
        *next = "";
    });
}

/// Writes the frames recorded since the last write or discard to `<name>.csv`, then forgets
/// them. A trace that cannot be written is reported and skipped: the figures still print.
pub fn write(name: &str) {
    let frames = FRAMES.with_borrow_mut(|(frames, next)| {
        *next = "";
        std::mem::take(frames)
    });
    let Some(dir) = folder() else { return };
    let mut csv = String::from("frame,ms,mark\n");
    for (index, (time, mark)) in frames.iter().enumerate() {
        csv.push_str(&format!(
            "{},{:.4},{mark}\n",
            index + 1,
            time.as_secs_f64() * 1e3
        ));
    }
    let path = dir.join(format!("{name}.csv"));
    if let Err(error) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, csv)) {
        eprintln!("frame trace {}: not written: {error}", path.display());
    }
}
