//! The MCP servers behind the gateway, each spoken to with the official
//! Rust SDK as a client: a program over stdio or a streamable HTTP URL.
//! Every step is bounded (docs/gateway.md, "Bounds"): the start and
//! handshake, each `tools/list` page and each call take at most the
//! upstream timeout; a listing takes at most `max-pages` pages and
//! `max-tools` tools, and a cursor sent twice stops it.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientConfig, ErrorCode, ErrorData,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ClientHandler;
use rmcp::ClientServiceExt;
use tokio::sync::Notify;
use toolgate_runtime::page_walk::{PageStop, PageWalk};

use crate::config::file::UpstreamProtocol;
use crate::config::{GatewayLimits, Transport, Upstream};

/// The client side of one upstream: it wakes the gateway when the server
/// says a list changed, relays its progress notifications to the client
/// whose call they belong to, and publishes its log messages and resource
/// updates to the sessions ([`Event`]; each session decides what it may see).
#[derive(Clone)]
pub struct Listener {
    pub server: Arc<str>,
    pub changed: Arc<Notify>,
    pub progress: Arc<Progress>,
    pub events: tokio::sync::broadcast::Sender<Event>,
    pub in_flight: Arc<InFlight>,
    /// How long a client may take to answer a relayed request.
    pub timeout: std::time::Duration,
}

/// The calls in flight on one upstream connection, each with its client's
/// peer. A server-to-client request (elicitation, sampling) goes to the
/// client of the one call in flight; with none or several it is refused,
/// since the SDK does not say which call such a request belongs to and the
/// gateway never asks one caller's user on behalf of another's call.
#[derive(Default)]
pub struct InFlight {
    next: std::sync::atomic::AtomicU64,
    calls: std::sync::Mutex<std::collections::HashMap<u64, CallOf>>,
}

/// The client of a call in flight: its peer and the id of its request (a
/// relayed request rides that request's stream), what it declared, and
/// which revision it speaks.
#[derive(Clone)]
pub struct CallOf {
    pub peer: rmcp::Peer<rmcp::RoleServer>,
    pub request: rmcp::model::RequestId,
    /// Its capabilities: per request on 2026-07-28, from its handshake before.
    pub capabilities: rmcp::model::ClientCapabilities,
    /// Whether it speaks 2026-07-28: an upstream's `InputRequiredResult`
    /// then goes back to it as it is. An earlier client is asked through
    /// `elicitation/create` or `sampling/createMessage` by the gateway,
    /// which retries the call with the answers (never answering itself).
    pub modern: bool,
    /// The W3C trace context (`traceparent`, `tracestate`) of the gateway's
    /// CLIENT span, sent on in the call's `_meta` (empty: none).
    pub trace: std::collections::HashMap<String, String>,
}

/// A W3C trace context (`traceparent`, `tracestate`) in a request's
/// `_meta`, in place of what was there: the upstream's parent is the
/// gateway's CLIENT span.
pub(crate) fn put_trace(
    meta: &mut rmcp::model::RequestMetaObject,
    carrier: &std::collections::HashMap<String, String>,
) {
    for (k, v) in carrier {
        meta.0
             .0
            .insert(k.clone(), serde_json::Value::String(v.clone()));
    }
}

impl CallOf {
    /// The capabilities an upstream on 2026-07-28 is told the caller has:
    /// what the gateway relays of the client's (elicitation, sampling, roots).
    fn relayed_capabilities(&self) -> rmcp::model::ClientCapabilities {
        let mut caps = rmcp::model::ClientCapabilities::default();
        caps.elicitation = self.capabilities.elicitation.clone();
        caps.sampling = self.capabilities.sampling.clone();
        caps.roots = self.capabilities.roots.clone();
        caps
    }
}

impl InFlight {
    fn enter(&self, client: CallOf) -> InFlightCall<'_> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut m) = self.calls.lock() {
            m.insert(id, client);
        }
        InFlightCall { of: self, id }
    }

    /// The client of the one call in flight, or the refusal of `method`.
    fn only(&self, method: &str) -> Result<CallOf, ErrorData> {
        let calls = self.calls.lock().map_err(|_| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "a gateway lock was poisoned",
                None,
            )
        })?;
        let mut clients = calls.values();
        match (clients.next(), clients.next()) {
            (Some(one), None) => Ok(one.clone()),
            (None, _) => Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!("{method}: no call of this gateway is in flight to ask for"),
                None,
            )),
            (Some(_), Some(_)) => Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{method}: {} calls of this gateway are in flight and the request does not say which it belongs to",
                    calls.len()
                ),
                None,
            )),
        }
    }
}

/// A call's place in [`InFlight`]; removed when the call ends.
struct InFlightCall<'a> {
    of: &'a InFlight,
    id: u64,
}

impl Drop for InFlightCall<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.of.calls.lock() {
            m.remove(&self.id);
        }
    }
}

