//! A storage service that quotes the request back in its error, as S3 does for a signature
//! mismatch (403 `SignatureDoesNotMatch`: the access key id, the string to sign and the
//! canonical request with its `x-amz-security-token`, as text and as hex bytes). Nothing of the
//! credentials may reach the sync round's error, the `CloudStatus` or the log.
//!
//! moto does not quote these fields, so the other cloud tests cannot see this: here a tiny
//! server on 127.0.0.1 answers every request with that 403, quoting the request it got.

use super::{Device, GAME, quick_policy};
use bevy::log::tracing_subscriber;
use bevy::prelude::*;
use bevy_keepsake::SlotId;
use bevy_keepsake::cloud::{CloudExitUploadEnded, CloudPlugin, CloudStatus, Remote};
use bevy_keepsake::plugin::SaveTarget;
use bevy_keepsake::prelude::*;
use bevy_keepsake::store::StoreConfig;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Credentials of the shapes AWS gives: a temporary key id, a secret and an STS session token.
const KEY_ID: &str = "ASIAQNZGKIQY56JQ7WML";
const SECRET: &str = "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY";

fn session_token() -> String {
    let mut token = "IQoJb3JpZ2luX2VjEJr//////////wEaCWV1LXdlc3QtMSJHMEUCIQD".to_owned();
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x2545_F491_u32;
    for _ in 0..500 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        token.push(char::from(alphabet[state as usize % alphabet.len()]));
    }
    token + "=="
}

/// The cloud URL with the credentials in it, as a game may give them.
fn url_with_credentials(endpoint: &str, token: &str) -> String {
    let token: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
    format!(
        "s3://saves/games?endpoint={endpoint}&region=us-east-1&access_key_id={KEY_ID}&secret_access_key={SECRET}&token={token}"
    )
}

/// Whose credentials the server quotes.
#[derive(Clone, Copy)]
enum Quote {
    /// Those the request was signed with (what S3 does).
    Request,
    /// Others, which the game never gave (a key from the environment, a proxy's).
    Foreign,
}

/// The key id and token of the foreign credentials.
const FOREIGN_KEY_ID: &str = "AKIAZ7RQX3T2LMNOPQ45";

fn hex_bytes(text: &str) -> String {
    let bytes: Vec<String> = text.bytes().map(|b| format!("{b:02x}")).collect();
    bytes.join(" ")
}

/// S3's answer to a request signed with the wrong secret, quoting the request.
fn signature_mismatch(request_line: &str, headers: &[(String, String)], quote: Quote) -> String {
    let header = |name: &str| {
        let found = headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name));
        found.map_or("", |(_, value)| value.as_str()).to_owned()
    };
    let authorization = header("authorization");
    let (key_id, token) = match quote {
        Quote::Request => {
            let credential = authorization.split("Credential=").nth(1).unwrap_or("");
            let key_id = credential.split('/').next().unwrap_or("").to_owned();
            (key_id, header("x-amz-security-token"))
        }
        Quote::Foreign => (FOREIGN_KEY_ID.to_owned(), foreign_token()),
    };
    let mut parts = request_line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let signed = ["host", "x-amz-content-sha256", "x-amz-date"];
    let lines: Vec<String> = signed
        .iter()
        .map(|name| format!("{name}:{}", header(name)))
        .chain([format!("x-amz-security-token:{token}")])
        .collect();
    let canonical = format!(
        "{method}\n{path}\n{query}\n{}\n\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\nUNSIGNED-PAYLOAD",
        lines.join("\n")
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n20261127/us-east-1/s3/aws4_request\n9f1c0b7b3f6d4e1a2c5b8e7d6f4a3c2b1e0d9f8a7b6c5d4e3f2a1b0c9d8e7f6a",
        header("x-amz-date")
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><AWSAccessKeyId>{key_id}</AWSAccessKeyId><StringToSign>{string_to_sign}</StringToSign><SignatureProvided>{}</SignatureProvided><StringToSignBytes>{}</StringToSignBytes><CanonicalRequest>{canonical}</CanonicalRequest><CanonicalRequestBytes>{}</CanonicalRequestBytes><RequestId>4442587FB7D0A2F9</RequestId><HostId>nbBzuDGXbFS3wnDb3rc+4oa3Kd7GNgcdIhYtBt3HSGvhUV4DQq8/z3n7wIJXOWW+MMLa2iu2JM0=</HostId></Error>",
        authorization.rsplit("Signature=").next().unwrap_or(""),
        hex_bytes(&string_to_sign),
        hex_bytes(&canonical),
    )
}

fn foreign_token() -> String {
    session_token()
        .chars()
        .rev()
        .collect::<String>()
        .replace('=', "A")
        + "=="
}

