//! Finding save files in a folder without opening it as a store: what `keepsake verify` and the
//! compatibility guard read.

use super::layout::SAVE_EXTENSION;
use std::io;
use std::path::{Path, PathBuf};

/// The save files (`*.ksav`: every slot and every generation) in `folder` and, `depth` levels
/// down, in its sub-folders (a save root holds one folder per profile), sorted by path; and how
/// many other entries were passed over. A sub-folder that cannot be listed counts as passed
/// over; symbolic links to folders are not followed.
///
/// Entries named like saves that are not regular files (a FIFO, a link to a device) are listed
/// all the same, so whoever reads them names them: open them with
/// [`OsFileSystem::open_regular`](super::OsFileSystem::open_regular), which refuses them
/// without blocking, and read at most the limits' largest file.
pub fn save_files(folder: &Path, depth: usize) -> io::Result<(Vec<PathBuf>, usize)> {
    let mut files = Vec::new();
    let mut ignored = 0;
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            ignored += 1;
            continue;
        };
        if kind.is_dir() {
            if depth > 0 {
                match save_files(&path, depth - 1) {
                    Ok((more, more_ignored)) => {
                        files.extend(more);
                        ignored += more_ignored;
                    }
                    Err(_) => ignored += 1,
                }
            }
        } else if path.extension().is_some_and(|e| e == SAVE_EXTENSION) {
            files.push(path);
        } else {
            ignored += 1;
        }
    }
    Ok((files, ignored))
}
