//! Credentials taken out of what a storage service answers.
//!
//! A service that refuses a request may quote it back: S3 answers a signature mismatch (403
//! `SignatureDoesNotMatch`) with a body holding `<AWSAccessKeyId>`, the `<StringToSign>` and
//! the `<CanonicalRequest>`, whose headers carry `x-amz-security-token`; a presigned URL in an
//! error carries `X-Amz-Credential` and `X-Amz-Security-Token`; a header dump carries
//! `Authorization`. The storage client puts that body into its error, and the error text is
//! logged and shown in `CloudStatus`. So every error that leaves the storage layer goes through
//! [`Secrets::scrub`], in two passes:
//!
//! 1. Every credential we were given (the URL's, those the storage client read from the
//!    environment, any a game gave) is replaced wherever it appears as written, percent-encoded
//!    or as the hex bytes S3 lists in `<CanonicalRequestBytes>`. Values shorter than
//!    [`MIN_SECRET_LEN`] are left to the second pass: they cannot be told from ordinary words
//!    (moto's `test`), and no real credential is that short.
//! 2. What carries a credential by its shape is hidden whether we were given it or not (a key
//!    from the environment, a proxy's token): the content of the XML elements in [`ELEMENTS`],
//!    the value of every header, query parameter or field named in [`FIELDS`], access key ids
//!    (`AKIA…`, `ASIA…`, `GOOG…`), PEM private keys, and opaque runs of 100 or more
//!    base64-like characters (session tokens, OAuth tokens).

/// What stands where a secret was.
pub(super) const REDACTED: &str = "<redacted>";
use std::fmt;

/// The shortest credential replaced wherever it appears (shorter values would hide every
/// match of them in a message).
pub const MIN_SECRET_LEN: usize = 8;

/// XML elements whose content is a credential or quotes the signed request (compared without
/// case and namespace prefix).
pub const ELEMENTS: &[&str] = &[
    "awsaccesskeyid",
    "accesskeyid",
    "secretaccesskey",
    "sessiontoken",
    "securitytoken",
    "token",
    "stringtosign",
    "stringtosignbytes",
    "signatureprovided",
    "signature",
    "canonicalrequest",
    "canonicalrequestbytes",
    "credential",
    "credentials",
    "authorization",
    "privatekey",
];

/// Headers, query parameters and fields whose value is a credential (compared without case):
/// `name: value`, `name=value`, `"name": "value"`, `name: Some("value")`.
pub const FIELDS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-amz-security-token",
    "x-amz-credential",
    "x-amz-signature",
    "x-goog-credential",
    "x-goog-signature",
    "x-goog-security-token",
    "x-api-key",
    "awsaccesskeyid",
    "accesskeyid",
    "secretaccesskey",
    "sessiontoken",
    "signature",
    "credential",
    "key_id",
    "secret_key",
    "access_key_id",
    "aws_access_key_id",
    "secret_access_key",
    "aws_secret_access_key",
    "session_token",
    "aws_session_token",
    "security_token",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "private_key",
    "private_key_id",
    "service_account_key",
    "google_service_account_key",
    "password",
    "secret",
    "sig",
];

/// Fields whose value runs to the end of the line (or its closing quote): it holds spaces and
/// commas (`AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`).
const WHOLE_LINE: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Prefixes of access key ids: AWS's (user, role, temporary, …) and Google's HMAC keys.
const KEY_ID_PREFIXES: &[&str] = &[
    "AKIA", "ASIA", "AIDA", "AROA", "AGPA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA", "APKA", "GOOG",
];

/// The shortest opaque run hidden as a token (session tokens are hundreds of characters).
const LONG_TOKEN: usize = 100;

/// The credentials to take out of a storage error, beside those found by shape (see the
/// [module docs](self)). Its `Debug` shows how many, never what.
#[derive(Clone, Default)]
pub(crate) struct Secrets {
    /// Every form of every credential, longest first (so one containing another goes whole).
    forms: Vec<String>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({} forms)", self.forms.len())
    }
}

impl Secrets {
    /// These secrets and `values` (those shorter than [`MIN_SECRET_LEN`] are left to the
    /// shapes).
    pub(crate) fn with<S: AsRef<str>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
        for value in values {
            let value = value.as_ref();
            if value.len() >= MIN_SECRET_LEN {
                self.forms.extend(forms_of(value));
            }
        }
        self.forms
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
        self
    }

    /// `text` with every credential taken out (both passes of the [module docs](self)).
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        scrub_shapes(&text)
    }
}

