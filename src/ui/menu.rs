//! [`SaveMenuPlugin`]: the menu itself. Keys and pausing run in `Update`; the model is rebuilt
//! there when the listing or the jobs change; drawing runs in bevy_egui's pass and only returns
//! clicks, which the systems here turn into requests.

use super::model::{MenuModel, SlotSyncBadges, SyncBadge, ThumbnailKey};
use super::overlay::{SaveMenuSystems, ScreenshotCurtain};
use super::state::{MenuCommand, MenuInput, SaveMenu};
use super::textures::ThumbnailTextures;
use super::view::{self, MenuClick, MenuFrame};
use crate::SlotId;
use crate::format::Timestamp;
use crate::plugin::{
    KeepsakeCommandsExt, KeepsakeStatus, KeepsakeStore, RefreshSlotsRequest, SaveSlots,
};
use bevy::diagnostic::FrameCount;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass};
use std::time::Duration;

/// Settings of the save menu; change them at any time.
#[derive(Resource, Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Resource, Clone, Debug, Default, PartialEq)]
pub struct SaveMenuSettings {
    /// The keyboard key that opens and closes the menu (`None`: only game code opens it).
    /// Default Esc.
    pub toggle_hotkey: Option<KeyCode>,
    /// Whether virtual time stops while the menu is open. Default yes.
    pub pause_while_open: bool,
}

impl Default for SaveMenuSettings {
    fn default() -> Self {
        SaveMenuSettings {
            toggle_hotkey: Some(KeyCode::Escape),
            pause_while_open: true,
        }
    }
}

/// The in-game save menu: the slots with their thumbnails, titles and times; save, load and
/// delete with a confirmation where something would be lost. Part of
/// [`SaveMenuPlugins`](super::SaveMenuPlugins).
#[derive(Clone, Debug, Default)]
pub struct SaveMenuPlugin {
    settings: SaveMenuSettings,
}

impl SaveMenuPlugin {
    /// The keyboard key that opens and closes the menu (`None`: only game code opens it,
    /// through [`SaveMenu`]).
    #[must_use]
    pub fn toggle_hotkey(mut self, key: Option<KeyCode>) -> Self {
        self.settings.toggle_hotkey = key;
        self
    }

    /// Whether virtual time stops while the menu is open.
    #[must_use]
    pub fn pause_while_open(mut self, pause: bool) -> Self {
        self.settings.pause_while_open = pause;
        self
    }
}

impl Plugin for SaveMenuPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.settings.clone())
            .register_type::<SaveMenuSettings>()
            .init_resource::<SaveMenu>()
            .init_resource::<MenuView>()
            .init_resource::<ThumbnailTextures>()
            .init_resource::<ScreenshotCurtain>()
            .add_systems(
                Update,
                (menu_keys, pause_while_open, refresh_model)
                    .chain()
                    .in_set(SaveMenuSystems::Input),
            )
            .add_systems(
                EguiPrimaryContextPass,
                (sync_textures, show_menu)
                    .chain()
                    .in_set(SaveMenuSystems::Draw),
            );
        // The menu reads cloud sync's state; cloud sync knows nothing of the menu.
        #[cfg(feature = "cloud")]
        app.add_systems(
            PostUpdate,
            super::sync_badges::show_cloud_sync
                .run_if(resource_exists_and_changed::<crate::cloud::CloudStatus>),
        );
    }
}

/// The menu's model and what the view needs between frames.
#[derive(Resource, Default)]
pub(crate) struct MenuView {
    model: MenuModel,
    built_at: Option<Duration>,
    slots_refreshes: u64,
    status: KeepsakeStatus,
    /// Scroll the selected row into view on the next draw (after keyboard navigation).
    scroll_to_selection: bool,
    /// Whether the menu was open at the last model refresh (to relist the saves on opening).
    was_open: bool,
    /// Whether this menu paused virtual time (so it only unpauses what it paused).
    paused_time: bool,
}

const NAVIGATION: [(KeyCode, MenuInput); 5] = [
    (KeyCode::ArrowUp, MenuInput::Up),
    (KeyCode::ArrowDown, MenuInput::Down),
    (KeyCode::ArrowLeft, MenuInput::Left),
    (KeyCode::ArrowRight, MenuInput::Right),
    (KeyCode::Enter, MenuInput::Activate),
];

/// The toggle hotkey and arrow/Enter navigation.
fn menu_keys(
    keys: Option<Res<ButtonInput<KeyCode>>>,
    settings: Res<SaveMenuSettings>,
    mut menu: ResMut<SaveMenu>,
    mut view: ResMut<MenuView>,
    mut commands: Commands,
) {
    let Some(keys) = keys else {
        return;
    };
    if settings
        .toggle_hotkey
        .is_some_and(|key| keys.just_pressed(key))
    {
        if menu.is_open() {
            menu.handle(MenuInput::Back, &view.model);
        } else {
            menu.open();
        }
        return;
    }
    for (key, input) in NAVIGATION {
        if menu.is_open() && keys.just_pressed(key) {
            view.scroll_to_selection = true;
            let command = menu.handle(input, &view.model);
            send(&mut commands, command.map(MenuRequest::Slot));
        }
    }
}

