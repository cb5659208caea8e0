//! The test helpers a game calls with its own app: its kept saves checked against its real
//! registered types (the layout check, then a decode of each save), and its committed schema
//! file compared with today's.

use crate::snapshot::{self, SaveRegistry};
use bevy::prelude::*;
use keepsake_core::__private::check_folder_with;
use keepsake_core::compat::{CompatReport, SaveSchema};
use std::path::Path;

/// Setting this environment variable (to anything) makes [`assert_schema_file`] write today's
/// schema to the file instead of failing, the way `INSTA_UPDATE` updates snapshots.
pub const WRITE_SCHEMA_VAR: &str = "KEEPSAKE_WRITE_SCHEMA";

/// Checks every save in `folder` (and its sub-folders) against the types `app` registers:
/// the layout check `keepsake compat` makes, from `app`'s own schema, and a decode of each
/// save with `app`'s registered types, so whatever would fail a load fails here.
pub fn check_kept_saves(app: &App, folder: impl AsRef<Path>) -> CompatReport {
    let world = app.world();
    let schema = SaveSchema::of_world(world);
    let registry = world
        .get_resource::<SaveRegistry>()
        .cloned()
        .unwrap_or_default();
    let types = world.resource::<AppTypeRegistry>().read();
    // Kept saves are test fixtures: keep them unsealed (a sealed one fails here asking for the
    // key; `check_folder_opened` reads sealed ones for the layout check).
    let options = crate::format::DecodeOptions::default();
    check_folder_with(&schema, folder.as_ref(), &options, |save| {
        snapshot::decode(&save.ecs_blob, save.state_hash, &registry, &types)
            .map(|_| ())
            .map_err(|error| error.to_string())
    })
}

/// Panics with the [`CompatReport`] when a save in `folder` would not load with `app`'s types
/// (see [`check_kept_saves`]); for a game's tests:
///
/// ```no_run
/// # use bevy::prelude::*;
/// # fn my_game_types(app: &mut App) {}
/// let mut app = App::new();
/// my_game_types(&mut app);
/// bevy_keepsake::compat::assert_kept_saves_load(&app, "tests/kept-saves");
/// ```
#[track_caller]
pub fn assert_kept_saves_load(app: &App, folder: impl AsRef<Path>) {
    let report = check_kept_saves(app, folder);
    assert!(report.passed(), "kept saves that no longer load:\n{report}");
}

/// Panics when the schema file at `path` is not `app`'s schema today: a saved type changed and
/// the committed file was not regenerated (so the change has not been through review, nor
/// through `keepsake compat`). With [`WRITE_SCHEMA_VAR`] set, writes today's schema instead.
#[track_caller]
pub fn assert_schema_file(app: &App, path: impl AsRef<Path>) {
    let path = path.as_ref();
    let today = SaveSchema::of_app(app);
    if std::env::var_os(WRITE_SCHEMA_VAR).is_some() {
        if let Err(error) = today.write_file(path) {
            panic!("could not write the schema file: {error}");
        }
        return;
    }
    let committed = match SaveSchema::read_file(path) {
        Ok(committed) => committed,
        Err(error) => {
            panic!("{error}\nwrite it with {WRITE_SCHEMA_VAR}=1 (the same test), then commit it")
        }
    };
    if committed != today {
        panic!(
            "{} is not today's schema: {}\nregenerate it with {WRITE_SCHEMA_VAR}=1 (the same \
             test), review the diff, and commit it",
            path.display(),
            schema_differences(&committed, &today).join("; ")
        );
    }
}

/// The types that differ between two schemas, by name.
fn schema_differences(committed: &SaveSchema, today: &SaveSchema) -> Vec<String> {
    let mut out = Vec::new();
    for ty in today.types() {
        match committed
            .types()
            .iter()
            .find(|c| c.type_path == ty.type_path)
        {
            None => out.push(format!("{} is new", ty.type_path)),
            Some(old) if old != ty => out.push(format!("{} changed", ty.type_path)),
            Some(_) => {}
        }
    }
    for old in committed.types() {
        if !today.types().iter().any(|ty| ty.type_path == old.type_path) {
            out.push(format!("{} is no longer registered", old.type_path));
        }
    }
    out
}
