//! Content-defined chunk boundaries for the payload of format version 2.
//!
//! # Why content-defined
//!
//! A 1 % change of a world changes a few kilobytes inside a multi-megabyte snapshot blob, but a
//! spawn or despawn shifts every byte after it: with fixed-offset chunks every chunk after the
//! first shifted byte would differ and be compressed again. Here a boundary is placed where the
//! last 64 bytes hash to a value with its top [`ANCHOR_BITS`] bits zero (a *gear hash*, as in
//! FastCDC: `h = (h << 1) + GEAR[byte]`, so `h` depends on the last 64 bytes only). A boundary
//! therefore moves with the bytes around it, and after an insertion or deletion the chunking
//! falls back in step with the previous save's within a chunk or two.
//!
//! # Why these sizes (measured, 2-core machine, 6.6 MB game-shaped blob)
//!
//! | work over 6.6 MB | time |
//! |---|---|
//! | LZ4 compression (64 KiB chunks; 16–256 KiB within 10 %) | 21–22 ms |
//! | LZ4 decompression (64 KiB chunks) | 4.1 ms |
//! | gear scan, nothing skipped | 3.4–3.6 ms |
//! | gear scan, 48 KiB skipped of every chunk, anchors 1 in 16 KiB | 1.8 ms |
//! | gear scan, 56 KiB skipped, anchors 1 in 8 KiB (these constants) | 1.2 ms |
//! | gear scan, 60 KiB skipped, anchors 1 in 4 KiB | 0.5 ms |
//! | XXH3-128 of every chunk (the cache key) | 0.47 ms |
//! | CRC-32 | 0.23–0.27 ms |
//!
//! LZ4's ratio hardly depends on the chunk size from 16 KiB up (it finds its matches within
//! 64 KiB), so chunks are as large as keeps a small change small: about 64 KiB on average
//! ([`MIN_CHUNK`] + 2^[`ANCHOR_BITS`]). No boundary is looked for within the first
//! [`MIN_CHUNK`] bytes of a chunk, and the hash is started 64 bytes before that point (it only
//! depends on 64 bytes), so the scan touches an eighth of the bytes. A larger skip with denser
//! anchors scans less but takes longer to fall back in step after an insertion larger than the
//! anchor spacing, game data being periodic (measured after a clustered 1 % change with a
//! 16 KB spawn and despawn in 6.6 MB: 15 of 103 chunks new with these constants, 44 with 60 KiB
//! and 1 in 4 KiB). What a save of a world that changed a little costs is then the scan, the
//! XXH3 of every chunk to find it in the [`ChunkCache`](super::ChunkCache) and the CRC of the
//! changed chunks: 1.9 ms of the 13.4 ms a full encode of 6.6 MB takes. A blob that comes with
//! the snapshot layer's pieces skips the scan and the hashing of unchanged bytes
//! (`pieces.rs`); these boundaries cut everything else.

/// No boundary closer than this to the previous one (except at the end of the data).
pub const MIN_CHUNK: usize = 56 << 10;
/// A boundary at the latest this far from the previous one (data without any anchor).
pub const MAX_CHUNK: usize = 256 << 10;
/// A position is an anchor when the top this many bits of its gear hash are zero: one position
/// in 2^13 = 8 KiB, so chunks average `MIN_CHUNK + 8 KiB`.
pub const ANCHOR_BITS: u32 = 13;
/// The gear hash of a position depends on this many bytes (one per bit of the `u64`).
const WINDOW: usize = 64;

const ANCHOR_MASK: u64 = !(u64::MAX >> ANCHOR_BITS);

/// The gear table: 256 fixed pseudo-random 64-bit values (SplitMix64 from a fixed seed). Part of
/// the file format in effect: a different table gives different boundaries (files stay readable,
/// only the cache of a writer with another table would miss), so it never changes.
static GEAR: [u64; 256] = gear_table();

const fn gear_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut state = 0x6B65_6570_7361_6B65u64; // "keepsake"
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        table[i] = z ^ (z >> 31);
        i += 1;
    }
    table
}

