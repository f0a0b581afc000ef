//! The HTTP side: routes, handlers, limits and request ids. Each handler
//! takes the current table once (`TableHandle::current`) and answers
//! everything of its request from that table, whose digest it reports.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde::Serialize;
use toolgate_runtime::log::ServiceRecord;
use toolgate_runtime::Table;
use toolgate_service::page_token;
use toolgate_service::telemetry::{self, DecisionType, Finding, Operation};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};

use crate::api::{
    self, ApiError, DecisionOut, Evaluation, EvaluationsRequest, RequestContext, ResolvedContext,
    SearchRequest, Semantic, Stage, UnavailableRequest,
};
use crate::metrics::DecisionLabels;
use crate::record_stamps::{rfc3339, unix_ms};
use crate::writer::{error_response, is_json, json, json_capped};
use crate::ServiceState;

/// An evaluation with nothing of its own (all from the defaults).
static EMPTY: Evaluation<'static> = Evaluation {
    subject: None,
    action: None,
    resource: None,
    context: None,
    extra: std::collections::BTreeMap::new(),
};

pub use toolgate_service::listener::DIGEST_HEADER;

#[derive(Clone)]
struct MakeId(Arc<ServiceState>);

impl MakeRequestId for MakeId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        HeaderValue::from_str(&self.0.ids.next_id())
            .ok()
            .map(RequestId::new)
    }
}

pub fn router(shared: Arc<ServiceState>) -> Router<()> {
    router_with(shared, None)
}

/// [`router`], with the console's routes when `console` names its title
/// (`serve --console`).
pub fn router_with(shared: Arc<ServiceState>, console: Option<String>) -> Router<()> {
    let limits = shared.limits;
    // The decisions: JSON bodies only, a deadline per request, and the
    // concurrency slots.
    let decisions = Router::new()
        .route("/access/v1/evaluation", post(evaluation))
        .route("/access/v1/evaluations", post(evaluations))
        .route("/access/v1/search/resource", post(search_resource))
        .route("/toolgate/v1/unavailable", post(unavailable))
        .route_layer(axum::middleware::from_fn(json_only))
        .route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            authenticate,
        ));
    // One set of slots for every bounded route (the console's data too).
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_concurrency));
    let decisions = bounded(decisions, &limits, &slots);
    // Health, readiness, metrics and discovery take no decision slot: they
    // answer while every slot is held.
    let console = match console {
        None => Router::new(),
        Some(title) => {
            let auth = shared.clone();
            crate::console::router(shared.clone(), title, move |r| {
                let r = r.route_layer(axum::middleware::from_fn_with_state(
                    auth.clone(),
                    authenticate,
                ));
                bounded(r, &limits, &slots)
            })
        }
    };
    Router::new()
        .route("/.well-known/authzen-configuration", get(configuration))
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
        .merge(decisions)
        .merge(console)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(CatchPanicLayer::custom(|_| {
            error_response(&ApiError {
                status: 500,
                code: "internal",
                message: "internal error".into(),
            })
        }))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeId(shared.clone())))
        .with_state(shared)
}

/// A deadline per request and the concurrency slots: the decision routes'
/// bounds, which the console's data routes share.
fn bounded<S: Clone + Send + Sync + 'static>(
    r: Router<S>,
    limits: &crate::RequestLimits,
    slots: &Arc<tokio::sync::Semaphore>,
) -> Router<S> {
    r.layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout,
    ))
    .layer(tower::limit::GlobalConcurrencyLimitLayer::with_semaphore(
        slots.clone(),
    ))
}

/// What the request's caller may assert: its own, when it authenticated,
/// else the service's.
fn trust_of(
    shared: &ServiceState,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
) -> Arc<crate::Trust> {
    caller.map(|e| e.0).unwrap_or_else(|| shared.trust.clone())
}

