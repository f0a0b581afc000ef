//! The handler's half of the direct path ([`crate::direct`]): the same
//! steps as [`Handler::call_tool_in`], [`Handler::read_resource_in`] and
//! [`Handler::get_prompt_in`] take for a request they forward, from the
//! HTTP request instead of the SDK's request context.

use std::sync::Arc;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientRequest, GetMeta, JsonRpcRequest,
    ProtocolVersion, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::config::GatewayLimits;
use crate::direct::{Message, Screened, Sending};
use crate::session_book::{InFlight, Known};

/// What every request on the direct path has: its HTTP parts, id and
/// `_meta`, the caller, what its client declared, the revision it is
/// answered under, and (in a session) its client's cancellation.
struct Plain<'r> {
    parts: &'r Parts,
    id: &'r RequestId,
    meta: &'r RequestMetaObject,
    caller: Identity,
    request_id: Option<String>,
    caps: ClientCapabilities,
    version: ProtocolVersion,
    cancelled: Option<&'r CancellationToken>,
}

impl Plain<'_> {
    /// Whether it is a session's (a revision before 2026-07-28).
    fn legacy(&self) -> bool {
        self.version.has_initialize()
    }

    fn answer(&self, r: Result<ServerResult, ErrorData>) -> Response {
        crate::direct::answer(self.id.clone(), r, self.legacy())
    }

    fn sending<'a>(
        &'a self,
        trace: &'a HashMap<String, String>,
        limits: &'a GatewayLimits,
    ) -> Sending<'a> {
        Sending {
            trace,
            limits,
            cancelled: self.cancelled,
        }
    }
}

impl Handler {
    /// The middleware in front of the SDK's endpoint (whose sessions are
    /// `sessions`): a request the direct path serves is answered here; any
    /// other goes on as it came (its body read once and handed on).
    pub(crate) async fn direct(
        self,
        sessions: Arc<LocalSessionManager>,
        req: axum::http::Request<Body>,
        next: axum::middleware::Next,
    ) -> Response {
        let max = self.gw.config.limits.max_body_bytes;
        // Anything a session's client sends keeps it (session_book.rs).
        if let Some(id) = req.headers().get("mcp-session-id") {
            if let Ok(id) = id.to_str() {
                self.book.touch(id);
            }
        }
        match crate::direct::screened(req.method(), req.headers(), max) {
            None => next.run(req).await,
            Some(Screened::Stateless) => self.stateless(req, next).await,
            Some(Screened::Session { id, version }) => {
                // A session this endpoint's SDK holds, on the revision its
                // client opened it with.
                let known = self.book.get(&id).filter(|k| k.version.as_str() == version);
                let Some(known) = known else {
                    return next.run(req).await;
                };
                if !sessions.has_session(&id).await.unwrap_or(false) {
                    return next.run(req).await;
                }
                self.in_session(known, req, next).await
            }
        }
    }

    /// A 2026-07-28 request without a session.
    async fn stateless(
        self,
        req: axum::http::Request<Body>,
        next: axum::middleware::Next,
    ) -> Response {
        let (parts, bytes) = match body_of(req, self.gw.config.limits.max_body_bytes).await {
            Ok(x) => x,
            Err(r) => return r,
        };
        if let Message::Request(r) = crate::direct::message_of(&bytes) {
            if let Some(answer) = self.serve_stateless(&parts, &r).await {
                return answer;
            }
        }
        next.run(axum::http::Request::from_parts(parts, Body::from(bytes)))
            .await
    }

    /// A request in a session `known`. A client's `notifications/cancelled`
    /// reaches its request here when the request is on this path (and goes
    /// on to the SDK as well, for its own).
    async fn in_session(
        self,
        known: Arc<Known>,
        req: axum::http::Request<Body>,
        next: axum::middleware::Next,
    ) -> Response {
        let (mut parts, mut bytes) = match body_of(req, self.gw.config.limits.max_body_bytes).await
        {
            Ok(x) => x,
            Err(r) => return r,
        };
        match crate::direct::message_of(&bytes) {
            Message::Request(r)
                if crate::direct::plain_in_session(r.request.get_meta(), &known.capabilities) =>
            {
                if let Some(flight) = known.begin(&r.id) {
                    // On these revisions a client that goes away has not
                    // cancelled its request: it runs to its end on a task
                    // of its own, as on the SDK's path.
                    let task = tokio::spawn(async move {
                        let answer = self.serve_in_session(&parts, &r, &known, &flight).await;
                        (answer, parts, bytes)
                    });
                    match task.await {
                        Ok((Some(answer), ..)) => return answer,
                        Ok((None, p, b)) => (parts, bytes) = (p, b),
                        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                    }
                }
            }
            Message::Cancelled(id) => known.cancel(&id),
            _ => {}
        }
        next.run(axum::http::Request::from_parts(parts, Body::from(bytes)))
            .await
    }