/// Send `request` to the client of `call`, on the stream of the call's own
/// request (the SDK attaches that only inside the call's handler task), and
/// its answer within `timeout`. When `cancelled` ends first (the server
/// cancelled its request), the client is told `notifications/cancelled`
/// for the relayed one.
pub(crate) async fn from_client(
    method: &str,
    timeout: std::time::Duration,
    call: &CallOf,
    mut request: rmcp::model::ServerRequest,
    cancelled: impl std::future::Future<Output = ()>,
) -> Result<rmcp::model::ClientResult, ErrorData> {
    use rmcp::model::GetExtensions;
    request
        .extensions_mut()
        .insert(rmcp::service::OriginatingRequestId(call.request.clone()));
    let handle = call
        .peer
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .map_err(|e| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("{method}: the client could not be asked: {e}"),
                None,
            )
        })?;
    let id = handle.id.clone();
    let answer = tokio::select! {
        a = tokio::time::timeout(timeout, handle.await_response()) => a,
        () = cancelled => {
            let _ = call
                .peer
                .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the server cancelled its request".into()),
                ))
                .await;
            return Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("{method}: the server cancelled its request"),
                None,
            ));
        }
    };
    match answer {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(rmcp::ServiceError::McpError(e))) => Err(e),
        Ok(Err(e)) => Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("{method}: the client did not answer: {e}"),
            None,
        )),
        Err(_) => Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "{method}: the client did not answer within {} ms",
                timeout.as_millis()
            ),
            None,
        )),
    }
}

/// A notification of an upstream that is no answer to one call: it goes to
/// the sessions that see the server (and, for an update, subscribed to the
/// resource). A session too slow to take them loses the oldest
/// (`EVENTS_QUEUED` per session), never blocking the upstream.
#[derive(Debug, Clone)]
pub enum Event {
    #[allow(deprecated)]
    Log(Arc<str>, rmcp::model::LoggingMessageNotificationParam),
    Updated(Arc<str>, rmcp::model::ResourceUpdatedNotificationParam),
}

/// How many events wait for one session before the oldest are dropped.
pub const EVENTS_QUEUED: usize = 256;

/// What a connection wakes or tells: the relister and the sessions.
#[derive(Clone)]
pub struct Wake {
    pub changed: Arc<Notify>,
    pub events: tokio::sync::broadcast::Sender<Event>,
}

/// The calls in flight whose client asked for progress: the progress
/// token the SDK gave the upstream request -> the client's peer and the
/// client's own token. The SDK numbers its tokens per upstream connection,
/// so each connection has its own table.
#[derive(Default)]
pub struct Progress {
    /// Held (written) by a call from sending its request until its route
    /// is in place, and (read) by a progress notification before it looks
    /// its route up: the upstream may answer with progress before the
    /// sender has learnt the token the SDK gave the request.
    registering: tokio::sync::RwLock<()>,
    routes: std::sync::Mutex<
        std::collections::HashMap<
            rmcp::model::ProgressToken,
            (rmcp::Peer<rmcp::RoleServer>, rmcp::model::ProgressToken),
        >,
    >,
    /// Per routed token: progress notifications arrived, and relayed.
    counts: std::sync::Mutex<std::collections::HashMap<rmcp::model::ProgressToken, (u64, u64)>>,
    /// Woken at each relay.
    settled: tokio::sync::Notify,
}

/// A call whose progress goes back to its client: the client's peer and token.
pub type ProgressTo = (rmcp::Peer<rmcp::RoleServer>, rmcp::model::ProgressToken);

impl Progress {
    fn target(&self, token: &rmcp::model::ProgressToken) -> Option<ProgressTo> {
        self.routes.lock().ok()?.get(token).cloned()
    }

    /// A progress notification under `token` arrived: its place among the
    /// token's notifications, in the order the transport delivers messages.
    /// A token no call routes (yet: progress may come before the call's
    /// route is in place) is counted too; at most `MAX_COUNTED` tokens are,
    /// those of no route dropped first.
    fn arrived(&self, token: &rmcp::model::ProgressToken) -> Option<Arrival> {
        let mut c = self.counts.lock().ok()?;
        if c.len() >= MAX_COUNTED && !c.contains_key(token) {
            let routes = self.routes.lock().ok()?;
            c.retain(|t, _| routes.contains_key(t));
            if c.len() >= MAX_COUNTED {
                return None;
            }
        }
        let n = c.entry(token.clone()).or_default();
        n.0 += 1;
        Some(Arrival(n.0 - 1))
    }

    /// Wait (at most the settle bound) until the notifications that arrived
    /// before `place` under `token` have been relayed: the SDK runs each
    /// notification's handler as a task of its own, so they may start in
    /// any order, and progress must reach the client in the server's order.
    async fn turn(&self, token: &rmcp::model::ProgressToken, place: Arrival) {
        let deadline = tokio::time::Instant::now() + PROGRESS_SETTLE;
        loop {
            let waiting = self.settled.notified();
            let ready = self
                .counts
                .lock()
                .map_or(true, |c| c.get(token).is_none_or(|(_, r)| *r >= place.0));
            if ready || tokio::time::timeout_at(deadline, waiting).await.is_err() {
                return;
            }
        }
    }