/// Every decision request of a service with credentials proves its caller:
/// a bearer token the [`toolgate_auth::Authenticator`] accepts, else 401
/// with `WWW-Authenticate: Bearer` (RFC 6750) and the reason.
async fn authenticate(
    State(shared): State<Arc<ServiceState>>,
    mut req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let Some(auth) = &shared.auth else {
        return next.run(req).await;
    };
    let header = crate::transport::single_header(req.headers(), "authorization")
        .map(|v| v.and_then(|v| v.to_str().ok()));
    let checked = match header {
        Ok(h) => auth.authenticate(h),
        Err(e) => Err(toolgate_auth::AuthError::Invalid(e.to_string())),
    };
    match checked {
        Ok(caller) => {
            req.extensions_mut()
                .insert(Arc::new(crate::Trust::of(&caller)));
            next.run(req).await
        }
        Err(e) => {
            shared.metrics.error(401);
            let mut r = error_response(&ApiError {
                status: 401,
                code: "unauthenticated",
                message: e.to_string(),
            });
            let challenge = format!(
                "Bearer realm=\"toolgate\", error=\"{}\", error_description=\"{}\"",
                e.code(),
                e.to_string().replace(['"', '\\'], "'")
            );
            if let Ok(v) = HeaderValue::from_str(&challenge) {
                r.headers_mut()
                    .insert(axum::http::header::WWW_AUTHENTICATE, v);
            }
            r
        }
    }
}

/// Only `application/json` bodies are decided (with parameters such as
/// `charset=utf-8`): a web page cannot post one cross-site without a CORS
/// preflight, which this service never answers (415 otherwise).
async fn json_only(req: Request<Body>, next: axum::middleware::Next) -> Response {
    if is_json(req.headers()) {
        next.run(req).await
    } else {
        error_response(&ApiError {
            status: 415,
            code: "unsupportedMediaType",
            message: "a decision request's Content-Type must be application/json".into(),
        })
    }
}

impl ServiceState {
    fn fail(&self, e: &ApiError) -> Response {
        self.metrics.error(e.status);
        error_response(e)
    }
}

/// The body, or the error for an unreadable or oversized one.
fn body(b: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    b.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError {
            status: 413,
            code: "bodyTooLarge",
            message: e.body_text(),
        },
        s => ApiError {
            status: s.as_u16(),
            code: "badBody",
            message: e.body_text(),
        },
    })
}

/// A POST endpoint's frame: read the body, answer it with `f`, time the
/// whole into the endpoint's latency histogram (`ENDPOINTS[endpoint]`), and
/// turn an error into its JSON error answer.
fn timed_answer(
    shared: &ServiceState,
    endpoint: usize,
    b: Result<Bytes, BytesRejection>,
    f: impl FnOnce(&[u8]) -> Result<Response, ApiError>,
) -> Response {
    let started = Instant::now();
    let r = body(b).and_then(|bytes| f(&bytes));
    shared.metrics.latency[endpoint].observe(started.elapsed().as_secs_f64());
    r.unwrap_or_else(|e| shared.fail(&e))
}

fn parse<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad("malformedRequest", e.to_string()))
}

fn request_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

// ------------------------------------------------------------------ evaluations

/// Decisions counted per (configuration, reason, stage) over one request,
/// added to the metric once per label set.
#[derive(Default)]
struct DecisionCounts<'t> {
    rows: Vec<(&'t str, &'static str, Stage, u64)>,
}

impl<'t> DecisionCounts<'t> {
    fn add(&mut self, configuration: &'t str, reason: &'static str, stage: Stage) {
        match self
            .rows
            .iter_mut()
            .find(|r| r.0 == configuration && r.1 == reason && r.2 == stage)
        {
            Some(r) => r.3 += 1,
            None => self.rows.push((configuration, reason, stage, 1)),
        }
    }

    fn flush(self, shared: &ServiceState) {
        for (configuration, reason, stage, n) in self.rows {
            shared.count_decisions(
                DecisionLabels {
                    configuration: configuration.to_string(),
                    reason: reason.to_string(),
                    stage: stage.as_str().to_string(),
                },
                n,
            );
        }
    }
}

/// Evaluate a list of evaluations against one table, with request-level
/// defaults; a context resolved from the defaults is resolved once and reused.
struct Batch<'t, 'r> {
    shared: &'r ServiceState,
    table: &'t Table,
    digest: &'r str,
    defaults: &'r Evaluation<'r>,
    /// Whether each answer names the digest (a single answer) or the batch does.
    digest_per_answer: bool,
    /// Whether refused answers carry the typed refusal.
    refusals: bool,
    path: &'static str,
    request_id: Option<&'r str>,
    default_resolved: Option<Result<ResolvedContext<'t>, ApiError>>,
    counts: DecisionCounts<'t>,
    /// The context of an evaluation that has none.
    no_context: RequestContext,
    /// What the caller may assert.
    trust: &'r crate::Trust,
    /// The decision whose log record carries the defaults' stored run
    /// whole: the request's later records that share it refer to it.
    run_logged: Option<String>,
    /// Likewise for the live-tool metadata of the default resource.
    properties_logged: Option<String>,
    /// The log bytes this request may still write
    /// ([`crate::decision_log::request_budget`]).
    log_left: usize,
    /// The request's span: each decision is a finding on it.
    op: &'r Operation,
}

