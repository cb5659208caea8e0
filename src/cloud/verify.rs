//! Checking a downloaded file completely before it may become a local save.

use super::error::Rejection;
use super::remote::RemoteName;
use crate::format::{self, FormatError, Limits};
use crate::snapshot;
use crate::store::SlotLayout;

/// Checks everything a load will rely on, without the game's types: the header and its
/// checksum, every section's checksum, decompression, the metadata and payload in postcard,
/// the world blob's structure ([`snapshot::inspect`]) and its state hash, that the slot is in
/// `layout`, and that `name` agrees with the metadata. A file that passes is well-formed; a
/// hostile one with valid checksums is still refused if any structure inside is wrong.
pub fn verify_remote_save(
    name: &RemoteName,
    bytes: &[u8],
    layout: &SlotLayout,
    limits: &Limits,
) -> Result<(), Rejection> {
    let limit = limits.max_file_len();
    if bytes.len() as u64 > limit {
        return Err(Rejection::TooLarge {
            len: bytes.len() as u64,
            limit,
        });
    }
    let decoded = format::decode(bytes, limits).map_err(|error| match error {
        FormatError::NewerVersion { found, supported } => {
            Rejection::NewerFormat { found, supported }
        }
        other => Rejection::Format(other),
    })?;
    let meta = &decoded.meta;
    if !layout.contains(meta.slot) {
        return Err(Rejection::NoSuchSlot(meta.slot));
    }
    let mismatch = |field, named: String, stored: String| {
        Err(Rejection::NameMismatch {
            field,
            named,
            stored,
        })
    };
    if meta.slot != name.slot {
        return mismatch("slot", name.slot.to_string(), meta.slot.to_string());
    }
    if meta.save_id != name.save_id {
        return mismatch(
            "save id",
            name.save_id.to_string(),
            meta.save_id.to_string(),
        );
    }
    if meta.created_at.unix_millis() != name.created_ms {
        let stored = meta.created_at.unix_millis().to_string();
        return mismatch("creation time", name.created_ms.to_string(), stored);
    }
    let world = &decoded.bundle.world;
    snapshot::inspect(&world.ecs_blob).map_err(Rejection::Blob)?;
    if snapshot::state_hash(&world.ecs_blob) != world.state_hash {
        return Err(Rejection::StateHash);
    }
    Ok(())
}
