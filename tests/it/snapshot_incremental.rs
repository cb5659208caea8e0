//! Incremental capture (`CaptureCache`) against the full capture: after random edits of a
//! game-shaped world, step after step, the two blobs must be the same bytes; and a small edit
//! must re-encode only the piece it touched. The save file of such a capture is cut at the
//! snapshot's pieces and must decode to its bundle.

use crate::common::edits::{Edits, Hidden, world_with};
use crate::common::fixtures::Rng;
use crate::common::real_world::{self, GameClock, Stats, UnitId};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{
    self, ChunkCache, ChunkStats, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta,
};
use bevy_keepsake::snapshot::{
    self, CaptureCache, PIECE_ROWS, SaveFilter, SaveRegistry, Saveable, SaveableAppExt,
    SnapshotHistory,
};

/// Prints where two blobs differ, column by column.
fn explain(incremental: &[u8], full: &[u8]) {
    let (a, b) = (
        snapshot::inspect(incremental).unwrap(),
        snapshot::inspect(full).unwrap(),
    );
    if a.entity_ids != b.entity_ids {
        eprintln!("entity tables differ");
    }
    for (x, y) in a.columns.iter().zip(&b.columns) {
        if x != y {
            let rows = |c: &snapshot::StoredColumn| {
                c.rows.iter().map(|r| r.entity_index).collect::<Vec<_>>()
            };
            let (rx, ry) = (rows(x), rows(y));
            let first = rx.iter().zip(&ry).position(|(p, q)| p != q);
            eprintln!(
                "column {} differs: {} vs {} rows, first at {first:?}: {:?} vs {:?}",
                x.type_path,
                rx.len(),
                ry.len(),
                first.map(|f| &rx[f..(f + 5).min(rx.len())]),
                first.map(|f| &ry[f..(f + 5).min(ry.len())])
            );
        }
    }
}

#[test]
fn incremental_capture_equals_full_capture_after_random_edits() {
    let mut app = world_with(3000);
    let world = app.world_mut();
    let mut edits = Edits::new(15, 1_000_000);
    let mut cache = CaptureCache::default();
    let (mut patched, mut reused) = (0, 0);
    for step in 0..200 {
        let count = 1 + edits.rng.below(12);
        edits.apply(world, count);
        if step == 100 {
            // A new filter: the cache must start over.
            world
                .resource_mut::<SaveRegistry>()
                .set_filter(SaveFilter::default().without::<Hidden>());
        }
        let incremental = cache.capture(world).unwrap().finish();
        let full = snapshot::capture(world).unwrap();
        if incremental != full {
            explain(&incremental.blob, &full.blob);
        }
        assert!(
            incremental == full,
            "step {step}: the incremental capture ({} bytes) differs from the full one ({} \
             bytes) ({:?})",
            incremental.blob.len(),
            full.blob.len(),
            cache.stats()
        );
        assert_eq!(
            cache.stats().started_over,
            step == 0 || step == 100,
            "{step}"
        );
        patched += cache.stats().pieces_patched;
        reused += cache.stats().pieces_reused;
        // Most steps are a frame later; some edit the world again within the same tick.
        if edits.rng.below(4) != 0 {
            world.increment_change_tick();
        }
    }
    assert!(
        patched > 0 && reused > 0,
        "the cache never reused ({reused}) or patched ({patched}) a piece"
    );
}

