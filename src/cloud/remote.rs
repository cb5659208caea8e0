//! Where saves go in the cloud: the storage URL, and the names of uploaded files.
//!
//! # Layout
//!
//! Every file of a profile sits in one folder, `<prefix>/<game id>/<profile>/`, named
//!
//! `<slot>.<created ms>.<device id>.<save id>.ksav`, e.g.
//! `manual-03.1732250000123.3f9a1c0de2b4.6f1c…e2.ksav`
//!
//! - `<slot>` is the store's slot stem (`manual-03`, `auto-00`, `quick-00`);
//! - `<created ms>` is the save's creation time ([`SaveMeta::created_at`]), so a device can
//!   order the saves it has not downloaded yet;
//! - `<device id>` is the random id of the installation that made the save;
//! - `<save id>` is the save's random v4 id ([`SaveMeta::save_id`]), unique to that save.
//!
//! Names never collide across devices (the save id alone is unique), uploads are create-only
//! (`PutMode::Create`), so no device ever overwrites another's file, and a file is never
//! changed after upload. A downloaded file's name must agree with its metadata (slot, save id,
//! creation time), so a renamed file is refused.
//!
//! [`SaveMeta::created_at`]: crate::format::SaveMeta::created_at
//! [`SaveMeta::save_id`]: crate::format::SaveMeta::save_id

use super::error::CloudError;
use super::folder::FolderStore;
use super::listing::{Lister, ListingLimits};
use super::redact::{Secrets, UrlSecrets};
use crate::SlotId;
use crate::format::SaveMeta;
use crate::store::{OsFileSystem, SAVE_EXTENSION, parse_slot_stem, slot_stem};
use object_store::ObjectStore;
use object_store::list::PaginatedListStore;
use object_store::path::Path as RemotePath;
use object_store::{BackoffConfig, ClientOptions, RetryConfig};
use std::sync::Arc;
use std::time::Duration;
use url::Url;
use uuid::Uuid;

mod scrubbed;

use scrubbed::{ScrubbedPages, ScrubbedStore};

/// The name of one uploaded save (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemoteName {
    /// The slot it belongs to.
    pub slot: SlotId,
    /// Its creation time, milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// The installation that made it.
    pub device_id: String,
    /// Its save id.
    pub save_id: Uuid,
}

impl RemoteName {
    /// The name for a save with `meta`, made on `device_id` unless the metadata names another
    /// device.
    pub fn for_save(meta: &SaveMeta, device_id: &str) -> Self {
        let device_id = meta
            .device_id()
            .filter(|id| is_device_id(id))
            .unwrap_or(device_id);
        RemoteName {
            slot: meta.slot,
            created_ms: meta.created_at.unix_millis(),
            device_id: device_id.to_owned(),
            save_id: meta.save_id,
        }
    }

    /// Parses a file name; `None` for anything cloud sync does not write.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_suffix(SAVE_EXTENSION)?.strip_suffix('.')?;
        let mut parts = rest.split('.');
        let (slot, created, device, save) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || !is_device_id(device) {
            return None;
        }
        let parsed = RemoteName {
            slot: parse_slot_stem(slot)?,
            created_ms: created.parse().ok()?,
            device_id: device.to_owned(),
            save_id: Uuid::try_parse(save).ok()?,
        };
        // One spelling per save, so a file cannot be downloaded twice under two names.
        (parsed.to_string() == name).then_some(parsed)
    }
}

impl std::fmt::Display for RemoteName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}.{}.{}.{SAVE_EXTENSION}",
            slot_stem(self.slot),
            self.created_ms,
            self.device_id,
            self.save_id.simple()
        )
    }
}

/// A device id: 12 lowercase hex digits, random per installation and profile.
pub(crate) fn new_device_id() -> String {
    Uuid::new_v4().simple().to_string()[..12].to_owned()
}

pub(crate) fn is_device_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// How requests to the storage service behave.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestPolicy {
    /// The longest one request may take, transfer included (default 30 s).
    pub timeout: Duration,
    /// The longest connecting may take (default 5 s).
    pub connect_timeout: Duration,
    /// How often the storage client retries a failed request before the sync gives up until
    /// its next round (default 2; the sync's own backoff takes it from there).
    pub retries: usize,
}

impl Default for RequestPolicy {
    fn default() -> Self {
        RequestPolicy {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 2,
        }
    }
}

