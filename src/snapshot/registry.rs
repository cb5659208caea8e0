//! Registration of saveable types: `app.register_saveable::<T>()` and friends.

use super::capture::ColumnSink;
use super::error::SnapshotError;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::resource::IS_RESOURCE;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, GetTypeRegistration, PartialReflect, TypePath};
use serde::{Deserialize, Serialize};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

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
    require: Vec<TypeId>,
    exclude: Vec<TypeId>,
}

impl Default for SaveFilter {
    /// Entities with the [`Saveable`] marker.
    fn default() -> Self {
        SaveFilter {
            require: vec![TypeId::of::<Saveable>()],
            exclude: Vec::new(),
        }
    }
}

impl SaveFilter {
    /// A filter that requires component `C` (and nothing else).
    pub fn with_component<C: Component>() -> Self {
        SaveFilter {
            require: vec![TypeId::of::<C>()],
            exclude: Vec::new(),
        }
    }

    /// Also requires component `C`.
    #[must_use]
    pub fn with<C: Component>(mut self) -> Self {
        self.require.push(TypeId::of::<C>());
        self
    }

    /// Skips entities that have component `C`.
    #[must_use]
    pub fn without<C: Component>(mut self) -> Self {
        self.exclude.push(TypeId::of::<C>());
        self
    }

    /// Whether the filter requires `C`.
    pub fn requires<C: Component>(&self) -> bool {
        self.require.contains(&TypeId::of::<C>())
    }

    /// Resolves the filter against a world's components: `None` when a required component was
    /// never registered (so no entity can match).
    pub(crate) fn resolve(&self, world: &World) -> Option<ResolvedFilter> {
        let components = world.components();
        let require = self
            .require
            .iter()
            .map(|id| components.get_id(*id))
            .collect::<Option<Vec<_>>>()?;
        let mut exclude: Vec<ComponentId> = self
            .exclude
            .iter()
            .filter_map(|id| components.get_id(*id))
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
    /// The entities that match, archetype by archetype.
    pub(crate) fn matching_entities(&self, world: &World) -> Vec<Entity> {
        world
            .archetypes()
            .iter()
            .filter(|archetype| {
                !archetype.is_empty()
                    && self.require.iter().all(|&id| archetype.contains(id))
                    && !self.exclude.iter().any(|&id| archetype.contains(id))
            })
            .flat_map(|archetype| archetype.entities().iter().map(|entity| entity.id()))
            .collect()
    }
}

/// Whether a registered type is stored per entity or as a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TypeKind {
    Component,
    Resource,
}

/// Turns a dynamic value (from the reflection deserializer) into the concrete type, if its
/// fields fit.
pub(crate) type FromPartialFn = fn(Box<dyn PartialReflect>) -> Option<Box<dyn Reflect>>;

/// Converts a value of a legacy type into the current type.
pub(crate) type ConvertFn = fn(Box<dyn Reflect>) -> Option<Box<dyn Reflect>>;

/// Operations on one concrete type, monomorphised at registration.
#[derive(Clone, Copy)]
pub(crate) struct TypeOps {
    pub(crate) type_id: TypeId,
    pub(crate) type_path: &'static str,
    pub(crate) from_partial: FromPartialFn,
}

impl TypeOps {
    fn of<T: Reflect + FromReflect + TypePath>() -> Self {
        TypeOps {
            type_id: TypeId::of::<T>(),
            type_path: T::type_path(),
            from_partial: |partial| {
                T::take_from_reflect(partial)
                    .ok()
                    .map(|value| Box::new(value) as Box<dyn Reflect>)
            },
        }
    }
}

/// Decodes an older schema version of a type and converts it into the current one.
#[derive(Clone, Copy)]
pub(crate) struct LegacyDecoder {
    pub(crate) version: u32,
    pub(crate) ops: TypeOps,
    pub(crate) convert: ConvertFn,
}