/// The span of a request that has none (telemetry off, or not set).
static NO_SPAN: std::sync::LazyLock<Operation> = std::sync::LazyLock::new(Operation::default);

/// End a request's span with its answer's status: a 4xx or 5xx is an
/// error, its `error.type` the status code.
fn end_span(op: Operation, response: &Response) {
    let status = response.status();
    op.set(|| {
        vec![telemetry::KeyValue::new(
            "http.response.status_code",
            i64::from(status.as_u16()),
        )]
    });
    if status.is_client_error() || status.is_server_error() {
        op.end(Some((status.as_str(), None)));
    } else {
        op.end(None);
    }
}

/// An evaluation's own member, else the request's default for it.
fn or_default<'a, T>(
    own: &'a Option<T>,
    default: &'a Option<T>,
    what: &str,
) -> Result<&'a T, ApiError> {
    own.as_ref()
        .or(default.as_ref())
        .ok_or_else(|| ApiError::bad("badRequest", format!("{what} is required")))
}

/// The decision as a `gen_ai.security.finding` on the request's span
/// (docs/observability.md): the tool named only when the subject may
/// see it, or the operator asked for true names.
fn finding(
    shared: &ServiceState,
    op: &Operation,
    digest: &str,
    ctx: &toolgate_runtime::Context<'_>,
    resource: &api::Resource<'_>,
    d: &api::ToolDecision,
) {
    let telemetry = &shared.telemetry;
    if !telemetry.is_on() {
        return;
    }
    let decision = match (d.allowed, d.observed_only) {
        (true, true) => DecisionType::Audit,
        (true, false) => DecisionType::Allow,
        (false, _) => DecisionType::Deny,
    };
    let reason = match d.reason {
        Some(r) => Some(r.code()),
        None if !d.allowed && d.needs_approval => Some("approvalRequired"),
        None => None,
    };
    op.finding(&Finding {
        decision,
        reason,
        policy: ctx.configuration_name(),
        version: digest,
        target_type: "tool_call",
        target: resource
            .id
            .as_deref()
            .and_then(|n| telemetry.tool_name(n, d.name_visible)),
    });
}

impl<'t, 'r> Batch<'t, 'r> {
    /// A batch that names the digest in each answer and carries refusals.
    fn new(
        shared: &'r ServiceState,
        table: &'t Table,
        digest: &'r str,
        defaults: &'r Evaluation<'r>,
        path: &'static str,
        request_id: Option<&'r str>,
        trust: &'r crate::Trust,
    ) -> Self {
        Batch {
            trust,
            shared,
            table,
            digest,
            defaults,
            digest_per_answer: true,
            refusals: true,
            path,
            request_id,
            default_resolved: None,
            counts: DecisionCounts::default(),
            no_context: RequestContext::default(),
            run_logged: None,
            properties_logged: None,
            log_left: crate::decision_log::MIN_LOG_BYTES_PER_REQUEST,
            op: &NO_SPAN,
        }
    }