#[test]
fn a_small_edit_re_encodes_only_its_rows() {
    let mut app = world_with(6000);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    let first = cache.capture(world).unwrap().finish();
    let stats = cache.stats();
    assert!(stats.started_over);
    assert_eq!(stats.rows_encoded, first.components + first.resources);
    world.increment_change_tick();

    let _unchanged = cache.capture(world).unwrap().finish();
    let stats = cache.stats();
    assert_eq!(
        (
            stats.rows_encoded,
            stats.pieces_patched,
            stats.pieces_rebuilt
        ),
        (0, 0, 0),
        "nothing changed: {stats:?}"
    );
    assert!(stats.pieces_reused > 17, "{stats:?}");
    world.increment_change_tick();

    let mut query = world.query::<&mut Stats>();
    let touched = PIECE_ROWS + 3;
    for (n, mut stats) in query.iter_mut(world).enumerate() {
        if n == 0 || n == touched {
            stats.xp += 1;
        }
    }
    world.resource_mut::<GameClock>().tick += 1;
    let after = cache.capture(world).unwrap().finish();
    assert!(after.blob == snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert_eq!(
        (
            stats.rows_encoded,
            stats.pieces_patched,
            stats.pieces_rebuilt
        ),
        (3, 2, 1),
        "two values in two pieces and one resource changed: {stats:?}"
    );

    world.increment_change_tick();
    let entity = world
        .query_filtered::<Entity, With<Stats>>()
        .iter(world)
        .next()
        .unwrap();
    world.despawn(entity);
    let after_despawn = cache.capture(world).unwrap().finish();
    assert!(after_despawn.blob == snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert!(
        stats.pieces_rebuilt >= 1 && stats.pieces_reused > stats.pieces_rebuilt,
        "a despawn rebuilds the pieces whose rows moved, not every piece: {stats:?}"
    );
}

/// Encodes `bundle` through `chunks` and decodes the file again.
fn save_and_read(bundle: &SaveBundle, chunks: &ChunkCache) -> (SaveBundle, ChunkStats, Vec<u8>) {
    let meta = SaveMeta::new(SlotId::Quick);
    let encoded = format::encode_cached(&meta, bundle, &EncodeOptions::default(), chunks).unwrap();
    let stats = encoded.chunk_stats().unwrap();
    let bytes = encoded.to_vec();
    let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
    (decoded.bundle, stats, bytes)
}

/// The chunk lengths of a version-2 file.
fn chunk_lens(file: &[u8]) -> Vec<u32> {
    let table = format::read_chunk_table(file, &DecodeOptions::default())
        .unwrap()
        .unwrap();
    table.chunks.iter().map(|c| c.uncompressed_len).collect()
}

/// The save file of an incremental capture is cut at the snapshot's pieces, and its unchanged
/// chunks are found in the chunk cache by their pieces' hashes, which the capture cache keeps
/// between saves. After random edits, step after step, every file decodes to the bundle it was
/// written from (and, in debug builds, the encoder checks every piece's hash against its
/// bytes); a step that changed one value stores only the chunks around it.
#[test]
fn saves_cut_at_the_snapshots_pieces_decode_to_their_bundles() {
    let mut app = world_with(6000);
    let world = app.world_mut();
    let mut edits = Edits::new(11, 3_000_000);
    let mut cache = CaptureCache::default();
    let chunks = ChunkCache::new();
    for step in 0..40 {
        let count = edits.rng.below(4);
        edits.apply(world, count);
        world.increment_change_tick();
        let bundle = cache.capture(world).unwrap().finish().into_bundle(step);
        assert!(!bundle.blob_pieces().is_empty());
        let (decoded, _, _) = save_and_read(&bundle, &chunks);
        assert!(decoded == bundle, "step {step}");
        assert!(bundle.world.ecs_blob == snapshot::capture(world).unwrap().blob);
    }

    // A save with nothing changed compresses the chunks the last one stored as is (see
    // `CompressWhen::ItPays`), so the next save finds every unchanged chunk done.
    world.increment_change_tick();
    let settled = cache.capture(world).unwrap().finish().into_bundle(40);
    save_and_read(&settled, &chunks);
    world.increment_change_tick();
    let mut query = world.query::<&mut Stats>();
    let middle = query.iter(world).count() / 2;
    query.iter_mut(world).nth(middle).unwrap().xp += 1;
    let bundle = cache.capture(world).unwrap().finish().into_bundle(41);
    let (decoded, stats, file) = save_and_read(&bundle, &chunks);
    assert!(decoded == bundle);
    // The fields before the blob (the tick changed) and the group around the value.
    assert!(stats.chunks > 4, "{stats:?}");
    assert!(stats.chunks - stats.reused <= 3, "{stats:?}");
    // Cut at the pieces, not by content: a bundle without them is cut elsewhere.
    let without = SaveBundle::new(bundle.world.clone());
    assert!(without.blob_pieces().is_empty());
    let (_, _, content_cut) = save_and_read(&without, &ChunkCache::new());
    assert_ne!(chunk_lens(&file), chunk_lens(&content_cut));
}

/// Pieces are used only for the blob they were made for: a blob edited in place after its
/// capture is saved as edited (cut by content), never with a chunk of the blob it was.
#[test]
fn a_blob_edited_after_its_capture_is_saved_as_edited() {
    let mut app = world_with(6000);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    let chunks = ChunkCache::new();
    let bundle = cache.capture(world).unwrap().finish().into_bundle(1);
    save_and_read(&bundle, &chunks);
    let mut edited = bundle.clone();
    assert_eq!(edited.blob_pieces(), bundle.blob_pieces());
    let middle = edited.world.ecs_blob.len() / 2;
    edited.world.ecs_blob[middle] ^= 0x10;
    let (decoded, _, _) = save_and_read(&edited, &chunks);
    assert_eq!(decoded.world.ecs_blob, edited.world.ecs_blob);
}

/// The hierarchy is read again only where it changed: an edit of a value leaves every table's
/// hierarchy as it was, a new parent re-reads the tables of the entities whose links changed,
/// and the blob stays the full capture's.
#[test]
fn the_hierarchy_is_read_again_only_where_it_changed() {
    let mut app = world_with(3000);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    cache.capture(world).unwrap().finish();
    let first = cache.stats();
    assert!(first.hierarchy_tables_read > 0, "{first:?}");
    assert_eq!(first.hierarchy_tables_reused, 0);
    world.increment_change_tick();

    let mut query = world.query::<&mut Stats>();
    query.iter_mut(world).next().unwrap().hp += 1.0;
    let after_value = cache.capture(world).unwrap().finish();
    assert_eq!(after_value.blob, snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert_eq!(
        (stats.hierarchy_tables_read, stats.hierarchy_tables_reused),
        (0, first.hierarchy_tables_read),
        "{stats:?}"
    );
    world.increment_change_tick();

    let units: Vec<Entity> = world
        .query_filtered::<Entity, (With<UnitId>, Without<ChildOf>)>()
        .iter(world)
        .take(2)
        .collect();
    world.entity_mut(units[1]).insert(ChildOf(units[0]));
    let after_link = cache.capture(world).unwrap().finish();
    assert_eq!(after_link.blob, snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert!(stats.hierarchy_tables_read > 0, "{stats:?}");
    assert!(stats.hierarchy_tables_reused > 0, "{stats:?}");
}

/// Captures whose pending snapshots are dropped unfinished leave patches on patches (their
/// bytes are put together only by `finish`): the capture after them still writes the full
/// capture's bytes, however long the chain grew.
#[test]
fn captures_left_unfinished_still_give_the_full_captures_bytes() {
    let mut app = world_with(3000);
    let world = app.world_mut();
    let mut edits = Edits::new(7, 2_000_000);
    let mut cache = CaptureCache::default();
    for step in 0..40 {
        edits.apply(world, 3);
        world.increment_change_tick();
        let pending = cache.capture(world).unwrap();
        if step % 13 == 12 {
            let finished = pending.finish();
            assert!(finished == snapshot::capture(world).unwrap(), "step {step}");
        }
        // Dropped unfinished otherwise.
    }
    let last = cache.capture(world).unwrap().finish();
    assert!(last == snapshot::capture(world).unwrap());
}

/// Captures kept by a `SnapshotHistory` (the plugin's rewind points) put back together give
/// the bytes a full capture of their time gave, whatever happened after: random edits (spawns,
/// despawns, new parents, a new filter), captures finished in between as a save's are (which
/// put patches together on the cache's side) or dropped, and older ones put together first.
#[test]
fn kept_snapshots_put_back_together_are_the_full_captures_of_their_time() {
    let mut app = world_with(3000);
    let world = app.world_mut();
    let mut edits = Edits::new(26, 3_000_000);
    let mut cache = CaptureCache::default();
    let mut history = SnapshotHistory::default();
    let mut kept = Vec::new();
    for step in 0..60 {
        let count = 1 + edits.rng.below(6);
        edits.apply(world, count);
        if step == 30 {
            world
                .resource_mut::<SaveRegistry>()
                .set_filter(SaveFilter::default().without::<Hidden>());
        }
        world.increment_change_tick();
        let pending = cache.capture(world).unwrap();
        let point = history.record(&pending);
        match step % 3 {
            // A save's capture: recorded, finished, its point dropped.
            0 => drop(pending.finish()),
            // Put together right away, as a rewind to the newest point does.
            1 => assert!(point.pending().finish() == pending.finish(), "step {step}"),
            _ => kept.push((step, point, snapshot::capture(world).unwrap().blob)),
        }
    }
    // Oldest first, then the rest newest first: each walks a different share of the layers.
    let (first, rest) = kept.split_at(1);
    for (step, point, blob) in first.iter().chain(rest.iter().rev()) {
        let again = point.pending().finish();
        if again.blob != *blob {
            explain(&again.blob, blob);
        }
        assert!(
            again.blob == *blob,
            "the point of step {step} came back different"
        );
    }
}

/// Sixty kept captures of a world where 1 % of the entities change between two of them hold
/// about one capture plus the changed rows, not sixty captures; dropping them frees it all.
#[test]
fn kept_snapshots_share_what_did_not_change() {
    let mut app = world_with(10_000);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    let mut history = SnapshotHistory::default();
    let blob = snapshot::capture(world).unwrap().blob.len();
    let units: Vec<Entity> = world
        .query_filtered::<Entity, With<Stats>>()
        .iter(world)
        .collect();
    let mut rng = Rng::new(60);
    let mut points = Vec::new();
    for _ in 0..60 {
        for _ in 0..units.len() / 100 {
            let unit = units[rng.below(units.len() as u64) as usize];
            world.get_mut::<Stats>(unit).unwrap().hp += 1.0;
            world.get_mut::<Transform>(unit).unwrap().translation.x += 1.0;
        }
        world.increment_change_tick();
        points.push(history.record(&cache.capture(world).unwrap()));
    }
    let memory = history.memory();
    println!("60 points: {memory} bytes, one blob {blob} bytes");
    assert!(
        memory < 2 * blob,
        "60 points hold {memory} bytes, more than twice a blob of {blob} bytes"
    );
    drop(points);
    history.clear();
    assert_eq!(history.memory(), 0, "dropped points still count");
}

/// A serde type whose id `FRAGILE_REFUSED` cannot be written (its `Serialize` fails), to meet
/// a capture error in the middle of many rows; its history makes each value cost enough for a
/// column of thousands to be spread over the pool.
#[derive(Component, Reflect, Clone, Debug, PartialEq, serde::Deserialize)]
#[reflect(Component)]
struct Fragile {
    id: u32,
    history: Vec<u32>,
}

const FRAGILE_REFUSED: u32 = 4_321;

impl serde::Serialize for Fragile {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if self.id == FRAGILE_REFUSED {
            return Err(serde::ser::Error::custom("4321 is not for saving"));
        }
        let mut fields = serializer.serialize_struct("Fragile", 2)?;
        fields.serialize_field("id", &self.id)?;
        fields.serialize_field("history", &self.history)?;
        fields.end()
    }
}

/// One table of `count` units with a serde, a reflection-only and a text column, and the
/// compute pool a game has: a capture that re-encodes many rows spreads them over the pool.
fn one_table_world(count: u32) -> App {
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
    });
    assert!(bevy::tasks::ComputeTaskPool::get().thread_num() > 0);
    let mut app = real_world::app();
    app.register_saveable_serde::<Fragile>();
    app.world_mut().spawn_batch((0..count).map(|n| {
        (
            Saveable,
            UnitId(n),
            Stats {
                hp: n as f32,
                max_hp: 100.0,
                level: (n % 50) as u8,
                xp: n,
                armor: -(n as i16 % 7),
                alive: true,
            },
            Name::new(format!("unit {n}")),
            Fragile {
                id: n % 1_000,
                history: vec![n; 64],
            },
        )
    }));
    app.world_mut().increment_change_tick();
    app
}

/// Many changed rows are encoded on the compute pool's threads as well as the calling one (see
/// `capture/encode.rs`): the pieces must come back in order, patched and rebuilt alike, and the
/// blob must be the full capture's.
#[test]
fn rows_encoded_in_parallel_give_the_full_captures_bytes() {
    let mut app = one_table_world(24 * PIECE_ROWS as u32 + 17);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    let first = cache.capture(world).unwrap().finish();
    assert!(first.blob == snapshot::capture(world).unwrap().blob);
    world.increment_change_tick();

    // Every other unit's stats and every third one's name: each column patches every piece,
    // and has enough to encode to be spread over the pool.
    let mut query = world.query::<(&mut Stats, &mut Name, &UnitId)>();
    for (mut stats, mut name, id) in query.iter_mut(world) {
        if id.0 % 2 == 0 {
            stats.xp += 1_000;
        }
        if id.0 % 3 == 0 {
            name.set(format!("veteran {}", id.0));
        }
    }
    let patched = cache.capture(world).unwrap().finish();
    assert!(patched.blob == snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert!(stats.pieces_patched >= 50, "{stats:?}");
    assert!(stats.rows_encoded > 20_000, "{stats:?}");
    assert!(
        stats.rows_spread > 0,
        "nothing was encoded on the pool: {stats:?}"
    );
    world.increment_change_tick();

    // The first unit despawned: the table's last row moves into its place, so the first and
    // the last piece of every column are rebuilt and the others reused.
    let first_unit = world
        .query::<(Entity, &UnitId)>()
        .iter(world)
        .find(|(_, id)| id.0 == 0)
        .map(|(entity, _)| entity)
        .unwrap();
    world.despawn(first_unit);
    let rebuilt = cache.capture(world).unwrap().finish();
    assert!(rebuilt.blob == snapshot::capture(world).unwrap().blob);
    assert!(cache.stats().pieces_rebuilt >= 2, "{:?}", cache.stats());
    world.increment_change_tick();

    // After a start-over every piece is rebuilt, spread over the pool.
    cache.clear();
    let again = cache.capture(world).unwrap().finish();
    assert!(again.blob == snapshot::capture(world).unwrap().blob);
    let stats = cache.stats();
    assert!(
        stats.pieces_rebuilt >= 50 && stats.rows_spread > 0,
        "{stats:?}"
    );
}

/// A value that cannot be written among thousands encoded in parallel fails the capture with
/// the type named, and the cache starts over rather than keep half a column.
#[test]
fn a_value_that_cannot_be_written_fails_a_parallel_capture() {
    let mut app = one_table_world(4 * PIECE_ROWS as u32);
    let world = app.world_mut();
    let mut cache = CaptureCache::default();
    cache.capture(world).unwrap().finish();
    world.increment_change_tick();

    let mut query = world.query::<&mut Fragile>();
    for mut fragile in query.iter_mut(world) {
        fragile.id += 1;
    }
    cache.capture(world).unwrap().finish();
    let stats = cache.stats();
    assert!(
        stats.rows_spread > 0,
        "nothing was encoded on the pool: {stats:?}"
    );
    world.increment_change_tick();

    for mut fragile in query.iter_mut(world) {
        fragile.id += 1;
    }
    let refused = query
        .iter_mut(world)
        .nth(3_000)
        .map(|mut fragile| fragile.id = FRAGILE_REFUSED);
    assert!(refused.is_some());
    let error = cache.capture(world).err().expect("the capture must fail");
    // Postcard keeps a serializer's own message out of its error; the type is named.
    let message = error.to_string();
    assert!(
        message.contains("cannot be saved") && message.contains("Fragile"),
        "{message}"
    );

    world.increment_change_tick();
    for mut fragile in query.iter_mut(world) {
        if fragile.id == FRAGILE_REFUSED {
            fragile.id = 1;
        }
    }
    let after = cache.capture(world).unwrap().finish();
    assert!(cache.stats().started_over, "{:?}", cache.stats());
    assert!(after.blob == snapshot::capture(world).unwrap().blob);
}
