//! A plain `tools/call`, `resources/read` or `prompts/get` served without
//! the SDK's per-request machinery (docs/gateway.md, "The direct path").
//!
//! The SDK's server side hands each request through a service task and a
//! handler task (on 2026-07-28 it builds that service per request), its
//! client side hands the upstream request through a service loop and a
//! transport worker, each a task hop each way. For the commonest requests
//! that plumbing was most of what the gateway cost: `perf` put 15% of its
//! CPU per call in parking and waking threads alone. So a request that
//! needs nothing of that plumbing is decided by the same handler steps and
//! sent with the SDK's own HTTP client (`post_message_with_response_limits`,
//! on the pooled connections the SDK's transport uses):
//!
//! - the request is one the SDK would serve as it is: on 2026-07-28 a POST
//!   with no session, one `Mcp-Method` of [`METHODS`] and an `Mcp-Name`
//!   equal to the body's name (or URI), the `_meta` envelope complete; in a
//!   session (2025-11-25 and before), one session id the SDK holds and
//!   [`crate::session_book`] knows, its revision in `MCP-Protocol-Version`,
//!   neither `Mcp-Method` nor `Mcp-Name`, no revision in `_meta`; either
//!   way no `Mcp-Param-*` header, JSON and SSE accepted, a declared length
//!   within `max-body-bytes`;
//! - it asks for nothing the plumbing carries: no progress token, and no
//!   elicitation, sampling or roots among its client's capabilities
//!   (nothing to ask it on its stream);
//! - a call is allowed without approval and routed
//!   ([`crate::catalog::Catalog::call`]), a read's URI or a prompt (pinned)
//!   belongs to a server the caller sees, on a URL upstream whose session
//!   is on 2026-07-28; a called tool's definition asks for no `Mcp-Param-*`
//!   header, and the forwarded name goes into `Mcp-Name` as it is.
//!
//! A session's request runs on a task of its own (a client going away has
//! not cancelled it on those revisions) until its client's
//! `notifications/cancelled` for it, and is answered in the shape the SDK
//! gives the session's revision.
//!
//! Anything else, and every refusal, goes on to the SDK as before, which
//! decides again: this path only ever forwards what the table allows, and
//! no refusal is written twice. Nothing is decided, logged or sent before
//! the last of these checks passed.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientJsonRpcMessage,
    ClientNotification, ClientRequest, ErrorCode, ErrorData, GetMeta, GetPromptRequestParams,
    GetPromptResponse, JsonRpcRequest, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerNotification,
    ServerResult,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use tokio_util::sync::CancellationToken;

use crate::config::GatewayLimits;
use crate::upstream::{Connection, Event, Url};

/// The methods this path serves.
const METHODS: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

/// What a request may be, judged by its head before its body is read.
pub(crate) enum Screened {
    /// A 2026-07-28 request, without a session.
    Stateless,
    /// A request in session `id`, naming revision `version` in its
    /// `MCP-Protocol-Version`.
    Session { id: Arc<str>, version: String },
}

/// Whether the HTTP request may be one this path serves, before its body
/// is read: anything else goes to the SDK untouched.
pub(crate) fn screened(
    method: &Method,
    headers: &axum::http::HeaderMap,
    max_body: usize,
) -> Option<Screened> {
    let one = |name: &str| {
        let mut all = headers.get_all(name).iter();
        match (all.next(), all.next()) {
            (Some(v), None) => v.to_str().ok(),
            _ => None,
        }
    };
    let plain_http = method == Method::POST
        && !headers.keys().any(|k| k.as_str().starts_with("mcp-param-"))
        && one(header::CONTENT_TYPE.as_str()).is_some_and(|v| {
            let essence = v.split(';').next().unwrap_or("").trim();
            essence.eq_ignore_ascii_case("application/json")
        })
        && accepts_both(headers)
        && one(header::CONTENT_LENGTH.as_str())
            .and_then(|v| v.parse::<usize>().ok())
            .is_some_and(|n| n <= max_body);
    let version = one("mcp-protocol-version").filter(|_| plain_http)?;
    if !headers.contains_key("mcp-session-id") {
        let stateless = version == ProtocolVersion::V_2026_07_28.as_str()
            && one("mcp-method").is_some_and(|m| METHODS.contains(&m))
            && one("mcp-name").is_some();
        return stateless.then_some(Screened::Stateless);
    }
    // A session's request names itself in its body only (the SDK checks
    // `Mcp-Method` and `Mcp-Name` when a client sends them).
    if headers.contains_key("mcp-method") || headers.contains_key("mcp-name") {
        return None;
    }
    Some(Screened::Session {
        id: one("mcp-session-id")?.into(),
        version: version.to_string(),
    })
}

