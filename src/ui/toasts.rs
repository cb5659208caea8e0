//! [`SaveToastsPlugin`]: short notices in the corner ("Saving…", "Saved to Manual 3", "Save
//! failed: …", "Rewound 5.0 s"), shown whether or not the menu is open. The plugin's result events become
//! [`Toasts`] (plain data, in the `toast_queue` module); the view draws them.

use super::overlay::{SaveMenuSystems, ScreenshotCurtain};
use super::toast_queue::{Toast, Toasts};
use super::view;
use crate::plugin::{
    DeleteCompleted, DeleteFailed, LoadCompleted, LoadFailed, RewindCompleted, RewindFailed,
    SaveCompleted, SaveFailed, SaveStarted,
};
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass};

/// Toasts for every save, load and delete, menu open or not. Part of
/// [`SaveMenuPlugins`](super::SaveMenuPlugins); works without the menu too.
#[derive(Clone, Copy, Debug, Default)]
pub struct SaveToastsPlugin;

impl Plugin for SaveToastsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Toasts>()
            .init_resource::<ScreenshotCurtain>()
            .add_observer(toast_on::<SaveStarted>(Toast::save_started))
            .add_observer(toast_on::<SaveCompleted>(Toast::save_completed))
            .add_observer(toast_on::<SaveFailed>(Toast::save_failed))
            .add_observer(toast_on::<LoadCompleted>(Toast::load_completed))
            .add_observer(toast_on::<LoadFailed>(Toast::load_failed))
            .add_observer(toast_on::<DeleteCompleted>(Toast::delete_completed))
            .add_observer(toast_on::<DeleteFailed>(Toast::delete_failed))
            .add_observer(toast_on::<RewindCompleted>(Toast::rewind_completed))
            .add_observer(toast_on::<RewindFailed>(Toast::rewind_failed))
            .add_systems(Update, expire_toasts.in_set(SaveMenuSystems::Input))
            .add_systems(
                EguiPrimaryContextPass,
                show_toasts.in_set(SaveMenuSystems::Draw),
            );
    }
}

/// An observer that shows the toast `make` builds from each `E`.
fn toast_on<E: Event>(make: fn(&E) -> Toast) -> impl Fn(On<E>, ResMut<Toasts>, Res<Time<Real>>) {
    move |event: On<E>, mut toasts: ResMut<Toasts>, time: Res<Time<Real>>| {
        toasts.push(make(event.event()), time.elapsed());
    }
}

fn expire_toasts(mut toasts: ResMut<Toasts>, time: Res<Time<Real>>) {
    toasts.expire(time.elapsed());
}

/// Draws the toasts, except on a frame whose picture is being taken.
fn show_toasts(
    mut contexts: EguiContexts,
    toasts: Res<Toasts>,
    curtain: Res<ScreenshotCurtain>,
    frames: Res<FrameCount>,
) -> Result {
    if toasts.is_empty() || curtain.hides(frames.0) {
        return Ok(());
    }
    view::draw_toasts(contexts.ctx_mut()?, &toasts);
    Ok(())
}
