//! Listing a profile's cloud folder: page by page, in key order, past keys the storage client
//! cannot read, and no more of it per round than [`ListingLimits`] allow.
//!
//! # Keys that are not paths
//!
//! `object_store` reads every listed key as a [`Path`](object_store::path::Path), and refuses
//! keys with an empty segment (`a//b`) or a `.` or `..` segment, which S3 and GCS store happily.
//! Its S3 and GCS clients refuse the whole page such a key is on, so one stray object would stop
//! every download. A page refused for a key is asked for again at half the size, down to one
//! key: the pages before the key are kept, and a page of one key that is refused is that key,
//! which the next page starts after (the request's `start-after`). So a stray key costs about
//! `log2(page_objects)` extra requests, once per round, and is reported as
//! [`Refused`](super::Refused) once (the sync state remembers it).
//!
//! # One code path
//!
//! Stores with paginated listing ([`PaginatedListStore`]: S3, GCS) are asked for pages directly.
//! Any other store ([`Remote::new`](super::remote::Remote::new): memory, a folder, a game's own) is
//! listed through an adapter that gives it the same interface: each page scans the store's
//! listing and keeps only the `max` smallest keys after the page's start (memory bounded by the
//! page, whatever the listing's order), and refuses a page holding a key the store could not
//! read, as S3's client does. The recovery above is the same for both.
//!
//! # Limits
//!
//! A round looks at no more than [`ListingLimits::objects_per_round`] keys, asked for
//! [`ListingLimits::page_objects`] at a time, in no more than [`ListingLimits::requests_per_round`]
//! requests (stray keys cost requests); what it keeps is bounded by that (the saves' names
//! and sizes, the stray keys). A round that stops at the limit records where it stopped, and
//! the next round lists on from there; after the folder's last key the next round starts from
//! its first again. Only a listing that went from the first key to the last lets the sync state
//! forget files that left the cloud.

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use object_store::list::{PaginatedListOptions, PaginatedListResult, PaginatedListStore};
use object_store::path::{self, Path as RemotePath};
use object_store::{ListResult, ObjectMeta, ObjectStore};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// How much of the cloud folder one sync round lists (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListingLimits {
    /// Object names asked for per request (default 1000, the most S3 returns in one page).
    pub page_objects: usize,
    /// Object names looked at per round, over all its pages (default 20,000: a few megabytes of
    /// names at most). A folder holding more is listed over several rounds.
    pub objects_per_round: usize,
    /// Listing requests per round (default 200: the 20 pages of a full round, and about 18
    /// stray objects at some 10 requests each). A round that runs out lists on next time.
    pub requests_per_round: usize,
}

impl Default for ListingLimits {
    fn default() -> Self {
        ListingLimits {
            page_objects: 1000,
            objects_per_round: 20_000,
            requests_per_round: 200,
        }
    }
}

/// How a remote's folder is listed: by the store's own pages, or through the adapter.
#[derive(Clone)]
pub(crate) enum Lister {
    /// The store lists in pages (S3, GCS).
    Paginated(Arc<dyn PaginatedListStore>),
    /// The store only streams its listing (memory, a folder); pages are cut from the stream.
    Streamed(Arc<dyn ObjectStore>),
}

/// What one round's listing found.
#[derive(Debug)]
pub(crate) struct Listing<T> {
    /// What the caller kept of the objects directly in the folder, in key order.
    pub(crate) kept: Vec<T>,
    /// Keys the storage client cannot read as paths, relative to the folder.
    pub(crate) unreadable: Vec<String>,
    /// Whether the listing went from the folder's first key to its last.
    pub(crate) whole: bool,
    /// Where the next round's listing starts (`None`: from the first key).
    pub(crate) resume_after: Option<String>,
}

