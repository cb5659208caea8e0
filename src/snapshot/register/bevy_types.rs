//! The components Bevy makes itself on the entities a game spawns, which a save leaves out and
//! the check of what saves leave out (`unsaved`) does not count: a load loses nothing by them,
//! since Bevy gives them back to the loaded entities. Those that hold a game's data (where a
//! thing is, what it looks like, which light it is) are registered for saving instead, by
//! [`register_saveable_bevy_types`](crate::snapshot::SaveableAppExt::register_saveable_bevy_types)
//! (in `app_ext`).
//!
//! Bevy makes a component in one of three ways, and the list says which (`MadeOn`):
//!
//! - **required**: a component of the entity requires it (`#[require]`), so Bevy inserts it
//!   with that one, and computes its value (`GlobalTransform`, `CubemapFrusta`,
//!   `ComputedNode`). Which components require which is read from Bevy's own registry of
//!   required components, at each check. A required component the game sets (`TextFont`,
//!   `CascadeShadowConfig`) is the game's, not in the list: a save that left it out would load
//!   Bevy's default in its place.
//! - **added by Bevy's systems** to entities with one of a few types, a frame or so after they
//!   appear (`Sphere` for lights, `Aabb` for meshes and sprites, `WorldInstance` for world
//!   assets, the quad mesh Bevy 0.20 gives every `Sprite`);
//! - **on every entity**: `Children`, rebuilt from the `ChildOf`s of the children.
//!
//! The list is checked against Bevy: `tests/it/bevy_made.rs` runs Bevy's own plugins (3D
//! lights and meshes, world assets, sprites, UI and text, without a window or a GPU) on the
//! bundles games spawn, saves and loads, and fails when a component Bevy made is reported, or
//! when the loaded entities do not get back what the saved ones carried. Not checked there:
//! the render world's link (`RenderEntity`, made only with a GPU) and `bevy_pbr`'s
//! `PreviousGlobalTransform` (the tests do not build `bevy_pbr`).
//!
//! Types are named by type where the library is built with their crate (its features), so they
//! are found whatever Bevy keeps of names; else by type path, found through the app's type
//! registry (Bevy registers its types there with its default `reflect_auto_register`) or
//! Bevy's type names (its `debug` feature).

use bevy::asset::UntypedAssetId;
use bevy::ecs::archetype::Archetype;
use bevy::ecs::component::ComponentId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use bevy::utils::DebugName;
use std::any::TypeId;
use std::collections::HashMap;

/// One of Bevy's types: by its type path, and by type where the library is built with its
/// crate.
#[derive(Clone, Copy)]
struct BevyType {
    /// Its type path (with the full paths of its type parameters).
    path: &'static str,
    /// The type itself, where the library's features name it.
    named: Option<Named>,
}

/// A type the library names.
#[derive(Clone, Copy)]
struct Named {
    id: fn() -> TypeId,
    /// Its `std::any::type_name`, which the unit tests compare with the listed path.
    #[cfg(test)]
    name: fn() -> &'static str,
}

impl Named {
    const fn of<T: 'static>() -> Self {
        Named {
            id: TypeId::of::<T>,
            #[cfg(test)]
            name: std::any::type_name::<T>,
        }
    }
}

/// `bevy_type!("a::B")`: by path alone. `bevy_type!("a::B", a::B)`: by type too, always.
/// `bevy_type!("a::B", "feature", a::B)`: by type too when the library has `feature`.
macro_rules! bevy_type {
    ($path:literal) => {
        BevyType {
            path: $path,
            named: None,
        }
    };
    ($path:literal, $ty:ty) => {
        BevyType {
            path: $path,
            named: Some(Named::of::<$ty>()),
        }
    };
    ($path:literal, $feature:literal, $ty:ty) => {
        BevyType {
            path: $path,
            #[cfg(feature = $feature)]
            named: Some(Named::of::<$ty>()),
            #[cfg(not(feature = $feature))]
            named: None,
        }
    };
}

/// A component Bevy makes, and on which entities.
struct Made {
    what: BevyType,
    on: MadeOn,
}

