//! Values read by a stored layout, without the game's types: what `keepsake dump` prints, and
//! how a load skips a field the type no longer has.

use super::TypeLayout;

/// Placeholder until the stored-value reader lands: reads one value by `layout` from the
/// front of `bytes`, returning the bytes used.
pub fn read_prefix(_layout: &TypeLayout, _bytes: &[u8]) -> Result<((), usize), String> {
    Err("skipping a removed field is not supported yet".to_owned())
}
