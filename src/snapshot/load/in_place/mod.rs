//! Applying a snapshot in place: the saved entities still alive in this world are kept, and
//! only what differs is changed. The default of the plugin's in-session loads and rewinds.
//!
//! # What it does
//!
//! Each saved entity is matched with a live one ([`counterparts`](self::counterparts)): the
//! entity with the same id when the snapshot was captured from this world
//! ([`SavedIds::ThisWorld`]: a rewind point, a save this session wrote) and it is still alive
//! and saved, else the entity an earlier apply spawned for that saved id (the
//! [`EntityRecord`]). Then, for a kept entity, type by type:
//!
//! - a value whose stored bytes differ from the live value's bytes is written over it;
//! - a type it lacks is inserted, and a registered type its saved entity lacks is removed;
//!
//! a saved entity with no live counterpart is spawned, and a live saved entity (one the save
//! filter matches) that no saved entity is is despawned, with its children. References are
//! remapped: to the spawned entity for a saved entity spawned again, to the live entity with
//! the key for a [`LevelKey`](crate::snapshot::LevelKey); a value whose bytes did not change
//! but that names such an entity is written too. The saved children of each parent come
//! back in the saved order. Afterwards the world's saved state is the snapshot's, as after a
//! respawn ([`LoadMode::Respawn`](crate::snapshot::LoadMode::Respawn)): a capture of either
//! holds the same entities and values (the tests compare them, entity ids mapped), and the
//! kept entities keep their ids.
//!
//! One difference: a reference to a live entity the snapshot neither holds nor keys (the
//! camera, an unsaved UI entity, a parent that stopped being saved) still names it after an
//! in-place apply of a snapshot of this world, where a respawn sets it to
//! `Entity::PLACEHOLDER` and leaves a relationship to it out: in the same world the id still
//! means that entity, and a saved child of an unsaved live parent stays its child.
//!
//! # What hooks and observers see
//!
//! Only what changed: a value written over a mutable component is assigned in place, so
//! `Changed<T>` sees it and no hook or observer runs; `On<Add>` / `On<Insert>` run for the
//! components inserted and for spawned entities, `On<Remove>` / `On<Replace>` for those
//! removed and for despawned entities. An immutable component (relationships such as
//! `ChildOf`) cannot be assigned: a different value is inserted again, so its `On<Insert>` and
//! `On<Replace>` run (its hooks keep the other side, `Children`, right). Components that are
//! not saved stay on kept entities. Games that rely on every saved entity being spawned again
//! at a load (an `On<Add>` observer rebuilding state) keep the respawning mode.
//!
//! # Entry points
//!
//! - [`restore`]: back to a kept snapshot (a rewind point), comparing only the rows the
//!   history says changed since it, on the main thread;
//! - [`prepare`] (on the task pool) then [`apply_prepared`] (on the main thread): a decoded
//!   snapshot (a load) compared with a capture taken when the load started; at the apply only
//!   the types whose pieces changed since are compared again;
//! - [`apply_in_place`]: both in one go.
//!
//! Each takes a capture of the world taken just before, through the capture cache the world's
//! saves use, so the live values' bytes are the cache's: comparing costs a look at the rows
//! that changed, not an encoding of the world.
//!
//! # Speed
//!
//! A rewind to a recent point compares the rows the history's reverse deltas name (a 1 %
//! change touches a few rows of a few pieces per type), decodes only the values that differ,
//! and writes them: its cost follows what changed, not the world's size, and no entity moves
//! between tables. A load compares every saved row with the live one on the task pool; at the
//! apply, the main thread compares again the types the world changed meanwhile, then writes
//! what differs. Measured figures: `BENCHMARKS.md` (`benches/rewind.rs`,
//! `benches/frame_time.rs`).
//!
//! | file | role |
//! |------|------|
//! | `counterparts.rs` | which live entity each saved one is; the [`EntityRecord`] |
//! | `delta.rs` | what an apply changes, found before the world is touched |
//! | `kept.rs` | [`restore`]: the delta from a kept snapshot's reverse deltas |
//! | `decoded.rs` | [`prepare`], [`apply_prepared`], [`apply_in_place`]: the delta from a decoded snapshot |
//! | `refs.rs` | rows that did not change but name an entity that moved |
//! | `order.rs` | each parent's saved children back in the saved order |
//! | `source.rs` | where the apply takes saved values and the children's order from |
//! | `write.rs` | the delta applied to the world |

mod counterparts;
mod decoded;
mod delta;
mod kept;
mod order;
mod refs;
mod source;
mod write;

pub use counterparts::{EntityRecord, SavedIds};
pub use decoded::{PreparedLoad, apply_in_place, apply_prepared, prepare};
pub use kept::{restore, restore_within};
