use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use rmcp::model::{ErrorCode, ErrorData, RequestId, RequestMetaObject};
use serde_json::json;

use super::*;

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(*k, HeaderValue::from_static(v));
    }
    h
}

const PLAIN: [(&str, &str); 6] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "mcp_crm_notes_append"),
    ("content-length", "200"),
];

fn stateless(s: Option<Screened>) -> bool {
    matches!(s, Some(Screened::Stateless))
}

/// Only a POST with every 2026-07-28 header once, no session, no
/// `Mcp-Param-*`, JSON and SSE accepted unweighted and a declared length
/// within the bound is read here; anything else goes to the SDK unread.
#[test]
fn only_a_plain_2026_call_is_screened_in() {
    let screened = |m: &Method, h: &HeaderMap, max| stateless(screened(m, h, max));
    assert!(screened(&Method::POST, &headers(&PLAIN), 4096));
    assert!(!screened(&Method::GET, &headers(&PLAIN), 4096));
    assert!(!screened(&Method::POST, &headers(&PLAIN), 199));
    let with = |extra: (&'static str, &'static str)| {
        let mut h = headers(&PLAIN);
        h.append(extra.0, HeaderValue::from_static(extra.1));
        screened(&Method::POST, &h, 4096)
    };
    assert!(!with(("mcp-param-region", "eu")));
    assert!(!with(("mcp-method", "tools/call")), "a second Mcp-Method");
    let without = |name: &str| {
        let pairs: Vec<_> = PLAIN.iter().copied().filter(|(k, _)| *k != name).collect();
        screened(&Method::POST, &headers(&pairs), 4096)
    };
    for name in [
        "content-type",
        "accept",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "content-length",
    ] {
        assert!(!without(name), "{name}");
    }
    let replaced = |name: &'static str, value: &'static str| {
        let mut h = headers(&PLAIN);
        h.insert(name, HeaderValue::from_static(value));
        screened(&Method::POST, &h, 4096)
    };
    assert!(!replaced("mcp-protocol-version", "2025-11-25"));
    assert!(!replaced("mcp-method", "tools/list"));
    assert!(replaced("mcp-method", "resources/read"));
    assert!(replaced("mcp-method", "prompts/get"));
    assert!(!replaced("accept", "application/json"));
    assert!(!replaced(
        "accept",
        "application/json, text/event-stream;q=0"
    ));
    assert!(!replaced("content-type", "text/plain"));
    assert!(replaced("content-type", "application/json; charset=utf-8"));
    assert!(replaced("accept", "text/event-stream, application/json"));
}

const SESSION: [(&str, &str); 5] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2025-11-25"),
    ("mcp-session-id", "s1"),
    ("content-length", "200"),
];

/// A session's request is read here with one session id and one revision
/// header, the same HTTP checks, and neither `Mcp-Method` nor `Mcp-Name`
/// (the SDK checks those against the body).
#[test]
fn a_sessions_request_is_screened_in_by_its_session_id() {
    let session = |h: &HeaderMap| match screened(&Method::POST, h, 4096) {
        Some(Screened::Session { id, version }) => Some((id.to_string(), version)),
        _ => None,
    };
    assert_eq!(
        session(&headers(&SESSION)),
        Some(("s1".to_string(), "2025-11-25".to_string()))
    );
    let with = |extra: (&'static str, &'static str)| {
        let mut h = headers(&SESSION);
        h.append(extra.0, HeaderValue::from_static(extra.1));
        session(&h)
    };
    for extra in [
        ("mcp-session-id", "s2"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "x"),
        ("mcp-param-region", "eu"),
    ] {
        assert_eq!(with(extra), None, "{extra:?}");
    }
    let without = |name: &str| {
        let pairs: Vec<_> = SESSION
            .iter()
            .copied()
            .filter(|(k, _)| *k != name)
            .collect();
        session(&headers(&pairs))
    };
    for name in [
        "content-type",
        "accept",
        "mcp-protocol-version",
        "content-length",
    ] {
        assert_eq!(without(name), None, "{name}");
    }
    // Without the session id it is no 2026-07-28 request either.
    assert!(without("mcp-session-id").is_none());
    assert!(screened(&Method::POST, &headers(&SESSION), 199).is_none());
    assert!(screened(&Method::GET, &headers(&SESSION), 4096).is_none());
}

/// A POSTed body as this path reads it: a request of its methods, a
/// cancellation and its id, or anything else.
#[test]
fn a_message_is_a_request_of_ours_a_cancellation_or_the_sdks() {
    let of = |v: serde_json::Value| message_of(v.to_string().as_bytes());
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "t", "arguments": {}}});
    assert!(matches!(of(call), Message::Request(r) if r.id == RequestId::Number(4)));
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}});
    assert!(matches!(of(list), Message::Other));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "r7", "reason": "no"}});
    assert!(matches!(of(cancel), Message::Cancelled(RequestId::String(s)) if s.as_ref() == "r7"));
    assert!(matches!(message_of(b"[1,2]"), Message::Other));
    assert!(matches!(message_of(b"{"), Message::Other));
}

