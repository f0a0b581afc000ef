//! The MCP server side: one handler per client session (legacy) or per
//! request (2026-07-28), all over the one [`Gateway`]. `tools/list` and
//! `tools/call` are decided here; resources, templates and prompts are
//! listed and routed only for servers the caller sees
//! ([`toolgate_runtime::Context::sees_server`]); everything else the SDK
//! answers.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    ErrorCode, ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ServerCapabilities, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
// Logging is the SDK's legacy half (SEP-2577); it is relayed while clients use it.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::ServerHandler;
use toolgate_runtime::log::{
    LogAction, LogApproval, LogContext, LogResource, LogSubject, LogSubjectProperties,
    ServiceInput, ServiceRecord, ServiceResult, ServiceResultContext,
};
use toolgate_runtime::{mcp, Context, Decision, Table};
use toolgate_service::metrics::DecisionLabels;
use toolgate_service::page_token;
use toolgate_service::telemetry::{self, DecisionType, Finding, KeyValue, Operation};

use crate::approvals::{self, Verdict};
use crate::identity::{admitted, Identity};
use crate::pins::Pin;
use crate::session::Session;
use crate::session_book::{Book, Registration};
use crate::upstream::Connection;
use crate::Gateway;

#[derive(Clone)]
pub struct Handler {
    gw: Arc<Gateway>,
    /// The configuration this endpoint decides under (`/mcp` the file's
    /// `configuration`, `/mcp/NAME` each of `configurations`).
    configuration: Arc<str>,
    session: Arc<Session>,
    /// The endpoint's sessions, for the direct path (session_book.rs).
    book: Arc<Book>,
    /// This session's place in `book`, once its client is initialized.
    registration: Arc<std::sync::OnceLock<Registration>>,
}

impl Handler {
    pub fn new(gw: Arc<Gateway>, configuration: Arc<str>, book: Arc<Book>) -> Handler {
        let session = Arc::new(Session::new(&gw));
        Handler {
            gw,
            configuration,
            session,
            book,
            registration: Arc::default(),
        }
    }
}

impl Gateway {
    /// Whether a caller `id` of `configuration` sees `server` under the
    /// table of this moment (an identity the table no longer admits sees
    /// nothing).
    pub(crate) fn sees_server(&self, configuration: &str, id: &Identity, server: &str) -> bool {
        let table = self.table();
        context(configuration, &table, id).is_ok_and(|ctx| ctx.sees_server(server))
    }

    /// The connection of the one server a caller `id` of `configuration`
    /// sees that answers `uri`, or `None` (nobody answers it, or the caller
    /// may not know who does).
    fn resource_upstream(
        &self,
        configuration: &str,
        id: &Identity,
        uri: &str,
    ) -> Option<Arc<Connection>> {
        let offerings = self.offerings.load();
        let server = offerings.server_of_uri(uri)?;
        if !self.sees_server(configuration, id, server) {
            return None;
        }
        self.upstreams.get(server).map(|s| s.load_full())
    }
}

/// The identity the middleware proved for this request. Its absence is an
/// internal error, never an anonymous caller.
fn identity(cx: &RequestContext<RoleServer>) -> Result<(Identity, Option<String>), ErrorData> {
    identity_of(cx.extensions.get::<axum::http::request::Parts>())
}

/// [`identity`] from the request's HTTP parts.
fn identity_of(
    parts: Option<&axum::http::request::Parts>,
) -> Result<(Identity, Option<String>), ErrorData> {
    let id = parts.and_then(|p| p.extensions.get::<Identity>()).cloned();
    let request_id = parts
        .and_then(|p| p.headers.get("x-request-id"))
        .and_then(|v| v.to_str().ok())
        .map(|s| s.chars().take(256).collect());
    match id {
        Some(id) => Ok((id, request_id)),
        None => Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            "no identity for this request",
            None,
        )),
    }
}

fn context<'t>(
    configuration: &str,
    table: &'t Table,
    id: &Identity,
) -> Result<Context<'t>, ErrorData> {
    // The middleware checked the identity against the table of its moment;
    // a reload since then is checked again here.
    admitted(table, id).map_err(|e| e.jsonrpc())?;
    let ctx = table.context(configuration).map_err(|e| {
        ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("configuration `{configuration}`: {e}"),
            None,
        )
    })?;
    Ok(ctx.role(id.role).consumer(id.consumer.as_deref()))
}

/// A list's page cursor (`toolgate_service::page_token`, the one scheme of
/// both fronts), scoped to the list's kind and the catalog generation it
/// was made for: a cursor of another list, catalog or table is refused.
fn cursor(kind: &str, generation: u64, digest: &str, offset: usize) -> String {
    page_token::encode(offset, digest, &format!("{kind}.{generation}"))
}

fn offset_of(c: &str, kind: &str, generation: u64, digest: &str) -> Result<usize, ErrorData> {
    page_token::offset(c, digest, &format!("{kind}.{generation}")).ok_or_else(|| {
        ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            "this cursor is not one of the current list (the tools or the table changed): list again from the start",
            None,
        )
    })
}

/// One page of `items` after the cursor of `request` (a list of kind
/// `kind`), and the next cursor: the same bounds and cursor checks as
/// `tools/list`.
fn page<T>(
    gw: &Gateway,
    kind: &str,
    digest: &str,
    request: Option<&PaginatedRequestParams>,
    items: impl Iterator<Item = T>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let generation = gw.catalog.load().generation;
    let start = match request.and_then(|r| r.cursor.as_deref()) {
        None => 0,
        Some(c) => offset_of(c, kind, generation, digest)?,
    };
    let size = gw.config.limits.list_page_size;
    let mut out = Vec::new();
    for (i, item) in items.enumerate().skip(start) {
        if out.len() == size {
            return Ok((out, Some(cursor(kind, generation, digest, i))));
        }
        out.push(item);
    }
    Ok((out, None))
}

