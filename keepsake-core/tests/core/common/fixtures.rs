//! Deterministic, game-shaped test data.

use keepsake_core::SlotId;
use keepsake_core::format::{SaveBundle, SaveMeta, Timestamp, WorldState};
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

/// A small deterministic pseudo-random generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

const NAMES: [&str; 8] = [
    "goblin", "archer", "merchant", "wolf", "guard", "slime", "knight", "bat",
];

/// Bytes shaped like an encoded game world of roughly `len` bytes: per entity an id, a position
/// and velocity of floats, health, a name and sometimes an inventory. Like real mixed game data
/// it compresses only modestly with LZ4, unlike a repeated byte.
pub fn game_like_blob(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(len + 64);
    let mut entity = 0u32;
    while out.len() < len {
        out.extend_from_slice(&entity.to_le_bytes());
        for _ in 0..6 {
            let value = (rng.below(20_000) as f32 - 10_000.0) / 7.0;
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(&(rng.below(100) as u16).to_le_bytes());
        let name = NAMES[rng.below(NAMES.len() as u64) as usize];
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        if entity.is_multiple_of(10) {
            let items = rng.below(8) as u8;
            out.push(items);
            for _ in 0..items {
                out.extend_from_slice(&(rng.below(500) as u16).to_le_bytes());
                out.push(rng.below(99) as u8 + 1);
            }
        }
        entity += 1;
    }
    out.truncate(len);
    out
}

/// A bundle whose ecs_blob is `blob_len` bytes of game-shaped data.
pub fn bundle(blob_len: usize, seed: u64) -> SaveBundle {
    let mut bundle = SaveBundle::new(WorldState {
        tick: seed * 60,
        ecs_blob: game_like_blob(blob_len, seed),
        state_hash: seed ^ 0xABCD,
    });
    bundle
        .extras
        .insert("quest_log".into(), format!("quest {seed}").into_bytes());
    bundle
}

/// Metadata for `slot`, with a creation time that grows with `seq` so orderings are
/// deterministic.
pub fn meta(slot: SlotId, seq: u64) -> SaveMeta {
    SaveMeta {
        save_id: Uuid::from_u128(0x1234_0000_0000_4000_8000_0000_0000_0000 | u128::from(seq)),
        slot,
        created_at: Timestamp::from_unix_millis(1_760_000_000_000 + seq as i64 * 1_000),
        playtime: Duration::from_secs(600 + seq),
        game_tick: seq * 60,
        title: format!("Harbour — level {seq}"),
        game_version: "1.4.2".into(),
        extras: BTreeMap::from([("difficulty".into(), "hard".into())]),
        thumbnail: None,
    }
}