    fn one(&mut self, item: &'r Evaluation<'r>) -> Result<DecisionOut<'r>, ApiError> {
        let d = self.defaults;
        let subject = or_default(&item.subject, &d.subject, "subject")?;
        let action = or_default(&item.action, &d.action, "action")?;
        let resource = or_default(&item.resource, &d.resource, "resource")?;
        // AuthZEN's context is optional: without one, the service's
        // default configuration decides (or the build says none is set).
        let context: &RequestContext = item
            .context
            .as_deref()
            .or(d.context.as_deref())
            .unwrap_or(&self.no_context);
        let stage = Stage::parse(action)?;
        let own;
        let resolved = if item.subject.is_none() && item.context.is_none() {
            let table = self.table;
            let shared = self.shared;
            let trust = self.trust;
            match self.default_resolved.get_or_insert_with(|| {
                api::build(
                    table,
                    subject,
                    context,
                    shared.default_configuration.as_deref(),
                    trust,
                )
            }) {
                Ok(b) => &*b,
                Err(e) => return Err(e.clone()),
            }
        } else {
            own = api::build(
                self.table,
                subject,
                context,
                self.shared.default_configuration.as_deref(),
                self.trust,
            )?;
            &own
        };
        let call = api::CallInput::of(context, self.shared.approver_keys.as_ref());
        let decision = api::decide(&resolved.ctx, resource, self.refusals, stage, call)?;
        self.counts.add(
            resolved.ctx.configuration_name(),
            match (decision.allowed, decision.observed_only, decision.reason) {
                (true, false, _) => "allowed",
                (true, true, _) => "observedOnly",
                (false, _, None) if decision.needs_approval => "approvalRequired",
                (false, _, r) => r.map_or("unknown", |r| r.code()),
            },
            stage,
        );
        finding(
            self.shared,
            self.op,
            self.digest,
            &resolved.ctx,
            resource,
            &decision,
        );
        let mut decision_id = None;
        if self.shared.keeps_decisions() {
            let id = self.shared.ids.next_id();
            let (mut input, result) =
                api::log_parts(subject, action, resource, context, resolved, &decision);
            // The defaults' stored run and live-tool metadata are the
            // request's once: written whole in the first record that decided
            // with them, referred to by the others (docs/decision-log.md,
            // "Bounds"), so the log grows with what the request sent.
            let shares_run = item.context.is_none() && input.context.run.is_some();
            let shares_properties = item.resource.is_none() && input.resource.properties.is_some();
            if shares_run {
                if let Some(first) = &self.run_logged {
                    input.context.run = Some(crate::decision_log::same_as(first));
                }
            }
            if shares_properties {
                if let Some(first) = &self.properties_logged {
                    input.resource.properties = Some(crate::decision_log::same_as(first));
                }
            }
            let rec = ServiceRecord {
                decision_id: id.clone(),
                timestamp: rfc3339(SystemTime::now()),
                path: self.path.to_string(),
                request_id: self.request_id.map(str::to_string),
                table_digest: self.digest.to_string(),
                stage: stage.as_str().to_string(),
                input,
                result,
            };
            self.shared.export_decision(&rec);
            let queued = match &self.shared.log {
                Some(log) => log.record_within(rec, &mut self.log_left),
                None => false,
            };
            // Referred to only once it is on its way to the log (a dropped
            // record is no reference).
            if queued && shares_run && self.run_logged.is_none() {
                self.run_logged = Some(id.clone());
            }
            if queued && shares_properties && self.properties_logged.is_none() {
                self.properties_logged = Some(id.clone());
            }
            decision_id = Some(id);
        }
        let digest = self.digest_per_answer.then_some(self.digest);
        let mut out = DecisionOut::decided(decision, resolved.run_error.clone(), digest);
        if let Some(c) = &mut out.context {
            c.decision_id = decision_id;
        }
        Ok(out)
    }
}

async fn evaluation(
    State(shared): State<Arc<ServiceState>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
    headers: HeaderMap,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    let trust = trust_of(&shared, caller);
    let trust = &*trust;
    // The request's span, ended with its answer's status.
    let op = shared
        .telemetry
        .http_server("/access/v1/evaluation", &headers);
    let response = timed_answer(&shared, 0, b, |bytes| {
        let item: Evaluation = parse(bytes)?;
        item.check()?;
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let defaults = Evaluation::default();
        let rid = request_id(&headers);
        let mut batch = Batch::new(
            &shared,
            &table,
            &digest,
            &defaults,
            "access/v1/evaluation",
            rid.as_deref(),
            trust,
        );
        batch.op = &op;
        batch.log_left = crate::decision_log::request_budget(bytes.len());
        let out = batch.one(&item)?;
        let response = json(StatusCode::OK, &out, Some(&digest));
        batch.counts.flush(&shared);
        Ok::<_, ApiError>(response)
    });
    end_span(op, &response);
    response
}

#[derive(Serialize)]
struct EvaluationsOut<'a> {
    evaluations: Vec<DecisionOut<'a>>,
    /// The table that made every decision of the batch (also in the header).
    context: BatchContext<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchContext<'a> {
    table_digest: &'a str,
}

