//! The cloud every simulated device shares: objects kept by their raw key (so keys no
//! `object_store::path::Path` can hold exist, as they do in a real bucket written by other
//! tools), a clock that is the simulation's, and faults on cue. Each device reaches it through
//! its own [`SimRemote`], which fails once that device's process has died.

use super::disk::SimDisk;
use async_trait::async_trait;
use bevy_keepsake::cloud::object_store::list::{
    PaginatedListOptions, PaginatedListResult, PaginatedListStore,
};
use bevy_keepsake::cloud::object_store::path::Path;
use bevy_keepsake::cloud::object_store::{
    self, Attributes, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// A fault armed on the cloud, for the next calls of any device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloudFault {
    /// The next `calls` requests fail (offline, a server error, a timeout).
    Down { calls: u8 },
    /// The next upload lands, and its answer is lost: the client sees an error.
    LostAnswer,
    /// The next `calls` requests are refused with a body that quotes the request, as S3
    /// answers a signature it does not accept: the access key id, the session token and the
    /// signature in it (see [`SECRETS`]).
    Refuses { calls: u8 },
}

/// The credentials the simulated client signs its requests with: no error text or status a
/// device shows may hold one.
pub const SECRETS: [&str; 3] = [
    "AKIASIMULATEDKEY0042",
    "FwoGZXIvYXdzEPb//////////wEaDNsimulatedSessionToken0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/==",
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
];

/// What a refusing storage answers (see [`CloudFault::Refuses`]).
fn refusal(key: &str) -> object_store::Error {
    let [key_id, token, signature] = SECRETS;
    let body = format!(
        "Client error with status 403 Forbidden: <?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated \
         does not match the signature you provided.</Message><AWSAccessKeyId>{key_id}\
         </AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256\n20261127T120000Z\n20261127/eu-west-1/s3/\
         aws4_request</StringToSign><SignatureProvided>{signature}</SignatureProvided>\
         <CanonicalRequest>PUT\n/{key}\n\nhost:saves.s3.amazonaws.com\nx-amz-security-token:{token}\
         </CanonicalRequest></Error>; request headers: {{\"authorization\": \"AWS4-HMAC-SHA256 \
         Credential={key_id}/20261127/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, \
         Signature={signature}\", \"x-amz-security-token\": \"{token}\"}}"
    );
    object_store::Error::Generic {
        store: "S3",
        source: body.into(),
    }
}

/// How many bytes of an object one chunk of a download carries, as an HTTP client streams a
/// body: a download never arrives as one allocation the size of the object.
const CHUNK: usize = 64 << 10;

/// What the cloud did, for the run's report and the memory bound.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloudCounts {
    /// Requests a fault failed.
    pub faults: usize,
    /// The largest object a download was answered with since the last
    /// [`SimCloud::take_largest_read`].
    pub largest_read: u64,
}

/// One object.
#[derive(Clone, Debug)]
struct Object {
    data: Bytes,
    /// When it was written, on the simulation's clock.
    modified_ms: i64,
    /// The size listings report, when they understate it (a hostile or broken storage).
    listed_len: Option<u64>,
}

#[derive(Debug, Default)]
struct Cloud {
    objects: BTreeMap<String, Object>,
    now_ms: i64,
    down: u8,
    refuses: u8,
    lost_answer: bool,
    counts: CloudCounts,
}

/// The shared cloud.
#[derive(Clone, Debug, Default)]
pub struct SimCloud(Arc<Mutex<Cloud>>);