    /// A progress notification under `token` was relayed (or could not be).
    fn relayed(&self, token: &rmcp::model::ProgressToken) {
        if let Ok(mut c) = self.counts.lock() {
            if let Some(n) = c.get_mut(token) {
                n.1 += 1;
            }
        }
        self.settled.notify_waiters();
    }

    /// Wait (at most `bound`) until every progress notification that
    /// arrived under `token` before the call's answer has been relayed: the
    /// SDK hands notifications to tasks of their own, so an answer may
    /// overtake the progress sent before it.
    async fn settle(&self, token: &rmcp::model::ProgressToken, bound: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let waiting = self.settled.notified();
            let done = self
                .counts
                .lock()
                .map_or(true, |c| c.get(token).is_none_or(|(a, r)| r >= a));
            if done {
                return;
            }
            if tokio::time::timeout_at(deadline, waiting).await.is_err() {
                return;
            }
        }
    }
}

/// A progress notification's place among its token's, in arrival order
/// (put in the notification's extensions by [`Counted`]).
#[derive(Debug, Clone, Copy)]
struct Arrival(u64);

/// The most progress tokens counted at once on one upstream connection.
const MAX_COUNTED: usize = 4096;

/// Idle connections kept per URL upstream (docs/gateway.md, "Bounds").
pub const UPSTREAM_IDLE_CONNECTIONS: usize = 32;

/// How long an idle upstream connection is kept: less than the 5 s after
/// which common servers (uvicorn, Node's `http`) close one, so a request is
/// never sent on a connection its server is closing at that moment (the
/// request would fail, and a call cannot be sent again blindly).
const UPSTREAM_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

/// The HTTP client of one URL upstream: with `keep_alive`, at most
/// [`UPSTREAM_IDLE_CONNECTIONS`] idle connections for
/// [`UPSTREAM_IDLE_TIMEOUT`] (the SDK's default client opens a connection
/// per request, which left one socket in TIME_WAIT per call); else none
/// kept. `TCP_NODELAY`, so a request is not held for a delayed ACK; no
/// redirect followed (the operator names the URL).
fn http_client(keep_alive: bool) -> Result<rmcp_reqwest::Client, String> {
    let idle = if keep_alive {
        UPSTREAM_IDLE_CONNECTIONS
    } else {
        0
    };
    rmcp_reqwest::Client::builder()
        .pool_max_idle_per_host(idle)
        .pool_idle_timeout(UPSTREAM_IDLE_TIMEOUT)
        .tcp_nodelay(true)
        .redirect(rmcp_reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("the HTTP client: {e}"))
}

/// How long a call's answer waits for its earlier progress to be relayed.
const PROGRESS_SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// An upstream's transport that counts, in the order it delivers them, the
/// progress notifications of routed calls ([`Progress::settle`]).
pub struct Counted<T> {
    inner: T,
    progress: Arc<Progress>,
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient>
    for Counted<T>
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let mut m = self.inner.receive().await;
        if let Some(rmcp::model::JsonRpcMessage::Notification(n)) = &mut m {
            if let rmcp::model::ServerNotification::ProgressNotification(p) = &mut n.notification {
                if let Some(place) = self.progress.arrived(&p.params.progress_token) {
                    p.extensions.insert(place);
                }
            }
        }
        m
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A call's progress route; removed when the call ends.
struct ProgressRoute<'a> {
    progress: &'a Progress,
    token: rmcp::model::ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.progress.routes.lock() {
            m.remove(&self.token);
        }
        if let Ok(mut c) = self.progress.counts.lock() {
            c.remove(&self.token);
        }
    }
}