/// The page of `items` (each with its server) a caller of `configuration`
/// may see: only the servers it sees ([`Context::sees_server`], asked once
/// per server), paginated as `tools/list` is.
fn visible_page<'a, T: Clone + 'a>(
    gw: &Gateway,
    configuration: &str,
    cx: &RequestContext<RoleServer>,
    kind: &str,
    request: Option<&PaginatedRequestParams>,
    items: impl Iterator<Item = (&'a str, &'a T)>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let (id, _) = identity(cx)?;
    let table = gw.table();
    let ctx = context(configuration, &table, &id)?;
    let mut sees = Sees {
        ctx: &ctx,
        known: HashMap::new(),
    };
    let items = items
        .filter(|(s, _)| sees.server(s))
        .map(|(_, x)| x.clone());
    page(gw, kind, &table.digest_hex(), request, items)
}

/// Whether `ctx` sees `server`, asked once per server per request.
struct Sees<'c, 't> {
    ctx: &'c Context<'t>,
    known: HashMap<String, bool>,
}

impl Sees<'_, '_> {
    fn server(&mut self, server: &str) -> bool {
        if let Some(&b) = self.known.get(server) {
            return b;
        }
        let b = self.ctx.sees_server(server);
        self.known.insert(server.to_string(), b);
        b
    }
}

/// The answer to a resource nobody serves, or one of a server the caller
/// does not see: the same, word for word.
fn no_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "Resource not found: {}",
            toolgate_runtime::names::shown(uri)
        ),
        None,
    )
}

/// The prompt the gateway names `name`, when its definition is the pinned
/// one under `table` (or pinning is off): a prompt that changed since the
/// review, or that the registry does not pin, is withheld as a tool is.
fn pinned_prompt<'o>(
    gw: &Gateway,
    table: &Table,
    offerings: &'o crate::offerings::Offerings,
    name: &str,
) -> Option<&'o crate::offerings::OfferedPrompt> {
    let p = offerings.prompt(name)?;
    (gw.pins.view(table).check_prompt(name, &p.server, &p.digest) == Pin::Holds).then_some(p)
}

/// A call a person declined to approve.
fn declined(request_id: &str, approver: &str) -> Verdict {
    Verdict::Refuse {
        log: LogApproval {
            request_id: request_id.into(),
            outcome: "declined".into(),
            approver: Some(approver.into()),
            grant_id: None,
            grant_error: None,
        },
        message: Some(
            "A person declined this call: it did not run. Do not retry it on your own.".into(),
        ),
    }
}

/// The answer to a prompt nobody serves, or one of a server the caller
/// does not see: the same, word for word.
fn no_prompt(name: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        format!("Unknown prompt: {}", toolgate_runtime::names::shown(name)),
        None,
    )
}

impl Handler {
    fn log(
        &self,
        id: &Identity,
        request_id: Option<&str>,
        digest: &str,
        stage: &str,
        d: &Decision<'_>,
        approval: Option<LogApproval>,
    ) -> Option<String> {
        let core = &self.gw.core;
        if !core.keeps_decisions() {
            return None;
        }
        let decision_id = core.ids.next_id();
        let rec = ServiceRecord {
            decision_id: decision_id.clone(),
            timestamp: toolgate_service::record_stamps::rfc3339(SystemTime::now()),
            path: format!(
                "mcp/tools/{}",
                if stage == "offer" { "list" } else { "call" }
            ),
            request_id: request_id.map(str::to_string),
            table_digest: digest.to_string(),
            stage: stage.to_string(),
            input: ServiceInput {
                subject: LogSubject {
                    kind: "mcp_client".into(),
                    id: id.caller.clone(),
                    properties: LogSubjectProperties {
                        role: id.role.as_str().into(),
                        consumer: id.consumer.clone(),
                    },
                },
                action: LogAction {
                    name: if stage == "offer" { "list" } else { "call" }.into(),
                },
                resource: LogResource {
                    kind: "tool".into(),
                    id: d.tool.to_string(),
                    properties: None,
                },
                context: LogContext {
                    configuration: self.configuration.to_string(),
                    enforcement: None,
                    run: None,
                },
            },
            result: ServiceResult {
                decision: d.allowed,
                context: ServiceResultContext {
                    reason: d.reason.map(|r| r.code().to_string()),
                    observed_only: d.observed_only,
                    name_visible: !d.hidden,
                    run_error: None,
                    approval,
                },
            },
        };
        core.export_decision(&rec);
        if let Some(log) = &core.log {
            log.record(rec);
        }
        Some(decision_id)
    }

