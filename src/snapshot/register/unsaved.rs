//! What saved entities carry that saves leave out: the component types on entities the
//! [`SaveFilter`](super::SaveFilter) matches that are neither registered for saving, nor
//! declared rebuilt by the game
//! ([`rebuilt_after_load`](crate::snapshot::SaveableAppExt::rebuilt_after_load)), nor made
//! by Bevy itself (`bevy_types`). A load brings such entities back without them, so a save that
//! leaves out what the game needs is, to the player, a lost save; the plugin names them in a
//! warning at the first save that meets them and in every
//! [`SaveCompleted`](crate::plugin::SaveCompleted).
//!
//! A load compares too ([`LiveComponents`]): before it, for each set of saved types a live
//! saved entity has (its *signature*: `Saveable`, `Paddle`, `Transform`…), the unsaved types
//! entities with that signature carry; after it, which loaded entities with the same signature
//! lack them. A load into a world with no saved entities (a new session, before the game
//! spawned any) has nothing to compare with; the save's warning is what tells then.
//!
//! # Speed
//!
//! Both walk archetypes, not entities: a world of 100k saved entities in 20 archetypes costs
//! 20 looks at an archetype's component list.

use super::bevy_types::{BevyMade, debug_names_on};
use super::registry::SaveRegistry;
use bevy::ecs::archetype::{Archetype, ArchetypeId};
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A component type on saved entities that saves do not hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Clone, Debug, PartialEq)]
pub struct UnsavedComponent {
    /// Its type path; `None` for a type not registered for reflection, whose name Bevy keeps
    /// only with its `debug` feature.
    pub type_path: Option<String>,
    /// How many entities: the saved entities that carry it (in a save's report), or the loaded
    /// entities that came back without it (in a load's).
    pub entities: usize,
    /// The saved types of those entities (short names, `Saveable` and `ChildOf` aside): which
    /// entities they are, the one clue to a type without a name.
    pub with: Vec<String>,
}

impl UnsavedComponent {
    /// The type's name without its module path (`Sprite`, `MeshMaterial2d<ColorMaterial>`), or
    /// "a type without Reflect".
    pub fn short_name(&self) -> String {
        match &self.type_path {
            Some(path) => short_type_name(path),
            None => "a type without Reflect".to_owned(),
        }
    }
}

/// `a::b::C<d::E>` → `C<E>`.
pub(super) fn short_type_name(path: &str) -> String {
    let mut short = String::with_capacity(path.len());
    let mut segment = String::new();
    for c in path.chars() {
        match c {
            ':' => segment.clear(),
            '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | ';' | '&' => {
                short.push_str(&segment);
                segment.clear();
                short.push(c);
            }
            _ => segment.push(c),
        }
    }
    short.push_str(&segment);
    short
}

/// Entities counted per component, with the saved types they have.
type Counts = BTreeMap<ComponentId, (usize, BTreeSet<String>)>;

/// Sorts each component of saved entities into saved, accounted for, or left out.
pub(super) struct Coverage<'w> {
    world: &'w World,
    types: &'w TypeRegistry,
    /// Registered for saving, and the relationship targets Bevy rebuilds from them.
    saved: Vec<ComponentId>,
    /// Declared rebuilt by the game.
    pub(super) rebuilt: Vec<ComponentId>,
    /// Made by Bevy itself.
    pub(super) made: BevyMade,
}

impl<'w> Coverage<'w> {
    pub(super) fn new(world: &'w World, registry: &SaveRegistry, types: &'w TypeRegistry) -> Self {
        let components = world.components();
        let saved = (registry.entries().iter())
            .filter_map(|entry| components.get_id(entry.ops.type_id))
            .collect();
        let rebuilt = (registry.rebuilt().iter())
            .filter_map(|&type_id| components.get_id(type_id))
            .collect();
        Coverage {
            world,
            types,
            saved,
            rebuilt,
            made: BevyMade::of(world, types),
        }
    }

    /// The archetypes of the entities a save holds (none when the filter names a type the world
    /// never saw).
    pub(super) fn saved_archetypes(&self, registry: &SaveRegistry) -> Vec<&'w Archetype> {
        let Some(filter) = registry.filter().resolve(self.world) else {
            return Vec::new();
        };
        (filter.matching_archetypes(self.world).into_iter())
            .filter_map(|id| self.world.archetypes().get(id))
            .collect()
    }

    /// The archetype's components a save leaves out without anyone putting them back.
    fn unsaved_in(&self, archetype: &Archetype) -> Vec<ComponentId> {
        let made = self.made.made_in(self.world, archetype);
        (archetype.iter_components())
            .filter(|id| {
                !self.saved.contains(id) && !self.rebuilt.contains(id) && !made.contains(id)
            })
            .collect()
    }

    /// The archetype's saved components, sorted: what a load gives back of such an entity.
    fn signature(&self, archetype: &Archetype) -> Vec<ComponentId> {
        let mut saved: Vec<ComponentId> = (archetype.iter_components())
            .filter(|id| self.saved.contains(id))
            .collect();
        saved.sort_unstable();
        saved
    }

    /// The short names of the archetype's saved types, `Saveable` and `ChildOf` aside.
    pub(super) fn saved_names(&self, archetype: &Archetype) -> Vec<String> {
        (archetype.iter_components())
            .filter(|id| self.saved.contains(id))
            .filter_map(|id| self.type_path(id))
            .map(|path| short_type_name(&path))
            .filter(|name| name != "Saveable" && name != "ChildOf")
            .collect()
    }

    /// The type path of a component, from the type registry, else from Bevy's debug names.
    pub(super) fn type_path(&self, id: ComponentId) -> Option<String> {
        let info = self.world.components().get_info(id)?;
        if let Some(registration) = info.type_id().and_then(|t| self.types.get(t)) {
            return Some(registration.type_info().type_path().to_owned());
        }
        debug_names_on().then(|| info.name().to_string())
    }

    /// Counts `entities` of `archetype`'s entities for `component`, noting the saved types
    /// they have.
    fn count(
        &self,
        counts: &mut Counts,
        component: ComponentId,
        (archetype, n): (&Archetype, usize),
    ) {
        let (entities, with) = counts.entry(component).or_default();
        *entities += n;
        with.extend(self.saved_names(archetype));
    }

    /// Counts by component, named, in type path order (unnamed last).
    fn report(&self, counts: Counts) -> Vec<(ComponentId, UnsavedComponent)> {
        let mut report: Vec<(ComponentId, UnsavedComponent)> = (counts.into_iter())
            .map(|(id, (entities, with))| {
                let type_path = self.type_path(id);
                let with = with.into_iter().collect();
                let unsaved = UnsavedComponent {
                    type_path,
                    entities,
                    with,
                };
                (id, unsaved)
            })
            .collect();
        report.sort_by(|(_, a), (_, b)| {
            (a.type_path.is_none(), &a.type_path).cmp(&(b.type_path.is_none(), &b.type_path))
        });
        report
    }
}

