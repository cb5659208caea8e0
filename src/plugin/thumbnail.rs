//! The thumbnail hook: a save may wait a few frames for a picture of the game.
//!
//! The plugin itself never renders. When a [`ThumbnailCapture`] resource is present, every save
//! triggers [`ThumbnailWanted`] right after capturing the world, and waits (without blocking the
//! main thread) until the observer fulfils the [`ThumbnailTicket`] or drops it, or until both
//! [`ThumbnailCapture::max_wait_frames`] frames and [`ThumbnailCapture::max_wait_time`] have
//! passed; then it writes, with or without the picture. Counting both keeps the wait short at
//! low frame rates and still long enough for a screenshot at high ones. The `save_menu` feature's
//! [`SaveThumbnailsPlugin`](crate::ui::SaveThumbnailsPlugin) provides thumbnails from window
//! screenshots; a game can provide its own instead:
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_keepsake::plugin::{ThumbnailCapture, ThumbnailWanted};
//!
//! fn provide_thumbnails(app: &mut App) {
//!     app.insert_resource(ThumbnailCapture::default())
//!         .add_observer(|wanted: On<ThumbnailWanted>| {
//!             let png: Vec<u8> = Vec::new(); // render and encode a PNG here
//!             wanted.ticket.clone().fulfil(png);
//!         });
//! }
//! # provide_thumbnails(&mut App::new());
//! ```

use super::job::{SaveReason, SaveTarget};
use bevy::prelude::*;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::time::{Duration, Instant};

/// Present when something provides thumbnails for saves; saves then wait for one until both
/// `max_wait_frames` frames and `max_wait_time` have passed (default 4 frames and 150 ms).
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct ThumbnailCapture {
    /// Frames a save waits for its thumbnail, at least.
    pub max_wait_frames: u32,
    /// Real time a save waits for its thumbnail, at least (`Duration::ZERO`: frames only).
    pub max_wait_time: Duration,
}

impl Default for ThumbnailCapture {
    fn default() -> Self {
        ThumbnailCapture {
            max_wait_frames: 4,
            max_wait_time: Duration::from_millis(150),
        }
    }
}

/// A save has captured the world and would like a thumbnail (triggered only while a
/// [`ThumbnailCapture`] resource exists).
#[derive(Event, Clone, Debug)]
pub struct ThumbnailWanted {
    /// Where the save goes.
    pub target: SaveTarget,
    /// Why it is made. An exit save ([`SaveReason::Exit`]) is written in the app's last
    /// frame: no frame is drawn after it, so a provider hands over a picture it took before
    /// (the save menu's thumbnails keep a recent one) rather than a new screenshot.
    pub reason: SaveReason,
    /// Hand the PNG bytes over with this, from any thread.
    pub ticket: ThumbnailTicket,
}

/// The way back to a save waiting for its thumbnail. Dropping every clone without fulfilling
/// it lets the save go ahead at once without a thumbnail.
#[derive(Clone, Debug)]
pub struct ThumbnailTicket(SyncSender<Vec<u8>>);

impl ThumbnailTicket {
    /// Hands over the encoded thumbnail (PNG). Returns `false` when the save no longer waits
    /// (it gave up after [`ThumbnailCapture::max_wait_frames`], or a thumbnail was already
    /// delivered).
    pub fn fulfil(self, png: Vec<u8>) -> bool {
        self.0.try_send(png).is_ok()
    }
}

/// The save's side of a ticket.
pub(crate) struct ThumbnailWait {
    /// In a mutex only to be `Sync` (resources must be); polling uses `get_mut`, no locking.
    receiver: Mutex<Receiver<Vec<u8>>>,
    frames_left: u32,
    deadline: Instant,
}

/// What a waiting save should do now.
pub(crate) enum WaitState {
    /// Keep waiting.
    Pending,
    /// Write now, with this thumbnail if one arrived.
    Done(Option<Vec<u8>>),
}

impl ThumbnailWait {
    /// A new ticket and the wait that ends once `capture.max_wait_frames` calls to
    /// [`Self::poll`] and `capture.max_wait_time` have passed.
    pub(crate) fn new(capture: ThumbnailCapture) -> (ThumbnailTicket, Self) {
        let (sender, receiver) = sync_channel(1);
        let wait = ThumbnailWait {
            receiver: Mutex::new(receiver),
            frames_left: capture.max_wait_frames,
            deadline: Instant::now() + capture.max_wait_time,
        };
        (ThumbnailTicket(sender), wait)
    }

    /// Checks for the thumbnail; call once per frame.
    pub(crate) fn poll(&mut self) -> WaitState {
        let receiver = self
            .receiver
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match receiver.try_recv() {
            Ok(png) => WaitState::Done(Some(png)),
            Err(TryRecvError::Disconnected) => WaitState::Done(None),
            Err(TryRecvError::Empty)
                if self.frames_left == 0 && Instant::now() >= self.deadline =>
            {
                debug!("keepsake: thumbnail did not arrive in time; saving without it");
                WaitState::Done(None)
            }
            Err(TryRecvError::Empty) => {
                self.frames_left = self.frames_left.saturating_sub(1);
                WaitState::Pending
            }
        }
    }
}
