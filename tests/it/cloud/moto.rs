//! A real S3-compatible server for the cloud tests: moto's server mode (`moto[server]` on PyPI),
//! started on a free port and killed when the guard drops. Which moto runs, and its installation
//! when this machine has none, is [`moto_install`]'s.

use super::moto_install;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running moto server; killed on drop.
pub struct Moto {
    child: Option<Child>,
    pub port: u16,
}

impl Moto {
    /// Starts moto on a free port and waits until it answers HTTP.
    pub fn start() -> Moto {
        Moto::start_on(free_port())
    }

    /// Starts moto on `port` (a restart after [`stop`](Self::stop) reuses the port).
    pub fn start_on(port: u16) -> Moto {
        let child = spawn(port);
        let mut moto = Moto {
            child: Some(child),
            port,
        };
        moto.wait_ready();
        moto
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:5123`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket with a plain HTTP PUT (moto takes unsigned requests).
    pub fn create_bucket(&self, bucket: &str) {
        let (status, _) = http(self.port, &format!("PUT /{bucket} HTTP/1.1"), &[]);
        assert_eq!(status, 200, "moto refused to create bucket {bucket}");
    }

    /// Kills the server (its data goes with it: moto keeps everything in memory).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "moto (`{}`) exited with {status} before answering on port {}",
                    moto_install::launcher().describe(),
                    self.port
                );
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && http(self.port, "GET /moto-api/ HTTP/1.1", &[]).0 != 0
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "moto did not answer on port {} within 60 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spawn(port: u16) -> Child {
    let launcher = moto_install::launcher();
    launcher
        .command()
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start moto (`{}`): {error}", launcher.describe()))
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("bind a free port")
}

/// One HTTP/1.1 request with `Connection: close`; returns the status (0 when there was no
/// answer) and the body.
pub fn http(port: u16, request_line: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new());
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let head = format!(
        "{request_line}\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .is_err()
    {
        return (0, Vec::new());
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = match response.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(at) => response[at + 4..].to_vec(),
        None => Vec::new(),
    };
    (status, body)
}
