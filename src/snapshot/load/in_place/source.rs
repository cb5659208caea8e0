//! Where an in-place apply takes the saved values and the saved children's order from: a
//! decoded snapshot (a load: values decoded on the task pool) or a kept one (a rewind point:
//! values decoded from their bytes when written).

use super::delta::ValueRef;
use super::order::SavedChildren;
use bevy::prelude::*;
use std::borrow::Cow;

/// A saved row as [`Source::rows`] lists it: the saved entity's dense index, the value's
/// bytes, and where a decoded value is (`None`: decode the bytes).
pub(super) type SavedRow = (usize, Vec<u8>, Option<ValueRef>);

/// The snapshot an in-place apply restores, as the apply reads it.
pub(super) trait Source {
    /// Takes a value a decoded snapshot holds (each is written once); `None` for what it does
    /// not hold.
    fn take(&mut self, value: ValueRef) -> Option<Box<dyn Reflect>>;

    /// Every saved row of registry entry `entry`'s type (`type_path`); `saved` are the saved
    /// entities, by dense index.
    fn rows(&self, entry: usize, type_path: &str, saved: &[Entity]) -> Vec<SavedRow>;

    /// The saved value of registry entry `entry`'s resource (`type_path`): its bytes, and
    /// where a decoded value is (`None`: decode the bytes); `None` when the snapshot holds
    /// none.
    fn resource(&self, entry: usize, type_path: &str) -> Option<(Vec<u8>, Option<ValueRef>)>;

    /// Each saved parent's saved children, in the saved order.
    fn children(&self) -> Cow<'_, SavedChildren>;
}
