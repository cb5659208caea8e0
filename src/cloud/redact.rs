//! Storage URLs with their credentials hidden: what errors, `Debug` output and logs show.
//!
//! A cloud URL may carry secrets (`?access_key_id=…&secret_access_key=…`, a user name and
//! password), and a URL that does not open is reported in [`CloudError::BadUrl`], which the
//! plugin logs and keeps in [`CloudStatus`]. So an error never holds the URL as given: it holds
//! a [`RedactedUrl`], which can only be made by redacting, and a reason that went through
//! `UrlSecrets::scrub`.
//!
//! # What is shown
//!
//! | part | shown |
//! |------|-------|
//! | scheme, host (the bucket), path (the prefix) | as given |
//! | user name and password | `<redacted>` |
//! | query option on the safe list ([`SAFE_OPTIONS`]: where the storage is, never who may use it) | key and value; an `endpoint` value holding `@`, `?` or `#`, or that is not a URL, as `<redacted>` |
//! | any other query option (`secret_access_key`, `token`, a misspelt key, …) | the key, the value as `<redacted>` |
//! | a query part that is not `key=value`, or whose key is neither a known option nor made of lowercase letters and `_` (a pasted secret may sit there) | `<redacted>` |
//! | fragment | `<redacted>` |
//! | a URL that does not parse | none of it: `<a URL that does not parse>` |
//!
//! A key is kept so a misspelt option can be found; its value is not, since the misspelt key
//! may well be `secret_acess_key`.
//!
//! # Storage errors
//!
//! What the storage answers is scrubbed too, before anything stores, shows or logs it: a
//! service may quote the request back (S3's 403 `SignatureDoesNotMatch` quotes the access key
//! id and the canonical request with the session token). Every error a [`Remote`] gives went
//! through [`scrub_shapes`] and the credentials it was given; what is hidden by shape is listed
//! in [`ELEMENTS`] and [`FIELDS`] (the rules are in `fields.rs`).
//!
//! [`Remote`]: super::Remote
//! [`CloudError::BadUrl`]: super::CloudError::BadUrl
//! [`CloudStatus`]: super::CloudStatus

use std::fmt;
use url::Url;

mod fields;

pub(crate) use fields::Secrets;
// What hides a secret, and a value's percent-decoded form: in `fields`, which the rest of this
// module builds on (no import back up).
pub use fields::{ELEMENTS, FIELDS, MIN_SECRET_LEN, scrub_shapes};
use fields::{REDACTED, percent_decoded};

/// The query options whose values are shown: where the storage is, never who may use it.
/// Compared after removing an `aws_` or `google_` prefix and lowercasing, as `object_store`
/// accepts `aws_region` for `region`.
pub const SAFE_OPTIONS: &[&str] = &[
    "endpoint",
    "endpoint_url",
    "region",
    "default_region",
    "bucket",
    "bucket_name",
    "skip_signature",
    "virtual_hosted_style_request",
    "allow_http",
];

/// A storage URL with its credentials replaced by `<redacted>` (see the [module docs](self)).
/// Made only by redacting a URL, so whatever holds one holds no secret of it.
///
/// ```
/// use bevy_keepsake::cloud::RedactedUrl;
///
/// let url = RedactedUrl::new("s3://saves/games?region=eu-west-1&secret_access_key=hunter2");
/// assert_eq!(url.as_str(), "s3://saves/games?region=eu-west-1&secret_access_key=<redacted>");
/// assert!(!format!("{url:?}").contains("hunter2"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RedactedUrl(String);

impl RedactedUrl {
    /// `url` with its credentials hidden.
    pub fn new(url: &str) -> Self {
        UrlSecrets::of(url).redacted
    }

    /// The redacted text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedactedUrl({:?})", self.0)
    }
}

/// A URL's redacted form and the secrets taken out of it, to scrub them from any text that
/// may quote them (the storage client's own error messages).
pub(crate) struct UrlSecrets {
    pub(crate) redacted: RedactedUrl,
    /// Every hidden value, longest first (so a secret containing another is replaced whole).
    secrets: Vec<String>,
}

