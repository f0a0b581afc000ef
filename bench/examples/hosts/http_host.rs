//! The decision service over HTTP/1.1 on 127.0.0.1: one keep-alive
//! connection, one request in flight, request bytes built beforehand (as
//! examples/serve_load.rs does); each round trip (write the request, read
//! the whole answer by its Content-Length) is timed, and a repetition's
//! figure is its p50. The answer's JSON is parsed only in the check.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::expected::{self, strided, CONFIGURATION, CONSUMER};
use crate::timing::{self, median, row};

struct Conn {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(addr: &str) -> Result<Conn, String> {
        let s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        let bounded = Some(Duration::from_secs(10));
        s.set_read_timeout(bounded).map_err(|e| e.to_string())?;
        s.set_write_timeout(bounded).map_err(|e| e.to_string())?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Conn {
            s,
            buf: Vec::with_capacity(1 << 20),
        })
    }

    /// One round trip; the body of a 200 answer.
    fn round_trip(&mut self, req: &[u8]) -> Result<&[u8], String> {
        self.s.write_all(req).map_err(|e| format!("write: {e}"))?;
        self.buf.clear();
        let mut chunk = [0u8; 64 * 1024];
        let (head_end, len) = loop {
            self.read_some(&mut chunk)?;
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = std::str::from_utf8(&self.buf[..end]).map_err(|e| e.to_string())?;
                if !head.starts_with("HTTP/1.1 200") {
                    return Err(format!("not a 200: {}", head.lines().next().unwrap_or("")));
                }
                let len = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    .ok_or("an answer without Content-Length")?;
                break (end + 4, len);
            }
        };
        while self.buf.len() < head_end + len {
            self.read_some(&mut chunk)?;
        }
        Ok(&self.buf[head_end..head_end + len])
    }

    fn read_some(&mut self, chunk: &mut [u8]) -> Result<(), String> {
        match self.s.read(chunk) {
            Ok(0) => Err("the server closed the connection".into()),
            Ok(k) => {
                self.buf.extend_from_slice(&chunk[..k]);
                Ok(())
            }
            Err(e) => Err(format!("read: {e}")),
        }
    }
}

fn post(addr: &str, path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn subject() -> String {
    format!(
        r#""subject":{{"type":"user","id":"bench","properties":{{"role":"user","consumer":"{CONSUMER}"}}}}"#
    )
}

/// p50 of one repetition: `iters` round trips of `reqs` in turn.
fn p50(conn: &mut Conn, reqs: &[&Vec<u8>], iters: usize) -> Result<f64, String> {
    let mut lat = Vec::with_capacity(iters);
    for req in reqs.iter().cycle().take(iters) {
        let t = Instant::now();
        conn.round_trip(req)?;
        lat.push(t.elapsed().as_nanos() as f64);
    }
    Ok(median(lat))
}

pub fn run(dir: &Path, n: usize, addr: &str) -> Result<(), String> {
    let (_, tools) = expected::read(dir, n)?;
    let mut conn = Conn::open(addr)?;
    let evaluations: Vec<Vec<u8>> = tools
        .iter()
        .map(|t| {
            let body = format!(
                r#"{{{},"action":{{"name":"call"}},"resource":{{"type":"tool","id":{}}},"context":{{"configuration":"{CONFIGURATION}"}}}}"#,
                subject(),
                Value::from(t.name.as_str())
            );
            post(addr, "/access/v1/evaluation", &body)
        })
        .collect();
    let unavailable = post(
        addr,
        "/toolgate/v1/unavailable",
        &format!(
            r#"{{{},"context":{{"configuration":"{CONFIGURATION}"}}}}"#,
            subject()
        ),
    );

    for (t, req) in tools.iter().zip(&evaluations) {
        let v: Value = serde_json::from_slice(conn.round_trip(req)?).map_err(|e| e.to_string())?;
        let reason = v["context"]["reason"].as_str();
        if v["decision"].as_bool() != Some(t.allowed) || reason != t.reason.map(|r| r.code()) {
            return Err(format!("{}: the service answers {v}", t.name));
        }
    }
    let v: Value =
        serde_json::from_slice(conn.round_trip(&unavailable)?).map_err(|e| e.to_string())?;
    let got: Option<Vec<(&str, &str)>> = v["unavailable"].as_array().map(|a| {
        a.iter()
            .map(|u| {
                (
                    u["tool"].as_str().unwrap_or(""),
                    u["reason"].as_str().unwrap_or(""),
                )
            })
            .collect()
    });
    let want: Vec<(&str, &str)> = expected::unavailable(&tools)
        .into_iter()
        .map(|(t, r)| (t, r.code()))
        .collect();
    if got.as_ref() != Some(&want) {
        return Err("the service's unavailable list differs from the runtime's".into());
    }

    let seq = strided(&evaluations);
    let iters = timing::iters(2_000);
    let ns = timing::median_of(|| p50(&mut conn, &seq, iters))?;
    row("http", "decide", n, ns, iters);
    let iters = timing::iters((200_000 / n).max(5));
    let ns = timing::median_of(|| p50(&mut conn, &[&unavailable], iters))?;
    row("http", "unavailable", n, ns, iters);
    Ok(())
}
