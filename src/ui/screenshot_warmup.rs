//! Has Bevy compile its screenshot-to-window pipeline as soon as a window has a surface, so the
//! first thumbnail of a session does not show the player a black frame.
//!
//! The cause, in Bevy 0.20's `bevy_render::view::window::screenshot`: a frame with a window
//! screenshot is drawn into a texture of the screenshot's own, then copied to the window's
//! swap chain by `render_screenshot` with the `ScreenshotToScreenPipeline`, specialized for the
//! window's format the first time a screenshot is taken. Pipelines compile in the background,
//! and `render_screenshot` copies only `if let Some(pipeline) = get_render_pipeline(..)`: on
//! the first screenshot the pipeline is not ready, so the window's frame is never drawn to and
//! shows black (software Vulkan compiles slowly enough to show it every time; later
//! screenshots find the pipeline compiled). Specializing the same pipeline for the same format
//! early means the first screenshot finds it ready: `SpecializedRenderPipelines` hands back
//! the pipeline already queued for that key.

use bevy::prelude::*;
use bevy::render::render_resource::{PipelineCache, SpecializedRenderPipelines, TextureFormat};
use bevy::render::view::ExtractedWindow;
use bevy::render::view::window::screenshot::ScreenshotToScreenPipeline;
use bevy::render::{Render, RenderApp, RenderSystems};

/// Adds the warm-up to the render app (none without a renderer, as under `MinimalPlugins`).
pub(super) fn add_to(app: &mut App) {
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app.add_systems(Render, warm_up.in_set(RenderSystems::Prepare));
    }
}

/// Specializes the screenshot pipeline for each window format not seen yet.
fn warm_up(
    windows: Query<&ExtractedWindow>,
    screenshot: Option<Res<ScreenshotToScreenPipeline>>,
    pipelines: Option<ResMut<SpecializedRenderPipelines<ScreenshotToScreenPipeline>>>,
    cache: Res<PipelineCache>,
    mut warmed: Local<Vec<TextureFormat>>,
) {
    let (Some(screenshot), Some(mut pipelines)) = (screenshot, pipelines) else {
        return;
    };
    for format in windows
        .iter()
        .filter_map(|w| w.swap_chain_texture_view_format)
    {
        if !warmed.contains(&format) {
            pipelines.specialize(&cache, &screenshot, format);
            warmed.push(format);
        }
    }
}
