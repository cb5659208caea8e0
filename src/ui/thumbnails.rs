//! Thumbnails ([`SaveThumbnailsPlugin`]): a picture of the primary window when a save starts,
//! downscaled and PNG-encoded on the task pool and handed to the save through its
//! [`ThumbnailTicket`](crate::plugin::ThumbnailTicket). While the menu is open, saves get the
//! [backdrop](super::backdrop) instead, a picture of the game taken as the menu opened (the menu
//! is not drawn on that frame).
//!
//! **The exit save** is written in the app's last frame, after which nothing is drawn (and a
//! window closed by the player is gone already), so it cannot wait for a screenshot: it gets
//! the most recent picture of the game instead. Every picture taken for a save or the backdrop
//! is kept as the recent one, and a new one is taken every
//! [`SaveThumbnailsPlugin::recent_every`] (5 s) of play while no menu or toast is on screen,
//! so the exit save shows what the player saw at most that long before closing.
//!
//! **No black frame.** A window screenshot makes Bevy draw the frame into a texture of its own
//! and then copy it to the window with a pipeline it compiles the first time (in the
//! background); until that pipeline is ready, Bevy 0.20 skips the copy, and the window shows
//! a black frame (the first save of a session, on slow drivers such as software Vulkan). The
//! plugin has Bevy compile that pipeline for the window's format as soon as the window has a
//! surface (`screenshot_warmup`), long before the first save.

use super::backdrop::Backdrop;
use super::overlay::{SaveMenuSystems, ScreenshotCurtain};
use super::screenshot_warmup;
use super::state::SaveMenu;
use super::toast_queue::Toasts;
use crate::plugin::pool::task_pool;
use crate::plugin::{
    LoadCompleted, SaveReason, ThumbnailCapture, ThumbnailTicket, ThumbnailWanted,
};
use bevy::diagnostic::FrameCount;
use bevy::ecs::system::SystemParam;
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

/// Where an encoded picture goes (each also becomes the recent picture).
enum Destination {
    /// One save.
    Save(ThumbnailTicket),
    /// The menu's backdrop (picture number), and the saves waiting for it.
    Backdrop(Arc<Mutex<Backdrop>>, u64),
    /// Only the recent picture, for the exit save.
    Recent,
}

impl Destination {
    fn deliver(self, png: Option<Vec<u8>>) {
        match (self, png) {
            (Destination::Save(ticket), Some(png)) => {
                ticket.fulfil(png);
            }
            // Dropping the ticket tells the save not to wait.
            (Destination::Save(_), None) | (Destination::Recent, _) => {}
            (Destination::Backdrop(backdrop, number), png) => lock(&backdrop).deliver(number, png),
        }
    }
}

/// The latest picture of the game, for the exit save.
type RecentPicture = Arc<Mutex<Option<Vec<u8>>>>;

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
    /// How often a picture is taken for the exit save, which cannot take one (see the
    /// module docs in `thumbnails.rs`); only while no menu or toast is on screen. Default 5 s of real
    /// time; `Duration::ZERO` takes none (the exit save then gets the last save's picture).
    pub recent_every: Duration,
}

impl Default for SaveThumbnailsPlugin {
    fn default() -> Self {
        SaveThumbnailsPlugin {
            size: UVec2::new(320, 180),
            wait: ThumbnailCapture::default(),
            recent_every: Duration::from_secs(5),
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
            .insert_resource(ThumbnailCamera::new(self.size, self.recent_every))
            .init_resource::<ScreenshotCurtain>()
            .add_observer(on_thumbnail_wanted)
            .add_observer(on_load_completed)
            .add_systems(Update, take_recent_picture)
            .add_systems(
                EguiPrimaryContextPass,
                take_backdrop.before(SaveMenuSystems::Draw),
            );
    }

    /// The render app exists once every plugin is built.
    fn finish(&self, app: &mut App) {
        screenshot_warmup::add_to(app);
    }
}

/// Takes the pictures.
#[derive(Resource)]
pub(crate) struct ThumbnailCamera {
    size: UVec2,
    backdrop: Arc<Mutex<Backdrop>>,
    /// The frame of the last screenshot requested, and who gets it.
    this_frame: Option<(u32, Destinations)>,
    /// The latest picture encoded, whatever it was taken for.
    recent: RecentPicture,
    /// How often a picture is taken only to be the recent one (zero: never).
    recent_every: Duration,
    /// Real time the last picture for the recent one alone was taken.
    last_shot: Duration,
}

impl ThumbnailCamera {
    fn new(size: UVec2, recent_every: Duration) -> Self {
        ThumbnailCamera {
            size,
            backdrop: Arc::default(),
            this_frame: None,
            recent: Arc::default(),
            recent_every,
            last_shot: Duration::ZERO,
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
        let recent = Arc::clone(&self.recent);
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>| {
                let destinations = std::mem::take(&mut *lock(&destinations));
                if destinations.is_empty() {
                    return;
                }
                let image = captured.image.clone();
                let recent = Arc::clone(&recent);
                task_pool()
                    .spawn(async move {
                        let png = image
                            .try_into_dynamic()
                            .map_err(|error| error.to_string())
                            .and_then(|picture| encode_thumbnail(&picture, size));
                        match &png {
                            Ok(png) => *lock(&recent) = Some(png.clone()),
                            Err(error) => warn!("keepsake: no thumbnail for this save: {error}"),
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

#[cfg(test)]
impl ThumbnailCamera {
    /// Sets the recent picture, as a screenshot delivered to any destination does.
    pub(crate) fn set_recent(&self, png: Vec<u8>) {
        *lock(&self.recent) = Some(png);
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

/// The overlays a picture of the game should not show.
#[derive(SystemParam)]
struct Overlays<'w> {
    menu: Option<Res<'w, SaveMenu>>,
    toasts: Option<Res<'w, Toasts>>,
}

impl Overlays<'_> {
    /// Whether the menu or a toast is on screen.
    fn shown(&self) -> bool {
        self.menu.as_ref().is_some_and(|menu| menu.is_open())
            || self
                .toasts
                .as_ref()
                .is_some_and(|toasts| !toasts.is_empty())
    }
}

/// Every `recent_every`, while nothing but the game is on screen, a picture for the exit save.
fn take_recent_picture(
    windows: Query<(), With<PrimaryWindow>>,
    overlays: Overlays,
    frames: Res<FrameCount>,
    time: Res<Time<Real>>,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    let now = time.elapsed();
    let due = !camera.recent_every.is_zero()
        && now.saturating_sub(camera.last_shot) >= camera.recent_every;
    if !due || overlays.shown() || windows.is_empty() {
        return;
    }
    camera.last_shot = now;
    camera.shoot(&mut commands, &mut curtain, frames.0, Destination::Recent);
}

/// A save wants a picture: the backdrop while the menu is open, otherwise a new screenshot;
/// the exit save (no frame follows it) and a save without a window get the recent picture.
fn on_thumbnail_wanted(
    wanted: On<ThumbnailWanted>,
    windows: Query<(), With<PrimaryWindow>>,
    menu: Option<Res<SaveMenu>>,
    frames: Res<FrameCount>,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    if wanted.reason == SaveReason::Exit || windows.is_empty() {
        // Headless, or no recent picture yet: the ticket drops and the save goes on without.
        if let Some(png) = lock(&camera.recent).clone() {
            wanted.ticket.clone().fulfil(png);
        }
        return;
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