/// Whose clock dates the storage's uploads (an object's `last_modified`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadClock {
    /// The storage service's own (S3, GCS, in memory): a save was made by the time its upload
    /// is dated, whatever the clocks of the devices say. Sync then believes a save's creation
    /// time up to its upload time, so a device whose clock runs behind still puts another
    /// device's newer save on top of a conflict.
    Storage,
    /// The writing device's (a folder: the file's modification time, which a file-sync tool
    /// may carry over from the device that wrote it, however far ahead its clock runs). Only
    /// this device's clock judges a save's creation time.
    Writer,
}

/// An open connection to the storage and the folder of one profile in it.
///
/// Every error its storage gives is scrubbed of credentials before anything else sees it (see
/// [`redact`](super::redact)): those it was given ([`Remote::open`]'s URL and what the storage
/// client read from the environment, [`Remote::hiding`]'s) wherever they appear, and whatever
/// carries one by its shape (an S3 error body's `<AWSAccessKeyId>` and `<CanonicalRequest>`, an
/// `Authorization` header, a presigned URL's `X-Amz-Credential`, …).
#[derive(Clone)]
pub struct Remote {
    /// The storage, every error scrubbed (the sync's only way to it).
    pub(crate) store: Arc<dyn ObjectStore>,
    /// Its listing, every error scrubbed.
    pub(crate) lister: Lister,
    pub(crate) folder: RemotePath,
    pub(crate) listing: ListingLimits,
    /// Whose clock dates its uploads.
    pub(crate) upload_clock: UploadClock,
    /// The storage as given, kept (private to this module) only to be wrapped again when more
    /// credentials are to be hidden.
    given: (Arc<dyn ObjectStore>, Lister),
    /// The credentials hidden from its errors.
    secrets: Secrets,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("store", &self.store)
            .field("folder", &self.folder)
            .field("listing", &self.listing)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// A profile folder `<prefix>/<game_id>/<profile>` in `store`, listed through the store's
    /// streamed listing (cut into pages as [`listing`](super::listing) describes). Its upload
    /// times count as the writers' ([`UploadClock::Writer`]) unless
    /// [`dated_by`](Self::dated_by) says otherwise.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, game_id: &str, profile: &str) -> Self {
        let lister = Lister::Streamed(store.clone());
        let clock = UploadClock::Writer;
        Self::with_lister(store, lister, clock, prefix, game_id, profile)
    }

    /// A profile folder in `store`, listed page by page through `pages` (usually the same
    /// store: S3 and GCS list in pages), which lets a listing step past keys the storage client
    /// cannot read (see [`listing`](super::listing)). Its upload times count as the storage's
    /// own ([`UploadClock::Storage`]), as such services date them, unless
    /// [`dated_by`](Self::dated_by) says otherwise.
    pub fn paginated(
        store: Arc<dyn ObjectStore>,
        pages: Arc<dyn PaginatedListStore>,
        prefix: &str,
        game_id: &str,
        profile: &str,
    ) -> Self {
        let (lister, clock) = (Lister::Paginated(pages), UploadClock::Storage);
        Self::with_lister(store, lister, clock, prefix, game_id, profile)
    }

    fn with_lister(
        store: Arc<dyn ObjectStore>,
        lister: Lister,
        upload_clock: UploadClock,
        prefix: &str,
        game_id: &str,
        profile: &str,
    ) -> Self {
        let folder = RemotePath::from(prefix).join(game_id).join(profile);
        let secrets = Secrets::default();
        let (scrubbed, scrubbed_lister) = scrubbed((&store, &lister), &secrets);
        Remote {
            store: scrubbed,
            lister: scrubbed_lister,
            folder,
            listing: ListingLimits::default(),
            upload_clock,
            given: (store, lister),
            secrets,
        }
    }

    /// The same remote, also hiding `credentials` wherever its storage's errors quote them
    /// (as written, percent-encoded or as hex bytes; see [`redact`](super::redact)). For a
    /// store a game built itself with credentials of its own: what carries a credential by its
    /// shape is hidden already, these are hidden wherever they appear. Values shorter than
    /// [`MIN_SECRET_LEN`](super::redact::MIN_SECRET_LEN) cannot be told from words and are not.
    #[must_use]
    pub fn hiding<S: AsRef<str>>(mut self, credentials: impl IntoIterator<Item = S>) -> Self {
        self.secrets = self.secrets.with(credentials);
        let given = (&self.given.0, &self.given.1);
        (self.store, self.lister) = scrubbed(given, &self.secrets);
        self
    }

    /// The same remote, its upload times dated by `clock`'s owner.
    #[must_use]
    pub fn dated_by(mut self, clock: UploadClock) -> Self {
        self.upload_clock = clock;
        self
    }

    /// The same remote, listing at most what `limits` allow per sync round.
    #[must_use]
    pub fn with_listing(mut self, limits: ListingLimits) -> Self {
        self.listing = limits;
        self
    }

    /// Opens the storage named by `url`:
    ///
    /// | URL | storage |
    /// |-----|---------|
    /// | `s3://bucket/prefix` | Amazon S3; credentials and region from the usual `AWS_*` variables |
    /// | `s3://bucket/prefix?endpoint=http://127.0.0.1:9000` | an S3-compatible server (MinIO, Ceph, R2, moto, GCS interoperability) |
    /// | `gs://bucket/prefix` | Google Cloud Storage; credentials from `GOOGLE_SERVICE_ACCOUNT` etc. |
    /// | `file:///path/to/folder` | a local or network folder, written durably ([`FolderStore`]) |
    /// | `memory:///` | in memory (tests) |
    ///
    /// Query parameters are `object_store` configuration keys (`endpoint`, `region`,
    /// `access_key_id`, `secret_access_key`, `skip_signature`, …); an `http://` endpoint is
    /// allowed without TLS. An endpoint carrying a user name or password is refused (S3 takes
    /// `access_key_id` and `secret_access_key`), so no credential can end up in a request's
    /// URL and from there in an error message.
    ///
    /// A URL that does not open is [`CloudError::BadUrl`], holding the URL with its
    /// credentials hidden ([`RedactedUrl`](super::RedactedUrl)) and a reason scrubbed of them.
    pub fn open(
        url: &str,
        game_id: &str,
        profile: &str,
        policy: &RequestPolicy,
    ) -> Result<Self, CloudError> {
        let secrets = UrlSecrets::of(url);
        let bad = |reason: String| CloudError::BadUrl {
            reason: secrets.scrub(&reason),
            url: secrets.redacted.clone(),
        };
        let parsed = Url::parse(url).map_err(|error| bad(error.to_string()))?;
        let prefix = parsed.path().trim_matches('/').to_owned();
        let options: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
        match parsed.scheme() {
            "s3" => {
                let (s3, given) = open_s3(&parsed, &options, policy).map_err(bad)?;
                let s3 = Arc::new(s3);
                let remote = Remote::paginated(s3.clone(), s3, &prefix, game_id, profile);
                Ok(remote.hiding(secrets.hidden().iter().chain(&given)))
            }
            "gs" => {
                let (gcs, given) = open_gcs(&parsed, &options, policy).map_err(bad)?;
                let gcs = Arc::new(gcs);
                let remote = Remote::paginated(gcs.clone(), gcs, &prefix, game_id, profile);
                Ok(remote.hiding(secrets.hidden().iter().chain(&given)))
            }
            "file" => {
                let folder = parsed
                    .to_file_path()
                    .map_err(|()| bad("not a local path".to_owned()))?;
                // Written durably, as the store writes saves (see `folder.rs`).
                let local = FolderStore::open(Arc::new(OsFileSystem), folder)
                    .map_err(|error| bad(error.to_string()))?;
                Ok(Remote::new(Arc::new(local), "", game_id, profile))
            }
            "memory" => {
                let memory = Arc::new(object_store::memory::InMemory::new());
                let remote = Remote::new(memory, &prefix, game_id, profile);
                Ok(remote.dated_by(UploadClock::Storage))
            }
            other => Err(bad(format!(
                "unknown scheme {other:?} (s3, gs, file, memory)"
            ))),
        }
    }

    /// The storage client.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The profile's folder in the storage.
    pub fn folder(&self) -> &RemotePath {
        &self.folder
    }

    /// The full path of a file in the profile folder.
    pub fn path_of(&self, name: &RemoteName) -> RemotePath {
        self.folder.clone().join(name.to_string())
    }
}

