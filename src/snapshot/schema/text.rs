//! Layouts as people read them.

use super::TypeLayout;

/// The layout's type on one line, as Rust spells it: `u32`, `Vec<String>`, `[f32; 4]`,
/// `(u8, bool)`, `HashMap<String, Entity>`, `Option<Vec2>`, `Handle<bevy_image::image::Image>`,
/// or the type path of a struct, enum or serde type.
pub fn short(layout: &TypeLayout) -> String {
    format!("{layout:?}")
}

/// The layout over several lines, Rust-like: a struct's fields and an enum's variants
/// indented under its path, nested types expanded.
pub fn pretty(layout: &TypeLayout) -> String {
    format!("{layout:#?}")
}
