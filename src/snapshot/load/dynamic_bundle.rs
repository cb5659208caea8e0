//! Inserting one entity's decoded components together, by component id, in one archetype
//! move instead of one per component. The only place values leave their boxes without a typed
//! insert, hence the unsafe code and its checks.
//!
//! The emptied boxes are freed together when the bundle is dropped, on the async compute pool
//! when the app has one: a load at start spawns a million values at 100k entities, and their
//! boxes' frees were a tenth of its main thread's part.

use bevy::ecs::component::ComponentId;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::ptr::OwningPtr;
use bevy::tasks::AsyncComputeTaskPool;
use std::alloc::Layout;
use std::ptr::NonNull;

/// The components of one entity, inserted together (one archetype move instead of one per
/// component).
#[derive(Default)]
pub(super) struct DynamicBundle {
    ids: Vec<ComponentId>,
    values: Vec<(*mut dyn Reflect, Layout)>,
    /// Boxes whose values were moved into the world, to free.
    emptied: Emptied,
}

/// Allocations whose values were moved out, freed together.
#[derive(Default)]
struct Emptied(Vec<(NonNull<u8>, Layout)>);

// SAFETY: the allocations belong to this list alone (their values were moved into the world),
// and the global allocator frees memory from any thread.
unsafe impl Send for Emptied {}

impl Emptied {
    fn free(self) {
        for (pointer, layout) in self.0 {
            // SAFETY: allocated by `Box` with this layout, not freed before, value moved out.
            unsafe { std::alloc::dealloc(pointer.as_ptr(), layout) };
        }
    }
}

/// Boxes freed off the main thread beyond this many (a task costs more than a few frees).
const FREE_ON_POOL: usize = 256;

impl Drop for DynamicBundle {
    fn drop(&mut self) {
        for (raw, _) in self.values.drain(..) {
            // SAFETY: from `Box::into_raw` in `push`, not inserted (`insert_into` drains them).
            drop(unsafe { Box::from_raw(raw) });
        }
        let emptied = std::mem::take(&mut self.emptied);
        match AsyncComputeTaskPool::try_get() {
            Some(pool) if emptied.0.len() > FREE_ON_POOL => {
                pool.spawn(async move { emptied.free() }).detach();
            }
            _ => emptied.free(),
        }
    }
}

impl DynamicBundle {
    /// Adds a value whose concrete type is the component `id`'s type (checked by the caller).
    pub(super) fn push(&mut self, id: ComponentId, value: Box<dyn Reflect>) {
        let layout = Layout::for_value(&*value);
        self.ids.push(id);
        self.values.push((Box::into_raw(value), layout));
    }

    pub(super) fn insert_into(&mut self, entity: &mut EntityWorldMut) {
        if self.ids.is_empty() {
            return;
        }
        let pointers = self.values.iter().map(|&(raw, _)| {
            // SAFETY: `raw` comes from `Box::into_raw`, so it is non-null and aligned for its
            // type.
            unsafe { OwningPtr::new(NonNull::new_unchecked(raw.cast::<u8>())) }
        });
        // SAFETY: every id was registered in this world for the value's concrete type (`push`
        // callers check the type id), ids are unique per entity (`decode` refuses duplicates),
        // and each value is moved out exactly once: its box is freed later without dropping it.
        unsafe { entity.insert_by_ids(&self.ids, pointers) };
        for (raw, layout) in self.values.drain(..) {
            if layout.size() != 0 {
                // `raw` is non-null (from `Box::into_raw`); freed with the bundle.
                if let Some(pointer) = NonNull::new(raw.cast::<u8>()) {
                    self.emptied.0.push((pointer, layout));
                }
            }
        }
        self.ids.clear();
    }
}