    /// `r` served on the direct path, or `None` (nothing decided, logged
    /// or sent): the SDK serves it.
    async fn serve_stateless(
        &self,
        parts: &Parts,
        r: &JsonRpcRequest<ClientRequest>,
    ) -> Option<Response> {
        let meta = r.request.get_meta();
        let caps = crate::direct::plain_envelope(meta)?;
        let (method, named) = method_and_name(&r.request)?;
        // The headers name what the body asks, or the SDK answers the mismatch.
        let header = |name: &str| parts.headers.get(name).map(|v| v.as_bytes());
        if header("mcp-method") != Some(method.as_bytes())
            || header("mcp-name") != Some(named.as_bytes())
        {
            return None;
        }
        let (caller, request_id) = identity_of(Some(parts)).ok()?;
        let plain = Plain {
            parts,
            id: &r.id,
            meta,
            caller,
            request_id,
            caps,
            version: ProtocolVersion::V_2026_07_28,
            cancelled: None,
        };
        self.serve_plain(plain, &r.request).await
    }

    /// A session's request `r` served on the direct path, or `None`. One
    /// its client cancelled is not answered.
    async fn serve_in_session(
        &self,
        parts: &Parts,
        r: &JsonRpcRequest<ClientRequest>,
        known: &Known,
        flight: &InFlight,
    ) -> Option<Response> {
        let (caller, request_id) = identity_of(Some(parts)).ok()?;
        let plain = Plain {
            parts,
            id: &r.id,
            meta: r.request.get_meta(),
            caller,
            request_id,
            caps: known.capabilities.clone(),
            version: known.version.clone(),
            cancelled: Some(&flight.token),
        };
        let answer = self.serve_plain(plain, &r.request).await?;
        Some(match flight.token.is_cancelled() {
            true => crate::direct::unanswered(),
            false => answer,
        })
    }

    async fn serve_plain(&self, p: Plain<'_>, request: &ClientRequest) -> Option<Response> {
        match request {
            ClientRequest::CallToolRequest(x) => self.direct_call(p, &x.params).await,
            ClientRequest::ReadResourceRequest(x) => self.direct_read(p, &x.params).await,
            ClientRequest::GetPromptRequest(x) => self.direct_prompt(p, &x.params).await,
            _ => None,
        }
    }

    /// Its SERVER span, as [`Handler::operation`] opens it.
    fn direct_operation(
        &self,
        method: &str,
        p: &Plain<'_>,
        attributes: Vec<KeyValue>,
    ) -> Operation {
        self.operation_of(
            method,
            None,
            (p.meta, Some(&p.parts.headers)),
            p.id,
            Some(p.version.clone()),
            || attributes,
        )
    }

    /// `server`'s connection, when the direct path reaches it ([`reachable`]).
    fn direct_upstream(&self, server: &str) -> Option<Arc<Connection>> {
        reachable(self.gw.upstreams.get(server)?.load_full())
    }

