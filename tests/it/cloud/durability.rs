//! Issue 41: saves lost between devices without any crash. A save shown as a conflict's hidden
//! save was pruned by the import that placed it (defect 2); choosing a hidden save that was no
//! longer here cleared the conflict in silence; an object already under a save's name counted
//! as uploaded unseen, so a torn object stayed in the cloud for good; `file://` folders were
//! written without an fsync; a newer build's save here kept another device's save of its slot out
//! for good, though the player deleted it. These run on a storage in memory or a folder: no
//! server needed.

use super::world_bundle;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::memory::InMemory;
use bevy_keepsake::cloud::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use bevy_keepsake::cloud::{
    CloudError, Remote, RemoteName, RequestPolicy, SlotSync, SyncCore, SyncRound,
};
use bevy_keepsake::format::{SaveMeta, Timestamp};
use bevy_keepsake::store::{SlotStore, StoreConfig};
use std::sync::Arc;
use uuid::Uuid;

const GAME: &str = "durability-test";
const SLOT: SlotId = SlotId::Quick;

/// The backups a game may keep: the default (3), none, one.
const BACKUPS: [Option<u16>; 3] = [None, Some(0), Some(1)];

/// One installation on a shared storage.
struct Peer {
    _dir: tempfile::TempDir,
    store: Arc<SlotStore>,
    core: SyncCore,
    runtime: tokio::runtime::Runtime,
}

impl Peer {
    fn on(remote: Remote, name: &str, backups: Option<u16>) -> Peer {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path());
        let config = match backups {
            Some(backups) => config.backups(backups),
            None => config,
        };
        let store = Arc::new(SlotStore::open(config).unwrap());
        let (core, damaged) = SyncCore::open(store.clone(), remote, name);
        assert!(damaged.is_none());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Peer {
            _dir: dir,
            store,
            core,
            runtime,
        }
    }

    /// A save made `seconds` ago, queued for upload.
    fn save_ago(&mut self, slot: SlotId, seconds: i64) -> Uuid {
        let created_at =
            Timestamp::from_unix_millis(Timestamp::now().unix_millis() - seconds * 1_000);
        let meta = self.core.stamp(SaveMeta {
            created_at,
            ..SaveMeta::new(slot)
        });
        let receipt = self.store.save(slot, meta, &world_bundle()).unwrap();
        self.core.note_save(slot, receipt.save_id).unwrap();
        receipt.save_id
    }

    fn sync(&mut self) -> SyncRound {
        self.runtime.block_on(self.core.sync())
    }

    fn use_hidden_save(&mut self, slot: SlotId) -> Result<Option<u64>, CloudError> {
        self.runtime.block_on(self.core.use_hidden_save(slot))
    }

    fn ids(&self, slot: SlotId) -> Vec<Uuid> {
        let saves = self.store.saves_in(slot).unwrap();
        saves.iter().map(|save| save.meta.save_id).collect()
    }

    fn head(&self, slot: SlotId) -> Uuid {
        self.store.load(slot).unwrap().meta.save_id
    }

    fn conflict(&self, slot: SlotId) -> Option<Uuid> {
        match self.core.slot_states().unwrap().remove(&slot) {
            Some(SlotSync::Conflict(conflict)) => Some(conflict.hidden_save),
            _ => None,
        }
    }
}

fn shared_memory() -> Remote {
    Remote::new(Arc::new(InMemory::new()), "games", GAME, "default")
}

/// Defect 2: the laptop saves offline; the desk saves later and uploads; the laptop uploads;
/// the desk syncs. The laptop's save is placed below the desk's and shown as a conflict: it
/// must stay loadable, whatever the backups, and choosing it must work. Before the fix, with
/// no backups, the import pruned it at once, and choosing it found nothing and cleared the
/// conflict.
#[test]
fn a_save_shown_as_a_conflict_is_never_pruned_by_the_import_that_places_it() {
    for backups in BACKUPS {
        let remote = shared_memory();
        let mut desk = Peer::on(remote.clone(), "desk", backups);
        let mut laptop = Peer::on(remote, "laptop", backups);
        let offline = laptop.save_ago(SLOT, 600);
        let later = desk.save_ago(SLOT, 300);
        assert_eq!(desk.sync().error, None);
        assert_eq!(laptop.sync().error, None);

        let round = desk.sync();
        assert_eq!(round.error, None, "backups {backups:?}");
        assert_eq!(desk.conflict(SLOT), Some(offline), "backups {backups:?}");
        assert_eq!(desk.head(SLOT), later);
        assert!(
            desk.ids(SLOT).contains(&offline),
            "backups {backups:?}: the hidden save was pruned"
        );

        let chosen = desk.use_hidden_save(SLOT).unwrap();
        assert!(chosen.is_some(), "backups {backups:?}");
        assert_eq!(desk.head(SLOT), offline, "backups {backups:?}");
        assert_eq!(desk.conflict(SLOT), None);
    }
}

