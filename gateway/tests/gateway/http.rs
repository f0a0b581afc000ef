//! The HTTP front: every route behind the Host checks, `max-body-bytes`
//! on every client request, and a kept-alive session answered without the
//! delayed-ACK stall.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

/// Every route (not only /mcp) answers only the gateway's own Host, and the
/// malformed forms are refused before any route.
#[test]
fn every_route_is_behind_the_host_checks() {
    let dir = temp("gw-hosts");
    let project = crm_project("gw-hosts-project");
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let addr = gw.addr();
    for path in [
        "/metrics",
        "/ready",
        "/health",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, answer) = get_with_host(&addr, path, &format!("Host: {addr}\r\n"));
        assert_eq!(status, 200, "{path}: {answer}");
        let (status, answer) = get_with_host(&addr, path, "Host: evil.example\r\n");
        assert_eq!(status, 403, "{path}: {answer}");
        assert!(
            !answer.contains("crm"),
            "{path} leaks upstream names: {answer}"
        );
        let (status, answer) = get_with_host(
            &addr,
            path,
            "Host: evil.example\r\nOrigin: http://evil.example\r\n",
        );
        assert_eq!(status, 403, "{path}: {answer}");
        let (status, answer) =
            get_with_host(&addr, path, &format!("Host: evil.example@{addr}\r\n"));
        assert_eq!(status, 400, "{path}: {answer}");
        let (status, answer) =
            get_with_host(&addr, path, &format!("Host: {addr}\r\nHost: {addr}\r\n"));
        assert_eq!(status, 400, "{path}: {answer}");
    }
    let body = list_request().to_string();
    let (status, answer) = raw(
        &addr,
        &format!(
            "POST http://evil.example/mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {SUPPORT_KEY}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(status, 400, "{answer}");
    assert_contains(&answer, "absoluteForm");
    drop(gw);
}

/// `max-body-bytes` is the bound for client requests, chunked or not,
/// below and above the SDK's own default.
#[test]
fn max_body_bytes_bounds_every_client_request() {
    let dir = temp("gw-body");
    let project = crm_project("gw-body-project");
    for (bound, size, chunked, want) in [
        (65536, 256 << 10, false, 413),
        (65536, 1 << 20, true, 413),
        (16 << 20, 6 << 20, false, 200),
    ] {
        let cfg = config(&dir, &project, &crm_upstream(), "");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "[limits]\n",
            &format!("[limits]\nmax-body-bytes = {bound}\n"),
        );
        std::fs::write(&cfg, text).unwrap();
        let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
        let addr = gw.addr();
        let mut req = list_request();
        req["params"]["pad"] = json!("x".repeat(size));
        let body = req.to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {SUPPORT_KEY}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nConnection: close\r\n"
        );
        let request = if chunked {
            let mut r = format!("{head}Transfer-Encoding: chunked\r\n\r\n");
            for piece in body.as_bytes().chunks(16 << 10) {
                r.push_str(&format!(
                    "{:x}\r\n{}\r\n",
                    piece.len(),
                    String::from_utf8_lossy(piece)
                ));
            }
            r.push_str("0\r\n\r\n");
            r
        } else {
            format!("{head}Content-Length: {}\r\n\r\n{body}", body.len())
        };
        let (status, answer) = raw(&addr, &request);
        assert_eq!(
            status,
            want,
            "bound {bound}, {size} bytes, chunked {chunked}: {}",
            &answer[..answer.len().min(400)]
        );
        drop(gw);
    }
}

/// A client that keeps its connection gets each answer at once: the
/// accepted socket has TCP_NODELAY, so a revision-2025-11-25 answer (SSE:
/// its headers, then the event) is not held for the client's delayed ACK
/// (about 40 ms a request before). The median of 20 pings on one kept-alive
/// connection is far below that. Ending the session answers 204.
#[test]
fn a_kept_alive_session_gets_each_answer_without_the_delayed_ack_stall_and_ends_with_204() {
    let dir = temp("gw-nodelay");
    let project = crm_project("gw-nodelay-project");
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .build()
            .unwrap();
        let send = |body: Value, session: Option<String>| {
            let mut req = client
                .post(&gw.url)
                .header("authorization", format!("Bearer {SUPPORT_KEY}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream");
            if let Some(s) = session {
                req = req
                    .header("mcp-session-id", s)
                    .header("mcp-protocol-version", "2025-11-25");
            }
            req.body(body.to_string()).send()
        };
        let r = send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "kept-alive", "version": "1"}}}),
            None,
        )
        .await
        .expect("initialize");
        assert_eq!(r.status().as_u16(), 200);
        let session = r
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_string();
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("\"protocolVersion\":\"2025-11-25\""));
        let r = send(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            Some(session.clone()),
        )
        .await
        .expect("initialized");
        assert_eq!(r.status().as_u16(), 202);
        let mut took = Vec::new();
        for id in 1..=20 {
            let t = Instant::now();
            let r = send(
                json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
                Some(session.clone()),
            )
            .await
            .expect("ping");
            // A lone answer is one JSON body, not a stream (json_answer.rs).
            let kind = r.headers().get("content-type").cloned();
            let text = r.text().await.unwrap();
            took.push(t.elapsed());
            assert_eq!(
                text,
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}")
            );
            assert_eq!(
                kind.as_ref().and_then(|v| v.to_str().ok()),
                Some("application/json")
            );
        }
        let r = send(
            json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
                   "params": {"name": "mcp_crm_customer-360_lookup", "arguments": {"id": "7"}}}),
            Some(session.clone()),
        )
        .await
        .expect("a call");
        assert_eq!(
            r.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        let answer: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        assert_eq!(
            answer["result"]["content"][0]["text"], "customer-360_lookup(7) done",
            "{answer}"
        );
        took.sort();
        let median = took[took.len() / 2];
        assert!(
            median < Duration::from_millis(20),
            "the median answer took {median:?} (all: {took:?})"
        );
        let r = client
            .delete(&gw.url)
            .header("authorization", format!("Bearer {SUPPORT_KEY}"))
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .expect("delete");
        assert_eq!(r.status().as_u16(), 204);
    });
    drop(gw);
}
