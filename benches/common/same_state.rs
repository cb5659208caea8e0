//! Whether a loaded world holds the values of the world that was saved: a capture of each, in a
//! form that does not depend on entity ids (issue 53: a load was checked by counting entities
//! and `ChildOf` links only, so a load that wrote wrong values passed).
//!
//! Each entity is named by the saved id it stands for (the load's entity map, inverted); each
//! value is read by its stored layout, with its entity references renamed the same way (a
//! keyed entity by its key, an entity the blob neither holds nor keys as "outside"), and maps
//! and sets sorted (a map's iteration order is not its value). The order of the entity table
//! and of siblings is left out: `DynamicWorld`'s load does not keep it, and no target reads it.
//! A plain state hash of the two blobs cannot be compared: it covers entity ids, which a load
//! into a fresh world does not keep.
//!
//! Used by `benches/shapes.rs` in its setup, so `cargo bench -- --test` runs it too.
#![allow(dead_code)]

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy_keepsake::snapshot::schema::stored::{self, StoredFields, StoredValue};
use bevy_keepsake::snapshot::{self, ColumnKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A blob's entities and values, entities named by the saved ids they stand for.
#[derive(Debug, PartialEq)]
pub struct Canonical {
    entities: BTreeSet<String>,
    values: BTreeMap<(String, String), String>,
    resources: BTreeMap<String, String>,
}

/// The saved world's own capture in canonical form (every entity stands for itself).
pub fn saved(blob: &[u8]) -> Canonical {
    canonical(blob, &|entity| entity)
}

/// A capture of a loaded world in canonical form; `loaded_from_saved` is the load's entity map
/// (saved id → the entity spawned for it), as `ApplyReport::entity_map` and
/// `DynamicWorld::write_to_world` give it.
pub fn loaded(blob: &[u8], loaded_from_saved: &EntityHashMap<Entity>) -> Canonical {
    let saved_of: HashMap<Entity, Entity> = loaded_from_saved
        .iter()
        .map(|(&saved, &loaded)| (loaded, saved))
        .collect();
    // An entity the load did not spawn keeps its own id, which no saved entity has: it shows
    // up as a difference.
    canonical(blob, &|entity| {
        saved_of.get(&entity).copied().unwrap_or(entity)
    })
}

/// Panics naming the first differences when `found` (a loaded world) is not `expected` (the
/// saved one); `what` says which load it was.
pub fn assert_same(expected: &Canonical, found: &Canonical, what: &str) {
    if expected == found {
        return;
    }
    let mut lines = Vec::new();
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).take(5).cloned().collect()
    };
    lines.push(format!(
        "{} entities saved, {} loaded; only saved {:?}, only loaded {:?}",
        expected.entities.len(),
        found.entities.len(),
        only(&expected.entities, &found.entities),
        only(&found.entities, &expected.entities)
    ));
    let keys: BTreeSet<&(String, String)> =
        expected.values.keys().chain(found.values.keys()).collect();
    let differing = keys
        .into_iter()
        .filter(|k| expected.values.get(*k) != found.values.get(*k));
    for key in differing.take(8) {
        lines.push(format!(
            "{key:?}: saved {:?}, loaded {:?}",
            expected.values.get(key),
            found.values.get(key)
        ));
    }
    if expected.resources != found.resources {
        lines.push(format!(
            "resources: saved {:?}, loaded {:?}",
            expected.resources, found.resources
        ));
    }
    panic!(
        "{what}: the loaded world does not hold the saved values:\n{}",
        lines.join("\n")
    );
}

/// `blob` in canonical form; `saved_id` gives the saved id a blob id stands for.
fn canonical(blob: &[u8], saved_id: &dyn Fn(Entity) -> Entity) -> Canonical {
    let table = snapshot::inspect(blob).expect("a capture's blob reads back");
    let ids: Vec<Entity> = (table.entity_ids.iter())
        .map(|bits| Entity::try_from_bits(bits).expect("the entity table holds entity ids"))
        .collect();
    let keys: HashMap<u64, &str> = table.keys.iter().map(|k| (k.entity_id, k.key)).collect();
    let in_table: HashMap<u64, Entity> = ids.iter().map(|e| (e.to_bits(), *e)).collect();
    let name = |bits: u64| match (in_table.get(&bits), keys.get(&bits)) {
        (Some(entity), _) => format!("E{}", saved_id(*entity)),
        (None, Some(key)) => format!("K{key}"),
        (None, None) => "outside".to_owned(),
    };
    let mut form = Canonical {
        entities: ids.iter().map(|e| name(e.to_bits())).collect(),
        values: BTreeMap::new(),
        resources: BTreeMap::new(),
    };
    for column in &table.columns {
        let layout = (column.layout.as_ref())
            .and_then(|layout| layout.decode().ok())
            .unwrap_or_else(|| {
                panic!("{}: the capture wrote no readable layout", column.type_path)
            });
        for row in column.rows {
            let value = stored::read(&layout, row.value).unwrap_or_else(|e| {
                panic!("{}: a value does not read back: {e}", column.type_path)
            });
            let value = render(&value, &name);
            match (column.kind, row.entity_index) {
                (ColumnKind::Component, Some(index)) => {
                    let entity = name(ids[index as usize].to_bits());
                    form.values
                        .insert((entity, column.type_path.to_owned()), value);
                }
                _ => drop(form.resources.insert(column.type_path.to_owned(), value)),
            }
        }
    }
    form
}

/// A stored value as text, entity references named by `name`, maps and sets sorted.
fn render(value: &StoredValue, name: &dyn Fn(u64) -> String) -> String {
    let all =
        |items: &[StoredValue]| -> Vec<String> { items.iter().map(|v| render(v, name)).collect() };
    let named = |fields: &[(String, StoredValue)]| -> Vec<String> {
        (fields.iter())
            .map(|(n, v)| format!("{n}: {}", render(v, name)))
            .collect()
    };
    match value {
        StoredValue::Entity(bits) => name(*bits),
        StoredValue::Struct { fields, .. } => format!("{{{}}}", named(fields).join(", ")),
        StoredValue::TupleStruct { fields, .. } | StoredValue::Tuple(fields) => {
            format!("[{}]", all(fields).join(", "))
        }
        StoredValue::List(items) | StoredValue::Array(items) => {
            format!("[{}]", all(items).join(", "))
        }
        StoredValue::Set(items) => {
            let mut items = all(items);
            items.sort();
            format!("set{items:?}")
        }
        StoredValue::Map(entries) => {
            let mut entries: Vec<String> = (entries.iter())
                .map(|(k, v)| format!("{}: {}", render(k, name), render(v, name)))
                .collect();
            entries.sort();
            format!("map{entries:?}")
        }
        StoredValue::Enum {
            variant, fields, ..
        } => match fields {
            StoredFields::Unit => variant.clone(),
            StoredFields::Tuple(items) => format!("{variant}({})", all(items).join(", ")),
            StoredFields::Struct(fields) => format!("{variant}{{{}}}", named(fields).join(", ")),
        },
        other => format!("{other:?}"),
    }
}