/// `store` and `lister` with their every error scrubbed of `secrets` (see [`scrubbed`]).
fn scrubbed(
    (store, lister): (&Arc<dyn ObjectStore>, &Lister),
    secrets: &Secrets,
) -> (Arc<dyn ObjectStore>, Lister) {
    let store: Arc<dyn ObjectStore> = Arc::new(ScrubbedStore::new(store.clone(), secrets.clone()));
    let lister = match lister {
        Lister::Paginated(pages) => {
            Lister::Paginated(Arc::new(ScrubbedPages::new(pages.clone(), secrets.clone())))
        }
        Lister::Streamed(inner) => {
            Lister::Streamed(Arc::new(ScrubbedStore::new(inner.clone(), secrets.clone())))
        }
    };
    (store, lister)
}

fn has_user(url: &Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

fn bucket_url(url: &Url) -> String {
    format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default())
}

fn client_options(policy: &RequestPolicy, allow_http: bool) -> ClientOptions {
    ClientOptions::new()
        .with_timeout(policy.timeout)
        .with_connect_timeout(policy.connect_timeout)
        .with_allow_http(allow_http)
}

fn retry_config(policy: &RequestPolicy) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: policy.retries,
        retry_timeout: policy.timeout,
    }
}

/// The S3 store, and the credentials it was given (the URL's or the environment's), to hide.
fn open_s3(
    url: &Url,
    options: &[(String, String)],
    policy: &RequestPolicy,
) -> Result<(object_store::aws::AmazonS3, Vec<String>), String> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    let mut builder = AmazonS3Builder::from_env().with_url(bucket_url(url));
    let mut allow_http = false;
    for (key, value) in options {
        let key: AmazonS3ConfigKey = key.parse().map_err(|error| format!("{error}"))?;
        let endpoint = matches!(key, AmazonS3ConfigKey::Endpoint);
        if endpoint && Url::parse(value).is_ok_and(|url| has_user(&url)) {
            return Err("the endpoint carries a user name or password; give the credentials as access_key_id and secret_access_key instead".to_owned());
        }
        allow_http |= endpoint && value.starts_with("http://");
        builder = builder.with_config(key, value);
    }
    let credentials = [
        AmazonS3ConfigKey::AccessKeyId,
        AmazonS3ConfigKey::SecretAccessKey,
        AmazonS3ConfigKey::Token,
    ];
    let given = credentials
        .iter()
        .filter_map(|key| builder.get_config_value(key));
    let given = given.collect();
    let s3 = builder
        .with_client_options(client_options(policy, allow_http))
        .with_retry(retry_config(policy))
        .build()
        .map_err(|error| error.to_string())?;
    Ok((s3, given))
}

