//! `toolgate gateway`: a governing MCP gateway in front of real MCP servers
//! (docs/gateway.md). Clients speak MCP (streamable HTTP, revision
//! 2026-07-28 and the one before it) to the gateway; the gateway speaks to
//! each upstream server, over stdio or streamable HTTP, with the official
//! Rust SDK. Every list and every call is decided by the runtime, from the
//! table of that moment, for the identity the request proves:
//!
//! - `tools/list` aggregates the upstreams' tools under the registry's
//!   names (`mcp_SERVER_NAME`, [`toolgate_runtime::mcp::NameMap`]) and
//!   keeps the ones the table offers this caller whose definitions are the
//!   pinned ones, marked private to this caller;
//! - `tools/call` is decided first; a refused call never reaches a server
//!   and is answered by [`toolgate_runtime::mcp::refusal_error`]; an allowed
//!   one goes to its server under the server's own name.
//!
//! The table source, hot reload, the decision log, metrics, `/health` and
//! `/ready` come from the service core ([`toolgate_service::Core`]).
//! tests/gateway/ runs it end to end in the test process, through this API
//! as [`run`] does (its module doc says which test is where).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use toolgate_runtime::{Table, TrustedKeys};
use toolgate_service::telemetry::Telemetry;
use toolgate_service::{Core, CoreBuilder, LogTarget, RequestLimits, Source};

pub mod approvals;
pub mod catalog;
pub mod config;
mod direct;
mod error;
mod handler;
mod http;
pub mod identity;
mod json_answer;
mod metrics;
pub mod offerings;
pub mod pins;
mod session;
mod session_book;
pub mod stdio;
pub mod upstream;

pub use error::Error;

pub use config::Config;

use catalog::Catalog;
use identity::Identify;
use pins::Pins;
use upstream::Connection;

/// When a downed upstream is started again: after 1 s, then twice as long
/// after each failed start, at most [`MAX_BACKOFF`].
#[derive(Debug, Clone, Copy)]
struct Backoff {
    attempts: u32,
    next: std::time::Instant,
}

/// The longest wait between two starts of an upstream that stays down.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

impl Backoff {
    fn after(attempts: u32) -> Backoff {
        let wait = Duration::from_secs(1)
            .saturating_mul(1 << attempts.min(6))
            .min(MAX_BACKOFF);
        Backoff {
            attempts,
            next: std::time::Instant::now() + wait,
        }
    }
}

/// A running gateway's state, shared by every request.
pub struct Gateway {
    /// The table, its reloads, the decision log, the shared metrics and the
    /// listener's settings: the service core's.
    pub core: Arc<Core>,
    pub config: Config,
    pub identify: Identify,
    pub pins: Pins,
    pub catalog: ArcSwap<Catalog>,
    /// The upstreams' resources, templates and prompts.
    pub offerings: ArcSwap<offerings::Offerings>,
    /// Each upstream's connection of this moment (replaced when it is restarted).
    pub upstreams: HashMap<String, ArcSwap<Connection>>,
    /// Upstreams that are down: when each may be started again.
    restarts: Mutex<HashMap<String, Backoff>>,
    /// Woken when an upstream's list changed or one went down.
    changed: Arc<tokio::sync::Notify>,
    /// The base URL of the gateway (the protected resource).
    pub public_url: String,
    /// Fired when what clients may be offered changed (a new table, an
    /// upstream's new list): clients are told their list changed.
    pub changes: tokio::sync::broadcast::Sender<Changed>,
    /// The upstreams' log messages and resource updates, for the sessions.
    pub events: tokio::sync::broadcast::Sender<upstream::Event>,
    /// How many sessions subscribed to each resource URI (2025-11-25's
    /// `resources/subscribe`): the upstream is told to stop when none is left.
    pub subscribers: Mutex<HashMap<String, usize>>,
    pub metrics: metrics::GatewayMetrics,
    /// Why the last listing of each upstream failed, while it is the last.
    pub upstream_errors: Mutex<HashMap<String, String>>,
    /// Questions to a person and the grants given (approvals.rs).
    pub approvals: approvals::Approvals,
}

/// Which lists a change may have changed, for the clients' `list_changed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changed {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
}

