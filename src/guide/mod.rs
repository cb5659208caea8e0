// The guide on docs.rs, as clap's `_tutorial` does it: each chapter is an empty module whose
// documentation is a Markdown file beside this one, so its code blocks run as doctests.
#![doc = include_str!("index.md")]

#[doc = include_str!("first_save.md")]
pub mod first_save {}

#[doc = include_str!("what_gets_saved.md")]
pub mod what_gets_saved {}

#[doc = include_str!("after_load.md")]
pub mod after_load {}

#[doc = include_str!("types_change.md")]
pub mod types_change {}

#[doc = include_str!("compatibility_guard.md")]
pub mod compatibility_guard {}

#[doc = include_str!("handles_and_levels.md")]
pub mod handles_and_levels {}

#[doc = include_str!("exit_saves.md")]
pub mod exit_saves {}

#[cfg(feature = "save_menu")]
#[cfg_attr(docsrs, doc(cfg(feature = "save_menu")))]
#[doc = include_str!("save_menu.md")]
pub mod save_menu {}

#[doc = include_str!("rewind.md")]
pub mod rewind {}

#[cfg(feature = "cloud")]
#[cfg_attr(docsrs, doc(cfg(feature = "cloud")))]
#[doc = include_str!("cloud.md")]
pub mod cloud {}

#[doc = include_str!("sealing.md")]
pub mod sealing {}

#[doc = include_str!("cli.md")]
pub mod cli {}

#[doc = include_str!("performance.md")]
pub mod performance {}

#[doc = include_str!("guarantees.md")]
pub mod guarantees {}

#[doc = include_str!("glossary.md")]
pub mod glossary {}
