//! The storage as the sync sees it: every error of every operation scrubbed of credentials.
//!
//! A [`Remote`](super::Remote) holds its store and its lister only through these wrappers, so
//! no error of the storage client reaches the sync, and from there a `SyncRound`, the
//! `CloudStatus` or a log line, without having gone through [`scrub`]: its kind is kept (the
//! sync tells "already exists" and "not found" apart), its text is a [`RemoteError`].

use super::super::error::RemoteError;
use super::super::redact::Secrets;
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use object_store::list::{PaginatedListOptions, PaginatedListResult, PaginatedListStore};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, UploadPart,
};
use std::error::Error as StdError;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

type BoxedError = Box<dyn StdError + Send + Sync + 'static>;

/// `error` with its text scrubbed of `secrets` and of what carries a credential by its shape;
/// its kind and the path it names are kept. A path is one of ours, but a key listed back
/// (`InvalidPath`) is kept as it is: the listing reports it by name, and it is a file name in
/// the bucket, never a credential.
pub(crate) fn scrub(error: object_store::Error, secrets: &Secrets) -> object_store::Error {
    use object_store::Error as E;
    let text = |source: BoxedError| -> BoxedError {
        Box::new(RemoteError::scrubbed(source.as_ref(), secrets))
    };
    let path = |path: String| secrets.scrub(&path);
    match error {
        E::Generic { store, source } => E::Generic {
            store,
            source: text(source),
        },
        E::NotFound { path: p, source } => E::NotFound {
            path: path(p),
            source: text(source),
        },
        E::AlreadyExists { path: p, source } => E::AlreadyExists {
            path: path(p),
            source: text(source),
        },
        E::Precondition { path: p, source } => E::Precondition {
            path: path(p),
            source: text(source),
        },
        E::NotModified { path: p, source } => E::NotModified {
            path: path(p),
            source: text(source),
        },
        E::PermissionDenied { path: p, source } => E::PermissionDenied {
            path: path(p),
            source: text(source),
        },
        E::Unauthenticated { path: p, source } => E::Unauthenticated {
            path: path(p),
            source: text(source),
        },
        E::NotSupported { source } => E::NotSupported {
            source: text(source),
        },
        E::NotImplemented {
            operation,
            implementer,
        } => E::NotImplemented {
            operation: secrets.scrub(&operation),
            implementer: secrets.scrub(&implementer),
        },
        E::UnknownConfigurationKey { store, key } => E::UnknownConfigurationKey {
            store,
            key: secrets.scrub(&key),
        },
        E::InvalidPath { source } => E::InvalidPath { source },
        // A kind added later: its text, scrubbed, under the generic kind.
        other => E::Generic {
            store: "storage",
            source: Box::new(RemoteError::scrubbed(&other, secrets)),
        },
    }
}

/// A stream whose errors are scrubbed.
fn scrub_stream<T: Send + 'static>(
    stream: BoxStream<'static, object_store::Result<T>>,
    secrets: &Secrets,
) -> BoxStream<'static, object_store::Result<T>> {
    let secrets = secrets.clone();
    stream
        .map(move |item| item.map_err(|error| scrub(error, &secrets)))
        .boxed()
}

/// An `ObjectStore` whose every error is scrubbed (see the [module docs](self)).
pub(crate) struct ScrubbedStore {
    inner: Arc<dyn ObjectStore>,
    secrets: Secrets,
}

impl ScrubbedStore {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, secrets: Secrets) -> Self {
        ScrubbedStore { inner, secrets }
    }

    fn scrub<T>(&self, result: object_store::Result<T>) -> object_store::Result<T> {
        result.map_err(|error| scrub(error, &self.secrets))
    }
}

impl fmt::Display for ScrubbedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.secrets.scrub(&self.inner.to_string()))
    }
}

impl fmt::Debug for ScrubbedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = format!("{:?}", self.inner);
        write!(f, "ScrubbedStore({})", self.secrets.scrub(&inner))
    }
}

#[async_trait]
impl ObjectStore for ScrubbedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.scrub(self.inner.put_opts(location, payload, opts).await)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let upload = self.scrub(self.inner.put_multipart_opts(location, opts).await)?;
        Ok(Box::new(ScrubbedUpload {
            inner: upload,
            secrets: self.secrets.clone(),
        }))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let mut result = self.scrub(self.inner.get_opts(location, options).await)?;
        // The body is read later, and a read can fail too.
        result.payload = match result.payload {
            GetResultPayload::Stream(stream) => {
                GetResultPayload::Stream(scrub_stream(stream, &self.secrets))
            }
            #[allow(unreachable_patterns, reason = "a local file, with object_store's fs")]
            other => other,
        };
        Ok(result)
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.scrub(self.inner.get_ranges(location, ranges).await)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        scrub_stream(self.inner.delete_stream(locations), &self.secrets)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        scrub_stream(self.inner.list(prefix), &self.secrets)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        scrub_stream(self.inner.list_with_offset(prefix, offset), &self.secrets)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.scrub(self.inner.list_with_delimiter(prefix).await)
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.scrub(self.inner.copy_opts(from, to, options).await)
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.scrub(self.inner.rename_opts(from, to, options).await)
    }
}

/// A multipart upload whose every error is scrubbed.
#[derive(Debug)]
struct ScrubbedUpload {
    inner: Box<dyn MultipartUpload>,
    secrets: Secrets,
}

#[async_trait]
impl MultipartUpload for ScrubbedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let part = self.inner.put_part(data);
        let secrets = self.secrets.clone();
        Box::pin(async move { part.await.map_err(|error| scrub(error, &secrets)) })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let done = self.inner.complete().await;
        done.map_err(|error| scrub(error, &self.secrets))
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        let done = self.inner.abort().await;
        done.map_err(|error| scrub(error, &self.secrets))
    }
}

/// A paginated listing whose every error is scrubbed.
pub(crate) struct ScrubbedPages {
    inner: Arc<dyn PaginatedListStore>,
    secrets: Secrets,
}

impl ScrubbedPages {
    pub(crate) fn new(inner: Arc<dyn PaginatedListStore>, secrets: Secrets) -> Self {
        ScrubbedPages { inner, secrets }
    }
}

#[async_trait]
impl PaginatedListStore for ScrubbedPages {
    async fn list_paginated(
        &self,
        prefix: Option<&str>,
        opts: PaginatedListOptions,
    ) -> object_store::Result<PaginatedListResult> {
        let page = self.inner.list_paginated(prefix, opts).await;
        page.map_err(|error| scrub(error, &self.secrets))
    }
}
