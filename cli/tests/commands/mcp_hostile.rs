//! `registry import-mcp` and `registry sync` against hostile MCP servers
//! written for these tests (cli/tests/fixtures/mcp/hostile.py: the Python
//! standard library speaking MCP over stdio; a streamable HTTP server on
//! 127.0.0.1 in this file), through the real binary: a server that lists a
//! name twice, whose `nextCursor` never ends or comes back, and two servers
//! whose tools map to one registry name.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::*;

/// `python3 hostile.py LOG MODE ARGS...`, and the log it appends a line to
/// per `tools/list` request.
fn hostile(dir: &Path, mode: &[&str]) -> (Vec<String>, PathBuf) {
    let log = dir.join("asked.log");
    let _ = std::fs::remove_file(&log);
    let mut cmd = vec![
        "python3".to_string(),
        root()
            .join("cli/tests/fixtures/mcp/hostile.py")
            .to_string_lossy()
            .into_owned(),
        log.to_string_lossy().into_owned(),
    ];
    cmd.extend(mode.iter().map(|s| s.to_string()));
    (cmd, log)
}

/// `toolgate ARGS -- COMMAND...` in `dir`, within `limit`.
fn with_server(dir: &Path, args: &[&str], command: &[String], limit: Duration) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--");
    all.extend(command.iter().map(String::as_str));
    let start = Instant::now();
    let o = toolgate(dir, &all);
    assert!(
        start.elapsed() < limit,
        "took {:?}, over {limit:?}: {}",
        start.elapsed(),
        stderr(&o)
    );
    o
}

fn asked(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

const CRM: &str = "[[tool]]\nname = \"mcp_crm_lookup\"\ngroup = \"mcp_crm\"\nserver = \"crm\"\n";

#[test]
fn a_server_that_lists_a_name_twice_is_refused_by_import_and_sync() {
    let dir = scratch_project("hostile-twice", CRM, "");
    let (server, _) = hostile(&dir, &["names", "lookup", "export", "lookup"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "crm",
            "-o",
            "out.toml",
        ],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(!dir.join("out.toml").exists(), "nothing is written");
    let err = stderr(&o);
    assert_contains(&err, "error[TG4006]");
    assert_contains(&err, "the server lists tool `lookup` twice");
    // The answer is shown one tool a line: the second `lookup` is line 4.
    assert_contains(&err, "[tools/list of `python3 ");
    assert_contains(&err, ":4:11]");
    assert_contains(&err, "1 error, 0 warnings");
    // sync --write neither compares nor writes.
    let o = with_server(
        &dir,
        &["registry", "sync", "-p", ".", "--server", "crm", "--write"],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_contains(&stderr(&o), "the server lists tool `lookup` twice");
    assert_eq!(
        std::fs::read_to_string(dir.join("registry.toml")).unwrap(),
        CRM
    );
}

#[test]
fn a_cursor_that_never_ends_stops_at_the_page_bound() {
    let dir = temp("hostile-endless");
    let (server, log) = hostile(&dir, &["endless"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "endless",
            "--timeout",
            "60",
        ],
        &server,
        Duration::from_secs(40),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_starts_with(
        &stderr(&o),
        &format!(
            "error: MCP server `{}`: `tools/list` goes on past 100 pages (page 100 has a `nextCursor`): the bound is 100 pages\n",
            server.join(" ")
        ),
    );
    assert_eq!(asked(&log), 100);
}

#[test]
fn a_cursor_that_comes_back_is_a_loop() {
    let dir = temp("hostile-loop");
    let (server, log) = hostile(&dir, &["loop"]);
    let o = with_server(
        &dir,
        &["registry", "import-mcp", "--server", "loop"],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_starts_with(
        &stderr(&o),
        &format!(
            "error: MCP server `{}`: `tools/list` page 3 has the `nextCursor` \"a\" that page 1 had: the server's pagination goes round in a loop\n",
            server.join(" ")
        ),
    );
    assert_eq!(asked(&log), 3);
}

#[test]
fn names_that_collide_after_mapping_are_reported_never_no_drift() {
    // Server `a`'s tool `b_c` is in the registry as `mcp_a_b_c`.
    let dir = temp("hostile-collide");
    let (server_a, _) = hostile(&dir, &["names", "b_c"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "a",
            "-o",
            "registry.toml",
        ],
        &server_a,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let registry = std::fs::read_to_string(dir.join("registry.toml")).unwrap();
    write_project(&dir, &registry, "");
    // Server `a_b` lists `c`: `mcp_a_b_c` too.
    let (server_ab, _) = hostile(&dir, &["names", "c"]);
    for mode in ["--check", "--write"] {
        let o = with_server(
            &dir,
            &["registry", "sync", "-p", ".", "--server", "a_b", mode],
            &server_ab,
            Duration::from_secs(20),
        );
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{mode}: no report, so no `no drift`");
        let err = stderr(&o);
        assert_contains(&err, "error[TG4007]");
        assert_contains(
            &err,
            "  × server `a_b` lists a tool that becomes `mcp_a_b_c`, which the registry holds as a tool of\n  │ server `a`\n",
        );
        assert_contains(&err, "the registry's tool of that name");
        assert_ends_with(
            &err,
            "registry sync: 1 of server a_b's tools take names the registry gives other tools; nothing compared or written\n",
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("registry.toml")).unwrap(),
            registry
        );
    }
}

/// A streamable HTTP MCP server on 127.0.0.1 whose `nextCursor` never ends:
/// JSON answers to POSTs, 405 to a GET (no server-sent stream), keep-alive
/// connections. At most `conns` connections are served, each for at most 10 s
/// of silence; returns the URL and a counter of `tools/list` requests.
fn endless_http(conns: usize) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let asked = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(conns) {
            let Ok(conn) = conn else { return };
            let counter = counter.clone();
            std::thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                // One request per turn, at most 1,000 on a connection.
                for _ in 0..1000 {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let method = line.split(' ').next().unwrap_or("").to_string();
                    let mut length = 0;
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    if r.read_exact(&mut body).is_err() {
                        return;
                    }
                    let reply = |status: &str, body: &str| {
                        format!(
                            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    let out = if method != "POST" {
                        reply("405 Method Not Allowed", "")
                    } else {
                        let msg: serde_json::Value =
                            serde_json::from_slice(&body).unwrap_or_default();
                        let id = msg["id"].clone();
                        let result = match msg["method"].as_str() {
                            _ if id.is_null() => None,
                            Some("initialize") => Some(serde_json::json!({
                                "protocolVersion": msg["params"]["protocolVersion"],
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "endless", "version": "0"},
                            })),
                            Some("tools/list") => {
                                let n = counter.fetch_add(1, Ordering::SeqCst);
                                Some(serde_json::json!({
                                    "tools": [{"name": format!("t{n}"), "inputSchema": {"type": "object"}}],
                                    "nextCursor": format!("c{}", n + 1),
                                }))
                            }
                            _ => Some(serde_json::json!({})),
                        };
                        match result {
                            None => reply("202 Accepted", ""),
                            Some(r) => reply(
                                "200 OK",
                                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": r})
                                    .to_string(),
                            ),
                        }
                    };
                    if w.write_all(out.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, asked)
}

#[test]
fn over_streamable_http_too_the_pages_are_bounded() {
    let (url, asked) = endless_http(400);
    let start = Instant::now();
    let o = run(&[
        "registry",
        "import-mcp",
        "--server",
        "endless",
        "--url",
        &url,
        "--timeout",
        "60",
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("error: MCP server {url}: `tools/list` goes on past 100 pages (page 100 has a `nextCursor`): the bound is 100 pages\n")
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 100);
}
