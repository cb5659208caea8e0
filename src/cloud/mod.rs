//! Cloud saves (feature `cloud`): every durable save is uploaded to S3-compatible object storage
//! (or Google Cloud Storage, a folder, memory) and other devices' saves are downloaded, verified
//! and kept beside the local ones. Built on the `object_store` crate, on a thread of its own.
//!
//! # Rules
//!
//! - The local store stays the source of truth: a save is durable on disk before anything is
//!   sent, play never waits on the network, and everything works offline.
//! - Uploads send the generation file unchanged, create-only, under a name unique to the save
//!   (see [`remote`]); a device never overwrites another's file. An object already under the
//!   name is fetched and compared: the same bytes count as uploaded; other bytes under this
//!   device's own name (a torn earlier upload, garbage) are replaced by the local file; other
//!   bytes under another device's name are reported and left alone.
//! - A `file://` folder is written as the store writes saves ([`FolderStore`]: temporary file,
//!   fsync, link into place, folder fsync), so an upload that returned survives a power loss.
//! - Downloads happen at start, on
//!   [`RefreshSlotsRequest`](crate::plugin::RefreshSlotsRequest) and every
//!   [`CloudPlugin::sync_every`]. The folder is listed page by page, stepping over keys the
//!   storage client cannot read as paths (each reported once as [`Refused`]), and no more of it
//!   per round than [`ListingLimits`] allow (see [`listing`]). Each file is verified in full
//!   ([`verify_remote_save`]) and placed through the store's durable write
//!   ([`SlotStore::import`]); a damaged, forged or newer-format file is refused and never
//!   replaces or hides a local save.
//! - Conflicts keep both saves: the newest by creation time heads the slot, the other stays the
//!   generation below, with its device's name in its metadata ([`SaveMeta::device_name`]). A
//!   save the player may be shown as a conflict's hidden save is never pruned, whatever the
//!   backups (the import that places it keeps it), until the player chooses or saves the slot
//!   again; choosing a hidden save no longer here downloads it again, and one the cloud does
//!   not have either is reported ([`CloudError::HiddenSaveGone`]), never silently dropped.
//! - The sync state ([`STATE_FILE`]) is written as each download lands and when the player
//!   chooses, so a crash mid-round loses no conflict or choice already reported.
//! - Nothing at [`STATE_FILE`] stops sync: a state that cannot be read (garbled, a folder, a
//!   FIFO, a file this user may not read, a failed read) is replaced by a fresh one with a new
//!   device id ([`CloudError::State`] says why), and one that cannot be written is kept in
//!   memory and written at a later round ([`SyncRound::state_error`] says why meanwhile). A
//!   lost state never brings back a save the player deleted or moved past, nor shows a settled
//!   conflict again: the store's record of deletes and the saves' version vectors say so
//!   without it.
//! - Uploads that could not be made wait in a durable queue ([`STATE_FILE`]) and are retried
//!   with backoff, at the latest on the next start.
//! - When the app exits, the saves made this session, the exit save included, are uploaded
//!   within the exit's wait; [`CloudExitUploadEnded`] says what could not be (the next start
//!   does).
//! - Credentials in the cloud URL never appear in text: errors hold a [`RedactedUrl`] and a
//!   reason scrubbed of them, and `CloudPlugin`'s `Debug` redacts the URL (see [`redact`]).
//!   Nor do credentials a storage error quotes (S3's signature mismatch quotes the request):
//!   every error leaves the storage client scrubbed ([`RemoteError`]).
//!
//! The engine-free parts ([`SyncCore`], [`SyncWorker`], [`Remote`]) work without Bevy's app;
//! [`CloudPlugin`] connects them to [`KeepsakePlugins`](crate::plugin::KeepsakePlugins).
//!
//! [`SlotStore::import`]: crate::store::SlotStore::import
//! [`SaveMeta::device_name`]: crate::format::SaveMeta::device_name

mod error;
mod exit;
mod folder;
pub mod listing;
mod plugin;
pub mod redact;
pub mod remote;
mod state;
mod sync;
mod verify;
mod worker;

/// The storage layer, re-exported for games and tests that build their own [`Remote`].
pub use object_store;

pub use error::{CloudError, Rejection, RemoteError};
#[cfg(feature = "testing")]
pub(crate) use exit::SessionSaves;
pub use exit::{CloudExitUploadEnded, ExitUploadOutcome};
pub use folder::FolderStore;
pub use listing::ListingLimits;
pub use plugin::{
    CloudPlugin, CloudSaveArrived, CloudSaveRefused, CloudSaveUploaded, CloudStatus,
    UseHiddenSaveRequest, default_device_name,
};
pub use redact::RedactedUrl;
pub use remote::{Remote, RemoteName, RequestPolicy, UploadClock};
pub use state::{Conflict, STATE_FILE};
pub use sync::{Connection, Refused, SlotSync, SyncCore, SyncRound, Uploaded};
pub use verify::{VerifiedSave, verify_remote_save};
pub use worker::{SyncCommand, SyncReport, SyncWorker};
