//! One module per subcommand; each returns the [`Outcome`](crate::output::Outcome) that becomes the
//! exit code.

pub mod compat;
pub mod diff;
pub mod dump;
pub mod inspect;
pub mod list;
pub mod thumbnail;
pub mod verify;
