//! A bounded load generator for `toolgate serve` (BENCHMARKS.md, "The decision
//! service"): keep-alive HTTP/1.1 connections on 127.0.0.1, each sending one
//! request at a time and timing it, for a fixed number of seconds.
//!
//! ```sh
//! toolgate serve --table demo.tgt --no-watch &
//! cargo run --release -p toolgate-bench --example serve_load -- \
//!     --addr 127.0.0.1:8181 --mode single --connections 32 --seconds 10
//! cargo run --release -p toolgate-bench --example serve_load -- --mode batch --batch 100
//! ```
//!
//! The client is a few lines of raw HTTP/1.1 over tokio (request bytes built
//! once, responses read by `Content-Length`), so that the generator spends
//! as little of the shared cores as it can. Every answer must be a 200.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The tools of the shipped demo project (policies/demo), in registry order.
const TOOLS: [&str; 17] = [
    "get_page_content",
    "search_pages",
    "list_pages",
    "create_page_draft",
    "update_page_content",
    "load_skill",
    "read_source",
    "search_code",
    "list_extensions",
    "get_composer_json",
    "get_env_raw",
    "fetch_logs",
    "clear_cache",
    "show_config",
    "list_scheduler_tasks",
    "get_tca_schema",
    "list_tables",
];

struct Args {
    addr: SocketAddr,
    mode: String,
    connections: usize,
    seconds: u64,
    batch: usize,
    threads: usize,
    configuration: String,
    /// Batches only: `options.refusals: false` (decisions without refusal texts).
    no_refusals: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        addr: SocketAddr::from(([127, 0, 0, 1], 8181)),
        mode: "single".into(),
        connections: 32,
        seconds: 10,
        batch: 100,
        threads: 1,
        configuration: "demo-chat".into(),
        no_refusals: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-refusals" {
            a.no_refusals = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--addr" => a.addr = value.parse().map_err(|e| bad(&e))?,
            "--mode" => a.mode = value,
            "--connections" => a.connections = value.parse().map_err(|e| bad(&e))?,
            "--seconds" => a.seconds = value.parse().map_err(|e| bad(&e))?,
            "--batch" => a.batch = value.parse().map_err(|e| bad(&e))?,
            "--threads" => a.threads = value.parse().map_err(|e| bad(&e))?,
            "--config" => a.configuration = value,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.seconds > 600 {
        return Err("--seconds is at most 600 (a bounded test)".into());
    }
    Ok(a)
}

/// The request bytes, one per tool (single) or one batch per offset.
fn requests(a: &Args) -> Vec<Vec<u8>> {
    let cfg = &a.configuration;
    let options = if a.no_refusals {
        r#","options":{"refusals":false}"#
    } else {
        ""
    };
    let bodies: Vec<(String, String)> = if a.mode == "batch" {
        (0..TOOLS.len())
            .map(|k| {
                let items: Vec<String> = (0..a.batch)
                    .map(|i| {
                        format!(
                            r#"{{"resource":{{"type":"tool","id":"{}"}}}}"#,
                            TOOLS[(k + i) % TOOLS.len()]
                        )
                    })
                    .collect();
                (
                    "/access/v1/evaluations".to_string(),
                    format!(
                        r#"{{"subject":{{"type":"user","id":"bench"}},"action":{{"name":"call"}},"context":{{"configuration":"{cfg}"}},"evaluations":[{}]{options}}}"#,
                        items.join(",")
                    ),
                )
            })
            .collect()
    } else {
        TOOLS
            .iter()
            .map(|t| {
                (
                    "/access/v1/evaluation".to_string(),
                    format!(
                        r#"{{"subject":{{"type":"user","id":"bench"}},"action":{{"name":"call"}},"resource":{{"type":"tool","id":"{t}"}},"context":{{"configuration":"{cfg}"}}}}"#
                    ),
                )
            })
            .collect()
    };
    bodies
        .into_iter()
        .map(|(path, body)| {
            format!(
                "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                a.addr,
                body.len()
            )
            .into_bytes()
        })
        .collect()
}

/// Read one response; returns whether it was a 200.
async fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).unwrap_or("");
            let ok = head.starts_with("HTTP/1.1 200");
            let len: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk).await?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(ok);
        }
    }
}

async fn connection(
    addr: SocketAddr,
    reqs: std::sync::Arc<Vec<Vec<u8>>>,
    offset: usize,
    deadline: Instant,
) -> std::io::Result<(Vec<u32>, u64)> {
    let mut s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    let mut lat = Vec::with_capacity(1 << 16);
    let mut failures = 0;
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut i = offset;
    while Instant::now() < deadline {
        let req = &reqs[i % reqs.len()];
        let t = Instant::now();
        s.write_all(req).await?;
        if !read_response(&mut s, &mut buf).await? {
            failures += 1;
        }
        lat.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
        i += 1;
    }
    Ok((lat, failures))
}

fn main() -> Result<(), String> {
    let a = args()?;
    let reqs = std::sync::Arc::new(requests(&a));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let per_request = if a.mode == "batch" { a.batch } else { 1 };
    let (mut lat, failures, elapsed) = rt.block_on(async {
        // Warm up for a second, then measure.
        let warm = Instant::now() + Duration::from_secs(1);
        let mut tasks = Vec::new();
        for c in 0..a.connections {
            tasks.push(tokio::spawn(connection(a.addr, reqs.clone(), c, warm)));
        }
        for t in tasks {
            t.await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        }
        let start = Instant::now();
        let deadline = start + Duration::from_secs(a.seconds);
        let mut tasks = Vec::new();
        for c in 0..a.connections {
            tasks.push(tokio::spawn(connection(a.addr, reqs.clone(), c, deadline)));
        }
        let (mut all, mut failures) = (Vec::new(), 0);
        for t in tasks {
            let (l, f) = t
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            all.extend(l);
            failures += f;
        }
        Ok::<_, String>((all, failures, start.elapsed()))
    })?;
    lat.sort_unstable();
    let n = lat.len();
    let pct = |p: f64| -> f64 {
        if n == 0 {
            return 0.0;
        }
        lat[((n as f64 * p).ceil() as usize).clamp(1, n) - 1] as f64 / 1000.0
    };
    let secs = elapsed.as_secs_f64();
    println!(
        "mode={}{} connections={} threads={} seconds={:.1} requests={} failures={} requests/s={:.0} decisions/s={:.0} p50={:.3}ms p99={:.3}ms p99.9={:.3}ms max={:.3}ms",
        a.mode,
        if a.no_refusals { " (refusals: false)" } else { "" },
        a.connections,
        a.threads,
        secs,
        n,
        failures,
        n as f64 / secs,
        (n * per_request) as f64 / secs,
        pct(0.50),
        pct(0.99),
        pct(0.999),
        lat.last().copied().unwrap_or(0) as f64 / 1000.0,
    );
    if failures > 0 {
        return Err(format!("{failures} answers were not 200"));
    }
    Ok(())
}
