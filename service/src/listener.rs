//! The listener both fronts serve on: connections accepted under the
//! bounds of [`crate::RequestLimits`] (a connection limit, a header timeout, TLS
//! when configured), every route behind the Host/Origin checks
//! ([`crate::transport`]), the peer's address in each request, graceful
//! shutdown; and `/health`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use crate::Core;

/// The header every answer names the table it was decided under in.
pub const DIGEST_HEADER: &str = "x-toolgate-table-digest";

/// The peer address of the connection a request came on, in the request's
/// extensions ([`accept_loop`] puts it there): what a front trusts a proxy's
/// header from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// `/health`: the process answers, and names the table it serves.
pub fn health_route(core: Arc<Core>) -> Router<()> {
    Router::new()
        .route("/health", get(health_of))
        .with_state(core)
}

async fn health_of(State(core): State<Arc<Core>>) -> Response {
    health(&core)
}

/// The `/health` answer of `core`: `{"status": "ok", "tableDigest": ...}`,
/// the digest in [`DIGEST_HEADER`] too.
pub fn health(core: &Core) -> Response {
    let digest = core.handle.current().digest_hex();
    let body = serde_json::json!({"status": "ok", "tableDigest": digest}).to_string();
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = StatusCode::OK;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(d) = HeaderValue::from_str(&digest) {
        r.headers_mut().insert(DIGEST_HEADER, d);
    }
    r
}

/// Accept connections on `listener` until `shutdown`, each served by hyper
/// under the service's bounds: at most `max_connections` at once (one more is
/// closed when accepted, and counted), `header_timeout` to send a request's
/// headers (a stalled or idle connection is closed). Then the requests in
/// flight finish.
pub async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router<()>,
    core: Arc<Core>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let limits = core.limits;
    // Every route of both fronts behind the transport checks.
    let app = app.layer(axum::middleware::from_fn_with_state(
        core.transport.clone(),
        crate::transport::middleware,
    ));
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            // Out of descriptors or a connection reset before accept: wait
            // a little rather than spin.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
        };
        // Answers go out as they are written: with Nagle's algorithm a
        // small answer after its headers waits for the client's delayed ACK
        // (about 40 ms on a kept-alive connection).
        let _ = stream.set_nodelay(true);
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            core.metrics.connections_refused.inc();
            drop(stream);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(
            app.clone().layer(axum::Extension(PeerAddr(peer))),
        );
        let http = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .clone();
        match &core.tls {
            None => {
                let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    let _ = conn.await;
                    drop(permit);
                });
            }
            Some(config) => {
                // The handshake runs on the connection's task, under the
                // header timeout: a client that stalls in it holds no more
                // than its connection slot, and not for long.
                let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
                let timeout = limits.header_timeout;
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(timeout, acceptor.accept(stream)).await
                    {
                        let _ = watcher
                            .watch(http.serve_connection(TokioIo::new(tls), service))
                            .await;
                    }
                    drop(permit);
                });
            }
        }
    }
    drop(listener);
    // Requests in flight get the request deadline to finish.
    let _ = tokio::time::timeout(limits.request_timeout, graceful.shutdown()).await;
    Ok(())
}