/// A credential as written, percent-encoded (upper and lower case hex), percent-decoded, and as
/// the space-separated hex bytes S3 lists in `<CanonicalRequestBytes>`.
fn forms_of(value: &str) -> Vec<String> {
    let encoded = |upper: bool| value.bytes().map(|b| uri_encoded(b, upper)).collect();
    let hex = |upper: bool| {
        let bytes = value.bytes().map(|b| match upper {
            true => format!("{b:02X}"),
            false => format!("{b:02x}"),
        });
        bytes.collect::<Vec<_>>().join(" ")
    };
    let mut forms = vec![value.to_owned(), encoded(true), encoded(false)];
    forms.extend([hex(false), hex(true), percent_decoded(value)]);
    forms.retain(|form| form.len() >= MIN_SECRET_LEN);
    forms
}

/// One byte as AWS's signing encodes it: unreserved characters as they are, others `%XX`
/// (upper- or lower-case hex).
fn uri_encoded(b: u8, upper: bool) -> String {
    match b {
        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
            char::from(b).to_string()
        }
        _ if upper => format!("%{b:02X}"),
        _ => format!("%{b:02x}"),
    }
}

/// `text` with everything that carries a credential by its shape hidden (the second pass).
pub fn scrub_shapes(text: &str) -> String {
    let text = pem_blocks(text);
    let text = xml_elements(&text);
    let text = named_values(&text);
    let text = key_ids(&text);
    long_tokens(&text)
}