impl ClientHandler for Listener {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed.notify_one();
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed.notify_one();
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed.notify_one();
        std::future::ready(())
    }

    #[allow(deprecated)]
    fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        // No session listening is no error: the message goes nowhere.
        let _ = self.events.send(Event::Log(self.server.clone(), params));
        std::future::ready(())
    }

    fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let _ = self
            .events
            .send(Event::Updated(self.server.clone(), params));
        std::future::ready(())
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        // Only for a call in flight that asked for it; anything else (a
        // token of no call whose client asked) goes nowhere.
        let target = {
            let _settled = self.progress.registering.read().await;
            self.progress.target(&params.progress_token)
        };
        if let Some((client, token)) = target {
            let upstream_token = params.progress_token.clone();
            let place = context.extensions.get::<Arrival>().copied();
            if let Some(place) = place {
                self.progress.turn(&upstream_token, place).await;
            }
            let mut relayed = params;
            relayed.progress_token = token;
            let _ = client.notify_progress(relayed).await;
            if place.is_some() {
                self.progress.relayed(&upstream_token);
            }
        }
    }

    // Server-to-client requests go to the client of the call that caused
    // them when it declared the capability, and its answer back; never
    // answered on the user's behalf (the SDK's defaults would decline an
    // elicitation and answer roots with none).
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        const METHOD: &str = "elicitation/create";
        let call = self.in_flight.only(METHOD)?;
        if call.capabilities.elicitation.is_none() {
            return Err(not_relayed(METHOD));
        }
        let request =
            rmcp::model::ServerRequest::ElicitRequest(rmcp::model::ElicitRequest::new(request));
        match from_client(METHOD, self.timeout, &call, request, context.ct.cancelled()).await? {
            rmcp::model::ClientResult::ElicitResult(r) => Ok(r),
            _ => Err(unexpected(METHOD)),
        }
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        const METHOD: &str = "sampling/createMessage";
        let call = self.in_flight.only(METHOD)?;
        if call.capabilities.sampling.is_none() {
            return Err(not_relayed(METHOD));
        }
        let request = rmcp::model::ServerRequest::CreateMessageRequest(
            rmcp::model::CreateMessageRequest::new(request),
        );
        match from_client(METHOD, self.timeout, &call, request, context.ct.cancelled()).await? {
            rmcp::model::ClientResult::CreateMessageResult(r) => Ok(*r),
            _ => Err(unexpected(METHOD)),
        }
    }

    // Roots is deprecated by SEP-2577, and relayed as the others are while
    // clients still offer it: never answered "no roots" for the user.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        const METHOD: &str = "roots/list";
        let call = self.in_flight.only(METHOD)?;
        if call.capabilities.roots.is_none() {
            return Err(not_relayed(METHOD));
        }
        let request = rmcp::model::ServerRequest::ListRootsRequest(Default::default());
        match from_client(METHOD, self.timeout, &call, request, context.ct.cancelled()).await? {
            rmcp::model::ClientResult::ListRootsResult(r) => Ok(r),
            _ => Err(unexpected(METHOD)),
        }
    }

    fn get_info(&self) -> ClientConfig {
        // A legacy handshake names the last revision that has one; on
        // 2026-07-28 each call carries its caller's capabilities instead.
        ClientConfig::new(Default::default(), client_info())
            .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// Who the gateway is to an upstream.
pub(crate) fn client_info() -> rmcp::model::Implementation {
    rmcp::model::Implementation::new("toolgate-gateway", env!("CARGO_PKG_VERSION"))
}

/// A client's answer of another kind than the request's.
fn unexpected(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("{method}: the client answered with another kind of result"),
        None,
    )
}

/// The answer to a server-to-client request the client of the call did not
/// declare the capability for (or roots, which the gateway does not relay):
/// the spec's error for a method the client does not have.
fn not_relayed(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("{method}: the client of this call does not offer it through this gateway"),
        None,
    )
}

/// A connected upstream.
pub struct Connection {
    pub name: String,
    pub service: RunningService<RoleClient, Listener>,
    /// A URL upstream's HTTP face, for calls on the direct path (direct.rs).
    pub url: Option<Url>,
}

