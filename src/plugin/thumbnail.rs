//! The thumbnail hook: a save may wait a few frames for a picture of the game.
//!
//! The plugin itself never renders. When a [`ThumbnailCapture`] resource is present, every save
//! triggers [`ThumbnailWanted`] right after capturing the world, and waits (without blocking the
//! main thread) until the observer fulfils the [`ThumbnailTicket`], drops it, or
//! [`ThumbnailCapture::max_wait_frames`] frames pass; then it writes, with or without the
//! picture. The `ui` feature's [`SaveMenuPlugin`](crate::ui::SaveMenuPlugin) provides
//! thumbnails from window screenshots; a game can provide its own instead:
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_keepsake::plugin::{ThumbnailCapture, ThumbnailWanted};
//!
//! fn provide_thumbnails(app: &mut App) {
//!     app.insert_resource(ThumbnailCapture { max_wait_frames: 3 })
//!         .add_observer(|wanted: On<ThumbnailWanted>| {
//!             let png: Vec<u8> = Vec::new(); // render and encode a PNG here
//!             wanted.ticket.clone().fulfil(png);
//!         });
//! }
//! # provide_thumbnails(&mut App::new());
//! ```

use crate::slot::SlotId;
use bevy::prelude::*;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

/// Present when something provides thumbnails for saves; saves then wait up to
/// `max_wait_frames` frames for one.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThumbnailCapture {
    /// How many frames a save waits for its thumbnail before it is written without one.
    pub max_wait_frames: u32,
}

impl Default for ThumbnailCapture {
    fn default() -> Self {
        ThumbnailCapture { max_wait_frames: 4 }
    }
}

/// A save has captured the world and would like a thumbnail (triggered only while a
/// [`ThumbnailCapture`] resource exists).
#[derive(Event, Clone, Debug)]
pub struct ThumbnailWanted {
    /// The slot being saved (`None` for the autosave ring, which picks its slot later).
    pub slot: Option<SlotId>,
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
}

/// What a waiting save should do now.
pub(crate) enum WaitState {
    /// Keep waiting.
    Pending,
    /// Write now, with this thumbnail if one arrived.
    Done(Option<Vec<u8>>),
}

impl ThumbnailWait {
    /// A new ticket and the wait that ends after `max_wait_frames` calls to [`Self::poll`].
    pub(crate) fn new(max_wait_frames: u32) -> (ThumbnailTicket, Self) {
        let (sender, receiver) = sync_channel(1);
        let wait = ThumbnailWait {
            receiver: Mutex::new(receiver),
            frames_left: max_wait_frames,
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
            Err(TryRecvError::Empty) if self.frames_left == 0 => {
                debug!("keepsake: thumbnail did not arrive in time; saving without it");
                WaitState::Done(None)
            }
            Err(TryRecvError::Empty) => {
                self.frames_left -= 1;
                WaitState::Pending
            }
        }
    }
}
