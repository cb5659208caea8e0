//! The error of the byte layer: a blob or a type layout that does not read.
//!
//! `bevy_keepsake`'s `SnapshotError` wraps it whole (`SnapshotError::Blob`, its message
//! unchanged), so a game sees one error type from its loads.

use crate::format::OverBudget;

/// A blob (the save's `ecs_blob`) or an encoded type layout that cannot be read: truncated,
/// malformed, from a newer build, or over its memory budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlobError {
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
    OverBudget(#[from] OverBudget),

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
}

impl BlobError {
    /// The same error, a budget refusal's section named from further out (see
    /// [`OverBudget::within`]); other errors unchanged.
    pub fn within(self, outer: impl std::fmt::Display) -> Self {
        match self {
            BlobError::OverBudget(refused) => BlobError::OverBudget(refused.within(outer)),
            other => other,
        }
    }
}
