//! Helpers shared by the integration tests: fixtures, a fault-injecting filesystem and a
//! counting allocator. Each test binary uses a different subset.
#![allow(dead_code)]

// The engine-free helpers live beside the engine-free tests, in keepsake-core's test binary;
// the tests here use them from there (they need `keepsake_core` alone), so each is written once.
#[path = "../../../keepsake-core/tests/core/common/alloc.rs"]
pub mod alloc;
#[path = "../../../keepsake-core/tests/core/common/crc_fixup.rs"]
pub mod crc_fixup;
#[path = "../../../keepsake-core/tests/core/common/fixtures.rs"]
pub mod fixtures;
#[path = "../../../keepsake-core/tests/core/common/gate_fs.rs"]
pub mod gate_fs;
#[path = "../../../keepsake-core/tests/core/common/power_fs.rs"]
pub mod power_fs;
#[path = "../../../keepsake-core/tests/core/common/test_fs.rs"]
pub mod test_fs;

pub mod blob_v1;
pub mod budget;
pub mod clock;
pub mod edits;
pub mod fuzz_layout;
pub mod fuzz_world;
pub mod game_world;
pub mod keepsake_app;
pub mod real_world;
