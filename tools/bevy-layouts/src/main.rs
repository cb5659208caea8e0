//! Writes the save layouts of Bevy's reflected types for the Bevy this build links, and diffs
//! two such dumps into the table of Bevy 0.19 layouts the library ships
//! (`keepsake-core/src/legacy/bevy_0_19_layouts.tsv`). See `README.md` for the commands.
//!
//! `dump [OUT]`: every registered type whose path starts with `bevy_`, one line each, sorted
//! by path: `type_path<TAB>short_path<TAB>hex of the column layout<TAB>kind`, where kind is
//! `resource`, `component` or `-` (what the diff keeps).
//!
//! `diff OLD NEW TSV MD`: the types a game can save (components and resources of the old Bevy)
//! whose old layout differs from the new one, or whose old path is gone while one new type has
//! the same short path (a move): `old_path<TAB>new_path<TAB>hex of the old layout` into TSV,
//! and the same entries for people into MD.
//!
//! The layouts are built by the library's own `layout_of.rs` and encoded by its own
//! `schema::codec`, compiled here against the chosen Bevy (`snapshot/`).

#![allow(dead_code)]

#[cfg(all(feature = "bevy-0-19", feature = "bevy-0-20"))]
compile_error!("choose one Bevy: `--features bevy-0-19` or `--features bevy-0-20`, not both");
#[cfg(not(any(feature = "bevy-0-19", feature = "bevy-0-20")))]
compile_error!("choose a Bevy: `--features bevy-0-19` or `--features bevy-0-20`");

// `extern crate … as bevy` at the crate root puts `bevy` in every module's prelude, so the
// library's `use bevy::…` lines compile unchanged.
#[cfg(feature = "bevy-0-19")]
extern crate bevy_019 as bevy;
#[cfg(all(feature = "bevy-0-20", not(feature = "bevy-0-19")))]
extern crate bevy_020 as bevy;

mod snapshot;

use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::prelude::{App, AppTypeRegistry, DefaultPlugins, PluginGroup};
use snapshot::schema::{Field, TypeLayout, VariantFields, codec, text};
use snapshot::value::layout_of::column_layout;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;

/// The Bevy this build links, as the dump's header says.
#[cfg(feature = "bevy-0-19")]
const BEVY_VERSION: &str = "0.19.1";
#[cfg(all(feature = "bevy-0-20", not(feature = "bevy-0-19")))]
const BEVY_VERSION: &str = "0.20.1";

/// The commands that regenerate the table, written into its header and the changes file.
const COMMANDS: [&str; 3] = [
    "cargo run --ignore-rust-version --features bevy-0-19 -- dump dumps/bevy-0.19.tsv",
    "cargo run --ignore-rust-version --features bevy-0-20 -- dump dumps/bevy-0.20.tsv",
    "cargo run --ignore-rust-version --features bevy-0-20 -- diff dumps/bevy-0.19.tsv dumps/bevy-0.20.tsv ../../keepsake-core/src/legacy/bevy_0_19_layouts.tsv bevy_0_19_changes.md",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["dump"] => dump(None),
        ["dump", out] => dump(Some(out)),
        ["diff", old, new, tsv, md] => diff(old, new, tsv, md),
        _ => Err(
            "usage: bevy-layouts dump [OUT] | bevy-layouts diff OLD_DUMP NEW_DUMP OUT_TSV OUT_MD"
                .to_owned(),
        ),
    };
    if let Err(error) = result {
        eprintln!("bevy-layouts: {error}");
        std::process::exit(1);
    }
}

/// Every reflected type of the linked Bevy, as a game's `App` has them: the registrations
/// `#[derive(Reflect)]` submits (Bevy's `reflect_auto_register`, what `App::new()` starts
/// from) with the types they depend on (field types, `Handle<A>`, `Option<T>` …), and what
/// `DefaultPlugins` registers besides (generic types such as `Time<Virtual>`, type data).
/// The plugins that need a GPU or the render plugin, and the logger, are left out; nothing
/// runs.
fn registry() -> AppTypeRegistry {
    let mut app = App::new();
    let derived = app
        .world()
        .resource::<AppTypeRegistry>()
        .read()
        .iter()
        .count();
    app.add_plugins(
        DefaultPlugins
            .build()
            .disable::<bevy::log::LogPlugin>()
            .disable::<bevy::render::RenderPlugin>()
            .disable::<bevy::render::pipelined_rendering::PipelinedRenderingPlugin>()
            // These load shaders, an asset type only the render plugin sets up; their types are
            // registered by derive all the same.
            .disable::<bevy::core_pipeline::CorePipelinePlugin>()
            .disable::<bevy::sprite_render::SpriteRenderPlugin>(),
    );
    let registry = app.world().resource::<AppTypeRegistry>().clone();
    let all = registry.read().iter().count();
    eprintln!(
        "Bevy {BEVY_VERSION}: {derived} types registered by derive, {all} with DefaultPlugins"
    );
    registry
}

