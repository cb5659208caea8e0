//! A filesystem in memory that records every change the store makes and the flushes that make
//! each durable, and rebuilds the states a power loss could leave after any prefix of them.
//!
//! # The model
//!
//! A power loss keeps what was flushed and an unknown part of the rest:
//!
//! - bytes written to a file are durable once that file is fsynced;
//! - a folder entry made, replaced or removed (create, rename, hard link, unlink, mkdir, and the
//!   creation of a lock file) is durable once its folder is fsynced;
//! - anything else may or may not have reached the disk, in any combination and order (a rename
//!   is one change: its two entries land together, as journaling filesystems commit it), and
//!   the last unflushed write to a file may land torn (half of it).
//!
//! This is POSIX's promise and no more; real filesystems (ext4's ordered mode, APFS) keep more.
//! For a crash after the first `k` changes, [`PowerLog::crash_states`] builds: nothing unflushed
//! kept, everything kept, every "all but one" and every "only one" of the unflushed changes
//! (ALICE's omit-one), a seeded random sample of subsets, and everything with the last unflushed
//! write torn.
//!
//! [`DirSync::Ignored`] makes folder fsyncs do nothing, as on Windows, where `sync_dir` is a
//! no-op: with it the model says what a filesystem that does not journal renames could lose.
//!
//! A hard link is an entry of its own (a second name for the same file), so a link and the
//! removal of the old name that follows it (the store's `rename_new`) may land one without the
//! other. A file's modification time is the time of its last write on the filesystem's clock
//! ([`PowerFs::set_clock`]), for a folder used as cloud storage.

use super::fixtures::Rng;
use keepsake_core::format::{Clock, SystemClock};
use keepsake_core::store::{FileSystem, LockGuard, ReadFile, WriteFile};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{self, Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A file's identity: its content stays with it through renames.
type Inode = usize;

/// What a folder entry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Dir,
    File(Inode),
}

/// One recorded change to the filesystem.
#[derive(Clone, Debug)]
enum Change {
    /// Folder entries set (`Some`) or removed (`None`) together: a create, a rename (its new
    /// name and its old one), an unlink, a mkdir.
    Entries(Vec<(PathBuf, Option<Node>)>),
    /// Bytes appended to a file, at a time (Unix ms) that becomes its modification time.
    Write {
        inode: Inode,
        bytes: Vec<u8>,
        at: i64,
    },
    /// An fsync of a file: its earlier writes are durable.
    SyncFile(Inode),
    /// An fsync of a folder: its earlier entry changes are durable.
    SyncDir(PathBuf),
    /// A file's bytes changed at rest (bit rot, a truncation): the disk's own doing, durable
    /// at once and never undone by a power loss.
    Rot {
        inode: Inode,
        bytes: Vec<u8>,
        at: i64,
    },
}

/// Folders and file contents.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    entries: BTreeMap<PathBuf, Node>,
    files: BTreeMap<Inode, Vec<u8>>,
    /// Each file's modification time (Unix ms).
    modified: BTreeMap<Inode, i64>,
}

impl Tree {
    /// Applies one change; a torn write keeps only the first half of its bytes.
    fn apply(&mut self, change: &Change, torn: bool) {
        match change {
            Change::Entries(entries) => {
                for (path, node) in entries {
                    match node {
                        Some(node) => self.entries.insert(path.clone(), *node),
                        None => self.entries.remove(path),
                    };
                }
            }
            Change::Write { inode, bytes, at } => {
                let kept = if torn {
                    &bytes[..bytes.len() / 2]
                } else {
                    bytes
                };
                self.files
                    .entry(*inode)
                    .or_default()
                    .extend_from_slice(kept);
                self.modified.insert(*inode, *at);
            }
            Change::Rot { inode, bytes, at } => {
                self.files.insert(*inode, bytes.clone());
                self.modified.insert(*inode, *at);
            }
            Change::SyncFile(_) | Change::SyncDir(_) => {}
        }
    }

    /// Drops every entry whose folder is gone: a folder whose own entry was lost takes what it
    /// held with it (fsck would move it to `lost+found`, where no game looks).
    fn drop_orphans(&mut self) {
        let orphans: Vec<PathBuf> = self
            .entries
            .keys()
            .filter(|path| {
                path.ancestors()
                    .skip(1)
                    .any(|dir| self.node(dir) != Some(Node::Dir))
            })
            .cloned()
            .collect();
        for orphan in orphans {
            self.entries.remove(&orphan);
        }
    }

    fn node(&self, path: &Path) -> Option<Node> {
        if path == Path::new("/") {
            return Some(Node::Dir);
        }
        self.entries.get(path).copied()
    }