/// Whether `Accept` takes both JSON and SSE, neither at `q=0` (else the
/// SDK answers 406).
fn accepts_both(headers: &axum::http::HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for v in headers.get_all(header::ACCEPT) {
        let Ok(v) = v.to_str() else { return false };
        for range in v.split(',') {
            let mut parts = range.split(';');
            let essence = parts.next().unwrap_or("").trim();
            if parts.any(|p| p.trim().starts_with("q=") || p.trim().starts_with("Q=")) {
                // A weighted range: left to the SDK's own reading.
                return false;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// A POSTed message, as far as this path is concerned.
pub(crate) enum Message {
    /// A request of [`METHODS`].
    Request(Box<JsonRpcRequest<ClientRequest>>),
    /// A client's `notifications/cancelled` of request `.0`.
    Cancelled(RequestId),
    /// Anything else: the SDK's.
    Other,
}

pub(crate) fn message_of(body: &[u8]) -> Message {
    match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
        Ok(ClientJsonRpcMessage::Request(r))
            if matches!(
                r.request,
                ClientRequest::CallToolRequest(_)
                    | ClientRequest::ReadResourceRequest(_)
                    | ClientRequest::GetPromptRequest(_)
            ) =>
        {
            Message::Request(Box::new(r))
        }
        Ok(ClientJsonRpcMessage::Notification(n)) => match n.notification {
            ClientNotification::CancelledNotification(c) => match c.params.request_id {
                Some(id) => Message::Cancelled(id),
                None => Message::Other,
            },
            _ => Message::Other,
        },
        _ => Message::Other,
    }
}

/// Whether a session's request leaves nothing for the SDK's plumbing to
/// carry: no progress token, no revision of its own (the SDK's stateless
/// path would take it), and its session's client able to answer nothing
/// an upstream could ask.
pub(crate) fn plain_in_session(meta: &RequestMetaObject, caps: &ClientCapabilities) -> bool {
    meta.protocol_version().is_none()
        && meta.get_progress_token().is_none()
        && answers_nothing(caps)
}

/// Whether a client declared none of the capabilities an upstream could
/// ask it through (elicitation, sampling, roots).
fn answers_nothing(caps: &ClientCapabilities) -> bool {
    caps.elicitation.is_none() && caps.sampling.is_none() && caps.roots.is_none()
}

/// Whether a request's envelope leaves nothing for the SDK's plumbing to
/// carry: complete on 2026-07-28, no progress token, no capability the
/// upstream could ask the client through.
pub(crate) fn plain_envelope(meta: &RequestMetaObject) -> Option<ClientCapabilities> {
    let v = ProtocolVersion::V_2026_07_28;
    if meta.protocol_version().as_ref() != Some(&v)
        || !meta.missing_required_keys(&v).is_empty()
        || meta.get_progress_token().is_some()
    {
        return None;
    }
    let caps = meta.client_capabilities()?;
    answers_nothing(&caps).then_some(caps)
}

/// Whether `name` goes into a header as it is (the SDK writes any other
/// in Base64, which only its own client does here).
pub(crate) fn plain_header_value(name: &str) -> bool {
    let padded = name.starts_with([' ', '\t']) || name.ends_with([' ', '\t']);
    let sentinel = name.starts_with("=?base64?") && name.ends_with("?=");
    let printable = name.bytes().all(|b| (0x20..=0x7e).contains(&b));
    !name.is_empty() && !padded && !sentinel && printable
}

/// How a request on this path is sent: the trace it continues, the
/// bounds, and the client's cancellation (a session's request; on
/// 2026-07-28 a client cancels by going away, which drops the request).
pub(crate) struct Sending<'a> {
    pub trace: &'a HashMap<String, String>,
    pub limits: &'a GatewayLimits,
    pub cancelled: Option<&'a CancellationToken>,
}

/// A `tools/call` of `name` (the server's own) to `c`, with the caller's
/// arguments and input answers ([`crate::upstream::forwarded`]). A client
/// of a session cannot read an `InputRequiredResult`: as on the SDK's path
/// ([`crate::upstream::call`]), its input requests are answered as its
/// client would be asked them, and this one declared it can answer none.
pub(crate) async fn call(
    c: &Connection,
    url: &Url,
    name: &str,
    request: CallToolRequestParams,
    legacy: bool,
    how: &Sending<'_>,
) -> Result<CallToolResponse, ErrorData> {
    let mut params = crate::upstream::forwarded(name, request);
    for _ in 0..crate::upstream::INPUT_ROUNDS {
        let kept = legacy.then(|| params.clone());
        let call = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let r = send(c, url, call, ("tools/call", name), how).await?;
        let r = crate::upstream::within(c, how.limits, crate::upstream::call_response(c, r)?)?;
        match (r, kept) {
            (CallToolResponse::InputRequired(asked), Some(mut again)) => {
                again.input_responses = Some(crate::upstream::unanswerable(asked.input_requests)?);
                again.request_state = asked.request_state;
                params = again;
            }
            (r, _) => return Ok(r),
        }
    }
    Err(crate::upstream::too_many_rounds(c))
}

/// A `resources/read` of `request.uri` to `c`. Always asked: the SDK's
/// client may answer a read from its cache while the server's `ttlMs`
/// lasts; this path keeps no cache.
pub(crate) async fn read(
    c: &Connection,
    url: &Url,
    request: ReadResourceRequestParams,
    how: &Sending<'_>,
) -> Result<ReadResourceResponse, ErrorData> {
    let uri = request.uri.clone();
    let read = ClientRequest::ReadResourceRequest(rmcp::model::ReadResourceRequest::new(request));
    let r = match send(c, url, read, ("resources/read", &uri), how).await? {
        ServerResult::ReadResourceResult(r) => ReadResourceResponse::Complete(r),
        ServerResult::InputRequiredResult(r) => ReadResourceResponse::InputRequired(r),
        _ => {
            return Err(failed(
                c,
                "answered a read with another kind of result".into(),
            ))
        }
    };
    crate::upstream::within(c, how.limits, r)
}

/// A `prompts/get` of `request.name` (the server's own) to `c`.
pub(crate) async fn prompt(
    c: &Connection,
    url: &Url,
    request: GetPromptRequestParams,
    how: &Sending<'_>,
) -> Result<GetPromptResponse, ErrorData> {
    let name = request.name.clone();
    let get = ClientRequest::GetPromptRequest(rmcp::model::GetPromptRequest::new(request));
    let r = match send(c, url, get, ("prompts/get", &name), how).await? {
        ServerResult::GetPromptResult(r) => GetPromptResponse::Complete(r),
        ServerResult::InputRequiredResult(r) => GetPromptResponse::InputRequired(r),
        _ => {
            return Err(failed(
                c,
                "answered a prompt with another kind of result".into(),
            ))
        }
    };
    crate::upstream::within(c, how.limits, r)
}

/// `request` to `c` (a URL upstream on 2026-07-28) as the SDK's client
/// sends it: the envelope names the session's revision, the gateway, and
/// that the caller can answer nothing (what [`plain_envelope`] let
/// through); the trace continues in `_meta`; `Mcp-Method` and `Mcp-Name`
/// are `what`. Answered within the upstream timeout and the result bound;
/// what the upstream says besides its answer (log messages, resource
/// updates, list changes) goes where the SDK's client sends it.
async fn send(
    c: &Connection,
    url: &Url,
    mut request: ClientRequest,
    (method, name): (&'static str, &str),
    how: &Sending<'_>,
) -> Result<ServerResult, ErrorData> {
    let limits = how.limits;
    let version = c
        .service
        .peer()
        .peer_info()
        .map(|i| i.protocol_version.clone())
        .unwrap_or(ProtocolVersion::V_2026_07_28);
    let meta = request.get_meta_mut();
    meta.set_protocol_version(version.clone());
    meta.set_client_info(crate::upstream::client_info());
    meta.set_client_capabilities(ClientCapabilities::default());
    crate::upstream::put_trace(meta, how.trace);
    let id = rmcp::model::RequestId::Number(url.next_id.fetch_add(1, Ordering::Relaxed));
    let message = ClientJsonRpcMessage::request(request, id);
    let mut headers = url.headers.clone();
    let version_value = HeaderValue::from_str(version.as_str())
        .map_err(|_| failed(c, format!("the revision `{version}` is no header value")))?;
    headers.insert(
        HeaderName::from_static("mcp-protocol-version"),
        version_value,
    );
    headers.insert(
        HeaderName::from_static("mcp-method"),
        HeaderValue::from_static(method),
    );
    let name_value = HeaderValue::from_str(name)
        .map_err(|_| failed(c, format!("the name `{name}` is no header value")))?;
    headers.insert(HeaderName::from_static("mcp-name"), name_value);
    let mut bounds = StreamableHttpResponseLimits::default();
    bounds.max_sse_event_size = limits.max_result_bytes;
    bounds.max_json_response_size = limits.max_result_bytes;
    let answer = async {
        let posted = url
            .http
            .post_message_with_response_limits(url.uri.clone(), message, None, None, headers, bounds)
            .await
            .map_err(|e| {
                let over = matches!(
                    e,
                    rmcp::transport::streamable_http_client::StreamableHttpError::ResponseBodyTooLarge { .. }
                );
                upstream_failed(c, limits, over, e.to_string())
            })?;
        match posted {
            StreamableHttpPostResponse::Json(m, _) => answer_of(c, m),
            StreamableHttpPostResponse::Sse(mut events, _) => {
                while let Some(event) = events.next().await {
                    // The SDK's bound on one event names itself only in its text.
                    let event = event.map_err(|e| {
                        let text = e.to_string();
                        upstream_failed(c, limits, text.contains("exceeded the maximum size"), text)
                    })?;
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                        continue;
                    };
                    let m: ServerJsonRpcMessage = serde_json::from_str(&data).map_err(|e| {
                        failed(c, format!("answered with what is no JSON-RPC message: {e}"))
                    })?;
                    match m {
                        ServerJsonRpcMessage::Notification(n) => notified(c, n.notification),
                        ServerJsonRpcMessage::Request(_) => return Err(failed(
                            c,
                            "asked the client a question on a request whose client can answer none"
                                .into(),
                        )),
                        m => return answer_of(c, m),
                    }
                }
                Err(failed(
                    c,
                    "ended its answer stream without an answer".into(),
                ))
            }
            // `Accepted`, or a kind of answer this SDK added later.
            _ => Err(failed(c, "accepted the request without an answer".into())),
        }
    };
    // Past the timeout, or cancelled by its client, the request is dropped,
    // which closes its connection: on 2026-07-28 that is the upstream's
    // cancellation.
    let answer = tokio::time::timeout(limits.upstream_timeout, answer);
    let answer = match how.cancelled {
        None => answer.await,
        Some(t) => tokio::select! {
            a = answer => a,
            _ = t.cancelled() => return Err(crate::upstream::cancelled_error()),
        },
    };
    answer.map_err(|_| crate::upstream::timed_out(c, limits))?
}

/// The answer in `m`: its result, or the server's own error.
fn answer_of(c: &Connection, m: ServerJsonRpcMessage) -> Result<ServerResult, ErrorData> {
    match m {
        ServerJsonRpcMessage::Response(r) => Ok(r.result),
        ServerJsonRpcMessage::Error(e) => Err(e.error),
        _ => Err(failed(c, "answered with no result".into())),
    }
}

/// What the upstream said on the call's stream besides its answer, sent
/// where the SDK's client sends it ([`crate::upstream::Listener`]). Progress
/// is not asked for here, so none is relayed.
fn notified(c: &Connection, n: ServerNotification) {
    let listener = c.service.service();
    match n {
        #[allow(deprecated)]
        ServerNotification::LoggingMessageNotification(m) => {
            let _ = listener
                .events
                .send(Event::Log(listener.server.clone(), m.params));
        }
        ServerNotification::ResourceUpdatedNotification(m) => {
            let _ = listener
                .events
                .send(Event::Updated(listener.server.clone(), m.params));
        }
        ServerNotification::ToolListChangedNotification(_)
        | ServerNotification::PromptListChangedNotification(_)
        | ServerNotification::ResourceListChangedNotification(_) => listener.changed.notify_one(),
        _ => {}
    }
}

fn failed(c: &Connection, what: String) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("upstream `{}` {what}", c.name),
        None,
    )
}