impl UrlSecrets {
    /// Redacts `url`.
    pub(crate) fn of(url: &str) -> Self {
        let mut secrets = Vec::new();
        let redacted = match Url::parse(url) {
            Ok(parsed) if !misread_user(url, &parsed) => redact(&parsed, &mut secrets),
            _ => {
                // Nothing can be told apart: the whole text is the secret.
                secrets.push(url.to_owned());
                "<a URL that does not parse>".to_owned()
            }
        };
        secrets.retain(|secret| !secret.is_empty());
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        UrlSecrets {
            redacted: RedactedUrl(redacted),
            secrets,
        }
    }

    /// Every value the redacted form hides.
    pub(crate) fn hidden(&self) -> &[String] {
        &self.secrets
    }

    /// `text` with every secret of the URL replaced by `<redacted>`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }
}

/// Whether the parser did not see a user the text has: an `@` before the query whose left
/// part it read as something else (`s3://id:12/se@bucket` parses as the host `id`, the port
/// `12` and the path `/se@bucket`, leaving the password in the path).
fn misread_user(text: &str, parsed: &Url) -> bool {
    let before_query = text.split(['?', '#']).next().unwrap_or_default();
    before_query.contains('@') && parsed.username().is_empty() && parsed.password().is_none()
}

/// The redacted text of a parsed URL; what it hides is added to `secrets`.
fn redact(url: &Url, secrets: &mut Vec<String>) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let has_user = !url.username().is_empty() || url.password().is_some();
    if has_user {
        secrets.extend(decoded_forms(url.username()));
        secrets.extend(url.password().map(decoded_forms).unwrap_or_default());
        // Cleared here and written back as plain text below: the parser would percent-encode
        // the placeholder's angle brackets.
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
    }
    let mut text = shown.to_string();
    if has_user && let Some(at) = text.find("://") {
        text.insert_str(at + 3, &format!("{REDACTED}@"));
    }
    if let Some(query) = url.query() {
        text.push('?');
        text.push_str(&redact_query(url.scheme(), query, secrets));
    }
    if let Some(fragment) = url.fragment() {
        secrets.extend(decoded_forms(fragment));
        text.push('#');
        text.push_str(REDACTED);
    }
    text
}

/// The query with every value but the safe options' hidden.
fn redact_query(scheme: &str, query: &str, secrets: &mut Vec<String>) -> String {
    let parts: Vec<String> = query
        .split('&')
        .map(|part| match part.split_once('=') {
            Some((key, value)) if is_option_name(scheme, key) && is_safe_option(key) => {
                format!("{key}={}", shown_value(key, value, secrets))
            }
            Some((key, value)) if is_option_name(scheme, key) => {
                secrets.extend(decoded_forms(value));
                format!("{key}={REDACTED}")
            }
            // Not an option: a pasted secret, maybe with `=` in it (base64 padding). The
            // storage client may quote either side of the `=` alone ("key '…' is not known"),
            // so each side is a secret of its own, as is the whole.
            _ => {
                secrets.extend(decoded_forms(part));
                // Sides too short to be a secret would hide every match in a message.
                let sides = part.split_once('=').into_iter().flat_map(|(k, v)| [k, v]);
                for side in sides.filter(|side| side.len() >= 8) {
                    secrets.extend(decoded_forms(side));
                }
                REDACTED.to_owned()
            }
        })
        .collect();
    parts.join("&")
}

/// Whether `key` names an option on [`SAFE_OPTIONS`].
fn is_safe_option(key: &str) -> bool {
    let name = key.to_ascii_lowercase();
    let name = name
        .strip_prefix("aws_")
        .or_else(|| name.strip_prefix("google_"))
        .unwrap_or(&name);
    SAFE_OPTIONS.contains(&name)
}

