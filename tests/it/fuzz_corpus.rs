//! Replays the fuzz corpora (`fuzz/corpus/*`) and every crash input the fuzzers ever found
//! (`fuzz/artifacts/*`) through the decoders, as an ordinary test: no panic, and no allocation
//! above the memory bound of `common::budget` (four bytes per byte of the decoded input and
//! a constant): a save file by its decoded size (metadata, thumbnail and the payload as
//! announced, which LZ4's 255:1 bounds by the file), a blob through every reader of a blob,
//! a layout input by its size.

use crate::common;

use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::format::{self, EncodeOptions, SaveBundle, SealKey, Sealing, WorldState};
use bevy_keepsake::snapshot::{self, SaveRegistry};
use common::alloc::peak_allocation;
use common::budget::{assert_within, keyed, read_blob_every_way, read_file_every_way};
use common::{crc_fixup, fixtures, fuzz_layout, fuzz_world};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs = Vec::new();
    for folder in [
        fuzz.join("corpus").join(target),
        fuzz.join("artifacts").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                inputs.push((path, bytes));
            }
        }
    }
    inputs.sort();
    inputs
}

#[test]
fn the_file_decoder_corpus_replays_within_the_memory_bound() {
    let inputs = inputs("decode_file");
    assert!(
        inputs.len() >= 10,
        "the corpus is committed: {} inputs",
        inputs.len()
    );
    let mut worst = 0f64;
    for (_, bytes) in &inputs {
        let fixed = crc_fixup::with_valid_checksums(bytes);
        let sealed = crc_fixup::with_valid_seal(bytes, &crc_fixup::FUZZ_SEAL_KEY);
        for input in std::iter::once(&bytes[..])
            .chain(fixed.as_deref())
            .chain(sealed.as_deref())
        {
            worst = worst.max(read_file_every_way(input, crc_fixup::FUZZ_SEAL_KEY));
        }
    }
    println!(
        "{} file inputs, worst peak at {:.1}% of the bound",
        inputs.len(),
        worst * 100.0
    );
}

#[test]
fn the_sealed_seeds_open_once_resealed_and_the_real_one_opens_as_is() {
    let inputs = inputs("decode_file");
    let sealed: Vec<_> = inputs
        .iter()
        .filter(|(path, _)| path.to_string_lossy().contains("seed-v3"))
        .collect();
    assert!(sealed.len() >= 3, "{} sealed seeds", sealed.len());
    for (path, bytes) in sealed {
        let input = if path.to_string_lossy().contains("open") {
            crc_fixup::with_valid_seal(bytes, &crc_fixup::FUZZ_SEAL_KEY).unwrap()
        } else {
            bytes.clone()
        };
        let decoded = format::decode(&input, &keyed(crc_fixup::FUZZ_SEAL_KEY));
        assert!(decoded.is_ok(), "{}: {decoded:?}", path.display());
    }
}

#[test]
fn the_blob_decoder_corpus_replays_within_the_memory_bound() {
    let inputs = inputs("decode_blob");
    assert!(
        inputs.len() >= 10,
        "the corpus is committed: {} inputs",
        inputs.len()
    );
    let app = fuzz_world::app();
    let registry = app.world().resource::<SaveRegistry>().clone();
    let types = app.world().resource::<AppTypeRegistry>().clone();
    let types = types.read();
    let mut worst = 0f64;
    let mut valid = 0;
    for (_, bytes) in &inputs {
        worst = worst.max(read_blob_every_way(bytes, &registry, &types));
        let result = snapshot::decode(bytes, snapshot::state_hash(bytes), &registry, &types);
        if let Ok(decoded) = result {
            // The fuzz target applies what decodes; so does the replay.
            let mut world_app = fuzz_world::app();
            snapshot::apply(world_app.world_mut(), decoded, snapshot::LoadMode::Respawn);
            valid += 1;
        }
    }
    println!(
        "{} blob inputs ({valid} decode), worst peak at {:.1}% of the bound",
        inputs.len(),
        worst * 100.0
    );
}

