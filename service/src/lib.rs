//! The service core under both network fronts of toolgate (`toolgate
//! serve`, the AuthZEN decision service, and `toolgate gateway`, the MCP
//! gateway): the table and its source, reloads and their status, the
//! watcher and OCI polling, the decision log, the shared metrics, ids and
//! time stamps, and the listener (accept loop, TLS, connection limit,
//! header timeout, Host/Origin checks, shutdown), with `/health`.
//!
//! Nothing here decides and nothing here speaks a front's protocol: each
//! front builds a [`Core`] with [`CoreBuilder`] (which owns every setting
//! until [`CoreBuilder::build`], so none can be dropped on the way) and
//! mounts its own routes over it. The fronts never depend on each other
//! (a test over `cargo metadata` checks it).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use toolgate_runtime::{Table, TableHandle, TrustedKeys};

pub mod decision_log;
mod error;
pub mod listener;
pub mod metrics;
pub mod page_token;
pub mod poll;
pub mod record_stamps;
pub mod source;
pub mod telemetry;
pub mod transport;

pub use decision_log::LogTarget;
pub use error::Error;
pub use source::Source;

/// Limits on what one request may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
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

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
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
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, Error> {
        self.server_config_text().map_err(Error::Tls)
    }

    fn server_config_text(&self) -> Result<Arc<rustls::ServerConfig>, String> {
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

/// What every request of either front shares: the table, where it comes
/// from, its reloads, the decision log, the metrics and the listener's
/// settings. Made by [`CoreBuilder`].
pub struct Core {
    pub handle: TableHandle,
    pub source: Option<Source>,
    pub limits: RequestLimits,
    pub metrics: metrics::Metrics,
    pub log: Option<decision_log::DecisionLogSink>,
    pub ids: record_stamps::IdGen,
    pub public_url: String,
    /// Reloads accept only tables signed by these keys, when set.
    pub trusted_keys: Option<TrustedKeys>,
    /// HTTPS, when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The `Host` and `Origin` every request must have ([`transport`]).
    pub transport: Arc<transport::HostCheck>,
    /// The front this core serves (`serve`, `gateway`): how its lines for
    /// the operator begin ([`say`]).
    pub front: &'static str,
    /// OpenTelemetry export (off unless configured).
    pub telemetry: telemetry::Telemetry,
    status: Mutex<ReloadStatus>,
}

/// A [`Core`] being set up: it owns every setting until [`Self::build`].
pub struct CoreBuilder {
    front: &'static str,
    table: Table,
    source: Option<Source>,
    limits: RequestLimits,
    public_url: String,
    decision_log: Option<(LogTarget, usize)>,
    trusted_keys: Option<TrustedKeys>,
    tls: Option<Arc<rustls::ServerConfig>>,
    transport: Option<transport::HostCheck>,
    telemetry: telemetry::Telemetry,
}

impl CoreBuilder {
    /// A core of `front` (`serve`, `gateway`) over `table` (the caller
    /// loaded and, with trusted keys, verified it), answering as `public_url`.
    pub fn new(
        front: &'static str,
        table: Table,
        limits: RequestLimits,
        public_url: String,
    ) -> CoreBuilder {
        CoreBuilder {
            front,
            table,
            source: None,
            limits,
            public_url,
            decision_log: None,
            trusted_keys: None,
            tls: None,
            transport: None,
            telemetry: telemetry::Telemetry::off(),
        }
    }

    /// Export traces, metrics and decision log records over OTLP.
    pub fn telemetry(mut self, t: telemetry::Telemetry) -> CoreBuilder {
        self.telemetry = t;
        self
    }

    /// Where reloads read from.
    pub fn source(mut self, source: Option<Source>) -> CoreBuilder {
        self.source = source;
        self
    }

    /// Write the decision log to `target`, queueing at most `capacity` records.
    pub fn decision_log(mut self, log: Option<(LogTarget, usize)>) -> CoreBuilder {
        self.decision_log = log;
        self
    }

    /// Every reload must be signed by one of `keys`, when given.
    pub fn trusted_keys(mut self, keys: Option<TrustedKeys>) -> CoreBuilder {
        self.trusted_keys = keys;
        self
    }

    /// Serve HTTPS with `config`.
    pub fn tls(mut self, config: Option<Arc<rustls::ServerConfig>>) -> CoreBuilder {
        self.tls = config;
        self
    }

    /// The `Host` and `Origin` values requests must carry (by default the
    /// loopback names and the public URL's host, and no foreign origin).
    pub fn transport(mut self, check: transport::HostCheck) -> CoreBuilder {
        self.transport = Some(check);
        self
    }

    /// The core, its decision log opened.
    pub fn build(self) -> Result<Arc<Core>, Error> {
        let mut metrics = metrics::Metrics::default();
        if self.telemetry.is_on() {
            metrics.register_otel(&self.telemetry.dropped);
        }
        let now = SystemTime::now();
        metrics.set_table(None, &self.table.digest_hex(), unix_s(now));
        let log = match self.decision_log {
            None => None,
            Some((target, capacity)) => Some(decision_log::DecisionLogSink::open(
                &target,
                capacity,
                metrics.log_written.clone(),
                metrics.log_dropped.clone(),
            )?),
        };
        let transport = match self.transport {
            Some(t) => t,
            None => transport::HostCheck::new(
                &transport::HostCheck::defaults(None, Some(&self.public_url)),
                &[],
                true,
            )?,
        };
        Ok(Arc::new(Core {
            handle: TableHandle::new(self.table),
            source: self.source,
            limits: self.limits,
            metrics,
            log,
            ids: record_stamps::IdGen::default(),
            public_url: self.public_url,
            trusted_keys: self.trusted_keys,
            tls: self.tls,
            transport: Arc::new(transport),
            front: self.front,
            telemetry: self.telemetry,
            status: Mutex::new(ReloadStatus {
                loaded_at: now,
                last_attempt: None,
                error: None,
                failures: 0,
            }),
        }))
    }
}

/// Give the memory a large rebuild freed (a relisting, a reload) back to
/// the system. glibc's allocator otherwise keeps the freed pages of its
/// arenas, so an idle process would stay at the peak of its last rebuild.
/// A no-op with other allocators (the `toolgate` binary's mimalloc is set
/// to purge freed pages at once instead: cli/src/main.rs).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own
    // arenas to the kernel; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Write a line for the operator of `front` (`serve`, `gateway`) on
/// standard error, control characters escaped: `toolgate FRONT: TEXT`.
pub fn say(front: &str, text: &str) {
    use std::io::Write;
    let text = toolgate_runtime::names::escape_terminal(text);
    let _ = writeln!(std::io::stderr().lock(), "toolgate {front}: {text}");
}

fn unix_s(t: SystemTime) -> f64 {
    record_stamps::unix_ms(t) as f64 / 1000.0
}

impl Core {
    /// Whether decisions are recorded anywhere: a decision log, or OTLP.
    pub fn keeps_decisions(&self) -> bool {
        self.log.is_some() || self.telemetry.is_on()
    }

    /// Count `n` decisions in `/metrics` and, when exporting, over OTLP:
    /// one call, both readers.
    pub fn count_decisions(&self, labels: metrics::DecisionLabels, n: u64) {
        self.telemetry
            .count_decisions(&labels.stage, &labels.reason, &labels.configuration, n);
        self.metrics.decisions.get_or_create(&labels).inc_by(n);
    }

    /// A decision record as an OTLP log record, when exporting: the tool of
    /// a caller who may not see its name is `(hidden)` there unless the
    /// operator asked for true names (the decision log file keeps it).
    pub fn export_decision(&self, rec: &toolgate_runtime::log::ServiceRecord) {
        if !self.telemetry.is_on() {
            return;
        }
        let visible = rec.result.context.name_visible;
        let json = if visible || self.telemetry.true_names {
            serde_json::to_string(rec)
        } else {
            let mut rec = rec.clone();
            rec.input.resource.id = "(hidden)".into();
            serde_json::to_string(&rec)
        };
        if let Ok(json) = json {
            self.telemetry
                .log_decision(&json, &rec.decision_id, rec.result.decision);
        }
    }

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
        drop(status);
        // The old table goes when its last request does; what it and the
        // reload's compile freed goes back to the system.
        drop(old);
        release_freed_memory();
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
        say(
            self.front,
            &format!(
                "reload failed, still serving table {}: {error}",
                self.handle.current().digest_hex()
            ),
        );
        status.error = Some(error);
        self.metrics.reload_failures.inc();
        self.metrics.reload("failed");
        self.metrics.last_reload_failed.set(1);
    }

    /// Load the source again and swap it in if it changed. A table that
    /// fails to load never replaces the current one.
    pub fn reload(&self) -> Result<bool, Error> {
        let Some(source) = &self.source else {
            return Err(Error::Table("no source to reload from".into()));
        };
        match source.load_with(self.trusted_keys.as_ref()) {
            Ok(table) => {
                let swapped = self.install(table);
                if swapped {
                    say(
                        self.front,
                        &format!(
                            "reloaded: now serving table {}",
                            self.handle.current().digest_hex()
                        ),
                    );
                }
                Ok(swapped)
            }
            Err(e) => {
                self.failed(e.to_string());
                Err(e)
            }
        }
    }

    /// Load a table from bytes and swap it in (the same rules as
    /// [`Core::reload`]: verified when trusted keys are set).
    pub fn install_bytes(&self, bytes: &[u8]) -> Result<bool, Error> {
        match source::load_bytes(bytes, self.trusted_keys.as_ref()) {
            Ok(t) => Ok(self.install(t)),
            Err(e) => {
                self.failed(e.to_string());
                Err(e)
            }
        }
    }

    /// Flush and close the decision log (at shutdown).
    pub fn close_log(&self) {
        if let Some(log) = &self.log {
            log.close();
        }
    }

    /// Watch the source; on a change, reload (debounced). A registry is
    /// polled every `poll_interval` instead ([`poll`]). The watch stops when
    /// the returned value is dropped.
    pub fn watch(self: &Arc<Self>, poll_interval: Duration) -> Result<Watch, Error> {
        self.watch_text(poll_interval).map_err(Error::Watch)
    }

    fn watch_text(self: &Arc<Self>, poll_interval: Duration) -> Result<Watch, String> {
        use notify::{EventKind, RecursiveMode, Watcher};
        let source = self
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
                self.clone(),
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
        let shared = self.clone();
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
                                    Err(_) => Some(retry_after(shared.front, Some(wait))),
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
                        Err(_) => Some(retry_after(shared.front, None)),
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
fn retry_after(front: &str, last: Option<Duration>) -> (std::time::Instant, Duration) {
    let wait = last.map_or(RETRY_FIRST, |w| (w * 2).min(RETRY_MOST));
    say(
        front,
        &format!(
            "trying the reload again in {} s (or at the next change of the source)",
            wait.as_secs()
        ),
    );
    (std::time::Instant::now() + wait, wait)
}

/// A running watch of the source; dropping it stops the watch.
pub enum Watch {
    Files(notify::RecommendedWatcher),
    Poll(poll::Poller),
}

/// Resolves at SIGINT (Ctrl-C) or SIGTERM. The handlers are installed
/// when this is called (inside the runtime), not when the future is first
/// polled: a signal that comes while the first connection is served, before
/// the accept loop polls its shutdown, ends the server gracefully too.
#[cfg(unix)]
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    use tokio::signal::unix::{signal, SignalKind};
    let int = signal(SignalKind::interrupt()).ok();
    let term = signal(SignalKind::terminate()).ok();
    async move {
        let wait = |s: Option<tokio::signal::unix::Signal>| async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = wait(int) => {},
            _ = wait(term) => {},
        }
    }
}

/// Resolves at Ctrl-C.
#[cfg(not(unix))]
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
