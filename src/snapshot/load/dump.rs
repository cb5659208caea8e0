//! `ecs_blob` → RON text, through the game's registered types, for bug reports and support.
//!
//! The text has three parts, in the shape of a Bevy scene:
//!
//! ```text
//! (
//!     resources: { "<type path>": <value>, … },
//!     entities: { <entity index>: { "<type path>": <value>, … }, … },
//!     unregistered: { "<stored type path>": <number of values>, … },
//! )
//! ```
//!
//! Values older than their type's current schema version are shown after their migration, under
//! the current type path, as a load would see them. Entity references inside values are the
//! saving world's ids (`Entity::to_bits`); entity indices are positions in the snapshot's entity
//! table.

use super::column::{ColumnDecoder, WITH_PLANS, registered, value_error};
use crate::snapshot::blob::{BlobCursor, StoredLevelKey};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::register::SaveRegistry;
use crate::snapshot::value::assets::{CaptureAssets, HandleLoader, RuntimeAssetHandles};
use bevy::asset::AssetServer;
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::{Reflect, TypeRegistry};
use std::fmt::Write;

/// Decodes every value of a blob with the registered types and writes them as RON text.
///
/// The blob's structure is checked as by [`inspect`](crate::snapshot::inspect()); a value that does
/// not decode is an error naming its type and entity index. Types the registry does not know are
/// listed under `unregistered` with their number of values.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::snapshot::{self, Saveable, SaveableAppExt};
///
/// #[derive(Component, Reflect, Default)]
/// struct Health(f32);
///
/// let mut app = App::new();
/// app.register_saveable::<Health>();
/// app.world_mut().spawn((Saveable, Health(7.0)));
/// let captured = snapshot::capture(app.world_mut())?;
///
/// let registry = app.world().resource::<snapshot::SaveRegistry>();
/// let types = app.world().resource::<AppTypeRegistry>().read();
/// let text = snapshot::dump(&captured.blob, registry, &types)?;
/// assert!(text.contains("Health\": (7.0)"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dump(
    blob: &[u8],
    registry: &SaveRegistry,
    types: &TypeRegistry,
) -> Result<String, SnapshotError> {
    dump_with_assets(blob, registry, types, None)
}

/// [`dump`], with asset handles shown by their saved path: without an `AssetServer` to make
/// handles from, they show as the default handle. Handles are made, never waited for.
pub fn dump_with_assets(
    blob: &[u8],
    registry: &SaveRegistry,
    types: &TypeRegistry,
    assets: Option<&AssetServer>,
) -> Result<String, SnapshotError> {
    let (mut cursor, table) = BlobCursor::open(blob)?;
    let mut document = Document {
        resources: Vec::new(),
        entities: vec![Vec::new(); table.ids.len()],
        keys: table.keys.clone(),
        unregistered: Vec::new(),
    };
    let loader = HandleLoader::new(assets);
    while let Some(header) = cursor.next_column()? {
        let Some((_, entry)) = registered(registry, &header) else {
            document.unregistered.push((header.type_path, header.rows));
            continue;
        };
        let decoder = ColumnDecoder::new(entry, &header, &cursor, types, &loader, WITH_PLANS)?;
        while let Some(row) = cursor.next_row()? {
            let fail = |reason| value_error(header.type_path, row.entity_index, reason);
            let value = decoder.read(row.value).map_err(fail)?;
            let text = to_ron(value.as_ref(), types).map_err(fail)?;
            match row.entity_index {
                Some(index) => document.entities[index as usize].push((entry.ops.type_path, text)),
                None => document.resources.push((entry.ops.type_path, text)),
            }
        }
    }
    Ok(document.write())
}

