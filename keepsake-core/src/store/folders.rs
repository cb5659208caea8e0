//! The save folder's own place on disk: made with its missing parents, and every folder holding
//! it flushed, so that the folder, and every save in it, survives a power loss.
//!
//! A save fsyncs the save folder, which makes the files in it durable but not the folder's own
//! entry in its parent, nor the parent's entry in the grandparent. A folder that an earlier open
//! made but could not flush (its fsync failed, or the process died before it) looks to the next
//! open like any folder that was always there; had that open flushed only what it made itself,
//! every save confirmed from then on could vanish with the folder in the next power loss. So
//! every open flushes the whole chain of folders again (an fsync of a folder with nothing new is
//! cheap), and a store whose open could not flush all of it flushes it before its first write
//! ([`FolderChain::flush_before_writing`]).

use super::error::StoreError;
use super::fs::FileSystem;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Creates the folder `dir` and its missing parents, and flushes (fsyncs) every folder holding
/// it, up to the root of the filesystem. A flush that fails for a folder this call made an
/// entry in fails the call; one that fails for a folder whose entries were all there already
/// does not (a read-only folder, from which loads must still work; a store flushes it again
/// before it writes).
pub fn create_dir_durably(fs: &dyn FileSystem, dir: &Path) -> Result<(), StoreError> {
    create_and_flush(fs, dir).map(drop)
}

/// Whether every folder holding a store's save folder is known to be flushed since the store
/// was opened: until it is, the store's writes flush the chain first.
#[derive(Debug)]
pub(super) struct FolderChain {
    flushed: AtomicBool,
}

impl FolderChain {
    /// Creates `dir` durably (see [`create_dir_durably`]), noting whether every folder holding
    /// it could be flushed.
    pub(super) fn create(fs: &dyn FileSystem, dir: &Path) -> Result<Self, StoreError> {
        let flushed = create_and_flush(fs, dir)?;
        Ok(FolderChain {
            flushed: AtomicBool::new(flushed),
        })
    }

    /// Flushes every folder holding `dir` if the open could not: a save, import or side file
    /// confirmed while the save folder's own entry may still be in memory only could vanish
    /// with it. Fails, before anything is written, with [`StoreError::FolderNotFlushed`].
    pub(super) fn flush_before_writing(
        &self,
        fs: &dyn FileSystem,
        dir: &Path,
    ) -> Result<(), StoreError> {
        if self.flushed.load(Ordering::Acquire) {
            return Ok(());
        }
        for folder in holding(dir) {
            fs.sync_dir(folder)
                .or_else(not_ours_to_flush)
                .map_err(|source| StoreError::FolderNotFlushed {
                    folder: folder.to_path_buf(),
                    source,
                })?;
        }
        self.flushed.store(true, Ordering::Release);
        Ok(())
    }
}

/// Creates `dir` and its missing parents and flushes every folder holding it; returns whether
/// every flush worked. Only a failed flush of a folder that this call made an entry in is an
/// error: the others' entries were there before, and a store retries them before it writes.
fn create_and_flush(fs: &dyn FileSystem, dir: &Path) -> Result<bool, StoreError> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|folder| {
            fs.list_dir(as_folder(folder))
                .is_err_and(|error| error.kind() == io::ErrorKind::NotFound)
        })
        .collect();
    fs.create_dir_all(dir)
        .map_err(StoreError::io("create the save folder", dir))?;
    let mut flushed = true;
    for (child, folder) in dir.ancestors().zip(holding(dir)) {
        match fs.sync_dir(folder) {
            Ok(()) => {}
            Err(source) if missing.contains(&child) => {
                return Err(StoreError::Io {
                    action: "flush (fsync) the folder holding",
                    path: folder.to_path_buf(),
                    source,
                });
            }
            Err(source) => flushed &= not_ours_to_flush(source).is_ok(),
        }
    }
    Ok(flushed)
}

/// The folders holding `dir`, its parent first, up to the root of the filesystem (for a
/// relative path, up to the working folder).
fn holding(dir: &Path) -> impl Iterator<Item = &Path> {
    dir.ancestors().skip(1).map(as_folder)
}

/// `folder`, with the empty path a relative one ends in read as the working folder.
fn as_folder(folder: &Path) -> &Path {
    if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    }
}

/// A folder this user may not open (a parent folder with execute but no read permission)
/// cannot be flushed by this user, ever: a store that waited for it would never write. The
/// folder below it was there before this open (one the open made there fails the open).
fn not_ours_to_flush(error: io::Error) -> io::Result<()> {
    if error.kind() == io::ErrorKind::PermissionDenied {
        Ok(())
    } else {
        Err(error)
    }
}
