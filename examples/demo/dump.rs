//! `--dump <file>`: a save's world as RON text, read with the game's own types.
//!
//! The `keepsake` command line shows any save's structure, but values need the types that wrote
//! them. A game exposes them like this: register its saved types in a bare `App` (no window, no
//! systems run), decode the file with the engine-free format layer, and hand the blob to
//! `snapshot::dump_with_assets`.

use super::game;
use bevy::prelude::*;
use bevy_keepsake::format::{self, DecodeOptions};
use bevy_keepsake::snapshot::{self, SaveRegistry};
use std::path::Path;

pub fn run(path: &Path) -> AppExit {
    match dump(path) {
        Ok(text) => {
            print!("{text}");
            AppExit::Success
        }
        Err(message) => {
            eprintln!("demo --dump: {}: {message}", path.display());
            AppExit::error()
        }
    }
}

fn dump(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|error| error.to_string())?;
    let save =
        format::decode(&bytes, &DecodeOptions::default()).map_err(|error| error.to_string())?;
    let world = &save.bundle.world;
    if snapshot::state_hash(&world.ecs_blob) != world.state_hash {
        eprintln!("warning: the world snapshot's hash does not match; it may be damaged");
    }
    // An asset server, so saved handles (the coins' sprites) print by their path. Making a
    // handle starts its load in the background; the process ends before it matters.
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AssetPlugin::default()))
        .init_asset::<Image>()
        .init_asset::<TextureAtlasLayout>();
    game::register_saved_types(&mut app);
    let registry = app.world().resource::<SaveRegistry>();
    let types = app.world().resource::<AppTypeRegistry>().read();
    let assets = app.world().resource::<AssetServer>();
    snapshot::dump_with_assets(&world.ecs_blob, registry, &types, Some(assets))
        .map_err(|error| error.to_string())
}