/// The end of the chunk of `data` that starts at `start` (`start < data.len()`).
fn next_boundary(data: &[u8], start: usize) -> usize {
    let end = data.len().min(start + MAX_CHUNK);
    let search_from = start + MIN_CHUNK;
    if search_from >= end {
        return end;
    }
    let mut hash = 0u64;
    // The hash of a position only depends on the 64 bytes up to it: warming it up on those is
    // the same as hashing from the start of the chunk.
    for &byte in &data[search_from.saturating_sub(WINDOW).max(start)..search_from] {
        hash = (hash << 1).wrapping_add(GEAR[usize::from(byte)]);
    }
    for (offset, &byte) in data[search_from..end].iter().enumerate() {
        hash = (hash << 1).wrapping_add(GEAR[usize::from(byte)]);
        if hash & ANCHOR_MASK == 0 {
            return search_from + offset + 1;
        }
    }
    end
}

/// `data` cut into its content-defined chunks, in order; none for empty data.
pub(crate) fn cut(data: &[u8]) -> Vec<&[u8]> {
    let mut start = 0;
    boundaries(data)
        .into_iter()
        .map(|end| {
            let chunk = &data[start..end];
            start = end;
            chunk
        })
        .collect()
}

/// Splits `data` into content-defined chunks: the end offset of each, the last being
/// `data.len()`; none for empty data.
fn boundaries(data: &[u8]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(data.len() / MIN_CHUNK + 1);
    let mut start = 0;
    while start < data.len() {
        start = next_boundary(data, start);
        ends.push(start);
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Game-shaped bytes: records of an id, floats and a name, like a snapshot blob.
    fn records(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed | 1;
        let mut out = Vec::with_capacity(len + 32);
        let mut id = 0u32;
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&((state % 20_000) as f32 / 7.0).to_le_bytes());
            out.extend_from_slice(&(state >> 40).to_le_bytes()[..3]);
            out.extend_from_slice([&b"wolf"[..], b"goblin", b"bat"][(state % 3) as usize]);
            id += 1;
        }
        out.truncate(len);
        out
    }

    #[test]
    fn chunks_cover_the_data_within_their_bounds() {
        assert!(boundaries(&[]).is_empty());
        assert_eq!(boundaries(&[1, 2, 3]), vec![3]);
        let data = records(3 << 20, 1);
        let ends = boundaries(&data);
        assert_eq!(*ends.last().unwrap(), data.len());
        let mut start = 0;
        for (index, &end) in ends.iter().enumerate() {
            let len = end - start;
            assert!(len <= MAX_CHUNK, "chunk {index}: {len}");
            assert!(
                len >= MIN_CHUNK || end == data.len(),
                "chunk {index}: {len}"
            );
            start = end;
        }
        // Anchors, not the maximum, end the chunks of game-shaped data: 64 KiB on average.
        let average = data.len() / ends.len();
        assert!(
            (MIN_CHUNK..MIN_CHUNK + (24 << 10)).contains(&average),
            "{average}"
        );
    }

    #[test]
    fn data_without_anchors_is_cut_at_the_maximum() {
        let zeros = vec![0u8; MAX_CHUNK * 2 + 5];
        assert_eq!(
            boundaries(&zeros),
            vec![MAX_CHUNK, MAX_CHUNK * 2, MAX_CHUNK * 2 + 5]
        );
    }

    #[test]
    fn an_insertion_or_deletion_changes_only_the_chunks_around_it() {
        let data = records(6 << 20, 2);
        let before: HashSet<&[u8]> = cut(&data).into_iter().collect();
        let mut edited = data.clone();
        let n = data.len();
        edited.splice(n / 2..n / 2, [7u8; 37]);
        edited.drain(3 * n / 4..3 * n / 4 + 50);
        edited[n / 4..n / 4 + 8].iter_mut().for_each(|b| *b ^= 0x55);
        let after = cut(&edited);
        let new = after.iter().filter(|c| !before.contains(*c)).count();
        // Three edits: each changes its own chunk, and at most a couple more before the
        // boundaries are back in step. Fixed-offset chunks would change half of them.
        assert!(new <= 9, "{new} of {} chunks changed", after.len());
        assert!(after.len() > 80);
    }
}
