//! The direct path (docs/gateway.md, "The direct path"): a plain
//! `tools/call`, read or prompt to a URL upstream on 2026-07-28, on
//! 2026-07-28 or in a 2025-11-25 session, is decided and forwarded without
//! the SDK's per-request service, and answered exactly as the SDK's path
//! answers it. The crm fixture logs whether a call's
//! `_meta` carries a progress token (CRM_META_LOG): the official Rust
//! SDK's client puts one on every request, the direct path none, so each
//! test can tell which path a call took.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

/// A 2026-07-28 call of `tool` as a raw client sends it, declaring `caps`;
/// `extra` goes into `_meta` besides the envelope.
fn call_body(tool: &str, id: &str, caps: Value, extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    if let (Some(m), Some(e)) = (meta.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
           "params": {"name": tool, "arguments": {"id": id}, "_meta": meta}})
}

/// A 2026-07-28 `method` request as a raw client sends it, declaring
/// `caps`, with `params` besides the envelope.
fn request_body(method: &str, params: Value, caps: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    json!({"jsonrpc": "2.0", "id": 6, "method": method, "params": params})
}

/// POST `body` as a 2026-07-28 client with the support key, its headers
/// naming the body's method and name (or URI): the status, the content
/// type and the body.
async fn send(url: &str, body: &Value) -> (u16, String, String) {
    let name = body["params"]["name"]
        .as_str()
        .or(body["params"]["uri"].as_str());
    let method = body["method"].as_str().unwrap_or_default();
    answered(posted(url, method, name.unwrap_or_default(), ("x-none", "-"), body).await).await
}

/// An answer's status, content type and body.
async fn answered(r: reqwest::Response) -> (u16, String, String) {
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, ctype, r.text().await.unwrap_or_default())
}

/// POST `body` with `Mcp-Method` and `Mcp-Name` as given and one `extra`
/// header: the status and the JSON answer (`null` when there is none).
async fn send_with(
    url: &str,
    method: &str,
    name: &str,
    extra: (&str, &str),
    body: &Value,
) -> (u16, Value) {
    let r = posted(url, method, name, extra, body).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or_default())
}

async fn posted(
    url: &str,
    method: &str,
    name: &str,
    extra: (&str, &str),
    body: &Value,
) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {SUPPORT_KEY}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .header(extra.0, extra.1)
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
}

