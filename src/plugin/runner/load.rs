//! Loads: the slot read, verified and decoded on the task pool; the decoded snapshot applied to
//! the world on the main thread when the job finishes (so `Update` systems see it that frame),
//! then [`LoadCompleted`] or [`LoadFailed`]. The world is only touched when the job finishes.
//!
//! # In place
//!
//! With [`LoadMode::InPlace`] (the default), the load starts with a capture of the world
//! through the capture cache saves use (its main-thread part: what changed since the last
//! save), and the pool compares the save with it ([`snapshot::prepare`]) once decoded. When
//! the job finishes, the main thread captures again (what changed during the load) and applies
//! the save in place ([`snapshot::apply_prepared`]): only the types the world changed meanwhile
//! are compared again, and only the values that differ are written.
//!
//! Whether a save's entity ids name this world's entities is decided by the save's id: the
//! [`SessionEntities`] resource holds the ids of the saves this session wrote (an observer of
//! [`SaveCompleted`](crate::plugin::SaveCompleted) notes them). A save from another session or
//! device keeps only the entities an earlier load of that same save spawned, through the
//! record of what that load spawned; the first load of it respawns everything (nothing in the
//! world can be its entities), and starts that record.

use super::queue::{Outcome, Work};
use crate::SlotId;
use crate::format::SaveMeta;
use crate::plugin::capture::{capture, settle_later};
use crate::plugin::error::KeepsakeError;
use crate::plugin::events::{LoadCompleted, LoadFailed, SaveCompleted, report};
use crate::plugin::pool::task_pool;
use crate::plugin::settings::{KeepsakeSettings, Playtime};
use crate::plugin::{restored, unsaved};
use crate::snapshot::{
    self, ApplyReport, DecodedSnapshot, EntityRecord, LoadMode, PendingSnapshot, PreparedLoad,
    SameState, SaveRegistry, SavedIds, SnapshotError,
};
use crate::store::{GenerationFailure, SlotStore};
use bevy::asset::AssetServer;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;
use uuid::Uuid;

/// What the plugin knows of the entity ids of the saves and snapshots it applies: which saves
/// this session wrote (their ids are this world's), and the records of the entities in-place
/// applies spawned (see the [module docs](self)).
#[derive(Resource)]
pub(crate) struct SessionEntities {
    /// The saves this session wrote, by save id.
    own_saves: Arc<HashSet<Uuid>>,
    /// For snapshots of this world (this session's saves, rewind points).
    pub(crate) this_world: EntityRecord,
    /// For the last save from elsewhere that was loaded in place.
    elsewhere: Option<(Uuid, EntityRecord)>,
}

impl Default for SessionEntities {
    fn default() -> Self {
        SessionEntities {
            own_saves: Arc::default(),
            this_world: EntityRecord::new(SavedIds::ThisWorld),
            elsewhere: None,
        }
    }
}

/// Where a save's entity ids come from.
#[derive(Clone, Copy)]
enum Origin {
    ThisWorld,
    Elsewhere(Uuid),
}

impl SessionEntities {
    fn origin(own_saves: &HashSet<Uuid>, save_id: Uuid) -> Origin {
        match own_saves.contains(&save_id) {
            true => Origin::ThisWorld,
            false => Origin::Elsewhere(save_id),
        }
    }

    /// The record a save from `origin` is applied with (a fresh one for another save from
    /// elsewhere than the last).
    fn record(&mut self, origin: Origin) -> &mut EntityRecord {
        match origin {
            Origin::ThisWorld => &mut self.this_world,
            Origin::Elsewhere(id) => {
                if self.elsewhere.as_ref().is_none_or(|(last, _)| *last != id) {
                    self.elsewhere = Some((id, EntityRecord::new(SavedIds::Elsewhere)));
                }
                &mut self.elsewhere.as_mut().expect("set just above").1
            }
        }
    }

    /// A copy of the record for `origin`, for the task pool (the maps are shared, not copied).
    fn record_copy(&self, origin: Origin) -> EntityRecord {
        match (origin, &self.elsewhere) {
            (Origin::ThisWorld, _) => self.this_world.clone(),
            (Origin::Elsewhere(id), Some((last, record))) if *last == id => record.clone(),
            (Origin::Elsewhere(_), _) => EntityRecord::new(SavedIds::Elsewhere),
        }
    }
}

/// Notes the id of every save this session wrote: its entity ids are this world's.
pub(crate) fn note_own_save(saved: On<SaveCompleted>, mut session: ResMut<SessionEntities>) {
    Arc::make_mut(&mut session.own_saves).insert(saved.meta.save_id);
}

/// Reads, verifies and decodes on the pool (and, in place, compares with a capture taken
/// now); the world is only touched when the job finishes.
pub(super) fn start(world: &mut World, slot: SlotId, store: Arc<SlotStore>) -> Box<dyn Work> {
    let registry = world.resource::<SaveRegistry>().clone();
    let types = world.resource::<AppTypeRegistry>().clone();
    let assets = world.get_resource::<AssetServer>().cloned();
    let live = match world.resource::<KeepsakeSettings>().load_mode {
        LoadMode::InPlace => capture(world)
            .inspect_err(|error| {
                warn!("keepsake: the world could not be captured to compare ({error}): respawning");
            })
            .ok(),
        LoadMode::Respawn => None,
    };
    let session = Session::of(world.resource::<SessionEntities>());
    let task = task_pool().spawn(async move {
        let read = || -> Result<LoadOutput, KeepsakeError> {
            let _span = info_span!("keepsake::read", %slot).entered();
            let loaded = store.load(slot)?;
            let world_state = &loaded.bundle.world;
            let snapshot = snapshot::decode_with_assets(
                &world_state.ecs_blob,
                world_state.state_hash,
                &registry,
                &types.read(),
                assets.as_ref(),
            )?;
            let origin = SessionEntities::origin(&session.own_saves, loaded.meta.save_id);
            Ok(LoadOutput {
                generation: loaded.generation,
                meta: loaded.meta,
                skipped: loaded.skipped,
                snapshot: session.ready(snapshot, origin, live),
            })
        };
        Box::new(Loaded {
            slot,
            result: read(),
        }) as Box<dyn Outcome>
    });
    Box::new(task)
}

