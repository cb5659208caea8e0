//! Any bytes through the `ecs_blob` decoder (with a matching hash, so the decoder itself is
//! exercised), and a valid decode applied to a world: never a panic.
#![no_main]

#[path = "../../tests/it/common/fuzz_world.rs"]
mod fuzz_world;

use bevy::prelude::*;
use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Registries {
    save: SaveRegistry,
    types: AppTypeRegistry,
}

fn registries() -> &'static Registries {
    static REGISTRIES: OnceLock<Registries> = OnceLock::new();
    REGISTRIES.get_or_init(|| {
        let app = fuzz_world::app();
        Registries {
            save: app.world().resource::<SaveRegistry>().clone(),
            types: app.world().resource::<AppTypeRegistry>().clone(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let registries = registries();
    let decoded = snapshot::decode(
        data,
        snapshot::state_hash(data),
        &registries.save,
        &registries.types.read(),
    );
    if let Ok(decoded) = decoded {
        let mut app = fuzz_world::app();
        snapshot::apply(app.world_mut(), decoded, LoadMode::Respawn);
    }
});
