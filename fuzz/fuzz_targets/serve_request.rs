//! The decision service's handling of what a client sends: any body, to
//! any decision endpoint, with any Content-Type and Authorization header,
//! through the real router (parsing, member checks, authentication, the
//! runtime's decisions, the answer under its cap). It must answer every
//! request, never with a 500 (a panic) and never with an allow it cannot
//! justify: a 2xx answer is JSON.

#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

const PATHS: [&str; 4] = [
    "/access/v1/evaluation",
    "/access/v1/evaluations",
    "/access/v1/search/resource",
    "/toolgate/v1/unavailable",
];

struct Fixture {
    rt: tokio::runtime::Runtime,
    open: axum::Router,
    authed: axum::Router,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let project = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/mcp-profiles");
        let source = toolgate_serve::Source::Project(project);
        let service = |auth: bool| {
            let table = source.load().expect("the example compiles");
            let s = toolgate_serve::Service::new(
                table,
                None,
                toolgate_serve::Limits::default(),
                "http://127.0.0.1".into(),
                None,
            )
            .with_default_configuration(Some("support-chat".into()));
            if auth {
                let creds = format!(
                    "[[key]]\nname = \"k\"\nsha256 = \"{}\"\n",
                    toolgate_auth::key_digest("fuzz-key")
                );
                let a = toolgate_auth::Authenticator::from_toml(&creds, std::path::Path::new("."))
                    .expect("credentials");
                s.with_auth(a).build().expect("a service").router()
            } else {
                s.build().expect("a service").router()
            }
        };
        Fixture {
            open: service(false),
            authed: service(true),
            rt,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let path = PATHS[usize::from(selector & 3)];
    let content_type = match (selector >> 2) & 3 {
        0 | 1 => "application/json",
        2 => "application/json; charset=utf-8",
        _ => "text/plain",
    };
    // Bit 4: the authenticated service; then the first line of the rest is
    // the Authorization header.
    let (router, header, body) = if selector & 16 != 0 {
        let split = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let header = String::from_utf8_lossy(&rest[..split]).into_owned();
        (f.authed.clone(), Some(header), rest.get(split + 1..).unwrap_or_default())
    } else {
        (f.open.clone(), None, rest)
    };
    let mut req = Request::post(path).header("content-type", content_type);
    if let Some(h) = header.filter(|h| axum::http::HeaderValue::from_str(h).is_ok()) {
        req = req.header("authorization", h);
    }
    let Ok(req) = req.body(Body::from(body.to_vec())) else {
        return;
    };
    let response = f.rt.block_on(router.oneshot(req)).expect("the router answers");
    let status = response.status().as_u16();
    assert_ne!(status, 500, "a panic answered {path}");
    let bytes = f
        .rt
        .block_on(axum::body::to_bytes(response.into_body(), 64 << 20))
        .expect("a body");
    if (200..300).contains(&status) {
        serde_json::from_slice::<serde_json::Value>(&bytes).expect("a 2xx answer is JSON");
    }
});
