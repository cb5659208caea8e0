//! The one error type of the snapshot layer.

/// Everything that can go wrong capturing a world into an `ecs_blob` or applying one back.
///
/// Decoding and validation happen before the world is touched: when [`decode`](super::decode)
/// returns an error, nothing has changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The blob itself does not read (the byte layer's error, its message unchanged):
    /// truncated, malformed, from a newer layout, over its memory budget, its hash not the
    /// stored one, a row naming an entity past the table, or a value stored twice.
    #[error(transparent)]
    Blob(#[from] keepsake_core::blob::BlobError),

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
        "{type_path} is stored at schema version {found}, but this build is at version {current} and has no migration from it; register one with `register_saveable_migration::<Old, Today>({found})`"
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
        "{type_path} cannot be read from this save: {path} is {stored} in the save and {today} today{changes}. To fix it, register a migration from the saved layout (`register_saveable_migration`, from the version the save stored the type at) or undo the change"
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

    /// Two entities of the world have one level key, so a load could not tell which of them a
    /// saved reference meant.
    #[error(
        "entities {first} and {second} both have the level key {key:?}; keys must be unique in \
         a world. To fix it, give one of them another `LevelKey`{}",
        names_hint(first, second)
    )]
    DuplicateLevelKey {
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

/// A budget refusal met outside the byte layer (the snapshot layer's own decoding) is the same
/// error as one met inside it.
impl From<crate::format::OverBudget> for SnapshotError {
    fn from(refused: crate::format::OverBudget) -> Self {
        SnapshotError::Blob(refused.into())
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

/// The other fix for a duplicate key met among names (`use_names_as_level_keys`).
fn names_hint(first: &NamedEntity, second: &NamedEntity) -> &'static str {
    match (&first.name, &second.name) {
        (Some(a), Some(b)) if a == b => {
            " or another `Name` (with `use_names_as_level_keys`, names are keys)"
        }
        _ => "",
    }
}
