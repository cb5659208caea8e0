//! Checking a downloaded file completely before it may become a local save.

use super::error::Rejection;
use super::remote::RemoteName;
use crate::format::FormatError;
use crate::snapshot;
use crate::store::{ImportFile, SlotStore};

/// A downloaded save that passed [`verify_remote_save`]: only that function makes one, so the
/// sync core cannot place a remote file that skipped a check. It holds the file decoded once,
/// for the store to place without decoding it again.
#[derive(Debug)]
pub struct VerifiedSave<'a>(ImportFile<'a>);

impl<'a> VerifiedSave<'a> {
    /// Its metadata.
    pub fn meta(&self) -> &crate::format::SaveMeta {
        self.0.meta()
    }

    /// The decoded file, for [`SlotStore::import`].
    pub fn into_import(self) -> ImportFile<'a> {
        self.0
    }
}

/// Checks everything a load will rely on, without the game's types: the header and its
/// checksum, every section's checksum, decompression, the metadata and payload in postcard
/// (all of it by [`SlotStore::decode_import`], under `store`'s limits), the world blob's
/// structure ([`snapshot::inspect`]) and its state hash, that the slot is in `store`'s layout,
/// and that `name` agrees with the metadata. A file that passes is well-formed; a hostile one
/// with valid checksums is still refused if any structure inside is wrong.
pub fn verify_remote_save<'a>(
    name: &RemoteName,
    bytes: &'a [u8],
    store: &SlotStore,
) -> Result<VerifiedSave<'a>, Rejection> {
    let config = store.config();
    let limit = config.decode_options().limits.max_file_len();
    if bytes.len() as u64 > limit {
        return Err(Rejection::TooLarge {
            len: bytes.len() as u64,
            limit,
        });
    }
    let file = store.decode_import(bytes).map_err(|error| match error {
        FormatError::NewerVersion { found, supported } => {
            Rejection::NewerFormat { found, supported }
        }
        other => Rejection::Format(other),
    })?;
    let meta = file.meta();
    if !config.layout.contains(meta.slot) {
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
    let world = &file.decoded().bundle.world;
    snapshot::inspect(&world.ecs_blob).map_err(Rejection::Blob)?;
    if snapshot::state_hash(&world.ecs_blob) != world.state_hash {
        return Err(Rejection::StateHash);
    }
    Ok(VerifiedSave(file))
}