/// What the pool needs of [`SessionEntities`].
struct Session {
    own_saves: Arc<HashSet<Uuid>>,
    records: SessionEntities,
}

impl Session {
    fn of(session: &SessionEntities) -> Self {
        Session {
            own_saves: Arc::clone(&session.own_saves),
            records: SessionEntities {
                own_saves: Arc::default(),
                this_world: session.this_world.clone(),
                elsewhere: session.elsewhere.clone(),
            },
        }
    }

    /// The decoded save, compared with `live` when there is a capture. A save from elsewhere
    /// that no load spawned entities for yet has no live entity to keep: it is respawned,
    /// which spawns faster than an apply in place does, and its record is started.
    fn ready(
        &self,
        snapshot: DecodedSnapshot,
        origin: Origin,
        live: Option<PendingSnapshot>,
    ) -> Ready {
        let record = self.records.record_copy(origin);
        match (live, origin) {
            (Some(_), Origin::Elsewhere(_)) if record.is_empty() => {
                Ready::Respawn(Box::new(snapshot), Some(origin))
            }
            (Some(live), _) => {
                let prepared = snapshot::prepare(snapshot, &live, &record);
                // The capture's patched pieces are put together here, off the main thread.
                live.settle();
                Ready::InPlace(Box::new(prepared), origin)
            }
            (None, _) => Ready::Respawn(Box::new(snapshot), None),
        }
    }
}

/// A decoded save, ready to apply.
enum Ready {
    /// Compared with a capture: applied in place.
    InPlace(Box<PreparedLoad>, Origin),
    /// Applied by despawning and spawning again; with an origin, the spawned entities start its
    /// record.
    Respawn(Box<DecodedSnapshot>, Option<Origin>),
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
    snapshot: Ready,
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

/// Applies the save: in place against a capture taken now, or by respawning.
fn apply_snapshot(world: &mut World, ready: Ready) -> Result<ApplyReport, SnapshotError> {
    match ready {
        Ready::Respawn(snapshot, origin) => {
            let applied = snapshot::apply(world, *snapshot, LoadMode::Respawn);
            if let Some(origin) = origin {
                world.resource_scope(|world, mut session: Mut<SessionEntities>| {
                    session
                        .record(origin)
                        .note_spawned(world, &applied.entity_map);
                });
            }
            Ok(applied)
        }
        Ready::InPlace(prepared, origin) => {
            // The saved States were entered (`enter_states`): the capture sees what their
            // OnExit and OnEnter did, and the apply compares again what they changed.
            let live = capture(world)?;
            let applied = world.resource_scope(|world, mut session: Mut<SessionEntities>| {
                let record = session.record(origin);
                snapshot::apply_prepared(world, *prepared, &live, record)
            });
            settle_later(world, live);
            Ok(applied)
        }
    }
}

/// Goes to the saved `States` of a load in place, through their transitions, before anything
/// else: before the picture of what live entities carry (so what `OnEnter` made counts) and
/// before the capture the apply compares with. A respawning load enters them in
/// `snapshot::apply`.
fn enter_states(world: &mut World, ready: &mut Ready) {
    if let Ready::InPlace(prepared, _) = ready {
        prepared.enter_saved_states(world, SameState::Reenter);
    }
}

/// Applies a decoded save to the world, restores the clocks, and reports [`LoadCompleted`].
fn apply(world: &mut World, slot: SlotId, output: LoadOutput) {
    let _span = info_span!("keepsake::apply", %slot).entered();
    let refused = match &output.snapshot {
        Ready::InPlace(prepared, _) => prepared.refused_asset_paths().to_vec(),
        Ready::Respawn(snapshot, _) => snapshot.refused_asset_paths().to_vec(),
    };
    let refused_asset_paths = Arc::new(refused);
    for refused in refused_asset_paths.iter() {
        warn!(
            "keepsake: {slot} names the asset {:?}, which was not loaded: {}",
            refused.path, refused.reason
        );
    }
    let started = Instant::now();
    let mut ready = output.snapshot;
    enter_states(world, &mut ready);
    let (applied, missing_components) = unsaved::apply_noting_losses(
        world,
        &slot.to_string(),
        |world| apply_snapshot(world, ready),
        |applied| {
            applied
                .as_ref()
                .map(unsaved::spawned_by)
                .unwrap_or_default()
        },
    );
    let applied = match applied {
        Ok(applied) => applied,
        Err(error) => {
            warn!("keepsake: loading {slot} failed: {error}");
            let error = Arc::new(KeepsakeError::from(error));
            return report(world, LoadFailed { slot, error });
        }
    };
    let apply_time = started.elapsed();
    world.resource_mut::<Playtime>().0 = output.meta.playtime;
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
        apply_time,
        missing_components,
    };
    report(world, loaded.clone());
    restored::after_load(world, &loaded);
}
