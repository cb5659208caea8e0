//! [`SaveableAppExt`], how a game tells keepsake what it saves: `register_saveable` (and its
//! serde variant) adds a type to the [`SaveRegistry`], `register_saveable_bevy_types` Bevy's
//! own that hold a game's data, `register_saveable_state` a `States` type (loaded through its
//! transitions), `rebuilt_after_load` declares a type the game puts back itself,
//! `register_saveable_rename` and `register_saveable_migration` (and
//! `register_saveable_migration_step`, for chains) let old saves load after a type was renamed
//! or changed, and `set_save_filter` chooses the saved entities. The first use creates the
//! registry with the types every game saves.

use super::entity_fields::unmapped_entity_fields;
use super::entry::{LegacyDecoder, SaveableEntry};
use super::filter::{SaveFilter, Saveable};
use super::key::{LevelKey, LevelKeys};
use super::registry::SaveRegistry;
use super::states;
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::value::{ValueEncoding, ViaReflect, ViaSerde};
use bevy::ecs::component::ComponentId;
use bevy::ecs::resource::IS_RESOURCE;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, GetTypeRegistration, TypePath};
use bevy::state::state::FreelyMutableState;
use bevy::state::state_scoped::{DespawnOnEnter, DespawnOnExit};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::TypeId;

/// Registers what a game saves.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{SaveRegistry, SaveableAppExt};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// #[derive(Resource, Reflect, Default)]
/// struct Score(u32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>().register_saveable::<Score>();
/// assert!(app.world().resource::<SaveRegistry>().contains::<Score>());
/// ```
pub trait SaveableAppExt {
    /// Saves component or resource `T`. `T` needs `#[derive(Reflect)]`; when it also has
    /// `#[reflect(Serialize, Deserialize)]` its serde implementation is used, which is faster
    /// than field-by-field reflection. Registering twice is harmless.
    fn register_saveable<T>(&mut self) -> &mut Self
    where
        T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration;

    /// Like [`register_saveable`](Self::register_saveable), for types that implement serde's
    /// `Serialize` and `Deserialize`: values are encoded with `T`'s own implementation,
    /// statically dispatched, which is several times faster than going through reflection.
    /// Saves are byte-for-byte the same as through `#[reflect(Serialize, Deserialize)]`, so a
    /// type can switch between the two registrations without breaking old saves.
    fn register_saveable_serde<T>(&mut self) -> &mut Self
    where
        T: Component
            + Reflect
            + FromReflect
            + TypePath
            + GetTypeRegistration
            + Serialize
            + DeserializeOwned;

    /// Saves Bevy's own components that hold a game's data, so a game saves where its
    /// entities are, what they look like and what lights them without naming Bevy's types:
    ///
    /// | type | with the library's feature |
    /// |---|---|
    /// | `Transform`, `Name` | always |
    /// | `Visibility` | `bevy_camera` (on with any below, or `save_menu`) |
    /// | `Sprite` (its image by asset path), `Anchor` | `bevy_sprite` (default) |
    /// | `PointLight`, `DirectionalLight` and its `CascadeShadowConfig`, `SpotLight` | `bevy_light` (default) |
    /// | `WorldAssetRoot` (a glTF scene, by asset path), `DynamicWorldRoot` | `bevy_world_serialization` (default) |
    ///
    /// What Bevy makes itself on such entities (`GlobalTransform`, `InheritedVisibility`, a
    /// light's frusta and bounding `Sphere`, a world asset's `WorldInstance` and its spawned
    /// children, the quad mesh Bevy 0.20 gives every sprite, …) is never saved: Bevy gives it
    /// back after a load, and the check of what saves leave out does not name it. Handles to
    /// meshes and materials (`Mesh3d`, `MeshMaterial3d<M>`) are not registered here, since games
    /// usually make those at run time (`Assets::add`), where a save cannot keep them: register
    /// them yourself when they come from files (saved by path), or rebuild them (see
    /// [`rebuilt_after_load`](Self::rebuilt_after_load)). Cameras are not registered either:
    /// Bevy 0.20 lets a save read only some of a camera's settings (`Exposure` and
    /// `CameraMainTextureUsages` are opaque to reflection), so a game spawns its camera itself
    /// and steers it from saved state.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::{SaveRegistry, SaveableAppExt};
    ///
    /// let mut app = App::new();
    /// app.register_saveable_bevy_types();
    /// assert!(app.world().resource::<SaveRegistry>().contains::<Transform>());
    /// ```
    fn register_saveable_bevy_types(&mut self) -> &mut Self;

