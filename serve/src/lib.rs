//! `toolgate serve`: the decision service. An HTTP front over the runtime
//! (the OpenID AuthZEN Authorization API 1.0, docs/authzen.md) with hot
//! reload, decision logs (docs/decision-log.md) and Prometheus metrics.
//! Nothing here decides: every answer is the runtime's, from the table the
//! request took from the [`TableHandle`] (and whose digest it reports).
//!
//! ```no_run
//! use toolgate_serve::{Options, Source};
//! let opts = Options::new(Source::Table("policy.tgt".into()));
//! toolgate_serve::run(opts).expect("served until a shutdown signal");
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use toolgate_runtime::{Table, TableHandle, TrustedKeys};

pub mod api;
pub mod console;
pub mod declog;
pub mod metrics;
pub mod poll;
pub mod server;
pub mod source;
pub mod stamps;
pub mod transport;

pub use declog::LogTarget;
pub use source::Source;

/// Limits on what one request may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body, in bytes (413 beyond it).
    pub max_body_bytes: usize,
    /// Most evaluations in one `evaluations` request (400 beyond it).
    pub max_evaluations: usize,
    /// Requests handled at once; more wait for a slot. `/health`, `/ready`
    /// and `/metrics` take no slot: they answer while every slot is busy.
    pub max_concurrency: usize,
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (and, on a kept-alive
    /// connection, to start its next request); then the connection is closed.
    pub header_timeout: Duration,
    /// Time a decision request has from its headers to its answer, the
    /// body's reading included (408 beyond it).
    pub request_timeout: Duration,
    /// Largest answer, in bytes: an answer is written under this cap and
    /// one that would pass it is refused (`answerTooLarge`), never built.
    pub max_answer_bytes: usize,
}

/// Descriptors kept back from the connection limit for everything else a
/// server opens: the table and its reloads, the decision log, the watcher,
/// upstream connections and processes, TLS files.
pub const DESCRIPTOR_HEADROOM: u64 = 128;

/// The connection limit's default: 4,096, or fewer when the process may
/// open fewer files (`RLIMIT_NOFILE`'s soft limit less
/// [`DESCRIPTOR_HEADROOM`], at least 16), so idle connections can never
/// take the descriptors a reload needs.
pub fn default_max_connections() -> usize {
    let soft = open_files_limit().unwrap_or(1024);
    soft.saturating_sub(DESCRIPTOR_HEADROOM).clamp(16, 4096) as usize
}

/// The soft limit of open files of this process, when it has one.
pub fn open_files_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 1 << 20,
            max_evaluations: 1000,
            max_concurrency: 1024,
            max_connections: default_max_connections(),
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_answer_bytes: 16 << 20,
        }
    }
}

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
}

impl Default for Trust {
    fn default() -> Trust {
        Trust {
            roles: vec![toolgate_runtime::Role::User, toolgate_runtime::Role::None],
            enforcement_override: false,
            consumer: None,
            role: None,
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
        }
    }

