//! Issue 49: the sync state file (`cloud-sync.ron`) never stops the game or sync, and losing it
//! never brings back a save the player set aside. Before, an entry there that is not a readable
//! file (a folder, a FIFO, a file this user may not read) failed `SyncCore::open`: the device
//! could not start sync at all, and a state that could not be written ended every round before
//! its uploads. These run on a storage in memory: no server needed.

use super::world_bundle;
use crate::common::test_fs::TestFs;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::object_store::memory::InMemory;
use bevy_keepsake::cloud::{CloudError, Remote, STATE_FILE, SyncCore, SyncRound};
use bevy_keepsake::format::SaveMeta;
use bevy_keepsake::store::testing::Forward;
use bevy_keepsake::store::{FileSystem, OsFileSystem, SlotStore, StoreConfig};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

const GAME: &str = "state-file-test";
const SLOT: SlotId = SlotId::Manual(0);

/// One installation: a save folder on `fs`, sharing a storage in memory with the others.
struct Peer {
    dir: tempfile::TempDir,
    fs: Arc<dyn FileSystem>,
    remote: Remote,
    store: Arc<SlotStore>,
    core: SyncCore,
    runtime: tokio::runtime::Runtime,
}

impl Peer {
    /// A device whose profile folder gets `prepare` done to it before sync opens; what the
    /// open reported beside the core.
    fn open(
        remote: Remote,
        fs: Arc<dyn FileSystem>,
        prepare: impl FnOnce(&Path),
    ) -> (Peer, Option<CloudError>) {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Arc::new(SlotStore::open_with(StoreConfig::new(dir.path()), fs.clone()).unwrap());
        prepare(&store.dir().join(STATE_FILE));
        let (core, report) = SyncCore::open(store.clone(), remote.clone(), "desk");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let peer = Peer {
            dir,
            fs,
            remote,
            store,
            core,
            runtime,
        };
        (peer, report)
    }

    fn healthy(remote: Remote) -> Peer {
        let (peer, report) = Peer::open(remote, Arc::new(OsFileSystem), |_| {});
        assert!(report.is_none(), "{report:?}");
        peer
    }

    /// The game starts again on the same folder (the same disk).
    fn restart(self) -> (Peer, Option<CloudError>) {
        drop(self.core);
        let config = StoreConfig::new(self.dir.path());
        let store = Arc::new(SlotStore::open_with(config, self.fs.clone()).unwrap());
        let (core, report) = SyncCore::open(store.clone(), self.remote.clone(), "desk");
        let peer = Peer {
            store,
            core,
            ..self
        };
        (peer, report)
    }

    fn state_path(&self) -> PathBuf {
        self.store.dir().join(STATE_FILE)
    }

    /// A durable save, stamped and queued as the plugin does.
    fn save(&mut self, slot: SlotId) -> Uuid {
        let meta = self.core.stamp(SaveMeta::new(slot));
        let receipt = self.store.save(slot, meta, &world_bundle()).unwrap();
        self.core.note_save(slot, receipt.save_id).unwrap();
        receipt.save_id
    }

    fn sync(&mut self) -> SyncRound {
        self.runtime.block_on(self.core.sync())
    }

    fn head(&self, slot: SlotId) -> Option<Uuid> {
        self.store.load(slot).ok().map(|loaded| loaded.meta.save_id)
    }
}

fn shared_memory() -> Remote {
    Remote::new(Arc::new(InMemory::new()), "games", GAME, "default")
}

fn make_fifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// A folder the player made (not empty: a rename never replaces it).
fn make_folder(path: &Path) {
    std::fs::create_dir(path).unwrap();
    std::fs::write(path.join("notes.txt"), b"mine").unwrap();
}

/// What sits at the state file's name, how to put it there, and what the report must say.
struct Odd {
    label: &'static str,
    /// Whether a state can be written in its place (a rename replaces anything but a folder).
    gives_way: bool,
    said: &'static str,
}

const ODD: [Odd; 3] = [
    Odd {
        label: "folder",
        gives_way: false,
        said: "a folder",
    },
    Odd {
        label: "fifo",
        gives_way: true,
        said: "a FIFO",
    },
    Odd {
        label: "unreadable",
        gives_way: true,
        said: "could not be read",
    },
];