    /// Saves the current state of `S` and restores it through `NextState<S>`, so a load or a
    /// rewind runs `OnExit` / `OnEnter` and despawns `DespawnOnExit` entities as play does.
    /// `DespawnOnExit<S>` and `DespawnOnEnter<S>` are registered with it. The transitions read
    /// the saved resources, the saved data wins over what `OnEnter` resets or spawns, and a
    /// change of `S` the transition systems ask for meanwhile is dropped (the saved state
    /// stands). A load into the state the game is already in enters it again only when one of
    /// its `OnEnter` systems reads a resource the load changes (a screen built from it); a
    /// rewind never does. See the guide's
    /// [After a load](crate::_guide::after_load#states-and-screens-built-in-onenter).
    ///
    /// Do not `register_saveable::<State<S>>()`: that writes the state without its
    /// transitions.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::{SaveRegistry, SaveableAppExt};
    ///
    /// #[derive(States, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    /// enum GameState {
    ///     #[default]
    ///     Menu,
    ///     Playing,
    /// }
    ///
    /// let mut app = App::new();
    /// app.register_saveable_state::<GameState>();
    /// assert!(app.world().resource::<SaveRegistry>().contains::<State<GameState>>());
    /// ```
    fn register_saveable_state<S>(&mut self) -> &mut Self
    where
        S: FreelyMutableState,
        State<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
        DespawnOnExit<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
        DespawnOnEnter<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration;

    /// Declares component `T` one the game puts back itself after a load (an `On<Add>`
    /// observer that dresses an entity with a mesh made at run time, UI built from a saved
    /// resource on [`WorldRestored`](crate::plugin::WorldRestored)): it is not saved, and the
    /// plugin does not warn that saved entities carry it. Components on saved entities that
    /// are neither registered nor declared here are named in a warning at the first save that
    /// meets them, since a load brings those entities back without them.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::{SaveRegistry, SaveableAppExt};
    ///
    /// #[derive(Component)]
    /// struct Highlight; // added to the selected unit by the game, never saved
    ///
    /// let mut app = App::new();
    /// app.rebuilt_after_load::<Highlight>();
    /// assert!(app.world().resource::<SaveRegistry>().is_rebuilt::<Highlight>());
    /// ```
    fn rebuilt_after_load<T: Component>(&mut self) -> &mut Self;

    /// Loads values stored under `old_type_path` (a type's path before a rename or a move to
    /// another module) as the registered type `T`.
    ///
    /// # Panics
    ///
    /// When `T` is not registered for saving yet (call `register_saveable::<T>()` first): a
    /// rename of nothing would be a silent no-op.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::SaveableAppExt;
    ///
    /// #[derive(Component, Reflect)]
    /// struct Speed(f32);
    ///
    /// App::new()
    ///     .register_saveable::<Speed>()
    ///     .register_saveable_rename::<Speed>("my_game::old_module::Speed");
    /// ```
    fn register_saveable_rename<T: 'static>(&mut self, old_type_path: &str) -> &mut Self;

    /// Changes the stored layout of `New`: values stored at schema version `stored_at` are
    /// decoded as `Old` and converted with `From`. A type registered without migrations is
    /// stored at version 1; its first layout change is a migration from version 1, the next
    /// one from version 2, and so on: `New` is then stored at one past the highest version it
    /// migrates from. The version is the save's, not the call's place: the calls may come in
    /// any order, after `register_saveable::<New>()`.
    ///
    /// # Panics
    ///
    /// At build, naming the types: when `New` is not registered for saving yet, when
    /// `stored_at` is 0 (versions start at 1), or when `New` already migrates from
    /// `stored_at`.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::SaveableAppExt;
    ///
    /// #[derive(Reflect)]
    /// struct HealthV1(u32);
    ///
    /// #[derive(Component, Reflect)]
    /// struct Health { current: f32, max: f32 }
    ///
    /// impl From<HealthV1> for Health {
    ///     fn from(old: HealthV1) -> Self {
    ///         Health { current: old.0 as f32, max: 100.0 }
    ///     }
    /// }
    ///
    /// App::new()
    ///     .register_saveable::<Health>()
    ///     // Saves of the first release stored `Health` at version 1, as `HealthV1`.
    ///     .register_saveable_migration::<HealthV1, Health>(1);
    /// ```
    fn register_saveable_migration<Old, New>(&mut self, stored_at: u32) -> &mut Self
    where
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        New: Component + Reflect + From<Old>;

