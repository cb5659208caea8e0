//! The glossary (`src/guide/glossary.md`) gives each word one meaning; these tests read the
//! libraries' public names (`pub` items and fields of `src/` and `keepsake-core/src/`) and fail
//! when one uses a glossary word in another meaning, or when a name the glossary replaced is
//! back.

use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The name a line declares public (`pub fn name`, `pub struct Name`, `pub name: T`, …), if any.
fn public_name(line: &str) -> Option<&str> {
    // `pub(crate) …` is not public; `pub use …` declares nothing here.
    let rest = line.trim_start().strip_prefix("pub ")?;
    let keywords = [
        "const fn ",
        "async fn ",
        "unsafe fn ",
        "fn ",
        "struct ",
        "enum ",
        "const ",
    ];
    let keywords = keywords
        .into_iter()
        .chain(["static ", "type ", "trait ", "mod "]);
    let item = keywords
        .clone()
        .find_map(|keyword| rest.strip_prefix(keyword));
    let name_and_after = item.unwrap_or(rest);
    let end = (name_and_after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .unwrap_or(name_and_after.len());
    let (name, after) = name_and_after.split_at(end);
    let field = item.is_none() && after.starts_with(':') && !after.starts_with("::");
    (!name.is_empty() && (item.is_some() || field)).then_some(name)
}

/// (file relative to the crate root, public name) of both libraries.
fn public_names() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    sources(&root.join("keepsake-core/src"), &mut files);
    let mut names = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for line in fs::read_to_string(&file).unwrap().lines() {
            if let Some(name) = public_name(line) {
                names.push((relative.clone(), name.to_owned()));
            }
        }
    }
    assert!(names.len() > 500, "read only {} public names", names.len());
    names
}

#[test]
fn public_names_use_each_glossary_word_in_its_one_meaning() {
    let mut wrong = Vec::new();
    for (file, name) in public_names() {
        let flat = name.to_ascii_lowercase().replace('_', "");
        // "key" is a level key or a seal key; a keyboard key is a hotkey. A bare `key` field is
        // the level key of the level-key types it belongs to.
        let level_key_file = ["register/key.rs", "entity_mapping.rs", "blob/entities.rs"]
            .iter()
            .chain(&["blob/inspect.rs"])
            .any(|f| file.ends_with(f));
        let named_key = ["levelkey", "sealkey", "hotkey"]
            .iter()
            .any(|word| flat.contains(word));
        if flat.contains("key")
            && !named_key
            && !(level_key_file && (flat == "key" || flat == "keys"))
        {
            wrong.push(format!(
                "{file}: `{name}` says \"key\" without saying which"
            ));
        }
        // The snapshot layer's 1024-row block is a piece; a chunk is the file's span.
        if file.starts_with("src/snapshot/") && flat.contains("chunk") {
            wrong.push(format!("{file}: `{name}` calls a piece a chunk"));
        }
        // A generation is a save's number in its slot, which the snapshot layer has none of.
        if file.starts_with("src/snapshot/") && flat.contains("generation") {
            wrong.push(format!("{file}: `{name}` is not a save's generation"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn names_the_glossary_replaced_are_gone() {
    let replaced = [
        "SaveKey",
        "EntityKeys",
        "StoredKey",
        "KeyMiss",
        "use_names_as_save_keys",
        "entity_keys",
        "CHUNK_ROWS",
        "chunks_reused",
        "chunks_patched",
        "chunks_rebuilt",
        "DEVICE_NAME_KEY",
        "DEVICE_ID_KEY",
        "CRASH_KEY",
        "FOLLOWS_KEY",
        "page_keys",
        "keys_per_round",
        "toggle_key",
    ];
    let back: Vec<_> = public_names()
        .into_iter()
        .filter(|(_, name)| replaced.contains(&name.as_str()))
        .collect();
    assert!(back.is_empty(), "replaced names are back: {back:?}");
}

#[test]
fn public_name_reads_items_and_fields_only() {
    assert_eq!(
        public_name("    pub fn level_keys(&self) -> LevelKeys {"),
        Some("level_keys")
    );
    assert_eq!(
        public_name("pub struct LevelKey(String);"),
        Some("LevelKey")
    );
    assert_eq!(
        public_name("pub const fn from_bytes(b: [u8; 32]) -> Self {"),
        Some("from_bytes")
    );
    assert_eq!(public_name("    pub key: String,"), Some("key"));
    assert_eq!(public_name("pub use key::{LevelKey, LevelKeys};"), None);
    assert_eq!(public_name("pub(crate) fn collect(self) {"), None);
    assert_eq!(public_name("    let key = 1;"), None);
}
