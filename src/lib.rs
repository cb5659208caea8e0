//! # bevy_keepsake
//!
//! Crash-safe save slots for Bevy games: a checksummed, compressed file format, a slot store
//! whose every write is durable and atomic and keeps backups, a reflection snapshot of the
//! components and resources a game registers, and the plugin that captures the world, saves off
//! the main thread, autosaves and binds quicksave / quickload.
//!
//! - [`format`](mod@format) (engine-free, from [`keepsake_core`]): the save file format (header, metadata,
//!   thumbnail, payload; postcard + LZ4 + CRC32).
//! - [`store`] (engine-free, from [`keepsake_core`]): slots, profiles, durable atomic writes,
//!   generations, listings.
//! - [`snapshot`]: registered components and resources ↔ the save's `ecs_blob`.
//! - [`compat`]: the compatibility guard: the save schema file a game commits, and the check
//!   of kept saves against today's types (`keepsake compat`, and test helpers).
//! - [`plugin`]: [`KeepsakePlugins`](plugin::KeepsakePlugins), the plugin group (jobs on the
//!   task pool, autosave, hotkeys, the exit save, rewind: each a member a game can turn off),
//!   result events, the thumbnail hook.
//! - `testing` (feature `testing`, off by default): helpers for a game's tests: run an app
//!   until a result arrives, a temporary save root, world comparisons, a fault-injecting
//!   filesystem.
//! - [`ui`] (feature `save_menu`, on by default): [`SaveMenuPlugins`](ui::SaveMenuPlugins), the
//!   in-game save menu, toasts and window-screenshot thumbnails.
//!
//! Most games need only the [`prelude`].
//!
//! ## The guide
//!
//! [`_guide`] walks through the crate chapter by chapter; every example in it is a doctest.
//!
//! 1. [Saving your first component](_guide::first_save)
//! 2. [What gets saved](_guide::what_gets_saved): registration, Bevy's types, what is left out
//! 3. [After a load](_guide::after_load): `States`, rebuilding what follows from saved data
//! 4. [When your types change](_guide::types_change): layouts read by name, migrations
//! 5. [Keeping old saves loading in CI](_guide::compatibility_guard)
//! 6. [Handles and levels](_guide::handles_and_levels): level keys, asset handles
//! 7. [Saving on exit](_guide::exit_saves)
//! 8. [The save menu, or your own](crate::_guide::save_menu) (feature `save_menu`)
//! 9. [Rewind](_guide::rewind)
//! 10. [Cloud saves](crate::_guide::cloud) (feature `cloud`)
//! 11. [Sealed saves](_guide::sealing)
//! 12. [The `keepsake` command line](_guide::cli)
//! 13. [Performance](_guide::performance)
//! 14. [Guarantees](_guide::guarantees): durability, integrity, hostile files, memory
//! 15. [Glossary](_guide::glossary): the words the crate uses, one meaning each
#![cfg_attr(docsrs, feature(doc_cfg))]

#[path = "guide/mod.rs"]
pub mod _guide;

#[cfg(feature = "cloud")]
#[cfg_attr(docsrs, doc(cfg(feature = "cloud")))]
pub mod cloud;
pub mod compat;
#[doc(inline)]
pub use keepsake_core::format;
pub mod plugin;
pub mod snapshot;

#[doc(hidden)]
pub mod __private;
#[doc(inline)]
pub use keepsake_core::store;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "save_menu")]
#[cfg_attr(docsrs, doc(cfg(feature = "save_menu")))]
pub mod ui;

/// The names a game uses in its first hour: the plugin group and the members it configures
/// first, registering what is saved, saving and loading, the results, the listing and the menu.
/// Everything else (the core's and rewind's settings, `KeepsakeStatus`, `SaveTarget`, sealing,
/// thumbnails, …) stays at its module path.
pub mod prelude {
    pub use crate::SlotId;
    pub use crate::plugin::{
        AutosavePlugin, ExitSavePlugin, HotkeysPlugin, KeepsakeCommandsExt, KeepsakePlugins,
        LoadCompleted, LoadFailed, LoadRequest, SaveCompleted, SaveFailed, SaveOnExit, SaveRequest,
        SaveSlots, SaveTitle, WorldRestored,
    };
    pub use crate::snapshot::{Saveable, SaveableAppExt};
    #[cfg(feature = "save_menu")]
    pub use crate::ui::{SaveMenu, SaveMenuPlugins};
}

pub use keepsake_core::{SlotId, SlotKind};

/// The engine-free core this crate is built on (also what the `keepsake` command line links).
pub use keepsake_core;

/// The README's examples, compiled as doctests so they stay true.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "save_menu"))]
pub struct ReadmeDoctests;
