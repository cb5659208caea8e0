//! A [`FileSystem`] for tests: records every call, counts bytes read, and injects faults.

use keepsake_core::store::{FileSystem, LockGuard, OsFileSystem, ReadFile, WriteFile};
use std::ffi::OsString;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One kind of filesystem call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    CreateDirAll,
    ListDir,
    OpenRead,
    Read,
    CreateNew,
    Write,
    SyncFile,
    Rename,
    RemoveFile,
    SyncDir,
    Lock,
}

impl Op {
    /// The error a real system would give for a failure of this call.
    fn error(self) -> io::Error {
        const ENOSPC: i32 = 28;
        const EIO: i32 = 5;
        match self {
            Op::Write => io::Error::from_raw_os_error(ENOSPC),
            _ => io::Error::from_raw_os_error(EIO),
        }
    }
}

/// When to fail.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Fail the call with this index (counted from when the plan was armed), once.
    Once(usize),
    /// Fail the call with this index and every later call of the same kind.
    Persistent(usize),
    /// Writes fail with ENOSPC once this many bytes have been written in total.
    DiskFullAfter(u64),
    /// The filesystem is mounted read-only: every call that would change it fails with EROFS.
    ReadOnly,
}

#[derive(Default)]
struct State {
    calls: Vec<(Op, PathBuf)>,
    fault: Option<Fault>,
    failing_op: Option<Op>,
    written: u64,
}

/// The test filesystem; cheap to clone (shares its state).
#[derive(Clone, Default)]
pub struct TestFs {
    state: Arc<Mutex<State>>,
    bytes_read: Arc<AtomicU64>,
    /// Files that cannot be opened for reading, as with `chmod 000` for a user other than root
    /// (tests run as root, which reads any file); kept across [`arm`](TestFs::arm).
    denied: Arc<Mutex<Vec<PathBuf>>>,
}

impl std::fmt::Debug for TestFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestFs")
    }
}

impl TestFs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets recorded calls and arms `fault` (or none).
    pub fn arm(&self, fault: Option<Fault>) {
        let mut state = self.state.lock().unwrap();
        *state = State {
            fault,
            ..State::default()
        };
        self.bytes_read.store(0, Ordering::SeqCst);
    }

    /// From now on opening `path` for reading fails with `PermissionDenied`.
    pub fn deny_read(&self, path: &Path) {
        self.denied.lock().unwrap().push(path.to_path_buf());
    }

    fn is_denied(&self, path: &Path) -> bool {
        self.denied
            .lock()
            .unwrap()
            .iter()
            .any(|denied| denied == path)
    }

    /// The calls made since the last [`arm`](Self::arm).
    pub fn calls(&self) -> Vec<(Op, PathBuf)> {
        self.state.lock().unwrap().calls.clone()
    }

    /// Bytes read through files opened by this filesystem since the last arm.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::SeqCst)
    }

    /// Records a call and decides whether it fails.
    fn call(&self, op: Op, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock().unwrap();
        let index = state.calls.len();
        state.calls.push((op, path.to_path_buf()));
        let fail = match state.fault {
            Some(Fault::Once(at)) => index == at,
            Some(Fault::Persistent(at)) => {
                if index == at {
                    state.failing_op = Some(op);
                }
                state.failing_op == Some(op)
            }
            Some(Fault::ReadOnly) => {
                // A lock opens its file for writing, which a read-only mount refuses too.
                if matches!(
                    op,
                    Op::CreateDirAll
                        | Op::CreateNew
                        | Op::Rename
                        | Op::RemoveFile
                        | Op::Write
                        | Op::Lock
                ) {
                    const EROFS: i32 = 30;
                    return Err(io::Error::from_raw_os_error(EROFS));
                }
                false
            }
            Some(Fault::DiskFullAfter(_)) | None => false,
        };
        if fail { Err(op.error()) } else { Ok(()) }
    }

    /// How many of `len` bytes a write may still take before the disk is "full".
    fn write_allowance(&self, len: usize) -> usize {
        let mut state = self.state.lock().unwrap();
        match state.fault {
            Some(Fault::DiskFullAfter(limit)) => {
                let room = limit.saturating_sub(state.written).min(len as u64) as usize;
                state.written += room as u64;
                room
            }
            _ => {
                state.written += len as u64;
                len
            }
        }
    }
}

struct TestReader {
    inner: Box<dyn ReadFile>,
    fs: TestFs,
    path: PathBuf,
}

impl Read for TestReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.fs.call(Op::Read, &self.path)?;
        let n = self.inner.read(buf)?;
        self.fs.bytes_read.fetch_add(n as u64, Ordering::SeqCst);
        Ok(n)
    }
}

impl Seek for TestReader {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl ReadFile for TestReader {
    fn byte_len(&mut self) -> io::Result<u64> {
        self.inner.byte_len()
    }

    fn modified(&mut self) -> io::Result<std::time::SystemTime> {
        self.inner.modified()
    }
}

struct TestWriter {
    inner: Box<dyn WriteFile>,
    fs: TestFs,
    path: PathBuf,
}

impl Write for TestWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.fs.call(Op::Write, &self.path)?;
        let allowed = self.fs.write_allowance(buf.len());
        if allowed == 0 && !buf.is_empty() {
            return Err(Op::Write.error());
        }
        self.inner.write(&buf[..allowed])
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl WriteFile for TestWriter {
    fn sync_all(&mut self) -> io::Result<()> {
        self.fs.call(Op::SyncFile, &self.path)?;
        self.inner.sync_all()
    }
}

impl FileSystem for TestFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.call(Op::CreateDirAll, path)?;
        OsFileSystem.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        self.call(Op::ListDir, path)?;
        OsFileSystem.list_dir(path)
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        self.call(Op::OpenRead, path)?;
        if self.is_denied(path) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        Ok(Box::new(TestReader {
            inner: OsFileSystem.open_read(path)?,
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        self.call(Op::CreateNew, path)?;
        Ok(Box::new(TestWriter {
            inner: OsFileSystem.create_new(path)?,
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.call(Op::Rename, to)?;
        OsFileSystem.rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.call(Op::RemoveFile, path)?;
        OsFileSystem.remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.call(Op::SyncDir, path)?;
        OsFileSystem.sync_dir(path)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        self.call(Op::Lock, path)?;
        OsFileSystem.lock(path)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<Box<dyn LockGuard>>> {
        self.call(Op::Lock, path)?;
        OsFileSystem.try_lock(path)
    }
}

/// Every file in `dir` with its contents, sorted by name.
pub fn snapshot_dir(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().into_string().unwrap(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}
