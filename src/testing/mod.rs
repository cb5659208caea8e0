//! Helpers for tests of a game that saves with keepsake (feature `testing`, off by default;
//! this crate's own tests, examples and benchmarks turn it on).
//!
//! - [`run_until`] and [`update_until`]: run an app frame by frame until a message arrives or a
//!   condition holds, failing with a message that names what was awaited. The budget is counted
//!   in frames; only while the plugin's work runs in the background (a save's write, a load's
//!   read, a rewind being prepared, a cloud round) does a wait count real time, bounded by
//!   [`BACKGROUND_WAIT`].
//! - [`TestSaves`]: a temporary save root, removed when dropped.
//! - [`SavedValues`]: a capture's entities and values in a form that does not depend on entity
//!   ids, to check that a load or an in-place apply brought back the world that was saved.
//! - [`store::testing::Forward`](crate::store::testing::Forward): a filesystem forwarding every
//!   call to the real one but the calls a test replaces, to inject faults.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_keepsake::prelude::*;
//! use bevy_keepsake::testing::{TestSaves, run_until};
//!
//! #[derive(Component, Reflect)]
//! #[reflect(Component)]
//! struct Gold(u32);
//!
//! let saves = TestSaves::new();
//! let mut app = App::new();
//! app.add_plugins(MinimalPlugins)
//!     .add_plugins(KeepsakePlugins::new("my-game").save_root(saves.root()))
//!     .register_saveable::<Gold>();
//! app.world_mut().spawn((Saveable, Gold(12)));
//! app.world_mut().write_message(SaveRequest::slot(SlotId::Manual(0)));
//! let saved: SaveCompleted = run_until(&mut app, 10);
//! assert_eq!(saved.slot, SlotId::Manual(0));
//! ```

mod run;
mod saves;
mod values;

pub use run::{BACKGROUND_WAIT, run_until, update_until};
pub use saves::TestSaves;
pub use values::SavedValues;
