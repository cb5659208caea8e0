//! No silent losses: what saved entities carry that saves leave out is said at save time, and
//! what loaded entities came back without is said at load time (see `snapshot::register`'s
//! `unsaved` for how both are found).
//!
//! - **Saves**: every [`SaveCompleted`](super::SaveCompleted) lists the component types its
//!   saved entities carry that it left out (`unsaved_components`); the first save that meets a
//!   type names it in one warning, with the fix, and later saves warn again only about types
//!   not warned about before (a new kind of entity, a component added in play).
//! - **Loads and rewinds**: [`LoadCompleted::missing_components`](super::LoadCompleted) (and
//!   the rewind's) lists the types that live saved entities carried before the load and the
//!   loaded entities with the same saved types lack after it (and after the commands of the
//!   game's `On<Add>` observers), with one warning; the save menu's toast says it too.

use crate::snapshot::{
    ApplyReport, LiveComponents, SaveRegistry, UnsavedChildren, UnsavedComponent,
    unsaved_children_except, unsaved_components,
};
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// The component types already named in a save's warning (ids of the app's world), the kinds
/// of parent (saved types) already named for their unsaved children, and whether a save that
/// held nothing was warned about.
#[derive(Resource, Default)]
pub(crate) struct WarnedUnsaved {
    types: HashSet<ComponentId>,
    parents: HashSet<Vec<String>>,
    empty: bool,
}

/// The component types the saved entities carry that a save leaves out; warns about those not
/// warned about before, and once about a save that holds nothing of the game (no saved entity,
/// no resource registered): a quick start without `Saveable` or registrations saves nothing.
pub(crate) fn check_save(world: &mut World, entities: usize) -> Arc<Vec<UnsavedComponent>> {
    let holds_resources = world.resource::<SaveRegistry>().saves_resources();
    let mut warned = world.resource_mut::<WarnedUnsaved>();
    if entities == 0 && !holds_resources && !warned.empty {
        warned.empty = true;
        warn!(
            "keepsake: this save holds nothing of the game: no entity has Saveable (or matches \
             the save filter) and no resource is registered. Give the entities to save \
             Saveable and register their components, and the resources that hold state, with \
             app.register_saveable::<T>()"
        );
    }
    warn_unsaved_children(world);
    let found = unsaved_components(world);
    if found.is_empty() {
        return Arc::default();
    }
    let mut warned = world.resource_mut::<WarnedUnsaved>();
    let new: Vec<&UnsavedComponent> = (found.iter())
        .filter(|(id, _)| warned.types.insert(*id))
        .map(|(_, unsaved)| unsaved)
        .collect();
    if !new.is_empty() {
        warn!("{}", save_warning(&new));
    }
    Arc::new(found.into_iter().map(|(_, unsaved)| unsaved).collect())
}

/// Warns of saved entities whose children saves leave out, for the kinds of parent not
/// warned about before.
fn warn_unsaved_children(world: &mut World) {
    let found = unsaved_children_except(world, &world.resource::<WarnedUnsaved>().parents);
    if found.is_empty() {
        return;
    }
    let mut warned = world.resource_mut::<WarnedUnsaved>();
    let new: Vec<&UnsavedChildren> = (found.iter())
        .filter(|group| warned.parents.insert(group.parent_types.clone()))
        .collect();
    if !new.is_empty() {
        warn!("{}", children_warning(&new));
    }
}

/// The one warning about children saves leave out: which, under which parents, and the two
/// fixes.
pub(crate) fn children_warning(groups: &[&UnsavedChildren]) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let parts: Vec<String> = (groups.iter())
        .map(|group| {
            format!(
                "{} ({}) of {} with {}",
                plural(group.children, "child", "children"),
                group.child_types.join(", "),
                plural(group.parents, "saved entity", "saved entities"),
                group.parent_types.join(", "),
            )
        })
        .collect();
    format!(
        "keepsake: saved entities have children that saves leave out (without Saveable, or \
         outside the save filter), so a load that spawns those entities again (in a new \
         session, with LoadMode::Respawn, or after they were despawned) brings them back \
         without these children: {}. Give the children Saveable too and register their \
         components, or, when the game spawns them again as their parent appears (an On<Add> \
         observer), declare one of their components with app.rebuilt_after_load::<T>()",
        parts.join("; ")
    )
}

