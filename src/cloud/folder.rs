//! [`FolderStore`]: a folder as cloud storage (`file://` remotes: a local disk, a network share,
//! a folder another tool copies between machines), written the way the store writes saves.
//!
//! `object_store`'s own `LocalFileSystem` writes a staged file and renames it into place without
//! an fsync of either, so a power loss soon after an upload could leave an object that is
//! empty or torn under the save's name: the device counted it as uploaded, other devices
//! refused it as damaged, and the save never reached them. Here every write goes through the
//! store's durable write over its [`FileSystem`] seam: a temporary file in the object's
//! folder, written and fsynced, linked to its name (refused if an object of that name
//! appeared, for [`PutMode::Create`]) or renamed over it ([`PutMode::Overwrite`]), and the
//! folder fsynced; new folders are flushed into their parents. Going through the seam also puts
//! uploads to a folder in the power-loss enumeration of the tests.
//!
//! An object is a file; its name is the path's last part and each earlier part a folder. An
//! object's upload time is its file's modification time. Temporary files (the store's
//! `<name>.<pid>-<n>.tmp`) are never listed: one a power loss left behind is garbage a later
//! listing passes over (another device sharing the folder may be writing it, so it is not
//! removed). Multipart uploads and conditional updates are not offered (cloud sync uses neither).
//!
//! Calls block on the filesystem, as the store's own do: cloud sync runs them on its thread.

use crate::format::Timestamp;
use crate::store::{
    FileSystem, Placement, ReadFile, StoreError, create_dir_durably, write_durably,
};
use async_trait::async_trait;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use object_store::path::{Path as RemotePath, PathPart};
use object_store::{
    CopyMode, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    Result,
};
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What errors name as the storage.
const STORE: &str = "FolderStore";

/// Bytes read at a time from an object being downloaded.
const CHUNK: usize = 64 << 10;

/// A folder holding objects (a `file://` remote), written through a [`FileSystem`] the way the
/// store writes saves: a temporary file in the object's folder, fsynced, then linked to the
/// object's name (refused if one exists, for [`PutMode::Create`]) or renamed over it
/// ([`PutMode::Overwrite`]), and the folder fsynced; new folders are flushed into their
/// parents. An object's upload time is its file's modification time; temporary files are
/// never listed.
#[derive(Debug)]
pub struct FolderStore {
    fs: Arc<dyn FileSystem>,
    root: PathBuf,
}

impl FolderStore {
    /// The objects under `root`, which is created (and flushed into its parent) if missing.
    pub fn open(fs: Arc<dyn FileSystem>, root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let root = root.into();
        create_dir_durably(fs.as_ref(), &root)?;
        Ok(FolderStore { fs, root })
    }

    fn file_of(&self, location: &RemotePath) -> PathBuf {
        file_of(&self.root, location)
    }

    /// Writes `payload` as the object at `location`, as `placement` says.
    fn write(
        &self,
        location: &RemotePath,
        payload: &PutPayload,
        placement: Placement,
    ) -> Result<()> {
        let path = self.file_of(location);
        let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        else {
            return Err(generic(io::Error::other(format!(
                "{location} names no file"
            ))));
        };
        let parts: Vec<&[u8]> = payload.iter().map(|part| part.as_ref()).collect();
        let write = || write_durably(self.fs.as_ref(), dir, name, &parts, placement);
        let written = match write() {
            // The object's folder does not exist yet: made (durably), then written.
            Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                create_dir_durably(self.fs.as_ref(), dir).map_err(generic)?;
                write()
            }
            other => other,
        };
        match written {
            Ok(_) => Ok(()),
            Err(StoreError::Io {
                path: at, source, ..
            }) if at == path && source.kind() == io::ErrorKind::AlreadyExists => {
                Err(object_store::Error::AlreadyExists {
                    path: location.to_string(),
                    source: Box::new(source),
                })
            }
            Err(error) => Err(generic(error)),
        }
    }

    /// The object at `location` opened, with its metadata.
    fn open_object(&self, location: &RemotePath) -> Result<(Box<dyn ReadFile>, ObjectMeta)> {
        let path = self.file_of(location);
        let mut file = self
            .fs
            .open_read(&path)
            .map_err(|error| io_error(location, error))?;
        let meta = object_meta(location.clone(), file.as_mut())?;
        Ok((file, meta))
    }

    /// The objects in the folder of `location` (and below it when `deep`), and its sub-folders.
    fn scan(
        &self,
        location: &RemotePath,
        deep: bool,
    ) -> Result<(Vec<ObjectMeta>, Vec<RemotePath>)> {
        let dir = self.file_of(location);
        let names = match self.fs.list_dir(&dir) {
            Ok(names) => names,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(error) => return Err(generic(error)),
        };
        let (mut objects, mut folders) = (Vec::new(), Vec::new());
        for name in names.iter().filter_map(|name| name.to_str()) {
            // Names that are not a path part as they stand could not be fetched back.
            let part = PathPart::from(name);
            if part.as_ref() != name || crate::store::is_temp_file(name) {
                continue;
            }
            let child = location.clone().join(part);
            if self.fs.list_dir(&dir.join(name)).is_ok() {
                if deep {
                    let (more, _) = self.scan(&child, true)?;
                    objects.extend(more);
                }
                folders.push(child);
            } else {
                objects.push(self.open_object(&child)?.1);
            }
        }
        Ok((objects, folders))
    }
}

