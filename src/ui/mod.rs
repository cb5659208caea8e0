//! The in-game save menu (feature `ui`, on by default): [`SaveMenuPlugin`].
//!
//! Add it beside [`KeepsakePlugin`](crate::plugin::KeepsakePlugin). It shows the quicksave, the
//! autosaves (newest first) and the manual slots with their thumbnails, titles, times and play
//! time; saves, loads and deletes with a confirmation where something would be lost; shows toasts
//! for every save and load, menu open or not; and gives every save a thumbnail of the window.
//! It reads [`SaveSlots`](crate::plugin::SaveSlots) and
//! [`KeepsakeStatus`](crate::plugin::KeepsakeStatus) and sends requests; it never does IO on the
//! main thread.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use bevy_keepsake::ui::SaveMenuPlugin;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(KeepsakePlugin::new("my-game"))
//!     .add_plugins(SaveMenuPlugin::default()) // Esc opens it
//!     .run();
//! ```
//!
//! Keys while the menu is open: ↑/↓ select a slot, ←/→ select a button, Enter presses it or
//! confirms, Esc cancels a question or closes the menu. The mouse works throughout. The menu
//! does not swallow these keys: game systems that use them should skip while
//! [`SaveMenu::is_open`] (virtual time is paused meanwhile, unless
//! [`SaveMenuPlugin::pause_while_open`] is off).
//!
//! Everything the menu shows and allows is plain data ([`MenuModel`], [`SaveMenu`],
//! [`Toasts`]), tested without rendering; the `view` module only draws it.

mod backdrop;
pub mod model;
pub mod state;
pub mod text;
mod textures;
pub mod thumbnails;
pub mod toasts;
mod view;

pub use model::{Badge, MenuAction, MenuModel, MenuSection, SectionKind, SlotRow};
pub use state::{Confirmation, MenuCommand, MenuInput, SaveMenu};
pub use toasts::{Toast, ToastKind, Toasts};

use crate::format::Timestamp;
use crate::plugin::{
    DeleteCompleted, DeleteFailed, DeleteRequest, KeepsakeStatus, LoadCompleted, LoadFailed,
    LoadRequest, RefreshSlots, SaveCompleted, SaveFailed, SaveRequest, SaveSlots, SaveStarted,
    ThumbnailCapture,
};
use bevy::prelude::*;
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};
use std::time::Duration;
use textures::ThumbnailTextures;
use thumbnails::ThumbnailCamera;

/// The save menu's system sets.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SaveMenuSystems {
    /// Keyboard input, pausing, rebuilding the model (in `Update`).
    Input,
    /// Drawing the menu and the toasts (in bevy_egui's `EguiPrimaryContextPass`).
    Draw,
}

/// Settings of the save menu; change them at any time.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct SaveMenuSettings {
    /// The key that opens and closes the menu (`None`: only game code opens it). Default Esc.
    pub toggle_key: Option<KeyCode>,
    /// Whether virtual time stops while the menu is open. Default yes.
    pub pause_while_open: bool,
}

/// The in-game save menu, toasts and save thumbnails. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct SaveMenuPlugin {
    settings: SaveMenuSettings,
    thumbnail_size: Option<UVec2>,
    thumbnail_wait: ThumbnailCapture,
}

impl Default for SaveMenuPlugin {
    fn default() -> Self {
        SaveMenuPlugin {
            settings: SaveMenuSettings {
                toggle_key: Some(KeyCode::Escape),
                pause_while_open: true,
            },
            thumbnail_size: Some(UVec2::new(320, 180)),
            thumbnail_wait: ThumbnailCapture::default(),
        }
    }
}

impl SaveMenuPlugin {
    /// The key that opens and closes the menu (`None`: only game code opens it, through
    /// [`SaveMenu`]).
    #[must_use]
    pub fn toggle_key(mut self, key: Option<KeyCode>) -> Self {
        self.settings.toggle_key = key;
        self
    }

    /// Whether virtual time stops while the menu is open.
    #[must_use]
    pub fn pause_while_open(mut self, pause: bool) -> Self {
        self.settings.pause_while_open = pause;
        self
    }

    /// The size thumbnails are stored at (`None`: saves carry no thumbnail). Default 320×180.
    #[must_use]
    pub fn thumbnails(mut self, size: Option<UVec2>) -> Self {
        self.thumbnail_size = size;
        self
    }

