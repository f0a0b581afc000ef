//! The transport checks every request of both fronts passes before any
//! route sees it (docs/authzen.md and docs/gateway.md, "Transport
//! security"): one `Host`, naming this service; no absolute-form request
//! line; at most one `Origin`, and that one allowed. A web page the
//! operator visits cannot read the service by DNS rebinding (its requests
//! carry the attacker's host name) nor drive it cross-site (its requests
//! carry the page's origin). Applied by [`crate::listener::accept_loop`] to
//! every route: decisions, the console, `/metrics`, `/health`, `/ready`,
//! the MCP endpoint.

use axum::body::Body;
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, Uri};
use axum::response::Response;

/// The host names a loopback service answers to by default.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values a service accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCheck {
    /// `(host, port)`: lowercase, IPv6 without brackets; no port means any.
    hosts: Vec<(String, Option<u16>)>,
    /// Exact origins (`https://console.example`), lowercase, no trailing `/`.
    origins: Vec<String>,
    /// Also accept an `Origin` that is this request's own `Host` (the
    /// console's page posting to its own service).
    same_origin: bool,
}

/// Why a request is refused before any route: its status, code and text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    #[error("the request has no Host header")]
    MissingHost,
    #[error("the request has more than one Host header (RFC 9112 §3.2)")]
    RepeatedHost,
    #[error("the Host header `{0}` is not a host and port")]
    MalformedHost(String),
    #[error("an absolute-form request line (`METHOD http://host/path`) is a proxy's request: this service is not a proxy")]
    AbsoluteForm,
    #[error("Host `{0}` is not one this service answers to (allowed-hosts)")]
    HostNotAllowed(String),
    #[error("the request has more than one Origin header")]
    RepeatedOrigin,
    #[error("Origin `{0}` is not allowed (allowed-origins)")]
    OriginNotAllowed(String),
}