/// Opens a device whose state file's name holds `odd`.
fn device_with(odd: &Odd, remote: Remote) -> (Peer, Option<CloudError>) {
    // Tests run as root, who reads any file: the refusal of `chmod 000` is the test
    // filesystem's.
    let fs = TestFs::new();
    let opened = fs.clone();
    let fs: Arc<dyn FileSystem> = Arc::new(fs);
    Peer::open(remote, fs, |path| match odd.label {
        "folder" => make_folder(path),
        "fifo" => make_fifo(path),
        _ => {
            std::fs::write(path, b"a state this user may not read").unwrap();
            opened.deny_read(path);
        }
    })
}

/// A folder, a FIFO or a file this user may not read where the state file goes: sync opens
/// with a fresh state and says why, saving works, the save reaches another device, and a
/// state that cannot be written is kept in memory, reported at each round, and written once
/// the way is clear.
#[test]
fn an_odd_entry_at_the_state_file_never_stops_sync() {
    for odd in &ODD {
        let remote = shared_memory();
        let (mut desk, report) = device_with(odd, remote.clone());
        let state_path = desk.state_path();
        match &report {
            Some(CloudError::State { path, reason }) => {
                assert_eq!(path, &state_path, "{}", odd.label);
                assert!(reason.contains(odd.said), "{}: {reason}", odd.label);
                assert!(reason.contains("fresh state"), "{}: {reason}", odd.label);
            }
            other => panic!("{}: {other:?}", odd.label),
        }

        let saved = desk.save(SLOT);
        let round = desk.sync();
        assert_eq!(round.error, None, "{}: {round:?}", odd.label);
        let uploaded: Vec<Uuid> = round.uploaded.iter().map(|u| u.save_id).collect();
        assert_eq!(uploaded, [saved], "{}", odd.label);
        assert_eq!(
            round.state_error.is_some(),
            !odd.gives_way,
            "{}: {round:?}",
            odd.label
        );

        let mut laptop = Peer::healthy(remote);
        assert_eq!(laptop.sync().error, None);
        assert_eq!(laptop.head(SLOT), Some(saved), "{}", odd.label);

        if !odd.gives_way {
            // The player moves the folder out: the next round writes the state, and the game's
            // next start finds it, with the device id the saves were made with.
            std::fs::remove_dir_all(&state_path).unwrap();
            let round = desk.sync();
            assert_eq!(round.state_error, None, "{round:?}");
        }
        let device_id = desk.core.device_id().to_owned();
        if odd.label != "unreadable" {
            let (desk, report) = desk.restart();
            assert!(report.is_none(), "{}: {report:?}", odd.label);
            assert_eq!(desk.core.device_id(), device_id, "{}", odd.label);
        }
    }
}

/// The real filesystem, with no room for a new state file (ENOSPC when its temporary file is
/// created) while `full` is set; saves still have room.
fn no_room_for_state(full: Arc<AtomicBool>) -> Forward {
    Forward::os().on_create_new(move |inner, path| {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if full.load(Ordering::SeqCst) && name.starts_with(STATE_FILE) {
            const ENOSPC: i32 = 28;
            return Err(io::Error::from_raw_os_error(ENOSPC));
        }
        inner.create_new(path)
    })
}

/// A state the disk refuses to take (no room for it) is no reason to stop: the round uploads
/// and downloads as ever, reports the state as unwritten, and writes it at the first round
/// after space is freed.
#[test]
fn a_state_that_cannot_be_written_is_kept_in_memory_and_written_later() {
    let remote = shared_memory();
    let full = Arc::new(AtomicBool::new(false));
    let disk = Arc::new(no_room_for_state(full.clone()));
    let (mut desk, report) = Peer::open(remote.clone(), disk, |_| {});
    assert!(report.is_none(), "{report:?}");
    let mut laptop = Peer::healthy(remote);
    let from_laptop = laptop.save(SlotId::Manual(1));
    assert_eq!(laptop.sync().error, None);

    let saved = desk.save(SLOT);
    let written_before = std::fs::read(desk.state_path()).unwrap();
    full.store(true, Ordering::SeqCst);
    let round = desk.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert_eq!(round.uploaded.len(), 1, "{round:?}");
    assert_eq!(round.arrived.len(), 1, "{round:?}");
    let unwritten = round.state_error.expect("the failed write is reported");
    assert!(unwritten.contains("could not be written"), "{unwritten}");
    assert_eq!(std::fs::read(desk.state_path()).unwrap(), written_before);

    full.store(false, Ordering::SeqCst);
    let round = desk.sync();
    assert_eq!(round.state_error, None, "{round:?}");
    let text = std::fs::read_to_string(desk.state_path()).unwrap();
    assert!(text.contains(&saved.to_string()), "{text}");
    assert!(text.contains(&from_laptop.to_string()), "{text}");
}

