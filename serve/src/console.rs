//! `toolgate serve --console`: the access report's views over the table
//! being served, and a simulation answered by the runtime
//! (`toolgate-access-report`; docs/report.md). Read-only: nothing here
//! changes the table, the log or the metrics' decision counts.
//!
//! - `GET /console`: the page (script and style only, no table data), so a
//!   browser can open it without a header; it asks for a bearer token when
//!   the service authenticates.
//! - `GET /console/v1/report`, `GET /console/v1/digest`,
//!   `POST /console/v1/simulate`: the data, behind the service's
//!   `authenticate` middleware. An authenticated caller must be one that may
//!   claim the `admin` role (the console shows every tool and configuration,
//!   hidden remote names included): 403 otherwise.
//!
//! Each answer is made from the table `TableHandle::current()` gives the
//! request, so the console follows reloads; the matrix is cached per table
//! digest.

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use toolgate_access_report::{
    console_page, matrix, simulate, MatrixOptions, Page, Report, SimulateRequest,
};

use crate::api::ApiError;
use crate::ServiceState;

/// The console's state beside the service's: the last matrix, by digest.
pub struct Console {
    shared: Arc<ServiceState>,
    cache: Mutex<Option<(String, Arc<String>)>>,
    title: String,
}

fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn error(e: &ApiError) -> Response {
    json(
        StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST),
        e.body(),
    )
}

/// The table to answer from, for a caller that may see it: only one that
/// may claim `admin` sees the whole table.
fn admitted(
    c: &Console,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
) -> Result<Arc<toolgate_runtime::Table>, ApiError> {
    if let Some(t) = caller {
        let admin = toolgate_runtime::Role::Admin;
        if !(t.roles.contains(&admin) && t.role.is_none_or(|r| r == admin)) {
            return Err(ApiError {
                status: 403,
                code: "forbidden",
                message: "the console shows the whole table: it needs a caller that may claim the admin role".into(),
            });
        }
    }
    // No caller: nothing authenticates (the service is on loopback, or the
    // operator vouched for the network), so the operator's machine asks.
    Ok(c.shared.handle.current())
}

async fn page() -> Response {
    let mut r = Response::new(Body::from(console_page()));
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{}; frame-ancestors 'none'",
        toolgate_access_report::csp(Page::Console)
    )) {
        h.insert("content-security-policy", v);
    }
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    // For browsers that do not read CSP's frame-ancestors.
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    r
}

async fn report(
    axum::Extension(c): axum::Extension<Arc<Console>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
) -> Response {
    let table = match admitted(&c, caller) {
        Ok(t) => t,
        Err(e) => return error(&e),
    };
    let digest = table.digest_hex();
    if let Ok(cache) = c.cache.lock() {
        if let Some((d, body)) = cache.as_ref() {
            if *d == digest {
                return json(StatusCode::OK, body.as_str().to_string());
            }
        }
    }
    let title = c.title.clone();
    let built = tokio::task::spawn_blocking(move || {
        let report = Report {
            title,
            matrix: matrix(&table, MatrixOptions::default()),
            diff: None,
            denials: None,
        };
        serde_json::to_string(&report).map_err(|e| e.to_string())
    })
    .await;
    match built {
        Ok(Ok(body)) => {
            let body = Arc::new(body);
            if let Ok(mut cache) = c.cache.lock() {
                *cache = Some((digest, body.clone()));
            }
            json(StatusCode::OK, body.as_str().to_string())
        }
        Ok(Err(e)) => error(&ApiError {
            status: 500,
            code: "internal",
            message: e,
        }),
        Err(e) => error(&ApiError {
            status: 500,
            code: "internal",
            message: format!("the matrix could not be built: {e}"),
        }),
    }
}

async fn digest(
    axum::Extension(c): axum::Extension<Arc<Console>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
) -> Response {
    let table = match admitted(&c, caller) {
        Ok(t) => t,
        Err(e) => return error(&e),
    };
    json(
        StatusCode::OK,
        serde_json::json!({ "digest": table.digest_hex() }).to_string(),
    )
}

async fn simulation(
    axum::Extension(c): axum::Extension<Arc<Console>>,
    caller: Option<axum::Extension<Arc<crate::Trust>>>,
    headers: axum::http::HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let table = match admitted(&c, caller) {
        Ok(t) => t,
        Err(e) => return error(&e),
    };
    // As the decision routes: JSON bodies only, so no page elsewhere can
    // post one without a CORS preflight (which is never answered).
    if !crate::writer::is_json(&headers) {
        return error(&ApiError {
            status: 415,
            code: "unsupportedMediaType",
            message: "a simulation request's Content-Type must be application/json".into(),
        });
    }
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            return error(&ApiError {
                status: e.status().as_u16(),
                code: "badBody",
                message: e.body_text(),
            })
        }
    };
    let req: SimulateRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(&ApiError::bad("badRequest", format!("request body: {e}"))),
    };
    // The answer is bounded as the decision routes' are (--max-answer-bytes).
    let cap = c.shared.limits.max_answer_bytes;
    match simulate(&table, &req) {
        Ok(s) => match crate::writer::to_json_capped(&s, cap) {
            Some(b) => json(StatusCode::OK, b),
            None => error(&ApiError::bad(
                "answerTooLarge",
                format!("the simulation's answer would be over {cap} bytes (--max-answer-bytes): simulate fewer tools or configurations"),
            )),
        },
        Err(e) => error(&ApiError::bad("badRequest", e.to_string())),
    }
}

/// The console's routes; `guard` puts the service's own `authenticate`
/// middleware on the data routes.
pub fn router(
    shared: Arc<ServiceState>,
    title: String,
    guard: impl Fn(Router<Arc<ServiceState>>) -> Router<Arc<ServiceState>>,
) -> Router<Arc<ServiceState>> {
    let state = Arc::new(Console {
        shared,
        cache: Mutex::new(None),
        title,
    });
    let data = Router::new()
        .route("/console/v1/report", get(report))
        .route("/console/v1/digest", get(digest))
        .route("/console/v1/simulate", post(simulation))
        .layer(axum::Extension(state));
    Router::new()
        .route("/console", get(page))
        .merge(guard(data))
}