impl TransportError {
    /// The HTTP status: 400 for a malformed request, 403 for a well-formed
    /// one from where this service does not answer.
    pub fn status(&self) -> StatusCode {
        match self {
            TransportError::HostNotAllowed(_) | TransportError::OriginNotAllowed(_) => {
                StatusCode::FORBIDDEN
            }
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// The machine-readable code of the answer's `error`.
    pub fn code(&self) -> &'static str {
        match self {
            TransportError::MissingHost
            | TransportError::RepeatedHost
            | TransportError::MalformedHost(_) => "badHost",
            TransportError::AbsoluteForm => "absoluteForm",
            TransportError::HostNotAllowed(_) => "hostNotAllowed",
            TransportError::RepeatedOrigin => "badOrigin",
            TransportError::OriginNotAllowed(_) => "originNotAllowed",
        }
    }

    /// The answer: `{"error": code, "message": text}`.
    pub fn response(&self) -> Response {
        let body = serde_json::json!({"error": self.code(), "message": self.to_string()});
        let mut r = Response::new(Body::from(body.to_string()));
        *r.status_mut() = self.status();
        r.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    }
}

/// The longest header value echoed in an error.
const MAX_ECHO: usize = 256;

fn echo(v: &str) -> String {
    let cut: String = v.chars().take(MAX_ECHO).collect();
    toolgate_runtime::names::escape(&cut).into_owned()
}

/// `host` or `host:port` (IPv6 in brackets), lowercased; `None` for
/// anything else, a user-info part (`evil.example@127.0.0.1`) included.
fn parse_authority(text: &str) -> Option<(String, Option<u16>)> {
    if text.is_empty()
        || text
            .bytes()
            .any(|b| matches!(b, b'@' | b'/' | b'?' | b'#' | b'\\') || b <= b' ' || b >= 0x7f)
    {
        return None;
    }
    let a: axum::http::uri::Authority = text.parse().ok()?;
    let host = a.host().trim_start_matches('[').trim_end_matches(']');
    // A port part must be a port: `host:99999` is not `host`.
    let rest = &text[a.host().len()..];
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => None,
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => return None,
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

impl HostCheck {
    /// A check accepting `hosts` (`name` for any port, `name:port` for
    /// one) and `origins` exactly; `same_origin` also accepts an Origin of
    /// the request's own Host. An entry that is not a host is an error.
    pub fn new(
        hosts: &[String],
        origins: &[String],
        same_origin: bool,
    ) -> Result<HostCheck, crate::Error> {
        HostCheck::checked(hosts, origins, same_origin).map_err(crate::Error::Transport)
    }

    fn checked(
        hosts: &[String],
        origins: &[String],
        same_origin: bool,
    ) -> Result<HostCheck, String> {
        let hosts = hosts
            .iter()
            .map(|h| {
                let t = h.trim();
                // A bare IPv6 address (`::1`) has colons but no brackets.
                let t = if t.contains(':')
                    && !t.starts_with('[')
                    && t.parse::<std::net::Ipv6Addr>().is_ok()
                {
                    format!("[{t}]")
                } else {
                    t.to_string()
                };
                parse_authority(&t).ok_or_else(|| {
                    format!(
                        "allowed host `{}` is not a host name or address (with an optional :port)",
                        echo(h)
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let origins = origins
            .iter()
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .collect();
        Ok(HostCheck {
            hosts,
            origins,
            same_origin,
        })
    }

    /// The default of a service bound to `bind`, whose public URL is
    /// `public_url`: the loopback names, the bound address when it is a
    /// specific one, and the public URL's host.
    pub fn defaults(bind: Option<std::net::IpAddr>, public_url: Option<&str>) -> Vec<String> {
        let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        if let Some(ip) = bind.filter(|ip| !ip.is_unspecified()) {
            hosts.push(ip.to_string());
        }
        if let Some(host) = public_url
            .and_then(|u| u.parse::<Uri>().ok())
            .and_then(|u| u.host().map(|h| h.trim_matches(['[', ']']).to_string()))
        {
            hosts.push(host);
        }
        hosts.sort();
        hosts.dedup();
        hosts
    }

    /// Whether a request with `uri` and `headers` may be served.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), TransportError> {
        if uri.scheme().is_some() || uri.authority().is_some() {
            return Err(TransportError::AbsoluteForm);
        }
        let host = single_header(headers, HOST.as_str())
            .map_err(|_| TransportError::RepeatedHost)?
            .ok_or(TransportError::MissingHost)?;
        let host_text = host
            .to_str()
            .map_err(|_| TransportError::MalformedHost("(not text)".into()))?;
        let (name, port) = parse_authority(host_text)
            .ok_or_else(|| TransportError::MalformedHost(echo(host_text)))?;
        if !self
            .hosts
            .iter()
            .any(|(h, p)| *h == name && p.is_none_or(|p| Some(p) == port))
        {
            return Err(TransportError::HostNotAllowed(echo(host_text)));
        }
        let Some(origin) =
            single_header(headers, ORIGIN.as_str()).map_err(|_| TransportError::RepeatedOrigin)?
        else {
            return Ok(());
        };
        let text = origin.to_str().unwrap_or("(not text)");
        let o = text.trim_end_matches('/').to_ascii_lowercase();
        let own = host_text.to_ascii_lowercase();
        let same =
            self.same_origin && (o == format!("http://{own}") || o == format!("https://{own}"));
        if same || self.origins.contains(&o) {
            Ok(())
        } else {
            Err(TransportError::OriginNotAllowed(echo(text)))
        }
    }
}

/// The one value of header `name`, `None` when absent; `Err` when the
/// request carries it more than once. A header that names who asks
/// (`Authorization`, a trusted proxy's consumer header) has one value:
/// resolving two by position would let whoever appends the second choose.
pub fn single_header<'a>(
    headers: &'a HeaderMap,
    name: &str,
) -> Result<Option<&'a HeaderValue>, RepeatedHeader> {
    let mut all = headers.get_all(name).iter();
    let first = all.next();
    if all.next().is_some() {
        return Err(RepeatedHeader(name.to_string()));
    }
    Ok(first)
}

/// A header that must have one value came more than once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the request carries `{0}` more than once")]
pub struct RepeatedHeader(pub String);

/// The middleware: a request that fails [`HostCheck::check`] is answered
/// here and reaches no route.
pub async fn middleware(
    axum::extract::State(check): axum::extract::State<std::sync::Arc<HostCheck>>,
    req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    match check.check(req.uri(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.response(),
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
