//! The gateway's HTTP face: `/mcp` (the MCP endpoint, behind the identity
//! middleware), `/.well-known/oauth-protected-resource` (RFC 9728, when
//! tokens are accepted), `/health`, `/ready` and `/metrics`.

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
use crate::Gateway;

/// The MCP endpoint deciding under `configuration`, behind the identity
/// middleware.
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
    let mcp = StreamableHttpService::new(
        move || Ok(Handler::new(handler_gw.clone(), name.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .fallback_service(mcp)
        .layer(axum::middleware::from_fn(session_ended))
        .layer(axum::middleware::from_fn_with_state(
            gw.clone(),
            crate::identity::middleware,
        ))
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
    // `/mcp`: the file's `configuration`; `/mcp/NAME`: each one served.
    // One gateway, one set of upstreams, pins and listings under all.
    let mut mcp = Router::new().route_service(
        "/mcp",
        endpoint(&gw, &gw.config.configuration).into_service::<Body>(),
    );
    for c in &gw.config.configurations {
        mcp = mcp.route_service(
            &format!("/mcp/{c}"),
            endpoint(&gw, c).into_service::<Body>(),
        );
    }
    // Any other `/mcp/...`: an authenticated caller learns it is no
    // configuration here (and the one it may have meant).
    let unknown = Router::new()
        .fallback(unknown_configuration)
        .with_state(gw.clone())
        .layer(axum::middleware::from_fn_with_state(
            gw.clone(),
            crate::identity::middleware,
        ));
    let mcp = mcp.route_service("/mcp/{*rest}", unknown.into_service::<Body>());
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

async fn unknown_configuration(State(gw): State<Arc<Gateway>>, uri: axum::http::Uri) -> Response {
    let asked = uri.path().trim_start_matches("/mcp/");
    let near = toolgate_runtime::names::did_you_mean(
        asked,
        gw.config.configurations.iter().map(String::as_str),
    );
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
