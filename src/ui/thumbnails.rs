//! Thumbnails: taken from the primary window when a save starts, downscaled and PNG-encoded on
//! the task pool, stored in the save; read back lazily for the menu and cached as egui
//! textures.
//!
//! While the menu is open the window shows the menu, not the game, so the picture is taken
//! when the menu opens (before it is first drawn) and every save made from the menu uses that
//! one.

use super::model::ThumbnailKey;
use super::state::SaveMenu;
use crate::plugin::{KeepsakeStore, ThumbnailTicket, ThumbnailWanted};
use bevy::diagnostic::FrameCount;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::tasks::futures::check_ready;
use bevy::tasks::{AsyncComputeTaskPool, Task, TaskPool};
use bevy::window::PrimaryWindow;
use bevy_egui::egui;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader};
use std::io::Cursor;
use std::sync::{Arc, Mutex, PoisonError};

/// The picture taken when the menu opened, for saves made from the menu.
#[derive(Default)]
enum Backdrop {
    /// None taken (the menu is closed, or there is no window).
    #[default]
    None,
    /// Taken or being encoded; these saves wait for it.
    Pending(Vec<ThumbnailTicket>),
    /// Encoded.
    Ready(Arc<Vec<u8>>),
}

/// Where an encoded picture goes.
enum Destination {
    /// One save.
    Save(ThumbnailTicket),
    /// The menu's backdrop, and the saves waiting for it.
    Backdrop(Arc<Mutex<Backdrop>>),
}

impl Destination {
    fn deliver(self, png: Option<Vec<u8>>) {
        match (self, png) {
            (Destination::Save(ticket), Some(png)) => {
                ticket.fulfil(png);
            }
            // Dropping the ticket tells the save not to wait.
            (Destination::Save(_), None) => {}
            (Destination::Backdrop(backdrop), png) => {
                let mut backdrop = lock(&backdrop);
                let waiting = match std::mem::take(&mut *backdrop) {
                    Backdrop::Pending(waiting) => waiting,
                    // The menu closed meanwhile: nobody waits, nothing to keep.
                    _ => return,
                };
                if let Some(png) = png {
                    for ticket in waiting {
                        ticket.fulfil(png.clone());
                    }
                    *backdrop = Backdrop::Ready(Arc::new(png));
                }
            }
        }
    }
}

/// Where the picture taken this frame goes (Bevy takes one screenshot per window per frame, so
/// saves started in the same frame share it).
type Destinations = Arc<Mutex<Vec<Destination>>>;

/// Takes the pictures.
#[derive(Resource)]
pub(crate) struct ThumbnailCamera {
    size: UVec2,
    backdrop: Arc<Mutex<Backdrop>>,
    /// The frame of the last screenshot requested, and who gets it.
    this_frame: Option<(u32, Destinations)>,
    /// Toasts stay hidden up to and including this frame, so they are not in the picture.
    hide_overlays_through: Option<u32>,
}

impl ThumbnailCamera {
    pub(crate) fn new(size: UVec2) -> Self {
        ThumbnailCamera {
            size,
            backdrop: Arc::default(),
            this_frame: None,
            hide_overlays_through: None,
        }
    }

    /// Whether overlays must stay off this frame (a picture is being taken of it).
    pub(crate) fn hides_overlays(&self, frame: u32) -> bool {
        self.hide_overlays_through.is_some_and(|last| frame <= last)
    }