/// Lists `folder` through `lister` from after `start_after` (the key a capped round stopped
/// at), within `limits`, keeping what `keep` makes of each object directly in the folder (given
/// its name there; `None` drops it at once). Only a request the storage did not answer is an
/// error.
pub(crate) async fn list_folder<T>(
    (lister, folder): (&Lister, &RemotePath),
    limits: ListingLimits,
    start_after: Option<String>,
    keep: impl Fn(&str, ObjectMeta) -> Option<T>,
) -> object_store::Result<Listing<T>> {
    let per_round = limits.objects_per_round.max(1);
    let prefix = format!("{folder}/");
    let mut pages = Pages {
        lister,
        folder,
        prefix: &prefix,
        after: start_after.clone(),
        requests_left: limits.requests_per_round.max(2),
    };
    let mut listing = Listing {
        kept: Vec::new(),
        unreadable: Vec::new(),
        whole: false,
        resume_after: None,
    };
    let mut looked_at = 0;
    let mut reached_end = false;
    while looked_at < per_round {
        let max = limits.page_objects.clamp(1, per_round - looked_at);
        let Some(page) = pages.next(max).await? else {
            break;
        };
        // At least one per page, so a storage that answers empty pages cannot keep a round going.
        looked_at += (page.objects.len() + usize::from(page.unreadable.is_some())).max(1);
        for object in page.objects {
            let name = object.location.as_ref().strip_prefix(&prefix);
            let name = name.filter(|name| !name.contains('/')).map(str::to_owned);
            listing
                .kept
                .extend(name.and_then(|name| keep(&name, object)));
        }
        let relative = |key: String| key.strip_prefix(&prefix).map_or(key.clone(), str::to_owned);
        listing.unreadable.extend(page.unreadable.map(relative));
        if page.last {
            reached_end = true;
            break;
        }
    }
    listing.whole = reached_end && start_after.is_none();
    listing.resume_after = if reached_end { None } else { pages.after };
    Ok(listing)
}

/// One page as the listing uses it.
struct Page {
    /// Objects with readable keys, in key order.
    objects: Vec<ObjectMeta>,
    /// A key the storage client could not read (a page of its own).
    unreadable: Option<String>,
    /// Whether no key follows.
    last: bool,
}

/// The pages of one listing, and where the next one starts.
struct Pages<'a> {
    lister: &'a Lister,
    folder: &'a RemotePath,
    /// The folder's key prefix, with its trailing `/`.
    prefix: &'a str,
    /// The last key listed (the next page starts after it).
    after: Option<String>,
    /// Requests this round may still make.
    requests_left: usize,
}

impl Pages<'_> {
    /// The next page of at most `max` keys. A page refused for a key the client cannot read is
    /// asked for again at half the size; a page of one key refused is that key. `None` once the
    /// round's requests are spent.
    async fn next(&mut self, max: usize) -> object_store::Result<Option<Page>> {
        let mut size = max;
        loop {
            let Some(left) = self.requests_left.checked_sub(1) else {
                return Ok(None);
            };
            self.requests_left = left;
            match self.request(size).await {
                Ok(result) => return Ok(Some(self.took(result))),
                Err(error) => {
                    let Some(key) = unreadable_key(&error) else {
                        return Err(error);
                    };
                    if size > 1 {
                        // With one request left, one key: a round always gets past something.
                        size = if self.requests_left <= 1 { 1 } else { size / 2 };
                        continue;
                    }
                    // A key that does not sort after the page's start would be asked for
                    // again and again: the storage is not listing in key order.
                    if self.after.as_ref().is_some_and(|after| key <= *after) {
                        return Err(error);
                    }
                    self.after = Some(key.clone());
                    return Ok(Some(Page {
                        objects: Vec::new(),
                        unreadable: Some(key),
                        last: false,
                    }));
                }
            }
        }
    }

    /// The page an answer makes, and where the next one starts: after the last key. A key is
    /// known only as its path, which drops a trailing `/` (a folder marker, `sub/`, reads as
    /// `sub`); keys come in key order, so a path that does not sort after the last one is such
    /// a marker, already listed or of no use (a folder is never a save): it is passed over and
    /// the next page starts after its key, the path and a `/`. Without this a marker at the end
    /// of a page would be listed again and again.
    fn took(&mut self, result: PaginatedListResult) -> Page {
        let mut objects = Vec::with_capacity(result.result.objects.len());
        for object in result.result.objects {
            let key = object.location.to_string();
            if self.after.as_ref().is_some_and(|after| key <= *after) {
                self.after = Some(format!("{key}/"));
            } else {
                self.after = Some(key);
                objects.push(object);
            }
        }
        Page {
            objects,
            unreadable: None,
            last: result.page_token.is_none(),
        }
    }

    async fn request(&self, max: usize) -> object_store::Result<PaginatedListResult> {
        match self.lister {
            Lister::Paginated(store) => {
                let options = PaginatedListOptions {
                    offset: self.after.clone(),
                    max_keys: Some(max),
                    ..PaginatedListOptions::default()
                };
                store.list_paginated(Some(self.prefix), options).await
            }
            Lister::Streamed(store) => {
                let stream = store.list(Some(self.folder));
                smallest_after(stream, self.after.as_deref(), max).await
            }
        }
    }
}

