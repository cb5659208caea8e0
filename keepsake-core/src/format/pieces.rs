//! Where a snapshot blob may be cut, as the snapshot layer that wrote it knows: its pieces and
//! each piece's hash, so the chunked encoder neither scans nor hashes bytes that did not change.
//!
//! # Why
//!
//! A save's payload is cut into chunks, and a chunk the [`ChunkCache`](super::ChunkCache) holds
//! is neither compressed nor checksummed again. Found by content alone (`chunk.rs`), that still
//! costs a scan of every byte for the boundaries and an XXH3 of every chunk for its cache key:
//! work in proportion to the world, not to what changed. The snapshot layer knows better. It
//! writes the blob from encoded pieces it keeps between saves (a column's rows, 1024 table rows
//! at a time), and the hash of a piece it did not write again is the one it kept. With those
//! pieces the encoder groups whole pieces into chunks and keys each chunk by its pieces'
//! hashes, so a save hashes only the pieces that changed.
//!
//! # Trust
//!
//! A chunk's key decides which stored bytes the file gets, so pieces that did not describe the
//! blob would write another world's bytes into the save. Two things keep that from happening:
//! only bevy_keepsake's snapshot layer makes pieces (through `PieceCuts`, hidden from the docs
//! and not a stable API; otherwise [`BlobPieces`] can only be made empty, which means "cut by
//! content"), and the encoder uses them only after the blob's
//! XXH3-64 (the snapshot's state hash, a pass over the blob at memory speed) equals the one the
//! pieces were made for. A bundle whose blob was edited after its pieces were made is cut by
//! content, as any other.
//!
//! # Grouping
//!
//! Pieces are a few kilobytes to a megabyte. A chunk ends after a piece once it holds at least
//! [`MIN_CHUNK`] bytes and either that piece's hash is an *anchor* (one piece in two) or it
//! holds [`MAX_CHUNK`] bytes. As with the content-defined chunks, where a chunk ends depends
//! on the pieces around it, not on everything before it: after a run of changed pieces, the
//! chunks fall back in step with the last save's within a chunk or two. A single piece larger
//! than [`MAX_CHUNK`] is a chunk of its own.

use super::chunk::{MAX_CHUNK, MIN_CHUNK, cut};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// One piece of a blob: where it ends and the XXH3-128 of its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) end: usize,
    pub(crate) hash: u128,
}

/// A snapshot blob's pieces and the blob's XXH3-64, made by the snapshot layer as it writes the
/// blob (see the module docs in `pieces.rs`). Empty (no pieces) when the blob was not written that
/// way: then the encoder cuts it by content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlobPieces {
    pieces: Vec<Piece>,
    /// The XXH3-64 of the blob the pieces describe.
    blob_hash: u64,
}

/// How a piece's hash is found once the blob is written.
#[derive(Clone, Copy, Debug)]
enum Hash {
    /// Kept by the snapshot layer from an earlier blob, or hashed as it was written.
    Known(u128),
    /// Hashed once the blob is finished (bytes it fills in afterwards, such as counts).
    Later,
    /// Cut where its content says, then each piece hashed: bytes written anew every save,
    /// such as the entity table, so that a spawn changes the pieces around it only.
    ContentDefined,
}

/// Where a blob's pieces end, recorded while the blob is written ([`BlobPieces`] once it is).
#[derive(Debug, Default)]
pub struct PieceCuts {
    cuts: Vec<(usize, Hash)>,
}