impl Connection {
    /// Whether the upstream is gone: its process exited, its connection
    /// closed, or the service ended.
    pub fn is_down(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// A URL upstream as the direct path (direct.rs) reaches it: the SDK
/// transport's own pooled client, the URL, the operator's headers
/// (credentials), and the ids of its requests.
pub struct Url {
    pub(crate) http: rmcp_reqwest::Client,
    pub(crate) uri: Arc<str>,
    pub(crate) headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
    pub(crate) next_id: std::sync::atomic::AtomicI64,
}

impl Url {
    pub(crate) fn new(
        http: rmcp_reqwest::Client,
        uri: &str,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
    ) -> Url {
        Url {
            http,
            uri: uri.into(),
            headers,
            next_id: std::sync::atomic::AtomicI64::new(1),
        }
    }
}

/// How a session with an upstream begins, for the revision configured.
fn lifecycle(protocol: UpstreamProtocol) -> rmcp::ClientLifecycleMode {
    use rmcp::model::ProtocolVersion as V;
    match protocol {
        UpstreamProtocol::V2025_11_25 => rmcp::ClientLifecycleMode::Initialize,
        UpstreamProtocol::V2026_07_28 => rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![V::V_2026_07_28],
        },
        // A server that answers `server/discover` without 2026-07-28 still
        // gets a session (the discover lifecycle at 2025-11-25); one that
        // does not know `server/discover` gets `initialize`.
        UpstreamProtocol::Auto => rmcp::ClientLifecycleMode::Auto {
            preferred_versions: vec![V::V_2026_07_28, V::V_2025_11_25],
            legacy_version: Some(V::V_2025_11_25),
        },
    }
}

/// Whether `c`'s session is on 2026-07-28 (or later): calls then carry
/// their caller's capabilities, and the upstream asks for input with
/// `InputRequiredResult` instead of requests of its own.
pub(crate) fn is_modern(c: &Connection) -> bool {
    c.service
        .peer()
        .peer_info()
        .is_some_and(|i| !i.protocol_version.has_initialize())
}

/// Connect to `u` within the upstream timeout.
pub async fn connect(
    u: &Upstream,
    limits: &GatewayLimits,
    wake: Wake,
) -> Result<Connection, crate::Error> {
    connect_text(u, limits, wake)
        .await
        .map_err(crate::Error::Upstream)
}

async fn connect_text(
    u: &Upstream,
    limits: &GatewayLimits,
    wake: Wake,
) -> Result<Connection, String> {
    let listener = Listener {
        server: u.name.as_str().into(),
        changed: wake.changed,
        progress: Arc::new(Progress::default()),
        events: wake.events,
        in_flight: Arc::new(InFlight::default()),
        timeout: limits.upstream_timeout,
    };
    let started = async {
        match &u.transport {
            Transport::Command(argv) => {
                let (program, args) = argv.split_first().ok_or("an empty command")?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).kill_on_drop(true);
                for (k, v) in &u.env {
                    cmd.env(k, v.expose());
                }
                if let Some(dir) = &u.cwd {
                    cmd.current_dir(dir);
                }
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit());
                let child = cmd
                    .spawn()
                    .map_err(|e| format!("cannot start `{program}`: {e}"))?;
                // Each line bounded by max-result-bytes, at any size.
                let transport = crate::stdio::transport(child, &u.name, limits.max_result_bytes)
                    .map_err(|e| format!("cannot start `{program}`: {e}"))?;
                let progress = listener.progress.clone();
                listener
                    .serve_with_lifecycle(
                        Counted {
                            inner: transport,
                            progress,
                        },
                        lifecycle(u.protocol),
                    )
                    .await
                    .map(|s| (s, None))
                    .map_err(|e| format!("the MCP handshake failed: {e}"))
            }
            Transport::Url(url) => {
                let mut headers = std::collections::HashMap::new();
                for (k, v) in &u.headers {
                    // Checked when the configuration was read.
                    if let (Ok(k), Ok(v)) = (
                        axum::http::HeaderName::from_bytes(k.as_bytes()),
                        axum::http::HeaderValue::from_str(v.expose()),
                    ) {
                        let mut v = v;
                        v.set_sensitive(true);
                        headers.insert(k, v);
                    }
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers.clone());
                // What one upstream may answer: an answer over it is an error
                // naming the bound (max-result-bytes).
                config.max_json_response_size = limits.max_result_bytes;
                config.max_sse_event_size = limits.max_result_bytes;
                let progress = listener.progress.clone();
                let http = http_client(u.keep_alive)?;
                let direct = Url::new(http.clone(), url.as_str(), headers);
                listener
                    .serve_with_lifecycle(
                        Counted {
                            inner: StreamableHttpClientTransport::with_client(http, config),
                            progress,
                        },
                        lifecycle(u.protocol),
                    )
                    .await
                    .map(|s| (s, Some(direct)))
                    .map_err(|e| format!("the MCP handshake failed: {e}"))
            }
        }
    };
    let (service, url) = tokio::time::timeout(limits.upstream_timeout, started)
        .await
        .map_err(|_| {
            format!(
                "upstream `{}`: no handshake within {} ms",
                u.name,
                limits.upstream_timeout.as_millis()
            )
        })?
        .map_err(|e| format!("upstream `{}`: {e}", u.name))?;
    Ok(Connection {
        name: u.name.clone(),
        service,
        url,
    })
}

/// Every tool `c` lists, within the bounds.
pub(crate) async fn list(c: &Connection, limits: &GatewayLimits) -> Result<Vec<Tool>, String> {
    let peer = c.service.peer();
    pages(c, limits, "tools/list", |p| async move {
        peer.list_tools(p).await.map(|r| (r.tools, r.next_cursor))
    })
    .await
}

/// Every page of one list (`what`, for errors) within the bounds of the
/// one walk ([`PageWalk`]): at most `max-pages` pages and `max-tools`
/// items, no cursor twice, each page within the upstream timeout.
async fn pages<T, F, Fut>(
    c: &Connection,
    limits: &GatewayLimits,
    what: &str,
    mut fetch: F,
) -> Result<Vec<T>, String>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), rmcp::ServiceError>>,
{
    let mut items = Vec::new();
    let mut walk = PageWalk::new(limits.max_pages, limits.max_tools);
    let mut cursor: Option<String> = None;
    loop {
        let page = walk.pages() + 1;
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let (got, next) = tokio::time::timeout(limits.upstream_timeout, fetch(params))
            .await
            .map_err(|_| {
                format!(
                    "upstream `{}`: `{what}` page {page} took over {} ms",
                    c.name,
                    limits.upstream_timeout.as_millis()
                )
            })?
            .map_err(|e| format!("upstream `{}`: `{what}` page {page} failed: {e}", c.name))?;
        let count = got.len();
        items.extend(got);
        cursor = match walk.next(count, next) {
            Ok(None) => return Ok(items),
            Ok(Some(next)) => Some(next),
            Err(PageStop::TooManyItems { max }) => {
                return Err(format!(
                    "upstream `{}` lists more than {max} items in `{what}` (max-tools)",
                    c.name
                ))
            }
            Err(PageStop::RepeatedCursor { again, .. }) => {
                return Err(format!("upstream `{}`: `{what}` page {again} repeats an earlier `nextCursor`: its pagination goes round in a loop", c.name));
            }
            Err(PageStop::TooManyPages { max }) => {
                return Err(format!(
                    "upstream `{}`: `{what}` goes on past {max} pages (max-pages)",
                    c.name
                ))
            }
        };
    }
}

