//! Who is asking, from what a request proves (docs/gateway.md,
//! "Identity"): a bearer token the credentials file accepts, a header from
//! a front proxy the configuration trusts (by its address or a shared
//! secret), or the one identity the operator configured (loopback only).
//! Never a client's own word: no consumer header of its choosing, no
//! `clientInfo.name`. An identity is decided per HTTP request (the
//! 2026-07-28 revision lets the tools vary by the authorization of a
//! request, never by the connection).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode};
use axum::response::Response;
use sha2::{Digest, Sha256};
use toolgate_runtime::{Role, Table};
use toolgate_service::listener::PeerAddr;
use toolgate_service::transport::single_header;

use crate::config::{IdentityMode, TrustedHeader};
use crate::Gateway;

/// The identity of one request: what the gateway decides with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The key's name, the token's `sub`, the proxy's word, or `operator`.
    pub caller: String,
    pub consumer: Option<String>,
    pub role: Role,
    /// The one configuration its credentials bind it to (a key's
    /// `configuration`, a token's `configuration-claim`), if any: its
    /// requests are decided under it, whatever endpoint they reach
    /// (docs/gateway.md, "Several configurations").
    pub configuration: Option<String>,
    /// Whether it approves others' calls at `/approvals` (a key's
    /// `approves`, a token's `approver-claim`; never a header's or the
    /// fixed identity's).
    pub approves: bool,
}

/// How the gateway knows who asks.
pub enum Identify {
    Auth(Box<toolgate_auth::Authenticator>),
    Header(TrustedHeader),
    Fixed(Identity),
}

/// Why a request has no identity: its HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub status: StatusCode,
    /// RFC 6750 error code, for `WWW-Authenticate` on a 401.
    pub error: &'static str,
    pub message: String,
}

impl Identify {
    /// The configured mode, its files read and its fixed consumer checked
    /// against `table` (an unknown consumer is an error at start).
    pub async fn new(mode: &IdentityMode, table: &Table) -> Result<Identify, crate::Error> {
        match mode {
            IdentityMode::Auth(path) => {
                let fetched = jwks_url_document(path)
                    .await
                    .map_err(crate::Error::Config)?;
                let fetch = |url: &str| -> Result<String, toolgate_auth::FetchError> {
                    match &fetched {
                        Some((u, text)) if u == url => Ok(text.clone()),
                        _ => Err(toolgate_auth::FetchError(format!("{url}: not fetched"))),
                    }
                };
                Ok(Identify::Auth(Box::new(
                    toolgate_auth::Authenticator::from_file_fetching(path, &fetch)?,
                )))
            }
            IdentityMode::Header(h) => Ok(Identify::Header(h.clone())),
            IdentityMode::Fixed { consumer, role } => {
                let id = Identity {
                    caller: "operator".into(),
                    consumer: consumer.clone(),
                    role: *role,
                    configuration: None,
                    approves: false,
                };
                admitted(table, &id)
                    .map_err(|e| crate::Error::Config(format!("[identity] {e}")))?;
                Ok(Identify::Fixed(id))
            }
        }
    }

    /// The issuer of accepted tokens, for the protected-resource metadata.
    pub fn issuer(&self) -> Option<&str> {
        match self {
            Identify::Auth(a) => a.issuer(),
            _ => None,
        }
    }

    pub fn uses_tokens(&self) -> bool {
        matches!(self, Identify::Auth(_))
    }

    /// The identity of a request with `headers`, from `peer`.
    pub fn identify(
        &self,
        headers: &HeaderMap,
        peer: Option<std::net::IpAddr>,
        table: &Table,
    ) -> Result<Identity, Denied> {
        let id = match self {
            Identify::Fixed(id) => id.clone(),
            Identify::Auth(auth) => {
                let one = single_header(headers, "authorization").map_err(|e| Denied {
                    status: StatusCode::UNAUTHORIZED,
                    error: "invalid_request",
                    message: e.to_string(),
                })?;
                let value = match one {
                    None => None,
                    Some(v) => Some(v.to_str().map_err(|_| Denied {
                        status: StatusCode::UNAUTHORIZED,
                        error: "invalid_request",
                        message: "the Authorization header is not text".into(),
                    })?),
                };
                let caller = auth.authenticate(value).map_err(|e| Denied {
                    status: StatusCode::UNAUTHORIZED,
                    error: e.code(),
                    message: e.to_string(),
                })?;
                let role = caller
                    .role
                    .unwrap_or(if caller.roles.contains(&Role::User) {
                        Role::User
                    } else {
                        Role::None
                    });
                Identity {
                    caller: caller.name,
                    consumer: caller.consumer,
                    role,
                    configuration: caller.configuration,
                    approves: caller.approves,
                }
            }
            Identify::Header(h) => header_identity(h, headers, peer)?,
        };
        admitted(table, &id).map_err(|e| Denied {
            status: e.status(),
            error: "insufficient_scope",
            message: e.to_string(),
        })?;
        Ok(id)
    }
}

