//! Keys for entities a save does not hold but saved entities reference: the [`LevelKey`]
//! component, which entities count as keyed ([`LevelKeys`]), and finding them in a world.
//! A capture writes each keyed unsaved entity's id and key in the blob's key table; a load
//! maps those ids to the live entities with the same keys.

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use std::fmt;

/// Names an entity that is not saved (level geometry, a door, a scene root, a spawn point) so
/// that saved entities can reference it: a saved entity's `ChildOf` or `Entity` field pointing
/// at it is written by key, and a load points it at the live entity with the same key.
///
/// Keys must be unique in a world: a save with two entities of one key fails, naming both. A
/// number key and a text key with the same digits are the same key.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{LevelKey, Saveable};
///
/// # let mut world = World::new();
/// // The level (not saved) spawns its root with a key; saved entities may live under it.
/// let level = world.spawn((LevelKey::new("level/cave"), Transform::default())).id();
/// world.spawn((Saveable, ChildOf(level)));
/// assert_eq!(LevelKey::from(7u64).as_str(), "7");
/// ```
#[derive(Component, Reflect, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[reflect(Component, Clone, Debug, PartialEq, Hash)]
pub struct LevelKey(String);

impl LevelKey {
    /// A key from text, such as `"level/door-3"`.
    pub fn new(key: impl Into<String>) -> Self {
        LevelKey(key.into())
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for LevelKey {
    fn from(key: &str) -> Self {
        LevelKey::new(key)
    }
}

impl From<String> for LevelKey {
    fn from(key: String) -> Self {
        LevelKey(key)
    }
}

impl From<u64> for LevelKey {
    /// The number in decimal.
    fn from(key: u64) -> Self {
        LevelKey(key.to_string())
    }
}

impl fmt::Display for LevelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// Which entities saved values may reference by key (set with
/// [`use_names_as_level_keys`](crate::snapshot::SaveableAppExt::use_names_as_level_keys)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LevelKeys {
    /// Entities with a [`LevelKey`].
    #[default]
    LevelKeyOnly,
    /// Entities with a [`LevelKey`], and unsaved entities with a [`Name`] but no `LevelKey`,
    /// keyed by their name where it is unique (a name several entities share, such as
    /// `"Torch"`, keys none of them; give those a `LevelKey`).
    LevelKeyOrName,
}

/// A keyed entity of a world, and its key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keyed<'w> {
    pub(crate) entity: Entity,
    pub(crate) key: &'w str,
    /// Keyed by its [`Name`] rather than a [`LevelKey`].
    pub(crate) by_name: bool,
}

impl LevelKeys {
    /// Every keyed entity of `world`, in archetype order: those with a [`LevelKey`], and with
    /// [`LevelKeys::LevelKeyOrName`] those with a [`Name`] in the archetypes `named` admits
    /// (a capture keys only unsaved entities by name: saved ones are often named alike).
    pub(crate) fn collect(
        self,
        world: &World,
        named: impl Fn(ArchetypeId) -> bool,
    ) -> Vec<Keyed<'_>> {
        let key_id = world.component_id::<LevelKey>();
        let mut keyed = Vec::new();
        for entity in entities_with(world, key_id, None, |_| true) {
            if let Some(key) = world.get::<LevelKey>(entity) {
                keyed.push(Keyed {
                    entity,
                    key: key.as_str(),
                    by_name: false,
                });
            }
        }
        if self == LevelKeys::LevelKeyOrName {
            let name_id = world.component_id::<Name>();
            for entity in entities_with(world, name_id, key_id, &named) {
                if let Some(name) = world.get::<Name>(entity) {
                    keyed.push(Keyed {
                        entity,
                        key: name.as_str(),
                        by_name: true,
                    });
                }
            }
        }
        keyed
    }
}

/// The entities of the archetypes `admit` admits that have `with` and not `without` (none
/// when `with` was never registered).
fn entities_with<'w>(
    world: &'w World,
    with: Option<ComponentId>,
    without: Option<ComponentId>,
    admit: impl Fn(ArchetypeId) -> bool + 'w,
) -> impl Iterator<Item = Entity> + 'w {
    world
        .archetypes()
        .iter()
        .filter(move |archetype| {
            with.is_some_and(|id| archetype.contains(id))
                && !without.is_some_and(|id| archetype.contains(id))
                && admit(archetype.id())
        })
        .flat_map(|archetype| archetype.entities().iter().map(|entity| entity.id()))
}
