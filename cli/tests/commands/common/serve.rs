//! `toolgate serve` as a child process on 127.0.0.1 (an ephemeral port),
//! asked over plain HTTP/1.1 and stopped by SIGTERM: the harness of
//! serve.rs and diff_replay.rs.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

pub struct Served {
    child: Child,
    stderr: BufReader<ChildStderr>,
    /// The first line on stderr: "toolgate serve: listening on
    /// http://127.0.0.1:PORT, serving table DIGEST".
    pub line: String,
    /// `127.0.0.1:PORT` from that line.
    pub addr: String,
}

/// Start `toolgate serve ARGS --addr 127.0.0.1:0` and wait for its listening line.
pub fn serve<S: AsRef<OsStr>>(args: &[S]) -> Served {
    serve_with_env(args, &[])
}

/// [`serve`] with `env` set for it.
pub fn serve_with_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, String)]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("serve")
        .args(args)
        .args(["--addr", "127.0.0.1:0"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate serve");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .strip_prefix("toolgate serve: listening on http://")
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    Served {
        child,
        stderr,
        line,
        addr,
    }
}

impl Served {
    /// POST `body` to /access/v1/evaluation with `headers` (each ending in
    /// CRLF) after Host; the whole raw answer.
    pub fn evaluate(&self, headers: &str, body: &str) -> String {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let addr = &self.addr;
        s.write_all(
            format!(
                "POST /access/v1/evaluation HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).expect("answer");
        out
    }

    /// SIGTERM, a clean exit (code 0), and what it wrote to stderr after
    /// the listening line.
    pub fn stop(mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(self.child.wait().unwrap().code(), Some(0));
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        rest
    }
}

/// The JSON body of an HTTP answer.
pub fn body_json(answer: &str) -> serde_json::Value {
    serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

/// Raw HTTP/1.1, as the gateway tests send it (one copy, theirs).
pub use crate::support::{get_with_host, raw};

/// `rounds` requests one after another on one kept-alive connection, each
/// answer read whole (by its Content-Length) before the next is sent: the
/// time each round trip took.
pub fn kept_alive_round_trips(addr: &str, request: &str, rounds: usize) -> Vec<Duration> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The client's side sends at once too: only the server's can stall.
    s.set_nodelay(true).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut took = Vec::new();
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        s.write_all(request.as_bytes()).unwrap();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).expect("a header line");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        r.read_exact(&mut body).expect("the body");
        took.push(t.elapsed());
    }
    took
}
