//! A device's disk: the power-loss model of `common::power_fs` with faults on cue, a process
//! that can die in the middle of any call, and entries that are not regular files (or that
//! this user may not use) under any name.

use crate::common::power_fs::DirSync;
use crate::common::power_fs::{CrashState, PowerFs, Tree};
use bevy_keepsake::format::Clock;
use bevy_keepsake::store::{FileSystem, LockGuard, NotARegularFile, ReadFile, WriteFile};
use std::collections::BTreeMap;
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

/// What can stand under a name instead of the regular file the game expects, as a player, a
/// sync tool or another program leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Odd {
    /// A FIFO (named pipe).
    Fifo,
    /// A folder.
    Folder,
    /// A regular file this user may not open (mode 000); its bytes are out of reach.
    Unreadable,
    /// A regular file this user may only read (mode 444): reads work, opening it for writing
    /// (a lock) does not.
    ReadOnly,
    /// A symbolic link to a character device (`/dev/zero`).
    DeviceLink,
    /// A symbolic link to nothing.
    DanglingLink,
}

impl Odd {
    /// Whether the entry takes the place of a file's bytes (a save file under it is gone).
    pub fn destroys(self) -> bool {
        self != Odd::ReadOnly
    }
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

/// What the disk did, for the run's report and the memory bound.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiskCounts {
    /// Calls an armed fault failed (EIO, ENOSPC, a failed fsync).
    pub faults: usize,
    /// The largest file opened for reading since the last [`SimDisk::take_largest_read`].
    pub largest_read: u64,
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
    /// Entries that are not the regular files the game expects (see [`Odd`]): put there at
    /// rest, they stay through power losses.
    odd: Arc<Mutex<BTreeMap<PathBuf, Odd>>>,
    counts: Arc<Mutex<DiskCounts>>,
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
            odd: Arc::default(),
            counts: Arc::default(),
        }
    }

    /// A copy of the disk as the running game sees it now, with no fault armed: the
    /// simulator's checks open a store on it, so a check never changes the device (a store's
    /// open removes temporary files) and never starts its game.
    pub fn fork(&self) -> SimDisk {
        let fs = PowerFs::from_tree(self.tree(), DirSync::Flushes);
        fs.set_clock(self.clock.clone());
        SimDisk {
            fs: Arc::new(Mutex::new(fs)),
            clock: self.clock.clone(),
            plan: Arc::default(),
            odd: Arc::new(Mutex::new(self.odd.lock().unwrap().clone())),
            counts: Arc::default(),
        }
    }

    /// Takes the odd entry at `path` away, as a player who read the store's message moves it
    /// out of the folder.
    pub fn move_odd_out(&self, path: &Path) {
        if self.odd.lock().unwrap().remove(path).is_some() {
            let _ = self.fs().remove_file(path);
        }
    }

    fn fs(&self) -> PowerFs {
        self.fs.lock().unwrap().clone()
    }

    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().unwrap()
    }

    pub fn counts(&self) -> DiskCounts {
        *self.counts.lock().unwrap()
    }

    /// The largest file read since the last call, and starts counting again.
    pub fn take_largest_read(&self) -> u64 {
        std::mem::take(&mut self.counts.lock().unwrap().largest_read)
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
        // Odd entries were put there at rest and stay.
        let fs = PowerFs::from_tree(state.tree.clone(), DirSync::Flushes);
        fs.set_clock(self.clock.clone());
        *self.fs.lock().unwrap() = fs;
        state
    }

    /// The files a power loss now would leave at the least: what is durable.
    pub fn durable_tree(&self) -> Tree {
        let fs = self.fs();
        let log = fs.log();
        log.durable(log.len())
    }

    /// The files as the running game sees them.
    pub fn tree(&self) -> Tree {
        self.fs().tree()
    }

    /// The names in `dir`, odd entries included.
    pub fn names(&self, dir: &Path) -> Vec<String> {
        let mut names = self.tree().list(dir);
        let odd = self.odd.lock().unwrap();
        let here = odd.keys().filter(|p| p.parent() == Some(dir));
        names.extend(here.filter_map(|p| Some(p.file_name()?.to_str()?.to_owned())));
        names.sort();
        names.dedup();
        names
    }

    /// Damages the file at `path` at rest.
    pub fn rot(&self, path: &Path, damage: impl FnOnce(&mut Vec<u8>)) -> bool {
        if self.odd_at(path).is_some() {
            return false;
        }
        self.fs().rot(path, damage)
    }

    /// Writes a whole file at rest (another program, a newer build of the game): durable, as
    /// a damage at rest is, its folders too (a newer build flushes the chain of folders to its
    /// save as this build does: seed 452648, where this build's flush of a new profile folder
    /// had failed and a power loss took the newer build's save with the folder). Refused where
    /// an odd entry stands.
    pub fn put_at_rest(&self, path: &Path, bytes: &[u8]) -> bool {
        if self.odd_at(path).is_some() {
            return false;
        }
        let fs = self.fs();
        let created = fs.create_new(path).and_then(|mut file| {
            file.write_all(&[])?;
            file.sync_all()
        });
        if created.is_err() {
            return false;
        }
        for folder in path.ancestors().skip(1) {
            let _ = fs.sync_dir(folder);
        }
        let bytes = bytes.to_vec();
        fs.rot(path, move |old| *old = bytes)
    }

    /// Puts `odd` at `path`. What a file there held is gone with it (unless the entry is the
    /// same file made read-only): its bytes are emptied at rest, so they do not come back when
    /// the entry is removed.
    pub fn add_odd(&self, path: PathBuf, odd: Odd) {
        if odd.destroys() {
            self.fs().rot(&path, Vec::clear);
        } else if self.fs().open_read(&path).is_err() {
            // A read-only file made where none was: empty.
            self.put_at_rest(&path, &[]);
        }
        self.odd.lock().unwrap().insert(path, odd);
    }

    pub fn odd_at(&self, path: &Path) -> Option<Odd> {
        self.odd.lock().unwrap().get(path).copied()
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
            self.counts.lock().unwrap().faults += 1;
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(())
    }

    /// Removes the odd entry at `path`, if one is there, as `unlink` would: a folder refuses.
    fn remove_odd(&self, path: &Path) -> Option<io::Result<()>> {
        let mut odd = self.odd.lock().unwrap();
        match odd.get(path)? {
            Odd::Folder => Some(Err(io::Error::from(io::ErrorKind::IsADirectory))),
            _ => {
                odd.remove(path);
                drop(odd);
                // The file under it (emptied, or read-only) goes with it.
                let _ = self.fs().remove_file(path);
                Some(Ok(()))
            }
        }
    }
}

