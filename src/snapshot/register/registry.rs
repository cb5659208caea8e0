//! The [`SaveRegistry`]: every registered saveable type (its `SaveableEntry`), looked up by
//! type or by stored type path (including old paths of renamed types), and the filter choosing
//! saved entities. Filled by the [`SaveableAppExt`](crate::snapshot::SaveableAppExt) methods.

use super::entity_fields::{UnmappedEntityField, unmapped_entity_fields};
use super::entry::{LegacyDecoder, SaveableEntry};
use super::filter::SaveFilter;
use super::key::LevelKeys;
use crate::snapshot::blob::ColumnKind;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Hands out registry revisions, unique in the process, so a
/// [`CaptureCache`](crate::snapshot::CaptureCache) can tell that the registry it encoded with has
/// changed.
static NEXT_REVISION: AtomicU64 = AtomicU64::new(1);

/// The saveable types of an app and the filter choosing saved entities.
///
/// Cheap to clone (shared), so decoding can run on a background thread.
#[derive(Resource, Clone, Default)]
pub struct SaveRegistry {
    inner: Arc<RegistryInner>,
    /// The size of the last blob a full capture wrote, to allocate the next one at once.
    last_blob_size: Arc<AtomicUsize>,
}

#[derive(Clone, Default)]
struct RegistryInner {
    entries: Vec<SaveableEntry>,
    by_path: HashMap<String, usize>,
    filter: SaveFilter,
    keys: LevelKeys,
    /// Component types saved entities carry that the game puts back itself after a load
    /// (`rebuilt_after_load`): not saved, and not warned about.
    rebuilt: Vec<TypeId>,
    /// Changes with every change to the entries or the filter.
    revision: u64,
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

    /// Room for the next full capture's blob: the last one's size and an eighth.
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

