//! Bevy's own component types on saved entities, in two kinds:
//!
//! - those that hold the game's data (where a thing is, what it looks like, what it is
//!   called), which [`register_saveable_bevy_types`](crate::snapshot::SaveableAppExt::register_saveable_bevy_types)
//!   registers for saving in one call (in `app_ext`);
//! - those Bevy computes from others and puts back by itself after a load (`GlobalTransform`
//!   from `Transform`, the visibility a frame computes, the render world's links, the quad
//!   mesh and material Bevy 0.20 gives every `Sprite`), which a save never needs: the check of
//!   what saves leave out (`unsaved`) does not count them.
//!
//! Types are named by type where the library is built with their crate, else by type path
//! (looked up in the app's type registry): the library's `bevy` dependency has no rendering
//! crates unless its `save_menu` feature is on, and no sprites without `bevy_sprite`.

use bevy::asset::UntypedAssetId;
use bevy::ecs::archetype::Archetype;
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use bevy::transform::components::TransformTreeChanged;
use std::any::TypeId;

/// Components Bevy computes, by type path: from crates the library may be built without.
/// Generic types are matched by their full path.
const DERIVED_PATHS: &[&str] = &[
    // The material Bevy 0.20's sprite renderer gives every `Sprite` (`bevy_sprite_render`).
    "bevy_sprite_render::mesh2d::material::MeshMaterial2d<bevy_sprite_render::sprite_mesh::sprite_mesh_material::SpriteMeshMaterial>",
    // Layout and text results (`bevy_ui`, `bevy_text`), computed every frame.
    "bevy_ui::ui_node::ComputedNode",
    "bevy_ui::ui_node::ComputedUiTargetCamera",
    "bevy_ui::ui_node::ComputedUiRenderTargetInfo",
    "bevy_ui::ui_transform::UiGlobalTransform",
    "bevy_ui::measurement::ContentSize",
    "bevy_ui::widget::text::TextNodeFlags",
    "bevy_text::pipeline::TextLayoutInfo",
    "bevy_text::text::ComputedTextBlock",
    // The previous frame's transform, for motion blur and TAA (`bevy_pbr`).
    "bevy_pbr::prepass::PreviousGlobalTransform",
    // The entities a camera or a light sees, found every frame (`bevy_camera`).
    "bevy_camera::visibility::VisibleEntities",
];

/// Components Bevy computes, by type, from the crates the library is built with.
fn derived_types() -> Vec<TypeId> {
    let always = [
        TypeId::of::<GlobalTransform>(),
        TypeId::of::<TransformTreeChanged>(),
        // Rebuilt from the saved `ChildOf`s.
        TypeId::of::<Children>(),
    ];
    (always.into_iter())
        .chain(visibility_types())
        .chain(render_world_types())
        .collect()
}

/// What a frame computes of visibility and bounds (`bevy_camera`).
#[cfg(any(feature = "bevy_sprite", feature = "save_menu"))]
fn visibility_types() -> Vec<TypeId> {
    use bevy::camera::primitives::Aabb;
    use bevy::camera::visibility::{InheritedVisibility, ViewVisibility, VisibilityClass};
    vec![
        TypeId::of::<InheritedVisibility>(),
        TypeId::of::<ViewVisibility>(),
        TypeId::of::<VisibilityClass>(),
        TypeId::of::<Aabb>(),
    ]
}

#[cfg(not(any(feature = "bevy_sprite", feature = "save_menu")))]
fn visibility_types() -> Vec<TypeId> {
    Vec::new()
}

/// The links to the render world (`bevy_render`): not registered for reflection, so they
/// could not be found by path.
#[cfg(feature = "save_menu")]
fn render_world_types() -> Vec<TypeId> {
    use bevy::render::sync_world::{RenderEntity, SyncToRenderWorld};
    vec![
        TypeId::of::<SyncToRenderWorld>(),
        TypeId::of::<RenderEntity>(),
    ]
}

#[cfg(not(feature = "save_menu"))]
fn render_world_types() -> Vec<TypeId> {
    Vec::new()
}

/// The components of one world that Bevy computes and puts back by itself: a save leaves them
/// out and a load loses nothing by it.
pub(crate) struct BevyDerived {
    ids: Vec<ComponentId>,
    /// `Mesh2d` and `Sprite`: Bevy 0.20 gives every sprite a quad `Mesh2d` of its own making,
    /// so on an entity with a `Sprite` the `Mesh2d` is Bevy's.
    sprite_quad: Option<(ComponentId, ComponentId)>,
}

impl BevyDerived {
    /// Looks the types up among `world`'s components (types the world never saw are skipped).
    pub(crate) fn of(world: &World, types: &TypeRegistry) -> Self {
        let by_type = derived_types().into_iter();
        let by_path = DERIVED_PATHS
            .iter()
            .filter_map(|path| types.get_with_type_path(path))
            .map(|registration| registration.type_id());
        let ids = by_type
            .chain(by_path)
            .filter_map(|type_id| world.components().get_id(type_id))
            .collect();
        BevyDerived {
            ids,
            sprite_quad: sprite_quad(world),
        }
    }

    /// Whether `component`, in `archetype`, is Bevy's to put back.
    pub(crate) fn covers(&self, archetype: &Archetype, component: ComponentId) -> bool {
        self.ids.contains(&component)
            || self
                .sprite_quad
                .is_some_and(|(mesh, sprite)| component == mesh && archetype.contains(sprite))
    }
}

/// The assets Bevy made at run time for entities a save holds, which a save leaves out without
/// a word (they are Bevy's, not the game's): the quad mesh of every `Sprite`. All sprites share
/// one quad, so the first sprite of each table is enough to find it.
pub(crate) fn bevy_made_assets(world: &World) -> Vec<UntypedAssetId> {
    sprite_quad_assets(world)
}

#[cfg(feature = "bevy_sprite")]
fn sprite_quad_assets(world: &World) -> Vec<UntypedAssetId> {
    let Some((mesh, sprite)) = sprite_quad(world) else {
        return Vec::new();
    };
    let mut quads: Vec<UntypedAssetId> = Vec::new();
    for archetype in world.archetypes().iter() {
        if !archetype.contains(mesh) || !archetype.contains(sprite) {
            continue;
        }
        let Some(first) = archetype.entities().first() else {
            continue;
        };
        let quad = world.get::<bevy::mesh::Mesh2d>(first.id());
        if let Some(id) = quad.map(|quad| quad.0.id().untyped())
            && !quads.contains(&id)
        {
            quads.push(id);
        }
    }
    quads
}

#[cfg(not(feature = "bevy_sprite"))]
fn sprite_quad_assets(_: &World) -> Vec<UntypedAssetId> {
    Vec::new()
}

#[cfg(feature = "bevy_sprite")]
fn sprite_quad(world: &World) -> Option<(ComponentId, ComponentId)> {
    let mesh = world.component_id::<bevy::mesh::Mesh2d>()?;
    let sprite = world.component_id::<bevy::sprite::Sprite>()?;
    Some((mesh, sprite))
}

#[cfg(not(feature = "bevy_sprite"))]
fn sprite_quad(_: &World) -> Option<(ComponentId, ComponentId)> {
    None
}