async fn evaluations(
    State(shared): State<Arc<ServiceState>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
    headers: HeaderMap,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    let trust = trust_of(&shared, caller);
    let trust = &*trust;
    // The request's span, ended with its answer's status.
    let op = shared
        .telemetry
        .http_server("/access/v1/evaluations", &headers);
    let response = timed_answer(&shared, 1, b, |bytes| {
        let req: EvaluationsRequest = parse(bytes)?;
        req.check()?;
        let semantic = Semantic::parse(req.options.as_ref())?;
        let items = req.evaluations.unwrap_or_default();
        if items.len() > shared.limits.max_evaluations {
            return Err(ApiError::bad(
                "tooManyEvaluations",
                format!(
                    "{} evaluations, over the limit of {}",
                    items.len(),
                    shared.limits.max_evaluations
                ),
            ));
        }
        let defaults = Evaluation {
            subject: req.subject,
            action: req.action,
            resource: req.resource,
            context: req.context,
            extra: Default::default(),
        };
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let rid = request_id(&headers);
        let mut batch = Batch::new(
            &shared,
            &table,
            &digest,
            &defaults,
            "access/v1/evaluations",
            rid.as_deref(),
            trust,
        );
        batch.op = &op;
        batch.log_left = crate::decision_log::request_budget(bytes.len());
        batch.digest_per_answer = items.is_empty();
        batch.refusals = req
            .options
            .as_ref()
            .and_then(|o| o.refusals)
            .unwrap_or(true);
        // Each item's context only when asked for (the caller's option,
        // else the operator's --answer-context): `{"decision": ...}` is
        // what AuthZEN's examples and the interop harnesses compare.
        let item_context = req
            .options
            .as_ref()
            .and_then(|o| o.toolgate_context)
            .unwrap_or(shared.answer_context);
        let response = if items.is_empty() {
            // No evaluations: the request is one evaluation (AuthZEN's
            // backwards-compatible form), answered as one.
            let out = batch.one(&EMPTY)?;
            json(StatusCode::OK, &out, Some(&digest))
        } else {
            let mut evaluations = Vec::with_capacity(items.len());
            for item in &items {
                let mut out = batch
                    .one(item)
                    .unwrap_or_else(|e| DecisionOut::failed(e, None));
                if !item_context {
                    out = out.bare();
                }
                let stop = semantic.stops_after(out.decision);
                evaluations.push(out);
                if stop {
                    break;
                }
            }
            let capacity = 64 + evaluations.len() * 80;
            let out = EvaluationsOut {
                evaluations,
                context: BatchContext {
                    table_digest: &digest,
                },
            };
            json_capped(
                &out,
                Some(&digest),
                capacity,
                shared.limits.max_answer_bytes,
            )?
        };
        batch.counts.flush(&shared);
        Ok(response)
    });
    end_span(op, &response);
    response
}

// ------------------------------------------------------------------ search

/// One result of a resource search: a tool, as AuthZEN's `{type, id}`.
#[derive(Serialize)]
struct ResourceOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
}

#[derive(Serialize)]
struct PageOut {
    next_token: String,
    count: usize,
    total: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchContext<'a> {
    table_digest: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_error: Option<String>,
}

#[derive(Serialize)]
struct SearchOut<'a> {
    results: Vec<ResourceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<PageOut>,
    context: SearchContext<'a>,
}

/// What a search asked, less its page: a page token is valid only for the
/// same subject, action, resource and context (AuthZEN: a token SHOULD fail
/// with another request), and the same table.
fn bytes_key(req: &SearchRequest<'_>) -> String {
    let s = &req.subject;
    let c = &req.context;
    serde_json::json!([
        s.kind,
        s.id,
        s.properties.role,
        s.properties.consumer,
        req.action.name,
        req.resource.kind,
        c.configuration,
        c.enforcement,
        c.run.as_ref().map(|r| r.get()),
    ])
    .to_string()
}

fn request_key(key: String) -> String {
    toolgate_runtime::format::sha256_hex(key.as_bytes())[..16].to_string()
}

/// The offset a search's page token names (`toolgate_service::page_token`,
/// scoped to the search's request key).
fn page_offset(token: &str, digest: &str, asked: &str) -> Result<usize, ApiError> {
    page_token::offset(token, digest, asked).ok_or_else(|| {
        ApiError::bad(
            "badPageToken",
            "the page token is not one of this search's (another subject, action, context or table, which may have been reloaded): start the search again",
        )
    })
}