/// A hidden save that is no longer here (removed by hand, or damaged on this disk) is
/// downloaded again when the player chooses it.
#[test]
fn choosing_a_hidden_save_no_longer_here_downloads_it_again() {
    for backups in BACKUPS {
        let remote = shared_memory();
        let mut desk = Peer::on(remote.clone(), "desk", backups);
        let mut laptop = Peer::on(remote, "laptop", backups);
        let offline = laptop.save_ago(SLOT, 600);
        desk.save_ago(SLOT, 300);
        desk.sync();
        laptop.sync();
        desk.sync();
        let hidden = desk.store.saves_in(SLOT).unwrap();
        let hidden = hidden.iter().find(|s| s.meta.save_id == offline).unwrap();
        std::fs::remove_file(desk.store.path_of(SLOT, hidden.generation)).unwrap();
        assert!(!desk.ids(SLOT).contains(&offline));

        let chosen = desk.use_hidden_save(SLOT).unwrap();
        assert!(chosen.is_some(), "backups {backups:?}");
        assert_eq!(desk.head(SLOT), offline, "backups {backups:?}");
        assert_eq!(desk.conflict(SLOT), None);
    }
}

/// A hidden save neither here nor in the cloud cannot be chosen: the player is told so (the
/// conflict is cleared with a typed error, not in silence), and the slot keeps its save.
#[test]
fn a_hidden_save_gone_everywhere_is_reported_when_chosen() {
    let memory = Arc::new(InMemory::new());
    let remote = Remote::new(memory.clone(), "games", GAME, "default");
    let mut desk = Peer::on(remote.clone(), "desk", None);
    let mut laptop = Peer::on(remote.clone(), "laptop", None);
    let offline = laptop.save_ago(SLOT, 600);
    let later = desk.save_ago(SLOT, 300);
    desk.sync();
    laptop.sync();
    desk.sync();
    for save in desk.store.saves_in(SLOT).unwrap() {
        if save.meta.save_id == offline {
            std::fs::remove_file(desk.store.path_of(SLOT, save.generation)).unwrap();
            let name = RemoteName::for_save(&save.meta, laptop.core.device_id());
            desk.runtime
                .block_on(memory.delete(&remote.path_of(&name)))
                .unwrap();
        }
    }

    let error = desk.use_hidden_save(SLOT).unwrap_err();
    assert!(
        matches!(&error, CloudError::HiddenSaveGone { save_id, device, .. }
            if *save_id == offline && device == "laptop"),
        "{error}"
    );
    assert_eq!(desk.conflict(SLOT), None);
    assert_eq!(desk.head(SLOT), later);
}

/// An object already under this device's own name for a save, holding other bytes (an upload
/// torn by a power loss on a store that did not flush it), is replaced by the local file.
/// Before, "already exists" counted as uploaded and other devices refused the torn file for
/// good.
#[test]
fn a_torn_object_under_this_devices_name_is_replaced_by_the_upload() {
    let memory = Arc::new(InMemory::new());
    let remote = Remote::new(memory.clone(), "games", GAME, "default");
    let mut desk = Peer::on(remote.clone(), "desk", None);
    let saved = desk.save_ago(SLOT, 60);
    let meta = desk.store.load(SLOT).unwrap().meta;
    let location = remote.path_of(&RemoteName::for_save(&meta, desk.core.device_id()));
    let local = desk.store.read_generation_bytes(SLOT, 1).unwrap();
    let torn = PutPayload::from(local[..local.len() / 2].to_vec());
    desk.runtime.block_on(memory.put(&location, torn)).unwrap();

    let round = desk.sync();
    assert_eq!(
        (round.error.as_deref(), round.refused.len()),
        (None, 0),
        "{round:?}"
    );
    let stored = desk
        .runtime
        .block_on(async { memory.get(&location).await?.bytes().await })
        .unwrap();
    assert_eq!(&stored[..], &local[..], "the torn object was left");

    let mut laptop = Peer::on(remote, "laptop", None);
    let round = laptop.sync();
    assert_eq!(round.refused, [], "{round:?}");
    assert_eq!(laptop.head(SLOT), saved);
}

