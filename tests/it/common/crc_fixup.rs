//! Makes fuzzed bytes pass the save file's checksums, so fuzzing reaches the decompressor and
//! the postcard decoders behind them instead of stopping at the first CRC.
#![allow(dead_code)]

/// When `data` starts like a save file and its sections fit, returns a copy whose section and
/// header CRCs are correct for its (fuzzed) contents.
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
    fixed[32..36].copy_from_slice(&crc_of(payload_start..end));
    let header_crc = crc32fast::hash(&fixed[..36]).to_le_bytes();
    fixed[36..40].copy_from_slice(&header_crc);
    Some(fixed)
}
