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
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};

use crate::api::{
    self, ApiError, Built, DecisionOut, Evaluation, EvaluationsRequest, SearchRequest, Semantic,
    Stage, UnavailableRequest,
};
use crate::metrics::DecisionLabels;
use crate::util::{rfc3339, unix_ms};
use crate::Shared;

/// An evaluation with nothing of its own (all from the defaults).
static EMPTY: Evaluation<'static> = Evaluation {
    subject: None,
    action: None,
    resource: None,
    context: None,
};

pub const DIGEST_HEADER: &str = "x-toolgate-table-digest";

#[derive(Clone)]
struct MakeId(Arc<Shared>);

impl MakeRequestId for MakeId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        HeaderValue::from_str(&self.0.ids.next_id())
            .ok()
            .map(RequestId::new)
    }
}

pub fn router(shared: Arc<Shared>) -> Router {
    let limits = shared.limits;
    Router::new()
        .route("/access/v1/evaluation", post(evaluation))
        .route("/access/v1/evaluations", post(evaluations))
        .route("/access/v1/search/resource", post(search_resource))
        .route("/.well-known/authzen-configuration", get(configuration))
        .route("/toolgate/v1/unavailable", post(unavailable))
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
            limits.max_concurrency,
        ))
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

// ------------------------------------------------------------------ responses

fn json<T: Serialize>(status: StatusCode, value: &T, digest: Option<&str>) -> Response {
    json_sized(status, value, digest, 256)
}

/// [`json`] into a buffer of `capacity` bytes to start with.
fn json_sized<T: Serialize>(
    status: StatusCode,
    value: &T,
    digest: Option<&str>,
    capacity: usize,
) -> Response {
    let mut body = Vec::with_capacity(capacity);
    if serde_json::to_writer(&mut body, value).is_err() {
        body.clear();
    }
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(d) = digest.and_then(|d| HeaderValue::from_str(d).ok()) {
        r.headers_mut().insert(DIGEST_HEADER, d);
    }
    r
}

