//! `toolgate serve`: the decision service. An HTTP front over the runtime
//! (the OpenID AuthZEN Authorization API 1.0, docs/authzen.md) on the
//! service core ([`toolgate_service`]: the table and its reloads, decision
//! logs, metrics, the listener). This crate holds what is AuthZEN's: the
//! API, its one answer writer ([`server`]), what callers may assert
//! ([`Trust`]) and the console. Nothing here decides: every answer is the
//! runtime's, from the table the request took from the core's
//! [`toolgate_runtime::TableHandle`] (and whose digest it reports).
//!
//! ```no_run
//! use toolgate_serve::{Options, Source};
//! let opts = Options::new(Source::Table("policy.tgt".into()));
//! toolgate_serve::run(opts).expect("served until a shutdown signal");
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use toolgate_runtime::{Table, TrustedKeys};
use toolgate_service::{Core, CoreBuilder};

pub mod api;
pub mod console;
pub mod server;
mod writer;

/// Why the decision service could not be set up or served. Each says what
/// to fix; the HTTP answers of requests are [`api::ApiError`]s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The core failed: the table, the decision log, the watch, TLS, a
    /// Host or Origin rule.
    #[error(transparent)]
    Core(#[from] toolgate_service::Error),
    /// The credentials file (`--auth`).
    #[error(transparent)]
    Credentials(#[from] toolgate_auth::CredentialsError),
    /// `--default-configuration` names no configuration of the table.
    #[error("{0}")]
    Configuration(String),
    /// The options would serve without the protection they need (the
    /// console or tokens off loopback without authentication or TLS).
    #[error("{0}")]
    Refused(String),
    /// The address could not be bound or served.
    #[error("{0}")]
    Io(String),
}

impl Error {
    /// A stable code for the kind, for the command line's exit and logs.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Core(e) => e.code(),
            Error::Credentials(e) => e.code(),
            Error::Configuration(_) => "configuration",
            Error::Refused(_) => "refused",
            Error::Io(_) => "io",
        }
    }
}

// The core's modules, under the names this crate has always had.
/// Write a line for the operator on standard error: `toolgate serve: TEXT`.
pub fn say(text: &str) {
    toolgate_service::say("serve", text);
}

pub use toolgate_service::Error as CoreError;
pub use toolgate_service::{
    decision_log, listener, metrics, poll, record_stamps, source, telemetry, transport,
};
pub use toolgate_service::{
    default_max_connections, open_files_limit, shutdown_signal, LogTarget, ReloadStatus,
    RequestLimits, Source, TlsFiles, Watch, DESCRIPTOR_HEADROOM, RETRY_FIRST, RETRY_MOST,
};

/// What a policy enforcement point may assert in a request. The service
/// does not authenticate its callers (docs/authzen.md, "What is trusted"):
/// whatever a caller claims is a claim, so the claims that widen access are
/// off unless the operator turns them on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// The roles a subject may claim (`properties.role`, or its type's
    /// default). By default `user` and `none`: claiming `admin` is a 403.
    pub roles: Vec<toolgate_runtime::Role>,
    /// Whether `context.enforcement` may set the trust-zone mode (turning
    /// an enforced refusal into an observed allow). By default not: a
    /// request that sets it is a 403.
    pub enforcement_override: bool,
    /// The consumer an authenticated caller is (its token's consumer
    /// claim): a request may name no other (403), and one that names none
    /// is that consumer's.
    pub consumer: Option<String>,
    /// The role an authenticated caller's token names, likewise.
    pub role: Option<toolgate_runtime::Role>,
    /// The configuration an authenticated caller is bound to (a key's
    /// `configuration`, a token's `configuration-claim`): a request may
    /// name no other (403), and one that names none is decided under it.
    pub configuration: Option<String>,
}

impl Default for Trust {
    fn default() -> Trust {
        Trust {
            roles: vec![toolgate_runtime::Role::User, toolgate_runtime::Role::None],
            enforcement_override: false,
            consumer: None,
            role: None,
            configuration: None,
        }
    }
}