/// The GCS store, and the credentials it was given (the URL's or the environment's), to hide.
fn open_gcs(
    url: &Url,
    options: &[(String, String)],
    policy: &RequestPolicy,
) -> Result<(object_store::gcp::GoogleCloudStorage, Vec<String>), String> {
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
    let mut builder = GoogleCloudStorageBuilder::from_env().with_url(bucket_url(url));
    for (key, value) in options {
        let key: GoogleConfigKey = key.parse().map_err(|error| format!("{error}"))?;
        builder = builder.with_config(key, value);
    }
    let credentials = [
        GoogleConfigKey::ServiceAccountKey,
        GoogleConfigKey::BearerToken,
    ];
    let given = credentials
        .iter()
        .filter_map(|key| builder.get_config_value(key));
    let given = given.collect();
    let gcs = builder
        .with_client_options(client_options(policy, false))
        .with_retry(retry_config(policy))
        .build()
        .map_err(|error| error.to_string())?;
    Ok((gcs, given))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Timestamp;

    #[test]
    fn names_round_trip_and_stay_canonical() {
        let meta = SaveMeta {
            created_at: Timestamp::from_unix_millis(1_732_250_000_123),
            ..SaveMeta::new(SlotId::Manual(3))
        };
        let name = RemoteName::for_save(&meta, "3f9a1c0de2b4");
        let text = name.to_string();
        assert!(
            text.starts_with("manual-03.1732250000123.3f9a1c0de2b4."),
            "{text}"
        );
        assert_eq!(RemoteName::parse(&text), Some(name));
        for bad in [
            "manual-03.g000001.ksav",
            "manual-3.1.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav",
            "manual-03.1.3F9A1C0DE2B4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav",
            "manual-03.01.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav",
            "manual-03.1.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav.tmp",
        ] {
            assert_eq!(RemoteName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn urls_name_their_storage() {
        let policy = RequestPolicy::default();
        let remote = Remote::open(
            "s3://saves/games?endpoint=http://127.0.0.1:9&region=us-east-1&access_key_id=a&secret_access_key=b",
            "my-game",
            "alice",
            &policy,
        )
        .unwrap();
        assert_eq!(remote.folder.as_ref(), "games/my-game/alice");
        assert!(matches!(
            Remote::open("ftp://x/y", "g", "p", &policy),
            Err(CloudError::BadUrl { .. })
        ));
        assert!(matches!(
            Remote::open("s3://b/p?no_such_key=1", "g", "p", &policy),
            Err(CloudError::BadUrl { .. })
        ));
    }

    /// Finding 5: a URL with credentials that does not open (a misspelt option, an unknown
    /// scheme, credentials where they do not go) shows none of them in the error's `Display`
    /// or `Debug`, which the plugin logs and keeps in `CloudStatus`.
    #[test]
    fn a_url_that_does_not_open_shows_no_credential() {
        let policy = RequestPolicy::default();
        let secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
        let id = "AKIAIOSFODNN7EXAMPLE";
        for url in [
            format!(
                "s3://saves/games?region=us-east-1&access_key_id={id}&secret_acess_key={secret}"
            ),
            format!("s3://saves/games?access_key_id={id}&secret_access_key={secret}&regoin=x"),
            format!("s3://{id}:{secret}@saves/games?no_such_option=1"),
            format!("s3://saves/games?endpoint=http://{id}:{secret}@127.0.0.1:9&region=us-east-1"),
            format!("s3://saves/games?{secret}&access_key_id={id}"),
            format!("gs://saves/games?service_account_key={secret}&regoin={id}"),
            format!("ftp://saves/games?access_key_id={id}&secret_access_key={secret}"),
            format!("s3 ://saves/{id}/{secret}"),
        ] {
            let error = Remote::open(&url, "g", "p", &policy).unwrap_err();
            assert!(matches!(error, CloudError::BadUrl { .. }), "{error}");
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains(secret), "{shown}");
            assert!(!shown.contains(id), "{shown}");
        }
        // The misspelt option is named, so the mistake can be found.
        let url = format!("s3://saves/games?secret_acess_key={secret}");
        let error = Remote::open(&url, "g", "p", &policy).unwrap_err();
        assert!(error.to_string().contains("secret_acess_key"), "{error}");
    }

    /// Where a secret may sit in a URL.
    #[derive(Clone, Copy, Debug)]
    enum Place {
        /// The password of the URL's user.
        Password,
        /// The same, not percent-encoded (as a person may well paste it).
        RawPassword,
        /// The value of a credential option.
        Credential,
        /// The value of a misspelt option.
        Misspelt,
        /// A query part with no `=`.
        Bare,
        /// The password of the endpoint's user.
        EndpointPassword,
    }

    fn url_with(secret: &str, place: Place, extra: &str) -> String {
        let base = "s3://saves/games";
        let region = "region=us-east-1";
        match place {
            Place::Password | Place::RawPassword => {
                format!("s3://AKIDUSER:{secret}@saves/games?{region}&{extra}")
            }
            Place::Credential => format!("{base}?{region}&secret_access_key={secret}&{extra}"),
            Place::Misspelt => format!("{base}?{region}&secret_acess_key={secret}&{extra}"),
            Place::Bare => format!("{base}?{region}&{secret}&{extra}"),
            Place::EndpointPassword => {
                format!("{base}?endpoint=http://me:{secret}@127.0.0.1:9&{region}&{extra}")
            }
        }
    }

    proptest::proptest! {
        /// A search for a secret in text (mixed case and digits, as generated keys are): wherever
        /// a secret sits in a URL that does not open
        /// (whatever else makes it fail: an unknown option, a second misspelling), it appears
        /// neither in the error's `Display` nor in its `Debug`.
        #[test]
        fn no_secret_in_a_url_that_does_not_open_reaches_the_error(
            secret in "[A-Z][a-z][0-9][A-Za-z0-9+/=_-]{13,40}",
            place in proptest::sample::select(vec![
                Place::Password,
                Place::RawPassword,
                Place::Credential,
                Place::Misspelt,
                Place::Bare,
                Place::EndpointPassword,
            ]),
            extra in proptest::sample::select(vec!["no_such_option=1", "regoin=x", "skip_signature=maybe"]),
        ) {
            // Userinfo takes the secret percent-encoded, as a person would write it there.
            let encoded: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
            let in_url = match place {
                Place::Password | Place::EndpointPassword => encoded.as_str(),
                _ => secret.as_str(),
            };
            let url = url_with(in_url, place, extra);
            let Err(error) = Remote::open(&url, "g", "p", &RequestPolicy::default()) else {
                return Err(proptest::test_runner::TestCaseError::fail(format!("{url} opened")));
            };
            let shown = format!("{error} {error:?}");
            for form in [secret.as_str(), encoded.as_str(), &secret.replace('+', " ")] {
                proptest::prop_assert!(!shown.contains(form), "{form} in {shown}");
            }
            // The storage client may quote the part before a pasted secret's `=` alone (as an
            // unknown option's name): long enough to be a secret, it is hidden too.
            if let Some((before, _)) = secret.split_once('=').filter(|(b, _)| b.len() >= 8) {
                for form in [before, &before.replace('+', " ")] {
                    proptest::prop_assert!(!shown.contains(form), "{form} in {shown}");
                }
            }
        }
    }
}