/// What opening an odd entry for reading answers.
fn read_refusal(odd: Odd) -> Option<io::Error> {
    let refused = |what| Some(NotARegularFile { what }.into_io());
    match odd {
        Odd::Fifo => refused("a FIFO (named pipe)"),
        Odd::Folder => refused("a folder"),
        Odd::DeviceLink => refused("a character device"),
        Odd::Unreadable => Some(io::Error::from(io::ErrorKind::PermissionDenied)),
        Odd::DanglingLink => Some(io::Error::from(io::ErrorKind::NotFound)),
        Odd::ReadOnly => None,
    }
}

impl FileSystem for SimDisk {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.check(Call::Create)?;
        self.fs().create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        self.check(Call::Read)?;
        self.fs().list_dir(path)?;
        Ok(self.names(path).into_iter().map(OsString::from).collect())
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        self.check(Call::Read)?;
        let odd = self.odd_at(path);
        if let Some(refusal) = odd.and_then(read_refusal) {
            return Err(refusal);
        }
        let mut file = self.fs().open_read(path)?;
        let len = file.byte_len()?;
        let mut counts = self.counts.lock().unwrap();
        counts.largest_read = counts.largest_read.max(len);
        Ok(file)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        self.check(Call::Create)?;
        if self.odd_at(path).is_some() {
            // O_CREAT | O_EXCL fails on any entry, a dangling link included.
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
        match self.odd_at(to) {
            Some(Odd::Folder) => return Err(io::Error::from(io::ErrorKind::IsADirectory)),
            // A rename replaces any other entry, whatever its permissions.
            Some(_) => {
                self.odd.lock().unwrap().remove(to);
            }
            None => {}
        }
        self.fs().rename(from, to)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Call::Other)?;
        if self.odd_at(to).is_some() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        self.fs().hard_link(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(Call::Other)?;
        if let Some(removed) = self.remove_odd(path) {
            return removed;
        }
        self.fs().remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Call::SyncDir)?;
        self.fs().sync_dir(path)
    }

    /// As `open(O_RDWR | O_CREAT)` then `flock` on Linux: a folder or a file this user may not
    /// open refuses; a FIFO opened read-write and a device open without blocking and lock;
    /// a dangling link's target is created elsewhere and locked. A file this user may only
    /// read is locked as `OsFileSystem` locks it: opened read-only once the read-write open
    /// is denied (an advisory lock needs no write access), so the slot takes saves.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        self.check(Call::Create)?;
        match self.odd_at(path) {
            Some(Odd::Folder) => Err(io::Error::from(io::ErrorKind::IsADirectory)),
            Some(Odd::Unreadable) => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
            Some(Odd::Fifo | Odd::DeviceLink | Odd::DanglingLink) => Ok(Box::new(OddLock)),
            Some(Odd::ReadOnly) | None => self.fs().lock(path),
        }
    }
}

struct OddLock;

impl LockGuard for OddLock {}

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