impl Trust {
    /// Every claim allowed: for a caller the operator vouches for.
    pub fn everything() -> Trust {
        Trust {
            roles: toolgate_runtime::Role::ALL.to_vec(),
            enforcement_override: true,
            consumer: None,
            role: None,
            configuration: None,
        }
    }

    /// What an authenticated caller may assert.
    pub fn of(caller: &toolgate_auth::Caller) -> Trust {
        Trust {
            roles: caller.roles.clone(),
            enforcement_override: caller.set_enforcement,
            consumer: caller.consumer.clone(),
            role: caller.role,
            configuration: caller.configuration.clone(),
        }
    }
}

/// Everything `toolgate serve` is told.
#[derive(Debug, Clone)]
pub struct Options {
    pub source: Source,
    pub addr: SocketAddr,
    /// The base URL the discovery document names (default `http://ADDR`).
    pub public_url: Option<String>,
    pub limits: RequestLimits,
    pub decision_log: Option<LogTarget>,
    /// Decision log records queued at most; beyond, records are dropped and counted.
    pub log_buffer: usize,
    /// Watch the source and reload on change (poll it, for a registry).
    pub watch: bool,
    /// When set, every table served (the first and every reload) must be
    /// signed by one of these keys.
    pub trusted_keys: Option<TrustedKeys>,
    /// How often a registry source is polled.
    pub poll_interval: Duration,
    /// The configuration of a request whose context names none (AuthZEN's
    /// `context` is optional); without it such a request is a 400.
    pub default_configuration: Option<String>,
    /// What callers may assert ([`Trust`]).
    pub trust: Trust,
    /// Serve on an address other than loopback although nothing
    /// authenticates the callers (`--allow-unauthenticated`).
    pub allow_unauthenticated: bool,
    /// The credentials file (`--auth`): every decision request must then
    /// present a bearer token it accepts.
    pub auth: Option<std::path::PathBuf>,
    /// Serve HTTPS with this certificate chain and key (PEM files).
    pub tls: Option<TlsFiles>,
    /// `--console`: serve the console (docs/report.md).
    pub console: bool,
    /// `--allowed-host`: the `Host` values served (default: the loopback
    /// names, the bound address and the public URL's host).
    pub allowed_hosts: Option<Vec<String>>,
    /// `--allowed-origin`: browser origins served besides the service's own.
    pub allowed_origins: Vec<String>,
    /// `--answer-context`: every item of a batch answer carries its
    /// `context` unless the request says `options.toolgate_context: false`
    /// (by default an item is `{"decision": ...}` unless the request asks).
    pub answer_context: bool,
    /// `--approver-key`: the keys a grant in `context.grant` must be signed
    /// by (docs/approvals.md); without them no grant lets a call run.
    pub approver_keys: Option<TrustedKeys>,
    /// OpenTelemetry export (docs/observability.md); `None`: as the
    /// standard `OTEL_*` variables say.
    pub telemetry: Option<toolgate_service::telemetry::TelemetryConfig>,
}

impl Options {
    pub fn new(source: Source) -> Options {
        Options {
            source,
            addr: SocketAddr::from(([127, 0, 0, 1], 8181)),
            public_url: None,
            limits: RequestLimits::default(),
            decision_log: None,
            log_buffer: 65_536,
            watch: true,
            trusted_keys: None,
            poll_interval: Duration::from_secs(30),
            default_configuration: None,
            trust: Trust::default(),
            telemetry: None,
            allow_unauthenticated: false,
            auth: None,
            tls: None,
            console: false,
            allowed_hosts: None,
            allowed_origins: Vec::new(),
            answer_context: false,
            approver_keys: None,
        }
    }
}

