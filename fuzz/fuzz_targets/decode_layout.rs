//! Any bytes as a stored type layout (the section every column of a version-2 blob carries),
//! and a layout that reads as the layout of any value bytes: never a panic, never an
//! allocation beyond the input (deep nesting, huge counts and unknown tags are typed errors).
//! The body is shared with the corpus replay test (`tests/it/common/fuzz_layout.rs`).
#![no_main]

#[path = "../../tests/it/common/fuzz_layout.rs"]
#[allow(dead_code, reason = "the tests also build inputs with it")]
mod fuzz_layout;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_layout::run(data));