fn dump(out: Option<&str>) -> Result<(), String> {
    let registry = registry();
    let registry = registry.read();
    let mut lines = BTreeMap::new();
    for registration in registry.iter() {
        let info = registration.type_info();
        let type_path = info.type_path();
        if !type_path.starts_with("bevy_") {
            continue;
        }
        let layout = column_layout(&registry, registration.type_id(), type_path, false);
        let mut bytes = Vec::new();
        codec::encode(&layout, &mut bytes);
        let kind = if registration.data::<ReflectResource>().is_some() {
            "resource"
        } else if registration.data::<ReflectComponent>().is_some() {
            "component"
        } else {
            "-"
        };
        let short_path = info.type_path_table().short_path();
        let line = format!("{type_path}\t{short_path}\t{}\t{kind}\n", hex(&bytes));
        if lines.insert(type_path.to_owned(), line).is_some() {
            return Err(format!("two registrations have the path {type_path}"));
        }
    }
    let mut text = format!(
        "# bevy-layouts dump of Bevy {BEVY_VERSION}: type_path, short_path, column layout (hex), kind\n"
    );
    text.extend(lines.into_values());
    match out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("writing {path}: {e}"))?,
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| e.to_string())?,
    }
    Ok(())
}

/// One line of a dump.
struct Dumped {
    short_path: String,
    hex: String,
    layout: TypeLayout,
    kind: String,
}

impl Dumped {
    fn saveable(&self) -> bool {
        self.kind != "-"
    }
}

fn read_dump(path: &str) -> Result<BTreeMap<String, Dumped>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    let mut types = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let at = || format!("{path}:{}", number + 1);
        let [type_path, short_path, hex, kind] = line.split('\t').collect::<Vec<_>>()[..] else {
            return Err(format!("{}: expected four tab-separated columns", at()));
        };
        let bytes = unhex(hex).ok_or_else(|| format!("{}: bad hex", at()))?;
        let layout =
            codec::decode_bytes(&bytes).map_err(|e| format!("{}: bad layout: {e}", at()))?;
        if layout.to_bytes() != bytes {
            return Err(format!(
                "{}: the layout does not re-encode to its bytes",
                at()
            ));
        }
        let dumped = Dumped {
            short_path: short_path.to_owned(),
            hex: hex.to_owned(),
            layout,
            kind: kind.to_owned(),
        };
        types.insert(type_path.to_owned(), dumped);
    }
    Ok(types)
}

/// One line of the table: a saveable old type, its path today and its old layout.
struct Entry<'a> {
    old_path: &'a str,
    new_path: &'a str,
    old: &'a Dumped,
    new: &'a Dumped,
}