/// What every request of the decision service shares: the core, and what
/// is the AuthZEN front's own.
pub struct ServiceState {
    pub core: Arc<Core>,
    /// `--default-configuration`.
    pub default_configuration: Option<String>,
    /// What callers may assert, when nothing authenticates them.
    pub trust: Arc<Trust>,
    /// Who may ask, when the service authenticates its callers.
    pub auth: Option<Arc<toolgate_auth::Authenticator>>,
    /// `--answer-context`: batch items carry their context unless the
    /// request says otherwise.
    pub answer_context: bool,
    /// `--approver-key`: what grants must be signed by.
    pub approver_keys: Option<TrustedKeys>,
}

/// The front reads the core's table, log, metrics and limits as its own.
impl std::ops::Deref for ServiceState {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

/// The decision service being set up: it owns every setting until
/// [`Service::build`], so none can be dropped on the way.
pub struct Service {
    core: CoreBuilder,
    default_configuration: Option<String>,
    trust: Trust,
    auth: Option<toolgate_auth::Authenticator>,
    answer_context: bool,
    approver_keys: Option<TrustedKeys>,
    console: Option<String>,
}

/// The decision service, built: its shared state, ready to be served on a
/// listener.
#[derive(Clone)]
pub struct BuiltService {
    pub shared: Arc<ServiceState>,
    /// `--console`: the console's routes, under this title.
    pub console: Option<String>,
}

impl Service {
    /// A service over `table`; `source` is where reloads read from.
    pub fn new(
        table: Table,
        source: Option<Source>,
        limits: RequestLimits,
        public_url: String,
        decision_log: Option<(&LogTarget, usize)>,
    ) -> Service {
        Service::with_trusted_keys(table, source, limits, public_url, decision_log, None)
    }

    /// [`Service::new`], and every reload must be signed by one of
    /// `trusted_keys` when given (the caller verified `table`).
    pub fn with_trusted_keys(
        table: Table,
        source: Option<Source>,
        limits: RequestLimits,
        public_url: String,
        decision_log: Option<(&LogTarget, usize)>,
        trusted_keys: Option<TrustedKeys>,
    ) -> Service {
        Service {
            core: CoreBuilder::new("serve", table, limits, public_url)
                .source(source)
                .decision_log(decision_log.map(|(t, n)| (t.clone(), n)))
                .trusted_keys(trusted_keys),
            default_configuration: None,
            trust: Trust::default(),
            auth: None,
            answer_context: false,
            approver_keys: None,
            console: None,
        }
    }

    /// Export traces, metrics and decision log records over OTLP.
    pub fn with_telemetry(mut self, t: toolgate_service::telemetry::Telemetry) -> Service {
        self.core = self.core.telemetry(t);
        self
    }

    /// Take a grant (`context.grant`) signed by one of `keys` for a call
    /// that needs approval (`--approver-key`).
    pub fn with_approver_keys(mut self, keys: Option<TrustedKeys>) -> Service {
        self.approver_keys = keys;
        self
    }

    /// The `Host` and `Origin` values requests must carry.
    pub fn with_transport(mut self, check: transport::HostCheck) -> Service {
        self.core = self.core.transport(check);
        self
    }

    /// What callers may assert.
    pub fn with_trust(mut self, trust: Trust) -> Service {
        self.trust = trust;
        self
    }

    /// Give every item of a batch answer its `context` unless the request
    /// says `options.toolgate_context: false` (`--answer-context`).
    pub fn with_answer_context(mut self, on: bool) -> Service {
        self.answer_context = on;
        self
    }

    /// Serve HTTPS with `config`.
    pub fn with_tls(mut self, config: Arc<rustls::ServerConfig>) -> Service {
        self.core = self.core.tls(Some(config));
        self
    }

    /// Authenticate every decision request with `auth` (401 without a
    /// token it accepts); what a caller may assert is then its own.
    pub fn with_auth(mut self, auth: toolgate_auth::Authenticator) -> Service {
        self.auth = Some(auth);
        self
    }

