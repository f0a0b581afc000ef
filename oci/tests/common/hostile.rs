#![allow(dead_code)]
//! A hostile registry for the tests: a tiny HTTP/1.1 server on 127.0.0.1
//! that serves one toolgate artifact (`policies/hostile`, any tag) properly
//! until told to misbehave: a manifest that never ends, one that declares
//! 700 MiB, answers that trickle a byte at a time, or a table blob that goes
//! on past the size its manifest declares. Every connection is
//! answered once and closed. Stopped when dropped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use toolgate_runtime::format::sha256_hex;
use toolgate_runtime::Table;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// The artifact, as a registry serves it.
    Good = 0,
    /// HEAD names another manifest; GET answers 200 with whitespace and no
    /// length, until the client hangs up (or [`ENDLESS_BOUND`]).
    Endless = 1,
    /// HEAD names another manifest; GET declares a Content-Length of
    /// [`HUGE_DECLARED`] and sends whitespace as above.
    Huge = 2,
    /// A manifest request (HEAD or GET) is answered one byte every
    /// [`TRICKLE_EVERY`], for at most [`TRICKLE_BOUND`] bytes.
    Trickle = 3,
    /// The good manifest; the table blob is the table and then zero bytes,
    /// with no length, until the client hangs up (or [`ENDLESS_BOUND`]).
    LongBlob = 4,
    /// As `LongBlob`, with a `Content-Length` that says so (the table's
    /// length plus [`ENDLESS_BOUND`]).
    LongBlobDeclared = 5,
    /// The good manifest; the table blob has the declared length, one byte
    /// changed.
    AlteredBlob = 6,
}

/// What `Huge` declares: the 700 MiB of the report.
pub const HUGE_DECLARED: u64 = 700 * 1024 * 1024;
/// The most an endless manifest sends before the server gives up: far past
/// any cap, so a client without one reads all of it.
pub const ENDLESS_BOUND: u64 = 256 * 1024 * 1024;
pub const TRICKLE_EVERY: Duration = Duration::from_millis(100);
/// About ten minutes of trickling.
pub const TRICKLE_BOUND: usize = 6000;
/// The digest HEAD names in the hostile modes (a manifest that is not there).
pub const OTHER_DIGEST: &str =
    "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
/// Connections served at once; more are closed when accepted.
const MAX_CONNECTIONS: u64 = 64;

pub struct Hostile {
    pub addr: SocketAddr,
    mode: Arc<AtomicU8>,
    /// Bytes of manifest bodies sent in the hostile modes.
    sent: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    /// The served manifest's digest.
    pub manifest_digest: String,
}

struct Artifact {
    manifest: Vec<u8>,
    manifest_digest: String,
    config: Vec<u8>,
    config_digest: String,
    table: Vec<u8>,
    table_digest: String,
}

impl Hostile {
    /// Serve `table` (a table file that loads) as the artifact.
    pub fn start(table: &[u8]) -> Hostile {
        let t = Table::load(table).expect("the served table loads");
        let config = br#"{"formatVersion":1}"#.to_vec();
        let config_digest = format!("sha256:{}", sha256_hex(&config));
        let table_digest = format!("sha256:{}", sha256_hex(table));
        let manifest = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": "application/vnd.toolgate.table.v1",
            "config": {"mediaType": "application/vnd.toolgate.table.config.v1+json",
                       "digest": config_digest, "size": config.len()},
            "layers": [{"mediaType": "application/vnd.toolgate.table.v1.tgt",
                        "digest": table_digest, "size": table.len()}],
            "annotations": {"dev.toolgate.table.digest": t.digest_hex()},
        }))
        .expect("JSON");
        let manifest_digest = format!("sha256:{}", sha256_hex(&manifest));
        let artifact = Arc::new(Artifact {
            manifest,
            manifest_digest: manifest_digest.clone(),
            config,
            config_digest,
            table: table.to_vec(),
            table_digest,
        });
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("its address");
        let mode = Arc::new(AtomicU8::new(Mode::Good as u8));
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicU64::new(0));
        {
            let (mode, sent, stop) = (mode.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let stream = match listener.accept() {
                        Ok((s, _)) => s,
                        Err(_) => {
                            std::thread::sleep(Duration::from_millis(5));
                            continue;
                        }
                    };
                    if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                        continue;
                    }
                    open.fetch_add(1, Ordering::Relaxed);
                    let (mode, sent, stop, open, artifact) = (
                        mode.clone(),
                        sent.clone(),
                        stop.clone(),
                        open.clone(),
                        artifact.clone(),
                    );
                    std::thread::spawn(move || {
                        let m = match mode.load(Ordering::Relaxed) {
                            1 => Mode::Endless,
                            2 => Mode::Huge,
                            3 => Mode::Trickle,
                            4 => Mode::LongBlob,
                            5 => Mode::LongBlobDeclared,
                            6 => Mode::AlteredBlob,
                            _ => Mode::Good,
                        };
                        let _ = answer(stream, m, &artifact, &sent, &stop);
                        open.fetch_sub(1, Ordering::Relaxed);
                    });
                }
            });
        }
        Hostile {
            addr,
            mode,
            sent,
            stop,
            manifest_digest,
        }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }

    /// `host:port`, as references and --plain-http name it.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// The artifact's reference under `tag`.
    pub fn reference(&self, tag: &str) -> String {
        format!("{}/policies/hostile:{tag}", self.addr)
    }

    /// Bytes of hostile manifest and blob bodies sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The request line of one request (its head read up to 16 KiB).