impl Changed {
    pub const ALL: Changed = Changed {
        tools: true,
        resources: true,
        prompts: true,
    };

    /// Whether any list changed.
    pub fn any(&self) -> bool {
        self.tools || self.resources || self.prompts
    }
}

fn source_of(c: &Config) -> Source {
    match &c.source {
        config::TableSource::Table(p) => Source::Table(p.clone()),
        config::TableSource::Project(p) => Source::Project(p.clone()),
        config::TableSource::Oci(r) => Source::Oci {
            reference: r.clone(),
            registry: toolgate_oci::DistributionOptions::default(),
        },
    }
}

fn trusted_keys(c: &Config) -> Result<Option<TrustedKeys>, Error> {
    trusted_keys_text(c).map_err(Error::Config)
}

fn trusted_keys_text(c: &Config) -> Result<Option<TrustedKeys>, String> {
    if c.trusted_keys.is_empty() {
        return Ok(None);
    }
    let mut pem = String::new();
    for p in &c.trusted_keys {
        let bytes = toolgate_runtime::host::read_file(p, 1 << 20)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        pem.push_str(&String::from_utf8_lossy(&bytes));
        pem.push('\n');
    }
    TrustedKeys::from_pem(&pem)
        .map(Some)
        .map_err(|e| format!("trusted-keys: {e}"))
}

/// What the start-time checks that need no upstream give the start: the
/// table (verified), its source and keys, the identity, the pins and the
/// transport checks. `toolgate gateway --check` runs exactly these.
struct Checked {
    source: Source,
    keys: Option<TrustedKeys>,
    table: Table,
    identify: Identify,
    pins: Pins,
    transport: toolgate_service::transport::HostCheck,
    approvals: approvals::Approvals,
}

impl Checked {
    async fn of(config: &Config) -> Result<Checked, Error> {
        let source = source_of(config);
        let keys = trusted_keys(config)?;
        let table = source.load_with(keys.as_ref())?;
        for c in &config.configurations {
            table
                .context(c)
                .map_err(|e| Error::Config(format!("configuration `{c}`: {e}")))?;
        }
        let identify = Identify::new(&config.identity, &table).await?;
        let pins = Pins::new(config.registry.clone());
        pins.status(&table)?;
        // Every route (MCP, /metrics, /ready, /health, the metadata) behind
        // the same Host and Origin checks; no browser origin by default.
        let transport = toolgate_service::transport::HostCheck::new(
            &config.allowed_hosts,
            &config.allowed_origins,
            false,
        )?;
        let approvals = approvals::Approvals::new(config.approvals.clone())
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(Checked {
            source,
            keys,
            table,
            identify,
            pins,
            transport,
            approvals,
        })
    }
}

