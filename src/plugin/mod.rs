//! [`KeepsakePlugins`]: saves on the task pool, loads, autosave, F5/F9, the exit save, rewind
//! and result events, as a plugin group whose members a game can turn off (see [`group`] for
//! the table).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use std::time::Duration;
//!
//! #[derive(Component, Reflect, Default)]
//! struct Health(f32);
//!
//! App::new()
//!     .add_plugins(MinimalPlugins)
//!     .add_plugins(KeepsakePlugins::new("my-game").set(AutosavePlugin {
//!         every: Duration::from_secs(30),
//!         ..default()
//!     }))
//!     .register_saveable::<Health>()
//!     .add_observer(|saved: On<SaveCompleted>| info!("saved to {}", saved.slot))
//!     .run();
//! ```
//!
//! # Requests and results
//!
//! Each goes on one channel. A request ([`SaveRequest`], [`LoadRequest`], [`DeleteRequest`],
//! [`RefreshSlotsRequest`], [`RewindPointRequest`], [`RewindRequest`]) is a
//! [`Message`](bevy::ecs::message::Message): any system writes it (`commands.save(slot)`
//! does), and the plugin's systems read them in bulk once a frame, as Bevy does with
//! `AppExit`. A result ([`SaveStarted`], [`SaveCompleted`], [`SaveFailed`], [`LoadCompleted`],
//! [`LoadFailed`], [`DeleteCompleted`], [`DeleteFailed`], [`RewindPointCompleted`],
//! [`RewindPointFailed`], [`RewindCompleted`], [`RewindFailed`], [`WorldRestored`]) is an
//! [`Event`](bevy::ecs::event::Event) triggered once, in the frame it happens, for observers
//! (`On<SaveCompleted>`), as Bevy does with `ScreenshotCaptured`: each calls for an answer at
//! once (a toast, rebuilding what follows from the restored world), and none comes in bulk.
//! A request ends in `Request`; its results are the operation and how it ended (`Started`,
//! `Completed`, `Failed`); what happens without a request of its own is named for what
//! happened (`WorldRestored`).
//!
//! # Schedule
//!
//! Everything runs in `PreUpdate` (or the schedule given to [`KeepsakePlugins::schedule`]), after
//! Bevy's input systems, in the [`KeepsakeSystems`] sets:
//!
//! 1. [`KeepsakeSystems::Requests`]: request messages, window focus loss and the autosave timer
//!    ([`AutosaveTimer`], [`AutosavePlugin`]'s) become jobs; play time advances. (The quicksave and quickload keys are
//!    read in `PreUpdate` just before, whatever the schedule, so each press counts once.)
//! 2. [`KeepsakeSystems::Jobs`]: finished jobs are reported (a finished load is applied to the
//!    world first), then waiting jobs whose slot is free start (a save captures the world here,
//!    incrementally: a [`CaptureCache`](crate::snapshot::CaptureCache), a resource created with
//!    the plugin and kept between saves, re-encodes only what changed since the last one, and
//!    the blob is joined and hashed on the task pool; [`SaveCompleted::capture_time`] is what
//!    stayed on the main thread; it then reports [`SaveStarted`], takes the thumbnail a
//!    [`ThumbnailCapture`] provider hands over at once, and starts the write), the
//!    [`SaveSlots`] listing refreshes in the background and [`KeepsakeStatus`] is brought up to
//!    date.
//!
//! The store is opened in `PreStartup`: building the app touches no files. On `AppExit`, the
//! plugin finishes its work and makes the exit save ([`SaveOnExit`]) in `Last`, in Bevy's
//! [`OnAppExitSystems`](bevy::app::OnAppExitSystems) set, after the window exit systems (see the
//! `exit` module); with cloud sync, the uploads of the session's saves follow within the same
//! wait.
//!
//! A load's result is therefore visible to `Update` systems of the frame it completes in, and a
//! save captures the world as the previous frame left it.
//!
//! # Where each step lives
//!
//! `group` is the builder and the group; `core` its required member, and `autosave`,
//! `hotkeys`, `exit_save` and the `crash` and `rewind` folders the others, each one plugin, its
//! fields and its run-time resource in one place.
//! In the order above: `requests` turns request messages into [`Job`]s (`job` is
//! the vocabulary every module speaks: [`Job`], [`JobTarget`], [`SaveTarget`], [`SaveReason`],
//! [`SlotAction`]); the `runner` folder runs them: `runner::queue` decides which wait, run and
//! start and publishes [`KeepsakeStatus`], `runner::save` captures, waits for the thumbnail
//! (`thumbnail`), writes and reports, and `runner::load` and `runner::delete` do the same for
//! theirs; `listing` refreshes [`SaveSlots`] in the background; `status` holds the two
//! resources menus read; the `rewind` folder keeps rewind points in memory and rewinds to them
//! (after the runner in [`KeepsakeSystems::Jobs`], through the same capture cache as saves,
//! `capture`, whose hook shows it every capture);
//! `unsaved` says what saves leave out of saved entities and what loads bring back without,
//! and `restored` reports [`WorldRestored`] after every load and rewind.
//! Every background part spawns on the task pool of `pool`; `store` opens
//! the slot store in `PreStartup`; `exit` is the last frame's path, through the same runner.

mod autosave;
mod capture;
mod commands;
mod core;
mod crash;
mod error;
mod events;
mod exit;
mod exit_save;
pub mod group;
mod hotkeys;
mod job;
mod listing;
pub(crate) mod pool;
mod requests;
mod restored;
mod rewind;
mod runner;
mod settings;
mod status;
mod store;
pub(crate) mod thumbnail;
mod unsaved;

pub use crate::snapshot::{LoadMode, RuntimeAssetHandles};
pub use autosave::{AutosavePlugin, AutosaveTimer};
pub use commands::KeepsakeCommandsExt;
pub use core::{KeepsakeCorePlugin, KeepsakeSystems};
pub use crash::{CrashSavePlugin, crash_image_armed};
pub use error::KeepsakeError;
pub use events::{
    DeleteCompleted, DeleteFailed, DeleteRequest, LoadCompleted, LoadFailed, LoadRequest,
    RefreshSlotsRequest, SaveCompleted, SaveFailed, SaveRequest, SaveStarted,
};
pub use exit::PENDING_WORK_WAIT;
pub use exit_save::{ExitSavePlugin, SaveOnExit};
pub use group::KeepsakePlugins;
pub use hotkeys::HotkeysPlugin;
pub use job::{Job, JobTarget, SaveReason, SaveTarget, SlotAction, SlotIdReflect};
#[cfg(any(feature = "cloud", feature = "testing"))]
pub(crate) use listing::ListingRefresh;
pub use pool::SavePriority;
pub use restored::{RestoredFrom, WorldRestored};
#[cfg(feature = "testing")]
pub(crate) use rewind::rewind_in_flight;
pub use rewind::{
    Evicted, RewindCompleted, RewindError, RewindFailed, RewindPlugin, RewindPoint,
    RewindPointCompleted, RewindPointFailed, RewindPointId, RewindPointRequest, RewindRequest,
    RewindRing, RewindSettings, RewindTimer, RewindTo,
};
pub use settings::{KeepsakeSettings, Playtime, SaveTitle};
pub use status::{KeepsakeStatus, SaveSlots};
pub use store::KeepsakeStore;
pub use thumbnail::{ThumbnailCapture, ThumbnailTicket, ThumbnailWanted};
#[cfg(feature = "cloud")]
pub(crate) use {
    events::report,
    exit::{ExitDeadline, ExitWork},
    store::StoreOpener,
};
