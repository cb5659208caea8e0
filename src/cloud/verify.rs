//! Checking a downloaded file completely before it may become a local save.

use super::error::Rejection;
use super::remote::RemoteName;
use crate::format::{Budget, DecodedSave, FormatError, Limits};
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
///
/// # Memory
///
/// Within the bound of one read of the file: at most four bytes per byte the file decodes to
/// and a megabyte (its read's [`Budget`]), the decoded save it holds and the blob's check
/// together (the blob is checked from what the decoded save leaves of that budget); and so
/// within the bound of the file's size, which holds what it decodes to (see
/// [`format::max_decoded_len`](crate::format::max_decoded_len)).
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
    inspect_beside(file.decoded(), &config.decode_options().limits)?;
    if snapshot::state_hash(&world.ecs_blob) != world.state_hash {
        return Err(Rejection::StateHash);
    }
    Ok(VerifiedSave(file))
}

/// Checks the world blob of `decoded` ([`snapshot::blob::inspect_within`]) from one budget
/// with the decoded save: the budget a read of its file has (four bytes per decoded byte and a
/// megabyte, [`Limits::budget`]), less the decoded save held meanwhile (counted as the bytes
/// it decoded from: its blob, metadata and thumbnail are no larger). A blob whose check would
/// not fit beside it (an entity table of a million one-byte entries costs four times the blob)
/// is refused as over budget ([`Rejection::Blob`]), so verifying keeps to the bound of one
/// read of its file.
fn inspect_beside(decoded: &DecodedSave, limits: &Limits) -> Result<(), Rejection> {
    let held = decoded.header.decoded_len();
    let budget: Budget = limits.budget(held);
    let over = |refused: crate::format::OverBudget| Rejection::Blob(refused.into());
    budget
        .charge("the decoded save held meanwhile", held)
        .map_err(over)?;
    snapshot::blob::inspect_within(&decoded.bundle.world.ecs_blob, &budget)
        .map(drop)
        .map_err(|error| Rejection::Blob(error.into()))
}
