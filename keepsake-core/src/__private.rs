//! What `bevy_keepsake` reaches in the core beyond the core's API: the blob writer and cursor
//! its capture and load drive, the cut points of a capture, the folder check with its own
//! decoding. Not a stable API and nothing a game calls: the name and the hidden docs say so,
//! and semver does not cover it. (Everything else the two crates share is public API.)

pub use crate::blob::cursor::{BlobCursor, ColumnHeader};
pub use crate::blob::entities::EntityTable;
pub use crate::blob::writer::{BlobWriter, OpenColumn, push_prefixed};
pub use crate::compat::folder::check_folder_with;
pub use crate::format::pieces::PieceCuts;

use crate::format::{BlobPieces, SaveBundle};

/// `bundle`, its blob cut into `pieces` by the snapshot layer that wrote it.
pub fn with_blob_pieces(bundle: SaveBundle, pieces: BlobPieces) -> SaveBundle {
    bundle.with_blob_pieces(pieces)
}
