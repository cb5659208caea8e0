//! `SaveMeta`: what a menu shows about a save, readable without touching the payload.

use crate::slot::SlotId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use uuid::Uuid;

/// A point in time, stored as milliseconds since the Unix epoch in UTC.
///
/// ```
/// use bevy_keepsake::format::Timestamp;
///
/// let t = Timestamp::from_unix_millis(1_700_000_000_000);
/// assert_eq!(t.unix_millis(), 1_700_000_000_000);
/// assert!(Timestamp::now() > t);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The current wall-clock time.
    pub fn now() -> Self {
        Self::from(SystemTime::now())
    }

    /// A timestamp from milliseconds since 1970-01-01T00:00:00Z.
    pub const fn from_unix_millis(millis: i64) -> Self {
        Timestamp(millis)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub const fn unix_millis(self) -> i64 {
        self.0
    }
}

impl From<SystemTime> for Timestamp {
    fn from(time: SystemTime) -> Self {
        let millis = match time.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis())
                .map(|m| -m)
                .unwrap_or(i64::MIN),
        };
        Timestamp(millis)
    }
}

/// The [`SaveMeta::extras`] key holding the name of the device that made the save (e.g.
/// `steamdeck`), shown by the save menu's rows and `keepsake list`. A well-known key
/// rather than a field, so the format (and every golden file) stays at version 1.
pub const DEVICE_NAME_KEY: &str = "keepsake.device";

/// The [`SaveMeta::extras`] key holding the random id of the installation that made the save;
/// cloud sync uses it to tell its own saves from other devices' ones.
pub const DEVICE_ID_KEY: &str = "keepsake.device_id";

/// Everything a save menu needs to show about a save, stored uncompressed after the header so a
/// listing reads only this.
///
/// The thumbnail is not part of the encoded metadata section: it has a section of its own, so a
/// listing skips it and a menu loads it only when it draws the slot.
///
/// ```
/// use bevy_keepsake::{SlotId, format::SaveMeta};
///
/// let meta = SaveMeta::new(SlotId::Manual(0)).with_title("Harbour, level 3");
/// assert_eq!(meta.title, "Harbour, level 3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveMeta {
    /// A fresh random (v4) id for every save.
    pub save_id: Uuid,
    /// The slot the save was written to.
    pub slot: SlotId,
    /// When the save was made (UTC).
    pub created_at: Timestamp,
    /// Total time played when the save was made.
    pub playtime: Duration,
    /// The game's tick counter when the save was made.
    pub game_tick: u64,
    /// Game-defined text shown in menus, e.g. the location and level.
    pub title: String,
    /// The game's version string, for diagnosing old saves.
    pub game_version: String,
    /// Free-form key/value pairs for the game (sorted, so encoding is deterministic).
    pub extras: BTreeMap<String, String>,
    /// An optional PNG thumbnail; stored in its own section of the file.
    #[serde(skip)]
    pub thumbnail: Option<Vec<u8>>,
}

impl SaveMeta {
    /// Metadata for a new save in `slot`, stamped with a new id and the current time.
    pub fn new(slot: SlotId) -> Self {
        SaveMeta {
            save_id: Uuid::new_v4(),
            slot,
            created_at: Timestamp::now(),
            playtime: Duration::ZERO,
            game_tick: 0,
            title: String::new(),
            game_version: String::new(),
            extras: BTreeMap::new(),
            thumbnail: None,
        }
    }

    /// Sets the title/location text.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The name of the device that made the save, when it recorded one ([`DEVICE_NAME_KEY`]).
    pub fn device_name(&self) -> Option<&str> {
        self.extras.get(DEVICE_NAME_KEY).map(String::as_str)
    }

    /// The id of the installation that made the save, when it recorded one ([`DEVICE_ID_KEY`]).
    pub fn device_id(&self) -> Option<&str> {
        self.extras.get(DEVICE_ID_KEY).map(String::as_str)
    }

    /// Records the device that makes the save.
    #[must_use]
    pub fn with_device(mut self, id: impl Into<String>, name: impl Into<String>) -> Self {
        self.extras.insert(DEVICE_ID_KEY.to_owned(), id.into());
        self.extras.insert(DEVICE_NAME_KEY.to_owned(), name.into());
        self
    }
}
