//! The picture of the game behind the open menu. While the menu is open the window shows the
//! menu, so a screenshot is taken as the menu opens (before it is first drawn), and every save
//! made while the menu is open gets that picture. Plain data, tested without rendering.

use crate::plugin::ThumbnailTicket;
use std::sync::Arc;

/// The backdrop's state; see the [module docs](self).
#[derive(Default)]
pub(crate) struct Backdrop {
    /// Counts the pictures asked for; a delivery for an older one is not kept (the menu closed,
    /// or a load changed the world, since it was taken).
    current: u64,
    /// A picture for `current` is being taken or encoded.
    pending: bool,
    /// Taking the picture for `current` failed; do not try again until the next opening.
    failed: bool,
    /// The picture for `current`.
    picture: Option<Arc<Vec<u8>>>,
    /// Saves waiting for a picture, with the number of the picture they wait for.
    waiting: Vec<(u64, ThumbnailTicket)>,
}

impl Backdrop {
    /// Whether the game behind the menu has a picture (taken, being taken, or failed).
    pub(crate) fn is_current(&self) -> bool {
        self.pending || self.failed || self.picture.is_some()
    }

    /// A picture is about to be taken; returns its number, for [`Backdrop::deliver`].
    pub(crate) fn begin(&mut self) -> u64 {
        self.current += 1;
        self.pending = true;
        self.failed = false;
        self.picture = None;
        self.current
    }

    /// The picture no longer shows the game (the menu closed, or a load changed the world).
    /// Saves already waiting still get the picture they were promised.
    pub(crate) fn invalidate(&mut self) {
        if self.is_current() {
            self.current += 1;
            self.pending = false;
            self.failed = false;
            self.picture = None;
        }
    }

    /// A save made while the menu is open wants a picture: it gets the backdrop now, or when
    /// it is ready. Returns the ticket when there is no backdrop to give (the caller takes a
    /// picture itself).
    pub(crate) fn request(&mut self, ticket: ThumbnailTicket) -> Option<ThumbnailTicket> {
        if let Some(picture) = &self.picture {
            ticket.fulfil(picture.as_ref().clone());
            None
        } else if self.pending {
            self.waiting.push((self.current, ticket));
            None
        } else {
            Some(ticket)
        }
    }

    /// Picture `number` is encoded (`None`: it could not be taken). Saves waiting for it get it;
    /// it is kept for later saves if it is still the current one.
    pub(crate) fn deliver(&mut self, number: u64, png: Option<Vec<u8>>) {
        let (waiting, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(wanted, _)| *wanted == number);
        self.waiting = later;
        if let Some(png) = &png {
            for (_, ticket) in waiting {
                ticket.fulfil(png.clone());
            }
        } // else the tickets drop here, and those saves go ahead without a picture
        if number == self.current {
            self.pending = false;
            self.failed = png.is_none();
            self.picture = png.map(Arc::new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::ThumbnailCapture;
    use crate::plugin::thumbnail::{ThumbnailWait, WaitState};
    use std::time::Duration;

    /// A save waiting up to 1000 frames, so only a delivery or a dropped ticket ends its wait.
    fn save() -> (ThumbnailTicket, ThumbnailWait) {
        ThumbnailWait::new(ThumbnailCapture {
            max_wait_frames: 1000,
            max_wait_time: Duration::ZERO,
        })
    }

    fn outcome(wait: &mut ThumbnailWait) -> Option<Option<Vec<u8>>> {
        match wait.poll() {
            WaitState::Pending => None,
            WaitState::Done(picture) => Some(picture),
        }
    }

    #[test]
    fn saves_wait_for_the_pending_picture_and_later_ones_get_it_at_once() {
        let mut backdrop = Backdrop::default();
        let number = backdrop.begin();
        let (ticket, mut first) = save();
        assert!(backdrop.request(ticket).is_none());
        assert_eq!(outcome(&mut first), None, "waits");
        backdrop.deliver(number, Some(b"game".to_vec()));
        assert_eq!(outcome(&mut first), Some(Some(b"game".to_vec())));
        let (ticket, mut second) = save();
        assert!(backdrop.request(ticket).is_none());
        assert_eq!(outcome(&mut second), Some(Some(b"game".to_vec())));
    }

    #[test]
    fn a_closed_menu_keeps_its_promise_but_not_its_picture() {
        let mut backdrop = Backdrop::default();
        let number = backdrop.begin();
        let (ticket, mut waiting) = save();
        assert!(backdrop.request(ticket).is_none());
        backdrop.invalidate();
        backdrop.deliver(number, Some(b"before".to_vec()));
        assert_eq!(outcome(&mut waiting), Some(Some(b"before".to_vec())));
        assert!(!backdrop.is_current());
        let (ticket, _) = save();
        assert!(
            backdrop.request(ticket).is_some(),
            "no stale picture for a save after the menu closed"
        );
    }

    #[test]
    fn a_reopened_menu_never_gets_the_previous_opening_picture() {
        let mut backdrop = Backdrop::default();
        let first = backdrop.begin();
        backdrop.invalidate();
        let second = backdrop.begin();
        let (ticket, mut waiting) = save();
        assert!(backdrop.request(ticket).is_none());
        backdrop.deliver(first, Some(b"old".to_vec()));
        assert_eq!(
            outcome(&mut waiting),
            None,
            "still waits for the new picture"
        );
        backdrop.deliver(second, Some(b"new".to_vec()));
        assert_eq!(outcome(&mut waiting), Some(Some(b"new".to_vec())));
    }

    #[test]
    fn a_failed_picture_releases_the_waiting_saves_and_is_not_retaken() {
        let mut backdrop = Backdrop::default();
        let number = backdrop.begin();
        let (ticket, mut waiting) = save();
        assert!(backdrop.request(ticket).is_none());
        backdrop.deliver(number, None);
        assert_eq!(outcome(&mut waiting), Some(None), "goes ahead without");
        assert!(
            backdrop.is_current(),
            "no retake loop while the menu stays open"
        );
        let (ticket, _) = save();
        assert!(backdrop.request(ticket).is_some());
    }

    #[test]
    fn without_a_backdrop_the_caller_takes_the_picture() {
        let mut backdrop = Backdrop::default();
        assert!(!backdrop.is_current());
        let (ticket, _) = save();
        assert!(backdrop.request(ticket).is_some());
    }
}
