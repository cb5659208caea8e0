//! Makes fuzzed bytes pass the save file's checksums, so fuzzing reaches the decompressor and
//! the postcard decoders behind them instead of stopping at the first CRC; and, for sealed
//! (version-3) files, its seal, so fuzzing reaches the chunk table behind it.
#![allow(dead_code)]

use aes_gcm::aead::{AeadInOut, KeyInit};

/// The key the fuzz target opens sealed files with, and its sealed seeds are sealed under.
pub const FUZZ_SEAL_KEY: [u8; 32] = *b"bevy_keepsake fuzz seal key, 32b";

/// When `data` is a version-3 file whose sections fit, returns a copy sealed for real under
/// `key`: the bytes between its nonce and tag taken as the plaintext (so a seed holds its
/// payload unencrypted there, and mutations of it reach the chunk table), encrypted with the
/// file's own nonce, the tag recomputed, then every CRC made valid
/// ([`with_valid_checksums`]).
pub fn with_valid_seal(data: &[u8], key: &[u8; 32]) -> Option<Vec<u8>> {
    let u32_at = |offset: usize| {
        data.get(offset..offset + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if data.get(..4)? != b"KPSK" || data.get(4..6)? != [3, 0] {
        return None;
    }
    let (meta, thumbnail, payload) = (u32_at(8)?, u32_at(12)?, u32_at(16)?);
    let payload_start = 40usize.checked_add(meta)?.checked_add(thumbnail)?;
    let end = payload_start.checked_add(payload)?;
    if end > data.len() || payload < 28 {
        return None;
    }
    let associated = [&data[..24], &data[40..payload_start]].concat();
    let mut sealed = data.to_vec();
    let (head, tag) = sealed[..end].split_at_mut(end - 16);
    let (nonce, text) = head[payload_start..].split_at_mut(12);
    let nonce: [u8; 12] = (&*nonce).try_into().ok()?;
    let cipher = aes_gcm::Aes256Gcm::new(&(*key).into());
    let computed = cipher
        .encrypt_inout_detached(&nonce.into(), &associated, text.into())
        .ok()?;
    tag.copy_from_slice(&computed);
    with_valid_checksums(&sealed)
}

/// When `data` starts like a save file and its sections fit, returns a copy whose section and
/// header CRCs are correct for its (fuzzed) contents. For a version-2 file whose chunk table
/// fits in the payload, the CRC of every chunk that fits is made correct too, and the payload
/// CRC is the table's.
pub fn with_valid_checksums(data: &[u8]) -> Option<Vec<u8>> {
    let u32_at = |offset: usize| {
        data.get(offset..offset + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if data.get(..4)? != b"KPSK" {
        return None;
    }
    let (meta, thumbnail, payload) = (u32_at(8)?, u32_at(12)?, u32_at(16)?);
    let meta_start = 40usize;
    let thumbnail_start = meta_start.checked_add(meta)?;
    let payload_start = thumbnail_start.checked_add(thumbnail)?;
    let end = payload_start.checked_add(payload)?;
    if end > data.len() {
        return None;
    }
    let mut fixed = data.to_vec();
    let crc_of = |range: std::ops::Range<usize>| crc32fast::hash(&data[range]).to_le_bytes();
    fixed[24..28].copy_from_slice(&crc_of(meta_start..thumbnail_start));
    fixed[28..32].copy_from_slice(&crc_of(thumbnail_start..payload_start));
    let version = u16::from_le_bytes([data[4], data[5]]);
    let covered = match version {
        2 => fix_chunks(&mut fixed, payload_start, end).unwrap_or(payload_start..end),
        _ => payload_start..end,
    };
    let payload_crc = crc32fast::hash(&fixed[covered]).to_le_bytes();
    fixed[32..36].copy_from_slice(&payload_crc);
    let header_crc = crc32fast::hash(&fixed[..36]).to_le_bytes();
    fixed[36..40].copy_from_slice(&header_crc);
    Some(fixed)
}

/// Rewrites the CRC of every chunk of a version-2 payload that lies within it; returns the
/// range of the chunk table, or `None` when the table does not fit.
fn fix_chunks(fixed: &mut [u8], payload: usize, end: usize) -> Option<std::ops::Range<usize>> {
    let count = u32::from_le_bytes(fixed.get(payload..payload + 4)?.try_into().ok()?) as usize;
    let table_end = payload.checked_add(count.checked_mul(13)?.checked_add(4)?)?;
    if table_end > end {
        return None;
    }
    let mut chunk = table_end;
    for index in 0..count {
        let entry = payload + 4 + index * 13;
        let stored = u32::from_le_bytes(fixed[entry + 4..entry + 8].try_into().ok()?) as usize;
        let Some(chunk_end) = chunk.checked_add(stored).filter(|&e| e <= end) else {
            break;
        };
        let crc = crc32fast::hash(&fixed[chunk..chunk_end]).to_le_bytes();
        fixed[entry + 9..entry + 13].copy_from_slice(&crc);
        chunk = chunk_end;
    }
    Some(payload..table_end)
}
