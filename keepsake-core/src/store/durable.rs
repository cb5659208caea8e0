//! The durable atomic write: temp file in the same folder → write all → fsync → rename → fsync
//! the folder.

use super::error::StoreError;
use super::fs::{FileSystem, rename_new};
use super::layout::temp_file_name;
use std::path::{Path, PathBuf};

/// What a durable write makes: a file no other has the name of, or a replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A new file: a save generation, or an object created in a folder used as cloud storage.
    /// It never replaces a file: should one of its name appear meanwhile (another instance of
    /// the game saving the slot on a folder where locks do not work, as some network folders),
    /// the write fails rather than bury that save. If the folder fsync after its rename fails,
    /// the new file is removed again, so the save is reported as failed and the slot keeps
    /// only what it had before.
    New,
    /// A side file (such as the cloud sync state) replacing one of the same name. If the folder
    /// fsync after its rename fails it is kept, since the one it replaced is gone already: a
    /// power loss leaves one or the other, each whole, where removing it would leave neither.
    Replace,
}

/// Writes `parts` (back to back) to `dir/final_name` so that, whatever fails or crashes, the file either does
/// not exist or is complete and durable.
///
/// On any error the temporary file is removed and no existing file is touched. An fsync error is
/// never retried and never followed by a rename (after a failed fsync the kernel may already
/// have dropped the dirty pages, so a retry can report success for data that is gone). If the
/// final folder fsync fails, the error is returned and `placement` says what happens to the
/// new file.
pub fn write_durably(
    fs: &dyn FileSystem,
    dir: &Path,
    final_name: &str,
    parts: &[&[u8]],
    placement: Placement,
) -> Result<PathBuf, StoreError> {
    let final_path = dir.join(final_name);
    let temp_path = dir.join(temp_file_name(final_name));

    let mut file = fs
        .create_new(&temp_path)
        .map_err(StoreError::io("create the temporary file", &temp_path))?;
    let written = parts
        .iter()
        .try_for_each(|part| file.write_all(part))
        .map_err(StoreError::io("write the temporary file", &temp_path))
        .and_then(|()| {
            file.sync_all().map_err(StoreError::io(
                "flush (fsync) the temporary file",
                &temp_path,
            ))
        });
    drop(file);
    if let Err(error) = written {
        let _ = fs.remove_file(&temp_path);
        return Err(error);
    }

    let renamed = match placement {
        Placement::New => rename_new(fs, &temp_path, &final_path),
        Placement::Replace => fs.rename(&temp_path, &final_path),
    };
    if let Err(source) = renamed {
        let _ = fs.remove_file(&temp_path);
        return Err(StoreError::Io {
            action: "move the finished save into place at",
            path: final_path,
            source,
        });
    }

    if let Err(source) = fs.sync_dir(dir) {
        if placement == Placement::New {
            let _ = fs.remove_file(&final_path);
        }
        return Err(StoreError::Io {
            action: "flush (fsync) the save folder",
            path: dir.to_path_buf(),
            source,
        });
    }
    Ok(final_path)
}