/// The largest JWKS document fetched.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// The credentials file's `[jwt] jwks-url`, fetched once at start (10 s,
/// 1 MiB at most): its URL and text, or `None` when it names none.
async fn jwks_url_document(path: &std::path::Path) -> Result<Option<(String, String)>, String> {
    let bytes = toolgate_runtime::host::read_file(path, 1 << 20)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let value: toml::Value = toml::from_str(&String::from_utf8_lossy(&bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(url) = value
        .get("jwt")
        .and_then(|j| j.get("jwks-url"))
        .and_then(|u| u.as_str())
    else {
        return Ok(None);
    };
    let fail = |e: &dyn std::fmt::Display| format!("{}: jwks-url {url}: {e}", path.display());
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| fail(&e))?;
    let mut r = client.get(url).send().await.map_err(|e| fail(&e))?;
    if !r.status().is_success() {
        return Err(fail(&format!("answered {}", r.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = r.chunk().await.map_err(|e| fail(&e))? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_JWKS_BYTES {
            return Err(fail(&format!("larger than {MAX_JWKS_BYTES} bytes")));
        }
    }
    String::from_utf8(body)
        .map(|t| Some((url.to_string(), t)))
        .map_err(|_| fail(&"not UTF-8"))
}

/// The identity rule at the gateway (docs/gateway.md, "Who is a
/// consumer"): every caller of the gateway is an MCP consumer. One that
/// names a consumer must name one the policy knows
/// ([`Table::check_consumer`]); one that names none is a consumer without a
/// profile, refused when the policy says `consumers-without-profile
/// refused`. Checked per request against the table of that moment.
pub fn admitted(table: &Table, id: &Identity) -> Result<(), crate::Error> {
    match &id.consumer {
        Some(c) => known_consumer(table, c),
        None if table.refuses_unprofiled() => Err(crate::Error::NotAdmitted(
            "this caller names no consumer, and the policy refuses consumers without a profile (`consumers-without-profile refused`): bind the caller's key or token to a consumer".into(),
        )),
        None => Ok(()),
    }
}

/// `Ok` when the policy knows consumer `c`; else why, with a near miss.
pub fn known_consumer(table: &Table, c: &str) -> Result<(), crate::Error> {
    table.check_consumer(c).map_err(|near| {
        crate::Error::NotAdmitted(
            toolgate_runtime::ContextError::UnknownConsumer {
                name: c.to_string(),
                suggestion: near.map(str::to_string),
            }
            .to_string(),
        )
    })
}

fn header_identity(
    h: &TrustedHeader,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
) -> Result<Identity, Denied> {
    let forbidden = |message: String| Denied {
        status: StatusCode::FORBIDDEN,
        error: "invalid_request",
        message,
    };
    if !h.from.is_empty() && !peer.is_some_and(|p| h.from.contains(&p)) {
        return Err(forbidden(format!(
            "requests are accepted only through the authenticating proxy ({}), not from {}",
            h.from
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            peer.map_or("an unknown address".into(), |p| p.to_string())
        )));
    }
    if let Some(want) = &h.secret_sha256 {
        let got = single_header(headers, h.secret_header.as_str())
            .map_err(|e| forbidden(e.to_string()))?
            .map(|v| <[u8; 32]>::from(Sha256::digest(v.as_bytes())));
        if got.as_ref() != Some(want) {
            return Err(forbidden(format!(
                "the proxy's secret (`{}`) is missing or wrong",
                h.secret_header
            )));
        }
    }
    let text = |name: &str| -> Result<Option<String>, Denied> {
        match single_header(headers, name).map_err(|e| forbidden(e.to_string()))? {
            None => Ok(None),
            Some(v) => match v.to_str() {
                Ok(s) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
                _ => Err(forbidden(format!("header `{name}` is empty or not text"))),
            },
        }
    };
    let consumer = text(&h.consumer)?.ok_or_else(|| {
        forbidden(format!(
            "header `{}` is missing: the proxy names the consumer",
            h.consumer
        ))
    })?;
    let role = match &h.role {
        None => Role::User,
        Some(name) => match text(name)? {
            None => Role::User,
            Some(r) => Role::from_name(&r)
                .ok_or_else(|| forbidden(format!("role `{r}` is not admin, user or none")))?,
        },
    };
    Ok(Identity {
        caller: "proxy".into(),
        consumer: Some(consumer),
        role,
        configuration: None,
        approves: false,
    })
}

/// The middleware in front of `/mcp`: an identity in the request's
/// extensions, or the refusal (401 with the protected-resource metadata's
/// address, as the MCP authorization specification asks; 403).
pub async fn middleware(
    State(gw): State<Arc<Gateway>>,
    mut req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let peer = req.extensions().get::<PeerAddr>().map(|p| p.0.ip());
    let table = gw.core.handle.current();
    match gw.identify.identify(req.headers(), peer, &table) {
        Ok(id) => {
            req.extensions_mut().insert(id);
            next.run(req).await
        }
        Err(d) => denied(&gw, &d),
    }
}

fn denied(gw: &Gateway, d: &Denied) -> Response {
    let body = serde_json::json!({"error": d.error, "error_description": d.message});
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = d.status;
    let headers = r.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if d.status == StatusCode::UNAUTHORIZED {
        let value = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\", error=\"{}\"",
            gw.public_url, d.error
        );
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(axum::http::header::WWW_AUTHENTICATE, v);
        }
    }
    r
}
