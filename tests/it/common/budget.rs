//! The memory bound every reader of a save keeps to, checked with the counting allocator: at
//! most [`BUDGET_PER_INPUT_BYTE`] bytes per byte of the reader's (decompressed) input and
//! [`SLACK`], or a typed error; for a save file, also at most that bound of the most a file of
//! its size may decode to ([`file_bound`]: 128 bytes per byte of the file and a constant). Shared by the fuzz corpus replay and the mutation search
//! (`memory_budget.rs`).
//!
//! [`SLACK`] is two budget bases and 256 KiB. A read pays for what it builds from one budget,
//! whose base ([`BUDGET_BASE`], 1 MiB) covers a small input's fixed needs; where two reads'
//! results are alive at once (a layout's tree, then a value read by it; a blob's table, then a
//! column's layout) each has its own base. The 256 KiB are what no budget charges: the budget
//! itself, error messages and the paths they name, a hash set's table rounded to a power of
//! two, and allocator rounding.
//!
//! A decode with the game's types ([`read_blob_every_way`]) also returns the game's values,
//! which its types, not the blob, size: see [`OUTPUT_PER_BYTE`].
#![allow(dead_code)]

use super::alloc::peak_allocation;
use bevy::reflect::TypeRegistry;
use bevy_keepsake::format::{
    self, BUDGET_BASE, BUDGET_PER_INPUT_BYTE, DecodeOptions, SealKey, Sealing, UnsealedSaves,
};
use bevy_keepsake::snapshot::schema::stored;
use bevy_keepsake::snapshot::{self, SaveRegistry};

/// Bytes a read may take besides [`BUDGET_PER_INPUT_BYTE`] per input byte (see the module).
pub const SLACK: usize = 2 * BUDGET_BASE as usize + (256 << 10);

/// What a decode with the game's types may hold per blob byte for the values it decodes
/// besides its budget, with the test registries' types (`fuzz_world` and Bevy's `Transform`,
/// `Visibility`): a row is an entity index and a boxed value (24 bytes for a row of two bytes
/// at least), and a value is its type (a `Stats` of the fuzz world holds 150 bytes for 8
/// stored; a `Vec<String>` of empty strings 24 bytes per stored byte). A legitimate blob of as
/// many rows decodes to as much.
pub const OUTPUT_PER_BYTE: usize = 24;

/// The most a read of an input of `input` bytes may take.
pub fn bound(input: usize) -> usize {
    BUDGET_PER_INPUT_BYTE as usize * input + SLACK
}

/// Asserts that `peak` is within the bound of an input of `input` bytes; returns how much of
/// the bound it used.
#[track_caller]
pub fn assert_within(what: &str, peak: usize, input: usize) -> f64 {
    assert_below(what, peak, input, bound(input))
}

/// Asserts that `peak` is at most `bound`; returns how much of it was used.
#[track_caller]
fn assert_below(what: &str, peak: usize, input: usize, bound: usize) -> f64 {
    assert!(
        peak <= bound,
        "{what}: a peak of {peak} bytes for an input of {input} bytes, over the bound of {bound}"
    );
    record(what, peak, input);
    peak as f64 / bound as f64
}

/// The largest peaks met so far (in any test of the binary): the largest multiple of its input
/// among inputs of 64 KiB and more (below, the constant dominates), and the largest peak.
#[derive(Clone, Debug, Default)]
pub struct Worst {
    /// `(peak / input, what, peak, input)`.
    pub multiple: (f64, String, usize, usize),
    /// `(peak, what, input)`.
    pub peak: (usize, String, usize),
}

static WORST: std::sync::Mutex<Option<Worst>> = std::sync::Mutex::new(None);

fn record(what: &str, peak: usize, input: usize) {
    let mut worst = WORST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let worst = worst.get_or_insert_with(Worst::default);
    let multiple = peak as f64 / input.max(1) as f64;
    if input >= 64 << 10 && multiple > worst.multiple.0 {
        worst.multiple = (multiple, what.to_owned(), peak, input);
    }
    if peak > worst.peak.0 {
        worst.peak = (peak, what.to_owned(), input);
    }
}

/// The largest peaks met so far (see [`Worst`]).
pub fn worst() -> Worst {
    let worst = WORST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    worst.clone().unwrap_or_default()
}

