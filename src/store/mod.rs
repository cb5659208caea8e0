//! The slot store: profiles, slots, durable atomic writes, generations, backups and listings.
//!
//! This layer is engine-free: it imports nothing from Bevy.
//!
//! Saves live in `<root>/<profile>/`, one file per generation of a slot (see the naming table in
//! [`SlotLayout`]'s module). [`SlotStore`] documents the guarantees; every filesystem call goes
//! through the [`FileSystem`] seam so tests can count calls or inject faults.
//!
//! # Write sequence
//!
//! A save takes the slot's lock, lists the folder, reads the newest generation's header (to
//! refuse writing over a save from a newer format version; a damaged newest generation, or one
//! that can never be read as a file — a folder of that name, no read permission — does not stop
//! the save, but another read error does), picks the next generation number (refusing with
//! [`StoreError::GenerationsExhausted`] when the newest already has the largest one), then:
//!
//! 1. creates `<name>.<pid>-<n>.tmp` beside the final file (`O_CREAT | O_EXCL`),
//! 2. writes the header, metadata, thumbnail and payload,
//! 3. `fsync`s the temporary file,
//! 4. renames it to the new generation's name (a name no file has),
//! 5. `fsync`s the folder,
//! 6. removes generations older than the configured number of backups, oldest first.
//!
//! A failure in steps 1–3 removes the temporary file; in step 4 too; in step 5 the new file is
//! removed again. No step is retried. Step 6 failing leaves an extra old file and is reported in
//! [`SaveReceipt::prune_error`], since the save itself is complete.
//!
//! # Concurrency
//!
//! Within a process, and across processes on filesystems where advisory locks work (local
//! Linux, macOS and Windows filesystems), saves, loads and deletes of one slot are serialised by
//! an exclusive lock on the slot's `.lock` file. Listings take no lock: they read whole headers
//! of files that are only ever created complete by a rename.

mod durable;
mod error;
mod fs;
mod import;
mod layout;
mod listing;
mod names;
mod slot_store;

pub use error::{GenerationFailure, StoreError};
pub use fs::{FileSystem, LockGuard, OsFileSystem, ReadFile, WriteFile};
pub use import::{ImportFile, ImportOutcome, ImportReceipt, StoredSave};
pub use layout::{SAVE_EXTENSION, SlotLayout};
// Cloud sync names remote files by slot the way the store names local ones.
#[cfg(feature = "cloud")]
pub(crate) use layout::{parse_slot_stem, slot_stem};
pub use listing::{SavedSlot, SlotEntry, SlotStatus};
pub use names::{MAX_NAME_LEN, ProfileName};
pub use slot_store::{LoadedSave, SaveReceipt, SlotStore, StoreConfig, default_save_root};
