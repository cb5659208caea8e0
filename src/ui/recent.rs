//! The newest picture of the game, which every save takes at once (see
//! [`crate::plugin::thumbnail`] for why a save never waits for a screenshot). Plain data,
//! tested without rendering.
//!
//! Screenshots are numbered as they are asked for and arrive out of order (each is encoded on
//! the task pool), so a picture is kept only when it is newer than the one held; and a load
//! (or a rewind) replaces the world, so pictures asked for before it are refused even when they arrive after
//! it: a save must never carry a picture of a world it does not hold.

use std::sync::Arc;

/// See the [module docs](self).
#[derive(Default)]
pub(crate) struct RecentPicture {
    /// The number of the last screenshot asked for.
    asked: u64,
    /// Screenshots numbered below this were asked for before the last load.
    valid_from: u64,
    /// The newest picture delivered, with its number.
    picture: Option<(u64, Arc<Vec<u8>>)>,
}

impl RecentPicture {
    /// A screenshot is about to be asked for; returns its number, for [`Self::deliver`].
    pub(crate) fn begin(&mut self) -> u64 {
        self.asked += 1;
        self.asked
    }

    /// Screenshot `number` is encoded: kept unless a newer one is held, or a load came after
    /// it was asked for.
    pub(crate) fn deliver(&mut self, number: u64, png: Vec<u8>) {
        let newer = self.picture.as_ref().is_none_or(|(held, _)| *held < number);
        if number >= self.valid_from && newer {
            self.picture = Some((number, Arc::new(png)));
        }
    }

    /// A load replaced the world: the picture held, and every one still being taken, show a
    /// world that is gone.
    pub(crate) fn invalidate(&mut self) {
        self.valid_from = self.asked + 1;
        self.picture = None;
    }

    /// The newest picture, if any.
    pub(crate) fn picture(&self) -> Option<Arc<Vec<u8>>> {
        self.picture.as_ref().map(|(_, png)| Arc::clone(png))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(recent: &RecentPicture) -> Option<Vec<u8>> {
        recent.picture().map(|png| png.to_vec())
    }

    #[test]
    fn the_newest_picture_wins_whatever_order_they_arrive_in() {
        let mut recent = RecentPicture::default();
        assert_eq!(shown(&recent), None, "nothing before the first picture");
        let first = recent.begin();
        let second = recent.begin();
        recent.deliver(second, b"second".to_vec());
        recent.deliver(first, b"first".to_vec());
        assert_eq!(shown(&recent).as_deref(), Some(&b"second"[..]));
        let third = recent.begin();
        recent.deliver(third, b"third".to_vec());
        assert_eq!(shown(&recent).as_deref(), Some(&b"third"[..]));
    }

    #[test]
    fn a_load_refuses_pictures_of_the_world_before_it() {
        let mut recent = RecentPicture::default();
        let held = recent.begin();
        recent.deliver(held, b"before".to_vec());
        let in_flight = recent.begin();
        recent.invalidate();
        assert_eq!(shown(&recent), None, "the held picture shows a world gone");
        recent.deliver(in_flight, b"before, late".to_vec());
        assert_eq!(shown(&recent), None, "asked for before the load");
        let after = recent.begin();
        recent.deliver(after, b"after".to_vec());
        assert_eq!(shown(&recent).as_deref(), Some(&b"after"[..]));
    }

    /// Every script of six steps (ask, deliver the oldest or the newest picture still being
    /// taken, load): the picture held is always the newest delivered among those asked for
    /// after the last load.
    #[test]
    fn every_interleaving_keeps_the_newest_picture_asked_for_since_the_last_load() {
        const STEPS: u32 = 6;
        for script in 0..4u32.pow(STEPS) {
            let mut recent = RecentPicture::default();
            let (mut asked, mut in_flight, mut delivered) = (0u64, Vec::new(), Vec::new());
            let mut asked_before_last_load = 0;
            for step in 0..STEPS {
                let delivery = match script / 4u32.pow(step) % 4 {
                    0 => {
                        asked = recent.begin();
                        in_flight.push(asked);
                        None
                    }
                    1 if !in_flight.is_empty() => Some(in_flight.remove(0)),
                    2 => in_flight.pop(),
                    3 => {
                        recent.invalidate();
                        asked_before_last_load = asked;
                        None
                    }
                    _ => None,
                };
                if let Some(number) = delivery {
                    recent.deliver(number, number.to_le_bytes().to_vec());
                    delivered.push(number);
                }
            }
            let expected = delivered
                .iter()
                .filter(|&&number| number > asked_before_last_load)
                .max()
                .copied();
            let held = recent
                .picture()
                .map(|png| u64::from_le_bytes(png[..].try_into().unwrap()));
            assert_eq!(held, expected, "script {script}");
        }
    }
}