async fn search_resource(
    State(shared): State<Arc<ServiceState>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    let trust = trust_of(&shared, caller);
    let trust = &*trust;
    timed_answer(&shared, 2, b, |bytes| {
        let req: SearchRequest = parse(bytes)?;
        req.check()?;
        let stage = Stage::parse(&req.action)?;
        if req.resource.kind.as_ref() != "tool" {
            return Err(ApiError::bad(
                "unknownResourceType",
                format!("unknown resource type `{}` (tool)", req.resource.kind),
            ));
        }
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let resolved = api::build(
            &table,
            &req.subject,
            &req.context,
            shared.default_configuration.as_deref(),
            trust,
        )?;
        // The tools a call may be made of leave out those a person
        // approves call by call (their calls are decided false).
        let mut offered = resolved.ctx.offered();
        if stage == Stage::Call {
            let waiting = resolved.ctx.approval_ids();
            if !waiting.is_empty() {
                offered.retain(|name| !resolved.ctx.decide(name).needs_approval);
            }
        }
        let asked = request_key(bytes_key(&req));
        let (results, page) = match &req.page {
            None => (offered.as_slice(), None),
            Some(p) => {
                let start = match p.token.as_deref() {
                    None | Some("") => 0,
                    Some(t) => page_offset(t, &digest, &asked)?,
                }
                .min(offered.len());
                let limit = p.limit.unwrap_or(offered.len()).max(1);
                let end = start.saturating_add(limit).min(offered.len());
                let next = if end < offered.len() {
                    page_token::encode(end, &digest, &asked)
                } else {
                    String::new()
                };
                (
                    &offered[start..end],
                    Some(PageOut {
                        next_token: next,
                        count: end - start,
                        total: offered.len(),
                    }),
                )
            }
        };
        let out = SearchOut {
            results: results
                .iter()
                .map(|id| ResourceOut { kind: "tool", id })
                .collect(),
            page,
            context: SearchContext {
                table_digest: &digest,
                run_error: resolved.run_error.clone(),
            },
        };
        Ok(json(StatusCode::OK, &out, Some(&digest)))
    })
}

// ------------------------------------------------------------------ native

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnavailableOut<'a> {
    configuration: &'a str,
    unavailable: Vec<toolgate_runtime::Unavailable<'a>>,
    prompt: String,
    table_digest: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_error: Option<String>,
}

async fn unavailable(
    State(shared): State<Arc<ServiceState>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    let trust = trust_of(&shared, caller);
    let trust = &*trust;
    timed_answer(&shared, 3, b, |bytes| {
        let req: UnavailableRequest = parse(bytes)?;
        req.check()?;
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let resolved = api::build(
            &table,
            &req.subject,
            &req.context,
            shared.default_configuration.as_deref(),
            trust,
        )?;
        let out = UnavailableOut {
            configuration: resolved.ctx.configuration_name(),
            unavailable: resolved.ctx.unavailable(),
            prompt: resolved.ctx.unavailable_prompt(),
            table_digest: &digest,
            run_error: resolved.run_error.clone(),
        };
        Ok(json(StatusCode::OK, &out, Some(&digest)))
    })
}

// ------------------------------------------------------------------ discovery, health, metrics

async fn configuration(State(shared): State<Arc<ServiceState>>) -> Response {
    let base = shared.public_url.trim_end_matches('/');
    let value = serde_json::json!({
        "policy_decision_point": base,
        "access_evaluation_endpoint": format!("{base}/access/v1/evaluation"),
        "access_evaluations_endpoint": format!("{base}/access/v1/evaluations"),
        "search_resource_endpoint": format!("{base}/access/v1/search/resource"),
    });
    json(StatusCode::OK, &value, None)
}

async fn health(State(shared): State<Arc<ServiceState>>) -> Response {
    toolgate_service::listener::health(&shared.core)
}

async fn ready(State(shared): State<Arc<ServiceState>>) -> Response {
    let digest = shared.handle.current().digest_hex();
    let status = shared.reload_status();
    let ready = status.error.is_none();
    let value = serde_json::json!({
        "ready": ready,
        "tableDigest": digest,
        "tableLoadedAt": rfc3339(status.loaded_at),
        "lastReload": status.last_attempt.map(rfc3339),
        "lastReloadError": status.error,
        "reloadFailures": status.failures,
    });
    let code = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json(code, &value, Some(&digest))
}

async fn metrics(State(shared): State<Arc<ServiceState>>) -> Response {
    let now = unix_ms(SystemTime::now()) as f64 / 1000.0;
    let text = shared.metrics.encode(now);
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    r
}

async fn not_found(State(shared): State<Arc<ServiceState>>) -> Response {
    shared.fail(&ApiError {
        status: 404,
        code: "notFound",
        message: "no such endpoint".into(),
    })
}

async fn method_not_allowed(State(shared): State<Arc<ServiceState>>) -> Response {
    shared.fail(&ApiError {
        status: 405,
        code: "methodNotAllowed",
        message: "method not allowed on this endpoint".into(),
    })
}
