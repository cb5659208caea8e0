//! [`SlotStore`]: saves, loads, lists, deletes and copies slots of one profile.

use super::durable::{Placement, write_durably};
use super::error::{GenerationFailure, StoreError};
use super::folders::FolderChain;
use super::fs::{FileSystem, LockGuard, NotARegularFile, OsFileSystem};
use super::layout::{
    SlotLayout, generation_file_name, is_temp_file, lock_file_name, parse_generation_file,
    temp_file_target,
};
use super::listing::{SavedSlot, SlotEntry, SlotStatus, sort_most_recent_first};
use super::names::{ProfileName, validate_game_id};
use crate::format::{
    self, ChunkCache, Clock, DEVICE_ID_EXTRA, DEVICE_NAME_EXTRA, DecodeOptions, EncodeOptions,
    FormatError, SaveBundle, SaveMeta, SealKey, Sealing, SystemClock, Timestamp, UnsealedSaves,
};
use crate::slot::SlotId;
use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How a [`SlotStore`] is set up.
///
/// ```
/// use keepsake_core::store::{ProfileName, StoreConfig};
///
/// let config = StoreConfig::new("/tmp/my-game-saves").profile(ProfileName::new("alice")?);
/// assert_eq!(config.backups, 3);
/// # Ok::<(), keepsake_core::store::StoreError>(())
/// ```
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// The folder holding one sub-folder per profile.
    pub root: PathBuf,
    /// The profile whose slots this store manages.
    pub profile: ProfileName,
    /// How many slots of each kind exist.
    pub layout: SlotLayout,
    /// How many older generations each slot keeps besides its newest save (default 3).
    pub backups: u16,
    /// Compression, size limits and seal for writing; reading keeps to the same limits and
    /// opens sealed saves with the same key (see [`decode_options`](Self::decode_options)), so
    /// the store reads every file it writes.
    pub encode: EncodeOptions,
    /// When the store seals its saves (`encode.seal`): whether it still loads and imports
    /// unsealed files, such as saves made before the game sealed its saves. Default
    /// [`UnsealedSaves::Refuse`].
    pub unsealed: UnsealedSaves,
    /// Where the store and cloud sync over it read the time (default [`SystemClock`]): to tell
    /// a creation time from the future from a plausible one, and to schedule and record sync.
    pub clock: Arc<dyn Clock>,
    /// How long a save, delete or import waits for a slot's lock that another holder keeps
    /// (default 30 s): past it, it fails with [`StoreError::SlotBusy`] rather than hang the
    /// game on another process stuck while holding it. A load waits as long, then reads
    /// without the lock.
    pub lock_wait: Duration,
}

impl StoreConfig {
    /// A configuration with saves under `root`, profile `default`, 10 manual and 5 autosave
    /// slots, 3 backups per slot and LZ4 compression where it pays ([`CompressWhen::ItPays`]).
    ///
    /// [`CompressWhen::ItPays`]: crate::format::CompressWhen::ItPays
    pub fn new(root: impl Into<PathBuf>) -> Self {
        StoreConfig {
            root: root.into(),
            profile: ProfileName::default(),
            layout: SlotLayout::default(),
            backups: 3,
            encode: EncodeOptions::default(),
            unsealed: UnsealedSaves::default(),
            clock: Arc::new(SystemClock),
            lock_wait: Duration::from_secs(30),
        }
    }

    /// The same configuration with saves under the platform's per-user data directory for
    /// `game_id` (see [`default_save_root`]).
    pub fn for_game(game_id: &str) -> Result<Self, StoreError> {
        Ok(Self::new(default_save_root(game_id)?))
    }

    /// Sets the profile.
    #[must_use]
    pub fn profile(mut self, profile: ProfileName) -> Self {
        self.profile = profile;
        self
    }