    fn backdrop(&self) -> std::sync::MutexGuard<'_, Backdrop> {
        lock(&self.backdrop)
    }

    /// Takes a picture of the primary window as it is drawn this frame.
    fn shoot(&mut self, commands: &mut Commands, frame: u32, destination: Destination) {
        self.hide_overlays_through = Some(frame);
        if let Some((shot_frame, destinations)) = &self.this_frame
            && *shot_frame == frame
        {
            lock(destinations).push(destination);
            return;
        }
        let destinations: Destinations = Arc::new(Mutex::new(vec![destination]));
        self.this_frame = Some((frame, Arc::clone(&destinations)));
        let size = self.size;
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>| {
                let destinations = std::mem::take(&mut *lock(&destinations));
                if destinations.is_empty() {
                    return;
                }
                let image = captured.image.clone();
                task_pool()
                    .spawn(async move {
                        let png = image
                            .try_into_dynamic()
                            .map_err(|error| error.to_string())
                            .and_then(|picture| encode_thumbnail(&picture, size));
                        if let Err(error) = &png {
                            warn!("keepsake: no thumbnail for this save: {error}");
                        }
                        for destination in destinations {
                            destination.deliver(png.as_ref().ok().cloned());
                        }
                    })
                    .detach();
            },
        );
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn task_pool() -> &'static TaskPool {
    AsyncComputeTaskPool::get_or_init(TaskPool::new)
}

/// Downscales (cropping to the thumbnail's aspect ratio) and encodes as PNG.
pub fn encode_thumbnail(picture: &DynamicImage, size: UVec2) -> Result<Vec<u8>, String> {
    let small = picture.resize_to_fill(size.x, size.y, FilterType::Triangle);
    // Alpha in a window capture is not transparency; drop it like Bevy's `save_to_disk` does.
    let rgb = DynamicImage::ImageRgb8(small.to_rgb8());
    let mut png = Vec::new();
    rgb.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|error| error.to_string())?;
    Ok(png)
}

/// Decodes a stored thumbnail, refusing pictures larger than any thumbnail should be (the
/// file may be damaged or hostile).
pub fn decode_thumbnail(png: &[u8]) -> Option<egui::ColorImage> {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(1024);
    limits.max_image_height = Some(1024);
    limits.max_alloc = Some(16 * 1024 * 1024);
    let mut reader = ImageReader::with_format(Cursor::new(png), ImageFormat::Png);
    reader.limits(limits);
    let rgba = reader.decode().ok()?.to_rgba8();
    let size = [rgba.width() as usize, rgba.height() as usize];
    Some(egui::ColorImage::from_rgba_unmultiplied(
        size,
        rgba.as_raw(),
    ))
}

/// A save wants a picture: use the menu's backdrop while the menu is open, otherwise take one.
pub(crate) fn on_thumbnail_wanted(
    wanted: On<ThumbnailWanted>,
    windows: Query<(), With<PrimaryWindow>>,
    menu: Res<SaveMenu>,
    frames: Res<FrameCount>,
    mut camera: ResMut<ThumbnailCamera>,
    mut commands: Commands,
) {
    if windows.is_empty() {
        return; // headless: the ticket drops and the save goes on without a picture
    }
    let ticket = wanted.ticket.clone();
    if menu.is_open() {
        let mut backdrop = camera.backdrop();
        match &mut *backdrop {
            Backdrop::Ready(png) => {
                ticket.fulfil(png.as_ref().clone());
                return;
            }
            Backdrop::Pending(waiting) => {
                waiting.push(ticket);
                return;
            }
            Backdrop::None => {}
        }
    }
    camera.shoot(&mut commands, frames.0, Destination::Save(ticket));
}

/// Takes the backdrop picture the frame the menu opens, and forgets it when the menu closes.
/// Returns whether the menu may be drawn this frame.
pub(crate) fn track_backdrop(
    camera: &mut ThumbnailCamera,
    commands: &mut Commands,
    frame: u32,
    menu_open: bool,
    was_open: bool,
    has_window: bool,
) -> bool {
    match (menu_open, was_open) {
        (true, false) if has_window => {
            *camera.backdrop() = Backdrop::Pending(Vec::new());
            let destination = Destination::Backdrop(Arc::clone(&camera.backdrop));
            camera.shoot(commands, frame, destination);
            false
        }
        (false, true) => {
            *camera.backdrop() = Backdrop::None;
            false
        }
        (open, _) => open,
    }
}

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
