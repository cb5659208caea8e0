//! The narrow seam every filesystem call of the store goes through.
//!
//! [`OsFileSystem`] is the real implementation. Tests wrap it to count calls and bytes or to
//! inject faults (fail the k-th call, `ENOSPC` after N bytes, an fsync error) without touching
//! the store's code.
//!
//! Protocols made of several calls (such as [`rename_new`], a hard link then an unlink) are
//! written once here over the seam's primitives, so every implementation runs the same code and
//! a recording filesystem sees each step.
//!
//! Only regular files are read: a FIFO named like a save would block a reader until something
//! writes to it, and a link to `/dev/zero` reports a size of 0 and never ends.
//! [`FileSystem::open_read`] refuses both, without blocking, with [`NotARegularFile`]; readers
//! still bound every read by the limits rather than trust the size a file reports.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::time::SystemTime;

/// A file opened for reading.
pub trait ReadFile: Read + Seek + Send {
    /// The file's length in bytes.
    fn byte_len(&mut self) -> io::Result<u64>;
    /// When the file's content was last written (its mtime): a folder used as cloud storage
    /// reports it as an object's upload time. The default reports
    /// [`io::ErrorKind::Unsupported`].
    fn modified(&mut self) -> io::Result<SystemTime> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// A freshly created file being written.
pub trait WriteFile: Write + Send {
    /// Flushes data and metadata to the storage device (`fsync`).
    fn sync_all(&mut self) -> io::Result<()>;
}

/// A held exclusive lock; dropping it releases the lock.
pub trait LockGuard: Send {}

/// Every filesystem operation the store performs.
///
/// Implementations must be usable from several threads at once.
pub trait FileSystem: Send + Sync + fmt::Debug {
    /// Creates a folder and its parents (`mkdir -p`).
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// The names of the entries in a folder.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>>;
    /// Opens a regular file for reading.
    ///
    /// Must refuse, without blocking, anything that is not a regular file once links are
    /// followed (a FIFO, a device, a socket, a folder), with [`NotARegularFile`] as the
    /// error's payload ([`NotARegularFile::into_io`]): the store reads such an entry as a
    /// damaged generation, never as a save.
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>>;
    /// Creates a new file for writing; fails if it already exists.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>>;
    /// Renames a file, atomically replacing any file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Gives the file at `from` a second name `to` (a hard link), failing with
    /// [`io::ErrorKind::AlreadyExists`] when a file of that name exists, atomically: of two
    /// writers linking one name, one fails. Filesystems without hard links (FAT, exFAT, some
    /// network shares) report [`io::ErrorKind::Unsupported`], as the default does; the store
    /// then falls back to looking before it renames, which a writer in another process can
    /// slip between.
    ///
    /// The store places every new save generation with this link followed by the removal of
    /// the temporary name, in code shared by every implementation, so a filesystem that
    /// records calls sees both steps.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _ = (from, to);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Makes a folder's entries durable (`fsync` on the folder), where the platform allows it.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// Takes an exclusive advisory lock on the file at `path` (created if missing), blocking until
    /// it is free. The lock is per open file, so it excludes other threads and other processes.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>>;
    /// Takes the lock as [`lock`](Self::lock) does if it is free now; `None` while another
    /// holder has it. The default waits for it, as `lock` does.
    fn try_lock(&self, path: &Path) -> io::Result<Option<Box<dyn LockGuard>>> {
        self.lock(path).map(Some)
    }
}

/// The real filesystem, through `std::fs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFileSystem;

/// What [`FileSystem::open_read`] refuses: the entry is not a regular file (links followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("it is {what}, not a regular file")]
pub struct NotARegularFile {
    /// What it is, in words ("a FIFO (named pipe)", "a character device", "a folder", …).
    pub what: &'static str,
}

impl NotARegularFile {
    /// As an [`io::Error`] carrying `self` (kind [`io::ErrorKind::IsADirectory`] for a folder,
    /// [`io::ErrorKind::InvalidInput`] otherwise), for [`FileSystem::open_read`] to return.
    pub fn into_io(self) -> io::Error {
        let kind = if self.what == FOLDER {
            io::ErrorKind::IsADirectory
        } else {
            io::ErrorKind::InvalidInput
        };
        io::Error::new(kind, self)
    }

    /// The refusal `error` carries, if it is one.
    pub fn of(error: &io::Error) -> Option<Self> {
        error.get_ref()?.downcast_ref::<Self>().copied()
    }