fn diff(old_dump: &str, new_dump: &str, tsv: &str, md: &str) -> Result<(), String> {
    let old = read_dump(old_dump)?;
    let new = read_dump(new_dump)?;

    // New paths by short path, for the old paths that are gone.
    let mut added_by_short: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (path, dumped) in &new {
        if !old.contains_key(path) {
            added_by_short
                .entry(&dumped.short_path)
                .or_default()
                .push(path);
        }
    }

    let mut entries = Vec::new();
    let mut gone = Vec::new();
    let mut ambiguous = Vec::new();
    let mut unchanged = 0;
    for (old_path, dumped) in old.iter().filter(|(_, dumped)| dumped.saveable()) {
        if let Some(today) = new.get(old_path) {
            if today.hex == dumped.hex {
                unchanged += 1;
            } else {
                entries.push(Entry {
                    old_path,
                    new_path: old_path,
                    old: dumped,
                    new: today,
                });
            }
            continue;
        }
        let candidates = added_by_short
            .get(dumped.short_path.as_str())
            .map_or(&[][..], Vec::as_slice);
        // Several new types with the short path: the one of the same kind, if only one is.
        let same_kind: Vec<&str> = (candidates.iter().copied())
            .filter(|path| new[*path].kind == dumped.kind)
            .collect();
        let chosen = match (candidates, same_kind.as_slice()) {
            ([one], _) | (_, [one]) => *one,
            ([], _) => {
                gone.push(old_path.as_str());
                continue;
            }
            _ => {
                ambiguous.push((old_path.as_str(), candidates.to_vec()));
                continue;
            }
        };
        entries.push(Entry {
            old_path,
            new_path: chosen,
            old: dumped,
            new: &new[chosen],
        });
    }

    // The table.
    let mut table = String::new();
    table.push_str(
        "# The Bevy 0.19.1 layouts of Bevy's saveable types (components and resources) whose layout or path changed in Bevy 0.20.1: old_type_path<TAB>new_type_path<TAB>hex of the 0.19 column layout (schema::codec).\n",
    );
    let _ = writeln!(
        table,
        "# Generated by tools/bevy-layouts, not written by hand; from that folder (CARGO_TARGET_DIR as you like): {}",
        COMMANDS.join(" && ")
    );
    for entry in &entries {
        let _ = writeln!(
            table,
            "{}\t{}\t{}",
            entry.old_path, entry.new_path, entry.old.hex
        );
    }
    std::fs::write(tsv, table).map_err(|e| format!("writing {tsv}: {e}"))?;

    // The same for people.
    let mut text = String::new();
    text.push_str("# Bevy 0.19 → 0.20: the saveable Bevy types whose save layout changed\n\n");
    text.push_str(
        "Generated by `tools/bevy-layouts` with the commands below (run in `tools/bevy-layouts`), \
         together with `keepsake-core/src/legacy/bevy_0_19_layouts.tsv`; do not edit by hand.\n\n```sh\n",
    );
    for command in COMMANDS {
        let _ = writeln!(text, "{command}");
    }
    let moved = entries.iter().filter(|e| e.old_path != e.new_path).count();
    let _ = write!(
        text,
        "```\n\n{} entries ({} moved, {} changed in place); {} saveable types unchanged; \
         {} saveable 0.19 types gone without a successor; {} ambiguous moves.\n\n",
        entries.len(),
        moved,
        entries.len() - moved,
        unchanged,
        gone.len(),
        ambiguous.len(),
    );
    text.push_str("| 0.19 path | 0.20 path | kind | what changed |\n|---|---|---|---|\n");
    for entry in &entries {
        let new_path = if entry.new_path == entry.old_path {
            "(same)"
        } else {
            entry.new_path
        };
        let _ = writeln!(
            text,
            "| `{}` | `{}` | {} | {} |",
            entry.old_path,
            new_path,
            entry.old.kind,
            summary(&entry.old.layout, &entry.new.layout).replace('|', "\\|"),
        );
    }
    if !gone.is_empty() {
        text.push_str("\n## Saveable in 0.19, gone in 0.20 (no type with the same short path)\n\n");
        for path in &gone {
            let _ = writeln!(text, "- `{path}`");
        }
    }
    if !ambiguous.is_empty() {
        text.push_str(
            "\n## Gone in 0.20, several new types with the same short path (left out)\n\n",
        );
        for (path, candidates) in &ambiguous {
            let _ = writeln!(text, "- `{path}`: {}", candidates.join(", "));
        }
    }
    text.push_str(
        "\n## The layouts\n\nEach entry's 0.19 and 0.20 layouts by `text::short`, and what differs \
         between their `text::pretty` renderings (a unified diff, 0.19 → 0.20).\n",
    );
    for entry in &entries {
        let old_pretty = text::pretty(&entry.old.layout);
        let new_pretty = text::pretty(&entry.new.layout);
        let pretty_diff = similar::TextDiff::from_lines(&old_pretty, &new_pretty)
            .unified_diff()
            .context_radius(3)
            .header("0.19", "0.20")
            .to_string();
        let _ = write!(
            text,
            "\n### `{}`\n\n0.19 (`text::short`):\n\n```text\n{}\n```\n\n0.20, `{}` (`text::short`):\n\n\
             ```text\n{}\n```\n\n`text::pretty`, 0.19 → 0.20:\n\n```diff\n{}```\n",
            entry.old_path,
            text::short(&entry.old.layout),
            entry.new_path,
            text::short(&entry.new.layout),
            pretty_diff,
        );
    }
    std::fs::write(md, text).map_err(|e| format!("writing {md}: {e}"))?;
    eprintln!(
        "{} entries ({moved} moved), {unchanged} unchanged, {} gone, {} ambiguous",
        entries.len(),
        gone.len(),
        ambiguous.len()
    );
    Ok(())
}

