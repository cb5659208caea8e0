//! The integer encodings of the blob layout and of postcard values, written once: LEB128
//! varints (seven bits per byte, low bits first, the top bit set on every byte but the last)
//! and zigzag for signed numbers (0, -1, 1, -2 … as 0, 1, 2, 3 …), and `BlobReader`, which
//! reads a blob's fields with them. Below both [`blob`](crate::blob) and
//! [`schema`](crate::schema), so neither imports the other's reader.

mod reader;
mod varint;

pub(crate) use reader::BlobReader;
pub use varint::*;