/// The one warning about types saves leave out: each named, and the two fixes.
pub(crate) fn save_warning(unsaved: &[&UnsavedComponent]) -> String {
    format!(
        "keepsake: saved entities carry component types that saves leave out, so a load brings \
         those entities back without them: {}. Register each for saving \
         (app.register_saveable::<T>(), after #[derive(Reflect)] on your own types; \
         app.register_saveable_bevy_types() registers Bevy's Transform, Name, Visibility, \
         Sprite, lights and WorldAssetRoot), or declare the ones the game makes again itself after a load \
         (a mesh made with Assets::add, UI built from saved data) with \
         app.rebuilt_after_load::<T>()",
        list(unsaved.iter().copied(), "saved entity", "saved entities")
    )
}

/// `a::Sprite (54 saved entities), a type without Reflect (1 saved entity with Ball,
/// Transform), … (how to see the names of types without Reflect)`.
fn list<'a>(
    components: impl Iterator<Item = &'a UnsavedComponent>,
    one: &str,
    many: &str,
) -> String {
    let mut unnamed = false;
    let parts: Vec<String> = components
        .map(|c| {
            let noun = if c.entities == 1 { one } else { many };
            match &c.type_path {
                Some(path) => format!("{path} ({} {noun})", c.entities),
                None => {
                    unnamed = true;
                    let with = match c.with.is_empty() {
                        true => String::new(),
                        false => format!(" with {}", c.with.join(", ")),
                    };
                    format!("a type without Reflect ({} {noun}{with})", c.entities)
                }
            }
        })
        .collect();
    let mut list = parts.join(", ");
    if unnamed {
        list.push_str(
            " (Bevy names types without Reflect only with its `debug` feature; derive Reflect \
             on your own components to see them named here)",
        );
    }
    list
}

/// Applies a load (or a rewind) with `apply`, then names what the entities it spawned
/// (`spawned`, from its report: every saved entity when it respawns, those it had no live
/// counterpart for when in place) came back without that the live ones had (after running the
/// commands the load's hooks and observers queued, so components the game's `On<Add>`
/// observers put back count as back). `what` names the load in the warning ("Quicksave",
/// "rewind point 12").
pub(crate) fn apply_noting_losses<R>(
    world: &mut World,
    what: &str,
    apply: impl FnOnce(&mut World) -> R,
    spawned: impl FnOnce(&R) -> Vec<Entity>,
) -> (R, Arc<Vec<UnsavedComponent>>) {
    let live = LiveComponents::before_load(world);
    let applied = apply(world);
    world.flush();
    let missing = live.missing_after(world, &spawned(&applied));
    if !missing.is_empty() {
        warn!(
            "keepsake: {what} loaded, but saved entities came back without components the live \
             ones had, which the save does not hold: {}. Register them for saving, or put them \
             back after a load (an On<Add> observer, or one on WorldRestored) and declare them \
             with app.rebuilt_after_load::<T>()",
            list(missing.iter(), "entity", "entities")
        );
    }
    (applied, Arc::new(missing))
}

/// The entities an apply gave saved entities that were not alive before it: its entity map
/// (after an in-place apply it lists only the saved entities whose id changed, which are the
/// ones spawned, and the entities of a save from elsewhere kept from an earlier load of it).
pub(crate) fn spawned_by(applied: &ApplyReport) -> Vec<Entity> {
    applied.entity_map.values().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsaved(type_path: Option<&str>, entities: usize) -> UnsavedComponent {
        UnsavedComponent {
            type_path: type_path.map(str::to_owned),
            entities,
            with: vec!["Paddle".to_owned(), "Transform".to_owned()],
        }
    }

    #[test]
    fn the_warning_names_each_type_and_both_fixes() {
        let sprite = unsaved(Some("bevy_sprite::sprite::Sprite"), 54);
        let velocity = unsaved(Some("breakout::Velocity"), 1);
        let marker = unsaved(None, 55);
        let text = save_warning(&[&sprite, &velocity, &marker]);
        assert!(
            text.contains("bevy_sprite::sprite::Sprite (54 saved entities)"),
            "{text}"
        );
        assert!(
            text.contains("breakout::Velocity (1 saved entity)"),
            "{text}"
        );
        assert!(
            text.contains(
                "a type without Reflect (55 saved entities with Paddle, Transform) (Bevy names"
            ),
            "{text}"
        );
        assert!(text.contains("app.register_saveable::<T>()"), "{text}");
        assert!(
            text.contains("app.register_saveable_bevy_types()"),
            "{text}"
        );
        assert!(text.contains("app.rebuilt_after_load::<T>()"), "{text}");
    }
}