/// Which entities Bevy gives a component it makes.
enum MadeOn {
    /// Those with a component that requires it (Bevy's registry of required components says
    /// which).
    Required,
    /// Those with one of these: Bevy's systems add it.
    With(&'static [BevyType]),
    /// Every entity.
    Every,
}

const fn required(what: BevyType) -> Made {
    Made {
        what,
        on: MadeOn::Required,
    }
}

const fn with(what: BevyType, on: &'static [BevyType]) -> Made {
    Made {
        what,
        on: MadeOn::With(on),
    }
}

const POINT_LIGHT: BevyType = bevy_type!(
    "bevy_light::point_light::PointLight",
    "bevy_light",
    bevy::light::PointLight
);
const SPOT_LIGHT: BevyType = bevy_type!(
    "bevy_light::spot_light::SpotLight",
    "bevy_light",
    bevy::light::SpotLight
);
const MESH_3D: BevyType = bevy_type!(
    "bevy_mesh::components::Mesh3d",
    "bevy_camera",
    bevy::mesh::Mesh3d
);
const MESH_2D: BevyType = bevy_type!(
    "bevy_mesh::components::Mesh2d",
    "bevy_camera",
    bevy::mesh::Mesh2d
);
const SPRITE: BevyType = bevy_type!(
    "bevy_sprite::sprite::Sprite",
    "bevy_sprite",
    bevy::sprite::Sprite
);
const TEXT_2D: BevyType = bevy_type!("bevy_sprite::text2d::Text2d");
const UI_NODE: BevyType = bevy_type!("bevy_ui::ui_node::Node");
const WORLD_ASSET_ROOT: BevyType = bevy_type!(
    "bevy_world_serialization::components::WorldAssetRoot",
    "bevy_world_serialization",
    bevy::world_serialization::WorldAssetRoot
);
const DYNAMIC_WORLD_ROOT: BevyType = bevy_type!(
    "bevy_world_serialization::components::DynamicWorldRoot",
    "bevy_world_serialization",
    bevy::world_serialization::DynamicWorldRoot
);
const SYNC_TO_RENDER_WORLD: BevyType = bevy_type!(
    "bevy_extract::sync_world::SyncToSubWorld<bevy_render::RenderApp>",
    "save_menu",
    bevy::render::sync_world::SyncToRenderWorld
);

/// What Bevy 0.20 makes on the entities of the bundles games spawn.
const MADE: &[Made] = &[
    // Transforms, computed every frame (`bevy_transform`); `Children`, from the children.
    required(bevy_type!(
        "bevy_transform::components::global_transform::GlobalTransform",
        GlobalTransform
    )),
    required(bevy_type!(
        "bevy_transform::components::transform::TransformTreeChanged",
        bevy::transform::components::TransformTreeChanged
    )),
    Made {
        what: bevy_type!("bevy_ecs::hierarchy::Children", Children),
        on: MadeOn::Every,
    },
    // Visibility, and what each camera and light sees and culls with (`bevy_camera`).
    required(bevy_type!(
        "bevy_camera::visibility::InheritedVisibility",
        "bevy_camera",
        bevy::camera::visibility::InheritedVisibility
    )),
    required(bevy_type!(
        "bevy_camera::visibility::ViewVisibility",
        "bevy_camera",
        bevy::camera::visibility::ViewVisibility
    )),
    required(bevy_type!(
        "bevy_camera::visibility::VisibilityClass",
        "bevy_camera",
        bevy::camera::visibility::VisibilityClass
    )),
    required(bevy_type!(
        "bevy_camera::visibility::VisibleEntities",
        "bevy_camera",
        bevy::camera::visibility::VisibleEntities
    )),
    required(bevy_type!(
        "bevy_camera::visibility::VisibleMeshEntities",
        "bevy_camera",
        bevy::camera::visibility::VisibleMeshEntities
    )),
    required(bevy_type!(
        "bevy_camera::visibility::CubemapVisibleEntities",
        "bevy_camera",
        bevy::camera::visibility::CubemapVisibleEntities
    )),
    required(bevy_type!(
        "bevy_camera::visibility::CascadesVisibleEntities",
        "bevy_camera",
        bevy::camera::visibility::CascadesVisibleEntities
    )),
    required(bevy_type!(
        "bevy_camera::primitives::Frustum",
        "bevy_camera",
        bevy::camera::primitives::Frustum
    )),
    required(bevy_type!(
        "bevy_camera::primitives::CubemapFrusta",
        "bevy_camera",
        bevy::camera::primitives::CubemapFrusta
    )),
    required(bevy_type!(
        "bevy_camera::primitives::CascadesFrusta",
        "bevy_camera",
        bevy::camera::primitives::CascadesFrusta
    )),
    // Bounds: of meshes, sprites and 2D text from their size (`bevy_camera`, `bevy_sprite`),
    // of point and spot lights from their range (`bevy_light`).
    with(
        bevy_type!(
            "bevy_camera::primitives::Aabb",
            "bevy_camera",
            bevy::camera::primitives::Aabb
        ),
        &[MESH_3D, MESH_2D, SPRITE, TEXT_2D],
    ),
    with(
        bevy_type!(
            "bevy_camera::primitives::Sphere",
            "bevy_camera",
            bevy::camera::primitives::Sphere
        ),
        &[POINT_LIGHT, SPOT_LIGHT],
    ),
    // A directional light's shadow cascades, computed from its `CascadeShadowConfig`.
    required(bevy_type!(
        "bevy_light::cascade::Cascades",
        "bevy_light",
        bevy::light::Cascades
    )),
    // The spawned instance of a world asset (`bevy_world_serialization`: a glTF scene).
    with(
        bevy_type!(
            "bevy_world_serialization::world_asset_spawner::WorldInstance",
            "bevy_world_serialization",
            bevy::world_serialization::WorldInstance
        ),
        &[WORLD_ASSET_ROOT, DYNAMIC_WORLD_ROOT],
    ),
    // The quad mesh and material Bevy 0.20's sprite renderer gives every `Sprite`
    // (`bevy_sprite_render`): on an entity with a `Sprite`, the `Mesh2d` is Bevy's.
    with(MESH_2D, &[SPRITE]),
    with(
        bevy_type!(
            "bevy_sprite_render::mesh2d::material::MeshMaterial2d<bevy_sprite_render::sprite_mesh::sprite_mesh_material::SpriteMeshMaterial>"
        ),
        &[SPRITE],
    ),
    // The links to the render world (`bevy_render`); the link itself only with a GPU.
    required(SYNC_TO_RENDER_WORLD),
    with(
        bevy_type!(
            "bevy_extract::sync_world::SubEntity<bevy_render::RenderApp>",
            "save_menu",
            bevy::render::sync_world::RenderEntity
        ),
        &[SYNC_TO_RENDER_WORLD],
    ),
    // Layout results (`bevy_ui`), and the camera and target each UI tree is drawn to,
    // propagated from its root.
    required(bevy_type!("bevy_ui::ui_node::ComputedNode")),
    required(bevy_type!("bevy_ui::stack::ComputedStackIndex")),
    required(bevy_type!("bevy_ui::ui_transform::UiGlobalTransform")),
    required(bevy_type!("bevy_ui::ui_node::ComputedUiTargetCamera")),
    required(bevy_type!("bevy_ui::ui_node::ComputedUiRenderTargetInfo")),
    required(bevy_type!("bevy_ui::measurement::ContentSize")),
    required(bevy_type!("bevy_ui::widget::text::TextNodeFlags")),
    with(
        bevy_type!("bevy_app::propagate::Propagate<bevy_ui::ui_node::ComputedUiTargetCamera>"),
        &[UI_NODE],
    ),
    with(
        bevy_type!("bevy_app::propagate::Inherited<bevy_ui::ui_node::ComputedUiTargetCamera>"),
        &[UI_NODE],
    ),
    with(
        bevy_type!("bevy_app::propagate::Propagate<bevy_ui::ui_node::ComputedUiRenderTargetInfo>"),
        &[UI_NODE],
    ),
    with(
        bevy_type!("bevy_app::propagate::Inherited<bevy_ui::ui_node::ComputedUiRenderTargetInfo>"),
        &[UI_NODE],
    ),
    // Text layout results (`bevy_text`), and the em size taken from the `TextFont`.
    required(bevy_type!("bevy_text::text::ComputedTextBlock")),
    required(bevy_type!("bevy_text::pipeline::TextLayoutInfo")),
    required(bevy_type!("bevy_text::text::EmSize")),
    // The previous frame's transform, for motion blur and TAA (`bevy_pbr`).
    with(
        bevy_type!("bevy_pbr::prepass::PreviousGlobalTransform"),
        &[MESH_3D],
    ),
];

/// The components of one world that Bevy makes itself (`MADE`, looked up among the world's
/// components; types the world never saw are left out).
pub(crate) struct BevyMade {
    /// Made with the components that require them.
    required: Vec<ComponentId>,
    /// Made on entities with one of the others.
    with: Vec<(ComponentId, Vec<ComponentId>)>,
    /// Made on every entity.
    every: Vec<ComponentId>,
}

impl BevyMade {
    pub(crate) fn of(world: &World, types: &TypeRegistry) -> Self {
        let find = Finder::new(world, types);
        let mut made = BevyMade {
            required: Vec::new(),
            with: Vec::new(),
            every: Vec::new(),
        };
        for entry in MADE {
            let Some(id) = find.id(&entry.what) else {
                continue;
            };
            match entry.on {
                MadeOn::Required => made.required.push(id),
                MadeOn::Every => made.every.push(id),
                MadeOn::With(on) => {
                    let on: Vec<ComponentId> = on.iter().filter_map(|t| find.id(t)).collect();
                    if !on.is_empty() {
                        made.with.push((id, on));
                    }
                }
            }
        }
        made
    }

