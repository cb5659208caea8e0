//! Peak heap during a 10k-entity save (capture + encode) and load (decode + apply), measured
//! with a counting allocator, against the size of the bundle.
//!
//! Run: `cargo bench --bench memory`.

// Each bench uses a part of the test helpers.
#[allow(dead_code)]
#[path = "../keepsake-core/tests/core/common/alloc.rs"]
mod alloc;
#[path = "../tests/it/common/game_world.rs"]
mod game_world;

use alloc::{CountingAlloc, peak_allocation};
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, DecodeOptions, EncodeOptions, SaveBundle, SaveMeta, WorldState};
use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const ENTITIES: u32 = 10_000;

fn main() {
    let mut app = game_world::app();
    game_world::populate(app.world_mut(), ENTITIES);

    let (bytes, save_peak) = peak_allocation(|| {
        let captured = snapshot::capture(app.world()).unwrap();
        let bundle = SaveBundle::new(WorldState {
            tick: 1,
            ecs_blob: captured.blob,
            state_hash: captured.state_hash,
        });
        format::encode(
            &SaveMeta::new(SlotId::Quick),
            &bundle,
            &EncodeOptions::default(),
        )
        .unwrap()
        .to_vec()
    });
    let bundle_len = format::decode(&bytes, &DecodeOptions::default())
        .unwrap()
        .header
        .payload_uncompressed_len as usize;

    let mut fresh = game_world::app();
    let registry = fresh.world().resource::<SaveRegistry>().clone();
    let types = fresh.world().resource::<AppTypeRegistry>().clone();
    let (_, load_peak) = peak_allocation(|| {
        let decoded = format::decode(&bytes, &DecodeOptions::default()).unwrap();
        let world_state = &decoded.bundle.world;
        let snapshot = snapshot::decode(
            &world_state.ecs_blob,
            world_state.state_hash,
            &registry,
            &types.read(),
        )
        .unwrap();
        snapshot::apply(fresh.world_mut(), snapshot, LoadMode::Respawn)
    });

    let mib = |bytes: usize| bytes as f64 / (1 << 20) as f64;
    println!(
        "memory/{ENTITIES} entities: bundle {:.2} MiB uncompressed, file {:.2} MiB",
        mib(bundle_len),
        mib(bytes.len())
    );
    println!(
        "  save (capture + encode): peak {:.2} MiB = {:.2}x the bundle",
        mib(save_peak),
        save_peak as f64 / bundle_len as f64
    );
    println!(
        "  load (decode + apply, world growth included): peak {:.2} MiB = {:.2}x the bundle",
        mib(load_peak),
        load_peak as f64 / bundle_len as f64
    );
}
