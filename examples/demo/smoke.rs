//! `--smoke`: the scripted check CI runs in a real window (under Xvfb with software Vulkan).
//!
//! It plays with simulated key presses, quicksaves (F5), changes the world, quickloads (F9) and
//! asserts that every saved thing came back exactly: positions, the enemies' targets, the
//! lantern's parent, the resources, the play time. Then it fills the menu's slots (manual saves,
//! autosaves, one damaged save and one whose newest generation is damaged), opens the menu with
//! Esc, walks it with the arrow keys, asks to overwrite, confirms, and takes screenshots of the
//! menu (top, and scrolled to the manual slots), the overwrite question and a toast. Each screenshot must not be blank, and every save
//! made in the window must carry a thumbnail.
//!
//! Coins carry a saved `Sprite`, so the comparison after the quickload includes their images'
//! asset paths. Last, it closes the window like a player, and checks after the app has exited
//! that the game saved on exit.
//!
//! After the quickload it walks for two seconds while the plugin keeps a rewind point every
//! tenth of a second, recording the world at each point, then holds R: time runs backwards a
//! point a frame. Each restored world must be exactly the one of its point, and each step must
//! land in the frame after it was asked for; it takes a screenshot after the last.
//!
//! It exits 0 when everything matched, 1 with a message naming the first mismatch otherwise.

use crate::game::{
    ArenaRng, ArenaRoot, ArenaSystems, Coin, Enemy, Inventory, Lantern, Level, Player, Score,
};
use bevy::diagnostic::FrameCount;
use bevy::input::ButtonState;
use bevy::input::keyboard::{Key, KeyboardInput, NativeKey};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::sprite::SpriteAlphaMode;
use bevy::window::{PrimaryWindow, WindowCloseRequested};
use bevy_keepsake::plugin::{
    Playtime, RefreshSlotsRequest, RewindCompleted, RewindFailed, RewindPointCompleted,
    RewindPointId, SaveCompleted, SaveStarted, SaveTarget,
};
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::LevelKey;
use bevy_keepsake::store::SlotStatus;
use bevy_keepsake::store::{SlotStore, StoreConfig};
use bevy_keepsake::ui::SaveMenuSystems;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// What `--smoke` was asked to do.
#[derive(Clone)]
pub struct SmokeOptions {
    /// A fresh save folder.
    pub save_root: PathBuf,
    /// Where screenshots go.
    pub shots: PathBuf,
}

impl SmokeOptions {
    /// `None` without `--smoke`.
    pub fn from_args(args: impl Iterator<Item = String>) -> Result<Option<Self>, String> {
        let mut smoke = false;
        let mut shots = None;
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--smoke" => smoke = true,
                "--shots" => {
                    shots = Some(PathBuf::from(args.next().ok_or("--shots needs a folder")?))
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if !smoke {
            return Ok(None);
        }
        let run = std::env::temp_dir().join(format!("keepsake-arena-smoke-{}", std::process::id()));
        Ok(Some(SmokeOptions {
            save_root: run.join("saves"),
            shots: shots.unwrap_or_else(|| run.join("shots")),
        }))
    }
}

/// Runs the script.
pub struct SmokePlugin(pub SmokeOptions);

impl Plugin for SmokePlugin {
    fn build(&self, app: &mut App) {
        if let Err(error) = std::fs::create_dir_all(&self.0.shots) {
            panic!("cannot create {}: {error}", self.0.shots.display());
        }
        app.insert_resource(Script {
            shots: self.0.shots.clone(),
            save_root: self.0.save_root.clone(),
            ..Script::default()
        })
        .init_resource::<Log>()
        .add_observer(
            |e: On<SaveStarted>, frames: Res<FrameCount>, mut log: ResMut<Log>| {
                log.started.push(e.target);
                if e.target == SaveTarget::Slot(SlotId::Quick)
                    && let Some(timing) = log.quicksaves.last_mut()
                {
                    timing.started.get_or_insert((frames.0, Instant::now()));
                }
            },
        )
        .add_observer(
            |e: On<SaveCompleted>, frames: Res<FrameCount>, mut log: ResMut<Log>| {
                log.saved.push((e.slot, e.path.clone()));
                if e.slot == SlotId::Quick
                    && let Some(timing) = log.quicksaves.last_mut()
                    && timing.completed.is_none()
                {
                    timing.completed = Some((frames.0, Instant::now()));
                    println!("smoke: {timing}");
                }
            },
        )
        .add_observer(|e: On<LoadCompleted>, mut log: ResMut<Log>| log.loaded.push(e.slot))
        .add_observer(|e: On<SaveFailed>, mut log: ResMut<Log>| {
            log.failures.push(format!("save failed: {}", e.error));
        })
        .add_observer(|e: On<LoadFailed>, mut log: ResMut<Log>| {
            log.failures.push(format!("load failed: {}", e.error));
        })
        .add_observer(|e: On<RewindPointCompleted>, mut log: ResMut<Log>| {
            log.points_taken.push(e.point)
        })
        .add_observer(|e: On<RewindCompleted>, mut log: ResMut<Log>| log.rewound.push(e.point))
        .add_observer(|e: On<RewindFailed>, mut log: ResMut<Log>| {
            log.failures.push(format!("rewind failed: {}", e.error));
        })
        .add_systems(
            Update,
            run_script
                .before(ArenaSystems)
                .before(SaveMenuSystems::Input),
        );
    }
}

/// What the plugin reported, as it happened.
#[derive(Resource, Default)]
struct Log {
    started: Vec<SaveTarget>,
    saved: Vec<(SlotId, PathBuf)>,
    loaded: Vec<SlotId>,
    failures: Vec<String>,
    shots: Vec<Result<PathBuf, String>>,
    points_taken: Vec<RewindPointId>,
    rewound: Vec<RewindPointId>,
    /// Each F5 the script pressed, timed: the measure of how long a quicksave keeps the player
    /// waiting for its toast.
    quicksaves: Vec<QuicksaveTiming>,
}

/// When F5 was pressed, the quicksave started and it completed: frame number and time each.
struct QuicksaveTiming {
    pressed: (u32, Instant),
    started: Option<(u32, Instant)>,
    completed: Option<(u32, Instant)>,
}

impl std::fmt::Display for QuicksaveTiming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (pressed_frame, pressed_at) = self.pressed;
        let since = |(frame, at): (u32, Instant)| {
            format!(
                "{} frames, {:.1} ms",
                frame - pressed_frame,
                (at - pressed_at).as_secs_f64() * 1000.0
            )
        };
        write!(
            f,
            "F5 (frame {pressed_frame}) -> SaveStarted {} -> SaveCompleted {}",
            self.started.map_or("never".into(), since),
            self.completed.map_or("never".into(), since)
        )
    }
}

