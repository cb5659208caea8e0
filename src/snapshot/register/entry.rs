//! A registered type's entry: what capture, decode and apply need to do with a type they only
//! know by its registry entry (walk its column, build and decode its values, convert them from
//! an older layout, map their entities, insert them), monomorphised once at registration, the
//! way `ReflectComponent` is a table of function pointers built once.

use super::walk::{RefreshFn, refresh_fn};
use crate::snapshot::blob::ColumnKind;
use crate::snapshot::value::{TypeOps, ValueEncoding};
use bevy::ecs::component::{ComponentId, ComponentMutability};
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, TypePath, TypeRegistry};
use std::any::TypeId;
use std::sync::{Arc, OnceLock};

/// Converts a value of a legacy type into the next layout of its type.
pub(crate) type ConvertFn = fn(Box<dyn Reflect>) -> Option<Box<dyn Reflect>>;

/// Decodes an older schema version of a type as the type it had then (`Old`) and converts it
/// with `From` into the next layout (`Next`): today's type, or the `Old` of a later version's
/// decoder, so a chain `V1 → V2 → V3 → today` needs one conversion per step.
#[derive(Clone, Copy)]
pub(crate) struct LegacyDecoder {
    pub(crate) version: u32,
    pub(crate) ops: TypeOps,
    pub(crate) convert: ConvertFn,
    /// The type `convert` makes, and its name for messages.
    pub(crate) next: (TypeId, &'static str),
}

impl LegacyDecoder {
    /// Decodes values stored at schema `version` as `Old` and converts them with `From`.
    pub(crate) fn of<Old, Next>(version: u32) -> Self
    where
        Old: Reflect + FromReflect + TypePath,
        Next: Reflect + From<Old>,
    {
        LegacyDecoder {
            version,
            ops: TypeOps::of::<Old>(),
            convert: |old| {
                old.take::<Old>()
                    .ok()
                    .map(|old| Box::new(Next::from(old)) as Box<dyn Reflect>)
            },
            next: (TypeId::of::<Next>(), std::any::type_name::<Next>()),
        }
    }
}

/// What a load does with a saved `State<S>`, monomorphised for `S` at registration.
#[derive(Clone, Copy)]
pub(crate) struct StateOps {
    /// Asks for the saved state through `NextState<S>`. The slice holds the resources the load
    /// changes that, read by an `OnEnter` system of the saved state, make the load enter the
    /// state again when the game is already in it (empty: never).
    pub(crate) enter: fn(&mut World, Box<dyn Reflect>, &[ComponentId]) -> Entering,
    /// Drops a change of `S` that is pending in `NextState<S>` (asked for by the game's
    /// transition systems while the load entered its states), and returns it for the log.
    pub(crate) drop_pending: fn(&mut World) -> Option<String>,
}

/// What [`StateOps::enter`] asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entering {
    /// Nothing to run: the game is in the saved state (or has no `NextState<S>`, warned about).
    Stays,
    /// The saved state differs from the game's: `NextState::set_if_different`.
    Changes,
    /// The game is in the saved state, and this `OnEnter` system reads a resource the load
    /// changes: `NextState::set`, which runs `OnExit` and `OnEnter` again.
    Reenters { reader: String },
}

impl Entering {
    /// Whether the `StateTransition` schedule has something to run.
    pub(crate) fn runs_a_transition(&self) -> bool {
        !matches!(self, Entering::Stays)
    }
}