    fn file(&self, path: &Path) -> io::Result<Inode> {
        match self.node(path) {
            Some(Node::File(inode)) => Ok(inode),
            Some(Node::Dir) => Err(io::Error::from(io::ErrorKind::IsADirectory)),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    fn check_dir(&self, path: &Path) -> io::Result<()> {
        match self.node(path) {
            Some(Node::Dir) => Ok(()),
            Some(Node::File(_)) => Err(io::Error::from(io::ErrorKind::NotADirectory)),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    /// The first inode no file holds bytes under and no name uses. A file never written (a
    /// lock file) holds no bytes in a tree a power loss rebuilt, yet its name still takes its
    /// inode: counting only files with bytes gave the next file made the lock's inode, two
    /// names for one file no real disk makes (simulator seed 300982).
    fn next_inode(&self) -> Inode {
        let named = self.entries.values().filter_map(|node| match node {
            Node::File(inode) => Some(*inode),
            Node::Dir => None,
        });
        let taken = self.files.keys().copied().chain(named).max();
        taken.map_or(0, |max| max + 1)
    }

    /// The names in a folder.
    pub fn list(&self, dir: &Path) -> Vec<String> {
        self.entries
            .keys()
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| Some(path.file_name()?.to_str()?.to_owned()))
            .collect()
    }
}

/// Whether folder fsyncs make entries durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirSync {
    /// As on Linux and macOS.
    Flushes,
    /// As the store's `sync_dir` on Windows: a no-op.
    Ignored,
}

struct Live {
    /// The tree recording started from (what a power loss left before): durable, and where
    /// every crash state starts.
    base: Tree,
    tree: Tree,
    log: Vec<Change>,
    next_inode: Inode,
    dir_sync: DirSync,
    clock: Arc<dyn Clock>,
}

impl Live {
    fn record(&mut self, change: Change) {
        self.tree.apply(&change, false);
        self.log.push(change);
    }

    fn new_file(&mut self, path: &Path) -> Inode {
        let inode = self.next_inode;
        self.next_inode += 1;
        self.tree.files.insert(inode, Vec::new());
        self.record(Change::Entries(vec![(
            path.to_path_buf(),
            Some(Node::File(inode)),
        )]));
        inode
    }

    fn check_parent(&self, path: &Path) -> io::Result<()> {
        self.tree.check_dir(path.parent().unwrap_or(Path::new("/")))
    }
}

/// The recording filesystem; cheap to clone (clones share it).
#[derive(Clone)]
pub struct PowerFs(Arc<Mutex<Live>>);

impl std::fmt::Debug for PowerFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PowerFs")
    }
}

impl PowerFs {
    /// An empty filesystem (only `/`), recording from here on.
    pub fn new(dir_sync: DirSync) -> Self {
        Self::from_tree(Tree::default(), dir_sync)
    }

    /// A filesystem holding `tree`, as a power loss left it.
    pub fn from_tree(tree: Tree, dir_sync: DirSync) -> Self {
        let next_inode = tree.next_inode();
        PowerFs(Arc::new(Mutex::new(Live {
            base: tree.clone(),
            tree,
            log: Vec::new(),
            next_inode,
            dir_sync,
            clock: Arc::new(SystemClock),
        })))
    }

    /// Stamps writes from now on with `clock`'s time (default the system's).
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        self.live().clock = clock;
    }

    fn live(&self) -> MutexGuard<'_, Live> {
        self.0.lock().unwrap()
    }

    /// How many changes were recorded so far.
    pub fn changes(&self) -> usize {
        self.live().log.len()
    }

    /// The tree as it is now, every change kept (what the running game sees).
    pub fn tree(&self) -> Tree {
        self.live().tree.clone()
    }

    /// The recorded changes, for rebuilding crash states.
    pub fn log(&self) -> PowerLog {
        let live = self.live();
        PowerLog {
            base: live.base.clone(),
            changes: live.log.clone(),
        }
    }

    /// Changes the bytes of the file at `path` at rest, as bit rot or a truncation by the disk
    /// would (durable at once); `false` when no file is there.
    pub fn rot(&self, path: &Path, damage: impl FnOnce(&mut Vec<u8>)) -> bool {
        let mut live = self.live();
        let Ok(inode) = live.tree.file(path) else {
            return false;
        };
        let mut bytes = live.tree.files.get(&inode).cloned().unwrap_or_default();
        damage(&mut bytes);
        let at = live.clock.now().unix_millis();
        live.record(Change::Rot { inode, bytes, at });
        true
    }
}

