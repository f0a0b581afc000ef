//! The one answer writer of the decision service (as OPA's
//! `v1/server/writer`): every answer of the API and the console is JSON
//! written here, under the answer cap, with the table digest header; every
//! error answer is an [`ApiError`]'s body.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Serialize;

use crate::api::ApiError;
use toolgate_service::listener::DIGEST_HEADER;

/// Whether a request's body is declared `application/json` (with parameters
/// such as `charset=utf-8`).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

pub(crate) fn json<T: Serialize>(status: StatusCode, value: &T, digest: Option<&str>) -> Response {
    let mut body = Vec::with_capacity(256);
    if serde_json::to_writer(&mut body, value).is_err() {
        body.clear();
    }
    json_body(status, body, digest)
}

/// A writer that refuses to grow past its cap: an answer is never built
/// beyond [`crate::RequestLimits::max_answer_bytes`].
struct Capped {
    buf: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + b.len() > self.cap {
            return Err(std::io::Error::other("answer over the cap"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON bytes under `cap`, or `None` when it would pass it (the
/// writing stops there: nothing past the cap is built).
pub(crate) fn to_json_capped<T: Serialize>(value: &T, cap: usize) -> Option<Vec<u8>> {
    let mut w = Capped {
        buf: Vec::with_capacity(cap.min(64 << 10)),
        cap,
    };
    serde_json::to_writer(&mut w, value).ok()?;
    Some(w.buf)
}

/// [`json`] written under `cap` bytes, starting with `capacity`; an answer
/// that would pass the cap is an `answerTooLarge` error instead.
pub(crate) fn json_capped<T: Serialize>(
    value: &T,
    digest: Option<&str>,
    capacity: usize,
    cap: usize,
) -> Result<Response, ApiError> {
    let mut w = Capped {
        buf: Vec::with_capacity(capacity.min(cap)),
        cap,
    };
    serde_json::to_writer(&mut w, value).map_err(|_| {
        ApiError::bad(
            "answerTooLarge",
            format!(
                "the answer would be over {cap} bytes: ask for fewer evaluations, or leave the refusals out (options.refusals: false)"
            ),
        )
    })?;
    Ok(json_body(StatusCode::OK, w.buf, digest))
}

fn json_body(status: StatusCode, body: Vec<u8>, digest: Option<&str>) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(d) = digest.and_then(|d| HeaderValue::from_str(d).ok()) {
        r.headers_mut().insert(DIGEST_HEADER, d);
    }
    r
}

pub(crate) fn error_response(e: &ApiError) -> Response {
    let mut r = Response::new(Body::from(e.body()));
    *r.status_mut() = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}