    /// One step of a migration chain of the registered type `T`: values stored at schema
    /// version `stored_at` are decoded as `Old` and converted with `From` into `Next`, which is
    /// the `Old` of the step from a later version (or `T`, which ends the chain). A game on its
    /// fourth layout writes one conversion per change instead of one from every old layout
    /// into today's type. Versions as in
    /// [`register_saveable_migration`](Self::register_saveable_migration); the calls may come
    /// in any order, after `register_saveable::<T>()`.
    ///
    /// # Panics
    ///
    /// As [`register_saveable_migration`](Self::register_saveable_migration).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::SaveableAppExt;
    ///
    /// #[derive(Reflect)]
    /// struct HealthV1(u32);
    /// #[derive(Reflect)]
    /// struct HealthV2 { current: u32, max: u32 }
    /// #[derive(Component, Reflect)]
    /// struct Health { current: f32, max: f32 }
    ///
    /// impl From<HealthV1> for HealthV2 {
    ///     fn from(old: HealthV1) -> Self { HealthV2 { current: old.0, max: 100 } }
    /// }
    /// impl From<HealthV2> for Health {
    ///     fn from(old: HealthV2) -> Self {
    ///         Health { current: old.current as f32, max: old.max as f32 }
    ///     }
    /// }
    ///
    /// App::new()
    ///     .register_saveable::<Health>()
    ///     .register_saveable_migration_step::<Health, HealthV1, HealthV2>(1)
    ///     .register_saveable_migration::<HealthV2, Health>(2);
    /// ```
    fn register_saveable_migration_step<T, Old, Next>(&mut self, stored_at: u32) -> &mut Self
    where
        T: Component,
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        Next: Reflect + From<Old>;

    /// Lets saved entities reference unsaved entities that have a [`Name`] (and no
    /// [`LevelKey`](crate::snapshot::LevelKey)) by that name, as if it were their `LevelKey`: a
    /// saved NPC under a level root named `"Cave"` loads under the live `"Cave"`. Names of
    /// such entities must then be unique (a save with two of one name fails, naming both).
    fn use_names_as_level_keys(&mut self) -> &mut Self;

    /// Chooses which entities are saved (default: those with [`Saveable`]). The components it
    /// requires must be registered for saving too (see [`SaveFilter::with_component`]).
    fn set_save_filter(&mut self, filter: SaveFilter) -> &mut Self;
}

impl SaveableAppExt for App {
    fn register_saveable<T>(&mut self) -> &mut Self
    where
        T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
    {
        ensure_registry(self);
        if states::is_state_resource(T::type_path()) {
            warn!(
                "register_saveable::<{}> loads the state without its transitions (OnExit, \
                 OnEnter, DespawnOnExit): use register_saveable_state::<S>() instead",
                T::type_path()
            );
        }
        register::<T, ViaReflect>(self);
        self
    }

    fn register_saveable_serde<T>(&mut self) -> &mut Self
    where
        T: Component
            + Reflect
            + FromReflect
            + TypePath
            + GetTypeRegistration
            + Serialize
            + DeserializeOwned,
    {
        ensure_registry(self);
        register::<T, ViaSerde>(self);
        self
    }

    fn register_saveable_bevy_types(&mut self) -> &mut Self {
        ensure_registry(self);
        register::<Transform, ViaReflect>(self);
        register::<Name, ViaReflect>(self);
        // Only the types whose crates the library's features enable can be named here.
        #[cfg(feature = "bevy_camera")]
        register::<bevy::camera::visibility::Visibility, ViaReflect>(self);
        #[cfg(feature = "bevy_sprite")]
        {
            register::<bevy::sprite::Sprite, ViaReflect>(self);
            register::<bevy::sprite::Anchor, ViaReflect>(self);
        }
        // A directional light's cascade settings are the game's (Bevy requires them with its
        // defaults, and computes the cascades from them).
        #[cfg(feature = "bevy_light")]
        {
            register::<bevy::light::PointLight, ViaReflect>(self);
            register::<bevy::light::DirectionalLight, ViaReflect>(self);
            register::<bevy::light::CascadeShadowConfig, ViaReflect>(self);
            register::<bevy::light::SpotLight, ViaReflect>(self);
        }
        #[cfg(feature = "bevy_world_serialization")]
        {
            register::<bevy::world_serialization::WorldAssetRoot, ViaReflect>(self);
            register::<bevy::world_serialization::DynamicWorldRoot, ViaReflect>(self);
        }
        self
    }

