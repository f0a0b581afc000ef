//! The gateway's HTTP face: `/mcp` (the MCP endpoint) and `/approvals`
//! (approvers' answers), behind the identity middleware;
//! `/.well-known/oauth-protected-resource` (RFC 9728, when tokens are
//! accepted), `/health`, `/ready` and `/metrics`.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::handler::Handler;
use crate::identity::Identity;
use crate::Gateway;

/// The MCP endpoint deciding under `configuration` (the identity
/// middleware in front of every endpoint is [`router`]'s).
fn endpoint(gw: &Arc<Gateway>, configuration: &str) -> Router<()> {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(gw.config.allowed_hosts.clone())
        .with_allowed_origins(gw.config.allowed_origins.clone())
        // An Origin not in the list is refused, an empty list refusing
        // every Origin (the MCP transport specification: servers MUST
        // validate Origin); a client without one (not a browser) passes.
        .enforce_origin_validation();
    config.json_response = true;
    // The operator's bound, above or below the SDK's own default: a
    // larger body (chunked or not) is a 413.
    config = config.with_max_request_body_bytes(gw.config.limits.max_body_bytes);
    config.legacy_session_mode = true;
    config.sse_keep_alive = None;
    let handler_gw = gw.clone();
    let name: Arc<str> = configuration.into();
    let book = Arc::new(crate::session_book::Book::default());
    let direct = Handler::new(gw.clone(), name.clone(), book.clone());
    // The SDK's idle timer counts only what reaches its session worker, and
    // requests on the direct path do not: the book keeps the time instead.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = None;
    let sessions = Arc::new(manager);
    crate::session_book::sweeping(
        book.clone(),
        Arc::downgrade(&sessions),
        gw.config.limits.session_idle,
    );
    let mcp = StreamableHttpService::new(
        move || Ok(Handler::new(handler_gw.clone(), name.clone(), book.clone())),
        sessions.clone(),
        config,
    );
    let max = gw.config.limits.max_result_bytes;
    Router::new()
        .fallback_service(mcp)
        // A plain 2026-07-28 call, served without the SDK's per-request
        // service (direct.rs); any other request goes on to it.
        .layer(axum::middleware::from_fn(move |req, next| {
            direct.clone().direct(sessions.clone(), req, next)
        }))
        .layer(axum::middleware::from_fn(move |req, next| {
            crate::json_answer::answer_as_json(max, req, next)
        }))
        .layer(axum::middleware::from_fn(session_ended))
}

/// Every configuration's endpoint, by name, and `/mcp`'s.
struct Endpoints {
    default_name: String,
    default: Router<()>,
    named: std::collections::BTreeMap<String, Router<()>>,
}

impl Endpoints {
    fn of(&self, name: &str) -> Option<&Router<()>> {
        match self.named.get(name) {
            Some(r) => Some(r),
            None if name == self.default_name => Some(&self.default),
            None => None,
        }
    }
}