/// The resources, templates and prompts `c` lists, for what it declared it
/// serves (nothing is asked of a server that declared neither).
pub(crate) async fn list_offerings(
    c: &Connection,
    limits: &GatewayLimits,
) -> Result<crate::offerings::Listed, String> {
    let peer = c.service.peer();
    let caps = peer
        .peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let mut listed = crate::offerings::Listed {
        serves_resources: caps.resources.is_some(),
        ..Default::default()
    };
    if caps.resources.is_some() {
        listed.resources = pages(c, limits, "resources/list", |p| async move {
            peer.list_resources(p)
                .await
                .map(|r| (r.resources, r.next_cursor))
        })
        .await?;
        listed.templates = pages(c, limits, "resources/templates/list", |p| async move {
            peer.list_resource_templates(p)
                .await
                .map(|r| (r.resource_templates, r.next_cursor))
        })
        .await?;
    }
    if caps.prompts.is_some() {
        listed.prompts = pages(c, limits, "prompts/list", |p| async move {
            peer.list_prompts(p)
                .await
                .map(|r| (r.prompts, r.next_cursor))
        })
        .await?;
    }
    Ok(listed)
}

/// An upstream's answer within the bounds: the server's own JSON-RPC error
/// as it is, a timeout or a transport failure as an error naming the
/// upstream, an answer over `max-result-bytes` as an error naming it.
pub async fn relay<T: Measured>(
    c: &Connection,
    limits: &GatewayLimits,
    answer: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, ErrorData> {
    match tokio::time::timeout(limits.upstream_timeout, answer).await {
        Err(_) => Err(timed_out(c, limits)),
        Ok(Ok(r)) => within(c, limits, r),
        Ok(Err(e)) => Err(upstream_error(c, limits, e)),
    }
}

/// An answer within `max-result-bytes`, marked complete: the transports
/// bound what they read (a stdio line at the bound plus its envelope); the
/// bound itself is checked on every answer.
pub(crate) fn within<T: Measured>(
    c: &Connection,
    limits: &GatewayLimits,
    mut r: T,
) -> Result<T, ErrorData> {
    if r.json_bytes() > limits.max_result_bytes {
        return Err(over_result_bound(&c.name, limits));
    }
    r.mark_complete();
    Ok(r)
}

/// The client's call under the server's own `name`: its arguments and, on
/// 2026-07-28, the answers to an `InputRequiredResult` with the server's
/// `requestState`, as they are. Its `_meta` stays here: the progress token
/// the upstream sees is the SDK's (mapped back above), its trace the
/// gateway's span.
pub(crate) fn forwarded(name: &str, request: CallToolRequestParams) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = request.arguments;
    params.input_responses = request.input_responses;
    params.request_state = request.request_state;
    params
}

/// The error of a call `c` did not answer within the upstream timeout.
pub(crate) fn timed_out(c: &Connection, limits: &GatewayLimits) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "upstream `{}` did not answer within {} ms",
            c.name,
            limits.upstream_timeout.as_millis()
        ),
        None,
    )
}

/// An upstream's failure as the client gets it: the server's own JSON-RPC
/// error as it is, an answer over the SDK's size bounds as the
/// `max-result-bytes` error, anything else an internal error naming it.
fn upstream_error(c: &Connection, limits: &GatewayLimits, e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        // The SDK's bounds name themselves only in their text ("exceeds",
        // "too large", "exceeded the maximum size").
        e if ["exceeds", "too large", "exceeded the maximum size"]
            .iter()
            .any(|w| e.to_string().contains(w)) =>
        {
            over_result_bound(&c.name, limits)
        }
        e => ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("upstream `{}` failed: {e}", c.name),
            None,
        ),
    }
}

/// An upstream answer whose size on the wire is measured against
/// `max-result-bytes`.
pub trait Measured {
    /// Its bytes as JSON (`usize::MAX` when it cannot be written).
    fn json_bytes(&self) -> usize;
    /// Say `resultType: "complete"` where an upstream before 2026-07-28 said
    /// nothing: the gateway answers as a 2026-07-28 server, whose results
    /// carry it (the SDK drops it again for an earlier client).
    fn mark_complete(&mut self) {}
}

fn bytes_of<T: serde::Serialize>(x: &T) -> usize {
    serde_json::to_vec(x).map_or(usize::MAX, |b| b.len())
}

impl Measured for CallToolResponse {
    fn json_bytes(&self) -> usize {
        match self {
            CallToolResponse::Complete(x) => bytes_of(x),
            CallToolResponse::InputRequired(x) => bytes_of(x),
            CallToolResponse::Task(x) => bytes_of(x),
            #[allow(unreachable_patterns)]
            _ => usize::MAX,
        }
    }
    fn mark_complete(&mut self) {
        if let CallToolResponse::Complete(x) = self {
            x.result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
        }
    }
}