    fn of_type(kind: fs::FileType) -> Option<Self> {
        if kind.is_file() {
            return None;
        }
        Some(NotARegularFile {
            what: describe(kind),
        })
    }
}

/// How [`NotARegularFile`] names a folder.
pub(crate) const FOLDER: &str = "a folder";

/// What a file type that is not a regular file is, in words.
fn describe(kind: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        } else if kind.is_char_device() {
            return "a character device";
        } else if kind.is_block_device() {
            return "a block device";
        } else if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        FOLDER
    } else {
        "not a regular file"
    }
}

impl OsFileSystem {
    /// Opens the regular file at `path` for reading, as [`FileSystem::open_read`] does: without
    /// blocking on a FIFO, and refusing anything but a regular file with [`NotARegularFile`].
    /// For tools that read save files outside a store.
    pub fn open_regular(path: &Path) -> io::Result<File> {
        let file = open_without_blocking(path)?;
        // The type of what was opened (`fstat`), not of what the path names now.
        match NotARegularFile::of_type(file.metadata()?.file_type()) {
            Some(refused) => Err(refused.into_io()),
            None => Ok(file),
        }
    }
}

/// Opens `path` read-only with `O_NONBLOCK`, so a FIFO opens at once instead of waiting for a
/// writer (the flag changes nothing for a regular file's reads).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Looks before opening where `O_NONBLOCK` is not at hand (libc is a dependency on Linux
/// only): a FIFO put in place between the look and the open can still block the open there.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    if let Some(refused) = NotARegularFile::of_type(fs::metadata(path)?.file_type()) {
        return Err(refused.into_io());
    }
    File::open(path)
}

impl ReadFile for File {
    fn byte_len(&mut self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn modified(&mut self) -> io::Result<SystemTime> {
        self.metadata()?.modified()
    }
}

impl WriteFile for File {
    fn sync_all(&mut self) -> io::Result<()> {
        File::sync_all(self)
    }
}

/// An open lock file; the OS releases the lock when it is closed.
struct FileLock(#[allow(dead_code)] File);

impl LockGuard for FileLock {}

impl FileSystem for OsFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(path)?
            .map(|entry| entry.map(|entry| entry.file_name()))
            .collect()
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        Ok(Box::new(OsFileSystem::open_regular(path)?))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        Ok(Box::new(
            OpenOptions::new().write(true).create_new(true).open(path)?,
        ))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::hard_link(from, to)
    }

    #[cfg(unix)]
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    #[cfg(not(unix))]
    fn sync_dir(&self, _path: &Path) -> io::Result<()> {
        // Windows offers no portable way to flush a directory; NTFS journals renames itself.
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn LockGuard>> {
        let file = open_lock_file(path)?;
        file.lock()?;
        Ok(Box::new(FileLock(file)))
    }

    fn try_lock(&self, path: &Path) -> io::Result<Option<Box<dyn LockGuard>>> {
        let file = open_lock_file(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Box::new(FileLock(file)))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(error)) => Err(error),
        }
    }
}

