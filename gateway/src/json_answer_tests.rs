use super::*;

use axum::routing::any;
use axum::Router;
use tower::ServiceExt;

const PRIMING: &str = "data: \nid: 0/0\nretry: 3000\n\n";
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":false}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;

/// An app whose POSTs answer `chunks` as an SSE stream, as the SDK does.
fn app(chunks: Vec<String>, max: usize) -> Router<()> {
    Router::new()
        .route(
            "/mcp",
            any(move || {
                let chunks = chunks.clone();
                async move {
                    let stream = futures_util::stream::iter(
                        chunks
                            .into_iter()
                            .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
                    );
                    Response::builder()
                        .header(header::CONTENT_TYPE, "text/event-stream")
                        .header(header::CACHE_CONTROL, "no-cache")
                        .header("mcp-session-id", "s-1")
                        .body(Body::from_stream(stream))
                        .unwrap_or_default()
                }
            }),
        )
        .layer(axum::middleware::from_fn(move |req, next| {
            answer_as_json(max, req, next)
        }))
}

async fn send(app: Router<()>, method: Method, accept: &str) -> (String, Option<String>, String) {
    let req = axum::http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header(header::ACCEPT, accept)
        .body(Body::empty())
        .unwrap_or_default();
    let r = app
        .oneshot(req)
        .await
        .unwrap_or_else(|never| match never {});
    let kind = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let session = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|e| format!("error: {e}"));
    (kind, session, body)
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .map(|rt| rt.block_on(f))
        .unwrap_or_else(|e| panic!("a runtime: {e}"))
}

const BOTH: &str = "application/json, text/event-stream";

#[test]
fn an_answer_alone_goes_out_as_json_with_the_sessions_headers() {
    let chunks = vec![PRIMING.to_string(), format!("data: {ANSWER}\nid: 1/0\n\n")];
    let (kind, session, body) = run(send(app(chunks, 1 << 20), Method::POST, BOTH));
    assert_eq!(kind, "application/json");
    assert_eq!(session.as_deref(), Some("s-1"));
    assert_eq!(body, ANSWER);
}

#[test]
fn an_answer_cut_into_single_bytes_is_found() {
    let whole = format!("{PRIMING}data: {ANSWER}\nid: 1/0\n\n");
    let chunks = whole.chars().map(String::from).collect();
    let (kind, _, body) = run(send(app(chunks, 1 << 20), Method::POST, BOTH));
    assert_eq!((kind.as_str(), body.as_str()), ("application/json", ANSWER));
}

#[test]
fn a_notification_first_passes_the_stream_on_byte_for_byte() {
    let chunks = vec![
        PRIMING.to_string(),
        format!("data: {PROGRESS}\nid: 1/0\n\n"),
        format!("data: {ANSWER}\nid: 2/0\n\n"),
    ];
    let whole = chunks.concat();
    let (kind, _, body) = run(send(app(chunks, 1 << 20), Method::POST, BOTH));
    assert_eq!(kind, "text/event-stream");
    assert_eq!(body, whole);
}

#[test]
fn past_the_bound_the_stream_is_passed_on() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"text":"{}"}}}}"#,
        "x".repeat(ENVELOPE + 2048)
    );
    let chunks: Vec<String> = format!("{PRIMING}data: {big}\n\n")
        .as_bytes()
        .chunks(1000)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let whole = chunks.concat();
    let (kind, _, body) = run(send(app(chunks.clone(), 1024), Method::POST, BOTH));
    assert_eq!(kind, "text/event-stream");
    assert_eq!(body, whole);
    // Under a bound that holds it: JSON.
    let (kind, _, body) = run(send(app(chunks, 1 << 20), Method::POST, BOTH));
    assert_eq!((kind.as_str(), body.len()), ("application/json", big.len()));
}

#[test]
fn a_stream_that_ends_without_a_message_and_other_requests_are_untouched() {
    let (kind, _, body) = run(send(app(vec![PRIMING.into()], 1 << 20), Method::POST, BOTH));
    assert_eq!(
        (kind.as_str(), body.as_str()),
        ("text/event-stream", PRIMING)
    );
    let chunks = vec![PRIMING.to_string(), format!("data: {ANSWER}\n\n")];
    let whole = chunks.concat();
    // A GET (the standalone stream) and a client that takes no JSON.
    for (method, accept) in [(Method::GET, BOTH), (Method::POST, "text/event-stream")] {
        let (kind, _, body) = run(send(app(chunks.clone(), 1 << 20), method.clone(), accept));
        assert_eq!(
            (kind.as_str(), body.as_str()),
            ("text/event-stream", whole.as_str()),
            "{method} {accept}"
        );
    }
}

#[test]
fn events_are_read_as_the_sse_format_says() {
    assert_eq!(Event::of(b"data: \nid: 0/0\nretry: 3000"), Event::Priming);
    assert_eq!(Event::of(b": a comment"), Event::Priming);
    assert_eq!(
        Event::of(format!("data: {ANSWER}\r\nid: 1/0").as_bytes()),
        Event::Answer(ANSWER.as_bytes().to_vec())
    );
    // A message over two data lines is joined with a line feed.
    assert_eq!(
        Event::of(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"error\":{\"code\":1}}"),
        Event::Answer(b"{\"jsonrpc\":\"2.0\",\"id\":1,\n\"error\":{\"code\":1}}".to_vec())
    );
    assert_eq!(
        Event::of(format!("data: {PROGRESS}").as_bytes()),
        Event::Other
    );
    // A request to the client (elicitation) has an id and a method.
    assert_eq!(
        Event::of(br#"data: {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}}"#),
        Event::Other
    );
    assert_eq!(Event::of(b"data: not json"), Event::Other);
    // An error answer whose id is null (the request could not be read).
    let null_id = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
    assert_eq!(
        Event::of(&[b"data: ".as_slice(), null_id].concat()),
        Event::Answer(null_id.to_vec())
    );
    // Not an object; a member twice.
    assert_eq!(
        Event::of(br#"data: [2, null, {"a": 1}, null]"#),
        Event::Other
    );
    assert_eq!(
        Event::of(br#"data: {"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#),
        Event::Other
    );
}

#[test]
fn accept_is_read_as_a_list_of_media_ranges() {
    let with = |v: &str| {
        let mut h = axum::http::HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
        );
        accepts_json(&h)
    };
    assert!(with("application/json, text/event-stream"));
    assert!(with("text/event-stream;q=1, Application/JSON;q=0.5"));
    assert!(with("*/*"));
    assert!(!with("text/event-stream"));
    assert!(!accepts_json(&axum::http::HeaderMap::new()));
}