/// Stops virtual time while the menu is open (only if it was running).
fn pause_while_open(
    settings: Res<SaveMenuSettings>,
    menu: Res<SaveMenu>,
    mut view: ResMut<MenuView>,
    time: Option<ResMut<Time<Virtual>>>,
) {
    let Some(mut time) = time else {
        return;
    };
    let wants_pause = menu.is_open() && settings.pause_while_open;
    if wants_pause && !time.is_paused() && !view.paused_time {
        time.pause();
        view.paused_time = true;
    } else if !wants_pause && view.paused_time {
        time.unpause();
        view.paused_time = false;
    }
}

/// Relists the saves when the menu opens (files may have changed outside the game), and
/// rebuilds the model when the listing or the jobs changed, and each second (relative times).
fn refresh_model(
    mut menu: ResMut<SaveMenu>,
    slots: Res<SaveSlots>,
    status: Res<KeepsakeStatus>,
    time: Res<Time<Real>>,
    mut view: ResMut<MenuView>,
    mut relist: MessageWriter<RefreshSlotsRequest>,
    sync: Option<Res<SlotSyncBadges>>,
) {
    let opened = menu.is_open() && !view.was_open;
    view.was_open = menu.is_open();
    if opened {
        relist.write(RefreshSlotsRequest);
    }
    if !menu.is_open() {
        return;
    }
    let stale = view
        .built_at
        .is_none_or(|at| time.elapsed() - at >= Duration::from_secs(1))
        || view.slots_refreshes != slots.refreshes()
        || view.status != *status
        || sync.as_ref().is_some_and(|sync| sync.is_changed());
    if !stale {
        return;
    }
    let model = MenuModel::build(&slots, &status, Timestamp::now(), &chrono::Local);
    view.model = match &sync {
        Some(sync) => model.with_sync(sync),
        None => model,
    };
    view.built_at = Some(time.elapsed());
    view.slots_refreshes = slots.refreshes();
    view.status = status.clone();
    menu.fit_to(&view.model);
}

/// Loads the thumbnails the open menu lists and frees those it no longer lists.
fn sync_textures(
    mut contexts: EguiContexts,
    menu: Res<SaveMenu>,
    view: Res<MenuView>,
    store: Res<KeepsakeStore>,
    mut textures: ResMut<ThumbnailTextures>,
) -> Result {
    if !menu.is_open() {
        return Ok(());
    }
    let listed: HashSet<ThumbnailKey> = view
        .model
        .rows()
        .filter_map(|row| row.save.as_ref()?.thumbnail)
        .collect();
    textures.sync(&listed, &store, contexts.ctx_mut()?);
    Ok(())
}

/// Draws the open menu (unless a picture of the game is being taken this frame) and applies
/// what was clicked.
fn show_menu(
    mut contexts: EguiContexts,
    mut menu: ResMut<SaveMenu>,
    mut view: ResMut<MenuView>,
    textures: Res<ThumbnailTextures>,
    curtain: Res<ScreenshotCurtain>,
    frames: Res<FrameCount>,
    mut commands: Commands,
) -> Result {
    if !menu.is_open() || curtain.hides(frames.0) {
        return Ok(());
    }
    let frame = MenuFrame {
        model: &view.model,
        menu: &menu,
        textures: &textures,
        scroll_to_selection: view.scroll_to_selection,
    };
    let click = view::draw_menu(contexts.ctx_mut()?, &frame);
    view.scroll_to_selection = false;
    let command = click.and_then(|click| apply_click(&mut menu, &view.model, click));
    send(&mut commands, command);
    Ok(())
}

/// What the menu asks of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MenuRequest {
    /// Save, load or delete, as the plugin's request.
    Slot(MenuCommand),
    /// The save that a cloud conflict keeps below heads `slot` instead (cloud's
    /// `UseHiddenSaveRequest`). Nothing is lost, so nothing is asked first.
    UseHiddenSave(SlotId),
}

/// What a click means, through the same rules as the keyboard.
pub(crate) fn apply_click(
    menu: &mut SaveMenu,
    model: &MenuModel,
    click: MenuClick,
) -> Option<MenuRequest> {
    let command = match click {
        MenuClick::Row(index) => {
            menu.select_row(index, model);
            None
        }
        MenuClick::Button(index, action) => menu.press(index, action, model),
        MenuClick::Answer(confirm) => menu.answer(confirm, model),
        MenuClick::UseHiddenSave(index) => {
            // Only a row still in conflict: the badge may have changed since it was drawn.
            let row = model.row(index)?;
            let in_conflict = matches!(row.sync, Some(SyncBadge::Conflict { .. }));
            return in_conflict.then_some(MenuRequest::UseHiddenSave(row.slot));
        }
    };
    command.map(MenuRequest::Slot)
}

/// Sends what the menu asks: a request to the plugin, or a message to cloud sync.
pub(crate) fn send(commands: &mut Commands, request: Option<MenuRequest>) {
    match request {
        Some(MenuRequest::Slot(MenuCommand { action, slot })) => {
            commands.request(action, slot);
        }
        #[cfg(feature = "cloud")]
        Some(MenuRequest::UseHiddenSave(slot)) => {
            commands.write_message(crate::cloud::UseHiddenSaveRequest { slot });
        }
        // The view draws the conflict button only with the `cloud` feature.
        #[cfg(not(feature = "cloud"))]
        Some(MenuRequest::UseHiddenSave(_)) => {}
        None => {}
    }
}