/// Renames the file at `from` to a name no file has, failing with
/// [`io::ErrorKind::AlreadyExists`] when one does: how a durable write places a new save
/// generation without ever replacing one (see `durable.rs`).
///
/// A hard link to the new name, which the filesystem refuses atomically if the name is taken,
/// then the old name removed. Once the link is made the file is in place; a crash may leave
/// both names (the link flushed, the removal not) or neither's change, and the temporary name
/// left behind is removed by the next open of the store. Where hard links fail for another
/// reason than a taken name (a filesystem without them), it looks first and then renames,
/// which a writer in another process can slip between.
pub(crate) fn rename_new(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    match fs.hard_link(from, to) {
        Ok(()) => {
            let _ = fs.remove_file(from);
            Ok(())
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(error),
        Err(_) => match fs.open_read(to) {
            Ok(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
            // Something that is not a file holds the name: it is taken all the same.
            Err(error) if NotARegularFile::of(&error).is_some() => {
                Err(io::Error::from(io::ErrorKind::AlreadyExists))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => fs.rename(from, to),
            Err(error) => Err(error),
        },
    }
}

/// Opens (creating if missing) the file a lock is taken on, refusing, without blocking, an
/// entry under its name that is not a regular file (a folder, a FIFO, a device, a symbolic
/// link, dangling or not: a lock through a link would lock whatever it points at, or create a
/// file there) with [`NotARegularFile`]. A lock file this user may read but not write (left
/// read-only by another user or a backup tool) is opened read-only: an advisory lock needs no
/// write access.
fn open_lock_file(path: &Path) -> io::Result<File> {
    open_lock_file_with(path, open_for_lock)
}

/// The open itself of a lock file, with `access`.
fn open_for_lock(access: LockAccess, path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    if access == LockAccess::ReadWrite {
        options.write(true).create(true).truncate(false);
    }
    without_blocking_or_links(&mut options);
    options.open(path)
}

/// How a lock file is opened: for reading and writing (created if missing), or, where this
/// user may not write it, for reading only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LockAccess {
    ReadWrite,
    ReadOnly,
}

/// [`open_lock_file`] with the opening itself left to `open` (tests: a read-only file, which
/// the root user running them can write all the same).
fn open_lock_file_with(
    path: &Path,
    open: impl Fn(LockAccess, &Path) -> io::Result<File>,
) -> io::Result<File> {
    if fs::symlink_metadata(path).is_ok_and(|entry| entry.file_type().is_symlink()) {
        return Err(NotARegularFile {
            what: "a symbolic link",
        }
        .into_io());
    }
    let opened = match open(LockAccess::ReadWrite, path) {
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
            open(LockAccess::ReadOnly, path)
        }
        opened => opened,
    };
    let file = match opened {
        // A folder refuses a write open before it can be looked at.
        Err(error) if error.kind() == io::ErrorKind::IsADirectory => {
            return Err(NotARegularFile { what: FOLDER }.into_io());
        }
        // A link put in place after the look above (`O_NOFOLLOW` refuses it).
        Err(error) if is_link_refused(&error) => {
            return Err(NotARegularFile {
                what: "a symbolic link",
            }
            .into_io());
        }
        opened => opened?,
    };
    // The type of what was opened (`fstat`), not of what the path names now.
    match NotARegularFile::of_type(file.metadata()?.file_type()) {
        Some(refused) => Err(refused.into_io()),
        None => Ok(file),
    }
}

/// Adds `O_NONBLOCK` and `O_NOFOLLOW` where they are at hand, so that opening a FIFO does not
/// wait for a peer, and a symbolic link put in place between the look and the open is refused
/// rather than followed.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn without_blocking_or_links(options: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn without_blocking_or_links(_options: &mut OpenOptions) {}

/// Whether an open failed because `O_NOFOLLOW` met a symbolic link (`ELOOP`).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn is_link_refused(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn is_link_refused(_error: &io::Error) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root (which the tests run as) a read-only file opens for writing all the same, so the
    /// refusal is made by the opener here.
    #[test]
    fn a_lock_file_that_may_not_be_written_is_locked_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manual-00.lock");
        fs::write(&path, b"").unwrap();
        let tried = std::cell::RefCell::new(Vec::new());
        let file = open_lock_file_with(&path, |access, path| {
            tried.borrow_mut().push(access);
            match access {
                LockAccess::ReadWrite => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
                LockAccess::ReadOnly => File::open(path),
            }
        })
        .unwrap();
        assert_eq!(
            *tried.borrow(),
            [LockAccess::ReadWrite, LockAccess::ReadOnly]
        );
        file.try_lock().unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn odd_entries_under_a_lock_name_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("a.lock");
        fs::create_dir(&folder).unwrap();
        let dangling = dir.path().join("b.lock");
        std::os::unix::fs::symlink(dir.path().join("nowhere/x"), &dangling).unwrap();
        let fifo = dir.path().join("c.lock");
        make_fifo(&fifo);
        for (path, what) in [
            (folder, "a folder"),
            (dangling, "a symbolic link"),
            (fifo, "a FIFO (named pipe)"),
        ] {
            let error = OsFileSystem.lock(&path).err().unwrap();
            assert_eq!(
                NotARegularFile::of(&error).map(|refused| refused.what),
                Some(what),
                "{}: {error}",
                path.display()
            );
        }
        assert!(
            !dir.path().join("nowhere").exists(),
            "nothing made through the link"
        );
    }

    /// A link put in place between the look for one and the open (another process, a sync
    /// tool) is refused by the open itself, not followed: nothing is made where it points.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_link_put_in_place_after_the_look_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.lock");
        let target = dir.path().join("elsewhere");
        let error = open_lock_file_with(&path, |access, path| {
            if fs::symlink_metadata(path).is_err() {
                std::os::unix::fs::symlink(&target, path).unwrap();
            }
            open_for_lock(access, path)
        })
        .unwrap_err();
        assert_eq!(
            NotARegularFile::of(&error).map(|refused| refused.what),
            Some("a symbolic link"),
            "{error}"
        );
        assert!(!target.exists(), "nothing made through the link");
    }

    #[cfg(target_os = "linux")]
    fn make_fifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }
}
