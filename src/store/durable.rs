//! The durable atomic write: temp file in the same folder → write all → fsync → rename → fsync
//! the folder.

use super::error::StoreError;
use super::fs::FileSystem;
use super::layout::temp_file_name;
use std::path::{Path, PathBuf};

/// What a durable write leaves when the folder fsync after its rename fails: the new file is
/// whole and fsynced, but a power loss may still lose its folder entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unconfirmed {
    /// A new save: removed again, so the save is reported as failed and the slot keeps only
    /// what it had before.
    Remove,
    /// A file that replaced one of the same name (a side file such as the cloud sync state):
    /// kept, since the one it replaced is gone already; a power loss leaves one or the other,
    /// each whole, where removing it would leave neither.
    Keep,
}

/// Writes `parts` (back to back) to `dir/final_name` so that, whatever fails or crashes, the file either does
/// not exist or is complete and durable.
///
/// On any error the temporary file is removed and no existing file is touched. An fsync error is
/// never retried and never followed by a rename (after a failed fsync the kernel may already
/// have dropped the dirty pages, so a retry can report success for data that is gone). If the
/// final folder fsync fails, the error is returned and `unconfirmed` says what happens to the
/// new file.
pub(crate) fn write_durably(
    fs: &dyn FileSystem,
    dir: &Path,
    final_name: &str,
    parts: &[&[u8]],
    unconfirmed: Unconfirmed,
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

    if let Err(source) = fs.rename(&temp_path, &final_path) {
        let _ = fs.remove_file(&temp_path);
        return Err(StoreError::Io {
            action: "move the finished save into place at",
            path: final_path,
            source,
        });
    }

    if let Err(source) = fs.sync_dir(dir) {
        if unconfirmed == Unconfirmed::Remove {
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