    /// What an authenticated caller may assert.
    pub fn of(caller: &toolgate_auth::Caller) -> Trust {
        Trust {
            roles: caller.roles.clone(),
            enforcement_override: caller.set_enforcement,
            consumer: caller.consumer.clone(),
            role: caller.role,
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
    pub limits: Limits,
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
}

/// `--tls-cert`, `--tls-key` and, for client certificates, `--tls-client-ca`.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
    /// When given, a client must present a certificate this CA issued.
    pub client_ca: Option<std::path::PathBuf>,
}

impl TlsFiles {
    /// The rustls server configuration of these files.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, String> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let shown =
            |p: &std::path::Path, e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| shown(&self.cert, &e))?
            .collect::<Result<_, _>>()
            .map_err(|e| shown(&self.cert, &e))?;
        if certs.is_empty() {
            return Err(shown(&self.cert, &"no certificate in it"));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| shown(&self.key, &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                for c in CertificateDer::pem_file_iter(ca).map_err(|e| shown(ca, &e))? {
                    roots
                        .add(c.map_err(|e| shown(ca, &e))?)
                        .map_err(|e| shown(ca, &e))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| shown(ca, &e))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder
            .with_single_cert(certs, key)
            .map_err(|e| shown(&self.cert, &e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

impl Options {
    pub fn new(source: Source) -> Options {
        Options {
            source,
            addr: SocketAddr::from(([127, 0, 0, 1], 8181)),
            public_url: None,
            limits: Limits::default(),
            decision_log: None,
            log_buffer: 65_536,
            watch: true,
            trusted_keys: None,
            poll_interval: Duration::from_secs(30),
            default_configuration: None,
            trust: Trust::default(),
            allow_unauthenticated: false,
            auth: None,
            tls: None,
            console: false,
            allowed_hosts: None,
            allowed_origins: Vec::new(),
            answer_context: false,
        }
    }
}

/// The state of reloads, for readiness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadStatus {
    /// When the table being served was put in place.
    pub loaded_at: SystemTime,
    pub last_attempt: Option<SystemTime>,
    /// The error of the last reload, while it is the last one.
    pub error: Option<String>,
    pub failures: u64,
}

/// What every request shares.
pub struct Shared {
    pub handle: TableHandle,
    pub source: Option<Source>,
    pub limits: Limits,
    pub metrics: metrics::Metrics,
    pub log: Option<declog::DecisionLogSink>,
    pub ids: stamps::IdGen,
    pub public_url: String,
    /// Reloads accept only tables signed by these keys, when set.
    pub trusted_keys: Option<TrustedKeys>,
    /// `--default-configuration`.
    pub default_configuration: Option<String>,
    /// What callers may assert, when nothing authenticates them.
    pub trust: Arc<Trust>,
    /// Who may ask, when the service authenticates its callers.
    pub auth: Option<Arc<toolgate_auth::Authenticator>>,
    /// HTTPS, when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The `Host` and `Origin` every request must have ([`transport`]).
    pub transport: Arc<transport::HostCheck>,
    /// `--answer-context`: batch items carry their context unless the
    /// request says otherwise.
    pub answer_context: bool,
    status: Mutex<ReloadStatus>,
}

/// Write a line for the operator on standard error (control characters escaped).
pub fn note(text: &str) {
    use std::io::Write;
    let text = toolgate_runtime::names::escape_terminal(text);
    let _ = writeln!(std::io::stderr().lock(), "toolgate serve: {text}");
}

fn unix_s(t: SystemTime) -> f64 {
    stamps::unix_ms(t) as f64 / 1000.0
}

impl Shared {
    pub fn reload_status(&self) -> ReloadStatus {
        match self.status.lock() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, ReloadStatus> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Put `table` in place unless it is the one being served. Returns
    /// whether it was swapped.
    pub fn install(&self, table: Table) -> bool {
        let mut status = self.status();
        let now = SystemTime::now();
        status.last_attempt = Some(now);
        status.error = None;
        self.metrics.last_reload_failed.set(0);
        let old = self.handle.current();
        if old.digest() == table.digest() {
            self.metrics.reload("unchanged");
            return false;
        }
        let digest = table.digest_hex();
        self.handle.swap(table);
        status.loaded_at = now;
        self.metrics
            .set_table(Some(&old.digest_hex()), &digest, unix_s(now));
        self.metrics.reload("swapped");
        true
    }

    /// A reload found the table in place unchanged: any past failure is over.
    pub fn settled(&self) {
        let mut status = self.status();
        status.last_attempt = Some(SystemTime::now());
        status.error = None;
        self.metrics.last_reload_failed.set(0);
    }

    /// Record a reload that failed: the current table stays.
    pub fn failed(&self, error: String) {
        let mut status = self.status();
        status.last_attempt = Some(SystemTime::now());
        status.failures += 1;
        note(&format!(
            "reload failed, still serving table {}: {error}",
            self.handle.current().digest_hex()
        ));
        status.error = Some(error);
        self.metrics.reload_failures.inc();
        self.metrics.reload("failed");
        self.metrics.last_reload_failed.set(1);
    }

    /// Load the source again and swap it in if it changed. A table that
    /// fails to load never replaces the current one.
    pub fn reload(&self) -> Result<bool, String> {
        let Some(source) = &self.source else {
            return Err("no source to reload from".into());
        };
        match source.load_with(self.trusted_keys.as_ref()) {
            Ok(table) => {
                let swapped = self.install(table);
                if swapped {
                    note(&format!(
                        "reloaded: now serving table {}",
                        self.handle.current().digest_hex()
                    ));
                }
                Ok(swapped)
            }
            Err(e) => {
                self.failed(e.clone());
                Err(e)
            }
        }
    }

    /// Load a table from bytes and swap it in (the same rules as
    /// [`Shared::reload`]: verified when trusted keys are set).
    pub fn install_bytes(&self, bytes: &[u8]) -> Result<bool, String> {
        match source::load_bytes(bytes, self.trusted_keys.as_ref()) {
            Ok(t) => Ok(self.install(t)),
            Err(e) => {
                self.failed(e.clone());
                Err(e)
            }
        }
    }
}

/// The service: its shared state, ready to be served on a listener.
#[derive(Clone)]
pub struct Service {
    pub shared: Arc<Shared>,
    /// `--console`: the console's routes, under this title.
    pub console: Option<String>,
}

impl Service {
    /// A service over `table`; `source` is where reloads read from.
    pub fn new(
        table: Table,
        source: Option<Source>,
        limits: Limits,
        public_url: String,
        decision_log: Option<(&LogTarget, usize)>,
    ) -> Result<Service, String> {
        Service::with_trusted_keys(table, source, limits, public_url, decision_log, None)
    }

    /// [`Service::new`], and every reload must be signed by one of
    /// `trusted_keys` when given (the caller verified `table`).
    pub fn with_trusted_keys(
        table: Table,
        source: Option<Source>,
        limits: Limits,
        public_url: String,
        decision_log: Option<(&LogTarget, usize)>,
        trusted_keys: Option<TrustedKeys>,
    ) -> Result<Service, String> {
        let metrics = metrics::Metrics::default();
        let now = SystemTime::now();
        metrics.set_table(None, &table.digest_hex(), unix_s(now));
        let log = match decision_log {
            None => None,
            Some((target, capacity)) => Some(declog::DecisionLogSink::open(
                target,
                capacity,
                metrics.log_written.clone(),
                metrics.log_dropped.clone(),
            )?),
        };
        let transport = transport::HostCheck::new(
            &transport::HostCheck::defaults(None, Some(&public_url)),
            &[],
            true,
        )?;
        Ok(Service {
            console: None,
            shared: Arc::new(Shared {
                transport: Arc::new(transport),
                handle: TableHandle::new(table),
                source,
                limits,
                metrics,
                log,
                ids: stamps::IdGen::default(),
                public_url,
                trusted_keys,
                default_configuration: None,
                trust: Arc::new(Trust::default()),
                auth: None,
                tls: None,
                answer_context: false,
                status: Mutex::new(ReloadStatus {
                    loaded_at: now,
                    last_attempt: None,
                    error: None,
                    failures: 0,
                }),
            }),
        })
    }

    /// The `Host` and `Origin` values requests must carry.
    pub fn with_transport(mut self, check: transport::HostCheck) -> Service {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.transport = Arc::new(check);
        }
        self
    }

    /// What callers may assert.
    pub fn with_trust(mut self, trust: Trust) -> Service {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.trust = Arc::new(trust);
        }
        self
    }

    /// Give every item of a batch answer its `context` unless the request
    /// says `options.toolgate_context: false` (`--answer-context`).
    pub fn with_answer_context(mut self, on: bool) -> Service {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.answer_context = on;
        }
        self
    }

    /// Serve HTTPS with `config`.
    pub fn with_tls(mut self, config: Arc<rustls::ServerConfig>) -> Service {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.tls = Some(config);
        }
        self
    }

    /// Authenticate every decision request with `auth` (401 without a
    /// token it accepts); what a caller may assert is then its own.
    pub fn with_auth(mut self, auth: toolgate_auth::Authenticator) -> Service {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.auth = Some(Arc::new(auth));
        }
        self
    }

