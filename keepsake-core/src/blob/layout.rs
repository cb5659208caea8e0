//! The layout's constants: its version, the column kinds, the blob's hash.

/// The snapshot layout version written by this build.
pub const BLOB_VERSION: u8 = 3;

/// The first layout version whose columns carry their type's layout.
pub(crate) const LAYOUTS_SINCE: u8 = 2;

/// The first layout version with the key table (references to unsaved keyed entities).
pub(crate) const KEYS_SINCE: u8 = 3;

/// Whether a type is saved per entity (a component) or once (a resource): the kind of every
/// registered type, and the column kind byte of the layout, which is the discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// One value per entity that has the component (kind byte `0`).
    Component = 0,
    /// A single resource value (kind byte `1`).
    Resource = 1,
}

impl ColumnKind {
    /// `"component"` or `"resource"`.
    pub fn name(self) -> &'static str {
        match self {
            ColumnKind::Component => "component",
            ColumnKind::Resource => "resource",
        }
    }

    /// The kind a column kind byte stands for, or `None` for a byte the layout does not define.
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(ColumnKind::Component),
            1 => Some(ColumnKind::Resource),
            _ => None,
        }
    }
}

/// The 64-bit hash stored as `WorldState::state_hash` (XXH3, stable across platforms and builds).
pub fn state_hash(blob: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(blob)
}
