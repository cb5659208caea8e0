//! Keepsake Arena: a small top-down game that shows everything bevy_keepsake does.
//!
//! Collect the coins, keep away from the red enemies. F5 quicksaves, F9 quickloads, Esc opens
//! the save menu, and the game autosaves every 30 seconds of play.
//!
//! - `game.rs` is the game: what it registers for saving (components with an `Entity`
//!   reference, a child entity, resources) and how it rebuilds sprites for loaded entities.
//! - `smoke.rs` is the scripted check CI runs: `--smoke [--shots <dir>]` plays, quicksaves,
//!   changes the world, quickloads and compares, then exercises the menu and takes screenshots,
//!   and last quickloads the demo's quicksave from Bevy 0.19 (`tests/golden`).
//!
//! - `crowd.rs` adds `--crowd N`: N saveable critters wandering unseen, to feel a big world's
//!   save (the HUD shows the last save's main-thread time); `--smoke` runs with 20 000.
//! - `compat.rs` (tests, `cargo test --example demo`): the committed `saves.schema` is
//!   today's and every save in `kept-saves/` loads with today's types.
//! - `dump.rs` prints a save's world as RON through the game's types, without opening a window:
//!   `--dump <file>`.
//!
//! - Cloud saves (feature `cloud`): `--cloud <url>` syncs the saves with S3-compatible storage
//!   and shows each slot's sync state in the menu; `--device <name>` names this device in its
//!   saves and `--save-root <dir>` keeps its saves apart, so two demos on one machine play the
//!   part of two devices.
//!
//! ```text
//! cargo run --release --example demo
//! cargo run --release --example demo -- --crowd 100000
//! cargo run --example demo -- --dump ~/.local/share/keepsake-arena/saves/default/quick-00.g000001.ksav
//! cargo run --release --features cloud --example demo -- \
//!     --cloud 's3://saves/arena?endpoint=http://127.0.0.1:5000&region=us-east-1&access_key_id=x&secret_access_key=x' \
//!     --device laptop --save-root /tmp/arena-laptop
//! ```

#[cfg(test)]
mod compat;
mod crowd;
mod dump;
mod game;
mod smoke;

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_keepsake::plugin::{KeepsakeCorePlugin, RewindPlugin};
use bevy_keepsake::prelude::*;
use std::time::Duration;

fn main() -> AppExit {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, file] = args.as_slice()
        && flag == "--dump"
    {
        return dump::run(file.as_ref());
    }
    let usage = "usage: demo [--crowd <n>] [--smoke [--shots <dir>]] [--cloud <url> \
                 [--device <name>]] [--save-root <dir>] | demo --dump <file>";
    let parsed = SyncOptions::from_args(args).and_then(|(sync, rest)| {
        let (crowd, rest) = crowd::take_crowd_arg(rest)?;
        Ok((
            sync,
            crowd,
            smoke::SmokeOptions::from_args(rest.into_iter())?,
        ))
    });
    let parsed = parsed.and_then(|(sync, crowd, smoke)| match (&sync.save_root, &smoke) {
        // The check saves into a fresh folder of its own and removes it when it passes.
        (Some(_), Some(_)) => {
            Err("--smoke saves into a fresh folder of its own: drop --save-root".into())
        }
        _ => Ok((sync, crowd, smoke)),
    });
    let (sync, crowd, smoke) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}\n{usage}");
            return AppExit::error();
        }
    };
    let crowd = crowd.unwrap_or(match smoke {
        Some(_) => crowd::SMOKE_CROWD,
        None => 0,
    });

    let mut group = KeepsakePlugins::new("keepsake-arena");
    if let Some(options) = &smoke {
        // The check saves into a fresh folder, never into the player's saves.
        group = group.save_root(&options.save_root);
    }
    if let Some(root) = &sync.save_root {
        group = group.save_root(root);
    }
    let mut keepsake = group
        .set(AutosavePlugin {
            every: Duration::from_secs(30),
            ..default()
        })
        // A rewind point every tenth of a second, the last 15 seconds: holding R steps back
        // through them a point a frame.
        .set(RewindPlugin {
            points: 150,
            every: Duration::from_millis(100),
            ..default()
        })
        .set(KeepsakeCorePlugin {
            game_version: env!("CARGO_PKG_VERSION").into(),
            ..default()
        });
    if smoke.is_some() {
        // The check autosaves only when its script says so.
        keepsake = keepsake.disable::<AutosavePlugin>();
    }

    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "Keepsake Arena".into(),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }))
    .add_plugins(keepsake)
    .add_plugins(SaveMenuPlugins)
    .add_plugins(game::ArenaPlugin)
    .add_plugins(crowd::CrowdPlugin(crowd));
    if let Err(message) = sync.add_cloud(&mut app) {
        eprintln!("{message}");
        return AppExit::error();
    }
    let Some(options) = smoke else {
        return app.run();
    };
    app.add_plugins(smoke::SmokePlugin(options.clone()));
    let exit = app.run();
    smoke::verify_exit_save(&options, exit)
}

/// The cloud and save-folder flags, taken out before the smoke check reads the rest.
#[derive(Default)]
struct SyncOptions {
    cloud: Option<String>,
    device: Option<String>,
    save_root: Option<std::path::PathBuf>,
}

impl SyncOptions {
    fn from_args(args: Vec<String>) -> Result<(Self, Vec<String>), String> {
        let mut options = SyncOptions::default();
        let mut rest = Vec::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
            match arg.as_str() {
                "--cloud" => options.cloud = Some(value("--cloud")?),
                "--device" => options.device = Some(value("--device")?),
                "--save-root" => options.save_root = Some(value("--save-root")?.into()),
                _ => rest.push(arg),
            }
        }
        Ok((options, rest))
    }

    /// Adds cloud sync when `--cloud` was given (the example needs the `cloud` feature then).
    fn add_cloud(&self, app: &mut App) -> Result<(), String> {
        let Some(url) = &self.cloud else {
            return Ok(());
        };
        #[cfg(feature = "cloud")]
        {
            let mut cloud = bevy_keepsake::cloud::CloudPlugin::new(url.clone())
                .sync_every(Some(Duration::from_secs(30)));
            if let Some(device) = &self.device {
                cloud = cloud.device_name(device.clone());
            }
            app.add_plugins(cloud);
            Ok(())
        }
        #[cfg(not(feature = "cloud"))]
        {
            let _ = (url, app);
            Err(
                "--cloud needs the `cloud` feature: cargo run --features cloud --example demo"
                    .into(),
            )
        }
    }
}