impl fmt::Display for FolderStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{STORE}({})", self.root.display())
    }
}

#[async_trait]
impl ObjectStore for FolderStore {
    async fn put_opts(
        &self,
        location: &RemotePath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let placement = match opts.mode {
            PutMode::Create => Placement::New,
            PutMode::Overwrite => Placement::Replace,
            PutMode::Update(_) => return Err(not_implemented("put_opts with PutMode::Update")),
        };
        self.write(location, &payload, placement)?;
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        _location: &RemotePath,
        _opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        Err(not_implemented("put_multipart_opts"))
    }

    async fn get_opts(&self, location: &RemotePath, options: GetOptions) -> Result<GetResult> {
        let (mut file, meta) = self.open_object(location)?;
        options.check_preconditions(&meta)?;
        let range = match &options.range {
            Some(range) => range.as_range(meta.size).map_err(generic)?,
            None => 0..meta.size,
        };
        let payload = if options.head {
            stream::empty().boxed()
        } else {
            file.seek(SeekFrom::Start(range.start)).map_err(generic)?;
            read_stream(file, range.end - range.start)
        };
        Ok(GetResult {
            payload: GetResultPayload::Stream(payload),
            meta,
            range,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }

    /// Removes each object and flushes its folder; an object already gone counts as removed,
    /// as on S3.
    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<RemotePath>>,
    ) -> BoxStream<'static, Result<RemotePath>> {
        let (fs, root) = (Arc::clone(&self.fs), self.root.clone());
        locations
            .map(move |location| {
                let location = location?;
                let path = file_of(&root, &location);
                match fs.remove_file(&path) {
                    Ok(()) => {}
                    Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(location),
                    Err(error) => return Err(io_error(&location, error)),
                }
                let dir = path.parent().unwrap_or(&root);
                fs.sync_dir(dir).map_err(generic)?;
                Ok(location)
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&RemotePath>) -> BoxStream<'static, Result<ObjectMeta>> {
        let from = prefix.cloned().unwrap_or_default();
        let listed = self.scan(&from, true).map(|(objects, _)| objects);
        match listed {
            Ok(objects) => stream::iter(objects.into_iter().map(Ok)).boxed(),
            Err(error) => stream::once(async move { Err(error) }).boxed(),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&RemotePath>) -> Result<ListResult> {
        let from = prefix.cloned().unwrap_or_default();
        let (objects, common_prefixes) = self.scan(&from, false)?;
        Ok(ListResult {
            common_prefixes,
            objects,
            extensions: Default::default(),
        })
    }

    async fn copy_opts(
        &self,
        from: &RemotePath,
        to: &RemotePath,
        options: CopyOptions,
    ) -> Result<()> {
        let (mut file, _) = self.open_object(from)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(generic)?;
        let placement = match options.mode {
            CopyMode::Create => Placement::New,
            CopyMode::Overwrite => Placement::Replace,
        };
        self.write(to, &PutPayload::from(bytes), placement)
    }
}

/// The file of the object at `location` under `root`. A path's parts never hold a separator,
/// `.` or `..` (`object_store` encodes them), so the file is always under the root.
fn file_of(root: &Path, location: &RemotePath) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(location.parts().map(|part| part.as_ref().to_owned()));
    path
}

/// An object's metadata from its open file: size, modification time as upload time, and an
/// entity tag made of both.
fn object_meta(location: RemotePath, file: &mut dyn ReadFile) -> Result<ObjectMeta> {
    let size = file.byte_len().map_err(generic)?;
    let modified = file.modified().map_err(generic)?;
    let last_modified = DateTime::<Utc>::from(modified);
    let millis = Timestamp::from(modified).unix_millis();
    Ok(ObjectMeta {
        location,
        last_modified,
        size,
        e_tag: Some(format!("{size:x}-{millis:x}")),
        version: None,
    })
}

/// The next `len` bytes of `file`, in chunks of [`CHUNK`] read as the stream is polled (a
/// reader that stops early never has the rest read). A file shorter than that is an error.
fn read_stream(file: Box<dyn ReadFile>, len: u64) -> BoxStream<'static, Result<Bytes>> {
    stream::unfold((file, len), |(mut file, left)| async move {
        if left == 0 {
            return None;
        }
        let mut chunk = vec![0u8; CHUNK.min(usize::try_from(left).unwrap_or(CHUNK))];
        match file.read(&mut chunk) {
            Ok(0) => {
                let short = io::Error::new(io::ErrorKind::UnexpectedEof, "the file shrank");
                Some((Err(generic(short)), (file, 0)))
            }
            Ok(read) => {
                chunk.truncate(read);
                Some((Ok(Bytes::from(chunk)), (file, left - read as u64)))
            }
            Err(error) => Some((Err(generic(error)), (file, 0))),
        }
    })
    .boxed()
}

