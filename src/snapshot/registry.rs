//! Registration of saveable types: `app.register_saveable::<T>()` and friends.

use super::capture::ColumnSink;
use super::error::SnapshotError;
use super::value::decode_with_serde;
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::resource::IS_RESOURCE;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, GetTypeRegistration, PartialReflect, TypePath};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    /// The entities that match, archetype by archetype, and those archetypes.
    pub(crate) fn matching_entities(&self, world: &World) -> (Vec<Entity>, Vec<ArchetypeId>) {
        let mut entities = Vec::new();
        let mut archetypes = Vec::new();
        for archetype in world.archetypes().iter().filter(|archetype| {
            !archetype.is_empty()
                && self.require.iter().all(|&id| archetype.contains(id))
                && !self.exclude.iter().any(|&id| archetype.contains(id))
        }) {
            archetypes.push(archetype.id());
            entities.extend(archetype.entities().iter().map(|entity| entity.id()));
        }
        (entities, archetypes)
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

/// Decodes a value with its type's own serde implementation.
pub(crate) type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, String>;

/// Converts a value of a legacy type into the current type.
pub(crate) type ConvertFn = fn(Box<dyn Reflect>) -> Option<Box<dyn Reflect>>;

/// Operations on one concrete type, monomorphised at registration.
#[derive(Clone, Copy)]
pub(crate) struct TypeOps {
    pub(crate) type_id: TypeId,
    pub(crate) type_path: &'static str,
    pub(crate) from_partial: FromPartialFn,
    /// Set for types registered with `register_saveable_serde`: decode without reflection.
    pub(crate) decode_serde: Option<DecodeFn>,
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
            decode_serde: None,
        }
    }
}

/// How captured values are encoded: through reflection or with the type's serde implementation.
pub(crate) trait ValueEncoding<T> {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError>;
}

/// Through reflection (`ReflectSerialize` when registered, field by field otherwise).
pub(crate) struct ViaReflect;

impl<T: Reflect> ValueEncoding<T> for ViaReflect {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError> {
        sink.push(entity_index, value)
    }
}

/// With `T`'s own `Serialize`, statically dispatched (same bytes as `ReflectSerialize`).
pub(crate) struct ViaSerde;

impl<T: Serialize> ValueEncoding<T> for ViaSerde {
    fn push(
        sink: &mut ColumnSink<'_>,
        entity_index: Option<u32>,
        value: &T,
    ) -> Result<(), SnapshotError> {
        sink.push_serde(entity_index, value)
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
    pub(crate) component_id: fn(&mut World) -> ComponentId,
    pub(crate) insert: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    pub(crate) insert_resource: fn(&mut World, Box<dyn Reflect>),
}

impl SaveableEntry {
    fn new<T, E>(kind: TypeKind, decode_serde: Option<DecodeFn>) -> Self
    where
        T: Component + Reflect + FromReflect + TypePath,
        E: ValueEncoding<T>,
    {
        SaveableEntry {
            ops: TypeOps {
                decode_serde,
                ..TypeOps::of::<T>()
            },
            kind,
            version: 1,
            legacy: Vec::new(),
            capture: match kind {
                TypeKind::Component => capture_components::<T, E>,
                TypeKind::Resource => capture_resource::<T, E>,
            },
            map_entities: |value, mut mapper| {
                if let Some(value) = value.downcast_mut::<T>() {
                    T::map_entities(value, &mut mapper);
                }
            },
            component_id: |world| world.register_component::<T>(),
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

fn capture_components<T: Component, E: ValueEncoding<T>>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let Some(mut query) = world.try_query_filtered::<(Entity, &T), Without<IsResourceMarker>>()
    else {
        return Ok(());
    };
    for (entity, value) in query.iter(world) {
        if let Some(index) = sink.index_of(entity) {
            E::push(sink, Some(index), value)?;
        }
    }
    Ok(())
}

type IsResourceMarker = bevy::ecs::resource::IsResource;

fn capture_resource<T: Component, E: ValueEncoding<T>>(
    world: &World,
    sink: &mut ColumnSink<'_>,
) -> Result<(), SnapshotError> {
    let value = world
        .component_id::<T>()
        .and_then(|id| world.resource_entities().get(id))
        .and_then(|entity| world.get::<T>(entity));
    match value {
        Some(value) => E::push(sink, None, value),
        None => Ok(()),
    }
}

/// The saveable types of an app and the filter choosing saved entities.
///
/// Cheap to clone (shared), so decoding can run on a background thread.
#[derive(Resource, Clone, Default)]
pub struct SaveRegistry {
    inner: Arc<RegistryInner>,
    /// The size of the last blob captured, to allocate the next one at once.
    last_blob_size: Arc<AtomicUsize>,
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

    pub(crate) fn size_hint(&self) -> usize {
        let last = self.last_blob_size.load(Ordering::Relaxed);
        last + last / 8
    }

    pub(crate) fn record_size(&self, size: usize) {
        self.last_blob_size.store(size, Ordering::Relaxed);
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

    /// Adds a type, or for a type registered before, switches how its values are encoded
    /// (keeping its schema version, migrations and aliases).
    fn add(&mut self, entry: SaveableEntry) {
        if let Some(index) = self.index_of(entry.ops.type_id) {
            let existing = &mut Arc::make_mut(&mut self.inner).entries[index];
            existing.ops = entry.ops;
            existing.capture = entry.capture;
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
        register::<T, ViaReflect>(self, None);
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
        register::<T, ViaSerde>(self, Some(decode_with_serde::<T>));
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
    register::<Saveable, ViaSerde>(app, Some(decode_with_serde::<Saveable>));
    register::<ChildOf, ViaSerde>(app, Some(decode_with_serde::<ChildOf>));
}

fn register<T, E>(app: &mut App, decode_serde: Option<DecodeFn>)
where
    T: Component + Reflect + FromReflect + TypePath + GetTypeRegistration,
    E: ValueEncoding<T>,
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
        .add(SaveableEntry::new::<T, E>(kind, decode_serde));
}
