//! The errors of cloud sync.

use super::redact::{RedactedUrl, Secrets, scrub_shapes};
use crate::format::FormatError;
use crate::snapshot::SnapshotError;
use crate::store::StoreError;
use std::path::PathBuf;

/// Everything that can stop cloud sync. None of them touches a local save.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CloudError {
    /// The cloud URL could not be understood. Neither field holds a credential the URL
    /// carried (see [`RedactedUrl`]): the error is logged and shown in `CloudStatus`.
    #[error("cloud URL {url}: {reason}")]
    BadUrl {
        /// The URL with its credentials hidden.
        url: RedactedUrl,
        /// What is wrong with it (with the URL's credentials hidden too).
        reason: String,
    },

    /// The storage service could not be reached or refused a request (offline, server error,
    /// timeout, credentials). Work that needed it is retried later.
    ///
    /// The storage client's error holds no credential: every error a [`Remote`] gives is
    /// scrubbed as it leaves the storage client (its cause is a [`RemoteError`]), and the text
    /// shown is scrubbed by shape once more, whatever store the error came from.
    ///
    /// [`Remote`]: super::Remote
    #[error(
        "cloud storage: could not {action} {location}: {}",
        scrub_shapes(&.source.to_string())
    )]
    Remote {
        /// What was being done, e.g. "upload".
        action: &'static str,
        /// The object or folder involved.
        location: String,
        /// What the storage client reported.
        #[source]
        source: object_store::Error,
    },

    /// A local store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),

    /// The sync state file of the profile could not be read or written.
    #[error("cloud sync state file {path}: {reason}", path = .path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },

    /// The sync thread could not be started.
    #[error("could not start the cloud sync thread: {0}")]
    Thread(#[source] std::io::Error),

    /// The player chose the save hidden by a conflict, but it can no longer be had: this
    /// device does not hold it and the cloud cannot give it back. The conflict was cleared;
    /// the slot keeps the save heading it.
    #[error(
        "the save {save_id} from {device} in {slot} cannot be used: {reason}; the conflict was cleared and the slot keeps its current save"
    )]
    HiddenSaveGone {
        /// The slot.
        slot: crate::SlotId,
        /// The device that made the hidden save, as the conflict named it.
        device: String,
        /// The hidden save's id.
        save_id: uuid::Uuid,
        /// Why it cannot be had.
        reason: String,
    },
}

/// What a storage service reported, with every credential taken out (see
/// [`redact`](super::redact)): the only way to make one is to scrub. It is the cause of every
/// error a [`Remote`](super::Remote) gives (inside the `object_store::Error`, whose kind is
/// kept), and it has no cause of its own, so no raw text of the storage client can be reached
/// through it either.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteError(String);

impl RemoteError {
    /// `error`'s text and that of its causes (each one not already quoted), scrubbed of
    /// `secrets` and of everything that carries a credential by its shape.
    pub(crate) fn scrubbed(error: &(dyn std::error::Error + 'static), secrets: &Secrets) -> Self {
        let mut text = error.to_string();
        let mut cause = error.source();
        while let Some(inner) = cause {
            let inner_text = inner.to_string();
            if !text.contains(&inner_text) {
                text = format!("{text}: {inner_text}");
            }
            cause = inner.source();
        }
        RemoteError(secrets.scrub(&text))
    }

    /// The scrubbed text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteError({:?})", self.0)
    }
}

impl std::error::Error for RemoteError {}

/// Why a remote file was not placed among the local saves. The local saves are untouched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The object's name is not one cloud sync writes.
    #[error("its name is not <slot>.<created ms>.<device id>.<save id>.ksav")]
    BadName,
    /// The object is larger than the configured limits allow for a save file.
    #[error("it is {len} bytes, larger than the {limit} bytes the limits allow for a save")]
    TooLarge {
        /// The object's size.
        len: u64,
        /// The largest save file the limits allow.
        limit: u64,
    },
    /// The file does not decode (header, checksums, decompression, postcard).
    #[error("it is not a readable save: {0}")]
    Format(#[source] FormatError),
    /// The file is from a newer format version; a newer build of the game can read it.
    #[error(
        "it is a save in format version {found}, newer than the version {supported} this build reads"
    )]
    NewerFormat {
        /// The version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },
    /// The local slot's newest save is from a newer format version; nothing is placed under it.
    #[error("{0} holds a save from a newer format version, which a placed file would bury")]
    SlotHoldsNewerFormat(crate::SlotId),
    /// The payload's world blob is not well-formed.
    #[error("its world snapshot is malformed: {0}")]
    Blob(#[source] SnapshotError),
    /// The world blob's hash differs from the one stored beside it.
    #[error("its world snapshot does not match the state hash stored with it")]
    StateHash,
    /// The name and the metadata inside disagree (a renamed or forged file).
    #[error("its name says {field} {named}, its metadata says {stored}")]
    NameMismatch {
        /// "slot", "save id" or "creation time".
        field: &'static str,
        /// The value in the name.
        named: String,
        /// The value in the metadata.
        stored: String,
    },
    /// The slot it names is not in this game's slot layout.
    #[error("it belongs to {0}, which this game's slot layout does not have")]
    NoSuchSlot(crate::SlotId),
}
