//! The plugin's error type, carried by failure events.

use crate::snapshot::SnapshotError;
use crate::store::StoreError;

/// Why a save, load or delete failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeepsakeError {
    /// The save folder could not be opened when the plugin started.
    #[error("the save folder is unavailable: {0}")]
    StoreUnavailable(String),
    /// Reading or writing the slot failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Capturing the world or decoding the saved world failed.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The background job ended without a result (it panicked).
    #[error("the background job stopped unexpectedly: {0}")]
    JobLost(String),
}