/// The same bytes already there: counted as uploaded. Another device's object under the name
/// of a save of that device that reached this one some other way: that device's, never
/// overwritten.
#[test]
fn an_existing_object_counts_as_uploaded_only_when_it_is_the_same_file() {
    let memory = Arc::new(InMemory::new());
    let remote = Remote::new(memory.clone(), "games", GAME, "default");
    let mut desk = Peer::on(remote.clone(), "desk", None);

    let same = desk.save_ago(SlotId::Manual(0), 60);
    let meta = desk.store.load(SlotId::Manual(0)).unwrap().meta;
    let location = remote.path_of(&RemoteName::for_save(&meta, desk.core.device_id()));
    let bytes = desk
        .store
        .read_generation_bytes(SlotId::Manual(0), 1)
        .unwrap();
    let put = memory.put(&location, PutPayload::from(bytes.clone()));
    desk.runtime.block_on(put).unwrap();

    let other_device = "0123456789ab";
    let foreign = SaveMeta::new(SlotId::Manual(1)).with_device(other_device, "elsewhere");
    let receipt = desk
        .store
        .save(SlotId::Manual(1), foreign.clone(), &world_bundle())
        .unwrap();
    let foreign_at = remote.path_of(&RemoteName::for_save(&foreign, other_device));
    let theirs = PutPayload::from(b"that device's own business".to_vec());
    desk.runtime
        .block_on(memory.put(&foreign_at, theirs))
        .unwrap();

    let round = desk.sync();
    let uploaded: Vec<Uuid> = round.uploaded.iter().map(|u| u.save_id).collect();
    assert_eq!(uploaded, [same], "{round:?}");
    assert!(!uploaded.contains(&receipt.save_id));
    assert_eq!(
        (round.error.as_deref(), round.pending),
        (None, 0),
        "{round:?}"
    );
    let left = desk
        .runtime
        .block_on(async { memory.get(&foreign_at).await?.bytes().await })
        .unwrap();
    assert_eq!(&left[..], b"that device's own business");
}

/// A `file://` folder carries saves between devices (written through the store's durable
/// write, see `FolderStore`), and refuses to replace an object on a create-only upload.
#[test]
fn a_file_url_folder_carries_saves_between_devices() {
    let cloud = tempfile::tempdir().unwrap();
    let url = format!("file://{}", cloud.path().display());
    let open = || Remote::open(&url, GAME, "default", &RequestPolicy::default()).unwrap();
    let mut desk = Peer::on(open(), "desk", Some(0));
    let mut laptop = Peer::on(open(), "laptop", Some(0));
    let saved = desk.save_ago(SlotId::Manual(3), 30);
    let round = desk.sync();
    assert_eq!(
        (round.error.as_deref(), round.uploaded.len()),
        (None, 1),
        "{round:?}"
    );
    let round = laptop.sync();
    assert_eq!(
        (round.error.as_deref(), round.arrived.len()),
        (None, 1),
        "{round:?}"
    );
    assert_eq!(laptop.head(SlotId::Manual(3)), saved);

    let folder = cloud.path().join(GAME).join("default");
    let names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].contains(&saved.simple().to_string()), "{names:?}");
    let remote = open();
    let listed = laptop
        .runtime
        .block_on(remote.store().list_with_delimiter(Some(remote.folder())))
        .unwrap();
    assert_eq!(listed.objects.len(), 1);
}

/// A newer build's save in a slot here holds back every other device's save of that slot
/// (nothing is placed under it); once the player deletes the slot, the next round brings them.
/// The refusal was recorded under the remote file's name as if that file were from a newer
/// format, so the other device's save never came, the slot freed or not (issue 49, simulator
/// seeds 28 and 72).
#[test]
fn a_save_a_newer_builds_save_here_held_back_arrives_once_the_slot_is_deleted() {
    let remote = shared_memory();
    let mut desk = Peer::on(remote.clone(), "desk", None);
    let mut laptop = Peer::on(remote, "laptop", None);
    let (_, newer) = super::newer_format_file(SLOT, 0);
    std::fs::write(laptop.store.path_of(SLOT, 1), &newer).unwrap();
    let saved = desk.save_ago(SLOT, 30);
    assert_eq!(desk.sync().error, None);

    for _ in 0..2 {
        let round = laptop.sync();
        assert_eq!(round.error, None, "{round:?}");
        assert!(round.arrived.is_empty(), "{round:?}");
    }
    assert_eq!(std::fs::read(laptop.store.path_of(SLOT, 1)).unwrap(), newer);
    let state = laptop
        .store
        .read_profile_file(bevy_keepsake::cloud::STATE_FILE)
        .unwrap()
        .unwrap();
    let state = String::from_utf8(state).unwrap();
    assert!(
        !state.contains(&saved.simple().to_string()),
        "the held-back save is recorded: {state}"
    );

    laptop.store.delete(SLOT).unwrap();
    let round = laptop.sync();
    assert_eq!(
        (round.error.as_deref(), round.arrived.len()),
        (None, 1),
        "{round:?}"
    );
    assert_eq!(laptop.head(SLOT), saved);
}