fn request_line(stream: &mut TcpStream) -> std::io::Result<String> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 || stream.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    Ok(text.lines().next().unwrap_or("").to_string())
}

fn answer(
    mut stream: TcpStream,
    mode: Mode,
    artifact: &Artifact,
    sent: &AtomicU64,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let line = request_line(&mut stream)?;
    let mut parts = line.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let head_only = method == "HEAD";
    let simple = |status: &str, headers: &str, body: &[u8]| {
        let mut out = format!(
            "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n{headers}\r\n",
            body.len()
        )
        .into_bytes();
        if !head_only {
            out.extend_from_slice(body);
        }
        out
    };
    let manifest_type = "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n";
    let blob_type = format!(
        "Content-Type: application/octet-stream\r\nDocker-Content-Digest: {}\r\n",
        artifact.table_digest
    );
    let table_path = format!("/v2/policies/hostile/blobs/{}", artifact.table_digest);
    let out = if path == "/v2/" {
        simple("200 OK", "Content-Type: application/json\r\n", b"{}")
    } else if path.starts_with("/v2/policies/hostile/manifests/") {
        match mode {
            Mode::Good | Mode::LongBlob | Mode::LongBlobDeclared | Mode::AlteredBlob => simple(
                "200 OK",
                &format!(
                    "{manifest_type}Docker-Content-Digest: {}\r\n",
                    artifact.manifest_digest
                ),
                &artifact.manifest,
            ),
            Mode::Endless | Mode::Huge if head_only => simple(
                "200 OK",
                &format!("{manifest_type}Docker-Content-Digest: {OTHER_DIGEST}\r\n"),
                &[],
            ),
            Mode::Endless | Mode::Huge => {
                let length = if mode == Mode::Huge {
                    format!("Content-Length: {HUGE_DECLARED}\r\n")
                } else {
                    String::new()
                };
                stream.write_all(
                    format!("HTTP/1.1 200 OK\r\nConnection: close\r\n{manifest_type}{length}\r\n")
                        .as_bytes(),
                )?;
                let chunk = vec![b' '; 64 * 1024];
                let mut total = 0u64;
                while total < ENDLESS_BOUND && !stop.load(Ordering::Relaxed) {
                    stream.write_all(&chunk)?;
                    total += chunk.len() as u64;
                    sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
                return Ok(());
            }
            Mode::Trickle => {
                let whole = simple(
                    "200 OK",
                    &format!(
                        "{manifest_type}Docker-Content-Digest: {}\r\n",
                        artifact.manifest_digest
                    ),
                    &artifact.manifest,
                );
                for b in whole.iter().take(TRICKLE_BOUND) {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    stream.write_all(std::slice::from_ref(b))?;
                    std::thread::sleep(TRICKLE_EVERY);
                }
                return Ok(());
            }
        }
    } else if path == table_path && matches!(mode, Mode::LongBlob | Mode::LongBlobDeclared) {
        let length = if mode == Mode::LongBlobDeclared {
            format!(
                "Content-Length: {}\r\n",
                artifact.table.len() as u64 + ENDLESS_BOUND
            )
        } else {
            String::new()
        };
        stream.write_all(
            format!("HTTP/1.1 200 OK\r\nConnection: close\r\n{blob_type}{length}\r\n").as_bytes(),
        )?;
        stream.write_all(&artifact.table)?;
        let chunk = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        while total < ENDLESS_BOUND && !stop.load(Ordering::Relaxed) {
            stream.write_all(&chunk)?;
            total += chunk.len() as u64;
            sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        return Ok(());
    } else if path == table_path && mode == Mode::AlteredBlob {
        // Without Docker-Content-Digest: only the manifest's digest names it.
        let mut table = artifact.table.clone();
        if let Some(b) = table.last_mut() {
            *b ^= 1;
        }
        simple(
            "200 OK",
            "Content-Type: application/octet-stream\r\n",
            &table,
        )
    } else if path == table_path {
        simple("200 OK", &blob_type, &artifact.table)
    } else if path == format!("/v2/policies/hostile/blobs/{}", artifact.config_digest) {
        simple(
            "200 OK",
            "Content-Type: application/octet-stream\r\n",
            &artifact.config,
        )
    } else {
        simple(
            "404 Not Found",
            "Content-Type: application/json\r\n",
            br#"{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}"#,
        )
    };
    stream.write_all(&out)?;
    stream.flush()
}