/// The bytes a save file decodes to, the input its reads are budgeted by: its metadata,
/// thumbnail and payload (decompressed, as announced) when its header reads, else its size.
pub fn decoded_size(file: &[u8]) -> usize {
    let size = match format::read_header(&mut &file[..]) {
        Ok(header) => {
            let payload = header.payload_uncompressed_len.max(header.payload_len);
            header.meta_len as usize + header.thumbnail_len as usize + payload as usize
        }
        Err(_) => 0,
    };
    size.max(file.len())
}

/// The most a read of a save file of `file_len` bytes may take, whatever its header claims:
/// the bound of the most such a file may decode to ([`format::max_decoded_len`]: 32 bytes per
/// byte of the file and 1 MiB), which is what the guide promises of a file's size.
pub fn file_bound(file_len: usize) -> usize {
    bound(format::max_decoded_len(file_len as u64) as usize)
}

/// Asserts that `peak` is within both bounds of reading `file`: of what it decodes to
/// ([`decoded_size`]) and of its size ([`file_bound`]); returns how much of the tighter one it
/// used.
#[track_caller]
pub fn assert_file_within(what: &str, peak: usize, file: &[u8]) -> f64 {
    let input = decoded_size(file);
    let tighter = bound(input).min(file_bound(file.len()));
    assert_below(what, peak, input, tighter)
}

/// How the fuzz target reads files besides without a key: with its key, unsealed files too.
pub fn keyed(key: [u8; 32]) -> DecodeOptions {
    DecodeOptions::new()
        .seal(Sealing::Key(SealKey::from_bytes(key)))
        .unsealed(UnsealedSaves::Accept)
}

/// Every reader of a save file (whole, from a reader, its summary, its chunk table and its
/// thumbnail), with and
/// without `key`, each within the bound of the file's decoded size; the worst share of the
/// bound used.
pub fn read_file_every_way(file: &[u8], key: [u8; 32]) -> f64 {
    let mut worst = 0f64;
    for options in [DecodeOptions::default(), keyed(key)] {
        let (_, peak) = peak_allocation(|| format::decode(file, &options).map(|_| ()));
        worst = worst.max(assert_file_within("format::decode", peak, file));
        let (_, peak) = peak_allocation(|| format::decode_from(&mut &file[..], &options));
        worst = worst.max(assert_file_within("format::decode_from", peak, file));
        let (_, peak) = peak_allocation(|| format::read_summary(&mut &file[..], &options));
        worst = worst.max(assert_file_within("format::read_summary", peak, file));
        let (_, peak) = peak_allocation(|| format::read_chunk_table(file, &options));
        worst = worst.max(assert_file_within("format::read_chunk_table", peak, file));
        let mut cursor = std::io::Cursor::new(file);
        let (_, peak) = peak_allocation(|| format::read_thumbnail(&mut cursor, &options));
        worst = worst.max(assert_file_within("format::read_thumbnail", peak, file));
    }
    worst
}

/// Every reader of a world blob, each within the bound of its input: `inspect`, each column's
/// layout tree, values read by their stored layout (what `keepsake dump` and `diff` show) and
/// measured to be skipped (how a load passes a removed field), and a decode with `registry`'s
/// types (within the bound and [`OUTPUT_PER_BYTE`]). Returns the worst share of the bound used.
pub fn read_blob_every_way(blob: &[u8], registry: &SaveRegistry, types: &TypeRegistry) -> f64 {
    let (table, peak) = peak_allocation(|| snapshot::inspect(blob));
    let mut worst = assert_within("snapshot::inspect", peak, blob.len());
    for column in table.iter().flat_map(|table| &table.columns) {
        let Some(stored_layout) = column.layout else {
            continue;
        };
        let (layout, peak) = peak_allocation(|| stored_layout.decode());
        let layout_len = stored_layout.bytes().len();
        worst = worst.max(assert_within("a column's layout", peak, layout_len));
        let Ok(layout) = layout else {
            continue;
        };
        for row in column.rows.iter().take(8) {
            let (_, peak) = peak_allocation(|| stored::read(&layout, row.value).map(|_| ()));
            worst = worst.max(assert_within("stored::read", peak, row.value.len()));
            let (_, peak) = peak_allocation(|| stored::skip(&layout, row.value));
            worst = worst.max(assert_within("stored::skip", peak, 0));
        }
    }
    let hash = snapshot::state_hash(blob);
    let (_, peak) = peak_allocation(|| snapshot::decode(blob, hash, registry, types).map(|_| ()));
    let with_output = bound(blob.len()) + OUTPUT_PER_BYTE * blob.len();
    worst.max(assert_below(
        "snapshot::decode",
        peak,
        blob.len(),
        with_output,
    ))
}
