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
//! A save takes the slot's lock (a lock file that cannot be used — a folder, a FIFO, a link, a
//! file this user may not open — refuses it with [`StoreError::UnusableEntry`]), lists the
//! folder, reads every generation's header (to refuse adding to a slot holding a save from a
//! newer format version at any position; a damaged generation, or one that can never be read
//! as a file — a folder of that name, no read permission — does not stop the save, but another
//! read error does), picks the next generation number (refusing with
//! [`StoreError::GenerationsExhausted`] when the newest already has the largest one), then:
//!
//! 1. creates `<name>.<pid>-<n>.tmp` beside the final file (`O_CREAT | O_EXCL`),
//! 2. writes the header, metadata, thumbnail and payload,
//! 3. `fsync`s the temporary file,
//! 4. renames it to the new generation's name (a name no file has; the rename is refused if one
//!    appeared meanwhile: a hard link to the new name, then the temporary name removed, see
//!    [`FileSystem::hard_link`]),
//! 5. `fsync`s the folder,
//! 6. removes the generations beyond the configured number of intact backups, oldest first.
//!    A backup is intact when every checksum it carries verifies, the payload's included
//!    (`format::verify_from`: chunk CRCs, or the seal); damaged generations do not count, so
//!    they never push out the last intact one, wherever the damage is. A generation whose
//!    intact header names a newer format version is never removed.
//!
//! # Speed of step 6
//!
//! Step 6 reads the older generations newest first, in full, until it has found the configured
//! number of intact ones, and only their metadata after that (and only for an import, which
//! must keep some saves); when the slot holds no more generations than backups it reads
//! nothing. With the default 3 backups a save thus reads and CRCs three times its own size
//! (nothing is decompressed or decrypted), about 0.2 ms per MB of backups where the files are
//! in the page cache: measured on a shared 2-core VM under load (`cargo bench --bench store`,
//! dev profile at `opt-level` 3, the same run settings before and after), `full_save/1MB`
//! went from 2.08 ms to 2.54 ms, `sealed_full_save/1MB` from 3.16 ms to 3.50 ms and
//! `full_save/1MB_world` (a 487 KB file) from 1.37 ms to 2.11 ms. Reading the backups on a
//! second thread while the write waits on the disk measured the same there (no core was
//! free), so the reads stay on the saving thread, in one order.
//!
//! A delete removes the older generations, fsyncs the folder, then removes the newest and
//! fsyncs again, so an interruption never leaves an older generation heading the slot.
//!
//! A failure in steps 1–3 removes the temporary file; in step 4 too; in step 5 the new file is
//! removed again. No step is retried. Step 6 failing leaves an extra old file and is reported in
//! [`SaveReceipt::prune_error`], since the save itself is complete.
//!
//! # What is read
//!
//! Only regular files are read as saves (or side files): [`FileSystem::open_read`] refuses
//! anything else without blocking ([`NotARegularFile`]; on Linux the open uses `O_NONBLOCK`,
//! so a FIFO does not wait for a writer), and the store reports it as [`StoreError::NotAFile`],
//! naming the file. Loads and listings treat such an entry like a damaged generation, and a
//! save goes on top of it. Every whole-file read (a load, a cloud upload's read, a side file)
//! checks the size the file reports against the limits' largest file
//! ([`Limits::max_file_len`](crate::format::Limits::max_file_len)) and then reads at most one
//! byte more, whatever that size said ([`StoreError::FileTooLarge`]); header and metadata reads
//! take exactly the lengths the verified header gives.
//!
//! A sealed save whose metadata (authenticated by the seal) names another slot than its file
//! name is refused with [`StoreError::SealedForAnotherSlot`] and skipped like a damaged
//! generation: a file copied into another slot's name does not load there. Listings, which do
//! not open the seal, show such a generation as damaged too, going by its unauthenticated
//! metadata. Unsealed files are not checked.
//!
//! # Concurrency
//!
//! Within a process, and across processes on filesystems where advisory locks work (local
//! Linux, macOS and Windows filesystems), saves, loads and deletes of one slot are serialised by
//! an exclusive lock on the slot's `.lock` file. Listings take no lock: they read whole headers
//! of files that are only ever created complete by a rename.
//!
//! # Where a storage backend would go (not built)
//!
//! The [`FileSystem`] seam is POSIX-shaped and synchronous: files, `O_EXCL`, rename, `fsync`,
//! advisory locks. That is the right level for fault injection (every call can fail on cue) and
//! the wrong one for a browser's key-value storage (wasm: IndexedDB, localStorage), which has no
//! rename, fsync or lock, and whose IndexedDB calls are asynchronous: emulating POSIX on it would
//! promise durability it cannot give.
//!
//! A backend trait would sit one level up, where the plugin, the UI and cloud sync hold an
//! `Arc<SlotStore>` today, with the operations they really call:
//!
//! | caller | [`SlotStore`] operations |
//! |--------|--------------------------|
//! | plugin (`src/plugin/`) | `open_with`, `save`, `next_autosave_slot`, `load`, `delete`, `list` |
//! | UI (`src/ui/`) | `read_thumbnail` |
//! | cloud (`src/cloud/`) | `config`, `decode_import`, `import`, `saves`, `saves_in`, `promote`, `read_generation_bytes`, `read_profile_file`, `write_profile_file`, `deleted_saves`, `is_deleted`, `dir` (to name its side file in errors) |
//! | games and tests | also `save_autosave`, `copy` (compositions of the above) and `generations` |
//!
//! Encoding and decoding (through `format`, with [`StoreConfig::decode_options`]), the autosave
//! ring's choice and the order a load falls back in are policy, not storage: they would stay
//! shared code rather than be rewritten per backend. What is file-shaped in today's API would
//! become backend-neutral: `path_of`, `dir`, the `path` of [`SaveReceipt`] and [`LoadedSave`],
//! and the paths in [`StoreError`]. The plugin's exit flush blocks until saves finish, which a
//! browser cannot do; an asynchronous backend needs the calls to stay off the main thread (the
//! plugin already runs them as tasks).
//!
//! Whatever it stores in, an implementation must promise what [`SlotStore`] promises:
//!
//! - **Atomic replace of a generation**: a new generation appears complete or not at all; no
//!   reader (load, listing, thumbnail, cloud upload) ever sees a partial save.
//! - **Durable when the call returns**: once `save`, `import`, `promote`, `delete` or
//!   `write_profile_file` returns `Ok`, the change survives a crash or a closed tab.
//! - **Generations newest first, with backups**: a save adds a generation and never overwrites
//!   one; at most [`StoreConfig::backups`] older ones stay, pruned only once the new one is
//!   durable; a load falls back to the newest intact older generation, says which it skipped
//!   ([`LoadedSave::skipped`]) and never deletes anything.
//! - **Per-slot serialisation of writers**: saves, loads, deletes, imports and promotions of one
//!   slot never interleave, across threads and across processes (or browser tabs) sharing the
//!   storage.
//! - **Listing never blocked by a writer**: `list` and `saves` take no slot lock and see each
//!   save either not yet or complete.
//! - **Newer-format saves never overwritten**: a slot holding a save from a newer format
//!   version, at any position, refuses saves and imports with [`StoreError::NewerFormat`] (a
//!   load stops at it the same way when no newer generation loads first); such a save is never
//!   pruned.
//! - **Typed errors**: every failure is a [`StoreError`] variant (a full quota is the disk-full
//!   case), so callers tell a passing fault from a damaged save without parsing messages.

