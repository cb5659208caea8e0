//! The one error type of the snapshot layer.

/// Everything that can go wrong capturing a world into an `ecs_blob` or applying one back.
///
/// Decoding and validation happen before the world is touched: when [`decode`](super::decode)
/// returns an error, nothing has changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The blob ends in the middle of a field.
    #[error("the world snapshot is truncated: {what} at byte {offset} needs {needed} more bytes")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where in the blob.
        offset: usize,
        /// How many bytes were missing.
        needed: usize,
    },

    /// A field of the blob has an impossible value.
    #[error("the world snapshot is malformed at byte {offset}: {reason}")]
    Malformed {
        /// Where in the blob.
        offset: usize,
        /// What is wrong.
        reason: String,
    },

    /// The blob was written by a newer snapshot layout than this build reads.
    #[error(
        "the world snapshot uses layout version {found}, newer than the version {supported} this build reads; update the game"
    )]
    NewerLayout {
        /// The version in the blob.
        found: u8,
        /// The newest version this build reads.
        supported: u8,
    },

    /// A part of the blob asks for more memory than the blob may cost: its counts, lengths or
    /// type layouts are forged or damaged (see [`Budget`](crate::format::Budget)).
    #[error("the world snapshot's {0}")]
    OverBudget(#[from] crate::format::OverBudget),

    /// The blob's hash does not match the hash stored beside it.
    #[error(
        "the world snapshot's hash is {computed:#018x} but the save says {stored:#018x}; it is damaged"
    )]
    HashMismatch {
        /// The hash stored in the save.
        stored: u64,
        /// The hash of the blob present.
        computed: u64,
    },

    /// A row names an entity index beyond the entity table.
    #[error(
        "{type_path} is stored for entity #{entity_index}, but the snapshot has only {entity_count} entities"
    )]
    EntityIndexOutOfRange {
        /// The component's type path.
        type_path: String,
        /// The index in the row.
        entity_index: u32,
        /// The number of entities in the snapshot.
        entity_count: u32,
    },

    /// The same component is stored twice for one entity, or a type has two columns.
    #[error("{type_path} is stored twice{}", .entity_index.map(|i| format!(" for entity #{i}")).unwrap_or_default())]
    Duplicate {
        /// The type path.
        type_path: String,
        /// The entity, for a duplicated component.
        entity_index: Option<u32>,
    },

    /// A stored value does not decode as the registered type.
    #[error("could not decode {type_path}{}: {reason}", .entity_index.map(|i| format!(" of entity #{i}")).unwrap_or_else(|| " (resource)".into()))]
    Value {
        /// The type path of the stored column.
        type_path: String,
        /// The entity whose value failed, or `None` for a resource.
        entity_index: Option<u32>,
        /// What went wrong.
        reason: String,
    },

    /// A type is stored with a schema version this build has no decoder for.
    #[error(
        "{type_path} is stored at schema version {found}, but this build is at version {current} and has no migration from it; register one with `register_saveable_migration`"
    )]
    UnknownTypeVersion {
        /// The type path.
        type_path: String,
        /// The version in the blob.
        found: u32,
        /// The registered type's current version.
        current: u32,
    },

    /// A migration chain stops before today's type: the step from one of its types is missing.
    #[error(
        "{type_path} is stored at schema version {found}, whose migrations stop at {stopped_at}: no later migration starts from it; register the step with `register_saveable_migration_step` (or a migration from {stopped_at} to today's type)"
    )]
    MigrationStepMissing {
        /// The type path.
        type_path: String,
        /// The version in the blob.
        found: u32,
        /// The type the chain reached.
        stopped_at: &'static str,
    },

    /// A type changed since the save was written in a way a load cannot resolve by name (a
    /// field whose type changed, a serde type whose layout changed, another shape).
    #[error(
        "{type_path} cannot be read from this save: {path} is {stored} in the save and {today} today{changes}. To fix it, register a migration from the saved layout (`register_saveable_migration`, with a schema version bump) or undo the change"
    )]
    LayoutChanged {
        /// The stored column's type path.
        type_path: String,
        /// Where inside the type, e.g. `my_game::Stats.hp`.
        path: String,
        /// The saved layout there.
        stored: String,
        /// Today's layout there.
        today: String,
        /// Everything that changed in the type, as `; what changed: …` (empty when nothing
        /// more is known).
        changes: String,
    },

    /// A value could not be saved while capturing; nothing was written.
    #[error("could not save {type_path}: {field} cannot be saved: {reason}. To fix it, {fix}")]
    Capture {
        /// The registered type whose value failed.
        type_path: String,
        /// The field inside it, e.g. `my_game::Looks.level` (the type path itself when the
        /// failure is not in one field).
        field: String,
        /// What is wrong with it.
        reason: String,
        /// What to do about it.
        fix: String,
    },

    /// The save filter requires a component that is not registered for saving.
    #[error(
        "the save filter requires {component}, which is not registered for saving: loaded \
         entities would lack it, so the next save would find none of them. To fix it, register \
         it with `app.register_saveable::<{component}>()` (it derives `Reflect` with \
         `#[reflect(Component)]`), or filter on a component that is saved"
    )]
    FilterNotSaved {
        /// The component's type name.
        component: &'static str,
    },

    /// Two entities of the world have one save key, so a load could not tell which of them a
    /// saved reference meant.
    #[error(
        "entities {first} and {second} both have the save key {key:?}; keys must be unique in \
         a world. To fix it, give one of them another `SaveKey`{}",
        names_hint(first, second)
    )]
    DuplicateSaveKey {
        /// The key.
        key: String,
        /// One entity with it.
        first: NamedEntity,
        /// Another.
        second: NamedEntity,
    },

    /// The world lacks the resources the snapshot layer needs.
    #[error(
        "{0} is missing from the world; add `KeepsakePlugins` (or register a saveable type) first"
    )]
    NotSetUp(&'static str),
}