    /// Whether Bevy makes `id` on some entities: a type that never tells what an entity is.
    pub(crate) fn lists(&self, id: ComponentId) -> bool {
        self.every.contains(&id)
            || self.required.contains(&id)
            || self.with.iter().any(|(made, _)| *made == id)
    }

    /// The components of `archetype` Bevy makes itself.
    pub(crate) fn made_in(&self, world: &World, archetype: &Archetype) -> Vec<ComponentId> {
        let required = required_in(world, archetype);
        (archetype.iter_components())
            .filter(|id| {
                self.every.contains(id)
                    || (self.required.contains(id) && required.contains(id))
                    || (self.with.iter()).any(|(made, on)| {
                        made == id && on.iter().any(|&with| archetype.contains(with))
                    })
            })
            .collect()
    }
}

/// The components whose entities' children Bevy spawns itself, and spawns again after a load:
/// the roots of world assets (a glTF scene's entities are spawned under its root).
pub(crate) fn spawning_children(world: &World, types: &TypeRegistry) -> Vec<ComponentId> {
    let find = Finder::new(world, types);
    [WORLD_ASSET_ROOT, DYNAMIC_WORLD_ROOT]
        .iter()
        .filter_map(|root| find.id(root))
        .collect()
}

/// The components the components of `archetype` require (directly or through others), from
/// Bevy's registry.
pub(crate) fn required_in(world: &World, archetype: &Archetype) -> Vec<ComponentId> {
    let components = world.components();
    let mut required: Vec<ComponentId> = (archetype.iter_components())
        .filter_map(|id| components.get_info(id))
        .flat_map(|info| info.required_components().iter_ids())
        .collect();
    required.sort_unstable();
    required.dedup();
    required
}

/// Finds a [`BevyType`] among a world's components: by type, else by type path in the type
/// registry, else by Bevy's type names.
struct Finder<'w> {
    world: &'w World,
    types: &'w TypeRegistry,
    /// Bevy's name of each component (empty when Bevy keeps no names).
    names: HashMap<String, ComponentId>,
}