impl Gateway {
    /// Load the table, check the configuration against it, connect every
    /// upstream and list its tools. An error names what to fix.
    pub async fn start(config: Config, public_url: String) -> Result<Arc<Gateway>, Error> {
        let Checked {
            source,
            keys,
            table,
            identify,
            pins,
            transport,
            approvals,
        } = Checked::of(&config).await?;
        let limits = RequestLimits {
            max_body_bytes: config.limits.max_body_bytes,
            max_connections: config.limits.max_connections,
            header_timeout: config.limits.header_timeout,
            // A call waits for its upstream (bounded on its own); the
            // request deadline leaves room for it.
            request_timeout: config.limits.upstream_timeout + Duration::from_secs(5),
            ..RequestLimits::default()
        };
        let log = config.decision_log.as_ref().map(|p| {
            if p == "-" {
                LogTarget::Stdout
            } else {
                LogTarget::File(p.into())
            }
        });
        // Made on a blocking thread (the OTLP HTTP client blocks), inside
        // the runtime (gRPC needs it).
        let otel = config.telemetry.clone();
        let telemetry = tokio::task::spawn_blocking(move || Telemetry::start(&otel))
            .await
            .map_err(|e| toolgate_service::Error::Telemetry(e.to_string()))??;
        let core = CoreBuilder::new("gateway", table, limits, public_url.clone())
            .source(Some(source))
            .decision_log(log.map(|t| (t, 65_536)))
            .trusted_keys(keys)
            .transport(transport)
            .telemetry(telemetry)
            .build()?;
        let changed = Arc::new(tokio::sync::Notify::new());
        let (events, _) = tokio::sync::broadcast::channel(upstream::EVENTS_QUEUED);
        let wake = upstream::Wake {
            changed: changed.clone(),
            events: events.clone(),
        };
        let mut upstreams = HashMap::new();
        for u in &config.upstreams {
            let c = upstream::connect(u, &config.limits, wake.clone()).await?;
            upstreams.insert(u.name.clone(), ArcSwap::from_pointee(c));
        }
        let (changes, _) = tokio::sync::broadcast::channel(16);
        let gw = Arc::new(Gateway {
            core,
            config,
            identify,
            pins,
            catalog: ArcSwap::from_pointee(Catalog::default()),
            offerings: ArcSwap::from_pointee(offerings::Offerings::default()),
            upstreams,
            restarts: Mutex::new(HashMap::new()),
            changed: changed.clone(),
            public_url,
            changes,
            events,
            subscribers: Mutex::new(HashMap::new()),
            metrics: metrics::GatewayMetrics::default(),
            upstream_errors: Mutex::new(HashMap::new()),
            approvals,
        });
        gw.refresh().await;
        if let Some(e) = gw
            .upstream_errors
            .lock()
            .ok()
            .and_then(|m| m.values().next().cloned())
        {
            return Err(Error::Upstream(e));
        }
        Gateway::follow(gw.clone(), changed);
        Ok(gw)
    }

    /// List every upstream again and put the new catalog in place; an
    /// upstream whose listing fails keeps no tools (never the old list).
    pub async fn refresh(&self) {
        let mut listed = Vec::new();
        let mut served = Vec::new();
        let mut errors = HashMap::new();
        for u in &self.config.upstreams {
            let Some(slot) = self.upstreams.get(&u.name) else {
                continue;
            };
            let c = match self.alive(u, slot).await {
                Ok(c) => c,
                Err(e) => {
                    self.metrics.upstream_error(&u.name);
                    errors.insert(u.name.clone(), e);
                    continue;
                }
            };
            let c = &*c;
            let both = async {
                let tools = upstream::list(c, &self.config.limits).await?;
                let more = upstream::list_offerings(c, &self.config.limits).await?;
                Ok::<_, String>((tools, more))
            };
            match both.await {
                Ok((tools, more)) => {
                    listed.push((u.name.clone(), tools));
                    served.push((u.name.clone(), more));
                }
                Err(e) => {
                    say(&format!("warning: {e}"));
                    self.metrics.upstream_error(&u.name);
                    errors.insert(u.name.clone(), e);
                }
            }
        }
        let offerings = offerings::Offerings::new(served);
        let before = self.offerings.load();
        let mut catalog = Catalog::new(listed);
        let old = self.catalog.load_full();
        // A listing like the last one keeps the catalog in place: clients
        // are not told of a change that is none (each would list again),
        // their page cursors stay valid, and the new copy is freed whole
        // instead of living beside the old one's pages.
        let tools = !catalog.same_listing(&old);
        let changed = Changed {
            tools,
            resources: offerings.resources != before.resources
                || offerings.templates != before.templates,
            prompts: offerings.prompts != before.prompts,
        };
        drop(before);
        if changed.resources || changed.prompts {
            self.offerings.store(Arc::new(offerings));
        }
        if tools {
            catalog.generation = old.generation + 1;
            for u in &catalog.unmapped {
                say(&format!("warning: {u}"));
            }
            self.catalog.store(Arc::new(catalog));
        }
        drop(old);
        if let Ok(mut m) = self.upstream_errors.lock() {
            *m = errors;
        }
        self.report();
        if changed.any() {
            let _ = self.changes.send(changed);
        }
        // The listing's transient copies (every tool parsed, mapped and
        // pinned) are freed now: back to the system, not kept at the peak.
        toolgate_service::release_freed_memory();
    }

