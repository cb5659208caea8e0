//! [`KeepsakeCorePlugin`]: the member of [`KeepsakePlugins`](super::KeepsakePlugins) every
//! other one needs: the store, requests turned into jobs, the job runner, the listing, the
//! status, the result events and play time, and at exit the end of the work already asked.

use super::pool::SavePriority;
use super::settings::{KeepsakeSettings, Playtime, SaveTitle};
use super::status::{KeepsakeStatus, SaveSlots};
use super::thumbnail::ThumbnailCapture;
use super::{
    DeleteCompleted, DeleteFailed, DeleteRequest, LoadCompleted, LoadFailed, LoadRequest,
    RefreshSlotsRequest, SaveCompleted, SaveFailed, SaveRequest, SaveStarted, WorldRestored,
};
use super::{capture, exit, listing, requests, runner, store, unsaved};
use crate::snapshot::{
    LoadMode, RuntimeAssetHandles, SaveRegistry, SnapshotError, ensure_registry,
};
use bevy::app::OnAppExitSystems;
use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::input::InputSystems;
use bevy::prelude::*;
use bevy::window::{ExitSystems, WindowFocused};
use std::collections::BTreeMap;

/// The plugin's system sets, in the order they run (in `PreUpdate` unless the game chose
/// another schedule with [`KeepsakePlugins::schedule`](super::KeepsakePlugins::schedule)).
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeepsakeSystems {
    /// Hotkeys, requests, autosave timer, play time.
    Requests,
    /// Finishing, applying and starting jobs; refreshing the listing and the status.
    Jobs,
}

/// The schedule the group's members run in (`PreUpdate` unless the game chose another with
/// [`KeepsakePlugins::schedule`](super::KeepsakePlugins::schedule)), left by the group.
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct KeepsakeSchedule(pub(crate) InternedScheduleLabel);

/// The jobs and their results (see the [`group`](super::group) table), required by every other
/// member. [`KeepsakePlugins`](super::KeepsakePlugins) adds it; its fields are how saves are
/// made and loads applied, the starting values of the [`KeepsakeSettings`] resource (and
/// [`RuntimeAssetHandles`]). Where the store is and the schedule are the group's: they span
/// every member.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::plugin::{KeepsakeCorePlugin, LoadMode};
/// use bevy_keepsake::prelude::*;
///
/// let keepsake = KeepsakePlugins::new("my-game").set(KeepsakeCorePlugin {
///     game_version: "1.4.2".into(),
///     load_mode: LoadMode::Respawn,
///     ..default()
/// });
/// # let _ = keepsake;
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeepsakeCorePlugin {
    /// The game's version, stored in every save's metadata, for diagnosing old saves. Default
    /// empty.
    pub game_version: String,
    /// Key/value pairs written into every save's [`SaveMeta::extras`](crate::format::SaveMeta)
    /// (cloud sync adds the device at startup). Default none.
    pub save_extras: BTreeMap<String, String>,
    /// The priority of the thread that encodes, compresses and writes each save. Default
    /// [`SavePriority::Low`] (see [`KeepsakeSettings::save_priority`]).
    pub save_priority: SavePriority,
    /// How loads and rewinds change the saved entities already in the world. Default
    /// [`LoadMode::InPlace`].
    pub load_mode: LoadMode,
    /// What saves do with handles to assets made at run time (`Assets::add`), which have no
    /// path to be saved by. Default [`RuntimeAssetHandles::Skip`]: the default handle in their
    /// place, a warning once per field, and a count in
    /// [`SaveCompleted::handles_left_out`].
    pub runtime_asset_handles: RuntimeAssetHandles,
}

impl Plugin for KeepsakeCorePlugin {
    fn build(&self, app: &mut App) {
        let schedule = group_schedule(app);
        ensure_registry(app);
        self.insert_resources(app);
        add_messages(app);
        add_systems(app, schedule);
        register_reflected_types(app);
        app.add_observer(runner::note_own_save);
    }

    /// Refuses a save filter that requires a component no save holds (every registration is
    /// done by now): the game would lose its saved entities at the second save, silently.
    fn finish(&self, app: &mut App) {
        let registry = app.world().resource::<SaveRegistry>();
        if let Some(component) = registry.unsaved_filter_component() {
            panic!("keepsake: {}", SnapshotError::FilterNotSaved { component });
        }
    }
}

