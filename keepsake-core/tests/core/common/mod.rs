//! Helpers of the engine-free tests: fixtures, fault-injecting and power-loss filesystems, the
//! checksum fixer and a counting allocator. The Bevy crate's tests (`tests/it/common/mod.rs`),
//! its benchmarks and the fuzz targets include these files by path, so each is written once;
//! they use `keepsake_core` alone. Each binary uses a different subset.
#![allow(dead_code)]

pub mod alloc;
pub mod crc_fixup;
pub mod fixtures;
pub mod gate_fs;
pub mod power_fs;
pub mod test_fs;
