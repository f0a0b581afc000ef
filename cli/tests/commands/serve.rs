//! `toolgate serve` as an operator runs it: the binary on 127.0.0.1 (an
//! ephemeral port), asked over plain HTTP/1.1, stopped by SIGTERM.

use std::process::Command;

use crate::common::assert_starts_with;
use crate::common::serve::{body_json, serve};

#[test]
fn serve_answers_over_http_and_stops_on_sigterm_with_its_log_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.jsonl");
    let project = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo");
    let served = serve(&[
        "--project",
        project,
        "--decision-log",
        log.to_str().unwrap(),
    ]);
    // "toolgate serve: listening on http://127.0.0.1:PORT, serving table DIGEST"
    let line = served.line.clone();
    let body = r#"{"subject":{"type":"user","id":"alice"},"action":{"name":"call"},"resource":{"type":"tool","id":"read_source"},"context":{"configuration":"demo-chat"}}"#;
    let answer = served.evaluate("X-Request-ID: cli-1\r\n", body);
    assert_starts_with(&answer, "HTTP/1.1 200 OK\r\n");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nx-request-id: cli-1\r\n"),
        "{answer}"
    );
    let json = body_json(&answer);
    assert_eq!(json["decision"], serde_json::json!(false));
    assert_eq!(
        json["context"]["reason"],
        serde_json::json!("configurationGroup")
    );
    let digest = json["context"]["tableDigest"].as_str().unwrap().to_string();
    assert!(line.trim_end().ends_with(&digest), "{line}");

    let rest = served.stop();
    assert_eq!(rest, "toolgate serve: stopped\n");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 1);
    let record: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(
        crate::common::schema_errors("decision-log-service", &record),
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

#[test]
fn serve_refuses_a_network_address_without_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.tgt");
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["compile", "policies/demo", "-o"])
        .arg(&table)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--addr", "0.0.0.0:0", "--table"])
        .arg(&table)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: refusing to serve on 0.0.0.0:0: not a loopback address, and nothing authenticates its callers (anyone who reaches the port could ask as any subject). Give --auth FILE"),
        "{err}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--pep-roles", "user,root", "--table"])
        .arg(&table)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("--pep-roles: `root` is not admin, user or none"));
}