impl SimCloud {
    fn lock(&self) -> MutexGuard<'_, Cloud> {
        self.0.lock().unwrap()
    }

    /// Sets the simulation's time, which new objects are stamped with.
    pub fn set_now(&self, ms: i64) {
        self.lock().now_ms = ms;
    }

    pub fn arm(&self, fault: CloudFault) {
        let mut cloud = self.lock();
        match fault {
            CloudFault::Down { calls } => cloud.down = calls,
            CloudFault::LostAnswer => cloud.lost_answer = true,
            CloudFault::Refuses { calls } => cloud.refuses = calls,
        }
    }

    pub fn heal(&self) {
        let mut cloud = self.lock();
        cloud.down = 0;
        cloud.refuses = 0;
        cloud.lost_answer = false;
    }

    pub fn counts(&self) -> CloudCounts {
        self.lock().counts
    }

    /// The largest object downloaded since the last call, and starts counting again.
    pub fn take_largest_read(&self) -> u64 {
        std::mem::take(&mut self.lock().counts.largest_read)
    }

    /// Writes an object behind every device's back (another tool, an attacker, a bug); a
    /// `listed_len` makes listings report that size instead of its own.
    pub fn put_raw(&self, key: String, data: Bytes, listed_len: Option<u64>) {
        let mut cloud = self.lock();
        let modified_ms = cloud.now_ms;
        let object = Object {
            data,
            modified_ms,
            listed_len,
        };
        cloud.objects.insert(key, object);
    }

    /// The keys and bytes of every object (shared, not copied), for picking one to copy.
    pub fn objects(&self) -> Vec<(String, Bytes)> {
        let cloud = self.lock();
        let objects = cloud.objects.iter();
        objects.map(|(k, o)| (k.clone(), o.data.clone())).collect()
    }

    /// A device's way in.
    pub fn remote_for(&self, disk: &SimDisk) -> SimRemote {
        SimRemote {
            cloud: self.clone(),
            disk: disk.clone(),
        }
    }
}

/// One device's client of the shared cloud.
#[derive(Clone, Debug)]
pub struct SimRemote {
    cloud: SimCloud,
    disk: SimDisk,
}

fn failure(what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "sim",
        source: what.to_owned().into(),
    }
}

fn meta_of(key: &str, object: &Object) -> object_store::Result<ObjectMeta> {
    Ok(ObjectMeta {
        location: Path::parse(key)?,
        last_modified: chrono::DateTime::from_timestamp_millis(object.modified_ms)
            .unwrap_or_default(),
        size: object.listed_len.unwrap_or(object.data.len() as u64),
        e_tag: None,
        version: None,
    })
}

impl SimRemote {
    /// Counts a request and fails it when the cloud is down or this device's process died.
    fn answer(&self, key: &str) -> object_store::Result<MutexGuard<'_, Cloud>> {
        if self.disk.is_dead() {
            return Err(failure("the process was killed"));
        }
        let mut cloud = self.cloud.lock();
        if cloud.down > 0 {
            cloud.down -= 1;
            cloud.counts.faults += 1;
            return Err(failure("the storage does not answer"));
        }
        if cloud.refuses > 0 {
            cloud.refuses -= 1;
            cloud.counts.faults += 1;
            return Err(refusal(key));
        }
        Ok(cloud)
    }

    /// The objects under `prefix` (as a folder), by raw key.
    fn under(cloud: &Cloud, prefix: Option<&Path>) -> Vec<(String, Object)> {
        let prefix = prefix.map(|p| format!("{p}/")).unwrap_or_default();
        let objects = cloud.objects.range(prefix.clone()..);
        objects
            .take_while(|(key, _)| key.starts_with(&prefix))
            .map(|(key, object)| (key.clone(), object.clone()))
            .collect()
    }
}

impl std::fmt::Display for SimRemote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimRemote")
    }
}

/// Pages as S3 answers them: the keys after the offset (or the page token) that start with the
/// raw prefix, in key order, at most `max_keys`; a key no `Path` can hold fails the whole page
/// (its path in the error), as `object_store`'s S3 client fails it.
#[async_trait]
impl PaginatedListStore for SimRemote {
    async fn list_paginated(
        &self,
        prefix: Option<&str>,
        opts: PaginatedListOptions,
    ) -> object_store::Result<PaginatedListResult> {
        let cloud = self.answer(prefix.unwrap_or_default())?;
        let prefix = prefix.unwrap_or_default().to_owned();
        let after = opts.page_token.or(opts.offset).unwrap_or_default();
        let max = opts.max_keys.unwrap_or(1000).max(1);
        let mut keys = cloud
            .objects
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter(|(key, _)| **key > after);
        let page: Vec<(String, Object)> = keys
            .by_ref()
            .take(max)
            .map(|(key, object)| (key.clone(), object.clone()))
            .collect();
        let more = keys.next().is_some();
        let objects = page
            .iter()
            .map(|(key, object)| meta_of(key, object))
            .collect::<object_store::Result<Vec<_>>>()?;
        let page_token = page.last().filter(|_| more).map(|(key, _)| key.clone());
        Ok(PaginatedListResult {
            result: ListResult {
                common_prefixes: Vec::new(),
                objects,
                extensions: Default::default(),
            },
            page_token,
        })
    }
}

