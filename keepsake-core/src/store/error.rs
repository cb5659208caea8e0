//! The one error type of the slot store.

use crate::format::FormatError;
use crate::slot::SlotId;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the slot store.
///
/// Whatever the error, the store has left every existing save file as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A profile name or game id is not safe as a folder name.
    #[error("invalid {what} name {name:?}: {reason}")]
    InvalidName {
        /// "profile" or "game id".
        what: &'static str,
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// The platform reports no per-user data directory, so a save root must be given.
    #[error(
        "this platform reports no per-user data directory; set a save root explicitly (e.g. `KeepsakePlugins::save_root`)"
    )]
    NoDataDir,

    /// The slot does not exist in the store's layout.
    #[error("{slot:?} does not exist: this store has {manual} manual and {auto} autosave slots")]
    NoSuchSlot {
        /// The requested slot.
        slot: SlotId,
        /// Manual slots in the layout.
        manual: u16,
        /// Autosave slots in the layout.
        auto: u16,
    },

    /// A filesystem operation failed.
    #[error("could not {action} {path}: {source}", path = .path.display())]
    Io {
        /// What was being done, e.g. "write the temporary file".
        action: &'static str,
        /// The file or folder involved.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: io::Error,
    },

    /// A folder holding the save folder could not be flushed to disk (fsync), and no flush of
    /// it is known to have worked since the store was opened: the save folder's own entry may
    /// be in memory only, and a save confirmed now could vanish with the whole folder in a
    /// power loss. Nothing was written.
    #[error(
        "could not flush (fsync) {folder}, a folder holding the save folder: {source}; until it is flushed, a power loss could take the save folder and every save in it away, so nothing was written (try again; if this keeps failing, check the disk)",
        folder = .folder.display()
    )]
    FolderNotFlushed {
        /// The folder that could not be flushed.
        folder: PathBuf,
        /// The operating-system error.
        #[source]
        source: io::Error,
    },

    /// An entry named like a save (or a side file) is not a regular file: a FIFO, a device, a
    /// socket, a folder, or a link to one. It is never read: a FIFO would block the reader, a
    /// device never ends. A generation like this is skipped like a damaged one.
    #[error(
        "{path} is {what}, not a regular file, so it is not read as a save; move it out of the save folder",
        path = .path.display()
    )]
    NotAFile {
        /// The entry.
        path: PathBuf,
        /// What it is, in words (see [`NotARegularFile`](super::NotARegularFile)).
        what: &'static str,
    },

    /// An entry under a name the store itself writes for a slot (its lock file, its record of
    /// deleted saves) cannot serve: a folder, a FIFO, a device, a symbolic link, or a file this
    /// user may not open. Nothing was written or removed; loads of the slot still work and the
    /// autosave ring passes over it.
    #[error(
        "{slot} cannot be written: {path} is {what}, so it cannot serve as {role}; move it out of the save folder (the store makes a new one), then try again (nothing was written or removed)",
        path = .path.display()
    )]
    UnusableEntry {
        /// The slot.
        slot: SlotId,
        /// The entry.
        path: PathBuf,
        /// What it is, in words ("a folder", "a FIFO (named pipe)", "a file this user may not
        /// open", …).
        what: &'static str,
        /// What the store needs it for ("the slot's lock file", …).
        role: &'static str,
    },

    /// Another holder kept the slot's lock for the whole of [`StoreConfig::lock_wait`]: a
    /// second copy of the game writing the same profile, or a process stuck while holding it.
    /// Nothing was written or removed.
    ///
    /// [`StoreConfig::lock_wait`]: super::StoreConfig::lock_wait
    #[error(
        "{slot} is busy: another process held its lock {path} for {seconds:.1} s (another copy of the game using this profile, or one that hangs?); close it, then try again (nothing was written or removed)",
        path = .path.display(),
        seconds = .waited.as_secs_f64()
    )]
    SlotBusy {
        /// The slot.
        slot: SlotId,
        /// Its lock file.
        path: PathBuf,
        /// How long the store waited for it.
        waited: std::time::Duration,
    },

    /// A sealed save sits under another slot's file name (copied or renamed there by hand): its
    /// metadata, which the seal authenticates, names the slot it was written for. It is
    /// skipped like a damaged generation: the slot loads its own newest intact save instead.
    #[error(
        "{path} is a sealed save written for {written_for}, not for {loaded_as}: a sealed save copied into another slot is not loaded (the slot's own saves are)",
        path = .path.display()
    )]
    SealedForAnotherSlot {
        /// The file.
        path: PathBuf,
        /// The slot its authenticated metadata names.
        written_for: SlotId,
        /// The slot whose file name it has.
        loaded_as: SlotId,
    },

    /// A save could not be encoded, or a file could not be decoded.
    #[error("{path}: {source}", path = .path.display())]
    Format {
        /// The file involved (for encoding: the file that would have been written).
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: FormatError,
    },

    /// A file is larger than any file the configured limits allow.
    #[error(
        "{path} is {len} bytes, larger than the {limit} bytes the configured limits allow; it was not read",
        path = .path.display()
    )]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// The largest size the limits allow.
        limit: u64,
    },

    /// The slot holds no save.
    #[error("{0} is empty")]
    EmptySlot(SlotId),

    /// The slot's newest save was written by a newer version of the format; it is neither loaded
    /// from an older backup nor overwritten.
    #[error(
        "{slot} holds a save in format version {found}, newer than the version {supported} this build reads; update the game (the save was left untouched)"
    )]
    NewerFormat {
        /// The slot.
        slot: SlotId,
        /// The version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },

    /// The slot's newest file already has the largest generation number there is, so a new
    /// save could not be numbered above it. Only a file named by hand gets there; it was left
    /// untouched and still loads.
    #[error(
        "{slot} cannot take another save: its newest file {path} has the largest generation number there is ({max}), so a new save could not be numbered above it; rename that file to a lower generation number (one above the slot's other files) or move it out of the save folder, then save again (nothing was written)",
        path = .path.display(),
        max = u64::MAX
    )]
    GenerationsExhausted {
        /// The slot.
        slot: SlotId,
        /// The file numbered with the largest generation.
        path: PathBuf,
    },

    /// Every generation of the slot failed to load. Nothing was deleted.
    #[error("{slot} could not be loaded: {}", GenerationFailures(.failures))]
    AllGenerationsDamaged {
        /// The slot.
        slot: SlotId,
        /// Why each generation failed, newest first.
        failures: Vec<GenerationFailure>,
    },
}