    /// How long a save waits for its thumbnail: until both `frames` frames and `time` have
    /// passed. Default 4 frames and 150 ms.
    #[must_use]
    pub fn thumbnail_wait(mut self, frames: u32, time: Duration) -> Self {
        self.thumbnail_wait = ThumbnailCapture {
            max_wait_frames: frames,
            max_wait_time: time,
        };
        self
    }
}

impl Plugin for SaveMenuPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
        app.insert_resource(self.settings.clone())
            .init_resource::<SaveMenu>()
            .init_resource::<Toasts>()
            .init_resource::<MenuView>()
            .init_resource::<ThumbnailTextures>()
            .insert_resource(ThumbnailCamera::new(self.thumbnail_size))
            .add_observer(toast_on::<SaveStarted>(Toast::save_started))
            .add_observer(toast_on::<SaveCompleted>(Toast::save_completed))
            .add_observer(toast_on::<SaveFailed>(Toast::save_failed))
            .add_observer(toast_on::<LoadCompleted>(Toast::load_completed))
            .add_observer(toast_on::<LoadFailed>(Toast::load_failed))
            .add_observer(toast_on::<DeleteCompleted>(Toast::delete_completed))
            .add_observer(toast_on::<DeleteFailed>(Toast::delete_failed))
            .add_systems(
                Update,
                (menu_keys, pause_while_open, refresh_model)
                    .chain()
                    .in_set(SaveMenuSystems::Input),
            )
            .add_systems(
                EguiPrimaryContextPass,
                (view::draw_menu, view::draw_toasts)
                    .chain()
                    .in_set(SaveMenuSystems::Draw),
            );
        if self.thumbnail_size.is_some() {
            app.insert_resource(self.thumbnail_wait)
                .add_observer(thumbnails::on_thumbnail_wanted)
                .add_observer(thumbnails::on_load_completed);
        }
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
    /// Whether this system paused virtual time (so it only unpauses what it paused).
    paused_time: bool,
}

fn toast_on<E: Event>(make: fn(&E) -> Toast) -> impl Fn(On<E>, ResMut<Toasts>, Res<Time<Real>>) {
    move |event: On<E>, mut toasts: ResMut<Toasts>, time: Res<Time<Real>>| {
        toasts.push(make(event.event()), time.elapsed());
    }
}

const NAVIGATION: [(KeyCode, MenuInput); 5] = [
    (KeyCode::ArrowUp, MenuInput::Up),
    (KeyCode::ArrowDown, MenuInput::Down),
    (KeyCode::ArrowLeft, MenuInput::Left),
    (KeyCode::ArrowRight, MenuInput::Right),
    (KeyCode::Enter, MenuInput::Activate),
];

/// The toggle key and arrow/Enter navigation.
fn menu_keys(
    keys: Option<Res<ButtonInput<KeyCode>>>,
    settings: Res<SaveMenuSettings>,
    mut menu: ResMut<SaveMenu>,
    mut view: ResMut<MenuView>,
    mut requests: MenuRequests,
) {
    let Some(keys) = keys else {
        return;
    };
    if settings
        .toggle_key
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
            requests.send(command);
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
    mut relist: MessageWriter<RefreshSlots>,
) {
    let opened = menu.is_open() && !view.was_open;
    view.was_open = menu.is_open();
    if opened {
        relist.write(RefreshSlots);
    }
    if !menu.is_open() {
        return;
    }
    let stale = view
        .built_at
        .is_none_or(|at| time.elapsed() - at >= Duration::from_secs(1))
        || view.slots_refreshes != slots.refreshes()
        || view.status != *status;
    if !stale {
        return;
    }
    view.model = MenuModel::build(&slots, &status, Timestamp::now(), &chrono::Local);
    view.built_at = Some(time.elapsed());
    view.slots_refreshes = slots.refreshes();
    view.status = status.clone();
    menu.fit_to(&view.model);
}

/// Sends the menu's commands as the plugin's request messages.
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct MenuRequests<'w> {
    saves: MessageWriter<'w, SaveRequest>,
    loads: MessageWriter<'w, LoadRequest>,
    deletes: MessageWriter<'w, DeleteRequest>,
}

impl MenuRequests<'_> {
    pub(crate) fn send(&mut self, command: Option<MenuCommand>) {
        match command {
            Some(MenuCommand::Save(slot)) => {
                self.saves.write(SaveRequest { slot });
            }
            Some(MenuCommand::Load(slot)) => {
                self.loads.write(LoadRequest { slot });
            }
            Some(MenuCommand::Delete(slot)) => {
                self.deletes.write(DeleteRequest { slot });
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
