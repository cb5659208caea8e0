//! A filesystem whose writes wait until the test opens a gate: it holds a save "in flight" for
//! as long as a test needs, without sleeping.

use keepsake_core::store::WriteFile;
use keepsake_core::store::testing::Forward;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct GateState {
    open: bool,
    waiting_writers: usize,
}

/// Shared gate; clone it to keep a handle in the test, and give the store
/// [`filesystem`](Self::filesystem).
#[derive(Clone, Default)]
pub struct GateFs {
    state: Arc<(Mutex<GateState>, Condvar)>,
}

impl std::fmt::Debug for GateFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GateFs")
    }
}

impl GateFs {
    /// A gate that starts closed.
    pub fn closed() -> Self {
        Self::default()
    }

    /// Lets every waiting and future write through.
    pub fn open(&self) {
        let (lock, condvar) = &*self.state;
        lock.lock().unwrap().open = true;
        condvar.notify_all();
    }

    /// The real filesystem, whose new files' writes wait at this gate.
    pub fn filesystem(&self) -> Forward {
        let gate = self.clone();
        Forward::os().on_create_new(move |fs, path| {
            Ok(Box::new(GatedWriter {
                inner: fs.create_new(path)?,
                gate: gate.clone(),
            }))
        })
    }

    /// Blocks until a writer is waiting at the closed gate.
    pub fn wait_for_writer(&self) {
        let (lock, condvar) = &*self.state;
        let mut state = lock.lock().unwrap();
        while state.waiting_writers == 0 {
            state = condvar.wait(state).unwrap();
        }
    }

    fn pass(&self) {
        let (lock, condvar) = &*self.state;
        let mut state = lock.lock().unwrap();
        state.waiting_writers += 1;
        condvar.notify_all();
        while !state.open {
            state = condvar.wait(state).unwrap();
        }
        state.waiting_writers -= 1;
    }
}

struct GatedWriter {
    inner: Box<dyn WriteFile>,
    gate: GateFs,
}

impl Write for GatedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.gate.pass();
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl WriteFile for GatedWriter {
    fn sync_all(&mut self) -> io::Result<()> {
        self.inner.sync_all()
    }
}