/// What changed at the top of a type, in a few words (the details are in the layouts).
fn summary(old: &TypeLayout, new: &TypeLayout) -> String {
    let mut said = Vec::new();
    if old.type_path() != new.type_path() {
        said.push("moved".to_owned());
    }
    match (old, new) {
        (TypeLayout::Struct { fields: a, .. }, TypeLayout::Struct { fields: b, .. }) => {
            said.extend(named("field", a, b))
        }
        (TypeLayout::Enum { variants: a, .. }, TypeLayout::Enum { variants: b, .. }) => {
            let names = |v: &[snapshot::schema::Variant]| -> Vec<String> {
                v.iter().map(|v| v.name.clone()).collect()
            };
            said.extend(listed("variant", &names(a), &names(b)));
            for (x, y) in a.iter().zip(b) {
                if x.name == y.name && x.fields != y.fields {
                    let inner = match (&x.fields, &y.fields) {
                        (VariantFields::Struct(f), VariantFields::Struct(g)) => {
                            named("field", f, g)
                        }
                        _ => Vec::new(),
                    };
                    said.push(format!("variant `{}` changed{}", x.name, bracket(&inner)));
                }
            }
        }
        (TypeLayout::TupleStruct { fields: a, .. }, TypeLayout::TupleStruct { fields: b, .. }) => {
            if a.len() != b.len() {
                said.push(format!("{} fields → {}", a.len(), b.len()));
            }
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    said.push(format!("field {index} changed{}", nested(x, y)));
                }
            }
        }
        (TypeLayout::Serde { reflected: a, .. }, TypeLayout::Serde { reflected: b, .. }) => {
            let inner = summary(a, b);
            said.push(format!("serde type, reflected layout changed ({inner})"));
        }
        _ if std::mem::discriminant(old) != std::mem::discriminant(new) => {
            said.push(format!("shape {} → {}", shape(old), shape(new)));
        }
        _ => {}
    }
    if said.is_empty() {
        said.push("nested layout changed".to_owned());
    }
    said.join("; ")
}

fn named(what: &str, a: &[Field], b: &[Field]) -> Vec<String> {
    let names = |f: &[Field]| -> Vec<String> { f.iter().map(|f| f.name.clone()).collect() };
    let mut said = listed(what, &names(a), &names(b));
    for x in a {
        if let Some(y) = b.iter().find(|y| y.name == x.name)
            && x.layout != y.layout
        {
            said.push(format!(
                "{what} `{}` changed{}",
                x.name,
                nested(&x.layout, &y.layout)
            ));
        }
    }
    said
}

/// Added, removed and reordered names.
fn listed(what: &str, a: &[String], b: &[String]) -> Vec<String> {
    let sa: BTreeSet<&String> = a.iter().collect();
    let sb: BTreeSet<&String> = b.iter().collect();
    let quote = |names: Vec<&&String>| -> String {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut said = Vec::new();
    let added: Vec<_> = sb.difference(&sa).collect();
    let removed: Vec<_> = sa.difference(&sb).collect();
    if !added.is_empty() {
        let at: Vec<String> = (added.iter())
            .map(|n| format!("`{n}` at {}", b.iter().position(|x| x == **n).unwrap_or(0)))
            .collect();
        said.push(format!("{what}s added: {}", at.join(", ")));
    }
    if !removed.is_empty() {
        said.push(format!("{what}s removed: {}", quote(removed)));
    }
    let kept_a: Vec<&String> = a.iter().filter(|n| sb.contains(n)).collect();
    let kept_b: Vec<&String> = b.iter().filter(|n| sa.contains(n)).collect();
    if kept_a != kept_b {
        said.push(format!("{what}s reordered"));
    }
    said
}

fn nested(a: &TypeLayout, b: &TypeLayout) -> String {
    match (a.type_path(), b.type_path()) {
        (Some(x), Some(y)) if x != y => format!(" (`{x}` → `{y}`)"),
        _ if std::mem::discriminant(a) != std::mem::discriminant(b) => {
            format!(" ({} → {})", shape(a), shape(b))
        }
        _ => bracket(&summary_inner(a, b)),
    }
}

fn summary_inner(a: &TypeLayout, b: &TypeLayout) -> Vec<String> {
    let said = summary(a, b);
    if said == "nested layout changed" {
        Vec::new()
    } else {
        vec![said]
    }
}

fn bracket(said: &[String]) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join("; "))
    }
}

fn shape(layout: &TypeLayout) -> &'static str {
    match layout {
        TypeLayout::Leaf(_) => "leaf",
        TypeLayout::Struct { .. } => "struct",
        TypeLayout::TupleStruct { .. } => "tuple struct",
        TypeLayout::Tuple(_) => "tuple",
        TypeLayout::List(_) => "list",
        TypeLayout::Array { .. } => "array",
        TypeLayout::Set(_) => "set",
        TypeLayout::Map { .. } => "map",
        TypeLayout::Enum { .. } => "enum",
        TypeLayout::Serde { .. } => "serde",
        TypeLayout::Handle { .. } => "handle",
        TypeLayout::UntypedHandle => "untyped handle",
        TypeLayout::Opaque { .. } => "opaque",
        TypeLayout::Deep { .. } => "deep",
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}
