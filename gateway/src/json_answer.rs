//! One request, one JSON answer. The streamable HTTP transport lets a
//! server answer a POSTed request either with `application/json` (one
//! message) or with an SSE stream (notifications and requests to the
//! client, then the answer); clients must take both. With sessions
//! (revision 2025-11-25) the SDK always opens a stream, even when its only
//! event is the answer, and clients then handle a stream per call: the
//! official Python client reads the answer's event and drops the
//! connection, so every call of a kept-alive client opened a new one.
//!
//! So the stream is read up to its first event that carries a message: the
//! answer itself goes out as `application/json`; anything else first
//! (progress, an elicitation, a log message) and the stream is passed on
//! from its first byte, as the SDK wrote it. The SDK's priming event (no
//! data, an id and a retry delay, for a client resuming a cut stream) is
//! not needed once the whole answer is in one body. What is held while
//! waiting is bounded by `max-result-bytes` (plus room for the envelope):
//! past it, the stream is passed on too.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;

/// Room for the JSON-RPC envelope and the SSE framing around an answer.
const ENVELOPE: usize = 64 << 10;

/// The middleware: `max` is the largest answer held to send as JSON.
pub async fn answer_as_json(
    max: usize,
    req: axum::http::Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let takes_json = req.method() == Method::POST && accepts_json(req.headers());
    let r = next.run(req).await;
    if !takes_json || r.status() != StatusCode::OK || !is_event_stream(r.headers()) {
        return r;
    }
    let (mut parts, body) = r.into_parts();
    let mut stream = body.into_data_stream();
    let mut held: Vec<u8> = Vec::new();
    // Where the next event starts in `held`, and where the search for its
    // end goes on (each byte is looked at once, however the answer is cut).
    let (mut start, mut scan) = (0, 0);
    loop {
        while let Some(end) = find(&held[scan..], b"\n\n").map(|i| scan + i) {
            match Event::of(&held[start..end]) {
                Event::Priming => {
                    start = end + 2;
                    scan = start;
                }
                Event::Answer(data) => {
                    parts.headers.remove(header::CACHE_CONTROL);
                    parts.headers.remove(header::TRANSFER_ENCODING);
                    parts.headers.remove(header::CONTENT_LENGTH);
                    parts.headers.remove("x-accel-buffering");
                    parts.headers.insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    return Response::from_parts(parts, Body::from(data));
                }
                Event::Other => return passed_on(parts, held, Ok(stream)),
            }
        }
        scan = held.len().saturating_sub(1).max(start);
        if held.len() > max.saturating_add(ENVELOPE) {
            return passed_on(parts, held, Ok(stream));
        }
        match stream.next().await {
            Some(Ok(chunk)) => held.extend_from_slice(&chunk),
            Some(Err(e)) => return passed_on(parts, held, Err(e)),
            None => return passed_on(parts, held, Ok(stream)),
        }
    }
}

/// The stream as the SDK wrote it: what was held, then the rest (or the
/// error that cut it).
fn passed_on(
    parts: axum::http::response::Parts,
    held: Vec<u8>,
    rest: Result<axum::body::BodyDataStream, axum::Error>,
) -> Response {
    let first =
        futures_util::stream::once(std::future::ready(Ok::<_, axum::Error>(Bytes::from(held))));
    let body = match rest {
        Ok(rest) => Body::from_stream(first.chain(rest)),
        Err(e) => {
            Body::from_stream(first.chain(futures_util::stream::once(std::future::ready(Err(e)))))
        }
    };
    Response::from_parts(parts, body)
}

/// What one SSE event (without its blank line) carries.
#[derive(Debug, PartialEq, Eq)]
enum Event {
    /// No data: the SDK's priming event, or a comment.
    Priming,
    /// A JSON-RPC answer (a result or an error): the message.
    Answer(Vec<u8>),
    /// A notification or a request to the client, or what is not JSON.
    Other,
}

impl Event {
    fn of(event: &[u8]) -> Event {
        let mut data: Vec<u8> = Vec::new();
        let mut lines = 0;
        for line in event.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(value) = line.strip_prefix(b"data:") {
                if lines > 0 {
                    data.push(b'\n');
                }
                data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
                lines += 1;
            }
        }
        if data.iter().all(u8::is_ascii_whitespace) {
            return Event::Priming;
        }
        // Which members the message has, its values skipped unbuilt: an
        // answer of `max-result-bytes` is not made into a value tree.
        let object = data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        match serde_json::from_slice::<Members>(&data) {
            Ok(m) if object && m.id.0 && !m.method.0 && (m.result.0 || m.error.0) => {
                Event::Answer(data)
            }
            _ => Event::Other,
        }
    }
}

/// The members that tell an answer from a notification or a request.
#[derive(serde::Deserialize)]
struct Members {
    #[serde(default)]
    id: Has,
    #[serde(default)]
    method: Has,
    #[serde(default)]
    result: Has,
    #[serde(default)]
    error: Has,
}

/// Whether a member is there (`null` included), its value skipped.
#[derive(Default)]
struct Has(bool);

impl<'de> serde::Deserialize<'de> for Has {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Has, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Has(true))
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn accepts_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.split(';').next().unwrap_or("").trim();
            t.eq_ignore_ascii_case("application/json") || t == "*/*" || t == "application/*"
        })
}

fn is_event_stream(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

#[cfg(test)]
#[path = "json_answer_tests.rs"]
mod tests;