#[async_trait]
impl ObjectStore for SimRemote {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let key = location.to_string();
        let mut cloud = self.answer(&key)?;
        if matches!(opts.mode, PutMode::Create) && cloud.objects.contains_key(&key) {
            return Err(object_store::Error::AlreadyExists {
                path: key,
                source: "exists".into(),
            });
        }
        let data: Bytes = payload.into();
        let modified_ms = cloud.now_ms;
        let object = Object {
            data,
            modified_ms,
            listed_len: None,
        };
        cloud.objects.insert(key, object);
        if std::mem::take(&mut cloud.lost_answer) {
            cloud.counts.faults += 1;
            return Err(failure("the answer to the upload was lost"));
        }
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        _location: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(object_store::Error::NotImplemented {
            operation: "multipart".into(),
            implementer: "SimRemote".into(),
        })
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let key = location.to_string();
        let mut cloud = self.answer(&key)?;
        let Some(object) = cloud.objects.get(&key).cloned() else {
            return Err(object_store::Error::NotFound {
                path: key,
                source: "no such object".into(),
            });
        };
        let mut meta = meta_of(&key, &object)?;
        meta.size = object.data.len() as u64;
        let data = if options.head {
            Bytes::new()
        } else {
            object.data
        };
        let largest = &mut cloud.counts.largest_read;
        *largest = (*largest).max(data.len() as u64);
        let range = 0..data.len() as u64;
        let chunks: Vec<object_store::Result<Bytes>> = (0..data.len())
            .step_by(CHUNK)
            .map(|at| Ok(data.slice(at..(at + CHUNK).min(data.len()))))
            .collect();
        let stream = futures_util::stream::iter(chunks).boxed();
        Ok(GetResult {
            payload: GetResultPayload::Stream(stream),
            meta,
            range,
            attributes: Attributes::default(),
            extensions: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let this = self.clone();
        locations
            .map(move |location| {
                let location = location?;
                this.answer(location.as_ref())?
                    .objects
                    .remove(location.as_ref());
                Ok(location)
            })
            .boxed()
    }

    /// Every object under the prefix; a key no `Path` can hold is an error item, as
    /// `LocalFileSystem` reports a file it cannot name, and the stream goes on.
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let prefix_text = prefix.map(|p| p.to_string()).unwrap_or_default();
        let items: Vec<object_store::Result<ObjectMeta>> = match self.answer(&prefix_text) {
            Err(error) => vec![Err(error)],
            Ok(cloud) => Self::under(&cloud, prefix)
                .iter()
                .map(|(key, object)| meta_of(key, object))
                .collect(),
        };
        futures_util::stream::iter(items).boxed()
    }

    /// The objects directly in the folder, as S3's client answers: one key no `Path` can hold
    /// fails the whole answer.
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let folder = prefix.map(|p| format!("{p}/")).unwrap_or_default();
        let cloud = self.answer(&folder)?;
        let mut objects = Vec::new();
        let mut common_prefixes = Vec::new();
        for (key, object) in Self::under(&cloud, prefix) {
            match key[folder.len()..].split_once('/') {
                None => objects.push(meta_of(&key, &object)?),
                Some((sub, _)) => {
                    let sub = Path::parse(format!("{folder}{sub}"))?;
                    if common_prefixes.last() != Some(&sub) {
                        common_prefixes.push(sub);
                    }
                }
            }
        }
        Ok(ListResult {
            common_prefixes,
            objects,
            extensions: Default::default(),
        })
    }

    async fn copy_opts(
        &self,
        _from: &Path,
        _to: &Path,
        _options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        Err(object_store::Error::NotImplemented {
            operation: "copy".into(),
            implementer: "SimRemote".into(),
        })
    }
}
