//! Inserting one entity's decoded components together, by component id, in one archetype
//! move instead of one per component. The only place values leave their boxes without a typed
//! insert, hence the unsafe code and its checks.

use bevy::ecs::component::ComponentId;
use bevy::ecs::world::EntityWorldMut;
use bevy::prelude::*;
use bevy::ptr::OwningPtr;
use std::alloc::Layout;
use std::ptr::NonNull;

/// The components of one entity, inserted together (one archetype move instead of one per
/// component).
#[derive(Default)]
pub(super) struct DynamicBundle {
    ids: Vec<ComponentId>,
    values: Vec<(*mut dyn Reflect, Layout)>,
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
        // and each value is moved out exactly once: its box is freed below without dropping it.
        unsafe { entity.insert_by_ids(&self.ids, pointers) };
        for (raw, layout) in self.values.drain(..) {
            if layout.size() != 0 {
                // SAFETY: allocated by `Box` with this layout; the value was moved out above.
                unsafe { std::alloc::dealloc(raw.cast::<u8>(), layout) };
            }
        }
        self.ids.clear();
    }
}
