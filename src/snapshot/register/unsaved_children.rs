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
//! Unlike the components check, this walks entities: those saves leave out that have a parent
//! (see [`unsaved_children_except`] for why from that side).

use super::bevy_types::{required_in, spawning_children};
use super::registry::SaveRegistry;
use super::unsaved::{Coverage, short_type_name};
use bevy::ecs::archetype::{Archetype, ArchetypeId};
use bevy::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
    unsaved_children_except(world, &HashSet::new())
}

/// [`unsaved_children`] but for the kinds of parent in `known` (their sorted saved types): what
/// a save has not warned about yet.
///
/// Why it walks from the children: a save runs this on the main thread, and a world whose
/// saved entities have children that are saved too (a deep hierarchy) would otherwise walk
/// every child of every saved parent at every save. From the other side it walks only the
/// entities saves leave out that have a parent, and nothing at all once every kind of saved
/// parent is `known` (a review measured the parent-side walk at most of the main thread's part
/// of a save of 10k units with one unsaved child each, at every save).
pub(crate) fn unsaved_children_except(
    world: &World,
    known: &HashSet<Vec<String>>,
) -> Vec<UnsavedChildren> {
    let (Some(registry), Some(types)) = (
        world.get_resource::<SaveRegistry>(),
        world.get_resource::<AppTypeRegistry>(),
    ) else {
        return Vec::new();
    };
    let (Some(children), Some(child_of)) = (
        world.component_id::<Children>(),
        world.component_id::<ChildOf>(),
    ) else {
        return Vec::new();
    };
    let types = types.read();
    let coverage = Coverage::new(world, registry, &types);
    let saved = coverage.saved_archetypes(registry);
    let spawned_by_bevy = spawning_children(world, &types);
    // The kind of every saved parent not known yet, by archetype.
    let parents: HashMap<ArchetypeId, Vec<String>> = (saved.iter())
        .filter(|archetype| {
            archetype.contains(children)
                && !spawned_by_bevy.iter().any(|&id| archetype.contains(id))
        })
        .map(|archetype| (archetype.id(), sorted(coverage.saved_names(archetype))))
        .filter(|(_, kind)| !known.contains(kind))
        .collect();
    if parents.is_empty() {
        return Vec::new();
    }
    let walk = Walk {
        world,
        coverage: &coverage,
        parents,
    };
    let saved: HashSet<ArchetypeId> = saved.iter().map(|archetype| archetype.id()).collect();
    let mut groups: BTreeMap<Vec<String>, Group> = BTreeMap::new();
    let left_out = (world.archetypes().iter()).filter(|archetype| {
        archetype.contains(child_of)
            && !saved.contains(&archetype.id())
            && !(coverage.rebuilt.iter()).any(|&id| archetype.contains(id))
    });
    for archetype in left_out {
        walk.children_in(archetype, &mut groups);
    }
    (groups.into_iter())
        .map(|(parent_types, group)| UnsavedChildren {
            parent_types,
            parents: group.parents.len(),
            children: group.children,
            child_types: group.child_types.into_iter().collect(),
        })
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// One kind of parent's count.
#[derive(Default)]
struct Group {
    parents: HashSet<Entity>,
    children: usize,
    child_types: BTreeSet<String>,
}

/// What the walk reads: the world, and the kinds of the saved parents it counts, by archetype.
struct Walk<'a, 'w> {
    world: &'w World,
    coverage: &'a Coverage<'w>,
    parents: HashMap<ArchetypeId, Vec<String>>,
}

impl Walk<'_, '_> {
    /// Counts the entities of `archetype` (left out by saves, with a parent, not declared
    /// rebuilt) whose parent is a saved entity of a kind counted.
    fn children_in(&self, archetype: &Archetype, groups: &mut BTreeMap<Vec<String>, Group>) {
        let mut own_types = None;
        for child in archetype.entities() {
            let Some(child_of) = self.world.get::<ChildOf>(child.id()) else {
                continue;
            };
            let parent = child_of.parent();
            let Some(kind) = (self.world.entities().get_spawned(parent).ok())
                .and_then(|location| self.parents.get(&location.archetype_id))
            else {
                continue;
            };
            let group = groups.entry(kind.clone()).or_default();
            group.parents.insert(parent);
            group.children += 1;
            let own = own_types.get_or_insert_with(|| self.own_types(archetype));
            group.child_types.extend(own.iter().cloned());
        }
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
