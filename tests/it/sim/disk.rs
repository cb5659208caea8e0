//! A device's disk: the power-loss model of `common::power_fs` with faults on cue, a process
//! that can die in the middle of any call, and entries that are not regular files.

use crate::common::power_fs::DirSync;
use crate::common::power_fs::{CrashState, PowerFs, Tree};
use bevy_keepsake::format::Clock;
use bevy_keepsake::store::{FileSystem, LockGuard, NotARegularFile, ReadFile, WriteFile};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

const EIO: i32 = 5;
const ENOSPC: i32 = 28;

/// A fault armed on a disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskFault {
    /// The call with this number (counted from when it was armed) fails with EIO, once.
    IoError,
    /// Every write and create from that call on fails with ENOSPC, for `calls` calls.
    Full { calls: u32 },
    /// The fsync (of a file or a folder) reached from that call on fails with EIO, once.
    SyncFails,
}

/// What is armed, and whether the process is still alive.
#[derive(Debug, Default)]
struct Plan {
    /// Calls counted since the plan was armed.
    calls: u32,
    /// The process dies at this call: the call and every later one fail.
    die_at: Option<u32>,
    dead: bool,
    fault: Option<(u32, DiskFault)>,
    /// Faults and death are off while the simulator itself looks at the disk.
    paused: bool,
}

/// One call's kind, for the faults that pick theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Read,
    Create,
    Write,
    SyncFile,
    SyncDir,
    Other,
}

/// A device's disk; clones share it.
#[derive(Clone)]
pub struct SimDisk {
    fs: Arc<Mutex<PowerFs>>,
    /// The device's clock, which stamps file modification times.
    clock: Arc<dyn Clock>,
    plan: Arc<Mutex<Plan>>,
    /// Entries that are not regular files (a FIFO, a device node): listed, never readable.
    special: Arc<Mutex<BTreeSet<PathBuf>>>,
}

impl std::fmt::Debug for SimDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimDisk")
    }
}

impl SimDisk {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        let fs = PowerFs::new(DirSync::Flushes);
        fs.set_clock(clock.clone());
        SimDisk {
            fs: Arc::new(Mutex::new(fs)),
            clock,
            plan: Arc::default(),
            special: Arc::default(),
        }
    }

    fn fs(&self) -> PowerFs {
        self.fs.lock().unwrap().clone()
    }

    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().unwrap()
    }

    /// The process dies at the `calls`-th filesystem call from now.
    pub fn die_after(&self, calls: u32) {
        let mut plan = self.plan();
        plan.die_at = Some(plan.calls + calls.max(1));
    }

    /// Arms `fault` at the `calls`-th call from now.
    pub fn fail_after(&self, calls: u32, fault: DiskFault) {
        let mut plan = self.plan();
        plan.fault = Some((plan.calls + calls.max(1), fault));
    }

    /// Whether the process died.
    pub fn is_dead(&self) -> bool {
        self.plan().dead
    }

    /// Clears every fault and brings the process back (after its crash was handled).
    pub fn heal(&self) {
        let mut plan = self.plan();
        *plan = Plan::default();
    }

    /// Runs `f` with faults off: the simulator's own look at the disk.
    pub fn paused<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = std::mem::replace(&mut self.plan().paused, true);
        let result = f();
        self.plan().paused = was;
        result
    }

    /// A power loss now: the disk keeps one of the states the model allows (chosen by `pick`),
    /// and only that state is durable from here on.
    pub fn lose_power(&self, pick: u64) -> CrashState {
        let fs = self.fs();
        let log = fs.log();
        let state = log.crash_state(log.len(), pick);
        // Entries that are not regular files were put there at rest and stay.
        let fs = PowerFs::from_tree(state.tree.clone(), DirSync::Flushes);
        fs.set_clock(self.clock.clone());
        *self.fs.lock().unwrap() = fs;
        state
    }

    /// The files as the running game sees them.
    pub fn tree(&self) -> Tree {
        self.fs().tree()
    }

    /// Damages the file at `path` at rest.
    pub fn rot(&self, path: &Path, damage: impl FnOnce(&mut Vec<u8>)) -> bool {
        self.fs().rot(path, damage)
    }

    /// Puts an entry that is not a regular file at `path`.
    pub fn add_special(&self, path: PathBuf) {
        self.special.lock().unwrap().insert(path);
    }

    fn is_special(&self, path: &Path) -> bool {
        self.special.lock().unwrap().contains(path)
    }

    /// Counts a call and fails it when the plan says so.
    fn check(&self, call: Call) -> io::Result<()> {
        let mut plan = self.plan();
        if plan.paused {
            return Ok(());
        }
        plan.calls += 1;
        let now = plan.calls;
        if plan.dead || plan.die_at == Some(now) {
            plan.dead = true;
            return Err(io::Error::other("the process was killed"));
        }
        let Some((at, fault)) = plan.fault else {
            return Ok(());
        };
        if now < at {
            return Ok(());
        }
        let (fails, done, errno) = match fault {
            DiskFault::IoError => (true, true, EIO),
            DiskFault::Full { calls } => (
                matches!(call, Call::Create | Call::Write),
                now >= at + calls,
                ENOSPC,
            ),
            DiskFault::SyncFails => {
                let sync = matches!(call, Call::SyncFile | Call::SyncDir);
                (sync, sync, EIO)
            }
        };
        if done {
            plan.fault = None;
        }
        if fails {
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(())
    }
}

impl FileSystem for SimDisk {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.check(Call::Create)?;
        self.fs().create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        self.check(Call::Read)?;
        let mut names = self.fs().list_dir(path)?;
        let special = self.special.lock().unwrap();
        let here = special.iter().filter(|p| p.parent() == Some(path));
        names.extend(here.filter_map(|p| p.file_name().map(OsString::from)));
        Ok(names)
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        self.check(Call::Read)?;
        if self.is_special(path) {
            // What the real filesystem answers for a FIFO named like a save.
            let what = "a FIFO (named pipe)";
            return Err(NotARegularFile { what }.into_io());
        }
        self.fs().open_read(path)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        self.check(Call::Create)?;
        if self.is_special(path) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        let inner = self.fs().create_new(path)?;
        Ok(Box::new(SimWriter {
            disk: self.clone(),
            inner,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Call::Other)?;
        self.fs().rename(from, to)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Call::Other)?;
        if self.is_special(to) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        self.fs().hard_link(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(Call::Other)?;
        if self.special.lock().unwrap().remove(path) {
            return Ok(());
        }
        self.fs().remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Call::SyncDir)?;
        self.fs().sync_dir(path)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        self.check(Call::Create)?;
        self.fs().lock(path)
    }
}

/// A file being written, its writes and fsync subject to the plan.
struct SimWriter {
    disk: SimDisk,
    inner: Box<dyn WriteFile>,
}

impl Write for SimWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.disk.check(Call::Write)?;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl WriteFile for SimWriter {
    fn sync_all(&mut self) -> io::Result<()> {
        self.disk.check(Call::SyncFile)?;
        self.inner.sync_all()
    }
}
