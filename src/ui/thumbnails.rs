//! Thumbnails ([`SaveThumbnailsPlugin`]): pictures of the primary window, downscaled and
//! PNG-encoded on the task pool, kept as the [recent picture](super::recent) that every save
//! takes at once through its [`ThumbnailTicket`](crate::plugin::ThumbnailTicket) (a save never
//! waits for a screenshot: see [`crate::plugin::thumbnail`]).
//!
//! **What keeps the picture fresh.** A picture is taken
//! - every [`SaveThumbnailsPlugin::recent_every`] (2 s) of play while no menu or toast is on
//!   screen (hiding an overlay for the picture's frame would make it blink);
//! - at every save, for the next one: the save itself gets the picture from before, the next
//!   save (a quicksave, the exit save) one from this moment at the latest;
//! - as the save menu opens (the backdrop: the menu is not drawn on that frame), so the saves
//!   made from the menu show the game behind it;
//! - right after a load or a rewind, which also forgets every picture of the world before it: a
//!   save after either never shows the world it replaced (it goes without a picture until the
//!   new one is encoded, a few frames).
//!
//! The exit save is written in the app's last frame, after which nothing is drawn; it takes the
//! recent picture like every other save.
//!
//! **No black frame.** A window screenshot makes Bevy draw the frame into a texture of its own
//! and then copy it to the window with a pipeline it compiles the first time (in the
//! background); until that pipeline is ready, Bevy 0.20 skips the copy, and the window shows
//! a black frame (the first save of a session, on slow drivers such as software Vulkan). The
//! plugin has Bevy compile that pipeline for the window's format as soon as the window has a
//! surface (`screenshot_warmup`), long before the first picture.

use super::overlay::{SaveMenuSystems, ScreenshotCurtain};
use super::recent::RecentPicture;
use super::screenshot_warmup;
use super::state::SaveMenu;
use super::toast_queue::Toasts;
use crate::plugin::pool::task_pool;
use crate::plugin::{SaveReason, ThumbnailCapture, ThumbnailWanted, WorldRestored};
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

/// Screenshot thumbnails for every save, from a picture of the game kept ready (see the module
/// docs in `thumbnails.rs`). Part of [`SaveMenuPlugins`](super::SaveMenuPlugins); works without
/// the menu too.
#[derive(Clone, Debug)]
pub struct SaveThumbnailsPlugin {
    /// The size thumbnails are stored at. Default 320×180.
    pub size: UVec2,
    /// How often a picture is taken during play, while no menu or toast is on screen: a save
    /// shows the game at most this long before it (or as of the last save or load, if later).
    /// Default 2 s of real time; `Duration::ZERO` takes none this way (pictures are then taken
    /// only at saves, for the next one, and as the menu opens and after loads).
    pub recent_every: Duration,
}

impl Default for SaveThumbnailsPlugin {
    fn default() -> Self {
        SaveThumbnailsPlugin {
            size: UVec2::new(320, 180),
            recent_every: Duration::from_secs(2),
        }
    }
}

impl Plugin for SaveThumbnailsPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ThumbnailCapture)
            .insert_resource(ThumbnailCamera::new(self.size, self.recent_every))
            .init_resource::<ScreenshotCurtain>()
            .add_observer(on_thumbnail_wanted)
            .add_observer(on_world_restored)
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
    /// The newest picture encoded, shared with the encoding tasks.
    recent: Arc<Mutex<RecentPicture>>,
    /// The frame of the last screenshot asked for (Bevy takes one per window per frame).
    shot_frame: Option<u32>,
    /// Real time the last screenshot was asked for.
    last_shot: Duration,
    /// How often a picture is taken during play (zero: never this way).
    recent_every: Duration,
    /// The menu's backdrop was taken since the menu opened (or since a load under it).
    backdrop_taken: bool,
    /// A load replaced the world: a picture is due at once.
    refresh_now: bool,
}

impl ThumbnailCamera {
    fn new(size: UVec2, recent_every: Duration) -> Self {
        ThumbnailCamera {
            size,
            recent: Arc::default(),
            shot_frame: None,
            last_shot: Duration::ZERO,
            recent_every,
            backdrop_taken: false,
            refresh_now: false,
        }
    }