/// Captures the values of one type into a column.
pub(crate) type CaptureFn = fn(&World, &mut ColumnSink<'_>) -> Result<(), SnapshotError>;

/// One registered saveable type.
#[derive(Clone)]
pub(crate) struct SaveableEntry {
    pub(crate) ops: TypeOps,
    pub(crate) kind: TypeKind,
    pub(crate) version: u32,
    pub(crate) legacy: Vec<LegacyDecoder>,
    pub(crate) capture: CaptureFn,
    pub(crate) map_entities: fn(&mut dyn Reflect, &mut dyn EntityMapper),
    pub(crate) insert: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    pub(crate) insert_resource: fn(&mut World, Box<dyn Reflect>),
}

impl SaveableEntry {
    fn new<T: Component + Reflect + FromReflect + TypePath>(kind: TypeKind) -> Self {
        SaveableEntry {
            ops: TypeOps::of::<T>(),
            kind,
            version: 1,
            legacy: Vec::new(),
            capture: match kind {
                TypeKind::Component => capture_components::<T>,
                TypeKind::Resource => capture_resource::<T>,
            },
            map_entities: |value, mut mapper| {
                if let Some(value) = value.downcast_mut::<T>() {
                    T::map_entities(value, &mut mapper);
                }
            },
            insert: |entity, value| {
                if let Ok(value) = value.take::<T>() {
                    entity.insert(value);
                }
            },
            insert_resource: |world, value| {
                let Ok(value) = value.take::<T>() else { return };
                let id = world.register_component::<T>();
                match world.resource_entities().get(id) {
                    Some(entity) => {
                        world.entity_mut(entity).insert(value);
                    }
                    None => {
                        world.spawn(value);
                    }
                }
            },
        }
    }
}

fn capture_components<T: Component + Reflect>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let Some(mut query) = world.try_query_filtered::<(Entity, &T), Without<IsResourceMarker>>()
    else {
        return Ok(());
    };
    for (entity, value) in query.iter(world) {
        if let Some(index) = sink.index_of(entity) {
            sink.push(Some(index), value)?;
        }
    }
    Ok(())
}

type IsResourceMarker = bevy::ecs::resource::IsResource;

fn capture_resource<T: Component + Reflect>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let value = world
        .component_id::<T>()
        .and_then(|id| world.resource_entities().get(id))
        .and_then(|entity| world.get::<T>(entity));
    match value {
        Some(value) => sink.push(None, value),
        None => Ok(()),
    }
}

/// The saveable types of an app and the filter choosing saved entities.
///
/// Cheap to clone (shared), so decoding can run on a background thread.
#[derive(Resource, Clone, Default)]
pub struct SaveRegistry {
    inner: Arc<RegistryInner>,
}

#[derive(Clone, Default)]
struct RegistryInner {
    entries: Vec<SaveableEntry>,
    by_path: HashMap<String, usize>,
    filter: SaveFilter,
}

