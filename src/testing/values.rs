//! Whether two captures hold the same world: each in a form that does not depend on entity
//! ids.

use crate::snapshot::schema::stored::{self, StoredFields, StoredValue};
use crate::snapshot::{self, ColumnKind};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A capture's entities and values, each entity named by the saved id it stands for.
///
/// A load into a fresh world spawns new entities, and an in-place apply spawns some: the ids
/// differ from the saved ones, so two blobs cannot be compared byte for byte (nor by their state
/// hash, which covers entity ids). Here each value is read by its stored layout and written out
/// as text, with its entity references renamed the same way (a keyed level entity by its key,
/// an entity the blob neither holds nor keys as "outside"), maps and sets sorted (a map's
/// iteration order is not its value), and each saved parent's saved children in the blob's
/// order. A `ChildOf` pointing outside the save is left out, as a load leaves it out of the
/// world.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::prelude::*;
/// use bevy_keepsake::snapshot::{self, LoadMode, SaveRegistry};
/// use bevy_keepsake::testing::SavedValues;
///
/// #[derive(Component, Reflect)]
/// #[reflect(Component)]
/// struct Health(u32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// app.world_mut().spawn((Saveable, Health(7)));
/// let saved = snapshot::capture(app.world()).unwrap();
///
/// // Loaded into a fresh world: other entity ids, the same values.
/// let mut other = App::new();
/// other.register_saveable::<Health>();
/// other.world_mut().spawn_empty(); // so the ids differ
/// let registry = other.world().resource::<SaveRegistry>().clone();
/// let types = other.world().resource::<AppTypeRegistry>().clone();
/// let decoded =
///     snapshot::decode(&saved.blob, saved.state_hash, &registry, &types.read()).unwrap();
/// let report = snapshot::apply(other.world_mut(), decoded, LoadMode::Respawn);
/// let loaded = snapshot::capture(other.world()).unwrap();
///
/// SavedValues::of(&saved.blob)
///     .assert_same(&SavedValues::loaded(&loaded.blob, &report.entity_map), "the load");
/// ```
#[derive(Debug, PartialEq)]
pub struct SavedValues {
    entities: BTreeSet<String>,
    values: BTreeMap<(String, String), String>,
    resources: BTreeMap<String, String>,
    /// Each saved parent's saved children, in the blob's order; `None` when left out.
    children: Option<BTreeMap<String, Vec<String>>>,
}

impl SavedValues {
    /// The capture `blob` of the world that was saved: every entity stands for itself.
    ///
    /// # Panics
    ///
    /// When `blob` is not a capture this crate reads (it is meant for captures just taken).
    pub fn of(blob: &[u8]) -> Self {
        Self::read(blob, &|entity| entity)
    }

    /// The capture `blob` of a world a snapshot was loaded or applied into; `entity_map` is
    /// that load's map (saved id → the entity standing for it now), as
    /// [`ApplyReport::entity_map`](crate::snapshot::ApplyReport::entity_map) and Bevy's
    /// `DynamicWorld::write_to_world` give it. An entity not in the map stands for itself.
    ///
    /// # Panics
    ///
    /// As [`of`](Self::of).
    pub fn loaded(blob: &[u8], entity_map: &EntityHashMap<Entity>) -> Self {
        let saved_of: HashMap<Entity, Entity> = (entity_map.iter())
            .map(|(&saved, &loaded)| (loaded, saved))
            .collect();
        Self::read(blob, &|live| saved_of.get(&live).copied().unwrap_or(live))
    }

    /// The same, with the order of siblings left out of the comparison: for a load that does
    /// not keep it (Bevy's `DynamicWorld`).
    pub fn without_sibling_order(mut self) -> Self {
        self.children = None;
        self
    }

    /// Panics naming the first differences when `found` is not `self`; `what` says which two
    /// worlds were compared.
    #[track_caller]
    pub fn assert_same(&self, found: &Self, what: &str) {
        if self == found {
            return;
        }
        let mut lines = vec![format!(
            "{} entities expected, {} found; only expected {:?}, only found {:?}",
            self.entities.len(),
            found.entities.len(),
            first_only(&self.entities, &found.entities),
            first_only(&found.entities, &self.entities)
        )];
        lines.extend(differences(&self.values, &found.values, 8));
        if self.resources != found.resources {
            let (expected, found) = (&self.resources, &found.resources);
            lines.push(format!("resources: expected {expected:?}, found {found:?}"));
        }
        let no_children = BTreeMap::new();
        let children = |values: &Self| values.children.as_ref().unwrap_or(&no_children).clone();
        let (expected, got) = (children(self), children(found));
        let parents = differences(&expected, &got, 5);
        lines.extend(parents.map(|line| format!("children of {line}")));
        panic!("{what}: the worlds differ:\n{}", lines.join("\n"));
    }

    /// `blob` in this form; `saved_id` gives the saved id a blob id stands for.
    fn read(blob: &[u8], saved_id: &dyn Fn(Entity) -> Entity) -> Self {
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
        let mut form = Self {
            entities: ids.iter().map(|e| name(e.to_bits())).collect(),
            values: BTreeMap::new(),
            resources: BTreeMap::new(),
            children: None,
        };
        // Siblings in the entity table's order (a column's rows come table by table).
        let mut parents: Vec<(u32, String, String)> = Vec::new();
        for column in &table.columns {
            let layout = (column.layout.as_ref())
                .and_then(|layout| layout.decode().ok())
                .unwrap_or_else(|| {
                    panic!("{}: the capture has no readable layout", column.type_path)
                });
            for row in column.rows {
                let value = stored::read(&layout, row.value).unwrap_or_else(|e| {
                    panic!("{}: a value does not read back: {e}", column.type_path)
                });
                let value = render(&value, &name);
                let Some(index) = row
                    .entity_index
                    .filter(|_| column.kind == ColumnKind::Component)
                else {
                    form.resources.insert(column.type_path.to_owned(), value);
                    continue;
                };
                let entity = name(ids[index as usize].to_bits());
                if column.type_path.ends_with("ChildOf") {
                    if value == "[outside]" {
                        continue;
                    }
                    if value.starts_with("[E") {
                        let parent = value.trim_matches(|c| c == '[' || c == ']').to_owned();
                        parents.push((index, entity.clone(), parent));
                    }
                }
                form.values
                    .insert((entity, column.type_path.to_owned()), value);
            }
        }
        parents.sort();
        let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, child, parent) in parents {
            children.entry(parent).or_default().push(child);
        }
        form.children = Some(children);
        form
    }
}

/// Up to five of the entities `x` holds and `y` does not.
fn first_only(x: &BTreeSet<String>, y: &BTreeSet<String>) -> Vec<String> {
    x.difference(y).take(5).cloned().collect()
}

/// Up to `most` keys whose values differ, each with both values.
fn differences<'a, K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    expected: &'a BTreeMap<K, V>,
    found: &'a BTreeMap<K, V>,
    most: usize,
) -> impl Iterator<Item = String> + 'a {
    let keys: BTreeSet<&K> = expected.keys().chain(found.keys()).collect();
    (keys.into_iter())
        .filter(|k| expected.get(*k) != found.get(*k))
        .take(most)
        .map(|k| {
            let (e, f) = (expected.get(k), found.get(k));
            format!("{k:?}: expected {e:?}, found {f:?}")
        })
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