mod choosing;
mod deleted;
mod deleting;
mod durable;
mod entered;
mod error;
mod files;
mod folders;
mod fs;
mod id_record;
mod import;
mod layout;
mod listing;
mod names;
#[cfg(all(test, target_os = "linux"))]
mod never_lose_tests;
mod slot_store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod view;

// A folder used as cloud storage writes its objects the way the store writes saves.
pub use deleted::DELETED_KEPT;
pub use durable::{Placement, write_durably};
pub use entered::{ENTERED_KEPT, entered_record_name};
pub use error::{GenerationFailure, StoreError};
pub use files::save_files;
pub use fs::{FileSystem, LockGuard, NotARegularFile, OsFileSystem, ReadFile, WriteFile};
pub use import::{ImportFile, ImportOutcome, ImportReceipt, ImportRules, StoredSave};
pub use layout::{SAVE_EXTENSION, SlotLayout};
// Cloud sync names remote files by slot the way the store names local ones.
pub use folders::create_dir_durably;
pub use layout::{is_temp_file, parse_slot_stem, slot_stem};
pub use listing::{SavedSlot, SlotEntry, SlotStatus};
pub use names::{MAX_NAME_LEN, ProfileName};
pub use slot_store::{
    LoadedSave, SaveOrSuperseded, SaveReceipt, SlotStore, StoreConfig, default_save_root,
};