    /// The SERVER span of a request a client sent (docs/observability.md),
    /// continuing its trace (`_meta.traceparent`, else the HTTP header).
    fn operation(
        &self,
        method: &str,
        target: Option<&str>,
        cx: &RequestContext<RoleServer>,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Operation {
        let parts = cx.extensions.get::<axum::http::request::Parts>();
        self.operation_of(
            method,
            target,
            (&cx.meta, parts.map(|p| &p.headers)),
            &cx.id,
            cx.protocol_version(),
            attributes,
        )
    }

    /// [`Handler::operation`] from a request's parts: its `_meta` and HTTP
    /// headers, its id and revision.
    fn operation_of(
        &self,
        method: &str,
        target: Option<&str>,
        (meta, headers): (
            &rmcp::model::RequestMetaObject,
            Option<&axum::http::HeaderMap>,
        ),
        id: &rmcp::model::RequestId,
        version: Option<rmcp::model::ProtocolVersion>,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Operation {
        let t = &self.gw.core.telemetry;
        if !t.is_on() {
            return Operation::default();
        }
        let mut attributes = attributes();
        let carrier = telemetry::carrier(|k| meta.0 .0.get(k).and_then(|v| v.as_str()), headers);
        attributes.push(KeyValue::new("jsonrpc.request.id", id.to_string()));
        attributes.push(KeyValue::new(
            "toolgate.configuration",
            self.configuration.to_string(),
        ));
        if let Some(v) = version {
            attributes.push(KeyValue::new("mcp.protocol.version", v.to_string()));
        }
        t.server(method, target, &carrier, attributes)
    }

    /// A decision as a finding on `op` (`tool_call`, or `tool_definition`
    /// for a definition withheld against its pin).
    fn finding(
        &self,
        op: &Operation,
        d: &Decision<'_>,
        digest: &str,
        target_type: &'static str,
        reason: Option<&str>,
    ) {
        if !self.gw.core.telemetry.is_on() {
            return;
        }
        let decision = match (d.allowed, reason) {
            (true, None) if d.observed_only => DecisionType::Audit,
            (true, None) => DecisionType::Allow,
            _ => DecisionType::Deny,
        };
        op.finding(&Finding {
            decision,
            reason: reason.or(d.reason.map(|r| r.code())),
            policy: &self.configuration,
            version: digest,
            target_type,
            target: self.gw.core.telemetry.tool_name(d.tool, !d.hidden),
        });
    }

    /// What to do with a call of a tool that needs approval, from the
    /// grant it can be given (docs/approvals.md, "At the gateway"): the
    /// answer to the gateway's own question (2026-07-28), an approver's
    /// answer out of band, or the caller's user asked now; else it waits
    /// for an approver.
    async fn approve(
        &self,
        ctx: &Context<'_>,
        d: &Decision<'_>,
        id: &Identity,
        request: &mut CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Verdict {
        let ap = &self.gw.approvals;
        let args = request.arguments.clone().map(serde_json::Value::Object);
        let refuse = |outcome: &str, request_id: &str, error: Option<&str>, message: String| {
            Verdict::Refuse {
                log: LogApproval {
                    request_id: request_id.into(),
                    outcome: outcome.into(),
                    approver: None,
                    grant_id: None,
                    grant_error: error.map(str::to_string),
                },
                message: Some(message),
            }
        };
        // 1. The client's answer to the gateway's own question: the state is
        //    the gateway's, so it never reaches the upstream.
        let own_state = request
            .request_state
            .as_deref()
            .and_then(|s| s.strip_prefix(approvals::STATE_PREFIX))
            .map(str::to_string);
        if let Some(qid) = own_state {
            let answer = request
                .input_responses
                .take()
                .and_then(|mut r| r.remove(approvals::INPUT_KEY));
            request.request_state = None;
            let Some(p) = ap.take(&qid, &id.caller) else {
                return refuse(
                    "refused",
                    &qid,
                    Some("approvalUnknown"),
                    "This approval question is not open here (answered, expired or another caller's): call the tool again to be asked.".into(),
                );
            };
            let asked = ctx.approval_request(d.tool, args.as_ref(), &qid);
            if p.request.table_digest != asked.table_digest {
                // The person was asked under the old policy: ask again under this one.
                return refuse(
                    "refused",
                    &qid,
                    Some("grantOtherTable"),
                    "The policy changed while this call waited for approval: call the tool again to be asked under the new policy.".into(),
                );
            }
            if !approvals::same_call(&p.request, &asked) {
                return refuse(
                    "refused",
                    &qid,
                    Some("grantOtherCall"),
                    "The answer was to the approval of another call: a person approves this call."
                        .into(),
                );
            }
            if !answer.as_ref().is_some_and(approvals::approves) {
                return declined(&qid, &id.caller);
            }
            let g = ap.mint(asked, &id.caller, self.gw.core.ids.next_id());
            return ap.redeem(ctx, d, args.as_ref(), &g);
        }
        // 2. An approver answered this very call out of band.
        let request_id = self.gw.core.ids.next_id();
        let asked = ctx.approval_request(d.tool, args.as_ref(), &request_id);
        match ap.answered(&asked, &id.caller) {
            Some(Ok(g)) => return ap.redeem(ctx, d, args.as_ref(), &g),
            Some(Err(approver)) => return declined(&asked.request_id, &approver),
            None => {}
        }
        let policy = ctx.call_refusal(d).map_or_else(String::new, |r| {
            let by = match (&r.profile, &r.configuration) {
                (Some(p), _) => format!("access profile `{p}`"),
                (None, Some(c)) => format!("configuration `{c}`"),
                (None, None) => "the policy".into(),
            };
            let file = r.file.map(|f| format!(" ({f})")).unwrap_or_default();
            format!("{by}{file} asks a person to approve each call of this tool")
        });
        let shown_args = args.clone().unwrap_or_else(|| serde_json::json!({}));
        let caps = cx.client_capabilities().unwrap_or_default();
        let modern = cx.protocol_version().is_some_and(|v| !v.has_initialize());
        // 3. The caller's own user, when its client can ask.
        if ap.settings.ask_caller && caps.elicitation.is_some() {
            let text = approvals::message(&asked, &shown_args, &policy);
            let Ok(params) = serde_json::from_value::<rmcp::model::ElicitRequestParams>(
                approvals::elicitation(text),
            ) else {
                return refuse(
                    "refused",
                    &request_id,
                    Some("approvalUnasked"),
                    "The approval question could not be written.".into(),
                );
            };
            if modern {
                let Some(qid) = ap.ask(asked, &id.caller, shown_args, policy) else {
                    return refuse(
                        "refused",
                        &request_id,
                        Some("approvalsFull"),
                        approvals::full_text(),
                    );
                };
                let mut requests = rmcp::model::InputRequests::new();
                requests.insert(
                    approvals::INPUT_KEY.into(),
                    rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params)),
                );
                let result = rmcp::model::InputRequiredResult::new(
                    Some(requests),
                    Some(format!("{}{qid}", approvals::STATE_PREFIX)),
                );
                let log = LogApproval {
                    request_id: qid,
                    outcome: "asked".into(),
                    approver: None,
                    grant_id: None,
                    grant_error: None,
                };
                return Verdict::Ask(Box::new(result), log);
            }
            let call = crate::upstream::CallOf {
                peer: cx.peer.clone(),
                request: cx.id.clone(),
                capabilities: caps.clone(),
                modern,
                trace: Default::default(),
            };
            let answer = crate::upstream::from_client(
                "elicitation/create",
                ap.settings.expiry,
                &call,
                rmcp::model::ServerRequest::ElicitRequest(rmcp::model::ElicitRequest::new(params)),
                cx.ct.cancelled(),
            )
            .await;
            return match answer {
                Ok(rmcp::model::ClientResult::ElicitResult(r))
                    if serde_json::to_value(&r).is_ok_and(|v| approvals::approves(&v)) =>
                {
                    let g = ap.mint(asked, &id.caller, self.gw.core.ids.next_id());
                    ap.redeem(ctx, d, args.as_ref(), &g)
                }
                Ok(_) => declined(&request_id, &id.caller),
                Err(e) => refuse(
                    "refused",
                    &request_id,
                    Some("approvalUnanswered"),
                    format!(
                        "The person could not be asked to approve this call: {}",
                        e.message
                    ),
                ),
            };
        }
        // 4. An approver, at /approvals.
        match ap.ask(asked, &id.caller, shown_args, policy) {
            Some(qid) => Verdict::Refuse {
                log: LogApproval {
                    request_id: qid,
                    outcome: "pending".into(),
                    approver: None,
                    grant_id: None,
                    grant_error: None,
                },
                message: None,
            },
            None => refuse(
                "refused",
                &request_id,
                Some("approvalsFull"),
                approvals::full_text(),
            ),
        }
    }

    /// The call's `approvalRequired` refusal, with what became of its
    /// approval in `data.approval` (and where an approver answers it).
    fn approval_refusal(
        &self,
        ctx: &Context<'_>,
        d: &Decision<'_>,
        at: mcp::Provenance<'_>,
        log: &LogApproval,
        message: Option<String>,
    ) -> ErrorData {
        let Some(r) = ctx.call_refusal(d) else {
            let e = mcp::unknown_tool_error(d.tool);
            return ErrorData::new(ErrorCode(e.code as i32), e.message, e.data);
        };
        let mut e = mcp::refusal_error(&r, at, false);
        if let Some(m) = message {
            e.message = m;
        }
        let mut approval = serde_json::to_value(log).unwrap_or_default();
        if log.outcome == "pending" {
            approval["approveAt"] =
                format!("{}/approvals/{}", self.gw.public_url, log.request_id).into();
        }
        if let Some(data) = e.data.as_mut() {
            data["approval"] = approval;
        }
        ErrorData::new(ErrorCode(e.code as i32), e.message, e.data)
    }

    fn count(&self, stage: &str, reason: &str, n: u64) {
        self.gw.core.count_decisions(
            DecisionLabels {
                configuration: self.configuration.to_string(),
                reason: reason.to_string(),
                stage: stage.to_string(),
            },
            n,
        );
    }
}

fn reason_label(d: &Decision<'_>, offered: bool) -> &'static str {
    match (d.allowed, offered, d.reason) {
        (true, true, _) if d.observed_only => "observedOnly",
        (true, true, _) => "allowed",
        (true, false, _) => "definitionChanged",
        (false, _, Some(r)) => r.code(),
        (false, _, None) => "unknown",
    }
}

/// The CLIENT span's trace context in a request's `_meta`, in place of
/// whatever the client sent there (the upstream's parent is the gateway's
/// span); nothing when not exporting.
fn with_trace(meta: &mut Option<rmcp::model::RequestMetaObject>, op: &Operation) {
    let carrier = op.carrier();
    if carrier.is_empty() {
        return;
    }
    crate::upstream::put_trace(
        meta.get_or_insert_with(rmcp::model::RequestMetaObject::new),
        &carrier,
    );
}

/// A read's span named for its URI, only once the caller was let read it
/// (a server it may not see answers as if the resource did not exist).
fn read_named<T>(op: &Operation, r: &Result<T, ErrorData>, uri: &str) {
    if r.is_ok() && op.is_on() {
        op.rename(|| format!("resources/read {uri}"));
        op.set(|| vec![KeyValue::new("mcp.resource.uri", uri.to_string())]);
    }
}

/// A prompt's span named for it, only once the caller was let get it.
fn prompt_named<T>(op: &Operation, r: &Result<T, ErrorData>, name: &str) {
    if r.is_ok() && op.is_on() {
        op.rename(|| format!("prompts/get {name}"));
        op.set(|| vec![KeyValue::new("gen_ai.prompt.name", name.to_string())]);
    }
}

/// How a request ended, for its span and its duration.
enum Ended<'e> {
    Ok,
    /// A `tools/call` answered with `isError: true`.
    ToolError,
    /// A JSON-RPC error: `error.type` and `rpc.response.status_code` are
    /// its code.
    Error(&'e ErrorData),
}

impl<'e> Ended<'e> {
    fn of<T>(r: &'e Result<T, ErrorData>) -> Ended<'e> {
        match r {
            Ok(_) => Ended::Ok,
            Err(e) => Ended::Error(e),
        }
    }

    fn of_call(r: &'e Result<CallToolResponse, ErrorData>) -> Ended<'e> {
        match r {
            Ok(CallToolResponse::Complete(c)) if c.is_error == Some(true) => Ended::ToolError,
            r => Ended::of(r),
        }
    }
}

impl Handler {
    /// End `op` (`method`, toward an upstream when `client`): its span,
    /// and the one duration both OpenTelemetry and `/metrics` read.
    fn ended(&self, op: Operation, method: &str, client: bool, how: Ended<'_>) {
        let error = match how {
            Ended::Ok => None,
            Ended::ToolError => Some(("tool_error".to_string(), None)),
            Ended::Error(e) => {
                let code = i64::from(e.code.0);
                Some((code.to_string(), Some(code)))
            }
        };
        let took = op.end(error.as_ref().map(|(t, c)| (t.as_str(), *c)));
        let error_type = error.as_ref().map(|(t, _)| t.as_str());
        self.gw.metrics.operation(client, method, error_type, took);
    }
}

impl Handler {
    async fn read_resource_in(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
        op: &Operation,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (id, _) = identity(&cx)?;
        let Some(c) = self
            .gw
            .resource_upstream(&self.configuration, &id, &request.uri)
        else {
            return Err(no_resource(&request.uri));
        };
        let limits = &self.gw.config.limits;
        let mut request = request;
        let client_op = op.client("resources/read", Some(&request.uri), || {
            vec![KeyValue::new("toolgate.upstream", c.name.clone())]
        });
        with_trace(&mut request.meta, &client_op);
        let r =
            crate::upstream::relay(&c, limits, c.service.peer().read_resource_once(request)).await;
        self.ended(client_op, "resources/read", true, Ended::of(&r));
        r
    }

    async fn get_prompt_in(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
        op: &Operation,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (id, _) = identity(&cx)?;
        let table = self.gw.table();
        let ctx = context(&self.configuration, &table, &id)?;
        let offerings = self.gw.offerings.load();
        let Some(p) = pinned_prompt(&self.gw, &table, &offerings, &request.name) else {
            return Err(no_prompt(&request.name));
        };
        let (server, own) = (p.server.as_str(), p.own.as_str());
        if !ctx.sees_server(server) {
            return Err(no_prompt(&request.name));
        }
        let Some(c) = self.gw.upstreams.get(server).map(|s| s.load_full()) else {
            return Err(no_prompt(&request.name));
        };
        let mut forwarded = request.clone();
        forwarded.name = own.to_string();
        let limits = &self.gw.config.limits;
        let client_op = op.client("prompts/get", Some(own), || {
            vec![KeyValue::new("toolgate.upstream", server.to_string())]
        });
        with_trace(&mut forwarded.meta, &client_op);
        let r =
            crate::upstream::relay(&c, limits, c.service.peer().get_prompt_once(forwarded)).await;
        self.ended(client_op, "prompts/get", true, Ended::of(&r));
        r
    }

    async fn list_tools_in(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
        op: &Operation,
    ) -> Result<ListToolsResult, ErrorData> {
        let (id, request_id) = identity(&cx)?;
        let gw = &self.gw;
        let table = gw.table();
        let ctx = context(&self.configuration, &table, &id)?;
        let catalog = gw.catalog.load();
        let digest = table.digest_hex();
        let start = match request.as_ref().and_then(|r| r.cursor.as_deref()) {
            None => 0,
            Some(c) => offset_of(c, "tools", catalog.generation, &digest)?,
        };
        let page = gw.config.limits.list_page_size;
        let mut tools = Vec::new();
        let mut tally: HashMap<&'static str, u64> = HashMap::new();
        let mut next = None;
        let mut seen = 0usize;
        for (e, d, offered) in catalog.offered(&ctx, &table, &gw.pins) {
            *tally.entry(reason_label(&d, offered)).or_default() += 1;
            self.log(&id, request_id.as_deref(), &digest, "offer", &d, None);
            if d.allowed && !offered {
                // Listed by its server with another definition than the pin.
                self.finding(
                    op,
                    &d,
                    &digest,
                    "tool_definition",
                    Some("definitionChanged"),
                );
            }
            if !offered {
                continue;
            }
            if seen >= start {
                if tools.len() == page {
                    next = Some(cursor("tools", catalog.generation, &digest, seen));
                    break;
                }
                tools.push(e.tool.clone());
            }
            seen += 1;
        }
        for (reason, n) in tally {
            self.count("offer", reason, n);
        }
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        // Filtered for this caller: no cache may share it with another, and
        // it is not fresh beyond this answer (the table or a list may change).
        result.cache_scope = Some(CacheScope::Private);
        result.ttl_ms = Some(0);
        Ok(result)
    }

    async fn call_tool_in(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
        op: &Operation,
    ) -> Result<CallToolResponse, ErrorData> {
        let (id, request_id) = identity(&cx)?;
        let gw = &self.gw;
        let table = gw.table();
        let ctx = context(&self.configuration, &table, &id)?;
        let catalog = gw.catalog.load();
        let digest = table.digest_hex();
        let mut request = request;
        let name_owned = request.name.to_string();
        let name = name_owned.as_str();
        let d = ctx.decide(name);
        self.describe_call(op, name, &d, &request);
        // A tool a person approves call by call runs only with a grant
        // (approvals.rs); asking, waiting and refusing are answered here.
        let verdict = if d.allowed && d.needs_approval {
            Some(self.approve(&ctx, &d, &id, &mut request, &cx).await)
        } else {
            None
        };
        let approval = match &verdict {
            Some(Verdict::Run(l) | Verdict::Ask(_, l) | Verdict::Refuse { log: l, .. }) => {
                Some(l.clone())
            }
            None => None,
        };
        let decision_id = self.log(&id, request_id.as_deref(), &digest, "call", &d, approval);
        let at = mcp::Provenance {
            decision_id: decision_id.as_deref(),
            table_digest: Some(&digest),
        };
        let approval_reason = match &verdict {
            Some(Verdict::Ask(..) | Verdict::Refuse { .. }) => Some("approvalRequired"),
            _ => None,
        };
        self.finding(op, &d, &digest, "tool_call", approval_reason);
        match verdict {
            Some(Verdict::Ask(asked, _)) => {
                self.count("call", "approvalAsked", 1);
                return Ok(CallToolResponse::InputRequired(*asked));
            }
            Some(Verdict::Refuse { log, message }) => {
                self.count("call", "approvalRequired", 1);
                return Err(self.approval_refusal(&ctx, &d, at, &log, message));
            }
            Some(Verdict::Run(_)) | None => {}
        }
        let mode = crate::catalog::CallMode {
            stealth: gw.config.stealth,
            // Here only with the grant `approve` let run.
            approved: d.needs_approval,
        };
        match catalog.call(&ctx, &table, &gw.pins, name, at, mode) {
            Err(refused) => {
                let crate::catalog::Refused { reason, error: e } = *refused;
                self.count("call", reason.as_deref().unwrap_or("notRegistered"), 1);
                Err(ErrorData::new(ErrorCode(e.code as i32), e.message, e.data))
            }
            Ok(route) => {
                self.count_allowed(&d);
                let Some(c) = gw.upstreams.get(route.server).map(|s| s.load_full()) else {
                    return Err(ErrorData::new(
                        ErrorCode(mcp::CODE_UNKNOWN_TOOL as i32),
                        mcp::unknown_tool_error(name).message,
                        None,
                    ));
                };
                // The client's progress token reaches the upstream as one of
                // the gateway's, mapped back on every progress notification.
                let progress = cx
                    .meta
                    .get_progress_token()
                    .or_else(|| {
                        use rmcp::model::RequestParamsMeta;
                        request.progress_token()
                    })
                    .map(|t| (cx.peer.clone(), t));
                let client_op = self.client_call(op, route, &d);
                let trace = client_op.carrier();
                // A client's `notifications/cancelled` (or, on 2026-07-28,
                // its going away) cancels the upstream call too.
                let answer = crate::upstream::call(
                    &c,
                    route.name,
                    request,
                    crate::upstream::CallOf {
                        peer: cx.peer.clone(),
                        request: cx.id.clone(),
                        capabilities: cx.client_capabilities().unwrap_or_default(),
                        modern: cx.protocol_version().is_some_and(|v| !v.has_initialize()),
                        trace,
                    },
                    progress,
                    cx.ct.cancelled(),
                    &gw.config.limits,
                )
                .await;
                self.called(client_op, &c, &answer);
                answer
            }
        }
    }

    /// The call's name and (when recorded) arguments on its span.
    fn describe_call(
        &self,
        op: &Operation,
        name: &str,
        d: &Decision<'_>,
        request: &CallToolRequestParams,
    ) {
        let telemetry = &self.gw.core.telemetry;
        if let Some(shown) = telemetry.tool_name(name, !d.hidden) {
            op.rename(|| format!("tools/call {shown}"));
            op.set(|| vec![KeyValue::new("gen_ai.tool.name", shown.to_string())]);
        }
        if let (true, Some(a)) = (telemetry.record_arguments, &request.arguments) {
            op.set(|| {
                vec![KeyValue::new(
                    "gen_ai.tool.call.arguments",
                    serde_json::Value::Object(a.clone()).to_string(),
                )]
            });
        }
    }

    /// A forwarded call counted.
    fn count_allowed(&self, d: &Decision<'_>) {
        self.count(
            "call",
            if d.observed_only {
                "observedOnly"
            } else {
                "allowed"
            },
            1,
        );
    }

    /// The CLIENT span toward the upstream, its context sent on.
    fn client_call(
        &self,
        op: &Operation,
        route: crate::catalog::Route<'_>,
        d: &Decision<'_>,
    ) -> Operation {
        let telemetry = &self.gw.core.telemetry;
        op.client(
            "tools/call",
            telemetry.tool_name(route.name, !d.hidden),
            || {
                vec![
                    KeyValue::new("gen_ai.operation.name", "execute_tool"),
                    KeyValue::new("toolgate.upstream", route.server.to_string()),
                ]
            },
        )
    }

    /// After a forwarded call: its CLIENT span ended; an upstream it found
    /// down has its tools withheld and a restart scheduled now, not at the
    /// next relisting.
    fn called(
        &self,
        client_op: Operation,
        c: &Connection,
        answer: &Result<CallToolResponse, ErrorData>,
    ) {
        self.ended(client_op, "tools/call", true, Ended::of_call(answer));
        if c.is_down() {
            self.gw.changed.notify_one();
        }
    }
}

#[path = "direct_handler.rs"]
mod direct;

impl ServerHandler for Handler {
    fn get_info(&self) -> InitializeResult {
        // Everything an upstream may offer is relayed; what none offers is
        // answered as a server without it would (an empty list, no
        // completions), never refused as unknown.
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_prompts_list_changed()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tool_list_changed()
            .build();
        InitializeResult::new(capabilities).with_server_info(Implementation::new(
            "toolgate-gateway",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let op = self.operation("tools/list", None, &cx, Vec::new);
        let r = self.list_tools_in(request, cx, &op).await;
        self.ended(op, "tools/list", false, Ended::of(&r));
        r
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let op = self.operation("tools/call", None, &cx, || {
            vec![KeyValue::new("gen_ai.operation.name", "execute_tool")]
        });
        let r = self.call_tool_in(request, cx, &op).await;
        self.ended(op, "tools/call", false, Ended::of_call(&r));
        r
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let offerings = self.gw.offerings.load();
        let items = offerings.resources.iter().map(|(s, r)| (s.as_str(), r));
        let (resources, next) = visible_page(
            &self.gw,
            &self.configuration,
            &cx,
            "r",
            request.as_ref(),
            items,
        )?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        result.cache_scope = Some(CacheScope::Private);
        result.ttl_ms = Some(0);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let offerings = self.gw.offerings.load();
        let items = offerings.templates.iter().map(|(s, t)| (s.as_str(), t));
        let (templates, next) = visible_page(
            &self.gw,
            &self.configuration,
            &cx,
            "t",
            request.as_ref(),
            items,
        )?;
        let mut result = ListResourceTemplatesResult::with_all_items(templates);
        result.next_cursor = next;
        result.cache_scope = Some(CacheScope::Private);
        result.ttl_ms = Some(0);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let op = self.operation("resources/read", None, &cx, Vec::new);
        let uri = op.is_on().then(|| request.uri.clone());
        let r = self.read_resource_in(request, cx, &op).await;
        if let Some(uri) = uri {
            read_named(&op, &r, &uri);
        }
        self.ended(op, "resources/read", false, Ended::of(&r));
        r
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let offerings = self.gw.offerings.load();
        let table = self.gw.table();
        let pins = self.gw.pins.view(&table);
        let items = offerings
            .prompts
            .iter()
            .filter(|p| pins.check_prompt(&p.prompt.name, &p.server, &p.digest) == Pin::Holds)
            .map(|p| (p.server.as_str(), &p.prompt));
        let (prompts, next) = visible_page(
            &self.gw,
            &self.configuration,
            &cx,
            "p",
            request.as_ref(),
            items,
        )?;
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        result.cache_scope = Some(CacheScope::Private);
        result.ttl_ms = Some(0);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let op = self.operation("prompts/get", None, &cx, Vec::new);
        let name = op.is_on().then(|| request.name.to_string());
        let r = self.get_prompt_in(request, cx, &op).await;
        if let Some(name) = name {
            prompt_named(&op, &r, &name);
        }
        self.ended(op, "prompts/get", false, Ended::of(&r));
        r
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let (id, _) = identity(&cx)?;
        let offerings = self.gw.offerings.load();
        let mut forwarded = request.clone();
        // The server a reference names, and the reference in its own words;
        // one the caller may not know of is answered as one nobody serves.
        let refused = || match &request.r#ref {
            Reference::Prompt(p) => no_prompt(&p.name),
            Reference::Resource(r) => no_resource(&r.uri),
            _ => ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "a completion reference of a kind this gateway does not know",
                None,
            ),
        };
        let table = self.gw.table();
        let server = match &mut forwarded.r#ref {
            Reference::Prompt(p) => match pinned_prompt(&self.gw, &table, &offerings, &p.name) {
                Some(offered) => {
                    p.name = offered.own.clone();
                    offered.server.as_str()
                }
                None => return Err(refused()),
            },
            Reference::Resource(r) => match offerings.server_of_template(&r.uri) {
                Some(server) => server,
                None => return Err(refused()),
            },
            _ => return Err(refused()),
        };
        if !self.gw.sees_server(&self.configuration, &id, server) {
            return Err(refused());
        }
        let Some(c) = self.gw.upstreams.get(server).map(|s| s.load_full()) else {
            return Err(refused());
        };
        let limits = &self.gw.config.limits;
        crate::upstream::relay(&c, limits, c.service.peer().complete(forwarded)).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (id, _) = identity(&cx)?;
        // The session's own filter, and each upstream it sees that logs is
        // told the level (an upstream's level is shared by every session:
        // the one set last; each session still gets only what it asked for).
        self.session.set_level(request.level);
        let servers: Vec<String> = self.gw.upstreams.keys().cloned().collect();
        for server in servers {
            if !self.gw.sees_server(&self.configuration, &id, &server) {
                continue;
            }
            let Some(c) = self.gw.upstreams.get(&server).map(|s| s.load_full()) else {
                continue;
            };
            let logs = c
                .service
                .peer()
                .peer_info()
                .is_some_and(|i| i.capabilities.logging.is_some());
            if logs {
                let limits = &self.gw.config.limits;
                crate::upstream::relay(&c, limits, c.service.peer().set_level(request.clone()))
                    .await?;
            }
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (id, _) = identity(&cx)?;
        subscribe(
            &self.gw,
            &self.session,
            &self.configuration,
            &id,
            &request.uri,
        )
        .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (id, _) = identity(&cx)?;
        if self
            .gw
            .resource_upstream(&self.configuration, &id, &request.uri)
            .is_none()
        {
            return Err(no_resource(&request.uri));
        }
        if self.session.unsubscribe(&self.gw, &request.uri) {
            crate::session::unsubscribe_upstream(&self.gw, &request.uri).await;
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // List changes say nothing of what changed, so any caller may have
        // them. The SDK asks for the acknowledgment before `listen` knows
        // who is asking, so every requested resource subscription is
        // acknowledged (up to the bound), whether its server is hidden from
        // the caller or nobody serves it: the acknowledgment tells nothing.
        // `listen` then subscribes, and relays updates, only for the URIs
        // of servers the caller sees.
        let mut accepted = SubscriptionFilter::builder();
        if let Some(uris) = &requested.resource_subscriptions {
            let mut seen = std::collections::HashSet::new();
            let uris: Vec<String> = uris
                .iter()
                .filter(|u| seen.insert(u.as_str()))
                .take(crate::session::MAX_SUBSCRIPTIONS)
                .cloned()
                .collect();
            accepted = accepted.resource_subscriptions(uris);
        }
        if requested.tools_list_changed == Some(true) {
            accepted = accepted.tools_list_changed();
        }
        if requested.prompts_list_changed == Some(true) {
            accepted = accepted.prompts_list_changed();
        }
        if requested.resources_list_changed == Some(true) {
            accepted = accepted.resources_list_changed();
        }
        Some(accepted.build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.gw.changes.subscribe();
        let mut events = self.gw.events.subscribe();
        let wants = context.accepted().clone();
        let (id, _) = identity(context.request_context())?;
        // This subscription's own resource subscriptions, released with it.
        let mine = Session::new(&self.gw);
        for uri in wants.resource_subscriptions.iter().flatten() {
            // A URI the caller may not know of is left out, silently: its
            // acknowledgment said nothing either.
            let _ = subscribe(&self.gw, &mine, &self.configuration, &id, uri).await;
        }
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                e = events.recv() => match e {
                    Ok(crate::upstream::Event::Updated(server, p)) => {
                        if mine.is_subscribed(&p.uri)
                            && self.gw.sees_server(&self.configuration, &id, &server)
                            && context.sink().notify_resource_updated(p.uri).await.is_err()
                        {
                            return Ok(());
                        }
                    }
                    Ok(crate::upstream::Event::Log(..)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        self.gw.metrics.events_dropped(n);
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
                r = changes.recv() => match r {
                    Ok(c) => {
                        if !notify_listener(&context, &wants, c).await {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if !notify_listener(&context, &wants, crate::Changed::ALL).await {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session of the revision before 2026-07-28: list changes, and
        // what it may see of the upstreams' logs and resource updates, are
        // sent on its stream while it lives, decided for the identity that
        // opened it.
        let parts = context.extensions.get::<axum::http::request::Parts>();
        // The SDK routed this notification to its session by the first
        // `Mcp-Session-Id`: that is the session's id.
        let session_id = parts
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        if let (Some(sid), Some(info)) = (session_id, context.peer.peer_info()) {
            self.registration.get_or_init(|| {
                self.book.register(
                    sid,
                    info.protocol_version.clone(),
                    info.capabilities.clone(),
                )
            });
        }
        let toucher = session_id.map(|sid| crate::session_book::Toucher::of(&self.book, sid));
        let Some(id) = parts.and_then(|p| p.extensions.get::<Identity>()).cloned() else {
            return;
        };
        crate::session::relay(
            &self.gw,
            self.session.clone(),
            context.peer.clone(),
            self.configuration.clone(),
            id,
            toucher,
        );
    }
}

/// Subscribe `session` to `uri` for a caller who sees its server: the
/// upstream is asked when the session is the first subscriber. A URI
/// nobody serves and one of a server the caller does not see answer alike.
#[allow(deprecated)]
async fn subscribe(
    gw: &Gateway,
    session: &Session,
    configuration: &str,
    id: &Identity,
    uri: &str,
) -> Result<(), ErrorData> {
    let Some(c) = gw.resource_upstream(configuration, id, uri) else {
        return Err(no_resource(uri));
    };
    if session.subscribe(gw, uri)? {
        let request = SubscribeRequestParams::new(uri);
        let asked =
            crate::upstream::relay(&c, &gw.config.limits, c.service.peer().subscribe(request));
        if let Err(e) = asked.await {
            session.unsubscribe(gw, uri);
            return Err(e);
        }
    }
    Ok(())
}

/// Tell a 2026-07-28 listener the changes of `c` it asked for: whether it
/// could be told.
async fn notify_listener(
    context: &SubscriptionContext,
    wants: &SubscriptionFilter,
    c: crate::Changed,
) -> bool {
    let sink = context.sink();
    (!(c.tools && wants.tools_list_changed == Some(true))
        || sink.notify_tool_list_changed().await.is_ok())
        && (!(c.prompts && wants.prompts_list_changed == Some(true))
            || sink.notify_prompt_list_changed().await.is_ok())
        && (!(c.resources && wants.resources_list_changed == Some(true))
            || sink.notify_resource_list_changed().await.is_ok())
}