/// The same call of `notes_append` sent plain (the direct path) and by a
/// client that declares roots (the SDK's path): both answers.
async fn both_paths(url: &str) -> ((u16, String, String), (u16, String, String)) {
    let plain = call_body("mcp_crm_notes_append", "7", json!({}), json!({}));
    let roots = call_body("mcp_crm_notes_append", "7", json!({"roots": {}}), json!({}));
    (send(url, &plain).await, send(url, &roots).await)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The crm server over HTTP on 2026-07-28 behind a gateway, its calls and
/// their `_meta` logged; `limits` goes into `[limits]`.
fn gateway(
    name: &str,
    env: &[(&str, &str)],
    limits: &str,
) -> (Running, HttpCrm, std::path::PathBuf) {
    let dir = temp(name);
    let project = crm_project(&format!("{name}-project"));
    let port = free_port();
    let calls = dir.join("calls.log");
    let metas = dir.join("meta.log");
    let mut all = vec![
        ("CRM_CALL_LOG", calls.to_str().unwrap_or_default()),
        ("CRM_META_LOG", metas.to_str().unwrap_or_default()),
    ];
    all.extend_from_slice(env);
    let crm = http_crm(port, &all);
    let upstream = format!(
        "[[upstream]]\nname = \"crm\"\nprotocol = \"2026-07-28\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    );
    let extra = format!("decision-log = {:?}\n", dir.join("decisions.jsonl"));
    let cfg = config(&dir, &project, &upstream, &extra);
    let text = std::fs::read_to_string(&cfg)
        .unwrap_or_default()
        .replace("[limits]\n", &format!("[limits]\n{limits}"));
    std::fs::write(&cfg, text).unwrap_or_else(|e| panic!("{e}"));
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    (gw, crm, dir)
}

/// A plain call takes the direct path (the upstream sees no progress
/// token); the same call from a client that declares roots takes the SDK's
/// (its client adds a token): both get the same status, content type and
/// bytes, and both are counted and logged as allowed calls.
#[test]
fn a_plain_call_takes_the_direct_path_and_is_answered_as_the_sdk_answers_it() {
    let (gw, _crm, dir) = gateway("gw-direct-same", &[], "");
    // The upstream's result as it gave it, its `_meta` included (on both paths).
    let want = json!({"jsonrpc": "2.0", "id": 5, "result": {
        "content": [{"type": "text", "text": "notes_append(7) done"}],
        "isError": false, "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "crm", "version": ""}}}});
    runtime().block_on(async {
        let (direct, sdk) = both_paths(&gw.url).await;
        assert_eq!(direct, sdk);
        assert_eq!((direct.0, direct.1.as_str()), (200, "application/json"), "{}", direct.2);
        assert_eq!(serde_json::from_str::<Value>(&direct.2).ok(), Some(want.clone()));
        let metrics = reqwest::get(format!("{}/metrics", gw.url.trim_end_matches("/mcp")))
            .await
            .expect("metrics")
            .text()
            .await
            .unwrap_or_default();
        assert_contains(
            &metrics,
            "toolgate_decisions_total{configuration=\"support-chat\",reason=\"allowed\",stage=\"call\"} 2\n",
        );
    });
    assert_eq!(lines(&dir.join("meta.log")), ["-", "token"]);
    assert_eq!(
        lines(&dir.join("calls.log")),
        ["start", "notes_append", "notes_append"]
    );
    gw.stop();
    let records: Vec<Value> = lines(&dir.join("decisions.jsonl"))
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|r: &Value| r["stage"] == "call")
        .collect();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["input"]["resource"]["id"], "mcp_crm_notes_append");
        assert_eq!(r["input"]["subject"]["id"], "support");
        assert_eq!(r["result"]["decision"], true);
        assert_eq!(r["result"]["context"]["reason"], Value::Null);
    }
}

/// What the direct path does not serve goes to the SDK as it came: a
/// refused tool (never reaching the upstream), a call with a progress
/// token, one whose `Mcp-Name` or `Mcp-Method` is not the body's (the
/// SDK's 400); and the
/// Host and Origin checks come before either path.
#[test]
fn what_the_direct_path_does_not_serve_the_sdk_answers_as_before() {
    let (gw, _crm, dir) = gateway("gw-direct-not", &[], "");
    runtime().block_on(async {
        // Refused: not in the support bot's profile.
        let refused = call_body("mcp_crm_refund_issue", "7", json!({}), json!({}));
        let (status, ctype, body) = send(&gw.url, &refused).await;
        assert_eq!((status, ctype.as_str()), (200, "application/json"), "{body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(v["error"]["code"], json!(-31001), "{body}");
        assert_eq!(v["error"]["data"]["toolgate"]["kind"], json!("notInProfile"), "{body}");
        assert_eq!(v["error"]["data"]["toolgate"]["profile"], json!("support-readonly"), "{body}");
        // A progress token: the SDK's path.
        let progress = call_body(
            "mcp_crm_notes_append",
            "7",
            json!({}),
            json!({"progressToken": "p1"}),
        );
        let (status, _, body) = send(&gw.url, &progress).await;
        assert_eq!(status, 200, "{body}");
        assert_contains(&body, r#""text":"notes_append(7) done""#);
        let plain = call_body("mcp_crm_notes_append", "7", json!({}), json!({}));
        // A plain call from a foreign Origin or to a foreign Host: the
        // checks in front of every route refuse it before any path.
        for extra in [("origin", "http://evil.example"), ("host", "evil.example")] {
            let (status, _) = send_with(&gw.url, "tools/call", "mcp_crm_notes_append", extra, &plain).await;
            assert_eq!(status, 403, "{extra:?}");
        }
        // Headers naming another tool or method than the body: the SDK's 400.
        let none = ("x-none", "-");
        let (status, v) =
            send_with(&gw.url, "tools/call", "mcp_crm_customer-360_lookup", none, &plain).await;
        assert_eq!(status, 400);
        assert_eq!(
            v["error"],
            json!({"code": -32020, "message": "Mcp-Name header `mcp_crm_customer-360_lookup` does not match body value `mcp_crm_notes_append`"})
        );
        let (status, v) = send_with(&gw.url, "prompts/get", "mcp_crm_notes_append", none, &plain).await;
        assert_eq!(status, 400);
        assert_eq!(v["error"]["code"], json!(-32020), "{v}");
        assert_contains(
            v["error"]["message"].as_str().unwrap_or_default(),
            "Mcp-Method header `prompts/get` does not match",
        );
    });
    assert_eq!(lines(&dir.join("meta.log")), ["token"]);
    assert_eq!(lines(&dir.join("calls.log")), ["start", "notes_append"]);
    drop(gw);
}

/// A plain read and a plain prompt take the direct path too, answered as
/// the SDK's path answers them.
#[test]
fn a_plain_read_and_prompt_take_the_direct_path_and_are_answered_as_the_sdk_answers_them() {
    let (gw, _crm, dir) = gateway("gw-direct-read", &[], "");
    let read = json!({"uri": "crm://customers/42"});
    let prompt = json!({"name": "mcp_crm_summary", "arguments": {"id": "42"}});
    runtime().block_on(async {
        for (method, params, want) in [
            (
                "resources/read",
                read,
                json!({"contents": [{"uri": "crm://customers/42", "mimeType": "text/plain",
                                      "text": "contents of crm://customers/42"}]}),
            ),
            (
                "prompts/get",
                prompt,
                json!({"messages": [{"role": "user",
                                      "content": {"type": "text", "text": "Summarise customer 42"}}]}),
            ),
        ] {
            let direct = send(&gw.url, &request_body(method, params.clone(), json!({}))).await;
            let sdk = send(&gw.url, &request_body(method, params, json!({"roots": {}}))).await;
            assert_eq!(direct, sdk, "{method}");
            assert_eq!((direct.0, direct.1.as_str()), (200, "application/json"), "{}", direct.2);
            let v: Value = serde_json::from_str(&direct.2).unwrap_or_default();
            for (k, x) in want.as_object().into_iter().flatten() {
                assert_eq!(&v["result"][k], x, "{method}: {}", direct.2);
            }
            assert_eq!(v["result"]["resultType"], json!("complete"), "{method}");
        }
    });
    assert_eq!(lines(&dir.join("meta.log")), ["-", "token", "-", "token"]);
    assert_eq!(
        lines(&dir.join("calls.log")),
        [
            "start",
            "read crm://customers/42",
            "read crm://customers/42",
            "prompt summary",
            "prompt summary"
        ]
    );
    drop(gw);
}

/// An upstream that answers with an SSE stream: the direct path reads the
/// answer from it, and the client gets the same bytes as on the SDK's path.
#[test]
fn an_upstream_answering_with_a_stream_is_read_on_the_direct_path() {
    let (gw, _crm, dir) = gateway("gw-direct-sse", &[("CRM_SSE", "1")], "");
    runtime().block_on(async {
        let (direct, sdk) = both_paths(&gw.url).await;
        assert_eq!(direct, sdk);
        assert_eq!(
            (direct.0, direct.1.as_str()),
            (200, "application/json"),
            "{}",
            direct.2
        );
        let v: Value = serde_json::from_str(&direct.2).unwrap_or_default();
        assert_eq!(
            v["result"]["content"],
            json!([{"type": "text", "text": "notes_append(7) done"}])
        );
    });
    assert_eq!(lines(&dir.join("meta.log")), ["-", "token"]);
    drop(gw);
}

/// On the direct path an answer over max-result-bytes is the bound's
/// error, as on the SDK's, whether it comes as JSON or as an SSE event.
#[test]
fn the_direct_path_keeps_the_result_bound() {
    // A JSON answer and an SSE stream's event, each over the bound.
    for sse in ["0", "1"] {
        let (gw, _crm, dir) = gateway(
            &format!("gw-direct-bound-{sse}"),
            &[("CRM_HUGE_RESULT", "200000"), ("CRM_SSE", sse)],
            "max-result-bytes = 65536\n",
        );
        runtime().block_on(async {
            let plain = call_body("mcp_crm_notes_append", "7", json!({}), json!({}));
            let roots = call_body("mcp_crm_notes_append", "7", json!({"roots": {}}), json!({}));
            // The SDK's path over a stream's event: its transport closes
            // ("Transport closed"), not the bound's error (noted in issue 49).
            let bodies = if sse == "1" {
                vec![plain]
            } else {
                vec![plain, roots]
            };
            for body in bodies {
                let (status, _, text) = send(&gw.url, &body).await;
                assert_eq!(status, 200, "{text}");
                let v: Value = serde_json::from_str(&text).unwrap_or_default();
                assert_eq!(v["error"]["code"], json!(-32603), "{text}");
                assert_contains(
                    v["error"]["message"].as_str().unwrap_or_default(),
                    "answered more than 65536 bytes (max-result-bytes)",
                );
            }
        });
        let want: &[&str] = if sse == "1" { &["-"] } else { &["-", "token"] };
        assert_eq!(lines(&dir.join("meta.log")), want, "CRM_SSE={sse}");
        drop(gw);
    }
}

/// A raw session (revision 2025-11-25) opened with the support key by a
/// client declaring `caps`: its id, once its requests can take the direct
/// path (the gateway learns a session at its `notifications/initialized`,
/// which the SDK hands on a moment after answering it).
async fn session(url: &str, caps: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": caps,
                   "clientInfo": {"name": "raw", "version": "1"}}});
    let r = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {SUPPORT_KEY}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .expect("an answer");
    assert_eq!(r.status().as_u16(), 200);
    let id = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string();
    let _ = r.text().await;
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(in_session(url, &id, &done).await.status().as_u16(), 202);
    // A request the SDK serves in the session: its worker hands on the
    // notification before it.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    assert_eq!(in_session(url, &id, &list).await.status().as_u16(), 200);
    id
}

/// POST `body` in session `id` as a 2025-11-25 client with the support key.
async fn in_session(url: &str, id: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {SUPPORT_KEY}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", id)
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
}

/// [`in_session`]'s status, content type and body.
async fn sent_in_session(url: &str, id: &str, body: &Value) -> (u16, String, String) {
    answered(in_session(url, id, body).await).await
}

/// A 2025-11-25 `method` request with `params`.
fn legacy_body(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// In a session whose client declared nothing an upstream could ask it,
/// a call, a read and a prompt take the direct path; in one whose client
/// declared roots, the SDK's. Each gets the same status, content type and
/// bytes on both, and both calls are counted as allowed.
#[test]
fn a_sessions_plain_requests_take_the_direct_path_and_are_answered_as_the_sdk_answers_them() {
    let (gw, _crm, dir) = gateway("gw-direct-session", &[], "");
    let requests = [
        (
            "tools/call",
            json!({"name": "mcp_crm_notes_append", "arguments": {"id": "7"}}),
        ),
        ("resources/read", json!({"uri": "crm://customers/42"})),
        (
            "prompts/get",
            json!({"name": "mcp_crm_summary", "arguments": {"id": "42"}}),
        ),
    ];
    runtime().block_on(async {
        let plain = session(&gw.url, json!({})).await;
        let roots = session(&gw.url, json!({"roots": {}})).await;
        for (method, params) in &requests {
            let body = legacy_body(5, method, params.clone());
            let direct = sent_in_session(&gw.url, &plain, &body).await;
            let sdk = sent_in_session(&gw.url, &roots, &body).await;
            assert_eq!(direct, sdk, "{method}");
            assert_eq!((direct.0, direct.1.as_str()), (200, "application/json"), "{}", direct.2);
            let v: Value = serde_json::from_str(&direct.2).unwrap_or_default();
            assert_eq!(v["id"], json!(5), "{method}: {}", direct.2);
            // The result in the shape of the session's revision.
            assert_eq!(v["result"].get("resultType"), None, "{method}: {}", direct.2);
        }
        let metrics = reqwest::get(format!("{}/metrics", gw.url.trim_end_matches("/mcp")))
            .await
            .expect("metrics")
            .text()
            .await
            .unwrap_or_default();
        assert_contains(
            &metrics,
            "toolgate_decisions_total{configuration=\"support-chat\",reason=\"allowed\",stage=\"call\"} 2\n",
        );
    });
    assert_eq!(
        lines(&dir.join("meta.log")),
        ["-", "token", "-", "token", "-", "token"]
    );
    assert_eq!(
        lines(&dir.join("calls.log")),
        [
            "start",
            "notes_append",
            "notes_append",
            "read crm://customers/42",
            "read crm://customers/42",
            "prompt summary",
            "prompt summary"
        ]
    );
    drop(gw);
}

/// A session's request on the direct path, cancelled by its client: the
/// upstream's work is cancelled and the request is not answered (its
/// stream ends without an event, as the SDK ends it). A client that went
/// away first has not cancelled it (revision 2025-11-25): the call runs on
/// until then. The upstream answers with SSE: on 2026-07-28 it learns of a
/// cancellation by its request's connection closing, which the Python
/// SDK's server notices on a stream (answering JSON it does not, on either
/// path).
#[test]
fn a_cancel_reaches_a_sessions_call_on_the_direct_path_and_going_away_does_not() {
    let (gw, _crm, dir) = gateway("gw-direct-cancel", &[("CRM_SSE", "1")], "");
    let calls = dir.join("calls.log");
    let slow = |id: u64| {
        legacy_body(
            id,
            "tools/call",
            json!({"name": "mcp_crm_customer-360_lookup", "arguments": {"id": "slow"}}),
        )
    };
    // Until the upstream's call log holds `n` lines `line` (10 s at most).
    let logged = |line: &str, n: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while lines(&calls).iter().filter(|l| *l == line).count() < n {
            assert!(std::time::Instant::now() < deadline, "{:?}", lines(&calls));
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let started = |n: usize| logged("customer-360_lookup", n);
    let cancelled = |n: usize| logged("cancelled", n);
    let cancel = |id: u64| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "the user gave up"}})
    };
    // Requests in flight on tasks of their own while the test waits.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let sid = rt.block_on(session(&gw.url, json!({})));
    let url = gw.url.clone();
    let (s, b) = (sid.clone(), slow(8));
    let pending = rt.spawn(async move { sent_in_session(&url, &s, &b).await });
    started(1);
    let at = std::time::Instant::now();
    let status = rt.block_on(async { in_session(&gw.url, &sid, &cancel(8)).await.status() });
    assert_eq!(status.as_u16(), 202);
    let answer = rt.block_on(pending).expect("the request's answer");
    assert_eq!(
        answer,
        (200, "text/event-stream".to_string(), String::new())
    );
    assert!(at.elapsed() < std::time::Duration::from_secs(5));
    cancelled(1);
    // A client that goes away mid-call: nothing cancelled (the upstream
    // would log it at once), until it sends its cancellation.
    let url = gw.url.clone();
    let (s, b) = (sid.clone(), slow(9));
    let gone = rt.spawn(async move { sent_in_session(&url, &s, &b).await });
    started(2);
    gone.abort();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        lines(&calls).iter().filter(|l| *l == "cancelled").count(),
        1,
        "{:?}",
        lines(&calls)
    );
    let status = rt.block_on(async { in_session(&gw.url, &sid, &cancel(9)).await.status() });
    assert_eq!(status.as_u16(), 202);
    cancelled(2);
    drop(gw);
}