/// Why one generation of a slot could not be loaded.
#[derive(Debug)]
pub struct GenerationFailure {
    /// The generation number.
    pub generation: u64,
    /// What went wrong.
    pub error: StoreError,
}

struct GenerationFailures<'a>(&'a [GenerationFailure]);

impl fmt::Display for GenerationFailures<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, failure) in self.0.iter().enumerate() {
            let separator = if i == 0 { "" } else { "; " };
            write!(
                f,
                "{separator}generation {}: {}",
                failure.generation, failure.error
            )?;
        }
        Ok(())
    }
}

impl StoreError {
    /// Whether reading a file failed for a reason that may pass (an I/O error other than the
    /// file being gone or unreadable to us): trying again later may read it. Otherwise the
    /// file is damaged, gone, or not one this build reads.
    pub fn may_pass(&self) -> bool {
        let source = match self {
            StoreError::Io { source, .. }
            | StoreError::Format {
                source: FormatError::Io { source, .. },
                ..
            } => source,
            _ => return false,
        };
        !matches!(
            source.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
        )
    }

    /// The error for opening `path` for reading: [`StoreError::NotAFile`] for an entry the
    /// filesystem refused as not a regular file, else [`StoreError::Io`].
    pub(crate) fn open(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| match super::NotARegularFile::of(&source) {
            Some(refused) => StoreError::NotAFile {
                path,
                what: refused.what,
            },
            None => StoreError::Io {
                action: "open",
                path,
                source,
            },
        }
    }

    /// The error for failing to use `path`, an entry the store writes for `slot` as `role`:
    /// [`StoreError::UnusableEntry`] when the entry itself is the trouble (it is not a regular
    /// file, or this user may not open it), which no retry mends; else [`StoreError::Io`]
    /// with `action`.
    pub(crate) fn entry(
        slot: SlotId,
        role: &'static str,
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| match unusable(&source) {
            Some(what) => StoreError::UnusableEntry {
                slot,
                path,
                what,
                role,
            },
            None => StoreError::Io {
                action,
                path,
                source,
            },
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| StoreError::Io {
            action,
            path,
            source,
        }
    }
}

/// What an entry is, in words, when `error` says the entry itself cannot be used (it is not a
/// regular file, or this user may not open it); `None` for a fault that may pass.
pub(crate) fn unusable(error: &io::Error) -> Option<&'static str> {
    if let Some(refused) = super::NotARegularFile::of(error) {
        return Some(refused.what);
    }
    match error.kind() {
        io::ErrorKind::IsADirectory => Some("a folder"),
        io::ErrorKind::PermissionDenied => Some("a file this user may not open"),
        _ => None,
    }
}
