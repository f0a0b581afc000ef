//! `toolgate serve` as an operator runs it: the binary on 127.0.0.1 (an
//! ephemeral port), asked over plain HTTP/1.1, stopped by SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn http(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("answer");
    out
}

#[test]
fn serve_answers_over_http_and_stops_on_sigterm_with_its_log_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.jsonl");
    let project = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "serve",
            "--project",
            project,
            "--addr",
            "127.0.0.1:0",
            "--decision-log",
        ])
        .arg(&log)
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate serve");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // "toolgate serve: listening on http://127.0.0.1:PORT, serving table DIGEST"
    let addr = line
        .strip_prefix("toolgate serve: listening on http://")
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    let body = r#"{"subject":{"type":"user","id":"alice"},"action":{"name":"call"},"resource":{"type":"tool","id":"read_source"},"context":{"configuration":"demo-chat"}}"#;
    let answer = http(
        &addr,
        &format!(
            "POST /access/v1/evaluation HTTP/1.1\r\nHost: {addr}\r\nX-Request-ID: cli-1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nx-request-id: cli-1\r\n"),
        "{answer}"
    );
    let json: serde_json::Value =
        serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["decision"], serde_json::json!(false));
    assert_eq!(
        json["context"]["reason"],
        serde_json::json!("configurationGroup")
    );
    let digest = json["context"]["tableDigest"].as_str().unwrap().to_string();
    assert!(line.trim_end().ends_with(&digest), "{line}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "toolgate serve: stopped\n");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 1);
    let record: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(
        common::schema_errors("decision-log-service", &record),
        Vec::<String>::new()
    );
    let stats = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["stats", "--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(stats.status.code(), Some(0));
    let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        s,
        serde_json::json!({"decisions": 1, "refused": 1, "observedOnly": 0,
            "byReason": {"configurationGroup": 1},
            "byConfiguration": {"demo-chat": {"configurationGroup": 1}}})
    );
}

#[test]
fn serve_refuses_a_table_that_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tgt");
    std::fs::write(&bad, b"not a table").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--addr", "127.0.0.1:0", "--table"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!("error: {}: ", bad.display())),
        "{err}"
    );
}