/// The schedule the group's members run in, left by the group before its first member.
///
/// # Panics
///
/// Without it: the core was added alone, not through the group.
fn group_schedule(app: &App) -> InternedScheduleLabel {
    match app.world().get_resource::<KeepsakeSchedule>() {
        Some(schedule) => schedule.0,
        None => panic!(
            "keepsake: KeepsakeCorePlugin is a member of KeepsakePlugins: add the group \
             (`KeepsakePlugins::new(..)`) and change the member with \
             `.set(KeepsakeCorePlugin {{ .. }})`"
        ),
    }
}

/// The schedule [`KeepsakeCorePlugin`] runs in; the other members add their systems there.
///
/// # Panics
///
/// Without [`KeepsakeCorePlugin`], naming the member that needs it.
pub(crate) fn schedule_of(app: &App, member: &str) -> InternedScheduleLabel {
    if !app.is_plugin_added::<KeepsakeCorePlugin>() {
        panic!(
            "keepsake: {member} needs KeepsakeCorePlugin: add `KeepsakePlugins::new(..)`, the \
             group that holds both (and `.disable::<…>()` the members you do not want)"
        );
    }
    group_schedule(app)
}

impl KeepsakeCorePlugin {
    /// The settings and every resource the systems use, all created here so no system creates
    /// one lazily (the capture cache starts empty: the first save encodes everything).
    fn insert_resources(&self, app: &mut App) {
        app.insert_resource(KeepsakeSettings {
            game_version: self.game_version.clone(),
            save_extras: self.save_extras.clone(),
            save_priority: self.save_priority,
            load_mode: self.load_mode,
        })
        .insert_resource(self.runtime_asset_handles)
        .init_resource::<runner::JobQueue>()
        .init_resource::<capture::SaveCaptureCache>()
        .init_resource::<capture::Settling>()
        .init_resource::<runner::SessionEntities>()
        .init_resource::<runner::WarnedHandleFields>()
        .init_resource::<unsaved::WarnedUnsaved>()
        .init_resource::<listing::ListingRefresh>()
        .init_resource::<KeepsakeStatus>()
        .init_resource::<SaveSlots>()
        .init_resource::<SaveTitle>()
        .init_resource::<Playtime>()
        .init_resource::<requests::RequestCursors>();
    }
}

/// The store opens in `PreStartup`, the exit path runs in `Last`, and the rest in the group's
/// schedule, in [`KeepsakeSystems`] order.
fn add_systems(app: &mut App, schedule: InternedScheduleLabel) {
    app.add_systems(PreStartup, store::open_store)
        .add_systems(
            Last,
            exit::finish_before_exit
                .in_set(OnAppExitSystems)
                .in_set(exit::ExitWork)
                .after(ExitSystems),
        )
        .configure_sets(
            schedule,
            (KeepsakeSystems::Requests, KeepsakeSystems::Jobs)
                .chain()
                .after(InputSystems),
        )
        .add_systems(
            schedule,
            (
                (requests::collect_requests, requests::tick_playtime)
                    .chain()
                    .in_set(KeepsakeSystems::Requests),
                (
                    runner::run_jobs,
                    listing::refresh_listing,
                    runner::publish_status,
                )
                    .chain()
                    .in_set(KeepsakeSystems::Jobs),
            ),
        );
}

/// The requests the plugin reads (and the window focus messages it reads, added here for apps
/// without a window plugin); results are observer events, which need no adding.
fn add_messages(app: &mut App) {
    app.add_message::<SaveRequest>()
        .add_message::<LoadRequest>()
        .add_message::<DeleteRequest>()
        .add_message::<RefreshSlotsRequest>()
        .add_message::<WindowFocused>();
}

/// Makes the plugin's resources, requests and results visible to inspectors and scripts.
fn register_reflected_types(app: &mut App) {
    app.register_type::<KeepsakeSettings>()
        .register_type::<KeepsakeStatus>()
        .register_type::<SaveSlots>()
        .register_type::<SaveTitle>()
        .register_type::<LoadMode>()
        .register_type::<Playtime>()
        .register_type::<RuntimeAssetHandles>()
        .register_type::<ThumbnailCapture>()
        .register_type::<SaveRequest>()
        .register_type::<LoadRequest>()
        .register_type::<DeleteRequest>()
        .register_type::<RefreshSlotsRequest>()
        .register_type::<SaveStarted>()
        .register_type::<SaveCompleted>()
        .register_type::<SaveFailed>()
        .register_type::<LoadCompleted>()
        .register_type::<LoadFailed>()
        .register_type::<DeleteCompleted>()
        .register_type::<DeleteFailed>()
        .register_type::<WorldRestored>();
}