    /// Sets the slot counts.
    #[must_use]
    pub fn layout(mut self, layout: SlotLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Sets how many older generations each slot keeps.
    #[must_use]
    pub fn backups(mut self, backups: u16) -> Self {
        self.backups = backups;
        self
    }

    /// Seals every save under `key` (format version 3) and opens sealed saves with it; unsealed
    /// files are then loaded only as [`unsealed`](Self::unsealed) says.
    #[must_use]
    pub fn seal(mut self, key: SealKey) -> Self {
        self.encode.seal = Sealing::Key(key);
        self
    }

    /// Whether a sealing store loads and imports unsealed files (default refuse).
    #[must_use]
    pub fn unsealed(mut self, unsealed: UnsealedSaves) -> Self {
        self.unsealed = unsealed;
        self
    }

    /// Reads the time from `clock` instead of the system's (tests: a device whose clock is
    /// skewed or jumps back).
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets how long the store waits for a slot's lock another holder keeps.
    #[must_use]
    pub fn lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// The current time on the configured [`clock`](Self::clock).
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The folder of the configured profile: `<root>/<profile>`.
    pub fn profile_dir(&self) -> PathBuf {
        self.root.join(self.profile.as_str())
    }

    /// How every read of the store decodes a file: under the limits it writes with
    /// (`encode.limits`), opening sealed saves with the key it seals with (`encode.seal`) and
    /// treating unsealed ones as `unsealed` says. The one place the store's reading options are
    /// built, so every read (loads, listings, imports, cloud sync) gets them.
    ///
    /// ```
    /// use keepsake_core::store::StoreConfig;
    ///
    /// let mut config = StoreConfig::new("/tmp/my-game-saves");
    /// config.encode.limits.max_payload_uncompressed = 64 << 20;
    /// assert_eq!(config.decode_options().limits, config.encode.limits);
    /// ```
    pub fn decode_options(&self) -> DecodeOptions {
        DecodeOptions::new()
            .limits(self.encode.limits)
            .seal(self.encode.seal)
            .unsealed(self.unsealed)
    }
}

/// The platform's per-user data folder for `game_id`, with a `saves` folder inside:
/// `~/.local/share/<game_id>/saves` on Linux, `%APPDATA%\<game_id>\saves` on Windows,
/// `~/Library/Application Support/<game_id>/saves` on macOS (looked up with the `dirs` crate).
pub fn default_save_root(game_id: &str) -> Result<PathBuf, StoreError> {
    validate_game_id(game_id)?;
    let data = dirs::data_dir().ok_or(StoreError::NoDataDir)?;
    Ok(data.join(game_id).join("saves"))
}

/// What a successful save wrote.
#[derive(Debug)]
pub struct SaveReceipt {
    /// The slot written.
    pub slot: SlotId,
    /// The generation number of the new file.
    pub generation: u64,
    /// The new file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The id of the save.
    pub save_id: Uuid,
    /// The metadata written (its thumbnail, if any, left out).
    pub meta: SaveMeta,
    /// Older generations removed because the slot keeps only so many backups.
    pub pruned: usize,
    /// Removing an old generation failed: the save itself is complete and durable, the slot
    /// just keeps an extra old file until the next save.
    pub prune_error: Option<StoreError>,
}

/// What [`SlotStore::save_unless_superseded`] did.
#[derive(Debug)]
pub enum SaveOrSuperseded {
    /// The save was written.
    Saved(Box<SaveReceipt>),
    /// Nothing was written: the slot's newest save (its metadata here) holds everything the
    /// save would have.
    Superseded(Box<SaveMeta>),
}

/// A save loaded from a slot, possibly from an older generation.
#[derive(Debug)]
pub struct LoadedSave {
    /// The slot.
    pub slot: SlotId,
    /// The generation that loaded.
    pub generation: u64,
    /// The file that loaded.
    pub path: PathBuf,
    /// Its metadata, with the thumbnail.
    pub meta: SaveMeta,
    /// Its payload.
    pub bundle: SaveBundle,
    /// Newer generations that failed to load, newest first, and why.
    pub skipped: Vec<GenerationFailure>,
}

impl LoadedSave {
    /// Whether the newest generation was damaged and an older one was used.
    pub fn restored_from_backup(&self) -> bool {
        !self.skipped.is_empty()
    }
}

/// The saves of one profile: 10 manual slots, a ring of 5 autosave slots and a quicksave slot by
/// default, each keeping its newest save plus a few older generations.
///
/// # Guarantees
///
/// - Every save is durable and atomic: it is written to a temporary file in the same folder,
///   fsynced, renamed to a new generation's name and the folder fsynced. A crash at any point
///   leaves each slot with either its previous generations or those plus the new one.
/// - The save folder itself is durable before anything is confirmed in it: every open flushes
///   each folder holding it, up to the root of the filesystem (one that an earlier open made
///   and could not flush looks like any other), and while one of those flushes has failed
///   since the open, a write flushes them first or fails ([`StoreError::FolderNotFlushed`]).
/// - A save never overwrites an existing file; older generations beyond
///   [`StoreConfig::backups`] are removed only after the new one is durable.
/// - A failed save or load changes no existing file, and a load never deletes anything.
/// - Only backups whose every checksum verifies count toward [`StoreConfig::backups`], so a
///   prune never removes the last intact save of a slot, wherever another file is damaged.
/// - A save from a newer format version (its header intact) is never pruned, and a slot
///   holding one anywhere takes no save ([`StoreError::NewerFormat`]).
/// - An interrupted delete leaves the slot as it was, or with its newest save and fewer
///   backups, or empty; never an older save on top.
/// - Saves and loads of one slot take an exclusive lock on the slot's lock file, so two threads
///   (or two processes, on filesystems with working advisory locks) never write one slot at the
///   same time: each save gets its own generation and no file is torn or interleaved. A save
///   records what the slot held as seen under that lock: another save of the slot placed
///   while it was being encoded is in its record.
///
/// ```
/// use keepsake_core::{SlotId, format::{SaveBundle, SaveMeta, WorldState}, store::{SlotStore, StoreConfig}};
///
/// let dir = tempfile::tempdir()?;
/// let store = SlotStore::open(StoreConfig::new(dir.path()))?;
/// let bundle = SaveBundle::new(WorldState { tick: 10, ..Default::default() });
/// store.save(SlotId::Manual(0), SaveMeta::new(SlotId::Manual(0)).with_title("Camp"), &bundle)?;
///
/// let loaded = store.load(SlotId::Manual(0))?;
/// assert_eq!(loaded.bundle, bundle);
/// assert!(!loaded.restored_from_backup());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct SlotStore {
    config: StoreConfig,
    pub(super) dir: PathBuf,
    pub(super) fs: Arc<dyn FileSystem>,
    /// The stored chunks of this profile's last saves, shared by the store's clones: a save of
    /// a world that changed a little compresses only the chunks around the changes.
    chunks: Arc<ChunkCache>,
    /// Whether the folders holding `dir` are flushed, shared by the store's clones: until they
    /// are, every write flushes them first.
    folder: Arc<FolderChain>,
}

impl SlotStore {
    /// Opens (creating if needed) the profile folder on the real filesystem, removes
    /// temporary files left by interrupted saves and flushes the folder (fsync).
    pub fn open(config: StoreConfig) -> Result<Self, StoreError> {
        Self::open_with(config, Arc::new(OsFileSystem))
    }

