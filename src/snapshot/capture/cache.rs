//! The [`CaptureCache`]: each registered type's encoded pieces between captures, and the main
//! thread's part of every capture (see the [module docs](super)).

use super::column::{CaptureStats, Changes, ColumnRefresh, SavedTables};
use super::hierarchy::{HierarchyCache, OrderMemo};
use super::join::JoinMemo;
use super::keys::KeyTable;
use super::pending::{ColumnId, PendingSnapshot, Snapshot};
use super::piece::{ColumnCache, TableRows};
use super::world::{log_unregistered, registries};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::{SaveRegistry, bevy_made_assets};
use crate::snapshot::value::assets::{CaptureAssets, RuntimeAssetHandles};
use bevy::ecs::change_detection::Tick;
use bevy::ecs::world::WorldId;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;

/// Captures older than this many change ticks are not trusted to tell what changed (Bevy
/// clamps the age of old change ticks), so the cache starts over.
const MAX_TICK_WINDOW: u32 = 1 << 30;

/// The encoded rows of the last capture, by registered type and table, for
/// [`CaptureCache::capture`] to re-encode only what changed since.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, CaptureCache, Saveable, SaveableAppExt};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// let world = app.world_mut();
/// let hero = world.spawn((Saveable, Health(7.0))).id();
/// world.spawn_batch((0..3000).map(|_| (Saveable, Health(1.0))));
///
/// // Frames go by between the spawns, the saves and the edits (in one tick, a capture cannot
/// // tell an edit made before it from one made after, and counts it as changed).
/// world.increment_change_tick();
/// let mut cache = CaptureCache::default();
/// cache.capture(world)?.finish();
/// world.increment_change_tick();
/// world.get_mut::<Health>(hero).unwrap().0 = 3.0;
/// let snapshot = cache.capture(world)?.finish();
///
/// assert_eq!(snapshot.blob, snapshot::capture(world)?.blob);
/// assert_eq!(cache.stats().rows_encoded, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct CaptureCache {
    /// What the cached pieces were encoded for; `None` when nothing is cached.
    key: Option<CacheKey>,
    /// Changes at a tick newer than this are not in the cached pieces.
    since: Tick,
    /// Counts captures, so each table's entities are compared once per capture.
    capture_count: u64,
    /// The entities of each table at the last capture, by table index.
    tables: Vec<TableRows>,
    /// The cached pieces of each registered type, by registry entry.
    columns: Vec<ColumnCache>,
    /// The hierarchy rows of each table at the last capture.
    hierarchy: HierarchyCache,
    /// The entity table's order as the last finished capture worked it out.
    order: OrderMemo,
    /// The rows the last finished capture's blob joined.
    joins: JoinMemo,
    stats: CaptureStats,
}

#[derive(Clone, PartialEq, Eq)]
struct CacheKey {
    world: WorldId,
    registry: u64,
}

/// Captures the world through `cache`: [`CaptureCache::capture`] then [`PendingSnapshot::finish`].
pub fn capture_incremental(
    world: &World,
    cache: &mut CaptureCache,
) -> Result<Snapshot, SnapshotError> {
    Ok(cache.capture(world)?.finish())
}

impl CaptureCache {
    /// What the last capture re-encoded and reused.
    pub fn stats(&self) -> CaptureStats {
        self.stats
    }

    /// Forgets every cached piece: the next capture encodes everything.
    pub fn clear(&mut self) {
        *self = CaptureCache::default();
    }

    /// The main thread's part of a capture: reads the saved entities and their hierarchy, and
    /// brings every registered type's pieces up to date with the world, re-encoding only what
    /// changed since the last capture. [`PendingSnapshot::finish`] writes the blob, which is the
    /// one a full [`capture`](super::capture()) would write.
    ///
    /// When a table's column has much to encode (estimated from its first rows: at least
    /// 0.2 ms of work), the rest is spread over Bevy's `ComputeTaskPool`, if the app has one,
    /// with the calling thread helping: call it from the main thread or a system, not from a
    /// task of that pool.
    pub fn capture(&mut self, world: &World) -> Result<PendingSnapshot, SnapshotError> {
        let (registry, types) = registries(world)?;
        let this_run = world.read_change_tick();
        self.start(world, registry, this_run);
        let result = self.refresh(world, registry, &types, this_run);
        match result {
            Ok(pending) => {
                // Changes made later in this same tick must count as changed next time.
                self.since = Tick::new(this_run.get().wrapping_sub(1));
                Ok(pending)
            }
            Err(error) => {
                self.clear();
                Err(error)
            }
        }
    }

    /// Starts over when the cache was made for another world or registry, or too long ago.
    fn start(&mut self, world: &World, registry: &SaveRegistry, this_run: Tick) {
        let key = CacheKey {
            world: world.id(),
            registry: registry.revision(),
        };
        let stale = this_run.get().wrapping_sub(self.since.get()) >= MAX_TICK_WINDOW;
        let started_over = self.key.as_ref() != Some(&key) || stale;
        if started_over {
            self.clear();
            self.key = Some(key);
        }
        self.columns
            .resize_with(registry.entries().len(), ColumnCache::default);
        self.capture_count += 1;
        self.stats = CaptureStats {
            started_over,
            ..CaptureStats::default()
        };
    }

    fn refresh(
        &mut self,
        world: &World,
        registry: &SaveRegistry,
        types: &TypeRegistry,
        this_run: Tick,
    ) -> Result<PendingSnapshot, SnapshotError> {
        let (matched, archetypes) = registry
            .filter()
            .resolve(world)
            .map(|filter| filter.matching_entities(world))
            .unwrap_or_default();
        if self.stats.started_over {
            log_unregistered(world);
        }
        let policy = world.get_resource::<RuntimeAssetHandles>().copied();
        let assets = CaptureAssets::new(policy.unwrap_or_default(), bevy_made_assets(world));
        let saved = SavedTables::new(world, &archetypes);
        let keys = KeyTable::collect(world, registry, &saved)?;
        let changes = Changes {
            since: (!self.stats.started_over).then_some(self.since),
            this_run,
        };
        let hierarchy = self
            .hierarchy
            .refresh(world, &archetypes, &changes, &mut self.stats);
        let mut columns = Vec::with_capacity(registry.entries().len());
        for (entry, cache) in registry.entries().iter().zip(&mut self.columns) {
            let mut column = ColumnRefresh {
                world,
                types,
                assets: &assets,
                saved: &saved,
                changes,
                capture_count: self.capture_count,
                ops: &entry.ops,
                tables: &mut self.tables,
                cache,
                writer: None,
                pieces: Vec::new(),
                stats: &mut self.stats,
            };
            (entry.refresh)(world, &mut column)?;
            let pieces = column.into_pieces();
            columns.push((ColumnId::of(entry, entry.layout_bytes(types)), pieces));
        }
        Ok(PendingSnapshot {
            matched,
            hierarchy,
            order: self.order.clone(),
            joins: self.joins.clone(),
            keys,
            columns,
            handles_left_out: assets.into_left_out(),
        })
    }
}
