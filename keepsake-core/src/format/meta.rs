//! `SaveMeta`: what a menu shows about a save, readable without touching the payload.

use super::versions::{MAX_VERSIONS, VERSION_MARK, Versions};
use crate::slot::SlotId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use uuid::Uuid;

/// A point in time, stored as milliseconds since the Unix epoch in UTC.
///
/// ```
/// use keepsake_core::format::Timestamp;
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
pub const DEVICE_NAME_EXTRA: &str = "keepsake.device";

/// The [`SaveMeta::extras`] key holding the random id of the installation that made the save;
/// cloud sync uses it to tell its own saves from other devices' ones.
pub const DEVICE_ID_EXTRA: &str = "keepsake.device_id";

/// The [`SaveMeta::extras`] key marking a crash save: one the plugin wrote from the state it
/// held in memory when the game panicked or was told to stop by a signal, rather than one the
/// player or a timer asked for. Its value is [`CrashCause::as_str`]; menus label such a save
/// ("saved when the game crashed"). A well-known key rather than a field, so the format stays
/// as it is.
pub const CRASH_EXTRA: &str = "keepsake.crash";

/// Why a crash save was written ([`CRASH_EXTRA`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrashCause {
    /// The game panicked (any thread; with `panic = "abort"` too).
    Panic,
    /// The game was told to stop by the system: SIGTERM (shutdown, a launcher closing it),
    /// SIGINT (Ctrl-C) or SIGHUP (its terminal closed).
    Signal,
}

impl CrashCause {
    /// The value stored under [`CRASH_EXTRA`].
    pub const fn as_str(self) -> &'static str {
        match self {
            CrashCause::Panic => "panic",
            CrashCause::Signal => "signal",
        }
    }

    /// What a save menu says about a save written for this cause.
    pub const fn label(self) -> &'static str {
        match self {
            CrashCause::Panic => "saved when the game crashed",
            CrashCause::Signal => "saved when the game was closed",
        }
    }

    /// The cause stored as `value`, if it is one this build knows.
    pub fn parse(value: &str) -> Option<Self> {
        [CrashCause::Panic, CrashCause::Signal]
            .into_iter()
            .find(|cause| cause.as_str() == value)
    }
}

/// The [`SaveMeta::extras`] key listing the saves a save was made in view of: the ones its
/// slot held on its device when it was made (its head, backups and any other device's save kept
/// beside them), then what the head itself was made in view of, as simple-hex save ids joined
/// by commas, at most [`MAX_FOLLOWS`]. The store writes it with every save
/// ([`SlotStore::save`](crate::store::SlotStore::save)); cloud sync orders saves of one slot from
/// different devices by it before it trusts their clocks ([`SaveMeta::lineage`]). After the ids
/// comes the save's version vector, when it names its device ([`Versions`]: entries marked
/// `@`, which reach back along the whole line). A well-known key rather than a field, so the
/// format stays as it is and older builds read it as an extra (and pass over the vector's
/// entries, which are not save ids).
pub const FOLLOWS_EXTRA: &str = "keepsake.follows";

/// The [`SaveMeta::extras`] key listing the saves whose files did not read in the save's slot
/// when it was made, though they had entered that slot on its device before (and what the
/// saves it was made in view of list so): simple-hex save ids joined by commas, the most
/// recent first, at most [`MAX_FOLLOWS`], then each of their lines with the highest count it
/// reached there (entries marked `@`, as a version vector's: [`SaveMeta::over_lines`]). Not a
/// claim of being made in view of them
/// (what they were made over could not be read, so [`SaveMeta::lineage`] does not use it),
/// but that the player saved over them: cloud sync placing one of them again (a repair from
/// the cloud) puts it below this save when the two were made apart, whatever their clocks say
/// (simulator seed 129: a clock hours behind let the repaired save head over the player's).
pub const OVER_UNREAD_EXTRA: &str = "keepsake.over_unread";

