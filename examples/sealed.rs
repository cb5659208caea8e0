//! Sealed saves, headless: a save edited outside the game does not load, even with its
//! checksums fixed; a save sealed for another player does not open; menus still list both.
//!
//! `KeepsakePlugins::seal(key)` encrypts and authenticates every save (AES-256-GCM).
//! `SealKey::bound_to(account)` gives each player a key of their own, so saves passed between
//! players break too. The key ships in the game: this stops save editors, not a debugger.
//!
//! Run: `cargo run --example sealed` (exits non-zero if an edited or foreign save loaded).
use bevy::prelude::*;
use bevy_keepsake::format::SealKey;
use bevy_keepsake::prelude::*;
use bevy_keepsake::testing::{TestSaves, run_until, update_until};
use std::path::{Path, PathBuf};

/// Generated once (`openssl rand -hex 32`) and built into the game.
const GAME_KEY: SealKey = SealKey::from_bytes(*b"an example key; use random bytes");

/// What a cheater would edit. Saved.
#[derive(Resource, Reflect)]
#[reflect(Resource)]
struct Gold(u64);

/// The game signed in as `player`, saving under `root`.
fn game(root: &Path, player: &str) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugins::new("sealed-example")
                .save_root(root)
                .seal(GAME_KEY.bound_to(player.as_bytes())),
        )
        .register_saveable::<Gold>()
        .insert_resource(Gold(0))
        .add_observer(|failed: On<SaveFailed>| panic!("save failed: {}", failed.error));
    app.finish();
    app.cleanup();
    app
}

/// How many frames a result may take, not counting those while the plugin's work runs in the
/// background (see `bevy_keepsake::testing::run_until`).
const FRAMES: u32 = 20;

fn main() {
    let saves = TestSaves::new();
    let mut alice = game(saves.root(), "alice");
    let mut newest = PathBuf::new();
    for gold in [10, 20] {
        alice.world_mut().resource_mut::<Gold>().0 = gold;
        alice
            .world_mut()
            .insert_resource(SaveTitle(format!("{gold} gold")));
        alice.world_mut().commands().save(SlotId::Manual(0));
        newest = run_until::<SaveCompleted>(&mut alice, FRAMES).path;
    }

    // A save editor changes one byte of the newest save and fixes both checksums.
    forge(&newest);
    alice.world_mut().commands().load(SlotId::Manual(0));
    let loaded = run_until::<LoadCompleted>(&mut alice, FRAMES);
    let why = &loaded.skipped_generations[0].error;
    println!(
        "generation {} loaded instead; the edited one: {why}",
        loaded.generation
    );
    assert!(loaded.restored_from_backup, "the edited save was refused");
    assert!(why.to_string().contains("seal is broken"), "{why}");
    assert_eq!(alice.world().resource::<Gold>().0, 10, "the backup's gold");
    drop(alice);

    // Bob's game lists Alice's slot (metadata is readable without the key), but cannot load it.
    let mut bob = game(saves.root(), "bob");
    bob.world_mut().commands().load(SlotId::Manual(0));
    let failed = run_until::<LoadFailed>(&mut bob, FRAMES);
    println!("bob's game: {}", failed.error);
    assert_eq!(
        bob.world().resource::<Gold>().0,
        0,
        "nothing of alice's save loaded"
    );
    // The listing is made in the background (at start, after every save, load and delete).
    let shown = |world: &World| {
        let slot = world.resource::<SaveSlots>().get(SlotId::Manual(0));
        slot.and_then(|slot| slot.shown_save()).cloned()
    };
    update_until(&mut bob, "the listing", FRAMES, |world| {
        shown(world).is_some()
    });
    let listed = shown(bob.world()).expect("listed");
    println!(
        "bob's menu lists {:?}, sealed: {}",
        listed.meta.title, listed.sealed
    );
    assert!(
        listed.sealed && listed.meta.title == "20 gold",
        "the edited save's title"
    );
}

/// Flips a byte of the encrypted payload, then makes the payload and header CRCs agree again,
/// as a save editor would (the layout is in `bevy_keepsake::format`'s documentation).
fn forge(path: &Path) {
    let mut file = std::fs::read(path).expect("the save");
    let at = |offset: usize| u32::from_le_bytes(file[offset..offset + 4].try_into().unwrap());
    let payload = 40 + at(8) as usize + at(12) as usize;
    file[payload + 20] ^= 1;
    let crc = crc32(&file[payload..]);
    file[32..36].copy_from_slice(&crc.to_le_bytes());
    let crc = crc32(&file[..36]);
    file[36..40].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, file).expect("the edited save");
}

/// CRC-32 (IEEE), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &byte| {
        (0..8).fold(crc ^ u32::from(byte), |c, _| {
            (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg())
        })
    })
}
