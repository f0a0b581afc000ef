//! `serve`: decisions over HTTP (the `toolgate-serve` library).

use std::path::PathBuf;

use clap::Args;

use super::Res;
use crate::io::Failure;

#[derive(Args)]
pub struct ServeArgs {
    /// A compiled table file to serve.
    #[arg(long, conflicts_with_all = ["project", "oci"], required_unless_present_any = ["project", "oci"])]
    table: Option<PathBuf>,
    /// A project directory (or its toolgate.toml), compiled in memory.
    #[arg(long, short = 'p', conflicts_with = "oci")]
    project: Option<PathBuf>,
    /// A table in an OCI registry (REGISTRY/REPOSITORY:TAG, from `toolgate push`), polled; requires --trusted-key.
    #[arg(long, value_name = "REF", requires = "trusted_key")]
    oci: Option<String>,
    /// Serve only tables signed by one of these public keys, at start and at every reload (repeatable).
    #[arg(long, value_name = "FILE")]
    trusted_key: Vec<PathBuf>,
    /// Seconds between two polls of the registry (--oci); doubled after a failure, up to 300.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    poll_interval: u64,
    #[command(flatten)]
    distribution: super::oci_distribution::DistributionArgs,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8181")]
    addr: std::net::SocketAddr,
    /// The base URL named by /.well-known/authzen-configuration (default: http://ADDR).
    #[arg(long)]
    public_url: Option<String>,
    /// Write a decision log (JSON lines, docs/decision-log.md) to this file (appended), or `-` for standard output.
    #[arg(long)]
    decision_log: Option<PathBuf>,
    /// Decision log records queued at most; when full, records are dropped and counted.
    #[arg(long, default_value_t = 65_536)]
    log_buffer: usize,
    /// Largest request body in bytes (413 beyond it).
    #[arg(long, default_value_t = 1 << 20)]
    max_body_bytes: usize,
    /// Most evaluations in one /access/v1/evaluations request.
    #[arg(long, default_value_t = 1000)]
    max_evaluations: usize,
    /// Requests handled at once; more wait.
    #[arg(long, default_value_t = 1024)]
    max_concurrency: usize,
    /// Connections open at once; one more is closed when accepted (default:
    /// 4096, or the open-files limit less 128 when that is lower).
    #[arg(long, default_value_t = toolgate_serve::default_max_connections())]
    max_connections: usize,
    /// Seconds a client has to send a request's headers (or start the next
    /// request on a kept-alive connection) before the connection is closed.
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// Seconds a decision request has, its body's reading included (408 beyond).
    #[arg(long, default_value_t = 30)]
    request_timeout: u64,
    /// Largest answer in bytes; a batch whose answer would pass it is refused.
    #[arg(long, default_value_t = 16 << 20)]
    max_answer_bytes: usize,
    /// The configuration of a request whose context names none (AuthZEN's
    /// `context` is optional); without it such a request is a 400.
    #[arg(long, value_name = "CONFIGURATION")]
    default_configuration: Option<String>,
    /// The roles a caller may claim for its subject (comma-separated); by
    /// default `user,none`: nothing authenticates a caller, so `admin` must
    /// be allowed on purpose.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "user,none",
        value_name = "ROLES"
    )]
    pep_roles: Vec<String>,
    /// Let a caller set `context.enforcement` (observe a trust zone the
    /// policy enforces); by default such a request is a 403.
    #[arg(long)]
    pep_may_set_enforcement: bool,
    /// Serve on an address other than loopback although nothing
    /// authenticates the callers (only where the network in front is private).
    #[arg(long)]
    allow_unauthenticated: bool,
    /// A credentials file (API keys stored hashed, JWTs checked against a
    /// JWKS; docs/authzen.md, "Authentication"): every decision request must
    /// then present a bearer token it accepts, and what a caller may assert
    /// is the file's for it.
    #[arg(long, value_name = "FILE")]
    auth: Option<std::path::PathBuf>,
    /// Serve HTTPS: the certificate chain (PEM); with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The certificate's private key (PEM); with --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Require client certificates issued by this CA (PEM); with --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_client_ca: Option<std::path::PathBuf>,
    /// Do not watch the table or project for changes.
    #[arg(long)]
    no_watch: bool,
    /// Serve the read-only console at /console: the access report's views
    /// over the served table and a simulation (docs/report.md). Off a
    /// loopback address it needs --auth.
    #[arg(long)]
    console: bool,
    /// A `Host` this service answers to (`name` for any port, `name:port`
    /// for one; repeatable). Default: localhost, 127.0.0.1, ::1, the bound
    /// address and the --public-url's host. Any other is a 403.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// A browser origin allowed besides the service's own (repeatable);
    /// a request with any other `Origin` is a 403.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Give every item of a batch answer its `context` (reason, refusal,
    /// decision id) unless the request says `options.toolgate_context:
    /// false`. By default an item is `{"decision": ...}` alone unless the
    /// request asks, as AuthZEN's examples and interop harnesses compare it.
    #[arg(long)]
    answer_context: bool,
    /// A public key (PEM, `toolgate keygen`) whose approval grants let a
    /// call that needs a person's approval run: given in
    /// `context.grant` with the call's `context.arguments`, checked and
    /// used once (docs/approvals.md; repeatable). Without it no grant does.
    #[arg(long = "approver-key", value_name = "FILE")]
    approver_key: Vec<PathBuf>,
    /// With OpenTelemetry export on (the standard `OTEL_EXPORTER_OTLP_*`
    /// variables; docs/observability.md), put the names of tools a subject
    /// may not see into spans and log records too. By default they are
    /// left out, or `(hidden)`.
    #[arg(long)]
    otel_true_names: bool,
}

