//! Thumbnails ([`SaveThumbnailsPlugin`]): a picture of the primary window when a save starts,
//! downscaled and PNG-encoded on the task pool and handed to the save through its
//! [`ThumbnailTicket`](crate::plugin::ThumbnailTicket). While the menu is open, saves get the
//! [backdrop](super::backdrop) instead, a picture of the game taken as the menu opened (the menu
//! is not drawn on that frame).

use super::backdrop::Backdrop;
use super::overlay::{SaveMenuSystems, ScreenshotCurtain};
use super::state::SaveMenu;
use crate::plugin::pool::task_pool;
use crate::plugin::{LoadCompleted, ThumbnailCapture, ThumbnailTicket, ThumbnailWanted};
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::PrimaryWindow;
use bevy_egui::EguiPrimaryContextPass;
use bevy_egui::egui;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader};
use std::io::Cursor;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Where an encoded picture goes.
enum Destination {
    /// One save.
    Save(ThumbnailTicket),
    /// The menu's backdrop (picture number), and the saves waiting for it.
    Backdrop(Arc<Mutex<Backdrop>>, u64),
}

impl Destination {
    fn deliver(self, png: Option<Vec<u8>>) {
        match (self, png) {
            (Destination::Save(ticket), Some(png)) => {
                ticket.fulfil(png);
            }
            // Dropping the ticket tells the save not to wait.
            (Destination::Save(_), None) => {}
            (Destination::Backdrop(backdrop, number), png) => lock(&backdrop).deliver(number, png),
        }
    }
}

/// Where the picture taken this frame goes (Bevy takes one screenshot per window per frame, so
/// saves started in the same frame share it).
type Destinations = Arc<Mutex<Vec<Destination>>>;

/// Screenshot thumbnails for every save, and the backdrop picture for saves made while the
/// menu is open. Part of [`SaveMenuPlugins`](super::SaveMenuPlugins); works without the menu too.
#[derive(Clone, Debug)]
pub struct SaveThumbnailsPlugin {
    /// The size thumbnails are stored at. Default 320×180.
    pub size: UVec2,
    /// How long a save waits for its thumbnail. Default 4 frames and 150 ms.
    pub wait: ThumbnailCapture,
}

impl Default for SaveThumbnailsPlugin {
    fn default() -> Self {
        SaveThumbnailsPlugin {
            size: UVec2::new(320, 180),
            wait: ThumbnailCapture::default(),
        }
    }
}

impl SaveThumbnailsPlugin {
    /// Waits for each thumbnail until both `frames` frames and `time` have passed.
    #[must_use]
    pub fn wait(mut self, frames: u32, time: Duration) -> Self {
        self.wait = ThumbnailCapture {
            max_wait_frames: frames,
            max_wait_time: time,
        };
        self
    }
}

impl Plugin for SaveThumbnailsPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.wait)
            .insert_resource(ThumbnailCamera::new(self.size))
            .init_resource::<ScreenshotCurtain>()
            .add_observer(on_thumbnail_wanted)
            .add_observer(on_load_completed)
            .add_systems(
                EguiPrimaryContextPass,
                take_backdrop.before(SaveMenuSystems::Draw),
            );
    }
}

/// Takes the pictures.
#[derive(Resource)]
pub(crate) struct ThumbnailCamera {
    size: UVec2,
    backdrop: Arc<Mutex<Backdrop>>,
    /// The frame of the last screenshot requested, and who gets it.
    this_frame: Option<(u32, Destinations)>,
}

impl ThumbnailCamera {
    fn new(size: UVec2) -> Self {
        ThumbnailCamera {
            size,
            backdrop: Arc::default(),
            this_frame: None,
        }
    }

    /// Takes a picture of the primary window as it is drawn this frame (overlays hidden).
    fn shoot(
        &mut self,
        commands: &mut Commands,
        curtain: &mut ScreenshotCurtain,
        frame: u32,
        destination: Destination,
    ) {
        let size = self.size;
        curtain.hide_through(frame);
        if let Some((shot_frame, destinations)) = &self.this_frame
            && *shot_frame == frame
        {
            lock(destinations).push(destination);
            return;
        }
        let destinations: Destinations = Arc::new(Mutex::new(vec![destination]));
        self.this_frame = Some((frame, Arc::clone(&destinations)));
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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Downscales (cropping to the thumbnail's aspect ratio) and encodes as PNG.
pub(crate) fn encode_thumbnail(picture: &DynamicImage, size: UVec2) -> Result<Vec<u8>, String> {
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
pub(crate) fn decode_thumbnail(png: &[u8]) -> Option<egui::ColorImage> {
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

/// Keeps the backdrop in step with the menu: takes it on the frame the menu opens (and again
/// after a load changed the world under the open menu), forgets it when the menu closes.
fn take_backdrop(
    menu: Option<Res<SaveMenu>>,
    windows: Query<(), With<PrimaryWindow>>,
    frames: Res<FrameCount>,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    let mut backdrop = lock(&camera.backdrop);
    if !menu.is_some_and(|menu| menu.is_open()) {
        backdrop.invalidate();
        return;
    }
    if windows.is_empty() || backdrop.is_current() {
        return;
    }
    let number = backdrop.begin();
    drop(backdrop);
    let destination = Destination::Backdrop(Arc::clone(&camera.backdrop), number);
    camera.shoot(&mut commands, &mut curtain, frames.0, destination);
}

/// A save wants a picture: the backdrop while the menu is open, otherwise a new screenshot.
fn on_thumbnail_wanted(
    wanted: On<ThumbnailWanted>,
    windows: Query<(), With<PrimaryWindow>>,
    menu: Option<Res<SaveMenu>>,
    frames: Res<FrameCount>,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    if windows.is_empty() {
        return; // headless: the ticket drops and the save goes on without a picture
    }
    let mut ticket = Some(wanted.ticket.clone());
    if menu.is_some_and(|menu| menu.is_open()) {
        ticket = ticket.and_then(|ticket| lock(&camera.backdrop).request(ticket));
    }
    if let Some(ticket) = ticket {
        let destination = Destination::Save(ticket);
        camera.shoot(&mut commands, &mut curtain, frames.0, destination);
    }
}

/// A load changed the world: the backdrop no longer shows it.
fn on_load_completed(_: On<LoadCompleted>, camera: Res<ThumbnailCamera>) {
    lock(&camera.backdrop).invalidate();
}
