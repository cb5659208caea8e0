//! The durable atomic write: temp file in the same folder → write all → fsync → rename → fsync
//! the folder.

use super::error::StoreError;
use super::fs::{FileSystem, WriteFile, rename_new};
use super::layout::temp_file_name;
use std::io::ErrorKind;
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
    write_durably_named(fs, dir, final_name, parts, placement, temp_file_name)
}

/// How many temporary names a durable write tries before it gives up: each taken one is an
/// entry left under that name (a folder, a FIFO or a link the store's cleanup at open could
/// not remove, from a run of the game with the same process id, as a sandbox often gives).
const TEMP_NAME_TRIES: usize = 8;

/// [`write_durably`] with the temporary names drawn from `temp_name` (given the final name).
fn write_durably_named(
    fs: &dyn FileSystem,
    dir: &Path,
    final_name: &str,
    parts: &[&[u8]],
    placement: Placement,
    temp_name: impl FnMut(&str) -> String,
) -> Result<PathBuf, StoreError> {
    let final_path = write_and_rename(fs, dir, final_name, parts, placement, temp_name)?;
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

/// Replaces the side file `dir/final_name` as [`write_durably`] does, but leaves the folder's
/// flush to the write that follows (a save's, in the same folder): for a slot's record of the
/// saves that entered it, written just before the save's file. A power loss before that flush
/// leaves the old file or the new one, each whole.
pub(super) fn replace_flushed_later(
    fs: &dyn FileSystem,
    dir: &Path,
    final_name: &str,
    parts: &[&[u8]],
) -> Result<PathBuf, StoreError> {
    write_and_rename(
        fs,
        dir,
        final_name,
        parts,
        Placement::Replace,
        temp_file_name,
    )
}

/// Steps 1 to 4 of a durable write: temporary file, write, fsync, rename into place.
fn write_and_rename(
    fs: &dyn FileSystem,
    dir: &Path,
    final_name: &str,
    parts: &[&[u8]],
    placement: Placement,
    mut temp_name: impl FnMut(&str) -> String,
) -> Result<PathBuf, StoreError> {
    let final_path = dir.join(final_name);
    let (mut file, temp_path) = create_temp(fs, dir, || temp_name(final_name))?;
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
    Ok(final_path)
}

/// Creates a new temporary file in `dir` under the first name from `temp_name` that no entry
/// has, trying [`TEMP_NAME_TRIES`] names: a name taken by a leftover entry is passed over
/// rather than failing the save.
fn create_temp(
    fs: &dyn FileSystem,
    dir: &Path,
    mut temp_name: impl FnMut() -> String,
) -> Result<(Box<dyn WriteFile>, PathBuf), StoreError> {
    let mut tries = 1;
    loop {
        let temp_path = dir.join(temp_name());
        match fs.create_new(&temp_path) {
            Ok(file) => return Ok((file, temp_path)),
            Err(error) if error.kind() == ErrorKind::AlreadyExists && tries < TEMP_NAME_TRIES => {
                tries += 1;
            }
            Err(error) => {
                return Err(StoreError::io("create the temporary file", &temp_path)(
                    error,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OsFileSystem;

    /// Every kind of entry that can sit under a temporary name the write draws (and that the
    /// cleanup at open may have failed to remove) is passed over for the next name.
    #[cfg(target_os = "linux")]
    #[test]
    fn temporary_names_taken_by_odd_entries_are_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let taken = ["t0.tmp", "t1.tmp", "t2.tmp", "t3.tmp"];
        std::fs::create_dir(dir.path().join(taken[0])).unwrap();
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.path().join(taken[1]))
            .status()
            .unwrap();
        assert!(fifo.success());
        std::os::unix::fs::symlink(dir.path().join("nowhere/x"), dir.path().join(taken[2]))
            .unwrap();
        std::fs::write(dir.path().join(taken[3]), b"left over").unwrap();
        let mut names = taken.iter().chain(&["t4.tmp"]).map(|name| name.to_string());
        let path = write_durably_named(
            &OsFileSystem,
            dir.path(),
            "side.ron",
            &[&b"state"[..]],
            Placement::Replace,
            |_| names.next().unwrap(),
        )
        .unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"state");
        assert!(!dir.path().join("t4.tmp").exists(), "renamed into place");
        assert_eq!(
            std::fs::read(dir.path().join(taken[3])).unwrap(),
            b"left over"
        );
    }

    #[test]
    fn a_write_gives_up_after_so_many_taken_names() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..TEMP_NAME_TRIES {
            std::fs::create_dir(dir.path().join(format!("t{n}.tmp"))).unwrap();
        }
        let mut n = 0;
        let error = write_durably_named(
            &OsFileSystem,
            dir.path(),
            "side.ron",
            &[&b"state"[..]],
            Placement::Replace,
            |_| {
                n += 1;
                format!("t{}.tmp", n - 1)
            },
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("create the temporary file"),
            "{error}"
        );
        assert_eq!(n, TEMP_NAME_TRIES);
    }
}