pub fn serve(a: ServeArgs) -> Res {
    use toolgate_serve::{LogTarget, Options, RequestLimits, Source};
    let source = match (a.table, a.project, a.oci) {
        (Some(t), _, _) => Source::Table(t),
        (None, Some(p), _) => Source::Project(p),
        (None, None, Some(reference)) => Source::Oci {
            registry: a.distribution.options(&reference)?,
            reference,
        },
        (None, None, None) => {
            return Err(Failure::Usage(
                "give --table FILE, --project DIR or --oci REF".into(),
            ))
        }
    };
    let mut opts = Options::new(source);
    opts.trusted_keys = super::keys::trusted_keys(&a.trusted_key)?;
    opts.approver_keys = super::keys::trusted_keys(&a.approver_key)?;
    opts.poll_interval = std::time::Duration::from_secs(a.poll_interval);
    opts.addr = a.addr;
    opts.public_url = a.public_url;
    opts.limits = RequestLimits {
        max_body_bytes: a.max_body_bytes,
        max_evaluations: a.max_evaluations,
        max_concurrency: a.max_concurrency.max(1),
        max_connections: a.max_connections.max(1),
        header_timeout: std::time::Duration::from_secs(a.header_timeout.max(1)),
        request_timeout: std::time::Duration::from_secs(a.request_timeout.max(1)),
        max_answer_bytes: a.max_answer_bytes.max(1 << 10),
    };
    opts.default_configuration = a.default_configuration;
    let roles = a
        .pep_roles
        .iter()
        .map(|r| {
            toolgate_runtime::Role::from_name(r.trim()).ok_or_else(|| {
                Failure::Usage(format!("--pep-roles: `{r}` is not admin, user or none"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    opts.trust = toolgate_serve::Trust {
        roles,
        enforcement_override: a.pep_may_set_enforcement,
        consumer: None,
        role: None,
        configuration: None,
    };
    opts.allow_unauthenticated = a.allow_unauthenticated;
    opts.auth = a.auth;
    opts.tls = match (a.tls_cert, a.tls_key) {
        (Some(cert), Some(key)) => Some(toolgate_serve::TlsFiles {
            cert,
            key,
            client_ca: a.tls_client_ca,
        }),
        _ => None,
    };
    opts.decision_log = a.decision_log.map(|p| {
        if p.as_os_str() == "-" {
            LogTarget::Stdout
        } else {
            LogTarget::File(p)
        }
    });
    opts.log_buffer = a.log_buffer;
    opts.watch = !a.no_watch;
    opts.console = a.console;
    opts.allowed_hosts = (!a.allowed_hosts.is_empty()).then_some(a.allowed_hosts);
    opts.allowed_origins = a.allowed_origins;
    opts.answer_context = a.answer_context;
    let mut otel = toolgate_serve::telemetry::TelemetryConfig::from_env("toolgate-serve")
        .map_err(|e| Failure::Usage(e.to_string()))?;
    otel.true_names = a.otel_true_names;
    opts.telemetry = Some(otel);
    toolgate_serve::run(opts).map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(0)
}
