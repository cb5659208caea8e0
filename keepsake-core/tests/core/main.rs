//! The engine-free core's integration tests in one binary, so it is linked once: the format,
//! the slot store (backups, faults, odd files, power loss, seal), damaged files, a full disk, the
//! order of saves across devices. No Bevy here: `cargo test -p keepsake-core` runs them with the
//! core alone. `common` holds their helpers, which `tests/it` (the Bevy crate's binary) uses
//! too, by path. The SIGKILL and disk-full harnesses start this same binary again as a child
//! process, filtered to one test.

// Counts allocations per thread (tests running in parallel do not disturb each other); the
// hostile-input tests use it to prove forged lengths are refused before allocating.
#[global_allocator]
static ALLOC: common::alloc::CountingAlloc = common::alloc::CountingAlloc;

mod common;
mod corruption_corpus;
mod crash_sigkill;
mod disk_full;
mod format_chunks;
mod format_corruption;
mod format_hostile;
mod format_roundtrip;
mod format_seal;
mod lineage;
mod store_backups;
mod store_faults;
mod store_odd_files;
mod store_power_loss;
mod store_seal;
mod store_slots;
