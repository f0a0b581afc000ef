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

/// Only a POST with every 2026-07-28 header once, no session, no
/// `Mcp-Param-*`, JSON and SSE accepted unweighted and a declared length
/// within the bound is read here; anything else goes to the SDK unread.
#[test]
fn only_a_plain_2026_call_is_screened_in() {
    assert!(screened(&Method::POST, &headers(&PLAIN), 4096));
    assert!(!screened(&Method::GET, &headers(&PLAIN), 4096));
    assert!(!screened(&Method::POST, &headers(&PLAIN), 199));
    let with = |extra: (&'static str, &'static str)| {
        let mut h = headers(&PLAIN);
        h.append(extra.0, HeaderValue::from_static(extra.1));
        screened(&Method::POST, &h, 4096)
    };
    assert!(!with(("mcp-session-id", "s1")));
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
/// 2026-07-28.
#[test]
fn an_answer_has_the_status_the_sdk_gives_it() {
    let status = |code: ErrorCode| {
        answer(RequestId::Number(3), Err(ErrorData::new(code, "m", None))).status()
    };
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
    );
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        ok.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
}
