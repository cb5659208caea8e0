//! Loads: the slot read, verified and decoded on the task pool; the decoded snapshot applied to
//! the world on the main thread when the job finishes (so `Update` systems see it that frame),
//! then [`LoadCompleted`] or [`LoadFailed`]. The world is only touched when the job finishes.

use super::queue::{Outcome, Work};
use crate::format::SaveMeta;
use crate::plugin::error::KeepsakeError;
use crate::plugin::events::{LoadCompleted, LoadFailed, report};
use crate::plugin::pool::task_pool;
use crate::plugin::settings::{AutosaveTimer, Playtime};
use crate::plugin::{restored, unsaved};
use crate::slot::SlotId;
use crate::snapshot::{self, DecodedSnapshot, LoadMode, SaveRegistry};
use crate::store::{GenerationFailure, SlotStore};
use bevy::asset::AssetServer;
use bevy::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Reads, verifies and decodes on the pool; the world is only touched when the job finishes.
pub(super) fn start(world: &World, slot: SlotId, store: Arc<SlotStore>) -> Box<dyn Work> {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let assets = world.get_resource::<AssetServer>().cloned();
    let task = task_pool().spawn(async move {
        let read = || -> Result<LoadOutput, KeepsakeError> {
            let loaded = store.load(slot)?;
            let world_state = &loaded.bundle.world;
            let snapshot = snapshot::decode_with_assets(
                &world_state.ecs_blob,
                world_state.state_hash,
                &registry,
                &types.read(),
                assets.as_ref(),
            )?;
            Ok(LoadOutput {
                generation: loaded.generation,
                meta: loaded.meta,
                skipped: loaded.skipped,
                snapshot,
            })
        };
        Box::new(Loaded {
            slot,
            result: read(),
        }) as Box<dyn Outcome>
    });
    Box::new(task)
}

/// The outcome of a load that could not start.
pub(super) fn failed(slot: SlotId, error: KeepsakeError) -> Box<dyn Outcome> {
    Box::new(Loaded {
        slot,
        result: Err(error),
    })
}

/// What a finished load hands back to the main thread.
struct LoadOutput {
    generation: u64,
    meta: SaveMeta,
    skipped: Vec<GenerationFailure>,
    snapshot: DecodedSnapshot,
}

/// A finished load, with what its event needs.
struct Loaded {
    slot: SlotId,
    result: Result<LoadOutput, KeepsakeError>,
}

impl Outcome for Loaded {
    fn finish(self: Box<Self>, world: &mut World) {
        let slot = self.slot;
        match self.result {
            Ok(output) => apply(world, slot, output),
            Err(error) => {
                warn!("keepsake: loading {slot} failed: {error}");
                let error = Arc::new(error);
                report(world, LoadFailed { slot, error });
            }
        }
    }
}

/// Applies a decoded save to the world, restores the clocks, and reports [`LoadCompleted`].
fn apply(world: &mut World, slot: SlotId, output: LoadOutput) {
    let refused_asset_paths = Arc::new(output.snapshot.refused_asset_paths().to_vec());
    for refused in refused_asset_paths.iter() {
        warn!(
            "keepsake: {slot} names the asset {:?}, which was not loaded: {}",
            refused.path, refused.reason
        );
    }
    let started = Instant::now();
    let (applied, missing_components) =
        unsaved::apply_noting_losses(world, &slot.to_string(), |world| {
            snapshot::apply(world, output.snapshot, LoadMode::Replace)
        });
    let load_time = started.elapsed();
    world.resource_mut::<Playtime>().0 = output.meta.playtime;
    // A timed autosave right after a load would spend a ring slot on the state just loaded.
    world.resource_mut::<AutosaveTimer>().reset();
    let restored_from_backup = !output.skipped.is_empty();
    if restored_from_backup {
        warn!(
            "keepsake: {slot} restored from backup generation {}",
            output.generation
        );
    }
    let loaded = LoadCompleted {
        slot,
        generation: output.generation,
        restored_from_backup,
        skipped_generations: Arc::new(output.skipped),
        meta: output.meta,
        entity_map: Arc::new(applied.entity_map),
        refused_asset_paths,
        dropped_fields: Arc::new(applied.dropped_fields),
        dropped_references: Arc::new(applied.dropped_references),
        load_time,
        missing_components,
    };
    report(world, loaded.clone());
    restored::after_load(world, &loaded);
}
