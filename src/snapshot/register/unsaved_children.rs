//! Saved entities whose children a save leaves out. `ChildOf` is saved with the entities that
//! carry it, so a child comes back under its loaded parent only when the child is saved too.
//! A load that keeps the parent in place leaves its unsaved children where they are; one that
//! spawns the parent again (a new session, [`LoadMode::Respawn`](crate::snapshot::LoadMode),
//! a parent despawned since the save) despawns the live parent with its children and brings it
//! back without them: a score text without its number span, a health bar without its fill.
//!
//! Not counted: the children Bevy spawns itself under a world asset's root (a glTF scene,
//! spawned again after a load), and children carrying a component the game declares rebuilt
//! ([`rebuilt_after_load`](crate::snapshot::SaveableAppExt::rebuilt_after_load)): the game
//! spawns those again itself.
//!
//! Unlike the components check, this walks entities: those of the saved archetypes that have
//! children, and their children.

use super::bevy_types::{required_in, spawning_children};
use super::registry::SaveRegistry;
use super::unsaved::{Coverage, short_type_name};
use bevy::ecs::archetype::{Archetype, ArchetypeId};
use bevy::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Children that saves leave out, of the saved entities with the same saved types.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct UnsavedChildren {
    /// The saved types of the parents (short names, sorted, `Saveable` and `ChildOf` aside).
    pub parent_types: Vec<String>,
    /// How many saved entities with those types have children that saves leave out.
    pub parents: usize,
    /// How many such children, those parents' together.
    pub children: usize,
    /// The children's own types, which tell what they are (short names, sorted: the types
    /// that no other type on the child requires and Bevy does not make, `ChildOf` aside;
    /// types without `Reflect` are not named).
    pub child_types: Vec<String>,
}

/// Saved entities whose children saves leave out (neither `Saveable` nor matched by the save
/// filter), grouped by the parents' saved types. A load that spawns such a parent again brings
/// it back without those children. Empty when the world has no save registry.
///
/// The plugin warns of them at the first save that meets each kind of parent; a game's test
/// can assert that its world has none.
pub fn unsaved_children(world: &World) -> Vec<UnsavedChildren> {
    let (Some(registry), Some(types)) = (
        world.get_resource::<SaveRegistry>(),
        world.get_resource::<AppTypeRegistry>(),
    ) else {
        return Vec::new();
    };
    let Some(children) = world.component_id::<Children>() else {
        return Vec::new();
    };
    let types = types.read();
    let coverage = Coverage::new(world, registry, &types);
    let saved = coverage.saved_archetypes(registry);
    let walk = Walk {
        world,
        coverage: &coverage,
        saved: saved.iter().map(|archetype| archetype.id()).collect(),
    };
    let spawned_by_bevy = spawning_children(world, &types);
    let mut groups: BTreeMap<Vec<String>, Group> = BTreeMap::new();
    let parents = (saved.iter()).filter(|archetype| {
        archetype.contains(children) && !spawned_by_bevy.iter().any(|&id| archetype.contains(id))
    });
    for archetype in parents {
        walk.parents_in(archetype, &mut groups);
    }
    (groups.into_iter())
        .map(|(parent_types, group)| UnsavedChildren {
            parent_types,
            parents: group.parents,
            children: group.children,
            child_types: group.child_types.into_iter().collect(),
        })
        .collect()
}

/// One kind of parent's count.
#[derive(Default)]
struct Group {
    parents: usize,
    children: usize,
    child_types: BTreeSet<String>,
}

/// What the walk reads: the world, and which archetypes saves hold.
struct Walk<'a, 'w> {
    world: &'w World,
    coverage: &'a Coverage<'w>,
    saved: HashSet<ArchetypeId>,
}

impl<'w> Walk<'_, 'w> {
    /// Counts the entities of `archetype` (saved, with children) that have unsaved children.
    fn parents_in(&self, archetype: &Archetype, groups: &mut BTreeMap<Vec<String>, Group>) {
        let mut parent_types = self.coverage.saved_names(archetype);
        parent_types.sort();
        for parent in archetype.entities() {
            let left_out = self.left_out_children(parent.id());
            if left_out.is_empty() {
                continue;
            }
            let group = groups.entry(parent_types.clone()).or_default();
            group.parents += 1;
            group.children += left_out.len();
            for child in left_out {
                group.child_types.extend(self.own_types(child));
            }
        }
    }

    /// The archetypes of `parent`'s children that saves leave out and the game does not
    /// declare rebuilt.
    fn left_out_children(&self, parent: Entity) -> Vec<&'w Archetype> {
        let Some(children) = self.world.get::<Children>(parent) else {
            return Vec::new();
        };
        (children.iter())
            .filter_map(|child| self.world.get_entity(child).ok())
            .filter_map(|child| self.world.archetypes().get(child.archetype().id()))
            .filter(|archetype| !self.saved.contains(&archetype.id()))
            .filter(|archetype| !(self.coverage.rebuilt.iter()).any(|&id| archetype.contains(id)))
            .collect()
    }

    /// The short names of the types of `archetype` that no other type of it requires
    /// (`TextSpan`, not the `LineHeight` it requires) and Bevy does not make (the UI target
    /// it propagates), `ChildOf` aside.
    fn own_types(&self, archetype: &Archetype) -> Vec<String> {
        let required = required_in(self.world, archetype);
        (archetype.iter_components())
            .filter(|id| !required.contains(id) && !self.coverage.made.lists(*id))
            .filter_map(|id| self.coverage.type_path(id))
            .map(|path| short_type_name(&path))
            .filter(|name| name != "ChildOf")
            .collect()
    }
}
