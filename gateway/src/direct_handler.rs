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

use super::*;

/// What every request on the direct path has: its HTTP parts, id and
/// `_meta`, the caller, and the name `Mcp-Name` must carry.
struct Plain<'r> {
    parts: &'r Parts,
    id: &'r RequestId,
    meta: &'r RequestMetaObject,
    caller: Identity,
    request_id: Option<String>,
    caps: ClientCapabilities,
}

impl Handler {
    /// The middleware in front of the SDK's endpoint: a request the direct
    /// path serves is answered here; any other goes on as it came (its body
    /// read once and handed on).
    pub(crate) async fn direct(
        self,
        req: axum::http::Request<Body>,
        next: axum::middleware::Next,
    ) -> Response {
        let max = self.gw.config.limits.max_body_bytes;
        if !crate::direct::screened(req.method(), req.headers(), max) {
            return next.run(req).await;
        }
        let (parts, body) = req.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, max).await else {
            // Shorter or longer than it declared, or cut.
            return (
                StatusCode::BAD_REQUEST,
                "Bad Request: the body does not match its Content-Length",
            )
                .into_response();
        };
        if let Some(r) = crate::direct::request_of(&bytes) {
            if let Some(answer) = self.serve_direct(&parts, &r).await {
                return answer;
            }
        }
        next.run(axum::http::Request::from_parts(parts, Body::from(bytes)))
            .await
    }

    /// `r` served on the direct path, or `None` (nothing decided, logged
    /// or sent): the SDK serves it.
    async fn serve_direct(
        &self,
        parts: &Parts,
        r: &JsonRpcRequest<ClientRequest>,
    ) -> Option<Response> {
        let meta = r.request.get_meta();
        let caps = crate::direct::plain_envelope(meta)?;
        let (method, named) = match &r.request {
            ClientRequest::CallToolRequest(x) => ("tools/call", x.params.name.as_ref()),
            ClientRequest::ReadResourceRequest(x) => ("resources/read", x.params.uri.as_str()),
            ClientRequest::GetPromptRequest(x) => ("prompts/get", x.params.name.as_str()),
            _ => return None,
        };
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
        };
        match &r.request {
            ClientRequest::CallToolRequest(x) => self.direct_call(plain, &x.params).await,
            ClientRequest::ReadResourceRequest(x) => self.direct_read(plain, &x.params).await,
            ClientRequest::GetPromptRequest(x) => self.direct_prompt(plain, &x.params).await,
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
            Some(ProtocolVersion::V_2026_07_28),
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
        let limits = &gw.config.limits;
        let answer = crate::direct::call(
            &c,
            url,
            route.name,
            params.clone(),
            &client_op.carrier(),
            limits,
        )
        .await;
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
        Some(crate::direct::answer(
            p.id.clone(),
            answer.map(ServerResult::from),
        ))
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
        let limits = &self.gw.config.limits;
        let r = crate::direct::read(&c, url, params.clone(), &client_op.carrier(), limits).await;
        self.ended(client_op, "resources/read", true, Ended::of(&r));
        read_named(&op, &r, uri);
        self.ended(op, "resources/read", false, Ended::of(&r));
        Some(crate::direct::answer(
            p.id.clone(),
            r.map(ServerResult::from),
        ))
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
        let limits = &self.gw.config.limits;
        let r = crate::direct::prompt(&c, url, forwarded, &client_op.carrier(), limits).await;
        self.ended(client_op, "prompts/get", true, Ended::of(&r));
        prompt_named(&op, &r, &params.name);
        self.ended(op, "prompts/get", false, Ended::of(&r));
        Some(crate::direct::answer(
            p.id.clone(),
            r.map(ServerResult::from),
        ))
    }
}

/// `c` when the direct path reaches it: a URL upstream on 2026-07-28, up.
fn reachable(c: Arc<Connection>) -> Option<Arc<Connection>> {
    (c.url.is_some() && crate::upstream::is_modern(&c) && !c.is_down()).then_some(c)
}
