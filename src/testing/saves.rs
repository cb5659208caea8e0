//! A temporary save root.

use std::path::Path;

/// A temporary folder to save into, removed with everything in it when dropped.
///
/// # Example
///
/// ```
/// use bevy_keepsake::prelude::*;
/// use bevy_keepsake::testing::TestSaves;
///
/// let saves = TestSaves::new();
/// let plugins = KeepsakePlugins::new("my-game").save_root(saves.root());
/// # drop(plugins);
/// assert!(saves.root().is_dir());
/// ```
#[derive(Debug)]
pub struct TestSaves {
    dir: tempfile::TempDir,
}

impl TestSaves {
    /// A new, empty folder under the system's temporary folder.
    ///
    /// # Panics
    ///
    /// When the folder cannot be created.
    #[track_caller]
    pub fn new() -> Self {
        match tempfile::Builder::new().prefix("keepsake-saves-").tempdir() {
            Ok(dir) => Self { dir },
            Err(error) => panic!("TestSaves: no temporary save folder: {error}"),
        }
    }

    /// The folder, to give [`KeepsakePlugins::save_root`](crate::plugin::KeepsakePlugins::save_root).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

impl Default for TestSaves {
    fn default() -> Self {
        Self::new()
    }
}

impl AsRef<Path> for TestSaves {
    fn as_ref(&self) -> &Path {
        self.root()
    }
}