impl Measured for rmcp::model::ReadResourceResponse {
    fn json_bytes(&self) -> usize {
        match self {
            rmcp::model::ReadResourceResponse::Complete(x) => bytes_of(x),
            rmcp::model::ReadResourceResponse::InputRequired(x) => bytes_of(x),
            // A kind this SDK knows and toolgate does not: refused as over any bound.
            #[allow(unreachable_patterns)]
            _ => usize::MAX,
        }
    }
    fn mark_complete(&mut self) {
        if let rmcp::model::ReadResourceResponse::Complete(x) = self {
            x.result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
        }
    }
}

impl Measured for rmcp::model::CompleteResult {
    fn json_bytes(&self) -> usize {
        bytes_of(self)
    }
}

impl Measured for () {
    fn json_bytes(&self) -> usize {
        0
    }
}

impl Measured for rmcp::model::GetPromptResponse {
    fn json_bytes(&self) -> usize {
        match self {
            rmcp::model::GetPromptResponse::Complete(x) => bytes_of(x),
            rmcp::model::GetPromptResponse::InputRequired(x) => bytes_of(x),
            #[allow(unreachable_patterns)]
            _ => usize::MAX,
        }
    }
    fn mark_complete(&mut self) {
        if let rmcp::model::GetPromptResponse::Complete(x) = self {
            x.result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
        }
    }
}

/// The error of an upstream answer over `max-result-bytes`.
pub(crate) fn over_result_bound(server: &str, limits: &GatewayLimits) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        crate::stdio::over_bound_message(server, limits.max_result_bytes),
        None,
    )
}

/// The most rounds of one call the gateway drives for a client before
/// 2026-07-28 (the SDK's own bound for a client).
pub(crate) const INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// Forward a call of the server's own tool `name`; the server's JSON-RPC
/// error comes back as it is, a transport failure or a timeout as an
/// internal error naming the upstream.
///
/// An upstream on 2026-07-28 asks for input with an `InputRequiredResult`.
/// A client on 2026-07-28 gets it as it is and retries with the answers
/// and the server's `requestState`, untouched. A client before it cannot
/// read one: the gateway asks that client each input request through
/// `elicitation/create` or `sampling/createMessage` (when it declared the
/// capability; else the spec's `-32601`) and retries the call with its
/// answers, at most [`INPUT_ROUNDS`] rounds.
pub async fn call(
    c: &Connection,
    name: &str,
    request: CallToolRequestParams,
    client: CallOf,
    progress: Option<ProgressTo>,
    cancelled: impl std::future::Future<Output = ()>,
    limits: &GatewayLimits,
) -> Result<CallToolResponse, ErrorData> {
    let mut params = forwarded(name, request);
    let mut cancelled = std::pin::pin!(cancelled);
    for _ in 0..INPUT_ROUNDS {
        let r = call_once(
            c,
            params.clone(),
            client.clone(),
            progress.clone(),
            &mut cancelled,
            limits,
        )
        .await?;
        match r {
            CallToolResponse::InputRequired(asked) if !client.modern => {
                params.input_responses =
                    Some(ask_client(&client, asked.input_requests, limits).await?);
                params.request_state = asked.request_state;
            }
            r => return Ok(r),
        }
    }
    Err(too_many_rounds(c))
}

/// A call whose upstream asked for input more than [`INPUT_ROUNDS`] times.
pub(crate) fn too_many_rounds(c: &Connection) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "upstream `{}` asked for input more than {INPUT_ROUNDS} times in one call: the call was ended",
            c.name
        ),
        None,
    )
}

/// The client's answers to an upstream's input requests, each asked on the
/// call's own stream as the request of its kind.
async fn ask_client(
    client: &CallOf,
    requests: Option<rmcp::model::InputRequests>,
    limits: &GatewayLimits,
) -> Result<rmcp::model::InputResponses, ErrorData> {
    use rmcp::model::ClientResult;
    let mut answers = rmcp::model::InputResponses::new();
    for (key, request) in requests.unwrap_or_default() {
        let (method, declared, request) = input_of(&client.capabilities, request)?;
        if !declared {
            return Err(not_relayed(method));
        }
        // Asked within the call: the call's own cancellation ends it.
        let answer = match from_client(
            method,
            limits.upstream_timeout,
            client,
            request,
            std::future::pending(),
        )
        .await?
        {
            ClientResult::ElicitResult(r) => serde_json::to_value(r),
            ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
            ClientResult::ListRootsResult(r) => serde_json::to_value(r),
            _ => return Err(unexpected(method)),
        };
        answers.insert(key, answer.map_err(|_| unexpected(method))?);
    }
    Ok(answers)
}