/// The values of a dump, by owner, and the stored types not registered.
struct Document<'a> {
    resources: Vec<(&'static str, String)>,
    entities: Vec<Vec<(&'static str, String)>>,
    keys: Vec<StoredLevelKey<'a>>,
    unregistered: Vec<(&'a str, usize)>,
}

/// One value as pretty RON (4-space indents, as Bevy scenes).
fn to_ron(value: &dyn Reflect, types: &TypeRegistry) -> Result<String, String> {
    // Entities as their ids and handles by reference, as they are saved.
    let assets = CaptureAssets::new(RuntimeAssetHandles::Silent, Vec::new());
    let processor = assets.processor(true);
    let serializer =
        TypedReflectSerializer::with_processor(value.as_partial_reflect(), types, &processor);
    let config = ron::ser::PrettyConfig::new().indentor("    ");
    ron::ser::to_string_pretty(&serializer, config).map_err(|error| error.to_string())
}

impl Document<'_> {
    /// The document as RON text (see the module docs).
    fn write(&self) -> String {
        let mut out = String::from("(\n    resources: {\n");
        write_values(&mut out, &self.resources, 2);
        out.push_str("    },\n    entities: {\n");
        for (index, values) in self.entities.iter().enumerate() {
            let _ = writeln!(out, "        {index}: {{");
            write_values(&mut out, values, 3);
            out.push_str("        },\n");
        }
        out.push_str("    },\n");
        if !self.keys.is_empty() {
            // References into the level: the ids values hold, and the keys they load by.
            out.push_str("    keys: {\n");
            for key in &self.keys {
                let _ = writeln!(out, "        {}: {},", key.entity_id, quoted(key.key));
            }
            out.push_str("    },\n");
        }
        out.push_str("    unregistered: {\n");
        for (type_path, count) in &self.unregistered {
            let _ = writeln!(out, "        {}: {count},", quoted(type_path));
        }
        out.push_str("    },\n)\n");
        out
    }
}

/// `"path": value,` lines at `depth` indents, the value's own lines indented to match.
fn write_values(out: &mut String, values: &[(&'static str, String)], depth: usize) {
    let indent = "    ".repeat(depth);
    for (type_path, text) in values {
        let text = text.replace('\n', &format!("\n{indent}"));
        let _ = writeln!(out, "{indent}{}: {text},", quoted(type_path));
    }
}

/// A RON string literal (type paths are Rust paths, but a forged blob may hold anything).
fn quoted(text: &str) -> String {
    format!("{text:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Saveable, SaveableAppExt, capture};
    use bevy::prelude::*;

    #[derive(Component, Reflect, Default)]
    struct Health(f32);

    #[derive(Component, Reflect, Default)]
    struct Target(Option<Entity>);

    #[derive(Resource, Reflect, Default)]
    struct Score(u32);

    #[test]
    fn dumps_resources_entities_and_unregistered_types_as_ron() {
        let mut saving = App::new();
        saving
            .register_saveable::<Health>()
            .register_saveable::<Target>()
            .register_saveable::<Score>()
            .insert_resource(Score(42));
        let first = saving.world_mut().spawn((Saveable, Health(1.5))).id();
        saving
            .world_mut()
            .spawn((Saveable, Health(2.0), Target(Some(first))));
        let blob = capture(saving.world()).unwrap().blob;

        // The reading build no longer saves `Target`.
        let mut reading = App::new();
        reading
            .register_saveable::<Health>()
            .register_saveable::<Score>();
        let registry = reading.world().resource::<SaveRegistry>();
        let types = reading.world().resource::<AppTypeRegistry>().read();
        let text = dump(&blob, registry, &types).unwrap();

        let health = Health::type_path();
        let score = Score::type_path();
        let target = Target::type_path();
        assert!(text.contains(&format!("\"{score}\": (42),")), "{text}");
        assert!(text.contains(&format!("\"{health}\": (1.5),")), "{text}");
        assert!(text.contains(&format!("\"{health}\": (2.0),")), "{text}");
        assert!(text.contains(&format!("\"{target}\": 1,")), "{text}");
        // Valid RON as a whole.
        let parsed: ron::Value = ron::from_str(&text).unwrap();
        let ron::Value::Map(document) = parsed else {
            panic!("{text}");
        };
        assert_eq!(document.len(), 3, "{text}");

        // A value that does not decode names its type and entity.
        let mut broken = App::new();
        broken.register_saveable::<Score>();
        let mut blob = blob;
        let table = crate::snapshot::inspect(&blob).unwrap();
        let column = table
            .columns
            .iter()
            .position(|c| c.type_path == score)
            .unwrap();
        let value = table.columns[column].rows.first().unwrap().value;
        let at = value.as_ptr() as usize - blob.as_ptr() as usize;
        blob[at] = 0xFF; // a varint that never ends within the value
        let registry = broken.world().resource::<SaveRegistry>();
        let types = broken.world().resource::<AppTypeRegistry>().read();
        let error = dump(&blob, registry, &types).unwrap_err();
        assert!(
            matches!(&error, SnapshotError::Value { type_path, entity_index: None, .. } if type_path == score),
            "{error}"
        );
    }
}
