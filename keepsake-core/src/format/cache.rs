//! The encoder's chunk cache: the stored form of every chunk of the last saves, so that the
//! next save of the same world compresses and checksums only the chunks that changed.

use super::codec::Compression;
use super::options::CompressWhen;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// How many saves a chunk is kept for after it was last used. Two, so a quicksave between two
/// autosaves (or two slots saved in turn) still finds the chunks the other one wrote.
const KEEP_SAVES: u64 = 2;

/// What identifies a chunk's stored form: its uncompressed bytes (by length and an XXH3-128,
/// of the bytes or of the snapshot's pieces they are made of) and the options that decide how
/// they are stored.
///
/// A 128-bit hash: two different chunks of one cache share a key with a probability around
/// 2^-110 for the few thousand chunks it ever holds, far below the odds of undetected memory
/// or disk corruption; the stored chunk's CRC-32 is then still that of the bytes written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ChunkKey {
    hash: u128,
    len: u32,
    codec: Compression,
    when: CompressWhen,
}

impl ChunkKey {
    /// The key of a chunk of `len` bytes identified by `hash` (of its bytes, or of its pieces'),
    /// stored under `codec` and `when`.
    pub(crate) fn new(hash: u128, len: usize, codec: Compression, when: CompressWhen) -> Self {
        ChunkKey {
            hash,
            len: len as u32,
            codec,
            when,
        }
    }
}

/// A chunk as stored in a file: its codec, its bytes and their CRC-32.
#[derive(Clone, Debug)]
pub(crate) struct StoredChunk {
    pub(crate) codec: Compression,
    /// The compressed bytes; `None` when the chunk is stored as is (its bytes are the chunk's
    /// own, which the writer has: the cache does not keep a copy).
    pub(crate) bytes: Option<Arc<[u8]>>,
    pub(crate) crc: u32,
    /// Stored as is only because it was new when it was stored (see
    /// [`CompressWhen::ItPays`]): compressed once a later save finds it unchanged.
    pub(crate) deferred: bool,
}

struct Entry {
    chunk: StoredChunk,
    last_used: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<ChunkKey, Entry>,
    /// The number of the latest save begun.
    save: u64,
}

/// The stored (compressed and checksummed) chunks of the last saves, kept between saves so that
/// a chunk that did not change is neither compressed nor checksummed again
/// ([`encode_cached`](super::encode_cached)).
///
/// Keep one per folder of saves (the store keeps one per profile): saves of one world share
/// most chunks whatever their slot. It holds the compressed chunks used by the last two saves
/// (at most about twice the size of a save file) and the CRC-32 of those stored as is; [`clear`](Self::clear) frees them. Safe to share between threads:
/// its lock is held only to look chunks up and put them in, never while compressing.
///
/// ```
/// use keepsake_core::SlotId;
/// use keepsake_core::format::{self, ChunkCache, EncodeOptions, SaveBundle, SaveMeta, WorldState};
///
/// let cache = ChunkCache::new();
/// let meta = SaveMeta::new(SlotId::Quick);
/// let bundle = SaveBundle::new(WorldState { ecs_blob: vec![3; 200_000], ..Default::default() });
/// let first = format::encode_cached(&meta, &bundle, &EncodeOptions::default(), &cache)?;
/// let second = format::encode_cached(&meta, &bundle, &EncodeOptions::default(), &cache)?;
/// assert_eq!(second.chunk_stats().unwrap().reused, second.chunk_stats().unwrap().chunks);
/// assert_eq!(first.to_vec(), second.to_vec());
/// # Ok::<(), keepsake_core::format::FormatError>(())
/// ```
#[derive(Default)]
pub struct ChunkCache {
    inner: Mutex<Inner>,
}

/// The counts, not the megabytes of chunks.
impl std::fmt::Debug for ChunkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkCache")
            .field("chunks", &self.len())
            .field("stored_bytes", &self.stored_bytes())
            .finish()
    }
}

impl ChunkCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The map stays consistent whatever panicked while it was held: every change is one
        // insert or removal.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many chunks it holds.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether it holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of the compressed chunks it holds (chunks stored as is are not copied).
    pub fn stored_bytes(&self) -> usize {
        self.lock()
            .entries
            .values()
            .filter_map(|entry| entry.chunk.bytes.as_ref())
            .map(|bytes| bytes.len())
            .sum()
    }

    /// Forgets every chunk (the next save compresses everything).
    pub fn clear(&self) {
        self.lock().entries.clear();
    }

    /// Starts a save: its number, which marks the chunks it uses, and whether an earlier save
    /// left chunks (then new chunks are changes, not the whole world).
    pub(crate) fn begin(&self) -> (u64, bool) {
        let mut inner = self.lock();
        inner.save += 1;
        (inner.save, !inner.entries.is_empty())
    }

    /// The stored form of the chunk with `key`, marked as used by `save`.
    pub(crate) fn get(&self, key: &ChunkKey, save: u64) -> Option<StoredChunk> {
        let mut inner = self.lock();
        let entry = inner.entries.get_mut(key)?;
        entry.last_used = entry.last_used.max(save);
        Some(entry.chunk.clone())
    }

    /// Keeps the stored form of a chunk `save` wrote.
    pub(crate) fn insert(&self, key: ChunkKey, chunk: StoredChunk, save: u64) {
        let entry = Entry {
            chunk,
            last_used: save,
        };
        self.lock().entries.insert(key, entry);
    }

    /// Ends a save: drops the chunks none of the last [`KEEP_SAVES`] saves used.
    pub(crate) fn end(&self) {
        let mut inner = self.lock();
        let latest = inner.save;
        inner
            .entries
            .retain(|_, entry| entry.last_used + KEEP_SAVES > latest);
    }
}