/// The state file is lost while the game is not running (deleted, or garbled): the next start
/// has a fresh one, with a new device id.
fn lose_state(peer: Peer) -> Peer {
    std::fs::remove_file(peer.state_path()).unwrap();
    let (peer, report) = peer.restart();
    assert!(report.is_none(), "{report:?}");
    peer
}

/// More saves of `slot` than a save's list of ids reaches back (so only the version vectors
/// still tell the first of them was moved past).
fn save_many(peer: &mut Peer, slot: SlotId) -> Uuid {
    let mut last = Uuid::nil();
    for _ in 0..=bevy_keepsake::format::MAX_FOLLOWS + 4 {
        last = peer.save(slot);
    }
    last
}

/// Seed 405 of the simulator: a save is uploaded under a device id a lost state file took
/// with it, the player saves the slot many times over and deletes it, and the state is lost
/// again. The cloud's copy of that first save is nobody's own any more and nothing records
/// its upload; before, it was downloaded into the slot the player had emptied.
#[test]
fn a_lost_state_never_brings_a_deleted_save_back() {
    let remote = shared_memory();
    let mut desk = Peer::healthy(remote.clone());
    let first = desk.save(SLOT);
    let mut desk = lose_state(desk);
    let round = desk.sync();
    assert_eq!(round.uploaded.len(), 1, "{round:?}");
    save_many(&mut desk, SLOT);
    assert!(
        !desk
            .store
            .saves_in(SLOT)
            .unwrap()
            .iter()
            .any(|s| s.meta.save_id == first)
    );
    desk.store.delete(SLOT).unwrap();

    let mut desk = lose_state(desk);
    let round = desk.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert_eq!(round.arrived, [], "the deleted save came back");
    assert_eq!(desk.head(SLOT), None);

    // Another device's save made since is not one the player deleted here: it arrives.
    let mut laptop = Peer::healthy(remote);
    laptop.sync();
    let later = laptop.save(SLOT);
    laptop.sync();
    desk.sync();
    assert_eq!(desk.head(SLOT), Some(later));
}

/// A save pruned here long ago (many saves of its slot since) is not downloaded back below
/// the player's newer saves once a lost state file took the device id it was uploaded under.
#[test]
fn a_lost_state_never_brings_a_pruned_save_back_as_a_backup() {
    let remote = shared_memory();
    let mut desk = Peer::healthy(remote);
    let first = desk.save(SLOT);
    assert_eq!(desk.sync().uploaded.len(), 1);
    let last = save_many(&mut desk, SLOT);
    let held = |peer: &Peer| -> Vec<Uuid> {
        let saves = peer.store.saves_in(SLOT).unwrap();
        saves.iter().map(|save| save.meta.save_id).collect()
    };
    let before = held(&desk);
    assert!(!before.contains(&first));

    let mut desk = lose_state(desk);
    let round = desk.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert_eq!(held(&desk), before, "{round:?}");
    assert_eq!(desk.head(SLOT), Some(last));
}

/// The player settled a conflict by choosing the other device's save; the state file is lost.
/// The save passed over is not shown as a conflict again (before, the fresh state found it
/// below the chosen save, made apart from it, and recorded the conflict anew), and stays
/// loadable below the chosen one.
#[test]
fn a_lost_state_never_shows_a_passed_over_save_as_a_conflict_again() {
    let remote = shared_memory();
    let mut desk = Peer::healthy(remote.clone());
    let mut laptop = Peer::healthy(remote);
    let mine = desk.save(SLOT);
    let theirs = laptop.save(SLOT);
    laptop.sync();
    desk.sync();
    let hidden = desk.core.conflicts(SLOT);
    assert_eq!(hidden.len(), 1, "{hidden:?}");
    let chosen = hidden[0].hidden_save;
    let passed_over = if chosen == theirs { mine } else { theirs };
    let picked = desk.runtime.block_on(desk.core.use_hidden_save(SLOT));
    assert!(picked.unwrap().is_some());
    assert_eq!(desk.head(SLOT), Some(chosen));

    let mut desk = lose_state(desk);
    let round = desk.sync();
    assert_eq!(round.error, None, "{round:?}");
    assert_eq!(
        desk.core.conflicts(SLOT),
        [],
        "the settled conflict is shown again"
    );
    assert_eq!(desk.head(SLOT), Some(chosen));
    let held = desk.store.saves_in(SLOT).unwrap();
    assert!(held.iter().any(|save| save.meta.save_id == passed_over));
}
