//! The menu's cloud badges, copied from cloud sync's [`CloudStatus`] (with the `cloud`
//! feature): the menu reads the sync's state, and the sync knows nothing of the menu.

use super::model::{SlotSyncBadges, SyncBadge};
use crate::cloud::{CloudStatus, SlotSync};
use bevy::prelude::*;

/// Copies each slot's sync state into the menu's badges.
pub(super) fn show_cloud_sync(status: Res<CloudStatus>, mut commands: Commands) {
    let badges = status.slots.iter().map(|(slot, sync)| (*slot, badge(sync)));
    commands.insert_resource(SlotSyncBadges(badges.collect()));
}

/// The badge a row shows for a slot's sync state.
fn badge(sync: &SlotSync) -> SyncBadge {
    match sync {
        SlotSync::Synced => SyncBadge::Synced,
        SlotSync::Uploading => SyncBadge::Uploading,
        SlotSync::Offline => SyncBadge::Offline,
        SlotSync::Conflict(conflict) => SyncBadge::Conflict {
            hidden_device: conflict.hidden_device.clone(),
        },
    }
}