/// The page of a streamed listing: the `max` smallest keys after `after`, whatever order the
/// stream lists in, holding no more than `max + 1` entries at a time. Refused, as S3's client
/// refuses a page, when a key the store could not read is among them.
async fn smallest_after(
    mut stream: BoxStream<'static, object_store::Result<ObjectMeta>>,
    after: Option<&str>,
    max: usize,
) -> object_store::Result<PaginatedListResult> {
    let mut kept = BinaryHeap::with_capacity(max + 1);
    let mut more = false;
    while let Some(item) = stream.next().await {
        let entry = match item {
            Ok(meta) => Entry {
                key: meta.location.to_string(),
                item: Ok(meta),
            },
            Err(error) => match unreadable_key(&error) {
                Some(key) => Entry {
                    key,
                    item: Err(error),
                },
                None => return Err(error),
            },
        };
        if after.is_some_and(|after| entry.key.as_str() <= after) {
            continue;
        }
        kept.push(entry);
        if kept.len() > max {
            kept.pop();
            more = true;
        }
    }
    let mut objects = Vec::with_capacity(kept.len());
    for entry in kept.into_sorted_vec() {
        objects.push(entry.item?);
    }
    Ok(PaginatedListResult {
        result: ListResult {
            common_prefixes: Vec::new(),
            objects,
            extensions: Default::default(),
        },
        page_token: more.then(String::new),
    })
}