    /// A component the filter requires but that is not registered for saving, by name: loaded
    /// entities would lack it, so they would not match the filter and the next save would hold
    /// none of them.
    pub fn unsaved_filter_component(&self) -> Option<&'static str> {
        self.inner
            .filter
            .first_unsaved(|type_id| self.index_of(type_id).is_some())
    }

    /// Whether a resource is registered (saves hold it even with no saved entity).
    pub fn saves_resources(&self) -> bool {
        (self.inner.entries.iter()).any(|entry| entry.kind == ColumnKind::Resource)
    }

    /// Whether component `T` was declared rebuilt by the game after a load
    /// ([`rebuilt_after_load`](crate::snapshot::SaveableAppExt::rebuilt_after_load)).
    pub fn is_rebuilt<T: 'static>(&self) -> bool {
        self.inner.rebuilt.contains(&TypeId::of::<T>())
    }

    /// The component types declared rebuilt by the game after a load.
    pub(crate) fn rebuilt(&self) -> &[TypeId] {
        &self.inner.rebuilt
    }

    /// Declares component `type_id` rebuilt by the game after a load.
    pub(super) fn add_rebuilt(&mut self, type_id: TypeId) {
        if !self.inner.rebuilt.contains(&type_id) {
            self.change().rebuilt.push(type_id);
        }
    }

    /// The `Entity` fields of registered types that a load would not remap (each named in a
    /// warning when its type is registered): a test can assert there are none.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_keepsake::snapshot::{SaveRegistry, SaveableAppExt};
    ///
    /// #[derive(Resource, Reflect)]
    /// struct Chase {
    ///     target: Entity, // no #[entities]: a load would keep the saved id
    /// }
    ///
    /// let mut app = App::new();
    /// app.register_saveable::<Chase>();
    /// let types = app.world().resource::<AppTypeRegistry>().read();
    /// let unmapped = app.world().resource::<SaveRegistry>().unmapped_entity_fields(&types);
    /// assert!(unmapped[0].field.ends_with("Chase.target"));
    /// ```
    pub fn unmapped_entity_fields(&self, types: &TypeRegistry) -> Vec<UnmappedEntityField> {
        (self.inner.entries.iter())
            .flat_map(|entry| unmapped_entity_fields(types, entry))
            .collect()
    }

    /// Which unsaved entities saved values may reference by key.
    pub fn level_keys(&self) -> LevelKeys {
        self.inner.keys
    }

    /// Chooses which unsaved entities saved values may reference by key.
    pub fn set_level_keys(&mut self, keys: LevelKeys) {
        self.change().keys = keys;
    }

    /// Replaces the filter choosing saved entities.
    pub fn set_filter(&mut self, filter: SaveFilter) {
        self.change().filter = filter;
    }

    /// Identifies the registry's contents: different after any change to them.
    pub(crate) fn revision(&self) -> u64 {
        self.inner.revision
    }

    /// The inner data for a change, with a new revision.
    fn change(&mut self) -> &mut RegistryInner {
        let inner = Arc::make_mut(&mut self.inner);
        inner.revision = NEXT_REVISION.fetch_add(1, Ordering::Relaxed);
        inner
    }

    pub(crate) fn entries(&self) -> &[SaveableEntry] {
        &self.inner.entries
    }

    /// The entry (and its index) a stored type path refers to: its own path or an old path it was
    /// renamed from.
    pub(crate) fn lookup(&self, type_path: &str) -> Option<(usize, &SaveableEntry)> {
        let index = *self.inner.by_path.get(type_path)?;
        Some((index, &self.inner.entries[index]))
    }

    /// The old paths (from `register_saveable_rename`) that load as the entry at `index`.
    pub(crate) fn renames_of(&self, index: usize) -> Vec<String> {
        let own = self.inner.entries[index].ops.type_path;
        let mut old: Vec<String> = (self.inner.by_path.iter())
            .filter(|(path, at)| **at == index && path.as_str() != own)
            .map(|(path, _)| path.clone())
            .collect();
        old.sort();
        old
    }

    fn index_of(&self, type_id: TypeId) -> Option<usize> {
        self.inner
            .entries
            .iter()
            .position(|entry| entry.ops.type_id == type_id)
    }

    /// Adds a type, or for a type registered before, switches how its values are encoded
    /// (keeping its schema version, migrations and renames).
    pub(super) fn add(&mut self, entry: SaveableEntry) {
        if let Some(index) = self.index_of(entry.ops.type_id) {
            let existing = &mut self.change().entries[index];
            existing.ops = entry.ops;
            existing.refresh = entry.refresh;
            // A state registered again through `register_saveable_state` loads through
            // `NextState`.
            existing.insert_resource = entry.insert_resource;
            existing.state = entry.state;
            return;
        }
        let inner = self.change();
        inner
            .by_path
            .insert(entry.ops.type_path.to_owned(), inner.entries.len());
        inner.entries.push(entry);
    }

    /// Makes values stored under `old_path` load as the registered type `type_id`; `false` when
    /// that type is not registered.
    pub(super) fn add_rename(&mut self, type_id: TypeId, old_path: &str) -> bool {
        let Some(index) = self.index_of(type_id) else {
            return false;
        };
        self.change().by_path.insert(old_path.to_owned(), index);
        true
    }

    /// Gives the registered type `type_id` the decoder of values stored at `decoder.version`;
    /// the type is stored from then on at one past the highest version it migrates from.
    pub(super) fn add_migration(
        &mut self,
        type_id: TypeId,
        decoder: LegacyDecoder,
    ) -> Result<(), MigrationRefused> {
        let index = self
            .index_of(type_id)
            .ok_or(MigrationRefused::NotRegistered)?;
        if decoder.version == 0 {
            return Err(MigrationRefused::VersionZero);
        }
        let entry = &mut self.change().entries[index];
        if let Some(taken) = entry.legacy.iter().find(|l| l.version == decoder.version) {
            return Err(MigrationRefused::VersionTaken {
                by: taken.ops.type_path,
            });
        }
        entry.version = entry.version.max(decoder.version + 1);
        entry.legacy.push(decoder);
        Ok(())
    }
}

/// Why a migration cannot be registered: a mistake in the game's setup, reported at build.
#[derive(Debug, thiserror::Error)]
pub(super) enum MigrationRefused {
    /// The type is not registered for saving (yet).
    #[error("the type is not registered for saving yet; call register_saveable for it first")]
    NotRegistered,
    /// Schema versions start at 1.
    #[error(
        "schema versions start at 1 (a type registered without migrations is stored at version 1)"
    )]
    VersionZero,
    /// The type already migrates from this version.
    #[error("the type already migrates from that version, stored as {by}")]
    VersionTaken {
        /// The stored type of the migration registered first.
        by: &'static str,
    },
}