/// A session's request is plain without a progress token or a revision
/// of its own, from a client that can answer nothing an upstream asks.
#[test]
fn a_plain_session_request_asks_for_nothing_the_sdk_carries() {
    let none = ClientCapabilities::default();
    assert!(plain_in_session(&meta(json!({})), &none));
    assert!(plain_in_session(
        &meta(json!({"traceparent": "00-x"})),
        &none
    ));
    assert!(!plain_in_session(&meta(json!({"progressToken": 1})), &none));
    assert!(!plain_in_session(
        &meta(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
        &none
    ));
    for cap in ["elicitation", "sampling", "roots"] {
        let caps: ClientCapabilities = serde_json::from_value(json!({cap: {}})).unwrap_or_default();
        assert!(!plain_in_session(&meta(json!({})), &caps), "{cap}");
    }
}

fn meta(v: serde_json::Value) -> RequestMetaObject {
    serde_json::from_value(v).unwrap_or_default()
}

/// The envelope leaves nothing for the SDK only when it is complete on
/// 2026-07-28 and asks for no progress, elicitation, sampling or roots.
#[test]
fn a_plain_envelope_asks_for_nothing_the_sdk_carries() {
    let base = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"experimental": {}},
    });
    assert!(plain_envelope(&meta(base.clone())).is_some());
    let with = |k: &str, v: serde_json::Value| {
        let mut m = base.clone();
        m[k] = v;
        plain_envelope(&meta(m)).is_some()
    };
    assert!(!with("progressToken", json!("p1")));
    assert!(!with(
        "io.modelcontextprotocol/protocolVersion",
        json!("2025-11-25")
    ));
    for cap in ["elicitation", "sampling", "roots"] {
        assert!(
            !with(
                "io.modelcontextprotocol/clientCapabilities",
                json!({cap: {}})
            ),
            "{cap}"
        );
    }
    let mut missing = base.clone();
    if let Some(m) = missing.as_object_mut() {
        m.remove("io.modelcontextprotocol/clientCapabilities");
    }
    assert!(plain_envelope(&meta(missing)).is_none());
    assert_eq!(
        plain_envelope(&meta(base)).map(|c| c.experimental.is_some()),
        Some(true)
    );
}

/// A name goes into `Mcp-Name` as it is only where the SDK would not
/// write it in Base64.
#[test]
fn a_plain_header_value_is_one_the_sdk_writes_as_it_is() {
    assert!(plain_header_value("customer-360_lookup"));
    assert!(plain_header_value("a b"));
    for name in [
        "",
        " lead",
        "trail\t",
        "é",
        "line\nbreak",
        "=?base64?eA==?=",
    ] {
        assert!(!plain_header_value(name), "{name:?}");
    }
}

/// The answer's HTTP status is the SDK's for the same JSON-RPC message on
/// 2026-07-28; in a session, always 200.
#[test]
fn an_answer_has_the_status_the_sdk_gives_it() {
    let status = |code: ErrorCode| {
        answer(
            RequestId::Number(3),
            Err(ErrorData::new(code, "m", None)),
            false,
        )
        .status()
    };
    for code in [ErrorCode::METHOD_NOT_FOUND, ErrorCode::HEADER_MISMATCH] {
        let r = answer(
            RequestId::Number(3),
            Err(ErrorData::new(code, "m", None)),
            true,
        );
        assert_eq!(r.status(), StatusCode::OK);
    }
    assert_eq!(status(ErrorCode::METHOD_NOT_FOUND), StatusCode::NOT_FOUND);
    assert_eq!(status(ErrorCode::HEADER_MISMATCH), StatusCode::BAD_REQUEST);
    assert_eq!(
        status(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        status(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(status(ErrorCode::INTERNAL_ERROR), StatusCode::OK);
    assert_eq!(status(ErrorCode(-31001)), StatusCode::OK);
    let ok = answer(
        RequestId::Number(3),
        Ok(rmcp::model::ServerResult::empty(())),
        false,
    );
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        ok.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
}

/// An answer's JSON (its body is whole at once).
fn json_of(r: Response) -> serde_json::Value {
    let bytes = futures_util::FutureExt::now_or_never(axum::body::to_bytes(r.into_body(), 1 << 20))
        .and_then(Result::ok)
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

/// A result goes out in the shape the SDK gives a client of its revision.
#[test]
fn an_answer_has_the_shape_the_sdk_gives_its_clients_revision() {
    let id = || RequestId::Number(3);
    let result =
        || rmcp::model::ServerResult::CallToolResult(rmcp::model::CallToolResult::success(vec![]));
    assert_eq!(
        json_of(answer(id(), Ok(result()), false))["result"]["resultType"],
        json!("complete")
    );
    assert_eq!(
        json_of(answer(id(), Ok(result()), true))["result"].get("resultType"),
        None
    );
    let missing = |legacy| {
        let e = ErrorData::new(ErrorCode::RESOURCE_NOT_FOUND, "no such resource", None);
        json_of(answer(id(), Err(e), legacy))["error"]["code"].clone()
    };
    assert_eq!(missing(false), json!(ErrorCode::INVALID_PARAMS.0));
    assert_eq!(missing(true), json!(ErrorCode::RESOURCE_NOT_FOUND.0));
    let asked = rmcp::model::InputRequiredResult::new(None, Some("state".into()));
    let v = json_of(answer(
        id(),
        Ok(rmcp::model::ServerResult::InputRequiredResult(asked)),
        true,
    ));
    assert_eq!(v["error"]["code"], json!(ErrorCode::INVALID_REQUEST.0));
}