impl<'w> Finder<'w> {
    fn new(world: &'w World, types: &'w TypeRegistry) -> Self {
        let names = match debug_names_on() {
            true => (world.components().iter_registered())
                .map(|(id, info)| (info.name().to_string(), id))
                .collect(),
            false => HashMap::new(),
        };
        Finder {
            world,
            types,
            names,
        }
    }

    fn id(&self, bevy_type: &BevyType) -> Option<ComponentId> {
        let components = self.world.components();
        if let Some(named) = bevy_type.named {
            return components.get_id((named.id)());
        }
        match self.types.get_with_type_path(bevy_type.path) {
            Some(registration) => components.get_id(registration.type_id()),
            None => self.names.get(bevy_type.path).copied(),
        }
    }
}

/// Whether Bevy keeps type names (its `debug` feature); without it every name reads as a
/// placeholder.
pub(crate) fn debug_names_on() -> bool {
    DebugName::borrowed("keepsake").to_string() == "keepsake"
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

#[cfg(test)]
mod tests {
    use super::{BevyType, MADE, MadeOn};

    /// Every type the list names, its triggers included.
    fn listed() -> Vec<BevyType> {
        let mut listed = Vec::new();
        for entry in MADE {
            listed.push(entry.what);
            if let MadeOn::With(on) = entry.on {
                listed.extend(on.iter().copied());
            }
        }
        listed
    }

    /// A path is what finds a type when the library is built without its crate: it must be
    /// the type's own.
    #[test]
    fn the_listed_paths_are_the_named_types_paths() {
        for bevy_type in listed() {
            if let Some(named) = bevy_type.named {
                assert_eq!((named.name)(), bevy_type.path);
            }
        }
    }
}
