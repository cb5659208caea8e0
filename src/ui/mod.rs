//! The in-game save menu (feature `save_menu`, on by default): [`SaveMenuPlugins`].
//!
//! Add the group beside [`KeepsakePlugins`](crate::plugin::KeepsakePlugins). It is three plugins,
//! each usable alone:
//!
//! | plugin | what it adds |
//! |---|---|
//! | [`SaveMenuPlugin`] | the menu (Esc): the quicksave, the autosaves (newest first) and the manual slots with their thumbnails, titles, times and play time; save, load and delete with a confirmation where something would be lost |
//! | [`SaveToastsPlugin`] | toasts for every save, load and delete, menu open or not |
//! | [`SaveThumbnailsPlugin`] | a thumbnail of the window for every save |
//!
//! The menu reads [`SaveSlots`](crate::plugin::SaveSlots) and
//! [`KeepsakeStatus`](crate::plugin::KeepsakeStatus) and sends requests; it never does IO on the
//! main thread.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use bevy_keepsake::ui::SaveThumbnailsPlugin;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(KeepsakePlugins::new("my-game"))
//!     // Esc opens the menu; no thumbnails in this game.
//!     .add_plugins(SaveMenuPlugins.build().disable::<SaveThumbnailsPlugin>())
//!     .run();
//! ```
//!
//! Keys while the menu is open: ↑/↓ select a slot, ←/→ select a button, Enter presses it or
//! confirms, Esc cancels a question or closes the menu. The mouse works throughout. The menu
//! does not swallow these keys: game systems that use them should skip while
//! [`SaveMenu::is_open`] (virtual time is paused meanwhile, unless
//! [`SaveMenuSettings::pause_while_open`] is off).
//!
//! What the menu shows and allows is plain data (the menu model, [`SaveMenu`], [`Toasts`]),
//! tested without rendering; the `view` module only draws it and returns the clicks.

mod menu;
mod model;
mod overlay;
mod recent;
mod screenshot_warmup;
mod state;
#[cfg(feature = "cloud")]
mod sync_badges;
mod text;
mod textures;
mod thumbnails;
mod toast_queue;
mod toasts;
mod view;

pub use menu::{SaveMenuPlugin, SaveMenuSettings};
pub use model::{SlotSyncBadges, SyncBadge};
pub use overlay::SaveMenuSystems;
pub use state::SaveMenu;
pub use text::format_playtime;
pub use thumbnails::SaveThumbnailsPlugin;
pub use toast_queue::{ShownToast, Toast, ToastKind, ToastTopic, Toasts};
pub use toasts::SaveToastsPlugin;

use bevy::app::PluginGroupBuilder;
use bevy::prelude::*;
use bevy_egui::EguiPlugin;

/// The save menu, its toasts and save thumbnails; see the [module docs](self).
///
/// Configure a member with `.set(...)`, leave one out with `.disable::<...>()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SaveMenuPlugins;

impl PluginGroup for SaveMenuPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(EguiSetupPlugin)
            .add(SaveMenuPlugin::default())
            .add(SaveToastsPlugin)
            .add(SaveThumbnailsPlugin::default())
    }
}

/// Adds bevy_egui unless the game already did.
struct EguiSetupPlugin;

impl Plugin for EguiSetupPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
    }
}

#[cfg(test)]
mod tests;
