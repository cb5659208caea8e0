//! Egui textures of the thumbnails stored in saves: read and decoded in the background the
//! first time the menu lists them, uploaded when ready, and freed when their save is no longer
//! listed. The view only looks them up.

use super::model::ThumbnailKey;
use super::thumbnails::decode_thumbnail;
use crate::plugin::KeepsakeStore;
use crate::plugin::pool::task_pool;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::tasks::Task;
use bevy::tasks::futures::check_ready;
use bevy_egui::egui;

enum CachedTexture {
    Loading(Task<Option<egui::ColorImage>>),
    Ready(egui::TextureHandle),
    Unavailable,
}

/// Thumbnails read back from the store for the menu, as egui textures.
#[derive(Resource, Default)]
pub(crate) struct ThumbnailTextures {
    cached: HashMap<ThumbnailKey, CachedTexture>,
}

impl ThumbnailTextures {
    /// The texture for `key`, once it is loaded.
    pub(crate) fn ready(&self, key: ThumbnailKey) -> Option<&egui::TextureHandle> {
        match self.cached.get(&key)? {
            CachedTexture::Ready(texture) => Some(texture),
            CachedTexture::Loading(_) | CachedTexture::Unavailable => None,
        }
    }

    /// Keeps exactly the `listed` thumbnails: starts reading new ones on the pool, uploads the
    /// ones that finished decoding, and frees the rest.
    pub(crate) fn sync(
        &mut self,
        listed: &HashSet<ThumbnailKey>,
        store: &KeepsakeStore,
        ctx: &egui::Context,
    ) {
        self.cached.retain(|key, _| listed.contains(key));
        for &key in listed {
            let entry = self
                .cached
                .entry(key)
                .or_insert_with(|| start_loading(key, store));
            if let CachedTexture::Loading(task) = entry
                && let Some(picture) = check_ready(task)
            {
                *entry = upload(key, picture, ctx);
            }
        }
    }
}

/// Reads and decodes one thumbnail on the pool.
fn start_loading(key: ThumbnailKey, store: &KeepsakeStore) -> CachedTexture {
    let Ok(store) = store.get().cloned() else {
        return CachedTexture::Unavailable;
    };
    CachedTexture::Loading(task_pool().spawn(async move {
        let png = store.read_thumbnail(key.slot, key.generation).ok()??;
        decode_thumbnail(&png)
    }))
}

fn upload(
    key: ThumbnailKey,
    picture: Option<egui::ColorImage>,
    ctx: &egui::Context,
) -> CachedTexture {
    match picture {
        Some(picture) => {
            let name = format!("keepsake-thumbnail-{}", key.save_id);
            CachedTexture::Ready(ctx.load_texture(name, picture, egui::TextureOptions::LINEAR))
        }
        None => CachedTexture::Unavailable,
    }
}