/// An input request as the request to the client of its kind: its method,
/// whether `caps` declared it, and the request.
fn input_of(
    caps: &rmcp::model::ClientCapabilities,
    request: rmcp::model::InputRequest,
) -> Result<(&'static str, bool, rmcp::model::ServerRequest), ErrorData> {
    use rmcp::model::{InputRequest, ServerRequest};
    Ok(match request {
        InputRequest::Elicitation(r) => (
            "elicitation/create",
            caps.elicitation.is_some(),
            ServerRequest::ElicitRequest(r),
        ),
        InputRequest::CreateMessage(r) => (
            "sampling/createMessage",
            caps.sampling.is_some(),
            ServerRequest::CreateMessageRequest(r),
        ),
        InputRequest::ListRoots(r) => (
            "roots/list",
            caps.roots.is_some(),
            ServerRequest::ListRootsRequest(r),
        ),
        // A kind of input this SDK added after this gateway was written.
        _ => return Err(not_relayed("input request")),
    })
}

/// What [`ask_client`] answers for a client that declared none of the
/// capabilities: the refusal of the first request, or no answers to none.
pub(crate) fn unanswerable(
    requests: Option<rmcp::model::InputRequests>,
) -> Result<rmcp::model::InputResponses, ErrorData> {
    let none = rmcp::model::ClientCapabilities::default();
    match requests.unwrap_or_default().into_iter().next() {
        Some((_, request)) => Err(not_relayed(input_of(&none, request)?.0)),
        None => Ok(rmcp::model::InputResponses::new()),
    }
}

/// The error a request cancelled by its client ends with (never sent: the
/// answer to a cancelled request is dropped).
pub(crate) fn cancelled_error() -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "the request was cancelled", None)
}

/// One round of a call: the request, its progress and cancellation, the answer.
async fn call_once(
    c: &Connection,
    params: CallToolRequestParams,
    client: CallOf,
    progress: Option<ProgressTo>,
    cancelled: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    limits: &GatewayLimits,
) -> Result<CallToolResponse, ErrorData> {
    use rmcp::model::ClientRequest;
    let peer = c.service.peer();
    let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let failed = |e| upstream_error(c, limits, e);
    let listener = c.service.service();
    // On 2026-07-28 a call says what its caller can answer (the upstream
    // asks only for that); the gateway's own session declares nothing.
    // The trace continues into the upstream (MCP's `_meta.traceparent`).
    let modern = is_modern(c);
    let options = if modern || !client.trace.is_empty() {
        let mut meta = rmcp::model::RequestMetaObject::new();
        if modern {
            meta.set_client_capabilities(client.relayed_capabilities());
        }
        put_trace(&mut meta, &client.trace);
        rmcp::service::PeerRequestOptions::no_options().with_meta(meta)
    } else {
        rmcp::service::PeerRequestOptions::no_options()
    };
    let _in_flight = listener.in_flight.enter(client);
    let registering = match progress {
        Some(_) => Some(listener.progress.registering.write().await),
        None => None,
    };
    let handle = peer
        .send_cancellable_request(request, options)
        .await
        .map_err(failed)?;
    // The SDK gives every upstream request a progress token of its own:
    // the upstream's progress under it goes back under the client's.
    let route = progress.map(|to| {
        if let Ok(mut m) = listener.progress.routes.lock() {
            m.insert(handle.progress_token.clone(), to);
        }
        ProgressRoute {
            progress: &listener.progress,
            token: handle.progress_token.clone(),
        }
    });
    drop(registering);
    let id = handle.id.clone();
    let answer = tokio::select! {
        a = tokio::time::timeout(limits.upstream_timeout, handle.await_response()) => a,
        _ = cancelled.as_mut() => {
            // The client cancelled (or went away): so is the upstream's work.
            let _ = peer
                .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the client cancelled the request".into()),
                ))
                .await;
            return Err(cancelled_error());
        }
    };
    let r = match answer {
        Err(_) => {
            let _ = peer
                .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the gateway's upstream timeout passed".into()),
                ))
                .await;
            return Err(timed_out(c, limits));
        }
        Ok(r) => r.map_err(failed)?,
    };
    if let Some(route) = &route {
        listener
            .progress
            .settle(&route.token, PROGRESS_SETTLE)
            .await;
    }
    within(c, limits, call_response(c, r)?)
}

/// A call's answer as the server gave it.
pub(crate) fn call_response(
    c: &Connection,
    r: rmcp::model::ServerResult,
) -> Result<CallToolResponse, ErrorData> {
    use rmcp::model::ServerResult;
    Ok(match r {
        ServerResult::CallToolResult(r) => CallToolResponse::Complete(r),
        ServerResult::InputRequiredResult(r) => CallToolResponse::InputRequired(r),
        ServerResult::CreateTaskResult(r) => CallToolResponse::Task(r),
        ServerResult::EmptyResult(_) => {
            CallToolResponse::Complete(rmcp::model::CallToolResult::success(Vec::new()))
        }
        _ => {
            return Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "upstream `{}` failed: {}",
                    c.name,
                    rmcp::ServiceError::UnexpectedResponse
                ),
                None,
            ))
        }
    })
}
