//! The schema's types: a [`SaveSchema`] of [`SchemaType`]s.

use crate::blob::ColumnKind;
use crate::schema::TypeLayout;

/// The format version [`SaveSchema::to_text`] writes and [`SaveSchema::parse`] reads.
pub const SCHEMA_FORMAT_VERSION: u32 = 1;

/// The first word of a schema file.
pub(super) const MAGIC: &str = "keepsake-schema";

/// The registered types of a game as its saves record them: one [`SchemaType`] per type,
/// sorted by type path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveSchema {
    pub(super) types: Vec<SchemaType>,
}

/// One registered type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaType {
    /// Its type path today.
    pub type_path: String,
    /// Component or resource.
    pub kind: ColumnKind,
    /// Its schema version today (1 + the migrations registered).
    pub version: u32,
    /// The older stored versions a migration chain converts to today's type, ascending.
    pub migrates_from: Vec<u32>,
    /// The old type paths whose stored values load as this type, sorted.
    pub renamed_from: Vec<String>,
    /// Its layout, as a save writes it today.
    pub layout: TypeLayout,
}

/// How a type's values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// By the type's own serde code: only the same layout reads them.
    Serde,
    /// Field by field through reflection: read by name when the type changed.
    Reflect,
}

impl Encoding {
    /// `"serde"` or `"reflect"`, as the schema file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Serde => "serde",
            Encoding::Reflect => "reflect",
        }
    }
}

impl SchemaType {
    /// How its values are written: a serde layout means its own serde code.
    pub fn encoding(&self) -> Encoding {
        match self.layout {
            TypeLayout::Serde { .. } => Encoding::Serde,
            _ => Encoding::Reflect,
        }
    }
}

/// Something a game's [`SaveSchema`] can be built from: `bevy_keepsake` implements it for
/// Bevy's `App` and `World` (its own marker type `M` is what lets it, as Bevy's `IntoSystem`
/// does with its markers), so `SaveSchema::of_app(&app)` reads as it always has.
pub trait SchemaSource<M> {
    /// The schema of the types this saves, with their layouts today.
    fn save_schema(&self) -> SaveSchema;
}

impl SaveSchema {
    /// The schema of the types `app` saves: `SaveSchema::of_app(&app).write_file("saves.schema")`
    /// (with `bevy_keepsake`, for a Bevy `App`).
    pub fn of_app<M>(app: &impl SchemaSource<M>) -> Self {
        app.save_schema()
    }

    /// The schema of the types `world` saves (with `bevy_keepsake`, for a Bevy `World`: its
    /// `SaveRegistry` and type registry); empty when nothing is registered.
    pub fn of_world<M>(world: &impl SchemaSource<M>) -> Self {
        world.save_schema()
    }

    /// A schema of `types`, sorted by type path (their lists of versions and old paths too).
    pub fn new(mut types: Vec<SchemaType>) -> Self {
        for ty in &mut types {
            ty.migrates_from.sort_unstable();
            ty.migrates_from.dedup();
            ty.renamed_from.sort();
            ty.renamed_from.dedup();
        }
        types.sort_by(|a, b| a.type_path.cmp(&b.type_path));
        SaveSchema { types }
    }

    /// The types, sorted by type path.
    pub fn types(&self) -> &[SchemaType] {
        &self.types
    }

    /// The type a stored column of `type_path` loads as: by its path or an old path it was
    /// renamed from.
    pub fn lookup(&self, type_path: &str) -> Option<&SchemaType> {
        let by_path = self
            .types
            .binary_search_by(|ty| ty.type_path.as_str().cmp(type_path))
            .ok()
            .map(|index| &self.types[index]);
        by_path.or_else(|| {
            self.types
                .iter()
                .find(|ty| ty.renamed_from.iter().any(|old| old == type_path))
        })
    }
}
