//! Egui textures of the thumbnails stored in saves, read and decoded in the background the
//! first time the menu shows them, and freed when their save is no longer listed.

use super::model::ThumbnailKey;
use super::thumbnails::decode_thumbnail;
use crate::plugin::KeepsakeStore;
use crate::plugin::jobs::task_pool;
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

/// Thumbnails read back from the store for the menu, as egui textures, loaded on first use.
#[derive(Resource, Default)]
pub(crate) struct ThumbnailTextures {
    cached: HashMap<ThumbnailKey, CachedTexture>,
}

impl ThumbnailTextures {
    /// The texture for `key`; starts reading it in the background on first use.
    pub(crate) fn get(
        &mut self,
        key: ThumbnailKey,
        store: &KeepsakeStore,
        ctx: &egui::Context,
    ) -> Option<&egui::TextureHandle> {
        let entry = self.cached.entry(key).or_insert_with(|| {
            let Ok(store) = store.get().cloned() else {
                return CachedTexture::Unavailable;
            };
            CachedTexture::Loading(task_pool().spawn(async move {
                let png = store.read_thumbnail(key.slot, key.generation).ok()??;
                decode_thumbnail(&png)
            }))
        });
        if let CachedTexture::Loading(task) = entry {
            *entry = match check_ready(task) {
                None => return None,
                Some(Some(picture)) => {
                    let name = format!("keepsake-thumbnail-{}", key.save_id);
                    CachedTexture::Ready(ctx.load_texture(
                        name,
                        picture,
                        egui::TextureOptions::LINEAR,
                    ))
                }
                Some(None) => CachedTexture::Unavailable,
            };
        }
        match entry {
            CachedTexture::Ready(texture) => Some(texture),
            _ => None,
        }
    }

    /// Frees the textures of saves no longer listed.
    pub(crate) fn retain(&mut self, listed: &HashSet<ThumbnailKey>) {
        self.cached.retain(|key, _| listed.contains(key));
    }
}