/// A listed key and what the store made of it, ordered by the key alone.
struct Entry {
    key: String,
    item: object_store::Result<ObjectMeta>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// The key of a listed object the storage client could not read as a path, when that is what
/// `error` says.
pub(crate) fn unreadable_key(error: &object_store::Error) -> Option<String> {
    match error {
        object_store::Error::InvalidPath {
            source:
                path::Error::EmptySegment { path }
                | path::Error::BadSegment { path, .. }
                | path::Error::NonUnicode { path, .. },
        } => Some(path.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;

    fn object(key: &str) -> object_store::Result<ObjectMeta> {
        Ok(ObjectMeta {
            location: RemotePath::parse(key).unwrap(),
            last_modified: Default::default(),
            size: 1,
            e_tag: None,
            version: None,
        })
    }

    fn bad(key: &str) -> object_store::Result<ObjectMeta> {
        Err(RemotePath::parse(key).unwrap_err().into())
    }

    async fn page_of(
        items: Vec<object_store::Result<ObjectMeta>>,
        after: Option<&str>,
        max: usize,
    ) -> object_store::Result<(Vec<String>, bool)> {
        let page = smallest_after(stream::iter(items).boxed(), after, max).await?;
        let keys = page.result.objects.iter().map(|o| o.location.to_string());
        Ok((keys.collect(), page.page_token.is_some()))
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        futures_util::FutureExt::now_or_never(future).expect("a stream of ready items")
    }

    #[test]
    fn a_streamed_page_is_the_smallest_keys_after_its_start_in_any_order() {
        let items = || vec![object("f/c"), object("f/a"), object("f/d"), object("f/b")];
        let page = block_on(page_of(items(), None, 2)).unwrap();
        assert_eq!(page, (vec!["f/a".to_owned(), "f/b".to_owned()], true));
        let page = block_on(page_of(items(), Some("f/b"), 2)).unwrap();
        assert_eq!(page, (vec!["f/c".to_owned(), "f/d".to_owned()], false));
    }

    #[test]
    fn a_streamed_page_holding_an_unreadable_key_is_refused_naming_it() {
        let items = || vec![object("f/c"), bad("f/x//y"), object("f/a")];
        let error = block_on(page_of(items(), None, 3)).unwrap_err();
        assert_eq!(unreadable_key(&error).as_deref(), Some("f/x//y"));
        // Pages that end before the key, or start after it, are not refused.
        let page = block_on(page_of(items(), None, 2)).unwrap();
        assert_eq!(page, (vec!["f/a".to_owned(), "f/c".to_owned()], true));
        let page = block_on(page_of(items(), Some("f/x//y"), 3)).unwrap();
        assert_eq!(page, (Vec::new(), false));
    }

    /// Raw keys listed as S3 lists them: in byte order after a start key, each read as a path
    /// (a trailing `/` dropped), a page holding a key that is not a path refused whole.
    struct RawKeys(Vec<String>);

    impl RawKeys {
        fn page(
            &self,
            options: &PaginatedListOptions,
        ) -> object_store::Result<PaginatedListResult> {
            let after = |key: &&String| options.offset.as_ref().is_none_or(|offset| *key > offset);
            let mut keys: Vec<&String> = self.0.iter().filter(after).collect();
            let max = options.max_keys.unwrap_or(1000);
            let more = keys.len() > max;
            keys.truncate(max);
            let mut objects = Vec::new();
            for key in keys {
                objects.push(ObjectMeta {
                    location: RemotePath::parse(key)?,
                    last_modified: Default::default(),
                    size: 1,
                    e_tag: None,
                    version: None,
                });
            }
            Ok(PaginatedListResult {
                result: ListResult {
                    common_prefixes: Vec::new(),
                    objects,
                    extensions: Default::default(),
                },
                page_token: more.then(String::new),
            })
        }
    }

    /// `#[async_trait]`'s form of the trait method, written out.
    impl PaginatedListStore for RawKeys {
        fn list_paginated<'life0, 'life1, 'async_trait>(
            &'life0 self,
            _prefix: Option<&'life1 str>,
            options: PaginatedListOptions,
        ) -> std::pin::Pin<
            Box<
                dyn std::future::Future<Output = object_store::Result<PaginatedListResult>>
                    + Send
                    + 'async_trait,
            >,
        >
        where
            'life0: 'async_trait,
            'life1: 'async_trait,
            Self: 'async_trait,
        {
            Box::pin(std::future::ready(self.page(&options)))
        }
    }

    /// Lists the folder `f` of `keys` round after round from the start until a round reaches
    /// its last key; returns each round's kept names and unreadable keys.
    fn one_cycle(keys: Vec<String>, limits: ListingLimits) -> Vec<(Vec<String>, Vec<String>)> {
        let lister = Lister::Paginated(Arc::new(RawKeys(keys)));
        let folder = RemotePath::from("f");
        let mut rounds = Vec::new();
        let mut start = None;
        loop {
            assert!(
                rounds.len() < 500,
                "the listing does not reach the folder's end"
            );
            let keep = |name: &str, _| Some(name.to_owned());
            let listing = list_folder((&lister, &folder), limits, start.clone(), keep);
            let listing = block_on(listing).expect("the store always answers");
            assert_eq!(
                listing.whole,
                start.is_none() && listing.resume_after.is_none()
            );
            rounds.push((listing.kept, listing.unreadable));
            match listing.resume_after {
                Some(next) => start = Some(next),
                None => return rounds,
            }
        }
    }

    proptest::proptest! {
        /// Whatever the keys (paths, folder markers, keys with empty, `.` and `..` parts,
        /// keys in sub-folders) and whatever the limits, one cycle of rounds lists every
        /// readable key directly in the folder once (a folder marker, `a/`, at most once: it
        /// reads as the path `a`, and is passed over where it cannot be told from a key already
        /// listed), reports every unreadable one once, and no round keeps more than its limit.
        #[test]
        fn a_cycle_of_rounds_lists_every_key_once_within_the_limits(
            names in proptest::collection::btree_set("[ab./]{1,5}", 0..40),
            page_objects in 1usize..6,
            objects_per_round in 1usize..14,
            requests_per_round in 0usize..30,
        ) {
            let keys: Vec<String> = names.iter().map(|name| format!("f/{name}")).collect();
            let limits = ListingLimits { page_objects, objects_per_round, requests_per_round };
            let rounds = one_cycle(keys.clone(), limits);

            // Names every cycle must list, and names it may list (folder markers').
            let mut expected_kept = std::collections::BTreeSet::new();
            let mut markers = std::collections::BTreeSet::new();
            let mut expected_bad = std::collections::BTreeSet::new();
            for key in &keys {
                match RemotePath::parse(key) {
                    Ok(path) => {
                        let name = path.as_ref().strip_prefix("f/").filter(|n| !n.contains('/'));
                        let name = name.map(str::to_owned);
                        if key.ends_with('/') {
                            markers.extend(name);
                        } else {
                            expected_kept.extend(name);
                        }
                    }
                    Err(_) => {
                        expected_bad.insert(key[2..].to_owned());
                    }
                }
            }
            let mut kept = Vec::new();
            let mut bad = Vec::new();
            for (round_kept, round_bad) in rounds {
                proptest::prop_assert!(round_kept.len() <= objects_per_round);
                kept.extend(round_kept);
                bad.extend(round_bad);
            }
            let kept_set: std::collections::BTreeSet<String> = kept.iter().cloned().collect();
            proptest::prop_assert_eq!(kept.len(), kept_set.len(), "listed twice: {:?}", kept);
            proptest::prop_assert!(kept_set.is_superset(&expected_kept), "{:?}", kept_set);
            let may: std::collections::BTreeSet<String> =
                expected_kept.union(&markers).cloned().collect();
            proptest::prop_assert!(kept_set.is_subset(&may), "{:?}", kept_set);
            let bad_set: std::collections::BTreeSet<String> = bad.iter().cloned().collect();
            proptest::prop_assert_eq!(bad.len(), bad_set.len(), "reported twice: {:?}", bad);
            proptest::prop_assert_eq!(bad_set, expected_bad);
        }
    }
}