impl FileSystem for PowerFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut live = self.live();
        let mut missing: Vec<&Path> = path
            .ancestors()
            .take_while(|dir| live.tree.node(dir).is_none())
            .collect();
        missing.reverse();
        for dir in missing {
            live.record(Change::Entries(vec![(dir.to_path_buf(), Some(Node::Dir))]));
        }
        live.tree.check_dir(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        let live = self.live();
        live.tree.check_dir(path)?;
        Ok(live
            .tree
            .list(path)
            .into_iter()
            .map(OsString::from)
            .collect())
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        let live = self.live();
        let inode = live.tree.file(path)?;
        let bytes = live.tree.files.get(&inode).cloned().unwrap_or_default();
        let modified = live.tree.modified.get(&inode).copied().unwrap_or(0);
        Ok(Box::new(MemFile(Cursor::new(bytes), modified)))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        let mut live = self.live();
        live.check_parent(path)?;
        if live.tree.node(path).is_some() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        let inode = live.new_file(path);
        Ok(Box::new(MemWriter {
            fs: self.clone(),
            inode,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut live = self.live();
        let inode = live.tree.file(from)?;
        live.check_parent(to)?;
        live.record(Change::Entries(vec![
            (to.to_path_buf(), Some(Node::File(inode))),
            (from.to_path_buf(), None),
        ]));
        Ok(())
    }

    /// A second entry for the file's inode; refused, as by the system, when the name is taken.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut live = self.live();
        let inode = live.tree.file(from)?;
        live.check_parent(to)?;
        if live.tree.node(to).is_some() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        live.record(Change::Entries(vec![(
            to.to_path_buf(),
            Some(Node::File(inode)),
        )]));
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut live = self.live();
        live.tree.file(path)?;
        live.record(Change::Entries(vec![(path.to_path_buf(), None)]));
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut live = self.live();
        live.tree.check_dir(path)?;
        if live.dir_sync == DirSync::Flushes {
            live.record(Change::SyncDir(path.to_path_buf()));
        }
        Ok(())
    }

    /// The scenarios run on one thread: the lock only needs its file, as the real one does.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        let mut live = self.live();
        match live.tree.node(path) {
            Some(Node::File(_)) => {}
            Some(Node::Dir) => return Err(io::Error::from(io::ErrorKind::IsADirectory)),
            None => {
                live.check_parent(path)?;
                live.new_file(path);
            }
        }
        Ok(Box::new(NoLock))
    }
}

struct NoLock;

impl LockGuard for NoLock {}

/// An open file's bytes and modification time (Unix ms).
struct MemFile(Cursor<Vec<u8>>, i64);

impl io::Read for MemFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl io::Seek for MemFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

impl ReadFile for MemFile {
    fn byte_len(&mut self) -> io::Result<u64> {
        Ok(self.0.get_ref().len() as u64)
    }

    fn modified(&mut self) -> io::Result<SystemTime> {
        let millis = u64::try_from(self.1).unwrap_or(0);
        Ok(UNIX_EPOCH + Duration::from_millis(millis))
    }
}

struct MemWriter {
    fs: PowerFs,
    inode: Inode,
}

impl Write for MemWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let bytes = buf.to_vec();
        let inode = self.inode;
        let mut live = self.fs.live();
        let at = live.clock.now().unix_millis();
        live.record(Change::Write { inode, bytes, at });
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl WriteFile for MemWriter {
    fn sync_all(&mut self) -> io::Result<()> {
        let inode = self.inode;
        self.fs.live().record(Change::SyncFile(inode));
        Ok(())
    }
}

/// The changes a run recorded.
pub struct PowerLog {
    /// The durable tree the changes were made on.
    base: Tree,
    changes: Vec<Change>,
}

/// One state a power loss after a prefix of the changes could leave.
pub struct CrashState {
    pub tree: Tree,
    /// Which unflushed changes it kept, for messages.
    pub kept: String,
}

/// How many random subsets of the unflushed changes each crash point adds.
const RANDOM_SUBSETS: usize = 8;

impl PowerLog {
    /// The states a power loss after the first `k` changes could leave (see the module docs),
    /// `seed` choosing the random subsets.
    pub fn crash_states(&self, k: usize, seed: u64) -> Vec<CrashState> {
        let unflushed = self.unflushed(k);
        let all: BTreeSet<usize> = unflushed.iter().copied().collect();
        // Keyed by the changes kept, so a subset reached twice is checked once.
        let mut subsets: BTreeMap<BTreeSet<usize>, String> = BTreeMap::new();
        subsets.insert(BTreeSet::new(), "no unflushed change".into());
        subsets.insert(all.clone(), "every unflushed change".into());
        for &change in &unflushed {
            let mut but_one = all.clone();
            but_one.remove(&change);
            let omitted = format!("all unflushed but change {change}");
            subsets.entry(but_one).or_insert(omitted);
            let only = format!("only unflushed change {change}");
            subsets.entry([change].into()).or_insert(only);
        }
        let mut rng = Rng::new(seed ^ k as u64);
        for _ in 0..RANDOM_SUBSETS {
            let subset: BTreeSet<usize> = unflushed
                .iter()
                .copied()
                .filter(|_| rng.below(2) == 0)
                .collect();
            let kept = format!("unflushed changes {subset:?}");
            subsets.entry(subset).or_insert(kept);
        }
        let mut states: Vec<CrashState> = subsets
            .into_iter()
            .map(|(subset, kept)| self.state(k, &subset, None, kept))
            .collect();
        if let Some(&last_write) = unflushed
            .iter()
            .rev()
            .find(|&&i| matches!(self.changes[i], Change::Write { .. }))
        {
            let kept = format!("every unflushed change, write {last_write} torn");
            states.push(self.state(k, &all, Some(last_write), kept));
        }
        states
    }