impl SaveRegistry {
    /// The number of registered types (components and resources).
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    /// Whether `T` is registered.
    pub fn contains<T: 'static>(&self) -> bool {
        self.inner
            .entries
            .iter()
            .any(|entry| entry.ops.type_id == TypeId::of::<T>())
    }

    /// The filter choosing saved entities.
    pub fn filter(&self) -> &SaveFilter {
        &self.inner.filter
    }

    /// Replaces the filter choosing saved entities.
    pub fn set_filter(&mut self, filter: SaveFilter) {
        Arc::make_mut(&mut self.inner).filter = filter;
    }

    pub(crate) fn entries(&self) -> &[SaveableEntry] {
        &self.inner.entries
    }

    /// The entry (and its index) a stored type path refers to: its own path or an alias.
    pub(crate) fn lookup(&self, type_path: &str) -> Option<(usize, &SaveableEntry)> {
        let index = *self.inner.by_path.get(type_path)?;
        Some((index, &self.inner.entries[index]))
    }

    fn index_of(&self, type_id: TypeId) -> Option<usize> {
        self.inner
            .entries
            .iter()
            .position(|entry| entry.ops.type_id == type_id)
    }

    fn add(&mut self, entry: SaveableEntry) {
        if self.index_of(entry.ops.type_id).is_some() {
            return;
        }
        let inner = Arc::make_mut(&mut self.inner);
        inner
            .by_path
            .insert(entry.ops.type_path.to_owned(), inner.entries.len());
        inner.entries.push(entry);
    }

    fn alias(&mut self, type_id: TypeId, old_path: &str) -> bool {
        let Some(index) = self.index_of(type_id) else {
            return false;
        };
        Arc::make_mut(&mut self.inner)
            .by_path
            .insert(old_path.to_owned(), index);
        true
    }

    fn add_legacy(&mut self, type_id: TypeId, decoder: impl FnOnce(u32) -> LegacyDecoder) -> bool {
        let Some(index) = self.index_of(type_id) else {
            return false;
        };
        let entry = &mut Arc::make_mut(&mut self.inner).entries[index];
        entry.legacy.push(decoder(entry.version));
        entry.version += 1;
        true
    }
}

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

    /// Loads values stored under `old_type_path` (a type's path before a rename or a move to
    /// another module) as the registered type `T`.
    fn register_saveable_alias<T: 'static>(&mut self, old_type_path: &str) -> &mut Self;

    /// Changes the stored layout of `New`: values written before this call's schema version are
    /// decoded as `Old` and converted with `From`. Each call bumps `New`'s schema version by one;
    /// register migrations in the order the type evolved, after `register_saveable::<New>()`.
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
    /// App::new().register_saveable::<Health>().migrate_from::<HealthV1, Health>();
    /// ```
    fn migrate_from<Old, New>(&mut self) -> &mut Self
    where
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        New: Component + Reflect + From<Old>;

    /// Chooses which entities are saved (default: those with [`Saveable`]).
    fn set_save_filter(&mut self, filter: SaveFilter) -> &mut Self;
}

impl SaveableAppExt for App {
    fn register_saveable<T>(&mut self) -> &mut Self
    where
        T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
    {
        ensure_registry(self);
        register::<T>(self);
        self
    }

    fn register_saveable_alias<T: 'static>(&mut self, old_type_path: &str) -> &mut Self {
        ensure_registry(self);
        let known = self
            .world_mut()
            .resource_mut::<SaveRegistry>()
            .alias(TypeId::of::<T>(), old_type_path);
        if !known {
            warn!(
                "register_saveable_alias::<{}> ignored: register the type with register_saveable first",
                std::any::type_name::<T>()
            );
        }
        self
    }

    fn migrate_from<Old, New>(&mut self) -> &mut Self
    where
        Old: Reflect + FromReflect + TypePath + GetTypeRegistration,
        New: Component + Reflect + From<Old>,
    {
        ensure_registry(self);
        self.register_type::<Old>();
        let known = self.world_mut().resource_mut::<SaveRegistry>().add_legacy(
            TypeId::of::<New>(),
            |version| LegacyDecoder {
                version,
                ops: TypeOps::of::<Old>(),
                convert: |old| {
                    old.take::<Old>()
                        .ok()
                        .map(|old| Box::new(New::from(old)) as Box<dyn Reflect>)
                },
            },
        );
        if !known {
            warn!(
                "migrate_from::<{}, {}> ignored: register the new type with register_saveable first",
                Old::type_path(),
                std::any::type_name::<New>()
            );
        }
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
    register::<Saveable>(app);
    register::<ChildOf>(app);
}

fn register<T>(app: &mut App)
where
    T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
{
    app.register_type::<T>();
    let world = app.world_mut();
    let id = world.register_component::<T>();
    let is_resource = world.components().get_info(id).is_some_and(|info| {
        info.required_components()
            .iter_ids()
            .any(|r| r == IS_RESOURCE)
    });
    let kind = if is_resource {
        TypeKind::Resource
    } else {
        TypeKind::Component
    };
    world
        .resource_mut::<SaveRegistry>()
        .add(SaveableEntry::new::<T>(kind));
}