    async fn direct_call(&self, p: Plain<'_>, params: &CallToolRequestParams) -> Option<Response> {
        let gw = &self.gw;
        let name = params.name.as_ref();
        let table = gw.table();
        let ctx = context(&self.configuration, &table, &p.caller).ok()?;
        let d = ctx.decide(name);
        if !d.allowed || d.needs_approval {
            return None;
        }
        let catalog = gw.catalog.load();
        let mode = crate::catalog::CallMode {
            stealth: gw.config.stealth,
            approved: false,
        };
        let unlogged = mcp::Provenance {
            decision_id: None,
            table_digest: None,
        };
        let route = catalog
            .call(&ctx, &table, &gw.pins, name, unlogged, mode)
            .ok()?;
        if route.header_params || !crate::direct::plain_header_value(route.name) {
            return None;
        }
        let c = self.direct_upstream(route.server)?;
        let url = c.url.as_ref()?;
        // The call is this path's from here: recorded and forwarded as
        // `call_tool_in` records and forwards an allowed call.
        let op = self.direct_operation(
            "tools/call",
            &p,
            vec![KeyValue::new("gen_ai.operation.name", "execute_tool")],
        );
        self.describe_call(&op, name, &d, params);
        let digest = table.digest_hex();
        self.log(
            &p.caller,
            p.request_id.as_deref(),
            &digest,
            "call",
            &d,
            None,
        );
        self.finding(&op, &d, &digest, "tool_call", None);
        self.count_allowed(&d);
        let client_op = self.client_call(&op, route, &d);
        let trace = client_op.carrier();
        let how = p.sending(&trace, &gw.config.limits);
        let answer =
            crate::direct::call(&c, url, route.name, params.clone(), p.legacy(), &how).await;
        self.called(client_op, &c, &answer);
        // The SDK's own guard (SEP-2663): a task handle only for a client
        // that declared tasks.
        let answer = match answer {
            Ok(CallToolResponse::Task(_)) if !p.caps.supports_tasks() => {
                Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ))
            }
            a => a,
        };
        self.ended(op, "tools/call", false, Ended::of_call(&answer));
        Some(p.answer(answer.map(ServerResult::from)))
    }

    async fn direct_read(
        &self,
        p: Plain<'_>,
        params: &ReadResourceRequestParams,
    ) -> Option<Response> {
        let uri = params.uri.as_str();
        let c = reachable(
            self.gw
                .resource_upstream(&self.configuration, &p.caller, uri)?,
        )?;
        let url = c.url.as_ref()?;
        if !crate::direct::plain_header_value(uri) {
            return None;
        }
        let op = self.direct_operation("resources/read", &p, Vec::new());
        let client_op = op.client("resources/read", Some(uri), || {
            vec![KeyValue::new("toolgate.upstream", c.name.clone())]
        });
        let trace = client_op.carrier();
        let how = p.sending(&trace, &self.gw.config.limits);
        let r = crate::direct::read(&c, url, params.clone(), &how).await;
        self.ended(client_op, "resources/read", true, Ended::of(&r));
        read_named(&op, &r, uri);
        self.ended(op, "resources/read", false, Ended::of(&r));
        Some(p.answer(r.map(ServerResult::from)))
    }

    async fn direct_prompt(
        &self,
        p: Plain<'_>,
        params: &GetPromptRequestParams,
    ) -> Option<Response> {
        let table = self.gw.table();
        let ctx = context(&self.configuration, &table, &p.caller).ok()?;
        let offerings = self.gw.offerings.load();
        let pinned = pinned_prompt(&self.gw, &table, &offerings, &params.name)?;
        let (server, own) = (pinned.server.as_str(), pinned.own.as_str());
        if !ctx.sees_server(server) || !crate::direct::plain_header_value(own) {
            return None;
        }
        let c = self.direct_upstream(server)?;
        let url = c.url.as_ref()?;
        let mut forwarded = params.clone();
        forwarded.name = own.to_string();
        let op = self.direct_operation("prompts/get", &p, Vec::new());
        let client_op = op.client("prompts/get", Some(own), || {
            vec![KeyValue::new("toolgate.upstream", server.to_string())]
        });
        let trace = client_op.carrier();
        let how = p.sending(&trace, &self.gw.config.limits);
        let r = crate::direct::prompt(&c, url, forwarded, &how).await;
        self.ended(client_op, "prompts/get", true, Ended::of(&r));
        prompt_named(&op, &r, &params.name);
        self.ended(op, "prompts/get", false, Ended::of(&r));
        Some(p.answer(r.map(ServerResult::from)))
    }
}

/// A request's method and the name (or URI) it names.
fn method_and_name(r: &ClientRequest) -> Option<(&'static str, &str)> {
    Some(match r {
        ClientRequest::CallToolRequest(x) => ("tools/call", x.params.name.as_ref()),
        ClientRequest::ReadResourceRequest(x) => ("resources/read", x.params.uri.as_str()),
        ClientRequest::GetPromptRequest(x) => ("prompts/get", x.params.name.as_str()),
        _ => return None,
    })
}

/// The request's head and its whole body (at most `max` bytes, as its
/// `Content-Length` declared), or the answer to one that is not.
async fn body_of(
    req: axum::http::Request<Body>,
    max: usize,
) -> Result<(Parts, axum::body::Bytes), Response> {
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, max).await {
        Ok(bytes) => Ok((parts, bytes)),
        // Shorter or longer than it declared, or cut.
        Err(_) => Err((
            StatusCode::BAD_REQUEST,
            "Bad Request: the body does not match its Content-Length",
        )
            .into_response()),
    }
}

/// `c` when the direct path reaches it: a URL upstream on 2026-07-28, up.
fn reachable(c: Arc<Connection>) -> Option<Arc<Connection>> {
    (c.url.is_some() && crate::upstream::is_modern(&c) && !c.is_down()).then_some(c)
}