/// How many save ids [`FOLLOWS_EXTRA`] keeps: the slot's generations come first, so a chain of
/// saves is followed that far back by ids even with no backups. Further back, the saves'
/// version vectors ([`Versions`]) order them.
pub const MAX_FOLLOWS: usize = 16;

/// How two saves of one slot stand to each other by what their devices held when they were
/// made ([`SaveMeta::lineage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lineage {
    /// The first was made in view of the second: it supersedes it.
    Follows,
    /// The second was made in view of the first.
    Precedes,
    /// Each was made without the other in view: two devices saved the slot apart.
    Concurrent,
    /// One of them records nothing (a save from a build that did not write
    /// [`FOLLOWS_EXTRA`]) and neither names the other: only their clocks and upload times can
    /// tell.
    Unrecorded,
}

/// Everything a save menu needs to show about a save, stored uncompressed after the header so a
/// listing reads only this.
///
/// The thumbnail is not part of the encoded metadata section: it has a section of its own, so a
/// listing skips it and a menu loads it only when it draws the slot.
///
/// ```
/// use keepsake_core::{SlotId, format::SaveMeta};
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

    /// The name of the device that made the save, when it recorded one ([`DEVICE_NAME_EXTRA`]).
    pub fn device_name(&self) -> Option<&str> {
        self.extras.get(DEVICE_NAME_EXTRA).map(String::as_str)
    }

    /// Why the plugin wrote this save when the game crashed or was stopped ([`CRASH_EXTRA`]);
    /// `None` for every other save.
    pub fn crash(&self) -> Option<CrashCause> {
        self.extras
            .get(CRASH_EXTRA)
            .and_then(|value| CrashCause::parse(value))
    }

    /// Marks the save as a crash save written for `cause`.
    #[must_use]
    pub fn with_crash(mut self, cause: CrashCause) -> Self {
        self.extras
            .insert(CRASH_EXTRA.to_owned(), cause.as_str().to_owned());
        self
    }

    /// The id of the installation that made the save, when it recorded one ([`DEVICE_ID_EXTRA`]).
    pub fn device_id(&self) -> Option<&str> {
        self.extras.get(DEVICE_ID_EXTRA).map(String::as_str)
    }

    /// Records the device that makes the save.
    #[must_use]
    pub fn with_device(mut self, id: impl Into<String>, name: impl Into<String>) -> Self {
        self.extras.insert(DEVICE_ID_EXTRA.to_owned(), id.into());
        self.extras
            .insert(DEVICE_NAME_EXTRA.to_owned(), name.into());
        self
    }

    /// The saves this one was made in view of ([`FOLLOWS_EXTRA`]); `None` when it records none
    /// (an entry that is not a save id is passed over). Only the first [`MAX_FOLLOWS`] +
    /// [`MAX_VERSIONS`] entries are read, as many as the store writes: sync asks this of every
    /// save against every listed one, and a file's list could be as long as its metadata.
    pub fn follows(&self) -> Option<impl Iterator<Item = Uuid> + '_> {
        let listed = self.extras.get(FOLLOWS_EXTRA)?;
        let entries = listed.split(',').take(MAX_FOLLOWS + MAX_VERSIONS);
        let ids = entries.filter(|id| !id.is_empty() && !id.starts_with(VERSION_MARK));
        Some(
            ids.filter_map(|id| Uuid::try_parse(id).ok())
                .take(MAX_FOLLOWS),
        )
    }

    /// Records the saves this one is made in view of, the first [`MAX_FOLLOWS`] distinct ones
    /// (itself left out). An empty list is recorded too: it says the slot held nothing.
    #[must_use]
    pub fn with_follows(mut self, ids: impl IntoIterator<Item = Uuid>) -> Self {
        let listed = self.id_list(ids);
        self.extras.insert(FOLLOWS_EXTRA.to_owned(), listed);
        self
    }

    /// The first [`MAX_FOLLOWS`] distinct ids of `ids` other than this save's own, as an
    /// extra lists them: simple hex, joined by commas.
    fn id_list(&self, ids: impl IntoIterator<Item = Uuid>) -> String {
        let mut kept: Vec<Uuid> = Vec::new();
        for id in ids {
            if kept.len() == MAX_FOLLOWS {
                break;
            }
            if id != self.save_id && !kept.contains(&id) {
                kept.push(id);
            }
        }
        let listed: Vec<String> = kept.iter().map(|id| id.simple().to_string()).collect();
        listed.join(",")
    }

    /// Whether this save records being made in view of the save `id` in its list of ids
    /// ([`FOLLOWS_EXTRA`]). That list is bounded: a save further back on its line is found by
    /// [`lineage`](Self::lineage), which reads the version vectors too.
    pub fn made_in_view_of(&self, id: Uuid) -> bool {
        self.follows()
            .is_some_and(|mut ids| ids.any(|seen| seen == id))
    }

    /// Records the saves this one was made over while their files did not read
    /// ([`OVER_UNREAD_EXTRA`]): the first [`MAX_FOLLOWS`] distinct ids (give the most recent
    /// first), then how far each of their lines went (`lines`, see
    /// [`over_lines`](Self::over_lines)); nothing when there is neither.
    #[must_use]
    pub fn with_over_unread(
        mut self,
        ids: impl IntoIterator<Item = Uuid>,
        lines: Option<Versions>,
    ) -> Self {
        let mut listed = self.id_list(ids);
        if let Some(lines) = lines {
            let comma = if listed.is_empty() { "" } else { "," };
            let _ = write!(listed, "{comma}{lines}");
        }
        match listed.is_empty() {
            true => self.extras.remove(OVER_UNREAD_EXTRA),
            false => (self.extras).insert(OVER_UNREAD_EXTRA.to_owned(), listed),
        };
        self
    }

    /// How far each line went among the saves this one was made over while their files did
    /// not read (the `@` entries of [`OVER_UNREAD_EXTRA`], each line's highest count, as
    /// [`Versions::highest`] keeps them): the ids name at most [`MAX_FOLLOWS`] of those
    /// saves, the lines all of them (a device's long session lost to a damaged disk, seed
    /// 542991). `None` when the save records none.
    pub fn over_lines(&self) -> Option<Versions> {
        Versions::parse(self.extras.get(OVER_UNREAD_EXTRA)?)
    }

    /// Whether this save was made over `other` while `other`'s file did not read on this
    /// save's device: it names `other`'s id, or one of its lines went as far as `other`'s own
    /// count ([`over_lines`](Self::over_lines)). Either way `other` entered this save's slot
    /// there before this save was made.
    pub fn made_over_unread_save(&self, other: &SaveMeta) -> bool {
        self.made_over_unread(other.save_id)
            || (self.over_lines())
                .zip(other.versions())
                .is_some_and(|(over, theirs)| over.includes(&theirs))
    }

    /// The saves this one was made over while their files did not read
    /// ([`OVER_UNREAD_EXTRA`]): only the first [`MAX_FOLLOWS`] entries are read.
    pub fn over_unread(&self) -> impl Iterator<Item = Uuid> + '_ {
        let listed = self
            .extras
            .get(OVER_UNREAD_EXTRA)
            .map_or("", String::as_str);
        let entries = listed.split(',').take(MAX_FOLLOWS);
        entries.filter_map(|entry| Uuid::try_parse(entry).ok())
    }

    /// Whether this save was made over the save `id` while its file did not read
    /// ([`OVER_UNREAD_EXTRA`]).
    pub fn made_over_unread(&self, id: Uuid) -> bool {
        self.over_unread().any(|over| over == id)
    }

    /// The save's version vector (the `@` entries of [`FOLLOWS_EXTRA`]); `None` when it
    /// records none (cloud sync was off, a build before it, or entries that are not a vector).
    pub fn versions(&self) -> Option<Versions> {
        Versions::parse(self.extras.get(FOLLOWS_EXTRA)?)
    }

    /// Records the save's version vector after the ids of [`FOLLOWS_EXTRA`] (creating the key
    /// if the save has none): counted on the line of its device
    /// ([`DEVICE_ID_EXTRA`]) in `epoch`, made in view of the saves `held`, its slot's head first
    /// (see [`Versions`]). A save that names no device (or one whose id cannot name a line),
    /// and one whose count cannot grow, records none, and any vector the metadata carried is
    /// removed: a vector is only ever the store's own account.
    #[must_use]
    pub fn with_versions<'a>(
        mut self,
        epoch: &str,
        held: impl IntoIterator<Item = &'a SaveMeta>,
    ) -> Self {
        let line = self.device_id().and_then(|id| Versions::line_of(id, epoch));
        let held: Vec<Versions> = held.into_iter().filter_map(SaveMeta::versions).collect();
        let versions = line.and_then(|line| Versions::next(&line, &held));
        let listed = self.extras.remove(FOLLOWS_EXTRA).unwrap_or_default();
        let mut entries: Vec<String> = (listed.split(','))
            .filter(|entry| !entry.is_empty() && !entry.starts_with(VERSION_MARK))
            .map(str::to_owned)
            .collect();
        entries.extend(versions.map(|versions| versions.to_string()));
        self.extras
            .insert(FOLLOWS_EXTRA.to_owned(), entries.join(","));
        self
    }

    /// Whether this save records being made in view of `other` (another save): in its list
    /// of ids, or, when both record a version vector, in its vector.
    pub fn made_in_view_of_save(&self, other: &SaveMeta) -> bool {
        self.made_in_view_of(other.save_id)
            || self
                .versions()
                .zip(other.versions())
                .is_some_and(|(mine, theirs)| mine.includes(&theirs))
    }

    /// Whether the save records what it was made in view of, one way or the other.
    fn records_lineage(&self) -> bool {
        self.follows().is_some() || self.versions().is_some()
    }

    /// How this save stands to `other` by what each was made in view of: its list of ids
    /// ([`FOLLOWS_EXTRA`]), and, when both carry one, its version vector ([`Versions`]),
    /// which reaches back along the whole line however many saves lie between. Saves that
    /// each claim the other (only forged or damaged records can) count as made apart.
    ///
    /// ```
    /// use keepsake_core::{SlotId, format::{Lineage, SaveMeta}};
    ///
    /// let first = SaveMeta::new(SlotId::Quick).with_follows([]);
    /// let second = SaveMeta::new(SlotId::Quick).with_follows([first.save_id]);
    /// let apart = SaveMeta::new(SlotId::Quick).with_follows([]);
    /// assert_eq!(second.lineage(&first), Lineage::Follows);
    /// assert_eq!(first.lineage(&second), Lineage::Precedes);
    /// assert_eq!(second.lineage(&apart), Lineage::Concurrent);
    /// assert_eq!(second.lineage(&SaveMeta::new(SlotId::Quick)), Lineage::Unrecorded);
    ///
    /// // A line longer than the list of ids: the version vectors still order it.
    /// let desk = SaveMeta::new(SlotId::Quick).with_device("desk", "desk");
    /// let mut held = desk.with_follows([]).with_versions("e1", []);
    /// let start = held.clone();
    /// for _ in 0..40 {
    ///     let next = SaveMeta::new(SlotId::Quick).with_device("laptop", "laptop");
    ///     held = next.with_follows([held.save_id]).with_versions("e2", [&held]);
    /// }
    /// assert_eq!(held.lineage(&start), Lineage::Follows);
    /// ```
    pub fn lineage(&self, other: &SaveMeta) -> Lineage {
        match (
            self.made_in_view_of_save(other),
            other.made_in_view_of_save(self),
        ) {
            (true, false) => Lineage::Follows,
            (false, true) => Lineage::Precedes,
            (true, true) => Lineage::Concurrent,
            (false, false) if self.records_lineage() && other.records_lineage() => {
                Lineage::Concurrent
            }
            (false, false) => Lineage::Unrecorded,
        }
    }
}