/// The endpoint a request goes to: the one its path names (`None`: `/mcp`),
/// unless its caller is bound to a configuration. A bound caller's `/mcp`
/// request is decided under its own configuration; at `/mcp/NAME` it must
/// be that one. A name no configuration here has is the 404 of
/// [`unknown_configuration`].
async fn dispatch(e: &Endpoints, asked: Option<&str>, req: axum::http::Request<Body>) -> Response {
    use tower::ServiceExt;
    let bound = req
        .extensions()
        .get::<crate::identity::Identity>()
        .and_then(|id| id.configuration.clone());
    let forbidden = |message: String| {
        json(
            StatusCode::FORBIDDEN,
            serde_json::json!({"error": "configurationNotBound", "message": message}),
        )
    };
    let target = match (asked, bound.as_deref()) {
        (None, None) => &e.default,
        (Some(name), None) => match e.named.get(name) {
            Some(r) => r,
            None => return unknown_configuration(e, name),
        },
        (asked, Some(bound)) => {
            let Some(own) = e.of(bound) else {
                return forbidden(format!(
                    "these credentials are bound to configuration `{}`, which this gateway does not serve",
                    toolgate_runtime::names::shown(bound)
                ));
            };
            match asked {
                Some(name) if name != bound => {
                    if !e.named.contains_key(name) {
                        return unknown_configuration(e, name);
                    }
                    return forbidden(format!(
                        "these credentials are bound to configuration `{bound}`; this endpoint serves `{name}` (use `/mcp`)"
                    ));
                }
                _ => own,
            }
        }
    };
    match target.clone().oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// A session ended with `DELETE` is answered `204 No Content`: the SDK
/// answers `202 Accepted`, which the official clients (200 or 204 expected)
/// log as a failed termination, though the session is gone.
async fn session_ended(
    req: axum::http::Request<Body>,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = req.method() == axum::http::Method::DELETE;
    let mut r = next.run(req).await;
    if delete && r.status() == axum::http::StatusCode::ACCEPTED {
        *r.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    r
}

pub fn router(gw: Arc<Gateway>) -> Router<()> {
    // `/mcp`: the file's `configuration` (or a bound caller's own);
    // `/mcp/NAME`: each one served. One gateway, one set of upstreams,
    // pins and listings under all. Any other `/mcp/...`: an authenticated
    // caller learns it is no configuration here (and the one it may have
    // meant). Identity first, on every path.
    let endpoints = Arc::new(Endpoints {
        default_name: gw.config.configuration.clone(),
        default: endpoint(&gw, &gw.config.configuration),
        named: gw
            .config
            .configurations
            .iter()
            .map(|c| (c.clone(), endpoint(&gw, c)))
            .collect(),
    });
    let (top, named) = (endpoints.clone(), endpoints);
    let approvals = Router::new()
        .route("/approvals", get(approvals_waiting))
        .route("/approvals/{id}", axum::routing::post(approvals_answer))
        .with_state(gw.clone());
    let mcp = Router::new()
        .route(
            "/mcp",
            axum::routing::any(move |req: axum::http::Request<Body>| {
                let e = top.clone();
                async move { dispatch(&e, None, req).await }
            }),
        )
        .route(
            "/mcp/{*name}",
            axum::routing::any(
                move |axum::extract::Path(name): axum::extract::Path<String>,
                      req: axum::http::Request<Body>| {
                    let e = named.clone();
                    async move { dispatch(&e, Some(&name), req).await }
                },
            ),
        )
        .merge(approvals)
        .layer(axum::middleware::from_fn_with_state(
            gw.clone(),
            crate::identity::middleware,
        ));
    let ops = Router::new()
        .route("/metrics", get(metrics))
        .route("/ready", get(ready))
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_metadata),
        )
        .with_state(gw.clone());
    Router::new()
        .merge(mcp)
        .merge(ops)
        .merge(toolgate_service::listener::health_route(gw.core.clone()))
        .layer(DefaultBodyLimit::max(gw.config.limits.max_body_bytes))
}

/// The largest answer an approver posts.
const MAX_ANSWER_BYTES: usize = 1024;

/// Only an approver: anyone else is told so (403), and learns nothing of
/// what waits.
fn not_an_approver(id: &Identity) -> Option<Response> {
    if id.approves {
        return None;
    }
    Some(json(
        StatusCode::FORBIDDEN,
        serde_json::json!({
            "error": "notAnApprover",
            "message": "only an approver answers questions here: a key with `approves = true`, or a token whose `approver-claim` is true",
        }),
    ))
}

/// Whether an approver bound to a configuration may see a question of `configuration`.
fn in_scope(id: &Identity, configuration: &str) -> bool {
    id.configuration
        .as_deref()
        .is_none_or(|c| c == configuration)
}