    /// The connection of `u`, started again when it is down and its
    /// backoff has passed: a restarted upstream is listed, and its pins
    /// checked, by the refresh that asked, before anything of it is offered.
    async fn alive(
        &self,
        u: &config::Upstream,
        slot: &ArcSwap<Connection>,
    ) -> Result<Arc<Connection>, String> {
        let c = slot.load_full();
        if !c.is_down() {
            return Ok(c);
        }
        let now = std::time::Instant::now();
        let due = self
            .restarts
            .lock()
            .ok()
            .and_then(|m| m.get(&u.name).copied());
        if let Some(b) = due.filter(|b| b.next > now) {
            return Err(format!(
                "upstream `{}` is down; restart {} in {} ms",
                u.name,
                b.attempts + 1,
                (b.next - now).as_millis()
            ));
        }
        let attempts = due.map_or(0, |b| b.attempts + 1);
        let wake = upstream::Wake {
            changed: self.changed.clone(),
            events: self.events.clone(),
        };
        match upstream::connect(u, &self.config.limits, wake).await {
            Ok(fresh) => {
                say(&format!(
                    "upstream `{}` restarted (attempt {})",
                    u.name,
                    attempts + 1
                ));
                self.metrics.upstream_restart(&u.name);
                if let Ok(mut m) = self.restarts.lock() {
                    m.remove(&u.name);
                }
                let fresh = Arc::new(fresh);
                slot.store(fresh.clone());
                Ok(fresh)
            }
            Err(e) => {
                let b = Backoff::after(attempts);
                if let Ok(mut m) = self.restarts.lock() {
                    m.insert(u.name.clone(), b);
                }
                Err(format!(
                    "upstream `{}` is down and did not start again: {e}; next attempt in {} ms",
                    u.name,
                    (b.next - now).as_millis()
                ))
            }
        }
    }

    /// How long until the next upstream restart is due, if one is down.
    fn next_restart_in(&self) -> Option<Duration> {
        let now = std::time::Instant::now();
        let down = self.upstreams.values().any(|s| s.load().is_down());
        let next = self.restarts.lock().ok().and_then(|m| {
            m.values()
                .map(|b| b.next.saturating_duration_since(now))
                .min()
        });
        match (down, next) {
            (false, _) => None,
            (true, Some(n)) => Some(n),
            // Down, and no start tried yet: at once.
            (true, None) => Some(Duration::ZERO),
        }
    }

    /// Count and log what upstreams list that is never offered: tools the
    /// registry does not hold, and tools whose definitions changed.
    fn report(&self) {
        let table = self.core.handle.current();
        let catalog = self.catalog.load();
        let unregistered: Vec<&str> = catalog
            .unregistered(&table)
            .map(|e| e.registry_name.as_str())
            .collect();
        let changed: Vec<&str> = catalog
            .changed(&table, &self.pins)
            .map(|e| e.registry_name.as_str())
            .collect();
        self.metrics
            .set_listed(catalog.len(), unregistered.len(), changed.len());
        if !unregistered.is_empty() {
            say(&format!(
                "warning: {} listed tool(s) the registry does not hold, never offered: {} (add them with `toolgate registry sync --write`)",
                unregistered.len(),
                shown_names(&unregistered)
            ));
        }
        if !changed.is_empty() {
            say(&format!(
                "warning: {} tool(s) whose definition is not the pinned one, withheld: {} (review, then `toolgate registry sync --write`)",
                changed.len(),
                shown_names(&changed)
            ));
        }
        let offerings = self.offerings.load();
        let pins = self.pins.view(&table);
        let withheld: Vec<&str> = offerings
            .prompts
            .iter()
            .filter(|p| {
                pins.check_prompt(&p.prompt.name, &p.server, &p.digest) == pins::Pin::Broken
            })
            .map(|p| p.prompt.name.as_str())
            .collect();
        self.metrics.set_withheld_prompts(withheld.len());
        if !withheld.is_empty() {
            say(&format!(
                "warning: {} prompt(s) the registry does not pin as listed (new, or changed since the review), withheld: {} (review, then `toolgate registry sync --write`)",
                withheld.len(),
                shown_names(&withheld)
            ));
        }
    }