    /// The tree a power loss after the first `k` changes leaves when it keeps no unflushed
    /// change: what is durable.
    pub fn durable(&self, k: usize) -> Tree {
        self.state(k, &BTreeSet::new(), None, String::new()).tree
    }

    /// One of the states a power loss after the first `k` changes could leave, chosen by
    /// `pick` among the families [`crash_states`](Self::crash_states) enumerates (nothing
    /// unflushed kept, everything kept, all but one, only one, a random subset, the last write
    /// torn), without building the others: what a seeded simulation draws from.
    pub fn crash_state(&self, k: usize, pick: u64) -> CrashState {
        let unflushed = self.unflushed(k);
        let all: BTreeSet<usize> = unflushed.iter().copied().collect();
        let mut rng = Rng::new(pick);
        let one = |rng: &mut Rng| unflushed[rng.below(unflushed.len().max(1) as u64) as usize];
        let (kept, torn, what) = match (rng.below(6), unflushed.is_empty()) {
            (_, true) | (0, _) => (BTreeSet::new(), None, "no unflushed change".to_owned()),
            (1, _) => (all, None, "every unflushed change".to_owned()),
            (2, _) => {
                let left_out = one(&mut rng);
                let kept = all.into_iter().filter(|&i| i != left_out).collect();
                (kept, None, format!("all unflushed but change {left_out}"))
            }
            (3, _) => {
                let only = one(&mut rng);
                ([only].into(), None, format!("only unflushed change {only}"))
            }
            (4, _) => {
                let kept: BTreeSet<usize> = all.into_iter().filter(|_| rng.below(2) == 0).collect();
                let what = format!("unflushed changes {kept:?}");
                (kept, None, what)
            }
            _ => {
                let last_write = unflushed
                    .iter()
                    .rev()
                    .find(|&&i| matches!(self.changes[i], Change::Write { .. }))
                    .copied();
                let what = format!("every unflushed change, write {last_write:?} torn");
                (all, last_write, what)
            }
        };
        self.state(k, &kept, torn, what)
    }

    /// How many changes were recorded.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// The tree after the first `k` changes, every one kept: what the running program saw
    /// then.
    pub fn after(&self, k: usize) -> Tree {
        let mut tree = self.base.clone();
        for change in &self.changes[..k] {
            tree.apply(change, false);
        }
        tree
    }

    /// The changes before `k` that no later flush (before `k`) made durable.
    fn unflushed(&self, k: usize) -> Vec<usize> {
        let mut synced_files = BTreeSet::new();
        let mut synced_dirs: BTreeSet<&Path> = BTreeSet::new();
        let mut unflushed = Vec::new();
        for (i, change) in self.changes[..k].iter().enumerate().rev() {
            let durable = match change {
                Change::SyncFile(inode) => {
                    synced_files.insert(*inode);
                    true
                }
                Change::SyncDir(dir) => {
                    synced_dirs.insert(dir);
                    true
                }
                Change::Write { inode, .. } => synced_files.contains(inode),
                Change::Rot { .. } => true,
                Change::Entries(entries) => entries
                    .iter()
                    .all(|(path, _)| synced_dirs.contains(path.parent().unwrap_or(Path::new("/")))),
            };
            if !durable {
                unflushed.push(i);
            }
        }
        unflushed.reverse();
        unflushed
    }

    fn state(
        &self,
        k: usize,
        kept: &BTreeSet<usize>,
        torn: Option<usize>,
        description: String,
    ) -> CrashState {
        let unflushed: BTreeSet<usize> = self.unflushed(k).into_iter().collect();
        let mut tree = self.base.clone();
        for (i, change) in self.changes[..k].iter().enumerate() {
            if !unflushed.contains(&i) || kept.contains(&i) {
                tree.apply(change, torn == Some(i));
            }
        }
        tree.drop_orphans();
        CrashState {
            tree,
            kept: description,
        }
    }
}