    /// The configuration of requests whose context names none; it must be
    /// one of the table's (an error at start otherwise).
    pub fn with_default_configuration(mut self, name: Option<String>) -> Result<Service, String> {
        if let Some(n) = &name {
            self.shared
                .handle
                .current()
                .context(n)
                .map_err(|e| format!("--default-configuration: {e}"))?;
        }
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.default_configuration = name,
            None => return Err("the service is already shared".into()),
        }
        Ok(self)
    }

    /// The service `opts` describe, its table loaded (an error when it does not load).
    pub fn from_options(opts: &Options, public_url: String) -> Result<Service, String> {
        let table = opts.source.load_with(opts.trusted_keys.as_ref())?;
        Service::with_trusted_keys(
            table,
            Some(opts.source.clone()),
            opts.limits,
            public_url,
            opts.decision_log.as_ref().map(|t| (t, opts.log_buffer)),
            opts.trusted_keys.clone(),
        )?
        .with_default_configuration(opts.default_configuration.clone())
        .map(|s| {
            s.with_trust(opts.trust.clone())
                .with_answer_context(opts.answer_context)
        })
        .and_then(|s| match &opts.auth {
            None => Ok(s),
            Some(path) => Ok(s.with_auth(toolgate_auth::Authenticator::from_file(path)?)),
        })
        .and_then(|s| match &opts.tls {
            None => Ok(s),
            Some(files) => Ok(s.with_tls(files.server_config()?)),
        })
        .and_then(|s| {
            let hosts = opts.allowed_hosts.clone().unwrap_or_else(|| {
                transport::HostCheck::defaults(Some(opts.addr.ip()), Some(&public_url_of(opts)))
            });
            // The console's own page posts to its own origin: accepted; any
            // other origin only when listed.
            let check = transport::HostCheck::new(&hosts, &opts.allowed_origins, true)?;
            Ok(s.with_transport(check))
        })
        .map(|s| {
            if opts.console {
                s.with_console(opts.source.title())
            } else {
                s
            }
        })
    }

    pub fn router(&self) -> axum::Router {
        server::router_with(self.shared.clone(), self.console.clone())
    }

    /// Serve the console (`--console`) too, its page titled `title`.
    pub fn with_console(mut self, title: String) -> Service {
        self.console = Some(title);
        self
    }

    /// Serve on `listener` until `shutdown` completes, then finish the
    /// requests in flight and flush the decision log.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let r = server::accept_loop(listener, self.router(), self.shared.clone(), shutdown).await;
        if let Some(log) = &self.shared.log {
            log.close();
        }
        r
    }

    /// Watch the source; on a change, reload (debounced). A registry is
    /// polled every `poll_interval` instead ([`poll`]). The watch stops when
    /// the returned value is dropped.
    pub fn watch(&self, poll_interval: Duration) -> Result<Watch, String> {
        use notify::{EventKind, RecursiveMode, Watcher};
        let source = self
            .shared
            .source
            .clone()
            .ok_or_else(|| "no source to watch".to_string())?;
        let Some((root, recursive)) = source.watch_root() else {
            let Source::Oci {
                reference,
                registry,
            } = source
            else {
                return Err("no directory to watch".into());
            };
            return Ok(Watch::Poll(poll::spawn(
                self.shared.clone(),
                reference,
                registry,
                poll_interval,
            )?));
        };
        let (tx, rx) = std::sync::mpsc::channel::<notify::Event>();
        let mut watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            if let Ok(ev) = ev {
                let _ = tx.send(ev);
            }
        })
        .map_err(|e| e.to_string())?;
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        watcher
            .watch(&root, mode)
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let shared = self.shared.clone();
        let wanted_kind = |ev: &notify::Event| {
            matches!(
                ev.kind,
                EventKind::Create(_)
                    | EventKind::Modify(_)
                    | EventKind::Remove(_)
                    | EventKind::Access(notify::event::AccessKind::Close(
                        notify::event::AccessMode::Write
                    ))
            )
        };
        // A table file may be reached through links in its directory (a
        // Kubernetes volume renames `..data` over a new timestamped
        // directory): any event there is a reason to look where the path
        // leads now, and a changed destination is reloaded as a change of
        // the file itself would be. The digest comparison in `install`
        // keeps an unchanged table in place.
        let follows_links = matches!(source, Source::Table(_));
        let mut identity = source.identity();
        std::thread::Builder::new()
            .name("toolgate-watch".into())
            .spawn(move || {
                // A reload that failed is tried again after a wait that
                // doubles from RETRY_FIRST to RETRY_MOST, until it succeeds
                // or the source changes again (then the wait starts over): a
                // table that failed for a passing reason (out of descriptors,
                // a file still being written) is loaded without another change.
                // The next try: when, and the wait that led to it (events
                // that change nothing do not postpone it).
                let mut retry: Option<(std::time::Instant, Duration)> = None;
                loop {
                    let ev = match retry {
                        None => match rx.recv() {
                            Ok(ev) => ev,
                            Err(_) => return,
                        },
                        Some((at, wait)) => match rx
                            .recv_timeout(at.saturating_duration_since(std::time::Instant::now()))
                        {
                            Ok(ev) => ev,
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                                retry = match shared.reload() {
                                    Ok(_) => None,
                                    Err(_) => Some(retry_after(Some(wait))),
                                };
                                continue;
                            }
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                        },
                    };
                    if !wanted_kind(&ev) {
                        continue;
                    }
                    let mut named = ev.paths.iter().any(|p| source.is_relevant(p));
                    if !named && !follows_links {
                        continue;
                    }
                    // Wait for a quiet moment: an editor or a compiler writes in steps.
                    loop {
                        match rx.recv_timeout(Duration::from_millis(100)) {
                            Ok(ev) => {
                                named |= wanted_kind(&ev)
                                    && ev.paths.iter().any(|p| source.is_relevant(p));
                            }
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    if follows_links {
                        let now = source.identity();
                        if !named && now == identity {
                            continue;
                        }
                        identity = now;
                    }
                    retry = match shared.reload() {
                        Ok(_) => None,
                        Err(_) => Some(retry_after(None)),
                    };
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Watch::Files(watcher))
    }
}

/// The first wait before a failed reload is tried again.
pub const RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between tries of a failed reload.
pub const RETRY_MOST: Duration = Duration::from_secs(30);

/// When to try a failed reload again, and the wait until then:
/// [`RETRY_FIRST`] after a change, else the last wait doubled, at most
/// [`RETRY_MOST`]; said on standard error.
fn retry_after(last: Option<Duration>) -> (std::time::Instant, Duration) {
    let wait = last.map_or(RETRY_FIRST, |w| (w * 2).min(RETRY_MOST));
    note(&format!(
        "trying the reload again in {} s (or at the next change of the source)",
        wait.as_secs()
    ));
    (std::time::Instant::now() + wait, wait)
}

/// A running watch of the source; dropping it stops the watch.
pub enum Watch {
    Files(notify::RecommendedWatcher),
    Poll(poll::Poller),
}

/// Resolves at SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
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
pub fn run(opts: Options) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // Nothing authenticates a caller: only the machine itself may ask,
    // unless the operator says the network in front is private.
    if opts.console && !opts.addr.ip().is_loopback() && opts.auth.is_none() {
        return Err(format!(
            "refusing to serve the console on {}: not a loopback address, and nothing authenticates its callers (the console shows the whole table). Give --auth FILE, or bind 127.0.0.1 (docs/report.md)",
            opts.addr
        ));
    }
    // Bearer tokens in clear over a network (RFC 6750 §5.3): refused like
    // the unauthenticated case, with the same explicit override.
    if !opts.addr.ip().is_loopback() && opts.auth.is_some() && opts.tls.is_none() {
        if !opts.allow_unauthenticated {
            return Err(format!(
                "refusing to serve --auth on {} without --tls-cert: bearer tokens would cross the network in clear (RFC 6750 §5.3). Give --tls-cert and --tls-key, bind 127.0.0.1 behind a TLS-terminating proxy, or pass --allow-unauthenticated if the network in front of it is private (docs/authzen.md, \"What is trusted\")",
                opts.addr
            ));
        }
        note(&format!(
            "warning: serving --auth on {} without TLS (--allow-unauthenticated): bearer tokens cross the network in clear",
            opts.addr
        ));
    }
    if !opts.addr.ip().is_loopback() && opts.auth.is_none() {
        if !opts.allow_unauthenticated {
            return Err(format!(
                "refusing to serve on {}: not a loopback address, and nothing authenticates its callers (anyone who reaches the port could ask as any subject). Give --auth FILE (API keys or JWTs), bind 127.0.0.1 behind an authenticating proxy, or pass --allow-unauthenticated if the network in front of it is private (docs/authzen.md, \"What is trusted\")",
                opts.addr
            ));
        }
        note(&format!(
            "warning: serving on {} without authentication (--allow-unauthenticated): every caller that reaches the port is trusted as a policy enforcement point",
            opts.addr
        ));
    }
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| format!("{}: {e}", opts.addr))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let public_url = opts.public_url.clone().unwrap_or_else(|| {
            let scheme = if opts.tls.is_some() { "https" } else { "http" };
            format!("{scheme}://{addr}")
        });
        let service = Service::from_options(&opts, public_url)?;
        let _watch = if opts.watch {
            Some(service.watch(opts.poll_interval)?)
        } else {
            None
        };
        let scheme = if opts.tls.is_some() { "https" } else { "http" };
        note(&format!(
            "listening on {scheme}://{addr}, serving table {}",
            service.shared.handle.current().digest_hex()
        ));
        service
            .serve(listener, shutdown_signal())
            .await
            .map_err(|e| e.to_string())?;
        note("stopped");
        Ok(())
    })
}