/// One registered saveable type.
#[derive(Clone)]
pub(crate) struct SaveableEntry {
    pub(crate) ops: TypeOps,
    pub(crate) kind: ColumnKind,
    pub(crate) version: u32,
    pub(crate) legacy: Vec<LegacyDecoder>,
    /// The capture of the type's column (see [`CaptureCache`](crate::snapshot::CaptureCache)).
    pub(crate) refresh: RefreshFn,
    pub(crate) map_entities: fn(&mut dyn Reflect, &mut dyn EntityMapper),
    pub(crate) component_id: fn(&mut World) -> ComponentId,
    pub(crate) insert: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    /// Writes a value over the entity's own: assigned in place for a mutable component (only
    /// `Changed<T>` sees it: no hook or observer runs), inserted again for an immutable one
    /// (relationships such as `ChildOf`, whose hooks keep the other side right: their
    /// `Insert` and `Replace` hooks and observers run). Inserted when the entity lacks it.
    pub(crate) write: fn(&mut EntityWorldMut, Box<dyn Reflect>),
    /// The entity's value, if it has one.
    pub(crate) get: for<'a> fn(&'a EntityRef<'a>) -> Option<&'a dyn Reflect>,
    pub(crate) insert_resource: fn(&mut World, Box<dyn Reflect>),
    /// Set for a `States` type's `State<S>` (`register_saveable_state`): a load goes to the
    /// saved state through these before anything else is applied (`snapshot::load::states`).
    pub(crate) state: Option<StateOps>,
    /// The type's layout, encoded on first use and shared by the registry's clones: every save
    /// writes it and every load compares it, and describing a type walks its whole `TypeInfo`.
    /// Types are registered at startup, before the first save or load builds it.
    layout: Arc<OnceLock<Arc<[u8]>>>,
}

impl SaveableEntry {
    /// The entry for `T` stored as `kind`, its values encoded (and decoded) with `E`, at schema
    /// version 1.
    pub(crate) fn new<T, E>(kind: ColumnKind) -> Self
    where
        T: Component + Reflect + FromReflect + TypePath,
        E: ValueEncoding<T>,
    {
        SaveableEntry {
            ops: TypeOps {
                decode_serde: E::DECODE,
                ..TypeOps::of::<T>()
            },
            kind,
            version: 1,
            legacy: Vec::new(),
            refresh: refresh_fn::<T, E>(kind),
            map_entities: |value, mut mapper| {
                if let Some(value) = value.downcast_mut::<T>() {
                    T::map_entities(value, &mut mapper);
                }
            },
            component_id: |world| world.register_component::<T>(),
            insert: |entity, value| {
                if let Ok(value) = value.take::<T>() {
                    entity.insert(value);
                }
            },
            write: write::<T>,
            get: |entity| entity.get::<T>().map(|value| value as &dyn Reflect),
            insert_resource: |world, value| {
                let Ok(value) = value.take::<T>() else { return };
                let id = world.register_component::<T>();
                match world.resource_entities().get(id) {
                    Some(entity) => {
                        world.entity_mut(entity).insert(value);
                    }
                    None => {
                        world.spawn(value);
                    }
                }
            },
            state: None,
            layout: Arc::default(),
        }
    }

    /// The type's layout as a save writes it (see [`layout`](Self::layout)).
    pub(crate) fn layout_bytes(&self, types: &TypeRegistry) -> Arc<[u8]> {
        let bytes = self
            .layout
            .get_or_init(|| self.ops.layout(types).to_bytes().into());
        bytes.clone()
    }
}

/// [`SaveableEntry::write`] for `T`.
fn write<T: Component>(entity: &mut EntityWorldMut, value: Box<dyn Reflect>) {
    let Ok(value) = value.take::<T>() else { return };
    if <T::Mutability as ComponentMutability>::MUTABLE {
        // SAFETY: `T`'s mutability says it is mutable (checked just above).
        if let Some(mut slot) = unsafe { entity.get_mut_assume_mutable::<T>() } {
            *slot = value;
            return;
        }
    }
    entity.insert(value);
}

impl SaveableEntry {
    /// The decoder of values stored at schema `version` and the conversions that bring them to
    /// today's type, in order: the version's own, then, while its result is not today's type,
    /// the one of the later version whose `Old` type that result is. `None` when no decoder
    /// has that version; `Err` names the type a chain stopped at (no later version starts
    /// from it).
    pub(crate) fn migration_path(
        &self,
        version: u32,
    ) -> Option<Result<(TypeOps, Vec<ConvertFn>), &'static str>> {
        let first = self.legacy.iter().find(|l| l.version == version)?;
        let mut steps = vec![first.convert];
        let (mut at, mut next) = (version, first.next);
        // Each step is of a later version than the last, so a chain always ends.
        while next.0 != self.ops.type_id {
            let later = |l: &&LegacyDecoder| l.version > at && l.ops.type_id == next.0;
            let Some(step) = self.legacy.iter().find(later) else {
                return Some(Err(next.1));
            };
            steps.push(step.convert);
            (at, next) = (step.version, step.next);
        }
        Some(Ok((first.ops, steps)))
    }
}
