//! The blob reader and the varint encodings the layout codec uses (the library's own files).

#[path = "../../../../../src/snapshot/blob/reader.rs"]
mod reader;

#[path = "../../../../../src/snapshot/blob/wire.rs"]
pub mod wire;

pub(crate) use reader::BlobReader;