impl PieceCuts {
    /// No cuts yet, room for `capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        PieceCuts {
            cuts: Vec::with_capacity(capacity),
        }
    }

    /// How many cuts are recorded (for [`truncate`](Self::truncate)).
    pub fn len(&self) -> usize {
        self.cuts.len()
    }

    /// Whether no cut is recorded.
    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// Forgets the cuts after the first `len` (bytes the writer took out again).
    pub fn truncate(&mut self, len: usize) {
        self.cuts.truncate(len);
    }

    fn push(&mut self, end: usize, hash: Hash) {
        let start = self.cuts.last().map_or(0, |&(end, _)| end);
        debug_assert!(end >= start, "pieces are in order");
        if end > start {
            self.cuts.push((end, hash));
        }
    }

    /// The piece up to `end` hashes to `hash` (XXH3-128 of its bytes).
    pub fn known(&mut self, end: usize, hash: u128) {
        self.push(end, Hash::Known(hash));
    }

    /// The piece up to `end` is to be hashed once the blob is written.
    pub fn hashed_later(&mut self, end: usize) {
        self.push(end, Hash::Later);
    }

    /// The bytes up to `end` are to be cut by content once the blob is written.
    pub fn content_defined(&mut self, end: usize) {
        self.push(end, Hash::ContentDefined);
    }

    /// The pieces of `blob`, the whole blob written, whose XXH3-64 is `blob_hash` (the
    /// snapshot's state hash, which its writer computes anyway). Bytes after the last cut are a
    /// piece of their own.
    pub fn finish(mut self, blob: &[u8], blob_hash: u64) -> BlobPieces {
        self.hashed_later(blob.len());
        let mut pieces = Vec::with_capacity(self.cuts.len() + 16);
        let mut start = 0;
        for (end, hash) in self.cuts {
            let mut add = |end: usize, hash: u128| pieces.push(Piece { end, hash });
            match hash {
                Hash::Known(hash) => add(end, hash),
                Hash::Later => add(end, xxh3_128(&blob[start..end])),
                Hash::ContentDefined => {
                    let mut piece_end = start;
                    for piece in cut(&blob[start..end]) {
                        piece_end += piece.len();
                        add(piece_end, xxh3_128(piece));
                    }
                }
            }
            start = end;
        }
        BlobPieces { pieces, blob_hash }
    }
}

impl BlobPieces {
    /// Where the last piece ends (`0` before the first).
    fn end(&self) -> usize {
        self.pieces.last().map_or(0, |piece| piece.end)
    }

    /// How many pieces there are.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// Whether there are none (the blob will be cut by content).
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The pieces, when they describe `blob` (see the module docs on trust).
    pub(crate) fn describing(&self, blob: &[u8]) -> Option<&[Piece]> {
        let fits =
            !self.pieces.is_empty() && self.end() == blob.len() && xxh3_64(blob) == self.blob_hash;
        if fits && cfg!(debug_assertions) {
            // What the snapshot layer kept must be what it wrote: every test checks it.
            let mut start = 0;
            for piece in &self.pieces {
                let bytes = &blob[start..piece.end];
                assert_eq!(xxh3_128(bytes), piece.hash, "piece ending at {}", piece.end);
                start = piece.end;
            }
        }
        fits.then_some(&self.pieces[..])
    }
}

/// A group of whole pieces that makes one chunk: its byte range in the blob and its key hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// An XXH3-128 of the group's pieces' hashes and lengths (see [`group_hash`]).
    pub(crate) hash: u128,
}

/// A piece's hash is an anchor, where a chunk may end once it is [`MIN_CHUNK`] long: one in two.
fn anchor(hash: u128) -> bool {
    hash & 1 == 0
}

/// Groups `pieces` into chunks (see the module docs).
pub(crate) fn group(pieces: &[Piece]) -> Vec<Group> {
    let mut groups = Vec::with_capacity(pieces.len() / 4 + 1);
    let mut first = 0;
    let mut start = 0;
    for (index, piece) in pieces.iter().enumerate() {
        let len = piece.end - start;
        let last = index + 1 == pieces.len();
        if last || (len >= MIN_CHUNK && (anchor(piece.hash) || len >= MAX_CHUNK)) {
            groups.push(Group {
                start,
                end: piece.end,
                hash: group_hash(&pieces[first..=index], start),
            });
            first = index + 1;
            start = piece.end;
        }
    }
    groups
}

/// A seed that keeps group hashes apart from the XXH3-128 of raw bytes (which keys chunks cut
/// by content), so the two kinds of key never meet in one cache.
const GROUP_SEED: u64 = 0x6B65_6570_2D67_7270; // "keep-grp"