/// Presses F5, and starts timing the quicksave it asks for.
fn quicksave(world: &mut World) {
    let frame = world.resource::<FrameCount>().0;
    world
        .resource_mut::<Log>()
        .quicksaves
        .push(QuicksaveTiming {
            pressed: (frame, Instant::now()),
            started: None,
            completed: None,
        });
    tap(world, KeyCode::F5);
}

#[derive(Resource, Default)]
struct Script {
    step: usize,
    step_started: u32,
    /// When the current step began, in real time (`None` for the first).
    step_began: Option<Instant>,
    frame: u32,
    began: Option<Instant>,
    shots: PathBuf,
    save_root: PathBuf,
    /// Loads reported before the quickload step began.
    loads_seen: usize,
    old_save: OldSave,
    saved_world: Option<Digest>,
    saves_seen: usize,
    closing_tapped: bool,
    toast_at: Option<u32>,
    rewind: RewindCheck,
}

/// The rewind step's record: the world at each rewind point taken during the step, and the
/// steps of the held rewind.
#[derive(Default)]
struct RewindCheck {
    began: Option<Duration>,
    points_seen: usize,
    worlds: BTreeMap<RewindPointId, Digest>,
    /// The script frame R was pressed on.
    held_from: Option<u32>,
    /// Rewinds reported before R was pressed.
    rewinds_seen: usize,
    /// Each step checked: the script frame it landed on and its point.
    steps: Vec<(u32, RewindPointId)>,
}

/// How long the rewind step walks before holding R: points are a tenth of a second apart, so
/// the held rewind has about twenty to go back through.
const REWIND_WALK: Duration = Duration::from_millis(2000);

/// How many frames R is held.
const HOLD_FRAMES: u32 = 12;
/// The most frames one step of a held rewind may land after the one before it.
const MOST_FRAMES_BETWEEN_STEPS: u32 = 4;
/// Frames after a held rewind's last step before the next save: the thumbnail provider's
/// new picture is taken the frame after a restore and arrives a few frames later.
const PICTURE_FRAMES: u32 = 20;

/// Where the last step is with the Bevy 0.19 quicksave.
#[derive(Clone, Copy, Default)]
enum OldSave {
    #[default]
    NotPlaced,
    /// Copied into the quicksave slot as `generation`; F9 once the listing shows it.
    Placed { generation: u64, loads_seen: usize },
    /// F9 pressed; the log held `loads_seen` loads before.
    Loading { loads_seen: usize },
}

/// Everything saved, described without entity ids (which change on load): one line per entity
/// (sorted) and one per resource. Floats are printed exactly (`{:?}` round-trips).
type Digest = Vec<String>;

