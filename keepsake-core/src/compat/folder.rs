//! A folder of kept saves checked against a schema, engine-free (the `keepsake compat`
//! command's whole check; the game's test helper adds a decode per save).

use super::check::check_blob;
use super::report::{CompatReport, SaveCheck};
use crate::blob::state_hash;
use crate::compat::file::SaveSchema;
use crate::format::{self, DecodeOptions, WorldState};
use std::io::Read;
use std::path::Path;

/// Checks every save file in `folder` (`*.ksav` in it and in its sub-folders: every slot and
/// generation of a profile, or of every profile of a save root) against `schema`. Sealed saves
/// need their key: see [`check_folder_opened`].
pub fn check_folder(schema: &SaveSchema, folder: impl AsRef<Path>) -> CompatReport {
    check_folder_opened(schema, folder, &DecodeOptions::default())
}

/// [`check_folder`], reading the saves with `options` (the key of sealed saves: `keepsake
/// compat --key-file`).
pub fn check_folder_opened(
    schema: &SaveSchema,
    folder: impl AsRef<Path>,
    options: &DecodeOptions,
) -> CompatReport {
    check_folder_with(schema, folder.as_ref(), options, |_| Ok(()))
}

/// [`check_folder_opened`], running `also` on each save whose snapshot reads (the test helper's
/// decode with the game's types); its error is the save's `load_error`.
pub fn check_folder_with(
    schema: &SaveSchema,
    folder: &Path,
    options: &DecodeOptions,
    mut also: impl FnMut(&WorldState) -> Result<(), String>,
) -> CompatReport {
    let mut report = CompatReport {
        folder: folder.to_path_buf(),
        schema_types: schema.types().len(),
        folder_error: None,
        saves: Vec::new(),
    };
    let files = match crate::store::save_files(folder, 1) {
        Ok((files, _)) => files,
        Err(error) => {
            report.folder_error = Some(error.to_string());
            return report;
        }
    };
    for path in files {
        let mut save = SaveCheck {
            path: path.clone(),
            error: None,
            columns: Vec::new(),
            load_error: None,
        };
        match read_world(&path, options).and_then(|world| {
            let columns = check_blob(schema, &world.ecs_blob).map_err(|e| e.to_string())?;
            Ok((world, columns))
        }) {
            Ok((world, columns)) => {
                save.columns = columns;
                save.load_error = also(&world).err();
            }
            Err(error) => save.error = Some(error),
        }
        report.saves.push(save);
    }
    report
}

/// The world snapshot of a save file, its checksums and hash verified.
fn read_world(path: &Path, options: &DecodeOptions) -> Result<WorldState, String> {
    let max = options.limits.max_file_len();
    // A FIFO would block the open, a device never ends: only regular files are read.
    let file = crate::store::OsFileSystem::open_regular(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    // A file larger than any save is refused before it is held.
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than any save ({max} bytes)"));
    }
    let world = format::decode(&bytes, options)
        .map_err(|e| e.to_string())?
        .bundle
        .world;
    let computed = state_hash(&world.ecs_blob);
    if computed != world.state_hash {
        let error = crate::error::BlobError::HashMismatch {
            stored: world.state_hash,
            computed,
        };
        return Err(error.to_string());
    }
    Ok(world)
}
