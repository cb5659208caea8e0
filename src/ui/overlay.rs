//! What the overlays (the menu and the toasts) and the thumbnail camera share: the system sets
//! they run in, and the curtain that hides the overlays on a frame whose picture is taken. A
//! leaf module, so the plugins import it rather than the module that groups them.

use bevy::prelude::*;

/// The save menu's system sets.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SaveMenuSystems {
    /// Keyboard input, pausing, rebuilding the model, expiring toasts (in `Update`).
    Input,
    /// Drawing the menu and the toasts (in bevy_egui's `EguiPrimaryContextPass`).
    Draw,
}

/// Frames on which the menu and the toasts stay hidden, because a picture of the game is taken
/// of them.
#[derive(Resource, Default)]
pub(crate) struct ScreenshotCurtain {
    hidden_through: Option<u32>,
}

impl ScreenshotCurtain {
    /// Whether overlays stay hidden on `frame`.
    pub(crate) fn hides(&self, frame: u32) -> bool {
        self.hidden_through.is_some_and(|last| frame <= last)
    }

    /// Hides overlays up to and including `frame`.
    pub(crate) fn hide_through(&mut self, frame: u32) {
        self.hidden_through = Some(frame);
    }
}