fn digest(world: &mut World) -> Digest {
    let mut labels: BTreeMap<Entity, String> = BTreeMap::new();
    let mut query = world.query::<(
        Entity,
        &Transform,
        AnyOf<(&Player, &Lantern, &Coin, &Enemy)>,
    )>();
    for (entity, transform, kind) in query.iter(world) {
        let label = match kind {
            (Some(_), ..) => "player".to_owned(),
            (_, Some(_), ..) => "lantern".to_owned(),
            (.., Some(_), _) => format!("coin@{:?}", transform.translation),
            (.., Some(_)) => format!("enemy@{:?}", transform.translation),
            _ => continue,
        };
        labels.insert(entity, label);
    }
    // Level entities are not saved: named by their key, which a load finds them by again.
    let mut keyed = world.query::<(Entity, &LevelKey)>();
    for (entity, key) in keyed.iter(world) {
        labels.insert(entity, format!("level {key}"));
    }
    let name = |entity: Entity| {
        labels
            .get(&entity)
            .cloned()
            .unwrap_or_else(|| "unsaved".into())
    };
    let mut lines = Vec::new();
    let mut query = world.query::<(
        Entity,
        &Transform,
        Option<&ChildOf>,
        AnyOf<(&Player, &Lantern, &Coin, &Enemy)>,
        Option<&Sprite>,
    )>();
    for (entity, transform, parent, (player, lantern, coin, enemy), sprite) in query.iter(world) {
        // A coin's sprite is saved: its image must come back by the same asset path.
        let image = coin
            .and(sprite)
            .map(|sprite| format!("image {:?}", sprite.image.path().map(ToString::to_string)));
        lines.push(format!(
            "{} at {:?} rot {:?} parent {} {:?} {:?} {:?} {} {}",
            name(entity),
            transform.translation,
            transform.rotation,
            parent.map_or("none".into(), |p| name(p.parent())),
            player,
            lantern,
            coin,
            image.unwrap_or_default(),
            enemy.map_or(String::new(), |e| format!(
                "speed {:?} chases {}",
                e.speed,
                name(e.target)
            )),
        ));
    }
    lines.sort();
    lines.push(format!("{:?}", world.resource::<Score>()));
    lines.push(format!("{:?}", world.resource::<Inventory>()));
    lines.push(format!("{:?}", world.resource::<Level>()));
    lines.push(format!("{:?}", world.resource::<ArenaRng>()));
    lines.push(format!("{:?}", world.resource::<Playtime>()));
    lines
}

