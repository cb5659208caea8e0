//! Level keys, headless: saved entities that point into the level the game spawns itself.
//!
//! The docks (a level root and its gate) are spawned by the game and never saved; each has a
//! `LevelKey`. A saved NPC stands under the docks (`ChildOf`), another opens the gate. The
//! save writes those references by key; a load in a later session, whose level entities have
//! other ids, points them at the live entities with the same keys. A key the level no longer
//! has (the crane, gone in an update) drops that one reference, and `LoadCompleted` says so.
//!
//! Run: `cargo run --example level_keys` (exits non-zero if a reference came back wrong).
use bevy::prelude::*;
use bevy_keepsake::prelude::*;
use bevy_keepsake::snapshot::LevelKey;
use bevy_keepsake::testing::{TestSaves, run_until};
use std::path::Path;

/// A saved character.
#[derive(Component, Reflect)]
#[reflect(Component)]
struct Npc(String);

/// "Opens door X": a saved component pointing at an entity of the level.
#[derive(Component, Reflect)]
#[reflect(Component)]
struct Opens {
    #[entities]
    door: Entity,
}

/// The level's keyed entities, as one session spawned them.
struct Docks {
    root: Entity,
    gate: Entity,
}

/// An app of one session, saving under `root`.
fn session(root: &Path) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(KeepsakePlugins::new("level-keys-example").save_root(root))
        .register_saveable::<Npc>()
        .register_saveable::<Opens>()
        .add_observer(|failed: On<SaveFailed>| panic!("save failed: {}", failed.error))
        .add_observer(|failed: On<LoadFailed>| panic!("load failed: {}", failed.error));
    app.finish();
    app.cleanup();
    app
}

/// Spawns the level as the game's level loader would: no `Saveable`, a key on each entity
/// saved ones may point at. Version 2 of the level has no crane.
fn spawn_docks(world: &mut World, with_crane: bool) -> (Docks, Option<Entity>) {
    let root = world
        .spawn((LevelKey::new("docks"), Name::new("Docks")))
        .id();
    let gate = world
        .spawn((LevelKey::new("docks/gate"), ChildOf(root)))
        .id();
    let crane = with_crane.then(|| world.spawn(LevelKey::new("docks/crane")).id());
    (Docks { root, gate }, crane)
}

/// How many frames a result may take, not counting those while the plugin's work runs in the
/// background (see `bevy_keepsake::testing::run_until`).
const FRAMES: u32 = 20;

fn main() {
    let saves = TestSaves::new();

    // Session 1: the level, two NPCs pointing into it, a save.
    let mut first = session(saves.root());
    let (docks, crane) = spawn_docks(first.world_mut(), true);
    let world = first.world_mut();
    world.spawn((Saveable, Npc("Mara".into()), ChildOf(docks.root)));
    world.spawn((Saveable, Npc("Ivo".into()), Opens { door: docks.gate }));
    world.spawn((
        Saveable,
        Npc("Tam".into()),
        Opens {
            door: crane.unwrap(),
        },
    ));
    world.commands().save(SlotId::Manual(0));
    run_until::<SaveCompleted>(&mut first, FRAMES);
    println!("session 1: docks {}, gate {}", docks.root, docks.gate);
    drop(first);

    // Session 2: other entities first (so the level's ids differ), the level without its crane.
    let mut second = session(saves.root());
    second
        .world_mut()
        .spawn_batch((0..50).map(|_| Name::new("scenery")));
    let (docks, _) = spawn_docks(second.world_mut(), false);
    println!("session 2: docks {}, gate {}", docks.root, docks.gate);
    second.world_mut().commands().load(SlotId::Manual(0));
    let loaded = run_until::<LoadCompleted>(&mut second, FRAMES);

    let world = second.world_mut();
    let mut npcs = world.query::<(&Npc, Option<&ChildOf>, Option<&Opens>)>();
    for (npc, parent, opens) in npcs.iter(world) {
        let parent = parent.map(ChildOf::parent);
        let door = opens.map(|opens| opens.door);
        println!("{} under {parent:?}, opens {door:?}", npc.0);
        match (npc.0.as_str(), parent, door) {
            ("Mara", Some(parent), None) => assert_eq!(parent, docks.root, "under the new docks"),
            ("Ivo", None, Some(door)) => assert_eq!(door, docks.gate, "opens the new gate"),
            ("Tam", None, Some(door)) => assert_eq!(door, Entity::PLACEHOLDER, "the crane is gone"),
            other => panic!("unexpected NPC after the load: {other:?}"),
        }
    }
    assert_eq!(npcs.iter(world).count(), 3, "the three saved NPCs");
    let dropped = &loaded.dropped_references;
    dropped
        .iter()
        .for_each(|reference| println!("dropped: {reference}"));
    assert_eq!(dropped.len(), 1, "the crane's reference, and no other");
    assert_eq!(dropped[0].key, "docks/crane");
}
