//! Every integration test that needs Bevy in one binary, so Bevy is linked once rather than once
//! per file. Each module was a test file of its own; `common` holds what they share. The tests
//! of the engine-free core alone (format, store, power loss, damaged files, a full disk) are
//! keepsake-core's, in `keepsake-core/tests/core/`. The crash-save tests start the `crash_save`
//! example as their child process.

// Counts allocations per thread (tests running in parallel do not disturb each other); the
// hostile-input tests use it to prove forged lengths are refused before allocating.
#[global_allocator]
static ALLOC: common::alloc::CountingAlloc = common::alloc::CountingAlloc;

mod assets;
// Needs the library to register Bevy's lights and world assets, and to find Bevy's UI and text
// types by name: this build has no reflection auto-registration (Bevy's `default_app`), and
// Bevy keeps type names here through bevy_egui (`save_menu`).
mod bevy_fixtures;
#[cfg(all(
    feature = "bevy_light",
    feature = "bevy_world_serialization",
    feature = "bevy_sprite",
    feature = "save_menu"
))]
mod bevy_made;
#[cfg(feature = "cloud")]
mod cloud;
mod common;
mod compat;
mod crash_save;
mod fuzz_corpus;
mod glossary;
mod memory_budget;
mod plugin;
mod plugin_after_load;
mod plugin_channels;
mod plugin_in_place;
mod plugin_rewind;
mod plugin_state_screens;
mod plugin_states;
mod plugin_thumbnails;
mod plugin_unsaved;
#[cfg(feature = "cloud")]
mod sim;
mod snapshot_entity_refs;
mod snapshot_evolution;
mod snapshot_game_world;
mod snapshot_hostile;
mod snapshot_in_place;
mod snapshot_incremental;
mod snapshot_layouts;
mod snapshot_level_keys;
mod snapshot_migration_chain;
mod snapshot_one_parser;
mod snapshot_real_world;
mod snapshot_resources;
mod snapshot_roundtrip;
