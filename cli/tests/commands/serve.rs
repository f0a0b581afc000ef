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

#[test]
fn every_route_answers_only_its_own_host_and_origin() {
    use crate::common::serve::{get_with_host, raw};
    let project = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/mcp-profiles");
    let served = serve(&["--project", project, "--console"]);
    let addr = served.addr.clone();
    // The console page's own requests, and every route, answer the service's host.
    for path in ["/console/v1/report", "/health", "/ready", "/metrics"] {
        let (status, answer) = get_with_host(&addr, path, &format!("Host: {addr}\r\n"));
        assert_eq!(status, 200, "{path}: {answer}");
    }
    // DNS rebinding: a page on the attacker's name reads nothing, on any route.
    for path in [
        "/console/v1/report",
        "/console/v1/digest",
        "/health",
        "/ready",
        "/metrics",
        "/.well-known/authzen-configuration",
    ] {
        let (status, answer) = get_with_host(&addr, path, "Host: rebind.attacker.example\r\n");
        assert_eq!(status, 403, "{path}: {answer}");
        assert!(answer.contains(r#""error":"hostNotAllowed""#), "{answer}");
        assert!(!answer.contains("mcp_vault"), "{answer}");
    }
    let simulate = r#"{"configuration":"support-chat","role":"admin"}"#;
    for (host, origin, want) in [
        ("rebind.attacker.example", "", 403),
        (addr.as_str(), "Origin: http://evil.example\r\n", 403),
        (addr.as_str(), &*format!("Origin: http://{addr}\r\n"), 200),
    ] {
        let (status, answer) = raw(
            &addr,
            &format!(
                "POST /console/v1/simulate HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{simulate}",
                simulate.len()
            ),
        );
        assert_eq!(status, want, "{host} {origin}: {answer}");
    }
    let body = r#"{"subject":{"type":"user","id":"a"},"action":{"name":"call"},"resource":{"type":"tool","id":"search_help_center"},"context":{"configuration":"support-chat"}}"#;
    let (status, answer) = raw(
        &addr,
        &format!(
            "POST /access/v1/evaluation HTTP/1.1\r\nHost: rebind.attacker.example\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(status, 403, "{answer}");
    // Malformed: a user-info part, two Host headers, an absolute-form request line.
    let (status, answer) =
        get_with_host(&addr, "/health", &format!("Host: evil.example@{addr}\r\n"));
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = get_with_host(
        &addr,
        "/health",
        &format!("Host: {addr}\r\nHost: {addr}\r\n"),
    );
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = raw(
        &addr,
        &format!(
            "GET http://evil.example/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 400, "{answer}");
    // The console page may not be framed, by any means a browser reads.
    let (_, page) = get_with_host(&addr, "/console", &format!("Host: {addr}\r\n"));
    let lower = page.to_ascii_lowercase();
    assert!(lower.contains("\r\nx-frame-options: deny\r\n"), "{page}");
    assert!(lower.contains("frame-ancestors 'none'"), "{page}");
    served.stop();
}

#[test]
fn a_kept_alive_client_gets_each_answer_without_waiting_for_a_delayed_ack() {
    use crate::common::serve::kept_alive_round_trips;
    let project = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo");
    let served = serve(&["--project", project]);
    let addr = served.addr.clone();
    let body = r#"{"subject":{"type":"user","id":"alice"},"action":{"name":"call"},"resource":{"type":"tool","id":"read_source"},"context":{"configuration":"demo-chat"}}"#;
    let request = format!(
        "POST /access/v1/evaluation HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut took = kept_alive_round_trips(&addr, &request, 40);
    took.sort();
    // With Nagle's algorithm on the accepted socket, an answer written in
    // two parts waits for the client's delayed ACK: about 40 ms a round
    // trip. Without it, a decision takes well under a millisecond here.
    let median = took[took.len() / 2];
    assert!(
        median < std::time::Duration::from_millis(15),
        "median round trip {median:?} ({took:?})"
    );
    served.stop();
}

#[test]
fn the_consoles_simulation_answer_is_bounded_like_the_decision_routes() {
    use crate::common::serve::raw;
    let project = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/mcp-profiles");
    let served = serve(&[
        "--project",
        project,
        "--console",
        "--max-answer-bytes",
        "2048",
    ]);
    let addr = served.addr.clone();
    let simulate = r#"{"configuration":"support-chat","role":"admin"}"#;
    let (status, answer) = raw(
        &addr,
        &format!(
            "POST /console/v1/simulate HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{simulate}",
            simulate.len()
        ),
    );
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains(r#""code":"answerTooLarge""#), "{answer}");
    assert!(
        answer.contains("over 2048 bytes (--max-answer-bytes)"),
        "{answer}"
    );
    served.stop();
}