/// PEM private keys (a service account key quoted back), from `-----BEGIN` to the matching
/// `-----END …-----` (or the end of the text).
fn pem_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN") {
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        let after = &rest[start..];
        rest = match after.find("-----END") {
            Some(end) => {
                let tail = &after[end + "-----END".len()..];
                tail.find("-----").map_or("", |close| &tail[close + 5..])
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The content of every element named in [`ELEMENTS`] (to its closing tag, or the end of a
/// truncated body).
fn xml_elements(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from) = (0, 0);
    while let Some(found) = lower[from..].find('<') {
        let open = from + found;
        from = open + 1;
        let name_end = lower[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
            .map_or(lower.len(), |end| from + end);
        let name = &lower[from..name_end];
        let local = name.rsplit(':').next().unwrap_or(name);
        if !ELEMENTS.contains(&local) {
            continue;
        }
        let content = match lower[name_end..].find('>') {
            Some(end) if lower[..name_end + end].ends_with('/') => continue,
            Some(end) => name_end + end + 1,
            None => name_end,
        };
        let close = format!("</{name}");
        let end = lower[content..]
            .find(&close)
            .map_or(lower.len(), |end| content + end);
        out.push_str(&text[copied..content]);
        out.push_str(REDACTED);
        (copied, from) = (end, end);
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether `b` may be part of a field name (so a name inside a longer one does not match).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The value of every field named in [`FIELDS`].
fn named_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut at) = (0, 0);
    while at < bytes.len() {
        // Names start with a letter, so `at` is then on a character boundary.
        let starts_name =
            bytes[at].is_ascii_alphabetic() && (at == 0 || !is_name_byte(bytes[at - 1]));
        let value = starts_name.then(|| field_value_at(&lower, at)).flatten();
        match value {
            Some((start, end)) => {
                out.push_str(&text[copied..start]);
                out.push_str(REDACTED);
                (copied, at) = (end, end);
            }
            None => at += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Where the value of a field named at `at` lies (`None`: no field there, or it is empty).
fn field_value_at(lower: &str, at: usize) -> Option<(usize, usize)> {
    let bytes = lower.as_bytes();
    let name = FIELDS
        .iter()
        .filter(|name| lower[at..].starts_with(*name))
        .find(|name| bytes.get(at + name.len()).is_none_or(|&b| !is_name_byte(b)))?;
    let mut i = at + name.len();
    let skip = |i: &mut usize, set: &[u8]| {
        while bytes.get(*i).is_some_and(|b| set.contains(b)) {
            *i += 1;
        }
    };
    skip(&mut i, b"\"'");
    skip(&mut i, b" \t");
    if !matches!(bytes.get(i), Some(b':' | b'=')) {
        return None;
    }
    i += 1;
    skip(&mut i, b" \t");
    if lower[i..].starts_with("some(") {
        i += "some(".len();
    }
    let quote = bytes.get(i).copied().filter(|b| matches!(b, b'"' | b'\''));
    i += usize::from(quote.is_some());
    let ends_value = |b: u8| match (quote, WHOLE_LINE.contains(name)) {
        (Some(q), _) => b == q || b == b'\n' || b == b'\r',
        (None, true) => matches!(b, b'\n' | b'\r' | b'<'),
        (None, false) => {
            b.is_ascii_whitespace() || b"&\"'<>,;)}]\\".contains(&b) || b.is_ascii_control()
        }
    };
    let end = bytes[i..]
        .iter()
        .position(|&b| ends_value(b))
        .map_or(bytes.len(), |end| i + end);
    (end > i).then_some((i, end))
}

/// Maximal runs of `[A-Za-z0-9]` (and `extra`) in `text`, as byte ranges.
fn runs(text: &str, extra: &[u8]) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let in_run = |b: u8| b.is_ascii_alphanumeric() || extra.contains(&b);
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !in_run(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && in_run(bytes[at]) {
            at += 1;
        }
        found.push((start, at));
    }
    found
}

/// `text` with the runs `hide` picks replaced.
fn hide_runs(text: &str, extra: &[u8], hide: impl Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in runs(text, extra) {
        if hide(&text[start..end]) {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Access key ids: a known prefix, then upper-case letters and digits, 16 to 128 in all.
fn key_ids(text: &str) -> String {
    hide_runs(text, b"", |run| {
        (16..=128).contains(&run.len())
            && KEY_ID_PREFIXES.iter().any(|prefix| run.starts_with(prefix))
            && run
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    })
}

/// Opaque runs of [`LONG_TOKEN`] or more base64-like characters holding upper- and lower-case
/// letters and digits (a path or a hash has not that many of all three in one run).
fn long_tokens(text: &str) -> String {
    hide_runs(text, b"+/=_%-", |run| {
        run.len() >= LONG_TOKEN
            && run.bytes().any(|b| b.is_ascii_uppercase())
            && run.bytes().any(|b| b.is_ascii_lowercase())
            && run.bytes().any(|b| b.is_ascii_digit())
    })
}

/// `value` percent-decoded, as a URL's query holds it (`+` is a space).
pub(super) fn percent_decoded(value: &str) -> String {
    url::form_urlencoded::parse(format!("v={value}").as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_ID: &str = "ASIAQNZGKIQY56JQ7WML";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY";

    /// An STS session token's shape: its usual opening, then some hundreds of base64 bytes.
    fn session_token() -> String {
        let mut token = "IQoJb3JpZ2luX2VjEJr//////////wEaCWV1LXdlc3QtMSJHMEUCIQD".to_owned();
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut state = 0x9E37_79B9_u32;
        for _ in 0..600 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            token.push(char::from(alphabet[state as usize % alphabet.len()]));
        }
        token + "=="
    }

    fn hex_bytes(text: &str) -> String {
        let bytes: Vec<String> = text.bytes().map(|b| format!("{b:02x}")).collect();
        bytes.join(" ")
    }

    /// What S3 answers a request signed with the wrong secret (403 `SignatureDoesNotMatch`),
    /// as the storage client reports it: the request's method and URL, then the body, which
    /// quotes the key id, the string to sign and the canonical request with the session token
    /// (as text and as hex bytes).
    pub(crate) fn signature_mismatch(key_id: &str, token: &str) -> String {
        let string_to_sign = "AWS4-HMAC-SHA256\n20261127T180000Z\n20261127/eu-west-1/s3/aws4_request\n9f1c0b7b3f6d4e1a2c5b8e7d6f4a3c2b1e0d9f8a7b6c5d4e3f2a1b0c9d8e7f6a";
        let canonical = format!(
            "PUT\n/saves/games/my-game/alice/manual-03.1764266400123.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav\n\ncontent-length:1234\nhost:saves.s3.eu-west-1.amazonaws.com\nif-none-match:*\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:20261127T180000Z\nx-amz-security-token:{token}\n\ncontent-length;host;if-none-match;x-amz-content-sha256;x-amz-date;x-amz-security-token\nUNSIGNED-PAYLOAD"
        );
        format!(
            "Error performing PUT https://saves.s3.eu-west-1.amazonaws.com/games/my-game/alice/manual-03.1764266400123.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav in 41ms - Server returned non-2xx status code: 403 Forbidden: <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><AWSAccessKeyId>{key_id}</AWSAccessKeyId><StringToSign>{string_to_sign}</StringToSign><SignatureProvided>4d3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b</SignatureProvided><StringToSignBytes>{}</StringToSignBytes><CanonicalRequest>{canonical}</CanonicalRequest><CanonicalRequestBytes>{}</CanonicalRequestBytes><RequestId>4442587FB7D0A2F9</RequestId><HostId>nbBzuDGXbFS3wnDb3rc+4oa3Kd7GNgcdIhYtBt3HSGvhUV4DQq8/z3n7wIJXOWW+MMLa2iu2JM0=</HostId></Error>",
            hex_bytes(string_to_sign),
            hex_bytes(&canonical),
        )
    }

    fn assert_hidden(scrubbed: &str, secrets: &[&str]) {
        for secret in secrets {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
    }

    #[test]
    fn a_signature_mismatch_keeps_no_credential_given_or_not() {
        let token = session_token();
        let body = signature_mismatch(KEY_ID, &token);
        let hex_token = hex_bytes(&token);
        let half_token = &token[token.len() / 2..];
        for secrets in [
            Secrets::default().with([KEY_ID, SECRET, &token]),
            Secrets::default(),
        ] {
            let scrubbed = secrets.scrub(&body);
            assert_hidden(&scrubbed, &[KEY_ID, half_token, &hex_token[..60]]);
            // What a person needs to find the cause is kept.
            for kept in [
                "403 Forbidden",
                "<Code>SignatureDoesNotMatch</Code>",
                "Check your key and signing method",
                "<RequestId>4442587FB7D0A2F9</RequestId>",
                "PUT https://saves.s3.eu-west-1.amazonaws.com/games/my-game/alice/",
            ] {
                assert!(scrubbed.contains(kept), "{kept} lost: {scrubbed}");
            }
        }
        // A body cut short (a client that truncates) hides the rest of the open element.
        let cut = &body[..body.find("x-amz-security-token:").unwrap() + 60];
        assert_hidden(&Secrets::default().scrub(cut), &[&token[..40]]);
    }

    #[test]
    fn headers_presigned_urls_and_fields_keep_no_credential() {
        let token = session_token();
        let cases = [
            format!(
                "authorization: AWS4-HMAC-SHA256 Credential={KEY_ID}/20261127/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024\nhost: saves"
            ),
            format!(
                "error sending request for url (https://saves.s3.amazonaws.com/a.ksav?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={KEY_ID}%2F20261127%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261127T180000Z&X-Amz-Expires=900&X-Amz-Security-Token={}&X-Amz-SignedHeaders=host&X-Amz-Signature=fe5f80f77d5fa3be)",
                token.replace('/', "%2F").replace('+', "%2B")
            ),
            format!(
                "headers: {{\"x-amz-security-token\": \"{token}\", \"authorization\": \"AWS4 {KEY_ID}\"}}"
            ),
            format!(
                "AwsCredential {{ key_id: \"{KEY_ID}\", secret_key: \"{SECRET}\", token: Some(\"{token}\") }}"
            ),
            format!("aws_secret_access_key={SECRET}&aws_session_token={token}"),
            format!(
                "<Credentials><AccessKeyId>{KEY_ID}</AccessKeyId><SecretAccessKey>{SECRET}</SecretAccessKey><SessionToken>{token}</SessionToken></Credentials>"
            ),
            format!(
                "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{SECRET}\\n-----END PRIVATE KEY-----\\n\"}}"
            ),
            format!("the key {KEY_ID} and the token {token} quoted bare"),
        ];
        for case in cases {
            let scrubbed = Secrets::default().scrub(&case);
            assert_hidden(
                &scrubbed,
                &[KEY_ID, SECRET, &token[20..80], "fe5f80f77d5fa3be"],
            );
        }
    }

    #[test]
    fn messages_without_credentials_are_left_as_they_are() {
        for message in [
            "Object at location games/my-game/alice/manual-03.1764266400123.3f9a1c0de2b4.6f1c0e2a6f1c0e2a6f1c0e2a6f1c0e2a.ksav not found: 404",
            "error sending request for url (http://127.0.0.1:9000/saves?list-type=2&prefix=games%2Fmy-game%2Falice%2F): connection refused",
            "Server returned non-2xx status code: 500 Internal Server Error: <Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>",
            "The request signature we calculated does not match the signature you provided.",
            "token bucket empty; sig handler; secret of the game",
            "sha256 9f1c0b7b3f6d4e1a2c5b8e7d6f4a3c2b1e0d9f8a7b6c5d4e3f2a1b0c9d8e7f6a",
        ] {
            assert_eq!(
                Secrets::default()
                    .with(["test", "minioadmin"])
                    .scrub(message),
                message
            );
        }
    }

    /// A field of an error body holding `secret`, by a name it may have.
    fn field(form: usize, name: &str, secret: &str) -> String {
        match form % 5 {
            0 => format!("<{name}>{secret}</{name}>"),
            1 => format!("{name}: {secret}"),
            2 => format!("?a=1&{name}={secret}&b=2"),
            3 => format!("{{\"{name}\": \"{secret}\"}}"),
            _ => format!("Config {{ {name}: Some(\"{secret}\") }}"),
        }
    }

    proptest::proptest! {
        /// A search: credentials given, at any place in any text (as written, percent-encoded
        /// or as hex bytes), never survive.
        #[test]
        fn given_credentials_never_survive_anywhere(
            secrets in proptest::collection::vec("[A-Za-z0-9+/=_-]{8,64}", 1..4),
            text in "\\PC{0,300}",
            places in proptest::collection::vec((0usize..400, 0usize..3), 1..8),
        ) {
            let mut text: Vec<char> = text.chars().collect();
            let mut written = Vec::new();
            for (i, (place, form)) in places.into_iter().enumerate() {
                let secret = &secrets[i % secrets.len()];
                let shown = match form {
                    0 => secret.clone(),
                    1 => secret.bytes().map(|b| uri_encoded(b, true)).collect(),
                    _ => hex_bytes(secret),
                };
                let at = place.min(text.len());
                text.splice(at..at, shown.chars());
                written.push(shown);
            }
            let text: String = text.into_iter().collect();
            let scrubbed = Secrets::default().with(&secrets).scrub(&text);
            for shown in written.iter().chain(&secrets) {
                proptest::prop_assert!(!scrubbed.contains(shown.as_str()), "{shown} in {scrubbed}");
            }
        }

        /// A search: credentials nobody gave us (the environment's), in any field that carries
        /// one, among any other text, never survive.
        #[test]
        fn credentials_in_their_fields_never_survive(
            key_id in "(AKIA|ASIA|GOOG1E)[A-Z0-9]{16}",
            secret in "[A-Za-z0-9+/]{40}",
            token in "[A-Za-z0-9+/]{90,500}",
            fragments in proptest::collection::vec((0usize..3, 0usize..64, "[ -~]{0,30}"), 1..10),
        ) {
            let token = format!("IQoJb3JpZ2lu{token}=");
            let names: Vec<&str> = ELEMENTS.iter().chain(FIELDS).copied().collect();
            let mut text = String::new();
            for (which, choice, filler) in fragments {
                let secret = [&key_id, &secret, &token][which];
                let name = names[choice % names.len()];
                let name = if choice % 2 == 0 { name.to_ascii_uppercase() } else { name.to_owned() };
                let form = if choice % 7 == 6 && which != 1 {
                    secret.clone() // bare: found by its shape
                } else if ELEMENTS.contains(&name.to_ascii_lowercase().as_str()) {
                    field(0, &name, secret)
                } else {
                    field(1 + choice % 4, &name, secret)
                };
                text.push_str(&format!("{filler}\n{form}\n"));
            }
            let scrubbed = Secrets::default().scrub(&text);
            for hidden in [&key_id, &secret, &token] {
                proptest::prop_assert!(!scrubbed.contains(hidden.as_str()), "{hidden} in {scrubbed}");
            }
        }
    }
}