/// A safe option's value as shown: as given, except an endpoint that may carry more than where
/// the storage is. One whose text (decoded) holds `@`, `?` or `#`, or that does not parse as a
/// URL, is hidden whole: its parts cannot be told apart safely (`http://me:pa/ss@host` parses
/// as the host `me` with the path `/ss@host`).
fn shown_value(key: &str, value: &str, secrets: &mut Vec<String>) -> String {
    if !key.to_ascii_lowercase().contains("endpoint") {
        return value.to_owned();
    }
    let decoded = percent_decoded(value);
    if !decoded.contains(['@', '?', '#']) && Url::parse(&decoded).is_ok() {
        return value.to_owned();
    }
    secrets.extend(decoded_forms(value));
    REDACTED.to_owned()
}

/// A query value as written and as the storage client sees it (percent- and `+`-decoded).
fn decoded_forms(value: &str) -> Vec<String> {
    let decoded = percent_decoded(value);
    if decoded == value {
        vec![value.to_owned()]
    } else {
        vec![value.to_owned(), decoded]
    }
}

/// Whether a query key is shown: an option the storage knows, or one that looks like an option
/// name (lowercase letters and `_`, at most 40), as a misspelt option does. Anything else may be
/// a pasted secret where a key should be (`?wJalrXUt…=`), and is hidden whole.
fn is_option_name(scheme: &str, key: &str) -> bool {
    let known = match scheme {
        "s3" => key.parse::<object_store::aws::AmazonS3ConfigKey>().is_ok(),
        "gs" => key.parse::<object_store::gcp::GoogleConfigKey>().is_ok(),
        _ => false,
    };
    known
        || ((1..=40).contains(&key.len())
            && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    #[test]
    fn credentials_are_hidden_and_where_the_storage_is_is_shown() {
        let encoded = "wJalrXUtnFEMI%2FK7MDENG%2BbPxRfiCYEXAMPLEKEY";
        let url = format!(
            "s3://saves/games?endpoint=http://127.0.0.1:9000&region=eu-west-1&access_key_id=AKIAEXAMPLE&secret_acess_key={encoded}&token=t0ken"
        );
        let secrets = UrlSecrets::of(&url);
        assert_eq!(
            secrets.redacted.as_str(),
            "s3://saves/games?endpoint=http://127.0.0.1:9000&region=eu-west-1&access_key_id=<redacted>&secret_acess_key=<redacted>&token=<redacted>"
        );
        let message = format!("failed with {SECRET} and {encoded} and AKIAEXAMPLE");
        let scrubbed = secrets.scrub(&message);
        for secret in [SECRET, encoded, "AKIAEXAMPLE"] {
            assert!(!scrubbed.contains(secret), "{scrubbed}");
        }
        assert!(!secrets.scrub("region eu-west-1").contains(REDACTED));
    }

    #[test]
    fn user_names_passwords_fragments_and_odd_queries_are_hidden() {
        for (url, secret) in [
            ("s3://AKIA:hunter2@saves/games", "hunter2"),
            ("s3://AKIA:hunter2@saves/games", "AKIA"),
            (
                "s3://saves/games?endpoint=http://me:hunter2@minio:9000",
                "hunter2",
            ),
            ("s3://saves/games?hunter2", "hunter2"),
            ("s3://saves/games?a%20b=hunter2", "hunter2"),
            (
                "s3://saves/games?wJalrXUtnFEMI0K7MDENG=",
                "wJalrXUtnFEMI0K7MDENG",
            ),
            ("s3://saves/games#hunter2", "hunter2"),
            ("s3://AKIA:12/hunter2@saves/games", "hunter2"),
            ("s3://saves/games?aws_secret_access_key=hunter2", "hunter2"),
            ("not a url hunter2", "hunter2"),
        ] {
            let secrets = UrlSecrets::of(url);
            let shown = format!("{} {:?}", secrets.redacted, secrets.redacted);
            assert!(!shown.contains(secret), "{url}: {shown}");
            assert!(!secrets.scrub(url).contains(secret), "{url}");
        }
        let url = RedactedUrl::new("s3://saves/games?aws_region=eu-west-1&skip_signature=true");
        assert_eq!(
            url.as_str(),
            "s3://saves/games?aws_region=eu-west-1&skip_signature=true"
        );
    }
}