    /// Like [`open`](Self::open), with every filesystem call going through `fs`.
    pub fn open_with(config: StoreConfig, fs: Arc<dyn FileSystem>) -> Result<Self, StoreError> {
        let dir = config.profile_dir();
        let folder = Arc::new(FolderChain::create(fs.as_ref(), &dir)?);
        let store = SlotStore {
            config,
            dir,
            fs,
            chunks: Arc::default(),
            folder,
        };
        store.recover_what_a_death_left()?;
        // What a process that died left unflushed in the folder (a delete's removals, a
        // rename whose flush it never reached) is made durable now, best effort: a power loss
        // later in this session must not bring back a save the player saw deleted, nor
        // undo a state a load already showed (simulator seeds 414391, 414642).
        let _ = store.sync_folder();
        Ok(store)
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The stored chunks of this profile's last saves, which the next save takes over where
    /// the world did not change (shared by the store's clones).
    pub fn chunk_cache(&self) -> &ChunkCache {
        &self.chunks
    }

    /// The profile folder holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves `bundle` with `meta` into `slot` as a new generation (setting `meta.slot`).
    ///
    /// A damaged or unreadable newest generation does not stop the save: the new generation
    /// supersedes it. The save is refused, writing nothing, when any generation of the slot is
    /// a save from a newer format version ([`StoreError::NewerFormat`]), when the newest already
    /// has the largest generation number ([`StoreError::GenerationsExhausted`]), and when the
    /// slot's lock file cannot be used ([`StoreError::UnusableEntry`]).
    pub fn save(
        &self,
        slot: SlotId,
        meta: SaveMeta,
        bundle: &SaveBundle,
    ) -> Result<SaveReceipt, StoreError> {
        // No head supersedes a plain save: the type says so.
        match self.save_checked(slot, meta, bundle, |_| None::<Infallible>)? {
            Ok(receipt) => Ok(receipt),
            Err(never) => match never {},
        }
    }

    /// Saves as [`save`](Self::save) does, unless the slot's newest readable save, read under
    /// the slot's lock, is one `supersedes` says holds everything this one would: then nothing
    /// is written and that save's metadata is returned. For a save of an older state that
    /// must never head a slot over a newer one written meanwhile (the crash save of an
    /// in-memory image, when an autosave in flight took the slot's lock first).
    pub fn save_unless_superseded(
        &self,
        slot: SlotId,
        meta: SaveMeta,
        bundle: &SaveBundle,
        supersedes: impl Fn(&SaveMeta) -> bool,
    ) -> Result<SaveOrSuperseded, StoreError> {
        let superseded_by = |head: &SaveMeta| supersedes(head).then(|| Box::new(head.clone()));
        Ok(
            match self.save_checked(slot, meta, bundle, superseded_by)? {
                Ok(receipt) => SaveOrSuperseded::Saved(Box::new(receipt)),
                Err(head) => SaveOrSuperseded::Superseded(head),
            },
        )
    }

    /// Saves as [`save`](Self::save) does, unless `superseded_by` finds, in the slot's newest
    /// readable save read under the slot's lock, a reason (`S`) to write nothing.
    fn save_checked<S>(
        &self,
        slot: SlotId,
        mut meta: SaveMeta,
        bundle: &SaveBundle,
        superseded_by: impl Fn(&SaveMeta) -> Option<S>,
    ) -> Result<Result<SaveReceipt, S>, StoreError> {
        self.check_slot(slot)?;
        self.flush_folder_chain()?;
        meta.slot = slot;
        let seen = self.held_in_view(slot)?;
        let mut made = self.encode_in_view(meta.clone(), bundle, &seen)?;

        let _lock = self.lock(slot)?;
        // A dead delete's note is settled before a generation is added (`deleting.rs`).
        let _ = self.settle_stopped_writes(slot);
        // What the slot held was read before its lock, so the world is not encoded while the
        // lock is held; another writer of the slot (the crash hook's save in one thread, an
        // autosave in flight in another) may have placed a save since. A save recording an
        // older view would be ordered as made apart from that one, so it is made again.
        let held = self.held_in_view(slot)?;
        if let Some(reason) = held.0.first().and_then(|head| superseded_by(&head.meta)) {
            return Ok(Err(reason));
        }
        if held != seen {
            made = self.encode_in_view(meta, bundle, &held)?;
        }
        let (meta, encoded) = made;
        let generations = self.generations(slot)?;
        let generation = self.next_generation(slot, generations.first().copied())?;
        let name = generation_file_name(slot, generation);
        // Named before its file exists: should the file not read when the player deletes the
        // slot, the delete still names it (`entered.rs`). A hint: an entry that cannot be
        // written does not stop the save, and the slot's next entry names it.
        let _ = self.note_entered(slot, &meta, &held.0);
        let path = write_durably(
            self.fs.as_ref(),
            &self.dir,
            &name,
            &encoded.parts(),
            Placement::New,
        )?;
        let (pruned, prune_error) = self.prune(slot, &generations, &HashSet::new());
        Ok(Ok(SaveReceipt {
            slot,
            generation,
            path,
            bytes: encoded.len(),
            save_id: meta.save_id,
            meta: SaveMeta {
                thumbnail: None,
                ..meta
            },
            pruned,
            prune_error,
        }))
    }

    /// Saves into the autosave ring: the first empty autosave slot, or else the slot after the
    /// one holding the most recent autosave (which is the one holding the oldest).
    pub fn save_autosave(
        &self,
        meta: SaveMeta,
        bundle: &SaveBundle,
    ) -> Result<SaveReceipt, StoreError> {
        let slot = self.next_autosave_slot()?;
        self.save(slot, meta, bundle)
    }

    /// The slot the next autosave goes to (see [`save_autosave`](Self::save_autosave)).
    /// A damaged slot whose backup is unreadable too counts as empty. A slot the save would be
    /// refused in (holding a save from a newer format version, one of whose files cannot be
    /// read right now, or whose lock file cannot be used) is passed over for the next one in
    /// the ring, so one jammed slot never stops autosaving; only when every slot is jammed is
    /// the first refusal returned.
    pub fn next_autosave_slot(&self) -> Result<SlotId, StoreError> {
        let ring = self.config.layout.auto;
        if ring == 0 {
            return Err(StoreError::NoSuchSlot {
                slot: SlotId::Auto(0),
                manual: self.config.layout.manual,
                auto: ring,
            });
        }
        let entries = self.list_slots((0..ring).map(SlotId::Auto))?;
        let mut refusal = None;
        for slot in ring_order(&entries, self.config.now()) {
            match self.check_writable(slot) {
                Ok(()) => return Ok(slot),
                Err(error) => {
                    refusal.get_or_insert(error);
                }
            }
        }
        Err(refusal.expect("the ring has at least one slot"))
    }

    /// Refuses, as a save would, a slot whose lock cannot be taken, that holds a save this
    /// build must not bury, or whose generations are used up.
    fn check_writable(&self, slot: SlotId) -> Result<(), StoreError> {
        self.check_lockable(slot)?;
        let newest = self.generations(slot)?.first().copied();
        self.next_generation(slot, newest).map(|_| ())
    }

    /// Loads the newest generation of `slot` that decodes, newest first.
    ///
    /// When newer generations are damaged the result says so ([`LoadedSave::skipped`]); when
    /// all are damaged the error lists why each failed. Nothing is deleted or rewritten either
    /// way. A save written by a newer format version stops the load with
    /// [`StoreError::NewerFormat`] instead of silently loading an older backup; a file whose
    /// version field is damaged is not one (its header checksum fails) and is skipped like any
    /// damaged generation.
    ///
    /// Skipped the same way: an entry that is not a regular file ([`StoreError::NotAFile`]: a
    /// FIFO, a device, a folder; refused without blocking) and, in a sealing store, a sealed
    /// save written for another slot ([`StoreError::SealedForAnotherSlot`]: a file copied into
    /// this slot's name by hand).
    pub fn load(&self, slot: SlotId) -> Result<LoadedSave, StoreError> {
        self.check_slot(slot)?;
        let _lock = self.lock_to_read(slot);
        let generations = self.generations(slot)?;
        if generations.is_empty() {
            return Err(StoreError::EmptySlot(slot));
        }
        let mut skipped = Vec::new();
        for generation in generations {
            let path = self.path_of(slot, generation);
            match self.read_generation(&path) {
                Ok(decoded) => {
                    return Ok(LoadedSave {
                        slot,
                        generation,
                        path,
                        meta: decoded.meta,
                        bundle: decoded.bundle,
                        skipped,
                    });
                }
                Err(StoreError::Format {
                    source: FormatError::NewerVersion { found, supported },
                    ..
                }) => {
                    return Err(StoreError::NewerFormat {
                        slot,
                        found,
                        supported,
                    });
                }
                Err(error) => skipped.push(GenerationFailure { generation, error }),
            }
        }
        Err(StoreError::AllGenerationsDamaged {
            slot,
            failures: skipped,
        })
    }

    /// Lists every slot of the layout, reading only each newest generation's header and
    /// metadata (and older ones' when the newest is damaged), most recent first.
    pub fn list(&self) -> Result<Vec<SlotEntry>, StoreError> {
        let mut entries = self.list_slots(self.config.layout.slots())?;
        sort_most_recent_first(&mut entries);
        Ok(entries)
    }

    /// Reads the thumbnail of one generation of a slot, seeking past everything else.
    pub fn read_thumbnail(
        &self,
        slot: SlotId,
        generation: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.check_slot(slot)?;
        let path = self.path_of(slot, generation);
        let mut file = self.fs.open_read(&path).map_err(StoreError::open(&path))?;
        format::read_thumbnail(&mut file, &self.config.decode_options())
            .map_err(|source| StoreError::Format { path, source })
    }

    /// Deletes every generation of `slot` and returns how many files were removed.
    ///
    /// Every generation but the slot's head (where a load stops: the newest that verifies, or
    /// a newer build's save) goes first and their removal is made durable (a folder fsync) before the head
    /// is removed, then the folder is fsynced again: two folder fsyncs whatever the number of
    /// generations. Removals not yet flushed may reach the disk in any combination, so
    /// removing all at once with one fsync at the end could leave an older generation without
    /// the head above it (a deleted slot coming back older), and so could any order; an fsync
    /// after each removal would be correct too, at one fsync per backup. This way an
    /// interruption leaves the slot as it was, or with its head and fewer other files, or
    /// empty. Before anything is removed, the saves the slot holds are added to its
    /// record of deleted saves (see [`deleted_saves`](Self::deleted_saves)), so cloud sync never
    /// brings them back.
    pub fn delete(&self, slot: SlotId) -> Result<usize, StoreError> {
        self.check_slot(slot)?;
        let _lock = self.lock(slot)?;
        // A note this delete's own would replace is settled first, or the delete waits.
        self.settle_stopped_writes(slot)?;
        let generations = self.generations(slot)?;
        let Some(head) = self.head_generation(slot, &generations)? else {
            // An empty slot may be empty only in the page cache: a failed save removes its
            // file again without a flush, and a power loss brings it back. The delete the
            // player was told is done makes the slot's emptiness last (simulator seed 513651).
            self.sync_folder()?;
            return Ok(0);
        };
        let others: Vec<u64> = (generations.iter().copied())
            .filter(|&generation| generation != head)
            .collect();
        // What it held is recorded first, so cloud sync never brings it back.
        let note = self.note_deleted(slot)?;
        match self.remove_generations(slot, head, &others) {
            Ok(()) => {
                self.end_delete_in_flight(slot);
                Ok(generations.len())
            }
            Err(error) => {
                let _ = self.stop_delete(slot, &note);
                Err(error)
            }
        }
    }

    /// The generation a load of the slot stops at (the newest that verifies, or a newer
    /// build's save, which a load refuses), which a delete removes last; the newest generation
    /// when none verifies, `None` for an empty slot.
    /// Simulator seed 336720: the newest file was damaged, the load returned the save below
    /// it, and a delete that removed the older generations first and then failed on the
    /// damaged one lost that confirmed save. A read that may pass fails the delete.
    fn head_generation(
        &self,
        slot: SlotId,
        generations: &[u64],
    ) -> Result<Option<u64>, StoreError> {
        for &generation in generations {
            match self.verify_generation(&self.path_of(slot, generation)) {
                Ok(_) => return Ok(Some(generation)),
                // A newer build's save heads the slot as a load sees it (which refuses there).
                Err(error) if error.is_newer_format() => return Ok(Some(generation)),
                Err(error) if error.may_pass() => return Err(error),
                Err(_) => {}
            }
        }
        Ok(generations.first().copied())
    }

    /// Removes a slot's files, the others first and the head (the save a load returns) last:
    /// a delete cut short leaves the slot's head where it was, never an older save alone.
    fn remove_generations(
        &self,
        slot: SlotId,
        head: u64,
        others: &[u64],
    ) -> Result<(), StoreError> {
        if !others.is_empty() {
            for &generation in others.iter().rev() {
                self.remove_for_delete(slot, generation)?;
            }
            self.sync_folder()?;
        }
        self.remove_for_delete(slot, head)?;
        self.sync_folder()
    }

    fn remove_for_delete(&self, slot: SlotId, generation: u64) -> Result<(), StoreError> {
        let path = self.path_of(slot, generation);
        self.fs
            .remove_file(&path)
            .map_err(StoreError::io("delete", &path))
    }

    /// Flushes the folders holding the save folder if the open could not
    /// ([`StoreError::FolderNotFlushed`] if it still cannot): what a write confirms must not
    /// vanish with the save folder's own entry. Called before anything is written.
    pub(super) fn flush_folder_chain(&self) -> Result<(), StoreError> {
        self.folder
            .flush_before_writing(self.fs.as_ref(), &self.dir)
    }

    /// Flushes the save folder (fsync), so removals and renames in it survive a power loss.
    pub(super) fn sync_folder(&self) -> Result<(), StoreError> {
        self.fs
            .sync_dir(&self.dir)
            .map_err(StoreError::io("flush (fsync) the save folder", &self.dir))
    }

    /// Copies the save in `from` (its newest loadable generation) into `to` as a new save with
    /// a new id; the original's time, title and payload are kept, its device is not (the copy
    /// records none: a device's name and id say which installation made a save).
    pub fn copy(&self, from: SlotId, to: SlotId) -> Result<SaveReceipt, StoreError> {
        let loaded = self.load(from)?;
        let mut meta = SaveMeta {
            save_id: Uuid::new_v4(),
            ..loaded.meta
        };
        // The copy is a new save, made here: the original's device did not make it. Kept,
        // its id would let the copy go on counting that device's line of saves in `to`,
        // giving a count that device gives too (two saves made apart would look ordered).
        meta.extras.remove(DEVICE_ID_EXTRA);
        meta.extras.remove(DEVICE_NAME_EXTRA);
        self.save(to, meta, &loaded.bundle)
    }

    /// The generation numbers present for `slot`, newest first.
    pub fn generations(&self, slot: SlotId) -> Result<Vec<u64>, StoreError> {
        Ok(self.scan()?.remove(&slot).unwrap_or_default())
    }

    /// The path of one generation of a slot.
    pub fn path_of(&self, slot: SlotId, generation: u64) -> PathBuf {
        self.dir.join(generation_file_name(slot, generation))
    }

    pub(super) fn check_slot(&self, slot: SlotId) -> Result<(), StoreError> {
        let layout = self.config.layout;
        if layout.contains(slot) {
            Ok(())
        } else {
            Err(StoreError::NoSuchSlot {
                slot,
                manual: layout.manual,
                auto: layout.auto,
            })
        }
    }

    /// The slot's lock, waiting for it at most [`StoreConfig::lock_wait`] (polled, so a holder
    /// that never lets go cannot hang the game).
    pub(super) fn lock(&self, slot: SlotId) -> Result<Box<dyn LockGuard>, StoreError> {
        let path = self.dir.join(lock_file_name(slot));
        let waited = self.config.lock_wait;
        let deadline = Instant::now() + waited;
        let mut pause = Duration::from_millis(1);
        loop {
            let taken = self.fs.try_lock(&path);
            let taken = taken.map_err(StoreError::entry(slot, LOCK_ROLE, LOCK_ACTION, &path))?;
            if let Some(guard) = taken {
                return Ok(guard);
            }
            if Instant::now() >= deadline {
                return Err(StoreError::SlotBusy { slot, path, waited });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Whether `slot`'s lock can be taken, without waiting for it: a slot whose lock file is
    /// something else than a regular file, or cannot be opened, refuses every save
    /// ([`StoreError::UnusableEntry`]). One held by another save is fine: that save ends.
    fn check_lockable(&self, slot: SlotId) -> Result<(), StoreError> {
        let path = self.dir.join(lock_file_name(slot));
        self.fs.try_lock(&path).map(drop).map_err(StoreError::entry(
            slot,
            LOCK_ROLE,
            LOCK_ACTION,
            &path,
        ))
    }

    /// The slot's lock for a read, when it can be had. A read does not need it to see whole
    /// files (saves appear by atomic rename); it keeps a concurrent prune from removing the
    /// file being chosen. A folder the game may only read (a read-only mount, a save folder
    /// without write permission) refuses the lock file, and there nothing prunes; wherever
    /// else the lock fails, the worst a concurrent prune can do is remove a backup the load
    /// then skips like a damaged one.
    fn lock_to_read(&self, slot: SlotId) -> Option<Box<dyn LockGuard>> {
        self.lock(slot).ok()
    }

    /// Every slot's generations found in the folder, newest first.
    pub(super) fn scan(&self) -> Result<BTreeMap<SlotId, Vec<u64>>, StoreError> {
        let names = self.list_folder()?;
        let mut slots: BTreeMap<SlotId, Vec<u64>> = BTreeMap::new();
        for name in &names {
            if let Some((slot, generation)) = name.to_str().and_then(parse_generation_file) {
                slots.entry(slot).or_default().push(generation);
            }
        }
        for generations in slots.values_mut() {
            generations.sort_unstable_by(|a, b| b.cmp(a));
        }
        Ok(slots)
    }

    /// The names in the profile folder.
    pub(super) fn list_folder(&self) -> Result<Vec<std::ffi::OsString>, StoreError> {
        (self.fs.list_dir(&self.dir)).map_err(StoreError::io("list the save folder", &self.dir))
    }

    fn list_slots(
        &self,
        slots: impl Iterator<Item = SlotId>,
    ) -> Result<Vec<SlotEntry>, StoreError> {
        let mut found = self.scan()?;
        Ok(slots
            .map(|slot| {
                let generations = found.remove(&slot).unwrap_or_default();
                SlotEntry {
                    slot,
                    status: self.slot_status(slot, &generations),
                }
            })
            .collect())
    }

    pub(super) fn slot_status(&self, slot: SlotId, generations: &[u64]) -> SlotStatus {
        let Some(&newest) = generations.first() else {
            return SlotStatus::Empty;
        };
        let summarize = |generation| {
            self.read_summary(&self.path_of(slot, generation))
                .map(|summary| SavedSlot {
                    meta: summary.meta,
                    generation,
                    generations: generations.len(),
                    file_len: summary.header.file_len(),
                    has_thumbnail: summary.header.thumbnail_len > 0,
                    sealed: summary.header.is_sealed(),
                })
        };
        match summarize(newest) {
            Ok(saved) => SlotStatus::Saved(saved),
            Err(error) => SlotStatus::Damaged {
                newest_generation: newest,
                reason: error.to_string(),
                backup: generations[1..].iter().find_map(|&g| summarize(g).ok()),
            },
        }
    }

    /// Reads a generation's header and metadata. A sealed save under another slot's file name
    /// is refused ([`StoreError::SealedForAnotherSlot`]) as its load would be; here the metadata
    /// is not authenticated (a listing does not open the seal), so this is a courtesy to the
    /// menu, the load being what enforces it.
    pub(super) fn read_summary(&self, path: &Path) -> Result<format::SaveSummary, StoreError> {
        let mut file = self.fs.open_read(path).map_err(StoreError::open(path))?;
        let summary =
            format::read_summary(&mut file, &self.config.decode_options()).map_err(|source| {
                StoreError::Format {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        check_sealed_slot(path, &summary.header, &summary.meta)?;
        Ok(summary)
    }

    /// Reads a whole file once and checks every checksum it carries, the payload's included,
    /// without decompressing it ([`format::verify_from`]): whether a generation is an intact
    /// backup. A sealed save under another slot's file name is not one (its load refuses it).
    pub(super) fn verify_generation(&self, path: &Path) -> Result<format::SaveSummary, StoreError> {
        let mut file = self.fs.open_read(path).map_err(StoreError::open(path))?;
        let summary =
            format::verify_from(&mut file, &self.config.decode_options()).map_err(|source| {
                StoreError::Format {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        check_sealed_slot(path, &summary.header, &summary.meta)?;
        Ok(summary)
    }

    /// Reads a whole generation (at most the limits' largest file) and decodes it; a sealed
    /// save written for another slot than the one its file name says is refused
    /// ([`StoreError::SealedForAnotherSlot`]).
    pub(super) fn read_generation(&self, path: &Path) -> Result<format::DecodedSave, StoreError> {
        let options = self.config.decode_options();
        let bytes = self.read_whole(path, options.limits.max_file_len())?;
        let decoded =
            format::decode_owned(bytes, &options).map_err(|source| StoreError::Format {
                path: path.to_path_buf(),
                source,
            })?;
        check_sealed_slot(path, &decoded.header, &decoded.meta)?;
        Ok(decoded)
    }

    /// Reads a whole file of at most `limit` bytes. The size the file reports is checked first,
    /// and the read stops once more than `limit` bytes arrived whatever that size said (a file
    /// growing meanwhile, or a filesystem that reports sizes wrongly), so no read holds more
    /// than `limit + 1` bytes.
    pub(super) fn read_whole(&self, path: &Path, limit: u64) -> Result<Vec<u8>, StoreError> {
        let mut file = self.fs.open_read(path).map_err(StoreError::open(path))?;
        let len = file
            .byte_len()
            .map_err(StoreError::io("read the size of", path))?;
        let too_large = |len| StoreError::FileTooLarge {
            path: path.to_path_buf(),
            len,
            limit,
        };
        if len > limit {
            return Err(too_large(len));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        (&mut file)
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(StoreError::io("read", path))?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// The number the next save of `slot` gets: one above its newest generation, once that
    /// generation is known not to be a save this build must not bury (see
    /// [`refuse_newer_format`](Self::refuse_newer_format)) and one above it still exists.
    fn next_generation(&self, slot: SlotId, newest: Option<u64>) -> Result<u64, StoreError> {
        let Some(newest) = newest else {
            return Ok(1);
        };
        self.refuse_newer_format(slot, newest)?;
        // Only a file named by hand can reach the top; wrapping would hide the new save behind
        // it, so the save is refused and the file left for the player or developer to rename.
        newest
            .checked_add(1)
            .ok_or_else(|| StoreError::GenerationsExhausted {
                slot,
                path: self.path_of(slot, newest),
            })
    }

    /// Refuses to add a generation to a slot holding a save from a newer format version at any
    /// position, not only at its head: such a save may lie below a damaged newest file, or a
    /// newer build may have written it below an older build's save, and every generation this
    /// build added on top would bring it nearer to the prune (which keeps it, see
    /// [`stale_generations`](Self::stale_generations)) and hide it from the player's next load
    /// in the newer build. Reads each generation's 40-byte header, `newest` first.
    ///
    /// A generation whose header is damaged does not block the save: a damaged version field
    /// cannot be told apart from any other damage (the header checksum fails either way), and
    /// the new save supersedes it. Nor does one that can never be read as a file (a folder of
    /// that name, no permission; see [`is_unreadable_entry`]), or one gone since the listing.
    /// A generation whose read fails for another reason (an I/O error that may pass) does: the
    /// store cannot tell what it would be burying.
    pub(super) fn refuse_newer_format(&self, slot: SlotId, newest: u64) -> Result<(), StoreError> {
        let older = self.generations(slot)?.into_iter().filter(|&g| g != newest);
        for generation in std::iter::once(newest).chain(older) {
            match self.header_version(&self.path_of(slot, generation)) {
                HeaderVersion::Newer { found, supported } => {
                    return Err(StoreError::NewerFormat {
                        slot,
                        found,
                        supported,
                    });
                }
                HeaderVersion::Unknown(error) => return Err(error),
                HeaderVersion::NotNewer => {}
            }
        }
        Ok(())
    }

    /// Whether `slot` holds a save from a newer format version at any position: this build
    /// places no save in it, its own or an imported one ([`StoreError::NewerFormat`]), until
    /// the player deletes the slot or the newer build's file leaves it. Reads each
    /// generation's 40-byte header; a header that cannot be read now, for a reason that may
    /// pass, is the error.
    pub fn holds_newer_format(&self, slot: SlotId) -> Result<bool, StoreError> {
        self.check_slot(slot)?;
        let Some(&newest) = self.generations(slot)?.first() else {
            return Ok(false);
        };
        match self.refuse_newer_format(slot, newest) {
            Ok(()) => Ok(false),
            Err(StoreError::NewerFormat { .. }) => Ok(true),
            Err(error) => Err(error),
        }
    }

    /// What the header of the generation at `path` says of its format version (see
    /// [`HeaderVersion`]).
    fn header_version(&self, path: &Path) -> HeaderVersion {
        let mut file = match self.fs.open_read(path) {
            Ok(file) => file,
            Err(source) if is_unreadable_entry(&source) || is_gone(&source) => {
                return HeaderVersion::NotNewer;
            }
            Err(source) => {
                return HeaderVersion::Unknown(StoreError::Io {
                    action: "open, to read its format version,",
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        match format::read_header(&mut file) {
            Err(FormatError::NewerVersion { found, supported }) => {
                HeaderVersion::Newer { found, supported }
            }
            Err(FormatError::Io { source, .. })
                if !is_unreadable_entry(&source) && !is_gone(&source) =>
            {
                HeaderVersion::Unknown(StoreError::Io {
                    action: "read the format version of",
                    path: path.to_path_buf(),
                    source,
                })
            }
            _ => HeaderVersion::NotNewer,
        }
    }

    /// Removes the generations of `older` (the slot's generations below a new save that is
    /// durable now, newest first) beyond the configured backups, oldest first, and returns how
    /// many went and the first failure.
    ///
    /// Only generations that verify in full ([`verify_generation`](Self::verify_generation):
    /// every checksum, the payload's included) count as backups, so a damaged file never
    /// pushes out the last intact one, wherever in the file the damage is; a damaged file newer
    /// than the oldest kept backup stays (it costs disk, not a save). A generation holding a
    /// save in `keep` is never removed and does not count (cloud sync keeps the save of another
    /// device the player has not yet chosen between).
    pub(super) fn prune(
        &self,
        slot: SlotId,
        older: &[u64],
        keep: &HashSet<Uuid>,
    ) -> (usize, Option<StoreError>) {
        self.remove_stale(slot, self.stale_generations(slot, older, keep))
    }

    /// Removes the `stale` generations (newest first), oldest first, and returns how many went
    /// and the first failure.
    fn remove_stale(&self, slot: SlotId, stale: Vec<u64>) -> (usize, Option<StoreError>) {
        let (mut pruned, mut prune_error) = (0, None);
        for old in stale.into_iter().rev() {
            let old_path = self.path_of(slot, old);
            match self.fs.remove_file(&old_path) {
                Ok(()) => pruned += 1,
                Err(source) => {
                    prune_error.get_or_insert(StoreError::Io {
                        action: "remove the old generation",
                        path: old_path,
                        source,
                    });
                }
            }
        }
        (pruned, prune_error)
    }

    /// The generations of `older` (newest first) a prune removes: every one after the newest
    /// [`StoreConfig::backups`] intact ones, except those holding a save in `keep`.
    ///
    /// Walking newest first, a generation is read in full only while backups are still
    /// missing; past them only its metadata is read, and only when `keep` names saves (imports).
    /// A save with the default 3 backups thus reads and CRCs its 3 backups once each.
    fn stale_generations(&self, slot: SlotId, older: &[u64], keep: &HashSet<Uuid>) -> Vec<u64> {
        let backups = usize::from(self.config.backups);
        let mut intact = 0;
        let mut stale = Vec::new();
        // A stale generation has `backups` intact ones above it: there must be more than that.
        if older.len() <= backups {
            return stale;
        }
        for &generation in older {
            let path = self.path_of(slot, generation);
            if intact < backups {
                match self.verify_generation(&path) {
                    Ok(summary) if keep.contains(&summary.meta.save_id) => {}
                    Ok(_) => intact += 1,
                    // Damaged, or unreadable now: not a backup, and kept while newer ones are
                    // missing.
                    Err(_) => {}
                }
            } else if !self.holds_kept_save(&path, keep) && !self.never_pruned(&path) {
                stale.push(generation);
            }
        }
        stale
    }

    /// Whether the generation at `path` must stay whatever the backups: a save from a newer
    /// format version (its header intact: a damaged one reads as damage), which only the
    /// newer build may remove, or one whose header cannot be read now for a reason that may
    /// pass (it may be such a save; a later prune can tell).
    fn never_pruned(&self, path: &Path) -> bool {
        !matches!(self.header_version(path), HeaderVersion::NotNewer)
    }

    /// Whether the generation at `path` holds a save in `keep`, by its metadata (a kept save
    /// stays even when its payload is damaged: it is not the store's to drop). One whose
    /// metadata cannot be read (now, or for good: damaged past it) may hold one: it stays
    /// until a prune that keeps nothing (a save's) removes it. Cloud sync finds by such a file
    /// that the slot lost a save it must fetch again; an import that removed it before the
    /// repair was complete (a crash between the repair's imports) would leave the slot headed
    /// by an older save for good.
    fn holds_kept_save(&self, path: &Path, keep: &HashSet<Uuid>) -> bool {
        if keep.is_empty() {
            return false;
        }
        match self.read_summary(path) {
            Ok(summary) => keep.contains(&summary.meta.save_id),
            Err(_) => true,
        }
    }

    /// What a process that died left in the folder: temporary files of writes it never
    /// renamed (removed), and the note of a delete it died in (`deleting.rs`: its record of
    /// deleted saves is settled to what it removed).
    fn recover_what_a_death_left(&self) -> Result<(), StoreError> {
        let names = self.list_folder()?;
        for name in names.iter().filter_map(|name| name.to_str()) {
            if is_temp_file(name) {
                self.remove_stale_temp_file(name);
            } else {
                self.settle_dead_writes(name);
            }
        }
        Ok(())
    }

    /// Removes a temporary file an interrupted save left, unless its slot's lock is held: then
    /// a save (another instance of the game, or a stuck one) is writing it right now, and
    /// waiting for that lock could stall the game's start. What cannot be removed (gone
    /// already, a folder by that name, a read-only folder) is left: such a file is never read
    /// as a save, and failing here would leave the game unable to save for the session.
    /// A side file's temporary file (the cloud sync state's) has no slot lock and is removed: an
    /// instance writing that file at this moment sees its rename fail and writes it again later.
    fn remove_stale_temp_file(&self, name: &str) {
        let lock = temp_file_target(name).map(|(slot, _)| {
            let path = self.dir.join(lock_file_name(slot));
            self.fs.try_lock(&path)
        });
        if let Some(Ok(None)) = lock {
            return;
        }
        let _ = self.fs.remove_file(&self.dir.join(name));
    }
}

/// The autosave slots in the order the ring prefers them: empty ones first, then the slot after
/// the one holding the most recent autosave (which holds the oldest), and on round the ring.
///
/// "Most recent" goes by creation time, but a time more than [`CLOCK_AHEAD`] past this device's
/// clock (a save from a device whose clock runs ahead) counts as the oldest: trusting it would
/// keep that slot the most recent for as long as the clock is ahead and freeze the ring.
/// Ties (two autosaves in the same millisecond) go to the later slot, so the ring still
/// advances.
fn ring_order(entries: &[SlotEntry], now: Timestamp) -> Vec<SlotId> {
    let recency = |entry: &SlotEntry| {
        let created = entry.shown_save()?.meta.created_at;
        is_plausible(created, now).then_some(created)
    };
    let newest = entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.shown_save().is_some())
        .max_by_key(|(index, entry)| (recency(entry), *index))
        .map_or(0, |(index, _)| index);
    let empty = entries.iter().filter(|entry| entry.shown_save().is_none());
    let rotation = (1..=entries.len())
        .map(|step| &entries[(newest + step) % entries.len()])
        .filter(|entry| entry.shown_save().is_some());
    empty.chain(rotation).map(|entry| entry.slot).collect()
}

/// How far past this device's clock a save's creation time may be and still be believed
/// (clocks of devices that sync with time servers differ by far less).
pub(crate) const CLOCK_AHEAD: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// How far behind the storage's clock this device's may run and still have another device's
/// save believed up to the storage's time of its upload (`ImportRules::uploaded_at`): a day,
/// so that a storage answering with dates far in the future cannot make every save it holds
/// the newest.
pub(crate) const CLOCK_BEHIND: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Whether a creation time is not past this device's clock (`now`) by more than
/// [`CLOCK_AHEAD`].
pub(crate) fn is_plausible(created: Timestamp, now: Timestamp) -> bool {
    let limit = now
        .unix_millis()
        .saturating_add(CLOCK_AHEAD.as_millis() as i64);
    created.unix_millis() <= limit
}

/// Whether a failure to open or read a generation describes the entry itself rather than a
/// passing fault of the device: something other than a regular file where the file should be
/// (a folder, a FIFO, a device), or no permission to read it. No retry makes such an entry
/// readable, so a save treats it like a damaged generation.
fn is_unreadable_entry(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::IsADirectory
    ) || NotARegularFile::of(error).is_some()
}

/// What a slot's lock file is to the store, in [`StoreError::UnusableEntry`].
const LOCK_ROLE: &str = "the slot's lock file";

/// What failed when a slot's lock could not be taken for a reason that may pass.
const LOCK_ACTION: &str = "lock the slot through";

/// What a generation's header says of its format version, for the rules that protect saves
/// from a newer format version (they are never pruned, and a slot holding one takes no save).
enum HeaderVersion {
    /// An intact header (its checksum verifies) of a newer format version than this build's.
    Newer {
        /// The version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },
    /// A version this build reads, a damaged header (which cannot be told apart from damage),
    /// an entry that is not a readable file, or a file gone since the listing.
    NotNewer,
    /// The header could not be read now, for a reason that may pass.
    Unknown(StoreError),
}

/// Whether a failure to open or read a file says it is no longer there (removed since the
/// folder was listed).
fn is_gone(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound
}

/// Refuses a sealed save whose metadata (authenticated by the seal once the payload is opened)
/// names another slot than the file name at `path` does: a sealed file copied or renamed into
/// another slot. Unsealed files are not checked: nothing stops editing their metadata anyway,
/// and copying an unsealed save file into another slot by hand is a way players duplicate a
/// save.
fn check_sealed_slot(
    path: &Path,
    header: &format::Header,
    meta: &SaveMeta,
) -> Result<(), StoreError> {
    let named = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(parse_generation_file);
    match named {
        Some((slot, _)) if header.is_sealed() && slot != meta.slot => {
            Err(StoreError::SealedForAnotherSlot {
                path: path.to_path_buf(),
                written_for: meta.slot,
                loaded_as: slot,
            })
        }
        _ => Ok(()),
    }
}
