//! The thumbnail hook: a save takes the picture it is handed at once, and never waits for one.
//!
//! The plugin itself never renders. When a [`ThumbnailCapture`] resource is present, every save
//! triggers [`ThumbnailWanted`] right after capturing the world; the observers run before
//! `trigger` returns, and whatever PNG one of them hands over through the [`ThumbnailTicket`]
//! by then goes into the save. The write starts in the same frame, with or without a picture:
//! a ticket fulfilled later finds the save gone ([`ThumbnailTicket::fulfil`] returns `false`).
//!
//! **Why the picture is one the provider already has.** A screenshot of the window arrives
//! frames after it is asked for; at a low frame rate (a 3D game on software rendering) waiting
//! for it held every save back by seconds, and a save that waits is a save a crash or a
//! closed window can still lose. A picture that joined the save later would have to be a
//! second file or a rewrite of the save's own, which is sealed with its metadata, synced to
//! the cloud and trusted as immutable bytes. So a provider keeps a recent picture of the game
//! ready and hands that over: see [`ThumbnailCapture`] for a game's own provider.

use super::job::{SaveReason, SaveTarget};
use bevy::prelude::*;
use std::sync::mpsc::{SyncSender, sync_channel};

/// Present when something provides thumbnails for saves: each save then triggers
/// [`ThumbnailWanted`] and takes the picture handed over before the trigger returns. A save
/// never waits for a picture (it is written in the frame it is asked for), so a provider keeps
/// a recent one ready. The `save_menu` feature's `SaveThumbnailsPlugin` (in `ui`) does so from
/// window screenshots
/// (taken every few seconds of play, at every save for the next one, as its menu opens and
/// after every load); a game can provide its own instead:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::{ThumbnailCapture, ThumbnailWanted};
///
/// /// The newest picture of the game, encoded as PNG (kept fresh by the game's own camera).
/// #[derive(Resource, Default)]
/// struct LatestPicture(Option<Vec<u8>>);
///
/// fn provide_thumbnails(app: &mut App) {
///     app.insert_resource(ThumbnailCapture)
///         .init_resource::<LatestPicture>()
///         .add_observer(|wanted: On<ThumbnailWanted>, latest: Res<LatestPicture>| {
///             if let Some(png) = &latest.0 {
///                 wanted.ticket.clone().fulfil(png.clone());
///             }
///         });
/// }
/// # provide_thumbnails(&mut App::new());
/// ```
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct ThumbnailCapture;

/// A save has captured the world and would like a thumbnail (triggered only while a
/// [`ThumbnailCapture`] resource exists). Answer from the observer itself: the save is written
/// as soon as the observers return.
#[derive(Event, Clone, Debug)]
pub struct ThumbnailWanted {
    /// Where the save goes.
    pub target: SaveTarget,
    /// Why it is made. An exit save ([`SaveReason::Exit`]) is written in the app's last
    /// frame: no frame is drawn after it, so a provider should not count on taking another
    /// picture for the next save.
    pub reason: SaveReason,
    /// Hand the PNG bytes over with this, before the observer returns.
    pub ticket: ThumbnailTicket,
}

/// The way into the save that asked for a thumbnail, open only while [`ThumbnailWanted`]'s
/// observers run.
#[derive(Clone, Debug)]
pub struct ThumbnailTicket(SyncSender<Vec<u8>>);

impl ThumbnailTicket {
    /// Hands over the encoded thumbnail (PNG). Returns `false` when the save no longer takes
    /// one: the observers have returned and the save is being written, or a thumbnail was
    /// already handed over. A picture over the store's limit (`Limits::max_thumbnail`, 8 MiB
    /// by default) is left out of the save, with a warning; the save is written without it.
    pub fn fulfil(self, png: Vec<u8>) -> bool {
        self.0.try_send(png).is_ok()
    }
}

/// Asks the providers for a thumbnail and returns the one handed over while they ran, if
/// any; `None` at once when no [`ThumbnailCapture`] resource exists. Never waits: a provider
/// that keeps the ticket for later, or hands over nothing, leaves the save without a picture,
/// exactly as it would be without a provider.
///
/// A picture over `max_bytes` (the store's `Limits::max_thumbnail`, 8 MiB by default) is left
/// out with a warning: the picture is decoration, and taking it would fail the whole save.
pub(crate) fn ask(
    world: &mut World,
    target: SaveTarget,
    reason: SaveReason,
    max_bytes: u32,
) -> Option<Vec<u8>> {
    let png = handed_over(world, target, reason)?;
    if png.len() as u64 > u64::from(max_bytes) {
        warn!(
            "keepsake: the thumbnail handed over for this save is {} bytes, over the limit of              {max_bytes} (Limits::max_thumbnail); the save is written without it. Hand over a              smaller picture (SaveThumbnailsPlugin's are 320x180)",
            png.len()
        );
        return None;
    }
    Some(png)
}

/// The picture a provider handed over while [`ThumbnailWanted`]'s observers ran.
fn handed_over(world: &mut World, target: SaveTarget, reason: SaveReason) -> Option<Vec<u8>> {
    world.get_resource::<ThumbnailCapture>()?;
    let (sender, receiver) = sync_channel(1);
    world.trigger(ThumbnailWanted {
        target,
        reason,
        ticket: ThumbnailTicket(sender),
    });
    // The receiver drops on return, so a later `fulfil` reports that the save has gone.
    receiver.try_recv().ok()
}