    /// The configuration of requests whose context names none; checked
    /// against the table when the service is built.
    pub fn with_default_configuration(mut self, name: Option<String>) -> Service {
        self.default_configuration = name;
        self
    }

    /// Serve the console (`--console`) too, its page titled `title`.
    pub fn with_console(mut self, title: String) -> Service {
        self.console = Some(title);
        self
    }

    /// The service, its decision log opened and its default configuration
    /// checked (it must be one of the table's).
    pub fn build(self) -> Result<BuiltService, Error> {
        let core = self.core.build()?;
        if let Some(n) = &self.default_configuration {
            core.handle
                .current()
                .context(n)
                .map_err(|e| Error::Configuration(format!("--default-configuration: {e}")))?;
        }
        Ok(BuiltService {
            shared: Arc::new(ServiceState {
                core,
                default_configuration: self.default_configuration,
                trust: Arc::new(self.trust),
                auth: self.auth.map(Arc::new),
                answer_context: self.answer_context,
                approver_keys: self.approver_keys,
            }),
            console: self.console,
        })
    }

    /// The service `opts` describe, its table loaded (an error when it does not load).
    pub fn from_options(opts: &Options, public_url: String) -> Result<BuiltService, Error> {
        Service::from_options_with(
            opts,
            public_url,
            toolgate_service::telemetry::Telemetry::off(),
        )
    }

    /// [`Service::from_options`], exporting with `telemetry` (started by
    /// the caller, inside its runtime).
    pub fn from_options_with(
        opts: &Options,
        public_url: String,
        telemetry: toolgate_service::telemetry::Telemetry,
    ) -> Result<BuiltService, Error> {
        let table = opts.source.load_with(opts.trusted_keys.as_ref())?;
        let mut s = Service::with_trusted_keys(
            table,
            Some(opts.source.clone()),
            opts.limits,
            public_url,
            opts.decision_log.as_ref().map(|t| (t, opts.log_buffer)),
            opts.trusted_keys.clone(),
        )
        .with_default_configuration(opts.default_configuration.clone())
        .with_trust(opts.trust.clone())
        .with_answer_context(opts.answer_context)
        .with_approver_keys(opts.approver_keys.clone())
        .with_telemetry(telemetry);
        if let Some(path) = &opts.auth {
            s = s.with_auth(toolgate_auth::Authenticator::from_file(path)?);
        }
        if let Some(files) = &opts.tls {
            s = s.with_tls(files.server_config()?);
        }
        let hosts = opts.allowed_hosts.clone().unwrap_or_else(|| {
            transport::HostCheck::defaults(Some(opts.addr.ip()), Some(&public_url_of(opts)))
        });
        // The console's own page posts to its own origin: accepted; any
        // other origin only when listed.
        s = s.with_transport(transport::HostCheck::new(
            &hosts,
            &opts.allowed_origins,
            true,
        )?);
        if opts.console {
            s = s.with_console(opts.source.title());
        }
        s.build()
    }
}

impl BuiltService {
    pub fn router(&self) -> axum::Router {
        server::router_with(self.shared.clone(), self.console.clone())
    }

    /// Serve on `listener` until `shutdown` completes, then finish the
    /// requests in flight and flush the decision log.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let core = self.shared.core.clone();
        let r =
            toolgate_service::listener::accept_loop(listener, self.router(), core, shutdown).await;
        self.shared.core.close_log();
        // What is queued goes out (within 5 s a signal) before the end.
        let telemetry = self.shared.core.telemetry.clone();
        let _ = tokio::task::spawn_blocking(move || {
            telemetry.shutdown(std::time::Duration::from_secs(5))
        })
        .await;
        r
    }

    /// Watch the source; on a change, reload (debounced). A registry is
    /// polled every `poll_interval` instead. The watch stops when the
    /// returned value is dropped.
    pub fn watch(&self, poll_interval: Duration) -> Result<Watch, Error> {
        Ok(self.shared.core.watch(poll_interval)?)
    }
}

