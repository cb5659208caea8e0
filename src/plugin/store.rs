//! The slot store the plugin writes to, opened when the app starts (not when it is built, so
//! building an app touches no files: opening creates the profile folder and removes stale
//! temporary files).

use crate::format::{EncodeOptions, UnsealedSaves};
use crate::store::{
    FileSystem, ProfileName, SlotLayout, SlotStore, StoreConfig, StoreError, default_save_root,
};
use bevy::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// The slot store the plugin writes to, or why it could not be opened. Present from the
/// `PreStartup` schedule on.
#[derive(Resource, Clone)]
pub struct KeepsakeStore(Result<Arc<SlotStore>, Arc<StoreError>>);

impl KeepsakeStore {
    /// The open store (for reading thumbnails, for instance), or the error that kept it from
    /// opening.
    pub fn get(&self) -> Result<&Arc<SlotStore>, &StoreError> {
        self.0.as_ref().map_err(|error| error.as_ref())
    }
}

/// Where and how to open the store; kept by the plugin until startup.
#[derive(Resource, Clone)]
pub(crate) struct StoreOpener {
    pub(crate) game_id: String,
    pub(crate) save_root: Option<PathBuf>,
    pub(crate) profile: String,
    pub(crate) backups: u16,
    pub(crate) layout: SlotLayout,
    pub(crate) encode: EncodeOptions,
    pub(crate) unsealed: UnsealedSaves,
    pub(crate) filesystem: Arc<dyn FileSystem>,
}

impl StoreOpener {
    fn open(&self) -> Result<SlotStore, StoreError> {
        let root = match &self.save_root {
            Some(root) => root.clone(),
            None => default_save_root(&self.game_id)?,
        };
        let config = StoreConfig {
            profile: ProfileName::new(self.profile.clone())?,
            layout: self.layout,
            backups: self.backups,
            encode: self.encode,
            unsealed: self.unsealed,
            // The game runs on the system's clock.
            ..StoreConfig::new(root)
        };
        SlotStore::open_with(config, Arc::clone(&self.filesystem))
    }
}

/// Opens the store (in `PreStartup`). Saving stays unavailable, with the reason logged and
/// reported by every request, when it cannot be opened.
pub(crate) fn open_store(opener: Res<StoreOpener>, mut commands: Commands) {
    let store = opener.open().map(Arc::new).map_err(|error| {
        error!("keepsake: saving is unavailable: {error}");
        Arc::new(error)
    });
    commands.insert_resource(KeepsakeStore(store));
    commands.remove_resource::<StoreOpener>();
}