/// A server on 127.0.0.1 that answers every request with [`signature_mismatch`]; it stops
/// when dropped, and by itself after [`MAX_REQUESTS`] (a client that never stops asking).
struct Quoting403 {
    port: u16,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const MAX_REQUESTS: usize = 500;

impl Quoting403 {
    fn start(quote: Quote) -> Quoting403 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test server");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let (stopping, counting) = (stop.clone(), served.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming().take(MAX_REQUESTS) {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                // A request the client gave up on mid-way is no failure of the server.
                if let Ok(stream) = stream
                    && answer(stream, quote).is_ok()
                {
                    counting.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Quoting403 {
            port,
            stop,
            served,
            thread: Some(thread),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Quoting403 {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept; it then sees the flag. A failed connect means it has ended.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request (headers, then as much body as it declares) and answers it with the 403.
fn answer(stream: TcpStream, quote: Quote) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse::<u64>().ok())
        .unwrap_or(0);
    std::io::copy(&mut reader.by_ref().take(length), &mut std::io::sink())?;
    let body = signature_mismatch(request_line.trim_end(), &headers, quote);
    let head = request_line.starts_with("HEAD ");
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        if head { "" } else { body.as_str() }
    )?;
    stream.flush()
}

/// Every log line of this test process from the first call on (info and above, as a game
/// logs), for a test to look through.
fn captured_log() -> &'static Mutex<Vec<u8>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&log);
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&writer)))
            .finish();
        bevy::log::tracing::subscriber::set_global_default(subscriber)
            .expect("no other test sets a global log subscriber");
        log
    })
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log from byte `start` on.
fn log_since(start: usize) -> String {
    String::from_utf8_lossy(&captured_log().lock().unwrap()[start..]).into_owned()
}

/// Panics if `text` holds any of `credentials`, or a long piece of one (a session token cut
/// anywhere), as text or as hex bytes.
fn assert_no_credential(what: &str, text: &str, credentials: &[&str]) {
    for credential in credentials {
        let pieces = [
            credential.to_string(),
            credential[credential.len() / 2..].to_owned(),
            credential[..credential.len() / 2].to_owned(),
            hex_bytes(&credential[..12]),
        ];
        for piece in pieces {
            assert!(!text.contains(&piece), "{what} holds {piece}:\n{text}");
        }
    }
}

#[test]
fn a_sync_round_against_a_storage_quoting_the_request_shows_no_credential() {
    let token = session_token();
    for quote in [Quote::Request, Quote::Foreign] {
        let server = Quoting403::start(quote);
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::new(dir.path());
        let url = url_with_credentials(&server.endpoint(), &token);
        let remote = Remote::open(&url, GAME, "default", &quick_policy()).unwrap();
        let mut device = Device::on_remote(dir, config, remote, "desk");
        device.save(SlotId::Manual(0));
        let round = device.upload();
        let error = round.error.clone().expect("the upload is refused");
        // The answer's body reached the error (so the check below looks at it)...
        assert!(error.contains("SignatureDoesNotMatch"), "{error}");
        assert!(server.served.load(Ordering::SeqCst) > 0);
        // ... without a credential: neither those the game gave nor others.
        let shown = format!("{error}\n{:?}", round.connection);
        let foreign = foreign_token();
        let credentials = [KEY_ID, SECRET, &token, FOREIGN_KEY_ID, &foreign];
        assert_no_credential("the round", &shown, &credentials);
    }
}

#[derive(Resource, Default)]
struct Exits(Vec<CloudExitUploadEnded>);

#[test]
fn the_cloud_status_and_the_log_show_no_credential_a_storage_quoted() {
    let log_start = captured_log().lock().unwrap().len();
    let token = session_token();
    let server = Quoting403::start(Quote::Request);
    let root = tempfile::tempdir().unwrap();
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(
            KeepsakePlugins::new(GAME)
                .save_root(root.path())
                .set(ExitSavePlugin {
                    save_on_exit: SaveOnExit::On {
                        target: SaveTarget::Slot(SlotId::Manual(3)),
                        max_wait: Duration::from_secs(20),
                    },
                })
                .disable::<AutosavePlugin>(),
        )
        .add_plugins(
            CloudPlugin::new(url_with_credentials(&server.endpoint(), &token))
                .device_name("handheld")
                .sync_every(None)
                .requests(quick_policy()),
        )
        .init_resource::<Exits>()
        .add_observer(|e: On<CloudExitUploadEnded>, mut exits: ResMut<Exits>| {
            exits.0.push(e.event().clone())
        });
    app.update();
    app.world_mut()
        .write_message(SaveRequest::slot(SlotId::Manual(0)));
    super::wait_for("the upload to be refused", || {
        app.update();
        let status = app.world().resource::<CloudStatus>();
        status.pending > 0 && status.last_error.is_some()
    });
    let status = format!("{:?}", app.world().resource::<CloudStatus>());
    assert!(status.contains("SignatureDoesNotMatch"), "{status}");
    assert_no_credential("the CloudStatus", &status, &[KEY_ID, SECRET, &token]);

    // The exit's upload fails too, and its warning names why, in the log.
    app.world_mut().write_message(AppExit::Success);
    app.update();
    assert_eq!(app.world().resource::<Exits>().0.len(), 1);
    let log = log_since(log_start);
    assert!(
        log.contains("did not reach the cloud") && log.contains("SignatureDoesNotMatch"),
        "the exit's warning is logged with the storage's answer:\n{log}"
    );
    assert_no_credential("the log", &log, &[KEY_ID, SECRET, &token]);
}