fn error_response(e: &ApiError) -> Response {
    let mut r = Response::new(Body::from(e.body()));
    *r.status_mut() = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

impl Shared {
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
    shared: &Shared,
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
struct Tally<'t> {
    rows: Vec<(&'t str, &'static str, Stage, u64)>,
}

impl<'t> Tally<'t> {
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

    fn flush(self, shared: &Shared) {
        for (configuration, reason, stage, n) in self.rows {
            shared
                .metrics
                .decisions
                .get_or_create(&DecisionLabels {
                    configuration: configuration.to_string(),
                    reason: reason.to_string(),
                    stage: stage.as_str().to_string(),
                })
                .inc_by(n);
        }
    }
}

/// Evaluate a list of evaluations against one table, with request-level
/// defaults; a context built from the defaults is built once and reused.
struct Batch<'t, 'r> {
    shared: &'r Shared,
    table: &'t Table,
    digest: &'r str,
    defaults: &'r Evaluation<'r>,
    /// Whether each answer names the digest (a single answer) or the batch does.
    digest_per_answer: bool,
    /// Whether refused answers carry the typed refusal.
    refusals: bool,
    path: &'static str,
    request_id: Option<&'r str>,
    default_built: Option<Result<Built<'t>, ApiError>>,
    tally: Tally<'t>,
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

impl<'t, 'r> Batch<'t, 'r> {
    /// A batch that names the digest in each answer and carries refusals.
    fn new(
        shared: &'r Shared,
        table: &'t Table,
        digest: &'r str,
        defaults: &'r Evaluation<'r>,
        path: &'static str,
        request_id: Option<&'r str>,
    ) -> Self {
        Batch {
            shared,
            table,
            digest,
            defaults,
            digest_per_answer: true,
            refusals: true,
            path,
            request_id,
            default_built: None,
            tally: Tally::default(),
        }
    }

    fn one(&mut self, item: &'r Evaluation<'r>) -> Result<DecisionOut<'r>, ApiError> {
        let d = self.defaults;
        let subject = or_default(&item.subject, &d.subject, "subject")?;
        let action = or_default(&item.action, &d.action, "action")?;
        let resource = or_default(&item.resource, &d.resource, "resource")?;
        let context = or_default(
            &item.context,
            &d.context,
            "context (with its configuration)",
        )?;
        let stage = Stage::parse(action)?;
        let own;
        let built = if item.subject.is_none() && item.context.is_none() {
            let table = self.table;
            match self
                .default_built
                .get_or_insert_with(|| api::build(table, subject, context))
            {
                Ok(b) => &*b,
                Err(e) => return Err(e.clone()),
            }
        } else {
            own = api::build(self.table, subject, context)?;
            &own
        };
        let outcome = api::decide(&built.ctx, resource, self.refusals)?;
        self.tally.add(
            built.ctx.configuration_name(),
            match (outcome.allowed, outcome.observed_only, outcome.reason) {
                (true, false, _) => "allowed",
                (true, true, _) => "observedOnly",
                (false, _, r) => r.map_or("unknown", |r| r.code()),
            },
            stage,
        );
        let mut decision_id = None;
        if let Some(log) = &self.shared.log {
            let id = self.shared.ids.next_id();
            let (input, result) =
                api::log_parts(subject, action, resource, context, built, &outcome);
            log.record(ServiceRecord {
                decision_id: id.clone(),
                timestamp: rfc3339(SystemTime::now()),
                path: self.path.to_string(),
                request_id: self.request_id.map(str::to_string),
                table_digest: self.digest.to_string(),
                stage: stage.as_str().to_string(),
                input,
                result,
            });
            decision_id = Some(id);
        }
        let digest = self.digest_per_answer.then_some(self.digest);
        let mut out = DecisionOut::decided(outcome, built.run_error.clone(), digest);
        out.context.decision_id = decision_id;
        Ok(out)
    }
}

async fn evaluation(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    timed_answer(&shared, 0, b, |bytes| {
        let item: Evaluation = parse(bytes)?;
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
        );
        let out = batch.one(&item)?;
        let response = json(StatusCode::OK, &out, Some(&digest));
        batch.tally.flush(&shared);
        Ok::<_, ApiError>(response)
    })
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
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    timed_answer(&shared, 1, b, |bytes| {
        let req: EvaluationsRequest = parse(bytes)?;
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
        );
        batch.digest_per_answer = items.is_empty();
        batch.refusals = req
            .options
            .as_ref()
            .and_then(|o| o.refusals)
            .unwrap_or(true);
        let response = if items.is_empty() {
            // No evaluations: the request is one evaluation (AuthZEN's
            // backwards-compatible form), answered as one.
            let out = batch.one(&EMPTY)?;
            json(StatusCode::OK, &out, Some(&digest))
        } else {
            let mut evaluations = Vec::with_capacity(items.len());
            for item in &items {
                let out = batch
                    .one(item)
                    .unwrap_or_else(|e| DecisionOut::failed(e, None));
                let stop = semantic.stops_after(out.decision);
                evaluations.push(out);
                if stop {
                    break;
                }
            }
            let cap = 64 + evaluations.len() * 80;
            let out = EvaluationsOut {
                evaluations,
                context: BatchContext {
                    table_digest: &digest,
                },
            };
            json_sized(StatusCode::OK, &out, Some(&digest), cap)
        };
        batch.tally.flush(&shared);
        Ok(response)
    })
}

// ------------------------------------------------------------------ search

#[derive(Serialize)]
struct Found<'a> {
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
    results: Vec<Found<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<PageOut>,
    context: SearchContext<'a>,
}

/// A page token: the offset of the next result and the table it belongs to.
fn page_token(offset: usize, digest: &str) -> String {
    format!("{offset}.{}", &digest[..16.min(digest.len())])
}

