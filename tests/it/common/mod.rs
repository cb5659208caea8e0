//! Helpers shared by the integration tests: fixtures, a fault-injecting filesystem and a
//! counting allocator. Each test binary uses a different subset.
#![allow(dead_code)]

pub mod alloc;
pub mod blob_v1;
pub mod budget;
pub mod clock;
pub mod crc_fixup;
pub mod edits;
pub mod fixtures;
pub mod fuzz_layout;
pub mod fuzz_world;
pub mod game_world;
pub mod gate_fs;
pub mod keepsake_app;
pub mod power_fs;
pub mod real_world;
pub mod test_fs;