/// The key hash of a group: its pieces' lengths and hashes, hashed. Equal for two groups
/// exactly when their pieces are (up to XXH3-128 collisions), so equal bytes.
fn group_hash(pieces: &[Piece], start: usize) -> u128 {
    let mut input = Vec::with_capacity(pieces.len() * 24);
    let mut from = start;
    for piece in pieces {
        input.extend_from_slice(&((piece.end - from) as u64).to_le_bytes());
        input.extend_from_slice(&piece.hash.to_le_bytes());
        from = piece.end;
    }
    xxhash_rust::xxh3::xxh3_128_with_seed(&input, GROUP_SEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_bytes::noise;

    /// `blob` cut into pieces of the given lengths, hashed as the blob is finished.
    fn pieces_of(blob: &[u8], lens: &[usize]) -> BlobPieces {
        let mut cuts = PieceCuts::with_capacity(lens.len());
        let mut end = 0;
        for len in lens {
            end += len;
            cuts.hashed_later(end);
        }
        cuts.finish(blob, xxh3_64(blob))
    }

    /// Pieces of the given lengths over a blob of pseudo-random bytes.
    fn blob_and_pieces(lens: &[usize]) -> (Vec<u8>, BlobPieces) {
        let blob = noise(lens.iter().sum());
        let pieces = pieces_of(&blob, lens);
        (blob, pieces)
    }

    #[test]
    fn groups_cover_the_pieces_within_their_bounds() {
        let lens: Vec<usize> = (0..300).map(|i| 3_000 + (i * 7_919) % 40_000).collect();
        let (blob, pieces) = blob_and_pieces(&lens);
        let pieces = pieces.describing(&blob).unwrap();
        let groups = group(pieces);
        assert_eq!(groups.first().unwrap().start, 0);
        assert_eq!(groups.last().unwrap().end, blob.len());
        for pair in groups.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        for group in &groups[..groups.len() - 1] {
            let len = group.end - group.start;
            // At most one piece past the maximum, none below the minimum.
            assert!((MIN_CHUNK..MAX_CHUNK + 43_000).contains(&len), "{len}");
            // Ends fall on piece ends.
            assert!(pieces.iter().any(|piece| piece.end == group.end));
        }
    }

    #[test]
    fn a_changed_piece_changes_the_groups_around_it_only() {
        let lens: Vec<usize> = (0..400).map(|i| 2_000 + (i * 7_919) % 30_000).collect();
        let (blob, before) = blob_and_pieces(&lens);
        let old = group(before.describing(&blob).unwrap());
        let mut edited = blob.clone();
        // One byte of piece 200, and piece 100 one byte longer.
        let at = lens[..200].iter().sum::<usize>() + 5;
        edited[at] ^= 0x40;
        let insert_at = lens[..100].iter().sum::<usize>() + 1;
        edited.insert(insert_at, 9);
        let mut new_lens = lens.clone();
        new_lens[100] += 1;
        let pieces = pieces_of(&edited, &new_lens);
        let new = group(pieces.describing(&edited).unwrap());
        let old_hashes: std::collections::HashSet<u128> = old.iter().map(|g| g.hash).collect();
        let changed = new.iter().filter(|g| !old_hashes.contains(&g.hash)).count();
        assert!(changed <= 6, "{changed} of {} groups changed", new.len());
        assert!(new.len() > 50);
    }

    #[test]
    fn pieces_of_another_blob_are_not_used() {
        let (blob, pieces) = blob_and_pieces(&[70_000, 80_000]);
        assert!(pieces.describing(&blob).is_some());
        let mut edited = blob.clone();
        edited[100] ^= 1;
        assert!(pieces.describing(&edited).is_none(), "same length, one bit");
        assert!(pieces.describing(&blob[..blob.len() - 1]).is_none());
        assert!(BlobPieces::default().describing(&[]).is_none());
    }

    #[test]
    fn content_defined_pieces_follow_the_chunker() {
        let blob = noise(600_000);
        let mut cuts = PieceCuts::default();
        cuts.content_defined(500_000);
        cuts.known(550_000, xxh3_128(&blob[500_000..550_000]));
        cuts.known(550_000, 7); // empty: no piece
        let pieces = cuts.finish(&blob, xxh3_64(&blob));
        let ends: Vec<usize> = pieces.pieces.iter().map(|piece| piece.end).collect();
        let mut expected: Vec<usize> = cut(&blob[..500_000])
            .iter()
            .scan(0, |end, piece| {
                *end += piece.len();
                Some(*end)
            })
            .collect();
        expected.extend([550_000, 600_000]);
        assert_eq!(ends, expected);
        // Every hash is its piece's (`describing` checks them in debug builds).
        assert!(pieces.describing(&blob).is_some());
    }
}
