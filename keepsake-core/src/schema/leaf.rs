//! The leaves of a layout: values written without looking at their structure.

/// A value written whole: a number, text, an entity id, a glam vector or quaternion. Its byte
/// in a stored layout is its position in this list ([`Leaf::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant is the Rust type it names
pub enum Leaf {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    F32,
    F64,
    Char,
    String,
    /// Written as its 64-bit id (`Entity::to_bits`), mapped on load.
    Entity,
    Vec2,
    Vec3,
    Vec3A,
    Vec4,
    Quat,
    IVec2,
    IVec3,
    IVec4,
    UVec2,
    UVec3,
    UVec4,
}

impl Leaf {
    /// Every leaf, in the order of their stored bytes.
    pub const ALL: [Leaf; 29] = [
        Leaf::Bool,
        Leaf::U8,
        Leaf::U16,
        Leaf::U32,
        Leaf::U64,
        Leaf::U128,
        Leaf::Usize,
        Leaf::I8,
        Leaf::I16,
        Leaf::I32,
        Leaf::I64,
        Leaf::I128,
        Leaf::Isize,
        Leaf::F32,
        Leaf::F64,
        Leaf::Char,
        Leaf::String,
        Leaf::Entity,
        Leaf::Vec2,
        Leaf::Vec3,
        Leaf::Vec3A,
        Leaf::Vec4,
        Leaf::Quat,
        Leaf::IVec2,
        Leaf::IVec3,
        Leaf::IVec4,
        Leaf::UVec2,
        Leaf::UVec3,
        Leaf::UVec4,
    ];

    /// The leaf a stored byte stands for.
    pub fn from_byte(byte: u8) -> Option<Leaf> {
        Leaf::ALL.get(usize::from(byte)).copied()
    }

    /// The leaf's stored byte.
    pub fn byte(self) -> u8 {
        self as u8
    }

    /// The Rust name of the leaf's type, as people read it (`u32`, `String`, `Vec3`).
    pub fn name(self) -> &'static str {
        match self {
            Leaf::Bool => "bool",
            Leaf::U8 => "u8",
            Leaf::U16 => "u16",
            Leaf::U32 => "u32",
            Leaf::U64 => "u64",
            Leaf::U128 => "u128",
            Leaf::Usize => "usize",
            Leaf::I8 => "i8",
            Leaf::I16 => "i16",
            Leaf::I32 => "i32",
            Leaf::I64 => "i64",
            Leaf::I128 => "i128",
            Leaf::Isize => "isize",
            Leaf::F32 => "f32",
            Leaf::F64 => "f64",
            Leaf::Char => "char",
            Leaf::String => "String",
            Leaf::Entity => "Entity",
            Leaf::Vec2 => "Vec2",
            Leaf::Vec3 => "Vec3",
            Leaf::Vec3A => "Vec3A",
            Leaf::Vec4 => "Vec4",
            Leaf::Quat => "Quat",
            Leaf::IVec2 => "IVec2",
            Leaf::IVec3 => "IVec3",
            Leaf::IVec4 => "IVec4",
            Leaf::UVec2 => "UVec2",
            Leaf::UVec3 => "UVec3",
            Leaf::UVec4 => "UVec4",
        }
    }

    /// The range of an integer leaf as `(signed, bits)`; `None` for the other leaves.
    /// `usize` and `isize` count as 64 bits (saves are written as if on a 64-bit target).
    pub fn integer(self) -> Option<(bool, u32)> {
        Some(match self {
            Leaf::U8 => (false, 8),
            Leaf::U16 => (false, 16),
            Leaf::U32 => (false, 32),
            Leaf::U64 | Leaf::Usize => (false, 64),
            Leaf::U128 => (false, 128),
            Leaf::I8 => (true, 8),
            Leaf::I16 => (true, 16),
            Leaf::I32 => (true, 32),
            Leaf::I64 | Leaf::Isize => (true, 64),
            Leaf::I128 => (true, 128),
            _ => return None,
        })
    }

    /// Whether every value of `self` is a value of `wider`, so a field stored as `self` can be
    /// read into a field that is now `wider`: integer widening that keeps the sign's range
    /// (`u8` → `u16`... → `u128`, `u32` → `i64`, `i8` → `i16`...) and `f32` → `f64`.
    pub fn widens_to(self, wider: Leaf) -> bool {
        if self == wider {
            return true;
        }
        if (self, wider) == (Leaf::F32, Leaf::F64) {
            return true;
        }
        match (self.integer(), wider.integer()) {
            (Some((false, from)), Some((false, to))) => from <= to,
            (Some((false, from)), Some((true, to))) => from < to,
            (Some((true, from)), Some((true, to))) => from <= to,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Leaf;

    #[test]
    fn every_leaf_byte_is_its_position() {
        for (index, leaf) in Leaf::ALL.iter().enumerate() {
            assert_eq!(usize::from(leaf.byte()), index);
            assert_eq!(Leaf::from_byte(leaf.byte()), Some(*leaf));
        }
        assert_eq!(Leaf::from_byte(Leaf::ALL.len() as u8), None);
    }

    #[test]
    fn widening_keeps_every_value() {
        assert!(Leaf::U8.widens_to(Leaf::U64));
        assert!(Leaf::U32.widens_to(Leaf::I64));
        assert!(Leaf::I16.widens_to(Leaf::I32));
        assert!(Leaf::F32.widens_to(Leaf::F64));
        assert!(!Leaf::U32.widens_to(Leaf::I32), "u32::MAX is not an i32");
        assert!(!Leaf::I8.widens_to(Leaf::U64), "-1 is not a u64");
        assert!(!Leaf::U64.widens_to(Leaf::U32));
        assert!(!Leaf::F64.widens_to(Leaf::F32));
        assert!(!Leaf::U32.widens_to(Leaf::F32));
    }
}