    /// Follow changes: an upstream's `list_changed` (or the relist
    /// interval) lists every upstream again; a new
    /// table (a reload) tells clients their lists changed.
    fn follow(gw: Arc<Gateway>, changed: Arc<tokio::sync::Notify>) {
        let weak = Arc::downgrade(&gw);
        let every = gw.config.limits.relist_interval;
        tokio::spawn(async move {
            loop {
                // Wake for a change, the relist interval, or a restart due
                // (an upstream that went down is listed as down at once).
                let wait = weak
                    .upgrade()
                    .and_then(|gw| gw.next_restart_in())
                    .map_or(every, |d| d.min(every).max(Duration::from_millis(100)));
                let _ = tokio::time::timeout(wait, changed.notified()).await;
                // A server may announce several changes at once.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let Some(gw) = weak.upgrade() else { return };
                gw.refresh().await;
            }
        });
        let weak = Arc::downgrade(&gw);
        tokio::spawn(async move {
            let mut last = None;
            loop {
                let Some(gw) = weak.upgrade() else { return };
                let table = gw.core.handle.current();
                let digest = table.digest();
                if last.is_some_and(|l| l != digest) {
                    gw.report();
                    // Who sees what may have changed in every list.
                    let _ = gw.changes.send(Changed::ALL);
                }
                last = Some(digest);
                drop(gw);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
    }

    /// The table of this moment.
    pub fn table(&self) -> Arc<Table> {
        self.core.handle.current()
    }
}

/// A line for the operator, on standard error (escaped for a terminal).
pub fn say(text: &str) {
    toolgate_service::say("gateway", text);
}

fn shown_names(names: &[&str]) -> String {
    let mut s: Vec<String> = names
        .iter()
        .take(10)
        .map(|n| toolgate_runtime::names::escape(n).into_owned())
        .collect();
    if names.len() > 10 {
        s.push(format!("and {} more", names.len() - 10));
    }
    s.join(", ")
}

/// Serve `gw` on `listener` until `shutdown`.
pub async fn serve(
    gw: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = http::router(gw.clone());
    let r = toolgate_service::listener::accept_loop(listener, app, gw.core.clone(), shutdown).await;
    if let Some(log) = &gw.core.log {
        log.close();
    }
    // What is queued goes out (within 5 s a signal) before the process ends.
    let telemetry = gw.core.telemetry.clone();
    let _ =
        tokio::task::spawn_blocking(move || telemetry.shutdown(std::time::Duration::from_secs(5)))
            .await;
    r
}

/// `toolgate gateway --check`: every start-time check that needs no
/// upstream, as the real start makes them: the table loads (and is signed
/// by a trusted key, when keys are given), the configuration is one of its
/// own, the identity is usable (a credentials file that lets someone in, a
/// fixed consumer the policy knows), the registry pairs with the table, and
/// the allowed hosts are hosts. `Ok` carries a line for the operator.
pub fn check(config: &Config) -> Result<String, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io(e.to_string()))?;
    rt.block_on(async {
        let Checked { table, .. } = Checked::of(config).await?;
        Ok(format!(
            "valid: table {}, configuration `{}`, {} upstream(s) (not connected)",
            table.digest_hex(),
            config.configurations.join("`, `"),
            config.upstreams.len()
        ))
    })
}

/// `toolgate gateway --config FILE`: start, watch the table, serve until
/// SIGINT or SIGTERM.
pub fn run(config: Config, watch: bool) -> Result<(), Error> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io(e.to_string()))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| Error::Io(format!("{}: {e}", config.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Io(e.to_string()))?;
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}"));
        let gw = Gateway::start(config, public_url).await?;
        let _watch = if watch {
            Some(gw.core.watch(Duration::from_secs(30))?)
        } else {
            None
        };
        // Installed before anyone is told the address.
        let stop = toolgate_service::shutdown_signal();
        say(&format!(
            "listening on http://{addr}/mcp, {} tool(s) from {} upstream(s), table {}",
            gw.catalog.load().len(),
            gw.upstreams.len(),
            gw.table().digest_hex()
        ));
        serve(gw, listener, stop)
            .await
            .map_err(|e| Error::Io(e.to_string()))?;
        say("stopped");
        Ok(())
    })
}