/// `GET /approvals`: the questions waiting for an approver, oldest first
/// (an approver bound to a configuration sees its own only).
async fn approvals_waiting(
    State(gw): State<Arc<Gateway>>,
    axum::Extension(id): axum::Extension<Identity>,
) -> Response {
    if let Some(r) = not_an_approver(&id) {
        return r;
    }
    let pending: Vec<_> = gw
        .approvals
        .waiting()
        .into_iter()
        .filter(|(_, p)| in_scope(&id, &p.request.configuration))
        .map(|(qid, p)| {
            serde_json::json!({
                "requestId": qid,
                "caller": p.caller,
                "message": crate::approvals::message(&p.request, &p.arguments, &p.policy),
                "request": p.request,
                "arguments": p.arguments,
                "askedAt": p.asked_at,
                "expiresAt": p.expires_at,
            })
        })
        .collect();
    json(StatusCode::OK, serde_json::json!({ "pending": pending }))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerBody {
    approve: bool,
}

/// `POST /approvals/ID` with `{"approve": true}` or `false`: an
/// approver's answer; the caller's client then makes the call again.
async fn approvals_answer(
    State(gw): State<Arc<Gateway>>,
    axum::Extension(id): axum::Extension<Identity>,
    axum::extract::Path(qid): axum::extract::Path<String>,
    body: axum::body::Bytes,
) -> Response {
    use crate::approvals::AnswerError;
    if let Some(r) = not_an_approver(&id) {
        return r;
    }
    let bad = |status, error: &str, message: String| {
        json(
            status,
            serde_json::json!({"error": error, "message": message}),
        )
    };
    if body.len() > MAX_ANSWER_BYTES {
        return bad(
            StatusCode::PAYLOAD_TOO_LARGE,
            "answerTooLarge",
            format!("an answer is at most {MAX_ANSWER_BYTES} bytes: {{\"approve\": true}}"),
        );
    }
    let answer: AnswerBody = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => {
            return bad(
                StatusCode::BAD_REQUEST,
                "badAnswer",
                format!("the answer is `{{\"approve\": true}}` or `{{\"approve\": false}}`: {e}"),
            )
        }
    };
    let scoped = gw
        .approvals
        .question(&qid)
        .is_some_and(|p| in_scope(&id, &p.request.configuration));
    if !scoped {
        return bad(
            StatusCode::NOT_FOUND,
            "unknownQuestion",
            AnswerError::Unknown.to_string(),
        );
    }
    match gw
        .approvals
        .answer(&qid, &id.caller, answer.approve, gw.core.ids.next_id())
    {
        Ok(grant) => json(
            StatusCode::OK,
            serde_json::json!({
                "requestId": qid,
                "outcome": if grant.is_some() { "granted" } else { "declined" },
                "approver": id.caller,
                "grantId": grant,
            }),
        ),
        Err(e @ AnswerError::Unknown) => {
            bad(StatusCode::NOT_FOUND, "unknownQuestion", e.to_string())
        }
        Err(e @ AnswerError::Answered) => {
            bad(StatusCode::CONFLICT, "alreadyAnswered", e.to_string())
        }
        Err(e @ AnswerError::OwnCall) => bad(StatusCode::FORBIDDEN, "ownCall", e.to_string()),
    }
}

fn unknown_configuration(e: &Endpoints, asked: &str) -> Response {
    let near = toolgate_runtime::names::did_you_mean(asked, e.named.keys().map(String::as_str));
    let shown = toolgate_runtime::names::shown(asked);
    json(
        StatusCode::NOT_FOUND,
        serde_json::json!({
            "error": "unknownConfiguration",
            "message": match near {
                Some(n) => format!("this gateway serves no configuration `{shown}`; did you mean `/mcp/{n}`?"),
                None => format!("this gateway serves no configuration `{shown}`"),
            },
        }),
    )
}

fn json(status: StatusCode, value: serde_json::Value) -> Response {
    let mut r = Response::new(Body::from(value.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

async fn resource_metadata(State(gw): State<Arc<Gateway>>) -> Response {
    if !gw.identify.uses_tokens() {
        return json(
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": "this gateway does not take bearer tokens"}),
        );
    }
    json(
        StatusCode::OK,
        serde_json::json!({
            "resource": format!("{}/mcp", gw.public_url),
            "authorization_servers": gw.identify.issuer().into_iter().collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
        }),
    )
}

/// Ready when the table's last reload succeeded, every upstream listed its
/// tools, and the registry pairs with the table.
async fn ready(State(gw): State<Arc<Gateway>>) -> Response {
    let table = gw.table();
    let status = gw.core.reload_status();
    let upstreams = gw
        .upstream_errors
        .lock()
        .map(|m| m.clone())
        .unwrap_or_default();
    let pins = gw.pins.status(&table).err().map(|e| e.to_string());
    let ready = status.error.is_none() && upstreams.is_empty() && pins.is_none();
    json(
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        serde_json::json!({
            "ready": ready,
            "tableDigest": table.digest_hex(),
            "lastReloadError": status.error,
            "upstreamErrors": upstreams,
            "pinsError": pins,
            "listedTools": gw.catalog.load().len(),
        }),
    )
}

async fn metrics(State(gw): State<Arc<Gateway>>) -> Response {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let text = gw.metrics.encode_after(&gw.core.metrics.encode(now));
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    r
}
