//! Type layouts, from the engine-free [`keepsake_core::schema`]; the save schema file is
//! [`keepsake_core::compat::file`], here at its old path too.

#[doc(inline)]
pub use keepsake_core::compat::file;
#[doc(inline)]
pub use keepsake_core::schema::*;
