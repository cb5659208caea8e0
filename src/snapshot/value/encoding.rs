//! How a registered type's values are encoded, chosen at registration and fixed in the type:
//! through reflection, or with the type's own serde implementation. Each encoding brings its
//! decoder, so a type written one way is never read the other.

use super::assets::CaptureProblem;
use super::ops::DecodeFn;
use super::write::{ValueWriter, append_postcard};
use bevy::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How values of `T` are written, and the statically dispatched decoder that reads them back
/// (none for reflection, which the value reader chooses per type).
pub(crate) trait ValueEncoding<T> {
    /// The decoder paired with this encoding.
    const DECODE: Option<DecodeFn>;

    /// Appends the encoding of `value` to `out` (a row's value, without its length).
    fn encode(writer: &ValueWriter<'_>, value: &T, out: &mut Vec<u8>)
    -> Result<(), CaptureProblem>;
}

/// Through reflection (`ReflectSerialize` when registered, field by field otherwise).
pub(crate) struct ViaReflect;

impl<T: Reflect> ValueEncoding<T> for ViaReflect {
    const DECODE: Option<DecodeFn> = None;

    fn encode(
        writer: &ValueWriter<'_>,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        writer.write(value, out)
    }
}

/// With `T`'s own `Serialize` and `Deserialize`, statically dispatched (the same bytes as
/// `ReflectSerialize`).
pub(crate) struct ViaSerde;

impl<T: Serialize + DeserializeOwned + Reflect> ValueEncoding<T> for ViaSerde {
    const DECODE: Option<DecodeFn> = Some(decode_with_serde::<T>);

    fn encode(
        writer: &ValueWriter<'_>,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), CaptureProblem> {
        append_postcard(value, out)
            .map_err(|reason| CaptureProblem::whole(writer.type_path(), reason))
    }
}

/// Decodes a value with `T`'s own serde implementation (statically dispatched); it must use
/// every byte.
fn decode_with_serde<T: DeserializeOwned + Reflect>(
    bytes: &[u8],
) -> Result<Box<dyn Reflect>, String> {
    let (value, rest) = postcard::take_from_bytes::<T>(bytes).map_err(|error| error.to_string())?;
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the value", rest.len()));
    }
    Ok(Box::new(value))
}
