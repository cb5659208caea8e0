//! [`WorldRestored`]: the one place a game rebuilds what it derives from saved data, after
//! loads and rewinds alike.
//!
//! A save holds the game's state; much of what is on screen is derived from it and not saved:
//! UI built from a resource, the tiles of a board, meshes and materials made at run time. After
//! a load or a rewind those must follow the restored state. Two observers do it:
//!
//! - **per entity, `On<Add<T>>`**: an observer on a saved component gives each entity what it
//!   derives from it (a mesh made with `Assets::add`, a material), with `insert_if_new`. It runs
//!   for entities spawned in play and for those a load or a rewind spawns, before the load's
//!   report is made, so what it puts back does not count as lost;
//! - **from saved resources, `On<WorldRestored>`**: an observer rebuilds what follows from the
//!   restored resources (a board's tiles, a score's text). It runs once per load and per
//!   rewind, in the frame they land, after [`LoadCompleted`](super::LoadCompleted) /
//!   [`RewindCompleted`](super::RewindCompleted), which carry the details (the entity map,
//!   the missing components, the time taken): `WorldRestored` says only which it was.
//!
//! Declare the components these observers put back with
//! [`rebuilt_after_load`](crate::snapshot::SaveableAppExt::rebuilt_after_load), so the plugin
//! does not warn that saves leave them out. `examples/after_load.rs` shows both.

use super::events::{LoadCompleted, report};
use crate::SlotId;
use bevy::prelude::*;

/// The world was restored from a save or a rewind point: the saved entities and resources are
/// the restored ones, and the saved `States` are entered, with no change of them pending (see
/// [`register_saveable_state`](crate::snapshot::SaveableAppExt::register_saveable_state)).
/// Rebuild here what the game derives from them. An observer event,
/// triggered once, right after [`LoadCompleted`](super::LoadCompleted) or
/// [`RewindCompleted`](super::RewindCompleted); those carry the details (entity map, missing
/// components, time taken), this only says which restore it was.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
///
/// #[derive(Resource, Reflect, Default)]
/// struct Board(Vec<bool>);
/// #[derive(Component)]
/// struct Tile;
///
/// fn rebuild_tiles(_: On<WorldRestored>, board: Res<Board>, tiles: Query<Entity, With<Tile>>, mut commands: Commands) {
///     tiles.iter().for_each(|tile| commands.entity(tile).despawn());
///     for (index, _) in board.0.iter().enumerate().filter(|(_, open)| **open) {
///         commands.spawn((Tile, Transform::from_xyz(index as f32, 0.0, 0.0)));
///     }
/// }
/// # App::new().register_saveable::<Board>().add_observer(rebuild_tiles);
/// ```
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct WorldRestored {
    /// What was restored: the slot loaded or the rewind point gone back to.
    pub from: RestoredFrom,
}

/// A rewind point's number (defined here, below the rewind ring, so what a restore names
/// needs nothing of the ring): the first point of a session is 1, and numbers are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq, Hash)]
pub struct RewindPointId(pub u64);

/// What a [`WorldRestored`] restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub enum RestoredFrom {
    /// A save, loaded from this slot.
    Load(#[reflect(remote = crate::plugin::job::SlotIdReflect)] SlotId),
    /// A rewind point.
    Rewind(RewindPointId),
}

/// Reports [`WorldRestored`] after a load's [`LoadCompleted`].
pub(crate) fn after_load(world: &mut World, loaded: &LoadCompleted) {
    let from = RestoredFrom::Load(loaded.slot);
    report(world, WorldRestored { from });
}
