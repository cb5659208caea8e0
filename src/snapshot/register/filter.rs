//! Which entities a save captures: the [`Saveable`] marker and the [`SaveFilter`], resolved
//! against a world's component ids to walk the matching archetypes. A replacing load despawns
//! the same entities before spawning the saved ones.

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::resource::IS_RESOURCE;
use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use std::any::TypeId;

/// Marks an entity to be saved (with the default [`SaveFilter`]).
///
/// Saved entities keep the marker when loaded, so they are saved again next time and replaced
/// by the next load.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::Saveable;
///
/// # let mut world = World::new();
/// world.spawn((Saveable, Name::new("Player")));
/// ```
#[derive(
    Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize,
)]
#[reflect(Component, Default, Serialize, Deserialize)]
// Saves store the marker under its type path: it stays the one of version 0.1, whatever module
// the type lives in.
#[type_path = "bevy_keepsake::snapshot::registry"]
pub struct Saveable;

/// Which entities a save captures (and a replacing load despawns): those that have every
/// `require`d component and none of the `exclude`d ones. Resource entities and disabled entities
/// are never captured.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{SaveFilter, Saveable};
///
/// #[derive(Component)]
/// struct Ephemeral;
///
/// let filter = SaveFilter::default().without::<Ephemeral>();
/// assert!(filter.requires::<Saveable>());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveFilter {
    require: Vec<FilterComponent>,
    exclude: Vec<FilterComponent>,
}

/// A component a [`SaveFilter`] names: its type, and its name for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FilterComponent {
    id: TypeId,
    name: &'static str,
}

impl FilterComponent {
    fn of<C: Component>() -> Self {
        FilterComponent {
            id: TypeId::of::<C>(),
            name: std::any::type_name::<C>(),
        }
    }
}

impl Default for SaveFilter {
    /// Entities with the [`Saveable`] marker.
    fn default() -> Self {
        SaveFilter::with_component::<Saveable>()
    }
}

impl SaveFilter {
    /// A filter that requires component `C` (and nothing else).
    ///
    /// `C` must be registered for saving (see
    /// [`register_saveable`](crate::snapshot::SaveableAppExt::register_saveable)): loaded
    /// entities get only their saved components, so without it they would no longer match and
    /// the next save would hold none of them. A save refuses such a filter, naming `C`, and
    /// `KeepsakePlugins` refuses it when the app starts.
    pub fn with_component<C: Component>() -> Self {
        SaveFilter {
            require: vec![FilterComponent::of::<C>()],
            exclude: Vec::new(),
        }
    }

    /// Also requires component `C` (which must be registered for saving, as for
    /// [`with_component`](Self::with_component)).
    #[must_use]
    pub fn with<C: Component>(mut self) -> Self {
        self.require.push(FilterComponent::of::<C>());
        self
    }

    /// Skips entities that have component `C`.
    #[must_use]
    pub fn without<C: Component>(mut self) -> Self {
        self.exclude.push(FilterComponent::of::<C>());
        self
    }

    /// Whether the filter requires `C`.
    pub fn requires<C: Component>(&self) -> bool {
        self.require.iter().any(|c| c.id == TypeId::of::<C>())
    }

    /// The first required component `is_saved` says is not saved, by name.
    pub(super) fn first_unsaved(&self, is_saved: impl Fn(TypeId) -> bool) -> Option<&'static str> {
        let unsaved = self.require.iter().find(|c| !is_saved(c.id));
        unsaved.map(|c| c.name)
    }

    /// Resolves the filter against a world's components: `None` when a required component was
    /// never registered (so no entity can match).
    pub(crate) fn resolve(&self, world: &World) -> Option<ResolvedFilter> {
        let components = world.components();
        let require = self
            .require
            .iter()
            .map(|c| components.get_id(c.id))
            .collect::<Option<Vec<_>>>()?;
        let mut exclude: Vec<ComponentId> = self
            .exclude
            .iter()
            .filter_map(|c| components.get_id(c.id))
            .collect();
        exclude.push(IS_RESOURCE);
        exclude.extend(components.get_id(TypeId::of::<Disabled>()));
        Some(ResolvedFilter { require, exclude })
    }
}

/// A [`SaveFilter`] as component ids of one world.
pub(crate) struct ResolvedFilter {
    require: Vec<ComponentId>,
    exclude: Vec<ComponentId>,
}

impl ResolvedFilter {
    /// The entities that match, archetype by archetype, and those archetypes.
    pub(crate) fn matching_entities(&self, world: &World) -> (Vec<Entity>, Vec<ArchetypeId>) {
        let archetypes = self.matching_archetypes(world);
        let entities = (archetypes.iter())
            .filter_map(|&id| world.archetypes().get(id))
            .flat_map(|archetype| archetype.entities().iter().map(|entity| entity.id()))
            .collect();
        (entities, archetypes)
    }

    /// The non-empty archetypes whose entities match.
    pub(crate) fn matching_archetypes(&self, world: &World) -> Vec<ArchetypeId> {
        (world.archetypes().iter())
            .filter(|archetype| {
                !archetype.is_empty()
                    && self.require.iter().all(|&id| archetype.contains(id))
                    && !self.exclude.iter().any(|&id| archetype.contains(id))
            })
            .map(|archetype| archetype.id())
            .collect()
    }
}

#[cfg(test)]
mod stable_path_tests {
    use super::*;
    use bevy::reflect::TypePath;

    #[test]
    fn the_marker_keeps_the_type_path_saves_store_it_under() {
        assert_eq!(
            Saveable::type_path(),
            "bevy_keepsake::snapshot::registry::Saveable"
        );
    }
}