/// The public URL `opts` name, or the one of their address.
fn public_url_of(opts: &Options) -> String {
    opts.public_url.clone().unwrap_or_else(|| {
        let scheme = if opts.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", opts.addr)
    })
}

/// `toolgate serve`: load, bind, watch, serve until SIGINT or SIGTERM.
pub fn run(opts: Options) -> Result<(), Error> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io(e.to_string()))?;
    // Nothing authenticates a caller: only the machine itself may ask,
    // unless the operator says the network in front is private.
    if opts.console && !opts.addr.ip().is_loopback() && opts.auth.is_none() {
        return Err(Error::Refused(format!(
            "refusing to serve the console on {}: not a loopback address, and nothing authenticates its callers (the console shows the whole table). Give --auth FILE, or bind 127.0.0.1 (docs/report.md)",
            opts.addr
        )));
    }
    // Bearer tokens in clear over a network (RFC 6750 §5.3): refused like
    // the unauthenticated case, with the same explicit override.
    if !opts.addr.ip().is_loopback() && opts.auth.is_some() && opts.tls.is_none() {
        if !opts.allow_unauthenticated {
            return Err(Error::Refused(format!(
                "refusing to serve --auth on {} without --tls-cert: bearer tokens would cross the network in clear (RFC 6750 §5.3). Give --tls-cert and --tls-key, bind 127.0.0.1 behind a TLS-terminating proxy, or pass --allow-unauthenticated if the network in front of it is private (docs/authzen.md, \"What is trusted\")",
                opts.addr
            )));
        }
        say(&format!(
            "warning: serving --auth on {} without TLS (--allow-unauthenticated): bearer tokens cross the network in clear",
            opts.addr
        ));
    }
    if !opts.addr.ip().is_loopback() && opts.auth.is_none() {
        if !opts.allow_unauthenticated {
            return Err(Error::Refused(format!(
                "refusing to serve on {}: not a loopback address, and nothing authenticates its callers (anyone who reaches the port could ask as any subject). Give --auth FILE (API keys or JWTs), bind 127.0.0.1 behind an authenticating proxy, or pass --allow-unauthenticated if the network in front of it is private (docs/authzen.md, \"What is trusted\")",
                opts.addr
            )));
        }
        say(&format!(
            "warning: serving on {} without authentication (--allow-unauthenticated): every caller that reaches the port is trusted as a policy enforcement point",
            opts.addr
        ));
    }
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| Error::Io(format!("{}: {e}", opts.addr)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Io(e.to_string()))?;
        let public_url = opts.public_url.clone().unwrap_or_else(|| {
            let scheme = if opts.tls.is_some() { "https" } else { "http" };
            format!("{scheme}://{addr}")
        });
        let otel = match &opts.telemetry {
            Some(c) => c.clone(),
            None => toolgate_service::telemetry::TelemetryConfig::from_env("toolgate-serve")?,
        };
        // Made on a blocking thread (the OTLP HTTP client blocks), inside
        // the runtime (gRPC needs it).
        let telemetry = tokio::task::spawn_blocking(move || {
            toolgate_service::telemetry::Telemetry::start(&otel)
        })
        .await
        .map_err(|e| Error::Io(e.to_string()))??;
        let service = Service::from_options_with(&opts, public_url, telemetry)?;
        let _watch = if opts.watch {
            Some(service.watch(opts.poll_interval)?)
        } else {
            None
        };
        // Installed before anyone is told the address.
        let stop = shutdown_signal();
        let scheme = if opts.tls.is_some() { "https" } else { "http" };
        say(&format!(
            "listening on {scheme}://{addr}, serving table {}",
            service.shared.handle.current().digest_hex()
        ));
        service
            .serve(listener, stop)
            .await
            .map_err(|e| Error::Io(e.to_string()))?;
        say("stopped");
        Ok(())
    })
}
