//! A filesystem whose writes wait until the test opens a gate: it holds a save "in flight" for
//! as long as a test needs, without sleeping.

use bevy_keepsake::store::{FileSystem, LockGuard, OsFileSystem, ReadFile, WriteFile};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct GateState {
    open: bool,
    waiting_writers: usize,
}

/// Shared gate; clone it to keep a handle in the test.
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

impl FileSystem for GateFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        OsFileSystem.list_dir(path)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        OsFileSystem.open_read(path)
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        Ok(Box::new(GatedWriter {
            inner: OsFileSystem.create_new(path)?,
            gate: self.clone(),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        OsFileSystem.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.remove_file(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.sync_dir(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        OsFileSystem.lock(path)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<Box<dyn LockGuard>>> {
        OsFileSystem.try_lock(path)
    }
}