/// A transport failure as [`crate::upstream`] words it: `over` the result
/// bound, the bound's error; else the upstream named.
fn upstream_failed(c: &Connection, limits: &GatewayLimits, over: bool, e: String) -> ErrorData {
    if over {
        return crate::upstream::over_result_bound(&c.name, limits);
    }
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("upstream `{}` failed: {e}", c.name),
        None,
    )
}

/// The answer to the client: the JSON-RPC message under its request's id,
/// with the HTTP status the SDK gives it: on 2026-07-28 its
/// `jsonrpc_http_status` (`tower.rs`), in a session (`legacy`) always 200
/// (the answer is an event on a stream the SDK opened with 200).
pub(crate) fn answer(id: RequestId, r: Result<ServerResult, ErrorData>, legacy: bool) -> Response {
    let (status, message) = match as_the_sdk_sends(r, legacy) {
        Ok(result) => (StatusCode::OK, ServerJsonRpcMessage::response(result, id)),
        Err(e) if legacy => (StatusCode::OK, ServerJsonRpcMessage::error(e, Some(id))),
        Err(e) => {
            let status = match e.code {
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
                ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
                _ => StatusCode::OK,
            };
            (status, ServerJsonRpcMessage::error(e, Some(id)))
        }
    };
    match serde_json::to_vec(&message) {
        Ok(body) => Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// A handler's answer as the SDK's server hands it on to a client of a
/// session (`legacy`) or on 2026-07-28 (`Service::handle_request` in its
/// `handler/server.rs`): before 2026-07-28 the result in its older shape
/// (no `resultType: "complete"`, tool output an object) and an
/// `InputRequiredResult` refused; on 2026-07-28 the caching hints filled
/// in and a missing resource the spec's invalid-params.
fn as_the_sdk_sends(
    r: Result<ServerResult, ErrorData>,
    legacy: bool,
) -> Result<ServerResult, ErrorData> {
    match r {
        Ok(ServerResult::InputRequiredResult(_)) if legacy => Err(ErrorData::invalid_request(
            "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
            None,
        )),
        Ok(mut result) => {
            if legacy {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            } else {
                result.fill_missing_cache_hints();
            }
            Ok(result)
        }
        Err(mut e) => {
            if !legacy && e.code == ErrorCode::RESOURCE_NOT_FOUND {
                e.code = ErrorCode::INVALID_PARAMS;
            }
            Err(e)
        }
    }
}

/// The answer to a request its client cancelled: none. The stream the SDK
/// would have opened for it ends without an event, as the SDK ends it.
pub(crate) fn unanswered() -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::empty())
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