fn io_error(location: &RemotePath, error: io::Error) -> object_store::Error {
    match error.kind() {
        io::ErrorKind::NotFound => object_store::Error::NotFound {
            path: location.to_string(),
            source: Box::new(error),
        },
        io::ErrorKind::PermissionDenied => object_store::Error::PermissionDenied {
            path: location.to_string(),
            source: Box::new(error),
        },
        _ => generic(error),
    }
}

fn generic(error: impl std::error::Error + Send + Sync + 'static) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: Box::new(error),
    }
}

fn not_implemented(operation: &str) -> object_store::Error {
    object_store::Error::NotImplemented {
        operation: operation.to_owned(),
        implementer: STORE.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OsFileSystem;
    use object_store::ObjectStoreExt;

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn objects_round_trip_and_create_refuses_an_existing_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::open(Arc::new(OsFileSystem), dir.path().join("cloud")).unwrap();
        let at = RemotePath::from("game/alice/one.ksav");
        let create = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        block_on(async {
            store
                .put_opts(&at, PutPayload::from(b"first".to_vec()), create.clone())
                .await
                .unwrap();
            let again = store
                .put_opts(&at, PutPayload::from(b"second".to_vec()), create)
                .await;
            assert!(
                matches!(again, Err(object_store::Error::AlreadyExists { .. })),
                "{again:?}"
            );
            let read = store.get(&at).await.unwrap().bytes().await.unwrap();
            assert_eq!(&read[..], b"first");
            let listed = store
                .list_with_delimiter(Some(&RemotePath::from("game/alice")))
                .await;
            let listed = listed.unwrap();
            assert_eq!(listed.objects.len(), 1);
            assert_eq!(listed.objects[0].location, at);
            assert_eq!(listed.objects[0].size, 5);
            let root = store.list_with_delimiter(None).await.unwrap();
            assert_eq!(root.common_prefixes, [RemotePath::from("game")]);
            assert_eq!(store.list(None).count().await, 1);

            store
                .put(&at, PutPayload::from(b"replaced".to_vec()))
                .await
                .unwrap();
            let read = store.get_range(&at, 2..5).await.unwrap();
            assert_eq!(&read[..], b"pla");
            store.delete(&at).await.unwrap();
            store.delete(&at).await.unwrap();
            assert!(matches!(
                store.get(&at).await,
                Err(object_store::Error::NotFound { .. })
            ));
        });
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("cloud/game/alice"))
            .unwrap()
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn parts_that_look_like_traversal_stay_inside_the_root() {
        let root = Path::new("/saves/cloud");
        for location in ["../../etc/passwd", "a/../../b", "./x", "a//b"] {
            let path = file_of(root, &RemotePath::from(location));
            assert!(path.starts_with(root), "{location} → {}", path.display());
            assert!(
                path.components()
                    .all(|c| !matches!(c, std::path::Component::ParentDir)),
                "{location} → {}",
                path.display()
            );
        }
    }
}