    /// Takes a picture of the primary window as it is drawn this frame (overlays hidden), to
    /// become the recent picture once encoded.
    fn shoot(&mut self, commands: &mut Commands, curtain: &mut ScreenshotCurtain, now: Now) {
        curtain.hide_through(now.frame);
        self.last_shot = now.time;
        self.refresh_now = false;
        if self.shot_frame == Some(now.frame) {
            return;
        }
        self.shot_frame = Some(now.frame);
        let number = lock(&self.recent).begin();
        let (recent, size) = (Arc::clone(&self.recent), self.size);
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>| {
                let image = captured.image.clone();
                let recent = Arc::clone(&recent);
                task_pool()
                    .spawn(async move {
                        let png = image
                            .try_into_dynamic()
                            .map_err(|error| error.to_string())
                            .and_then(|picture| encode_thumbnail(&picture, size));
                        match png {
                            Ok(png) => lock(&recent).deliver(number, png),
                            Err(error) => warn!("keepsake: no picture for the next save: {error}"),
                        }
                    })
                    .detach();
            },
        );
    }
}

/// The frame and real time a picture is asked for.
#[derive(Clone, Copy)]
struct Now {
    frame: u32,
    time: Duration,
}

/// The clocks [`Now`] is read from.
#[derive(SystemParam)]
struct Clocks<'w> {
    frames: Res<'w, FrameCount>,
    time: Res<'w, Time<Real>>,
}

impl Clocks<'_> {
    fn now(&self) -> Now {
        Now {
            frame: self.frames.0,
            time: self.time.elapsed(),
        }
    }
}

#[cfg(test)]
impl ThumbnailCamera {
    /// Sets the recent picture, as an encoded screenshot does.
    pub(crate) fn set_recent(&self, png: Vec<u8>) {
        let mut recent = lock(&self.recent);
        let number = recent.begin();
        recent.deliver(number, png);
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

/// Takes the backdrop on the frame the menu opens (and again after a load changed the world
/// under the open menu), when the menu is not drawn yet; it becomes the recent picture, so the
/// saves made from the menu show the game behind it.
fn take_backdrop(
    menu: Option<Res<SaveMenu>>,
    windows: Query<(), With<PrimaryWindow>>,
    clocks: Clocks,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    if !menu.is_some_and(|menu| menu.is_open()) {
        camera.backdrop_taken = false;
        return;
    }
    if windows.is_empty() || camera.backdrop_taken {
        return;
    }
    camera.backdrop_taken = true;
    camera.shoot(&mut commands, &mut curtain, clocks.now());
}

/// The overlays a picture of the game should not show.
#[derive(SystemParam)]
struct Overlays<'w> {
    menu: Option<Res<'w, SaveMenu>>,
    toasts: Option<Res<'w, Toasts>>,
}

impl Overlays<'_> {
    fn menu_open(&self) -> bool {
        self.menu.as_ref().is_some_and(|menu| menu.is_open())
    }

    fn toast_shown(&self) -> bool {
        self.toasts
            .as_ref()
            .is_some_and(|toasts| !toasts.is_empty())
    }
}

/// Every `recent_every` while nothing but the game is on screen, and right after a load, a
/// picture for the next save. After a load a toast may be up: it is hidden for the picture's
/// frame, the first of its fade-in, where it does not show yet. The open menu is never hidden:
/// its backdrop is the picture then.
fn take_recent_picture(
    windows: Query<(), With<PrimaryWindow>>,
    overlays: Overlays,
    clocks: Clocks,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    let now = clocks.now();
    let periodic = !camera.recent_every.is_zero()
        && now.time.saturating_sub(camera.last_shot) >= camera.recent_every
        && !overlays.toast_shown();
    if !(camera.refresh_now || periodic) || overlays.menu_open() || windows.is_empty() {
        return;
    }
    camera.shoot(&mut commands, &mut curtain, now);
}

/// A save wants a picture: it gets the newest there is, at once (it is written as soon as this
/// returns), and, in play, a picture of this moment is taken for the next save. Not for the exit
/// save (no frame is drawn after it), not headless, not over the open menu (its backdrop shows
/// the game behind it, and hiding the menu would make it blink).
fn on_thumbnail_wanted(
    wanted: On<ThumbnailWanted>,
    windows: Query<(), With<PrimaryWindow>>,
    overlays: Overlays,
    clocks: Clocks,
    mut camera: ResMut<ThumbnailCamera>,
    mut curtain: ResMut<ScreenshotCurtain>,
    mut commands: Commands,
) {
    if let Some(png) = lock(&camera.recent).picture() {
        wanted.ticket.clone().fulfil(png.to_vec());
    }
    if wanted.reason != SaveReason::Exit && !windows.is_empty() && !overlays.menu_open() {
        camera.shoot(&mut commands, &mut curtain, clocks.now());
    }
}

/// A load or a rewind replaced the world: the pictures of the one before are forgotten, and a
/// new one is due (the backdrop, if the menu is open).
fn on_world_restored(_: On<WorldRestored>, mut camera: ResMut<ThumbnailCamera>) {
    lock(&camera.recent).invalidate();
    camera.backdrop_taken = false;
    camera.refresh_now = true;
}