fn differences(saved: &Digest, loaded: &Digest) -> String {
    let missing = saved.iter().filter(|line| !loaded.contains(line));
    let extra = loaded.iter().filter(|line| !saved.contains(line));
    missing
        .map(|line| format!("  saved but not loaded: {line}"))
        .chain(extra.map(|line| format!("  loaded but not saved: {line}")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(world: &mut World, key: KeyCode, state: ButtonState) {
    let window = world
        .query_filtered::<Entity, With<PrimaryWindow>>()
        .iter(world)
        .next()
        .unwrap_or(Entity::PLACEHOLDER);
    world.write_message(KeyboardInput {
        key_code: key,
        logical_key: Key::Unidentified(NativeKey::Unidentified),
        state,
        text: None,
        repeat: false,
        window,
    });
}

fn tap(world: &mut World, key: KeyCode) {
    press(world, key, ButtonState::Pressed);
    press(world, key, ButtonState::Released);
}

fn shoot(world: &mut World, name: &str) {
    let path = world.resource::<Script>().shots.join(name);
    world.spawn(Screenshot::primary_window()).observe(
        move |captured: On<ScreenshotCaptured>, mut log: ResMut<Log>| {
            log.shots
                .push(check_and_write(&captured.image, &path).map(|()| path.clone()));
        },
    );
}

/// Writes the screenshot and checks that it shows something: many colours, not one flat fill.
fn check_and_write(image: &Image, path: &Path) -> Result<(), String> {
    let picture = image
        .clone()
        .try_into_dynamic()
        .map_err(|error| format!("{}: {error}", path.display()))?
        .to_rgb8();
    let mut colours: Vec<[u8; 3]> = picture.pixels().map(|p| p.0).collect();
    colours.sort_unstable();
    colours.dedup();
    if colours.len() < 64 {
        return Err(format!(
            "{} looks blank: only {} colours in {}x{}",
            path.display(),
            colours.len(),
            picture.width(),
            picture.height()
        ));
    }
    picture
        .save(path)
        .map_err(|error| format!("{}: {error}", path.display()))?;
    let reread = image::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    if reread.width() != picture.width() {
        return Err(format!("{} did not read back", path.display()));
    }
    Ok(())
}

/// Flips bytes in a save's metadata (just after the 40-byte header), like a bad sector would;
/// the listing sees it without reading the payload.
fn damage(path: &Path) -> Result<(), String> {
    let mut bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let metadata = bytes.get_mut(44..52).ok_or("save too short")?;
    for byte in metadata {
        *byte ^= 0xA5;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The steps; each returns `Ok(true)` when done, `Ok(false)` to be called again next frame.
type Step = fn(&mut World, u32) -> Result<bool, String>;

const STEPS: &[(&str, Step)] = &[
    (
        "let the window, the first listing and the first picture settle",
        |world, frames| {
            // Saves take the picture the thumbnails plugin already holds, never waiting for
            // one; its first is taken `recent_every` (2 s) into the game. The check below
            // wants a thumbnail on the first quicksave, so it plays past that first.
            let began = world.resource::<Script>().began;
            let first_picture = Duration::from_secs(3);
            Ok(frames >= 30 && began.is_some_and(|began| began.elapsed() >= first_picture))
        },
    ),
    ("walk right and up", |world, frames| {
        walk(world, frames, &[KeyCode::KeyD, KeyCode::KeyW], 40)
    }),
    ("quicksave with F5", |world, frames| {
        if frames == 0 {
            quicksave(world);
        }
        if let Some(slot) = world.resource::<Log>().started.last().copied()
            && slot == SaveTarget::Slot(SlotId::Quick)
            && world.resource::<Script>().saved_world.is_none()
        {
            // `run_script` runs before the game's systems, right after the plugin captured:
            // this is exactly the state that was saved.
            let saved = digest(world);
            world.resource_mut::<Script>().saved_world = Some(saved);
        }
        Ok(saved_to(world, SlotId::Quick))
    }),
    (
        "walk left and down, and change the score",
        |world, frames| {
            if frames == 0 {
                world.resource_mut::<Score>().0 += 1000;
                world.resource_mut::<Inventory>().gems += 7;
            }
            walk(world, frames, &[KeyCode::KeyA, KeyCode::KeyS], 40)?;
            if frames < 40 {
                return Ok(false);
            }
            let now = digest(world);
            match &world.resource::<Script>().saved_world {
                Some(saved) if *saved == now => {
                    Err("the world did not change after the quicksave".into())
                }
                Some(_) => Ok(true),
                None => Err("the quicksave's state was not recorded".into()),
            }
        },
    ),
    ("quickload with F9 and compare", |world, frames| {
        if frames == 0 {
            world.resource_mut::<Script>().loads_seen = world.resource::<Log>().loaded.len();
            tap(world, KeyCode::F9);
        }
        let seen = world.resource::<Script>().loads_seen;
        if !loaded_since(world, seen, SlotId::Quick) {
            return Ok(false);
        }
        let loaded = digest(world);
        let saved = world
            .resource::<Script>()
            .saved_world
            .clone()
            .unwrap_or_default();
        if loaded != saved {
            return Err(format!(
                "the loaded world differs from the saved one:\n{}",
                differences(&saved, &loaded)
            ));
        }
        let coins = coins_under_the_arena(world)?;
        info!(
            "smoke: the quickload matches the quicksave ({} lines; {coins} coins under the unsaved arena root)",
            saved.len()
        );
        Ok(true)
    }),
    ("walk, then hold R to run time backwards", rewind_with_r),
    ("save to Manual 3", |world, frames| {
        if frames == 0 {
            world.write_message(SaveRequest::slot(SlotId::Manual(2)));
        }
        Ok(saved_to(world, SlotId::Manual(2)))
    }),
    ("play on, autosave twice", |world, frames| {
        walk(world, frames, &[KeyCode::KeyD], 30)?;
        if frames == 10 || frames == 40 {
            world.write_message(SaveRequest::autosave());
        }
        Ok(frames > 40 && autosaves(world) >= 2)
    }),
    ("save Manual 1 twice and Manual 5 once", |world, frames| {
        if frames == 0 {
            world.write_message(SaveRequest::slot(SlotId::Manual(0)));
            world.write_message(SaveRequest::slot(SlotId::Manual(4)));
        }
        if frames == 20 {
            world.write_message(SaveRequest::slot(SlotId::Manual(0)));
        }
        Ok(frames > 20
            && saves_of(world, SlotId::Manual(0)).len() == 2
            && saved_to(world, SlotId::Manual(4)))
    }),
    (
        "damage Manual 5 and the newest Manual 1",
        |world, frames| {
            if frames == 0 {
                let newest = |slot| saves_of(world, slot).last().cloned().ok_or("no save path");
                damage(&newest(SlotId::Manual(4))?)?;
                damage(&newest(SlotId::Manual(0))?)?;
                // Files changed behind the plugin's back: ask for a new listing.
                world.write_message(RefreshSlotsRequest);
            }
            let slots = world.resource::<SaveSlots>();
            let damaged = |slot| {
                slots
                    .get(slot)
                    .is_some_and(|entry| matches!(entry.status, SlotStatus::Damaged { .. }))
            };
            Ok(damaged(SlotId::Manual(4)) && damaged(SlotId::Manual(0)))
        },
    ),
    (
        "every save made in the window has a thumbnail",
        |world, _| {
            let slots = world.resource::<SaveSlots>();
            for slot in [SlotId::Quick, SlotId::Manual(2)] {
                let saved = slots.get(slot).and_then(|entry| entry.shown_save());
                if !saved.is_some_and(|saved| saved.has_thumbnail) {
                    return Err(format!("{slot} has no thumbnail: {saved:?}"));
                }
            }
            Ok(true)
        },
    ),
    (
        "open the menu with Esc and walk down to Manual 2",
        |world, frames| {
            if frames == 0 {
                tap(world, KeyCode::Escape);
            }
            if !world.resource::<SaveMenu>().is_open() {
                return Ok(false);
            }
            // Quicksave, 5 autosaves, Manual 1, then Manual 2: the rows scroll to the mix of
            // thumbnails, a restored and a damaged slot.
            // Thumbnails load in the background; give them a moment before the pictures.
            if frames == 40 {
                shoot(world, "menu-top.png");
            }
            if (45..52).contains(&frames) {
                tap(world, KeyCode::ArrowDown);
            }
            if frames == 80 {
                shoot(world, "menu.png");
            }
            Ok(frames >= 80 && shot_taken(world, "menu-top.png") && shot_taken(world, "menu.png"))
        },
    ),
    (
        "select Manual 3's Save button and press Enter",
        |world, frames| {
            if frames == 0 {
                tap(world, KeyCode::ArrowDown);
            } else if frames < 4 {
                tap(world, KeyCode::ArrowLeft);
            } else if frames == 4 {
                tap(world, KeyCode::Enter);
            } else if frames == 30 {
                let menu = world.resource::<SaveMenu>();
                let heading = menu.question();
                if heading != Some("Overwrite Manual 3?") {
                    return Err(format!("expected the overwrite question, got {heading:?}"));
                }
                shoot(world, "confirm.png");
            }
            Ok(frames > 30 && shot_taken(world, "confirm.png"))
        },
    ),
    ("confirm with Enter, close with Esc", |world, frames| {
        if frames == 0 {
            world.resource_mut::<Script>().saves_seen = saves_of(world, SlotId::Manual(2)).len();
            tap(world, KeyCode::Enter);
        }
        let seen = world.resource::<Script>().saves_seen;
        let done = saves_of(world, SlotId::Manual(2)).len() > seen;
        if done && !world.resource::<Script>().closing_tapped {
            world.resource_mut::<Script>().closing_tapped = true;
            tap(world, KeyCode::Escape); // once: a second Esc would open the menu again
        }
        Ok(done && !world.resource::<SaveMenu>().is_open())
    }),
    (
        "the save made from the menu has the backdrop as thumbnail",
        |world, _| {
            // The listing refreshes in the background after the save; wait for generation 2.
            let slots = world.resource::<SaveSlots>();
            let saved = slots
                .get(SlotId::Manual(2))
                .and_then(|entry| entry.shown_save());
            match saved {
                Some(saved) if saved.generation >= 2 && saved.has_thumbnail => Ok(true),
                Some(saved) if saved.generation >= 2 => Err(format!(
                    "Manual 3 was overwritten without a thumbnail: {saved:?}"
                )),
                _ => Ok(false),
            }
        },
    ),
    ("quicksave again and catch the toast", |world, frames| {
        if frames == 0 {
            quicksave(world);
        }
        if world.resource::<SaveMenu>().is_open() {
            return Err("the menu opened again".into());
        }
        // A few frames after the save, once the toast has faded in.
        let quicksaved = saves_of(world, SlotId::Quick).len() >= 2;
        let mut script = world.resource_mut::<Script>();
        if quicksaved && script.toast_at.is_none() {
            script.toast_at = Some(frames + 12);
        }
        let shoot_now = script.toast_at == Some(frames);
        if shoot_now {
            shoot(world, "toast.png");
        }
        Ok(shot_taken(world, "toast.png"))
    }),
    (
        "a Bevy 0.19 quicksave, made the slot's newest, loads with F9",
        |world, frames| {
            if frames == 0 {
                let root = world.resource::<Script>().save_root.clone();
                let generation = newest_generation(world, SlotId::Quick) + 1;
                place_old_quicksave(&root, generation)?;
                let loads_seen = world.resource::<Log>().loaded.len();
                world.resource_mut::<Script>().old_save = OldSave::Placed {
                    generation,
                    loads_seen,
                };
                // The file appeared behind the plugin's back: ask for a new listing first.
                world.write_message(RefreshSlotsRequest);
            }
            match world.resource::<Script>().old_save {
                OldSave::Placed { generation, .. }
                    if newest_generation(world, SlotId::Quick) == generation =>
                {
                    tap(world, KeyCode::F9);
                    let mut script = world.resource_mut::<Script>();
                    if let OldSave::Placed { loads_seen, .. } = script.old_save {
                        script.old_save = OldSave::Loading { loads_seen };
                    }
                    Ok(false)
                }
                OldSave::Loading { loads_seen }
                    if loaded_since(world, loads_seen, SlotId::Quick) =>
                {
                    check_old_quicksave(world)?;
                    info!("smoke: the Bevy 0.19 quicksave loaded, its sprites included");
                    Ok(true)
                }
                _ => Ok(false),
            }
        },
    ),
    (
        "play on a moment before closing the window",
        |world, frames| {
            // A load forgets the pictures of the world it replaced and has a new one taken at
            // once; the exit save (checked after the app exits) carries it once it is encoded,
            // in the background. A player closes the game some time after a load, not in the
            // frame after it; here 2 s, when the regular picture is due too.
            walk(world, frames, &[KeyCode::KeyD], 20)?;
            let script = world.resource::<Script>();
            let since = script.step_began.map_or(Duration::ZERO, |at| at.elapsed());
            Ok(frames >= 20 && since >= Duration::from_secs(2))
        },
    ),
];

/// Checks that every coin is a child of the live arena root (an unsaved level entity the
/// save references by its `LevelKey`), and returns how many there are.
fn coins_under_the_arena(world: &mut World) -> Result<usize, String> {
    let mut roots = world.query_filtered::<Entity, With<ArenaRoot>>();
    let root = roots
        .single(world)
        .map_err(|e| format!("no single arena root: {e}"))?;
    let mut coins = world.query_filtered::<Option<&ChildOf>, With<Coin>>();
    let parents: Vec<Option<Entity>> = coins
        .iter(world)
        .map(|child_of| child_of.map(ChildOf::parent))
        .collect();
    let under = parents.iter().filter(|p| **p == Some(root)).count();
    match (parents.len(), under) {
        (0, _) => Err("no coins to check".into()),
        (all, under) if under == all => Ok(all),
        (all, under) => Err(format!(
            "only {under} of {all} coins are under the arena root after the load"
        )),
    }
}

fn walk(world: &mut World, frames: u32, keys: &[KeyCode], hold: u32) -> Result<bool, String> {
    for &key in keys {
        if frames == 0 {
            press(world, key, ButtonState::Pressed);
        } else if frames == hold {
            press(world, key, ButtonState::Released);
        }
    }
    Ok(frames >= hold)
}

fn saves_of(world: &World, slot: SlotId) -> Vec<PathBuf> {
    let log = world.resource::<Log>();
    log.saved
        .iter()
        .filter(|(saved, _)| *saved == slot)
        .map(|(_, path)| path.clone())
        .collect()
}

/// The generation of `slot`'s newest save in the listing; 0 for none.
fn newest_generation(world: &World, slot: SlotId) -> u64 {
    let slots = world.resource::<SaveSlots>();
    let shown = slots.get(slot).and_then(|entry| entry.shown_save());
    shown.map_or(0, |save| save.generation)
}

/// Whether `slot` loaded after the first `seen` loads the log holds.
fn loaded_since(world: &World, seen: usize, slot: SlotId) -> bool {
    let loaded = &world.resource::<Log>().loaded;
    loaded.iter().skip(seen).any(|&loaded| loaded == slot)
}

/// The demo's quicksave made on Bevy 0.19 (before saves carried their types' layouts), kept
/// with the crate's test fixtures.
const OLD_QUICKSAVE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/bevy-0.19-demo-quick.ksav"
);

/// Puts [`OLD_QUICKSAVE`] in the quicksave slot as its `generation`, as a player's save from
/// before the update.
fn place_old_quicksave(save_root: &Path, generation: u64) -> Result<(), String> {
    let store = SlotStore::open(StoreConfig::new(save_root)).map_err(|e| e.to_string())?;
    let target = store.path_of(SlotId::Quick, generation);
    std::fs::copy(OLD_QUICKSAVE, &target)
        .map(|_| ())
        .map_err(|e| format!("{OLD_QUICKSAVE} -> {}: {e}", target.display()))
}

/// The world holds what the Bevy 0.19 quicksave holds (`--dump` shows it): the player where it
/// stood, one gold coin collected, and every drawn thing with its sprite, whose `alpha_mode`
/// (new in Bevy 0.20) is at its default.
fn check_old_quicksave(world: &mut World) -> Result<(), String> {
    let gold = world.resource::<Inventory>().gold;
    if gold != 1 {
        return Err(format!("the 0.19 save holds 1 gold, the game has {gold}"));
    }
    let mut players = world.query_filtered::<&Transform, With<Player>>();
    let player = players.single(world).map_err(|e| e.to_string())?;
    if player.translation != Vec3::new(373.088, 179.46994, 2.0) {
        return Err(format!("the player is at {}", player.translation));
    }
    let mut drawn = world
        .query_filtered::<&Sprite, Or<(With<Player>, With<Lantern>, With<Coin>, With<Enemy>)>>();
    let sprites: Vec<&Sprite> = drawn.iter(world).collect();
    let stored = stored_rows(OLD_QUICKSAVE, "bevy_sprite::sprite::Sprite")?;
    if sprites.len() != stored {
        return Err(format!("{} sprites loaded, {stored} saved", sprites.len()));
    }
    if let Some(sprite) = sprites
        .iter()
        .find(|s| s.alpha_mode != SpriteAlphaMode::Blend)
    {
        return Err(format!("a sprite loaded with {:?}", sprite.alpha_mode));
    }
    Ok(())
}

/// How many values of `type_path` a save file stores.
fn stored_rows(path: &str, type_path: &str) -> Result<usize, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let save =
        bevy_keepsake::format::decode(&bytes, &Default::default()).map_err(|e| e.to_string())?;
    let table =
        bevy_keepsake::snapshot::inspect(&save.bundle.world.ecs_blob).map_err(|e| e.to_string())?;
    let column = table.columns.iter().find(|c| c.type_path == type_path);
    Ok(column.map_or(0, |column| column.rows.len()))
}

fn saved_to(world: &World, slot: SlotId) -> bool {
    !saves_of(world, slot).is_empty()
}

fn autosaves(world: &World) -> usize {
    let log = world.resource::<Log>();
    log.saved
        .iter()
        .filter(|(slot, _)| matches!(slot, SlotId::Auto(_)))
        .count()
}

/// The frame on which the script closed the window; the save made on exit must be from then on.
static CLOSED_AT_FRAME: AtomicU32 = AtomicU32::new(u32::MAX);

/// After the last step: closes the window as a player would. The app then exits by itself, and
/// the game's save-on-exit must write an autosave first ([`verify_exit_save`] checks it).
fn close_the_window(world: &mut World) {
    if CLOSED_AT_FRAME.load(Ordering::Relaxed) != u32::MAX {
        return;
    }
    info!(
        "smoke: all {} steps passed; closing the window",
        STEPS.len()
    );
    let frame = world.resource::<FrameCount>().0;
    CLOSED_AT_FRAME.store(frame, Ordering::Relaxed);
    let window = world
        .query_filtered::<Entity, With<PrimaryWindow>>()
        .single(world)
        .expect("the demo has a primary window");
    world.write_message(WindowCloseRequested { window });
}

/// After the app exited: an autosave captured on or after the frame the window was closed must
/// be on disk. Removes the run's saves when everything passed (a failed run keeps them).
pub fn verify_exit_save(options: &SmokeOptions, exit: AppExit) -> AppExit {
    if exit.is_error() {
        return exit;
    }
    let closed_at = CLOSED_AT_FRAME.load(Ordering::Relaxed);
    // The exit save, and whether it has a picture (the last one the game kept: no frame is
    // drawn after it).
    let found = SlotStore::open(StoreConfig::new(&options.save_root))
        .and_then(|store| store.list())
        .map(|slots| {
            slots.iter().find_map(|slot| {
                let save = slot.shown_save()?;
                let exit_save = matches!(slot.slot, SlotId::Auto(_))
                    && save.meta.game_tick >= u64::from(closed_at);
                exit_save.then_some(save.has_thumbnail)
            })
        });
    match found {
        Ok(Some(false)) => {
            eprintln!("smoke check FAILED: the exit save has no thumbnail");
            AppExit::error()
        }
        Ok(Some(true)) => {
            println!(
                "smoke: closing the window saved the game, with a thumbnail; screenshots in {}",
                options.shots.display()
            );
            let _ = std::fs::remove_dir_all(&options.save_root);
            AppExit::Success
        }
        Ok(None) => {
            eprintln!("smoke check FAILED: closing the window wrote no autosave");
            AppExit::error()
        }
        Err(error) => {
            eprintln!("smoke check FAILED: the saves cannot be listed: {error}");
            AppExit::error()
        }
    }
}

/// Runs one step a frame, and ends the app: success after the last step, failure on the first
/// error or after two minutes.
fn run_script(world: &mut World) {
    let (step, frames, began) = {
        let mut script = world.resource_mut::<Script>();
        script.frame += 1;
        let began = *script.began.get_or_insert_with(Instant::now);
        (script.step, script.frame - script.step_started, began)
    };
    let failure = {
        let log = world.resource::<Log>();
        let shots = log.shots.iter().filter_map(|shot| shot.as_ref().err());
        log.failures.iter().chain(shots).next().cloned()
    };
    let Some((name, run)) = STEPS.get(step) else {
        close_the_window(world);
        return;
    };
    let outcome = match failure {
        Some(failure) => Err(failure),
        None if began.elapsed() > Duration::from_secs(120) => Err("timed out".to_owned()),
        None => run(world, frames),
    };
    match outcome {
        Ok(true) => {
            info!("smoke: step {} passed: {name}", step + 1);
            let mut script = world.resource_mut::<Script>();
            script.step += 1;
            // The next step sees frame 0 on its first call, next frame.
            script.step_started = script.frame + 1;
            script.step_began = Some(Instant::now());
        }
        Ok(false) => {}
        Err(message) => {
            error!("smoke: step {} failed ({name}): {message}", step + 1);
            eprintln!(
                "smoke check FAILED at step {} ({name}): {message}",
                step + 1
            );
            world.write_message(AppExit::error());
        }
    }
}

/// Walks right for [`REWIND_WALK`] recording the world at every rewind point, then holds R
/// for [`HOLD_FRAMES`] frames: steps back must keep landing, and the world after each must be
/// the one recorded at its point.
fn rewind_with_r(world: &mut World, frames: u32) -> Result<bool, String> {
    let now = world.resource::<Time>().elapsed();
    if frames == 0 {
        // Points taken before the walk are not recorded: the world has changed since.
        let taken = world.resource::<Log>().points_taken.len();
        let mut script = world.resource_mut::<Script>();
        script.rewind.began = Some(now);
        script.rewind.points_seen = taken;
        press(world, KeyCode::KeyD, ButtonState::Pressed);
    }
    // Points are recorded while R is held too: one may be taken before the first step.
    record_new_points(world);
    let Some(held_from) = world.resource::<Script>().rewind.held_from else {
        let began = world.resource::<Script>().rewind.began.unwrap_or(now);
        if now - began >= REWIND_WALK {
            press(world, KeyCode::KeyD, ButtonState::Released);
            press(world, KeyCode::KeyR, ButtonState::Pressed);
            let seen = world.resource::<Log>().rewound.len();
            let mut script = world.resource_mut::<Script>();
            script.rewind.held_from = Some(frames);
            script.rewind.rewinds_seen = seen;
        }
        return Ok(false);
    };
    check_rewind_step(world, frames)?;
    let held = frames - held_from;
    if held == HOLD_FRAMES {
        press(world, KeyCode::KeyR, ButtonState::Released);
    }
    // A step landing late (see `check_steps_landed_steadily`) restores the world late, and
    // the thumbnail provider forgets its picture at each restore. A save never waits for a
    // picture (`plugin/thumbnail.rs`), so the next step's save waits here for the new one.
    let last_step = world
        .resource::<Script>()
        .rewind
        .steps
        .last()
        .map(|(at, _)| *at);
    let settled = last_step.is_none_or(|at| frames >= at + PICTURE_FRAMES);
    if held < HOLD_FRAMES + 3 || !settled {
        return Ok(false);
    }
    check_steps_landed_steadily(world)?;
    // The world as the player sees it after holding R, with the "Rewound" toast.
    shoot(world, "rewind.png");
    Ok(true)
}

/// The step that landed this frame, if any: its world must be the one recorded at its point.
fn check_rewind_step(world: &mut World, frames: u32) -> Result<(), String> {
    let seen = world.resource::<Script>().rewind.rewinds_seen;
    let landed: Vec<RewindPointId> = world.resource::<Log>().rewound[seen..].to_vec();
    let Some(&point) = landed.last() else {
        return Ok(());
    };
    if landed.len() > 1 {
        return Err(format!(
            "{} rewinds landed in one frame: {landed:?}",
            landed.len()
        ));
    }
    let now_world = world_without_playtime(world);
    let script = world.resource::<Script>();
    let Some(then) = script.rewind.worlds.get(&point) else {
        return Err(format!(
            "R went back to {point:?}, not a point taken during the walk ({:?})",
            script.rewind.worlds.keys().collect::<Vec<_>>()
        ));
    };
    if *then != now_world {
        return Err(format!(
            "the world after the rewind differs from the one at {point:?}:\n{}",
            differences(then, &now_world)
        ));
    }
    let mut script = world.resource_mut::<Script>();
    script.rewind.rewinds_seen += 1;
    script.rewind.steps.push((frames, point));
    Ok(())
}

/// While R was held, steps kept landing, each to an older point than the last and at most
/// [`MOST_FRAMES_BETWEEN_STEPS`] frames after it. Not one a frame: a step the main thread's
/// budget cannot fit in its frame (measured as it goes; on a software renderer sharing two
/// cores, a frame is sometimes preempted) is put together on the pool and lands a few frames
/// later, by design (`plugin/rewind/run.rs`). Steps per frame are the frame benchmark's to
/// measure; the smoke checks what the player sees: time running back, steadily.
fn check_steps_landed_steadily(world: &World) -> Result<(), String> {
    let steps = &world.resource::<Script>().rewind.steps;
    // R is seen the frame after it is pressed; the first step lands the frame after that.
    if steps.len() * 2 + 2 < HOLD_FRAMES as usize {
        return Err(format!(
            "{} steps landed while R was held {HOLD_FRAMES} frames",
            steps.len()
        ));
    }
    for pair in steps.windows(2) {
        let ((at, from), (next_at, to)) = (pair[0], pair[1]);
        if next_at <= at || next_at - at > MOST_FRAMES_BETWEEN_STEPS || to >= from {
            return Err(format!(
                "steps {pair:?}: each must land within {MOST_FRAMES_BETWEEN_STEPS} frames of \
                 the last, further back"
            ));
        }
    }
    info!(
        "smoke: holding R went back {} points, steadily, each world matching its point",
        steps.len()
    );
    Ok(())
}

/// The world at each rewind point taken this frame (`run_script` runs right after the
/// plugin's systems, so the world is still the one the point captured).
fn record_new_points(world: &mut World) {
    let seen = world.resource::<Script>().rewind.points_seen;
    let new: Vec<RewindPointId> = world.resource::<Log>().points_taken[seen..].to_vec();
    if new.is_empty() {
        return;
    }
    let state = world_without_playtime(world);
    let mut script = world.resource_mut::<Script>();
    script.rewind.points_seen += new.len();
    for point in new {
        script.rewind.worlds.insert(point, state.clone());
    }
}

/// The digest without the play time, which a rewind leaves running (it is part of playing).
fn world_without_playtime(world: &mut World) -> Digest {
    let mut lines = digest(world);
    let playtime = format!("{:?}", world.resource::<Playtime>());
    lines.retain(|line| *line != playtime);
    lines
}

/// Whether the screenshot `name` was written (a failed one ends the check with its error).
fn shot_taken(world: &World, name: &str) -> bool {
    let shots = &world.resource::<Log>().shots;
    shots
        .iter()
        .any(|shot| shot.as_ref().is_ok_and(|path| path.ends_with(name)))
}
