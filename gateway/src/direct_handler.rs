//! The handler's half of the direct path ([`crate::direct`]): the same
//! steps as [`Handler::call_tool_in`] takes for a call it forwards, from
//! the HTTP request instead of the SDK's request context.

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    ClientCapabilities, ClientRequest, GetMeta, JsonRpcRequest, ProtocolVersion, ServerResult,
};

use super::*;

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
        if let Some(r) = crate::direct::call_of(&bytes) {
            if let Some(answer) = self.serve_direct(&parts, &r).await {
                return answer;
            }
        }
        next.run(axum::http::Request::from_parts(parts, Body::from(bytes)))
            .await
    }

    /// The call `r` served on the direct path, or `None` (nothing decided,
    /// logged or sent): the SDK serves it.
    async fn serve_direct(
        &self,
        parts: &axum::http::request::Parts,
        r: &JsonRpcRequest<ClientRequest>,
    ) -> Option<Response> {
        let ClientRequest::CallToolRequest(call) = &r.request else {
            return None;
        };
        let meta = r.request.get_meta();
        let caps = crate::direct::plain_envelope(meta)?;
        let name = call.params.name.as_ref();
        if parts.headers.get("mcp-name").map(|v| v.as_bytes()) != Some(name.as_bytes()) {
            return None;
        }
        let (id, request_id) = identity_of(Some(parts)).ok()?;
        let gw = &self.gw;
        let table = gw.table();
        let ctx = context(&self.configuration, &table, &id).ok()?;
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
        let c = gw.upstreams.get(route.server)?.load_full();
        let url = c.url.as_ref()?;
        if !crate::upstream::is_modern(&c) || c.is_down() {
            return None;
        }
        // The call is this path's from here: recorded and forwarded as
        // `call_tool_in` records and forwards an allowed call.
        let op = self.operation_of(
            "tools/call",
            None,
            (meta, Some(&parts.headers)),
            &r.id,
            Some(ProtocolVersion::V_2026_07_28),
            || vec![KeyValue::new("gen_ai.operation.name", "execute_tool")],
        );
        self.describe_call(&op, name, &d, &call.params);
        let digest = table.digest_hex();
        self.log(&id, request_id.as_deref(), &digest, "call", &d, None);
        self.finding(&op, &d, &digest, "tool_call", None);
        self.count_allowed(&d);
        let client_op = self.client_call(&op, route, &d);
        let trace = client_op.carrier();
        // The caller can answer nothing (`plain_envelope`): so the upstream is told.
        let answer = crate::direct::call(
            &c,
            url,
            route.name,
            call.params.clone(),
            ClientCapabilities::default(),
            &trace,
            &gw.config.limits,
        )
        .await;
        self.called(client_op, &c, &answer);
        // The SDK's own guard (SEP-2663): a task handle only for a client
        // that declared tasks.
        let answer = match answer {
            Ok(CallToolResponse::Task(_)) if !caps.supports_tasks() => {
                Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ))
            }
            a => a,
        };
        self.ended(op, "tools/call", false, Ended::of_call(&answer));
        Some(crate::direct::answer(
            r.id.clone(),
            answer.map(ServerResult::from),
        ))
    }
}
