//! A tiny fault-injecting HTTP proxy in front of moto: one request per connection (it adds
//! `Connection: close` both ways), each passed through, answered with a 500, delayed, or held
//! until released, as the test says.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What the proxy does with the next requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Forward to the server.
    Pass,
    /// Answer `500 Internal Server Error` without forwarding.
    ServerError,
    /// Wait this long, then forward.
    Delay(Duration),
    /// Hold each request until [`Proxy::release`], then forward.
    Hold,
    /// Answer a `GET` whose path contains this with a `500`; forward the rest.
    ServerErrorOnGet(&'static str),
    /// Answer a `GET` whose path contains this with a body of this many bytes (whatever the
    /// listing said of its size); forward the rest.
    OversizedGet(&'static str, usize),
}

struct Shared {
    fault: Mutex<Fault>,
    released: Mutex<bool>,
    wake: Condvar,
    requests: AtomicUsize,
    held: AtomicUsize,
    stop: AtomicBool,
}

/// The running proxy; stops accepting when dropped.
pub struct Proxy {
    pub port: u16,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on a free port, forwarding to `upstream_port`.
    pub fn start(upstream_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            fault: Mutex::new(Fault::Pass),
            released: Mutex::new(false),
            wake: Condvar::new(),
            requests: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let shared = Arc::clone(&accepting);
                std::thread::spawn(move || serve(client, upstream_port, &shared));
            }
        });
        Proxy { port, shared }
    }

    /// The endpoint URL clients use.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Sets what happens to the next requests.
    pub fn set(&self, fault: Fault) {
        *self.shared.fault.lock().unwrap() = fault;
        *self.shared.released.lock().unwrap() = false;
    }

    /// Requests seen so far.
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Requests being held right now (under [`Fault::Hold`]).
    pub fn held(&self) -> usize {
        self.shared.held.load(Ordering::SeqCst)
    }

    /// Lets held requests go on (and later ones pass).
    pub fn release(&self) {
        *self.shared.fault.lock().unwrap() = Fault::Pass;
        *self.shared.released.lock().unwrap() = true;
        self.shared.wake.notify_all();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.release();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(mut client: TcpStream, upstream_port: u16, shared: &Shared) {
    let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&mut client) else {
        return;
    };
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let fault = *shared.fault.lock().unwrap();
    let is_get_of = |part: &str| {
        let line = String::from_utf8_lossy(&request[..request.len().min(1024)]).into_owned();
        line.starts_with("GET ") && line.lines().next().is_some_and(|l| l.contains(part))
    };
    match fault {
        Fault::Pass => {}
        Fault::ServerErrorOnGet(part) if !is_get_of(part) => {}
        Fault::OversizedGet(part, _) if !is_get_of(part) => {}
        Fault::ServerError | Fault::ServerErrorOnGet(_) => {
            let answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = client.write_all(answer.as_bytes());
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
        Fault::OversizedGet(_, len) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nETag: \"big\"\r\n\
                 Last-Modified: Mon, 23 Nov 2026 10:00:00 GMT\r\nConnection: close\r\n\r\n"
            );
            let _ = client.write_all(head.as_bytes());
            let _ = client.write_all(&vec![0x42; len]);
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
        Fault::Delay(delay) => std::thread::sleep(delay),
        Fault::Hold => {
            shared.held.fetch_add(1, Ordering::SeqCst);
            let mut released = shared.released.lock().unwrap();
            while !*released {
                released = shared.wake.wait(released).unwrap();
            }
            drop(released);
            shared.held.fetch_sub(1, Ordering::SeqCst);
        }
    }
    // The server may be gone (a test stopped it): the client then sees the connection close
    // without an answer, as it would from a crashed server.
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    if upstream
        .write_all(&with_connection_close(&request))
        .is_err()
    {
        let _ = client.shutdown(Shutdown::Both);
        return;
    }
    let mut response = Vec::new();
    let _ = upstream.read_to_end(&mut response);
    let _ = client.write_all(&with_connection_close(&response));
    let _ = client.shutdown(Shutdown::Both);
}

/// Reads one request: the head, then `Content-Length` bytes of body.
fn read_request(client: &mut TcpStream) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 64 * 1024];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let read = client.read(&mut buffer).ok().filter(|&n| n > 0)?;
        data.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length {
        let read = client.read(&mut buffer).ok().filter(|&n| n > 0)?;
        data.extend_from_slice(&buffer[..read]);
    }
    Some(data)
}

/// The same message with its `Connection` header replaced by `Connection: close`.
fn with_connection_close(message: &[u8]) -> Vec<u8> {
    let Some(head_end) = message.windows(4).position(|w| w == b"\r\n\r\n") else {
        return message.to_vec();
    };
    let head = String::from_utf8_lossy(&message[..head_end]);
    let mut out = String::new();
    for line in head.split("\r\n") {
        if !line.to_ascii_lowercase().starts_with("connection:") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&message[head_end + 4..]);
    bytes
}