#[test]
fn the_layout_decoder_corpus_replays_within_the_memory_bound() {
    let inputs = inputs("decode_layout");
    assert!(
        inputs.len() >= 5,
        "the corpus is committed: {} inputs",
        inputs.len()
    );
    let mut worst = 0f64;
    for (path, bytes) in &inputs {
        let ((), peak) = peak_allocation(|| fuzz_layout::run(bytes));
        let what = path.display().to_string();
        worst = worst.max(assert_within(&what, peak, bytes.len()));
    }
    println!(
        "{} layout inputs, worst peak at {:.1}% of the bound",
        inputs.len(),
        worst * 100.0
    );
}

/// What a fuzzer does first, on stable Rust: the committed layout seeds with random bytes
/// overwritten, inserted or cut, through the fuzz target's body, within the memory bound.
mod mutated_layouts {
    use super::*;

    /// One edit of an input: overwrite, insert or cut at a position (taken modulo the length).
    #[derive(Clone, Debug)]
    enum Edit {
        Set(usize, u8),
        Insert(usize, u8),
        Cut(usize),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Set(at, byte)),
            (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Insert(at, byte)),
            any::<usize>().prop_map(Edit::Cut),
        ]
    }

    fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        for edit in edits {
            let len = bytes.len().max(1);
            match *edit {
                Edit::Set(at, byte) if !bytes.is_empty() => bytes[at % len] = byte,
                Edit::Insert(at, byte) => bytes.insert(at % (bytes.len() + 1), byte),
                Edit::Cut(at) if !bytes.is_empty() => bytes.truncate(at % len),
                _ => {}
            }
        }
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn edited_seeds_never_panic_or_allocate_beyond_the_bound(
            seed in any::<prop::sample::Index>(),
            edits in prop::collection::vec(edit(), 1..6),
        ) {
            let seeds = inputs("decode_layout");
            let (path, bytes) = &seeds[seed.index(seeds.len())];
            let input = apply(bytes.clone(), &edits);
            let ((), peak) = peak_allocation(|| fuzz_layout::run(&input));
            assert_within(&path.display().to_string(), peak, input.len());
        }
    }
}

/// Writes the seed inputs the fuzzers start from:
/// `cargo test --test fuzz_corpus -- --ignored write_fuzz_seeds`.
#[test]
#[ignore = "writes fuzz/corpus seeds"]
fn write_fuzz_seeds() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus");
    let file_dir = fuzz.join("decode_file");
    let blob_dir = fuzz.join("decode_blob");
    std::fs::create_dir_all(&file_dir).unwrap();
    std::fs::create_dir_all(&blob_dir).unwrap();

    let mut app = fuzz_world::app();
    fuzz_world::populate(app.world_mut());
    let captured = snapshot::capture(app.world()).unwrap();
    std::fs::write(blob_dir.join("seed-world"), &captured.blob).unwrap();
    let empty = snapshot::capture(fuzz_world::app().world()).unwrap();
    std::fs::write(blob_dir.join("seed-empty"), &empty.blob).unwrap();

    let large = fixtures::game_like_blob(130_000, 8);
    for (name, compression, layout, blob) in [
        (
            "seed-lz4-world",
            format::Compression::Lz4,
            format::PayloadLayout::Whole,
            captured.blob.clone(),
        ),
        (
            "seed-stored-world",
            format::Compression::None,
            format::PayloadLayout::Whole,
            captured.blob.clone(),
        ),
        (
            "seed-lz4-game",
            format::Compression::Lz4,
            format::PayloadLayout::Whole,
            fixtures::game_like_blob(3_000, 7),
        ),
        (
            "seed-v2-lz4-world",
            format::Compression::Lz4,
            format::PayloadLayout::Chunked,
            captured.blob.clone(),
        ),
        (
            "seed-v2-stored-world",
            format::Compression::None,
            format::PayloadLayout::Chunked,
            captured.blob.clone(),
        ),
        // Several chunks, so mutations reach the table entries after the first.
        (
            "seed-v2-lz4-chunks",
            format::Compression::Lz4,
            format::PayloadLayout::Chunked,
            large,
        ),
    ] {
        let meta = format::SaveMeta {
            thumbnail: Some(b"\\x89PNG-thumb".to_vec()),
            ..fixtures::meta(SlotId::Manual(1), 2)
        };
        let bundle = SaveBundle::new(WorldState {
            tick: 3,
            state_hash: snapshot::state_hash(&blob),
            ecs_blob: blob,
        });
        let options = EncodeOptions {
            compression,
            compress_when: format::CompressWhen::Always,
            layout,
            ..Default::default()
        };
        let bytes = format::encode(&meta, &bundle, &options).unwrap().to_vec();
        std::fs::write(file_dir.join(name), bytes).unwrap();
    }
}

