//! Finding save files and profile folders, and opening a profile without changing it.

use keepsake_core::store::{
    FileSystem, LockGuard, OsFileSystem, ProfileName, ReadFile, SAVE_EXTENSION, SlotLayout,
    SlotStore, StoreConfig, WriteFile,
};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// The save files a `verify` of a folder checks (the same files `compat` checks).
pub use keepsake_core::store::save_files;
use std::sync::Arc;

/// The real filesystem with every write refused, so a listing cannot touch a player's saves
/// (opening a store otherwise removes temporary files left by interrupted saves).
#[derive(Debug)]
struct ReadOnly;

fn refused() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the keepsake tool never writes to a save folder",
    )
}

impl FileSystem for ReadOnly {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        if path.is_dir() {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not a folder", path.display()),
            ))
        }
    }

    /// Only save files: the store reads nothing else when listing, and hiding temporary files
    /// keeps it from trying to remove them.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        let mut names = OsFileSystem.list_dir(path)?;
        names.retain(|name| has_save_extension(Path::new(name)));
        Ok(names)
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn ReadFile>> {
        Ok(Box::new(crate::examine::open_regular(path)?))
    }

    fn create_new(&self, _: &Path) -> io::Result<Box<dyn WriteFile>> {
        Err(refused())
    }

    fn rename(&self, _: &Path, _: &Path) -> io::Result<()> {
        Err(refused())
    }

    fn remove_file(&self, _: &Path) -> io::Result<()> {
        Err(refused())
    }

    fn sync_dir(&self, _: &Path) -> io::Result<()> {
        Ok(())
    }

    fn lock(&self, _: &Path) -> io::Result<Box<dyn LockGuard>> {
        Err(refused())
    }
}

pub fn has_save_extension(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == SAVE_EXTENSION)
}

/// Why a folder cannot be opened as a profile.
#[derive(Debug)]
pub struct NotAProfile(pub String);

/// Opens `folder` as a profile, read-only, with a slot layout large enough for every slot whose
/// files it holds (a game may have configured more slots than the default).
pub fn open_profile(folder: &Path) -> Result<SlotStore, NotAProfile> {
    let normal = std::fs::canonicalize(folder)
        .map_err(|error| NotAProfile(format!("{}: {error}", folder.display())))?;
    let (Some(root), Some(name)) = (normal.parent(), normal.file_name()) else {
        return Err(NotAProfile(format!(
            "{} has no parent folder",
            normal.display()
        )));
    };
    let profile = name
        .to_str()
        .ok_or_else(|| NotAProfile(format!("{} is not UTF-8", normal.display())))
        .and_then(|name| ProfileName::new(name).map_err(|error| NotAProfile(error.to_string())))?;
    let names = OsFileSystem
        .list_dir(&normal)
        .map_err(|error| NotAProfile(format!("{}: {error}", normal.display())))?;
    let config = StoreConfig::new(root)
        .profile(profile)
        .layout(layout_for(&names));
    SlotStore::open_with(config, Arc::new(ReadOnly)).map_err(|error| NotAProfile(error.to_string()))
}

/// The default layout, grown to hold the highest manual and autosave index named in `names`.
fn layout_for(names: &[OsString]) -> SlotLayout {
    let mut layout = SlotLayout::default();
    for name in names.iter().filter_map(|name| name.to_str()) {
        let Some((kind, rest)) = name.split_once('-') else {
            continue;
        };
        let Some(index) = rest.split('.').next().and_then(|i| i.parse::<u16>().ok()) else {
            continue;
        };
        let count = index.saturating_add(1);
        match kind {
            "manual" => layout.manual = layout.manual.max(count),
            "auto" => layout.auto = layout.auto.max(count),
            _ => {}
        }
    }
    layout
}

/// Whether a folder directly holds save files.
pub fn holds_saves(folder: &Path) -> bool {
    std::fs::read_dir(folder).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| has_save_extension(&entry.path()) && !is_dir(&entry.path()))
    })
}

/// The sub-folders of `folder`, sorted by name (symbolic links are not followed).
pub fn subfolders(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(folder)?
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    folders.sort();
    Ok(folders)
}

fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}