/// A session the SDK no longer holds is its 404, whichever path its
/// request would have taken.
#[test]
fn an_ended_session_is_the_sdks_404() {
    let (gw, _crm, dir) = gateway("gw-direct-ended", &[], "");
    runtime().block_on(async {
        let sid = session(&gw.url, json!({})).await;
        let r = reqwest::Client::new()
            .delete(&gw.url)
            .header("authorization", format!("Bearer {SUPPORT_KEY}"))
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &sid)
            .send()
            .await
            .expect("an answer");
        assert_eq!(r.status().as_u16(), 204);
        let body = legacy_body(
            5,
            "tools/call",
            json!({"name": "mcp_crm_notes_append", "arguments": {"id": "7"}}),
        );
        let answer = sent_in_session(&gw.url, &sid, &body).await;
        assert_eq!(answer.0, 404, "{}", answer.2);
        let answer = sent_in_session(&gw.url, "no-such-session", &body).await;
        assert_eq!(answer.0, 404, "{}", answer.2);
    });
    assert_eq!(lines(&dir.join("calls.log")), ["start"]);
    drop(gw);
}

/// The official Python SDK's client in its session (2025-11-25, opened
/// with `initialize`): its plain call takes the direct path, its refused
/// one the SDK's, each answered as it expects.
#[test]
fn the_python_sdks_session_call_takes_the_direct_path() {
    let (gw, _crm, dir) = gateway("gw-direct-python", &[], "");
    let o = std::process::Command::new(python())
        .arg(fixture("python_client.py"))
        .args([
            &gw.url,
            SUPPORT_KEY,
            "mcp_crm_refund_issue",
            "mcp_crm_notes_append",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap_or_default();
    assert_eq!(
        v["calls"],
        json!({
            "mcp_crm_refund_issue": {"code": -31001, "kind": "notInProfile"},
            "mcp_crm_notes_append": {"text": ["notes_append(7) done"]},
        })
    );
    assert_eq!(lines(&dir.join("meta.log")), ["-"]);
    assert_eq!(lines(&dir.join("calls.log")), ["start", "notes_append"]);
    drop(gw);
}

/// Requests on the direct path never reach the SDK's session worker, yet
/// they keep their session: one busy for twice `session-idle-ms` on the
/// direct path alone lives on; left idle, it ends (the SDK's 404).
#[test]
fn a_session_busy_on_the_direct_path_lives_and_an_idle_one_ends() {
    let (gw, _crm, dir) = gateway("gw-direct-idle", &[], "session-idle-ms = 1500\n");
    let body = legacy_body(
        5,
        "tools/call",
        json!({"name": "mcp_crm_notes_append", "arguments": {"id": "7"}}),
    );
    runtime().block_on(async {
        let sid = session(&gw.url, json!({})).await;
        let began = std::time::Instant::now();
        let mut calls = 0;
        while began.elapsed() < std::time::Duration::from_millis(3500) {
            let (status, _, text) = sent_in_session(&gw.url, &sid, &body).await;
            assert_eq!(status, 200, "after {:?}: {text}", began.elapsed());
            assert_contains(&text, "notes_append(7) done");
            calls += 1;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        assert!(calls >= 8, "{calls}");
        tokio::time::sleep(std::time::Duration::from_millis(3000)).await;
        let (status, _, text) = sent_in_session(&gw.url, &sid, &body).await;
        assert_eq!(status, 404, "{text}");
    });
    let metas = lines(&dir.join("meta.log"));
    assert!(metas.iter().all(|m| m == "-"), "{metas:?}");
    drop(gw);
}