/// The component types saved entities carry that saves leave out, with how many saved
/// entities carry each, and their ids in `world` (to tell new ones from those already
/// warned about). Empty when the world has no save registry.
pub(crate) fn unsaved_components(world: &World) -> Vec<(ComponentId, UnsavedComponent)> {
    let (Some(registry), Some(types)) = (
        world.get_resource::<SaveRegistry>(),
        world.get_resource::<AppTypeRegistry>(),
    ) else {
        return Vec::new();
    };
    let types = types.read();
    let coverage = Coverage::new(world, registry, &types);
    let mut counts = Counts::new();
    for archetype in coverage.saved_archetypes(registry) {
        for id in coverage.unsaved_in(archetype) {
            coverage.count(&mut counts, id, (archetype, archetype.len() as usize));
        }
    }
    coverage.report(counts)
}

/// What the live saved entities carry beyond their saved types, taken before a load, to name
/// what the loaded ones came back without.
#[derive(Default)]
pub(crate) struct LiveComponents {
    /// Saved types (sorted) → the unsaved types live entities with exactly those carry.
    by_signature: HashMap<Vec<ComponentId>, Vec<ComponentId>>,
}

impl LiveComponents {
    /// Notes, for each signature of the live saved entities, the unsaved types they carry.
    pub(crate) fn before_load(world: &World) -> Self {
        let (Some(registry), Some(types)) = (
            world.get_resource::<SaveRegistry>(),
            world.get_resource::<AppTypeRegistry>(),
        ) else {
            return LiveComponents::default();
        };
        let types = types.read();
        let coverage = Coverage::new(world, registry, &types);
        let mut by_signature: HashMap<Vec<ComponentId>, Vec<ComponentId>> = HashMap::new();
        for archetype in coverage.saved_archetypes(registry) {
            let unsaved = coverage.unsaved_in(archetype);
            if unsaved.is_empty() {
                continue;
            }
            let carried = by_signature
                .entry(coverage.signature(archetype))
                .or_default();
            for id in unsaved {
                if !carried.contains(&id) {
                    carried.push(id);
                }
            }
        }
        LiveComponents { by_signature }
    }

    /// The unsaved types the `loaded` entities (the ones a load spawned) lack that live
    /// entities with the same saved types carried before the load, with how many lack each.
    /// Entities a load kept in place keep what they carried, so only spawned ones are asked
    /// about. Call it once the load is applied and its commands (the game's `On<Add>`
    /// observers) have run.
    pub(crate) fn missing_after(&self, world: &World, loaded: &[Entity]) -> Vec<UnsavedComponent> {
        if self.by_signature.is_empty() || loaded.is_empty() {
            return Vec::new();
        }
        let (Some(registry), Some(types)) = (
            world.get_resource::<SaveRegistry>(),
            world.get_resource::<AppTypeRegistry>(),
        ) else {
            return Vec::new();
        };
        let types = types.read();
        let coverage = Coverage::new(world, registry, &types);
        let mut per_archetype: HashMap<ArchetypeId, usize> = HashMap::new();
        for entity in loaded.iter().filter_map(|&e| world.get_entity(e).ok()) {
            *per_archetype.entry(entity.archetype().id()).or_default() += 1;
        }
        let mut counts = Counts::new();
        for (id, n) in per_archetype {
            let Some(archetype) = world.archetypes().get(id) else {
                continue;
            };
            let Some(carried) = self.by_signature.get(&coverage.signature(archetype)) else {
                continue;
            };
            for &component in carried.iter().filter(|c| !archetype.contains(**c)) {
                coverage.count(&mut counts, component, (archetype, n));
            }
        }
        (coverage.report(counts).into_iter())
            .map(|(_, missing)| missing)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names_drop_module_paths_inside_generics_too() {
        assert_eq!(short_type_name("bevy_sprite::sprite::Sprite"), "Sprite");
        assert_eq!(
            short_type_name(
                "bevy_sprite_render::mesh2d::material::MeshMaterial2d<bevy_sprite_render::ColorMaterial>"
            ),
            "MeshMaterial2d<ColorMaterial>"
        );
        assert_eq!(short_type_name("game::Pair<a::B, c::D>"), "Pair<B, D>");
        assert_eq!(short_type_name("Plain"), "Plain");
    }
}