/// Writes the seeds of the layout fuzzer, one per column of the fuzz world's blob (its layout
/// and first value), and that blob, with its layouts, for the blob fuzzer (the `decode_blob`
/// seeds above predate layouts and stay as they are):
/// `cargo test --test it -- --ignored fuzz_corpus::write_layout_fuzz_seeds`.
#[test]
#[ignore = "writes fuzz/corpus seeds"]
fn write_layout_fuzz_seeds() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus");
    let dir = corpus.join("decode_layout");
    std::fs::create_dir_all(&dir).unwrap();
    let mut app = fuzz_world::app();
    fuzz_world::populate(app.world_mut());
    let blob = snapshot::capture(app.world()).unwrap().blob;
    std::fs::write(corpus.join("decode_blob").join("seed-world-layouts"), &blob).unwrap();
    let table = snapshot::inspect(&blob).unwrap();
    for column in &table.columns {
        let Some(layout) = &column.layout else {
            continue;
        };
        let value = column.rows.first().map_or(&[][..], |row| row.value);
        let name = column.type_path.rsplit("::").next().unwrap_or("type");
        let input = fuzz_layout::input(layout.bytes(), value);
        std::fs::write(dir.join(format!("seed-{name}")), input).unwrap();
    }
}

/// Writes the sealed (version-3) seeds of the file fuzzer: `seed-v3-sealed-world` as the
/// encoder writes it under the fuzz key and a fixed nonce, and `seed-v3-open-*` with their
/// payload unencrypted between nonce and tag (the fuzz target seals them for real, see
/// `crc_fixup::with_valid_seal`), so mutations reach the chunk table:
/// `cargo test --test it -- --ignored fuzz_corpus::write_sealed_fuzz_seeds`.
#[test]
#[ignore = "writes fuzz/corpus seeds"]
fn write_sealed_fuzz_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/decode_file");
    let mut app = fuzz_world::app();
    fuzz_world::populate(app.world_mut());
    let world = snapshot::capture(app.world()).unwrap().blob;
    let seeds = [
        ("seed-v3-sealed-world", world.clone()),
        ("seed-v3-open-world", world),
        ("seed-v3-open-chunks", fixtures::game_like_blob(130_000, 8)),
    ];
    for (name, blob) in seeds {
        let meta = format::SaveMeta {
            thumbnail: Some(b"\x89PNG-thumb".to_vec()),
            ..fixtures::meta(SlotId::Manual(1), 2)
        };
        let bundle = SaveBundle::new(WorldState {
            tick: 3,
            state_hash: snapshot::state_hash(&blob),
            ecs_blob: blob,
        });
        let open = EncodeOptions {
            compress_when: format::CompressWhen::Always,
            ..Default::default()
        };
        let sealed = EncodeOptions {
            seal: Sealing::Key(SealKey::from_bytes(crc_fixup::FUZZ_SEAL_KEY)),
            ..open
        };
        let nonce = *b"fuzz nonce 1";
        let mut bytes = format::encode_with_fixed_nonce(&meta, &bundle, &sealed, nonce)
            .unwrap()
            .to_vec();
        if name.contains("open") {
            // A version-2 file of the same bundle has, as its payload, exactly the plaintext.
            let plain = format::encode(&meta, &bundle, &open).unwrap();
            let plain = plain.to_vec();
            let payload = plain.len() - plain_payload_len(&plain);
            let start = bytes.len() - 16 - (plain.len() - payload);
            let end = bytes.len() - 16;
            bytes[start..end].copy_from_slice(&plain[payload..]);
            bytes[end..].fill(0);
        }
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// The payload length a file's header announces.
fn plain_payload_len(file: &[u8]) -> usize {
    u32::from_le_bytes(file[16..20].try_into().unwrap()) as usize
}