    fn register_saveable_state<S>(&mut self) -> &mut Self
    where
        S: FreelyMutableState,
        State<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
        DespawnOnExit<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
        DespawnOnEnter<S>: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
    {
        ensure_registry(self);
        self.register_type::<State<S>>();
        self.world_mut().register_component::<State<S>>();
        self.world_mut()
            .resource_mut::<SaveRegistry>()
            .add(states::state_entry::<S>());
        register::<DespawnOnExit<S>, ViaReflect>(self);
        register::<DespawnOnEnter<S>, ViaReflect>(self);
        self
    }

    fn rebuilt_after_load<T: Component>(&mut self) -> &mut Self {
        ensure_registry(self);
        self.world_mut()
            .resource_mut::<SaveRegistry>()
            .add_rebuilt(TypeId::of::<T>());
        self
    }

    fn register_saveable_rename<T: 'static>(&mut self, old_type_path: &str) -> &mut Self {
        ensure_registry(self);
        let known = self
            .world_mut()
            .resource_mut::<SaveRegistry>()
            .add_rename(TypeId::of::<T>(), old_type_path);
        assert!(
            known,
            "register_saveable_rename::<{}>({old_type_path:?}) comes before the type is \
             registered for saving: call register_saveable::<{0}>() first",
            std::any::type_name::<T>()
        );
        self
    }

    fn register_saveable_migration<Old, New>(&mut self, stored_at: u32) -> &mut Self
    where
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        New: Component + Reflect + From<Old>,
    {
        self.register_saveable_migration_step::<New, Old, New>(stored_at)
    }

    fn register_saveable_migration_step<T, Old, Next>(&mut self, stored_at: u32) -> &mut Self
    where
        T: Component,
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        Next: Reflect + From<Old>,
    {
        ensure_registry(self);
        self.register_type::<Old>();
        let added = self
            .world_mut()
            .resource_mut::<SaveRegistry>()
            .add_migration(TypeId::of::<T>(), LegacyDecoder::of::<Old, Next>(stored_at));
        if let Err(refused) = added {
            panic!(
                "the migration of {} from schema version {stored_at} (stored as {}) is refused: {refused}",
                std::any::type_name::<T>(),
                Old::type_path(),
            );
        }
        self
    }

    fn use_names_as_level_keys(&mut self) -> &mut Self {
        ensure_registry(self);
        self.world_mut()
            .resource_mut::<SaveRegistry>()
            .set_level_keys(LevelKeys::LevelKeyOrName);
        self
    }

    fn set_save_filter(&mut self, filter: SaveFilter) -> &mut Self {
        ensure_registry(self);
        self.world_mut()
            .resource_mut::<SaveRegistry>()
            .set_filter(filter);
        self
    }
}

/// Creates the registry on first use, with the types every game saves: the [`Saveable`] marker
/// and the hierarchy ([`ChildOf`]; `Children` is rebuilt from it).
pub(crate) fn ensure_registry(app: &mut App) {
    if app.world().contains_resource::<SaveRegistry>() {
        return;
    }
    app.init_resource::<SaveRegistry>();
    app.init_resource::<AppTypeRegistry>();
    app.register_type::<LevelKey>();
    register::<Saveable, ViaSerde>(app);
    register::<ChildOf, ViaSerde>(app);
}

fn register<T, E>(app: &mut App)
where
    T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
    E: ValueEncoding<T>,
{
    app.register_type::<T>();
    let world = app.world_mut();
    let id = world.register_component::<T>();
    let kind = stored_kind(world, id);
    let entry = SaveableEntry::new::<T, E>(kind);
    let mut registry = world.resource_mut::<SaveRegistry>();
    let first = !registry.contains::<T>();
    registry.add(entry.clone());
    if first {
        warn_unmapped_entity_fields(world, &entry);
    }
}

/// Names each `Entity` field of a newly registered type that a load would not remap: found
/// at startup, where the derive lines are written, rather than as a wrong reference in play.
fn warn_unmapped_entity_fields(world: &World, entry: &SaveableEntry) {
    let types = world.resource::<AppTypeRegistry>().read();
    for field in unmapped_entity_fields(&types, entry) {
        warn!("keepsake: {field}");
    }
}

/// Resources are components that require `IsResource`; they are saved once, not per entity.
fn stored_kind(world: &World, id: ComponentId) -> ColumnKind {
    let is_resource = world.components().get_info(id).is_some_and(|info| {
        info.required_components()
            .iter_ids()
            .any(|r| r == IS_RESOURCE)
    });
    if is_resource {
        ColumnKind::Resource
    } else {
        ColumnKind::Component
    }
}