fn page_offset(token: &str, digest: &str) -> Result<usize, ApiError> {
    let stale = || {
        ApiError::bad(
            "badPageToken",
            "the page token is not one of this table's (the table may have been reloaded): start the search again",
        )
    };
    let (offset, of) = token.split_once('.').ok_or_else(stale)?;
    if !digest.starts_with(of) || of.len() != 16.min(digest.len()) {
        return Err(stale());
    }
    offset.parse().map_err(|_| stale())
}

async fn search_resource(
    State(shared): State<Arc<Shared>>,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    timed_answer(&shared, 2, b, |bytes| {
        let req: SearchRequest = parse(bytes)?;
        Stage::parse(&req.action)?;
        if req.resource.kind.as_ref() != "tool" {
            return Err(ApiError::bad(
                "unknownResourceType",
                format!("unknown resource type `{}` (tool)", req.resource.kind),
            ));
        }
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let built = api::build(&table, &req.subject, &req.context)?;
        let offered = built.ctx.offered();
        let (results, page) = match &req.page {
            None => (offered.as_slice(), None),
            Some(p) => {
                let start = match p.token.as_deref() {
                    None | Some("") => 0,
                    Some(t) => page_offset(t, &digest)?,
                }
                .min(offered.len());
                let limit = p.limit.unwrap_or(offered.len()).max(1);
                let end = start.saturating_add(limit).min(offered.len());
                let next = if end < offered.len() {
                    page_token(end, &digest)
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
                .map(|id| Found { kind: "tool", id })
                .collect(),
            page,
            context: SearchContext {
                table_digest: &digest,
                run_error: built.run_error.clone(),
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
    State(shared): State<Arc<Shared>>,
    b: Result<Bytes, BytesRejection>,
) -> Response {
    timed_answer(&shared, 3, b, |bytes| {
        let req: UnavailableRequest = parse(bytes)?;
        let table = shared.handle.current();
        let digest = table.digest_hex();
        let built = api::build(&table, &req.subject, &req.context)?;
        let out = UnavailableOut {
            configuration: built.ctx.configuration_name(),
            unavailable: built.ctx.unavailable(),
            prompt: built.ctx.unavailable_prompt(),
            table_digest: &digest,
            run_error: built.run_error.clone(),
        };
        Ok(json(StatusCode::OK, &out, Some(&digest)))
    })
}

// ------------------------------------------------------------------ discovery, health, metrics

async fn configuration(State(shared): State<Arc<Shared>>) -> Response {
    let base = shared.public_url.trim_end_matches('/');
    let value = serde_json::json!({
        "policy_decision_point": base,
        "access_evaluation_endpoint": format!("{base}/access/v1/evaluation"),
        "access_evaluations_endpoint": format!("{base}/access/v1/evaluations"),
        "search_resource_endpoint": format!("{base}/access/v1/search/resource"),
    });
    json(StatusCode::OK, &value, None)
}

async fn health(State(shared): State<Arc<Shared>>) -> Response {
    let digest = shared.handle.current().digest_hex();
    json(
        StatusCode::OK,
        &serde_json::json!({"status": "ok", "tableDigest": digest}),
        Some(&digest),
    )
}

async fn ready(State(shared): State<Arc<Shared>>) -> Response {
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

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let now = unix_ms(SystemTime::now()) as f64 / 1000.0;
    let text = shared.metrics.encode(now);
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    r
}

async fn not_found(State(shared): State<Arc<Shared>>) -> Response {
    shared.fail(&ApiError {
        status: 404,
        code: "notFound",
        message: "no such endpoint".into(),
    })
}

async fn method_not_allowed(State(shared): State<Arc<Shared>>) -> Response {
    shared.fail(&ApiError {
        status: 405,
        code: "methodNotAllowed",
        message: "method not allowed on this endpoint".into(),
    })
}