/// The byte layer's errors keep their variant and message: a game matches one error type.
impl From<keepsake_core::blob::BlobError> for SnapshotError {
    fn from(error: keepsake_core::blob::BlobError) -> Self {
        use keepsake_core::blob::BlobError;
        match error {
            BlobError::Truncated {
                what,
                offset,
                needed,
            } => SnapshotError::Truncated {
                what,
                offset,
                needed,
            },
            BlobError::Malformed { offset, reason } => SnapshotError::Malformed { offset, reason },
            BlobError::NewerLayout { found, supported } => {
                SnapshotError::NewerLayout { found, supported }
            }
            BlobError::OverBudget(refused) => SnapshotError::OverBudget(refused),
            BlobError::HashMismatch { stored, computed } => {
                SnapshotError::HashMismatch { stored, computed }
            }
            BlobError::EntityIndexOutOfRange {
                type_path,
                entity_index,
                entity_count,
            } => SnapshotError::EntityIndexOutOfRange {
                type_path,
                entity_index,
                entity_count,
            },
            BlobError::Duplicate {
                type_path,
                entity_index,
            } => SnapshotError::Duplicate {
                type_path,
                entity_index,
            },
            // `BlobError` is non-exhaustive to the crates that use it; a variant added there
            // keeps its message here until it gets a variant of its own.
            other => SnapshotError::Malformed {
                offset: 0,
                reason: other.to_string(),
            },
        }
    }
}

/// An entity in a message: its id, and its [`Name`](bevy::prelude::Name) when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedEntity {
    /// The entity.
    pub entity: bevy::prelude::Entity,
    /// Its name, if it has a `Name`.
    pub name: Option<String>,
}

impl std::fmt::Display for NamedEntity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{} ({name:?})", self.entity),
            None => write!(f, "{}", self.entity),
        }
    }
}

/// The other fix for a duplicate key met among names (`use_names_as_save_keys`).
fn names_hint(first: &NamedEntity, second: &NamedEntity) -> &'static str {
    match (&first.name, &second.name) {
        (Some(a), Some(b)) if a == b => {
            " or another `Name` (with `use_names_as_save_keys`, names are keys)"
        }
        _ => "",
    }
}
