//! The gateway's configuration file (TOML; docs/gateway.md, the JSON
//! Schema in docs/gateway-config.schema.json). Read strictly: an
//! unknown key is an error with its line and a "did you mean", never
//! ignored, and every rule that keeps access closed is checked here, before
//! anything connects.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_runtime::names::{did_you_mean, remote_name_problem};
use toolgate_runtime::Role;

/// The largest configuration file read.
const MAX_FILE: u64 = 1 << 20;

/// The file as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct File {
    /// Where clients connect (default `127.0.0.1:8800`). An address other
    /// than loopback needs `[identity] auth` (or a trusted header with a
    /// shared secret): a client's own word is never its identity.
    pub listen: Option<String>,
    /// The base URL clients reach the gateway at (default `http://LISTEN`):
    /// the resource named in the protected-resource metadata.
    pub public_url: Option<String>,
    /// The table: a compiled `.tgt` file ...
    pub table: Option<String>,
    /// ... or a project directory, compiled at start and at every change ...
    pub project: Option<String>,
    /// ... or an OCI reference (`host/repo:tag` or `@sha256:`), as `toolgate serve` takes it.
    pub oci: Option<String>,
    /// Public keys (PEM files) a table must be signed by (every reload too).
    #[serde(default)]
    pub trusted_keys: Vec<String>,
    /// The configuration requests to `/mcp` are decided under.
    pub configuration: String,
    /// More configurations served by this one gateway, each at
    /// `/mcp/NAME`, over the same upstreams, pins and listings.
    #[serde(default)]
    pub configurations: Vec<String>,
    /// The registry the table was compiled from: the pinned tool
    /// definitions (docs/gateway.md, "Pinned definitions"). Its SHA-256 must
    /// be the table's registry digest.
    pub registry: Option<String>,
    /// Pin tool definitions (default true; needs `registry`).
    pub pin_definitions: Option<bool>,
    /// Answer every refusal exactly as an unknown tool (default false).
    #[serde(default)]
    pub stealth: bool,
    /// Host names (or `host:port`) a request's `Host` may name (DNS
    /// rebinding). Default: `localhost`, `127.0.0.1`, `::1`, and the host of `public-url`.
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins allowed to call (`https://app.example:443`). Default
    /// none: a request that carries an `Origin` is refused.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// The decision log: a file path, `-` for standard output.
    pub decision_log: Option<String>,
    /// Who is asking.
    pub identity: IdentityFile,
    #[serde(default)]
    pub limits: LimitsFile,
    /// The MCP servers behind the gateway.
    #[serde(default)]
    pub upstream: Vec<UpstreamFile>,
}

/// `[identity]`: exactly one way of knowing who asks.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IdentityFile {
    /// A credentials file (API keys stored hashed, JWTs against a JWKS;
    /// the format `toolgate serve --auth` reads): every request must
    /// present a bearer token it accepts, and the token gives the consumer and role.
    pub auth: Option<String>,
    /// Without `auth`: the one consumer every request is (loopback only).
    pub consumer: Option<String>,
    /// Without `auth`: the role every request has (default `user`).
    pub role: Option<String>,
    /// A header set by an authenticating proxy in front.
    pub trusted_header: Option<TrustedHeaderFile>,
}

/// `[identity.trusted-header]`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TrustedHeaderFile {
    /// The header that names the consumer (`x-forwarded-consumer`).
    pub consumer: String,
    /// The header that names the role, if any (else `user`).
    pub role: Option<String>,
    /// The peer addresses the proxy connects from; a request from any other is refused.
    #[serde(default)]
    pub from: Vec<String>,
    /// The SHA-256 (hex) of a secret the proxy sends in `secret-header`.
    pub secret_sha256: Option<String>,
    /// The header the secret comes in (default `x-toolgate-proxy-secret`).
    pub secret_header: Option<String>,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LimitsFile {
    /// Pages of one upstream's `tools/list` (default 100).
    pub max_pages: Option<usize>,
    /// Tools one upstream may list (default 100000).
    pub max_tools: Option<usize>,
    /// Every upstream step: start, handshake, a list page, a call (ms, default 30000).
    pub upstream_timeout_ms: Option<u64>,
    /// A client request's body, chunked or not (bytes, default 4 MiB; 413 beyond).
    pub max_body_bytes: Option<usize>,
    /// What one upstream may answer to one request (bytes, default 16 MiB):
    /// a larger answer is an error naming this bound, never a timeout.
    pub max_result_bytes: Option<usize>,
    /// Tools in one page of the gateway's own `tools/list` (default 1000).
    pub list_page_size: Option<usize>,
    /// Connections open at once (default 1024, or the open-files limit less
    /// 128 when that is lower).
    pub max_connections: Option<usize>,
    /// Time to send a request's headers (ms, default 10000).
    pub header_timeout_ms: Option<u64>,
    /// How often every upstream is listed again, whether or not it
    /// announced a change (ms, default 60000): a server that changes a
    /// definition without saying so has it withheld within this time.
    pub relist_interval_ms: Option<u64>,
}

/// `[[upstream]]`: one MCP server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct UpstreamFile {
    /// The server's name: its tool `NAME` is the registry's `mcp_NAME_TOOL`,
    /// as `registry import-mcp --server NAME` writes it.
    pub name: String,
    /// A program and its arguments, spoken to over stdio ...
    pub command: Option<Vec<String>>,
    /// ... or a streamable HTTP endpoint.
    pub url: Option<String>,
    /// Headers sent with every request to a `url` upstream (a hosted
    /// server's bearer token, an API key): each from an environment
    /// variable, a file or a literal. Never written to logs, `/metrics`,
    /// `/ready` or errors; the client's own `Authorization` is never passed
    /// through.
    pub headers: Option<std::collections::BTreeMap<String, ValueFrom>>,
    /// Environment variables of a `command` upstream, added to the
    /// gateway's own: each from an environment variable, a file or a literal.
    pub env: Option<std::collections::BTreeMap<String, ValueFrom>>,
    /// The working directory of a `command` upstream (relative to this file).
    pub cwd: Option<String>,
}

/// Where a header's or an environment variable's value comes from: exactly
/// one of `value`, `env` and `file`, with an optional `prefix`
/// (`prefix = "Bearer "`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ValueFrom {
    /// The value itself (for what is no secret).
    pub value: Option<String>,
    /// The gateway's environment variable holding it.
    pub env: Option<String>,
    /// A file holding it (relative to this file; one trailing newline dropped).
    pub file: Option<String>,
    /// Text put before the value.
    pub prefix: Option<String>,
}

/// A value read from the operator's secrets: its `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(<{} bytes>)", self.0.len())
    }
}

/// Where the table comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableSource {
    Table(PathBuf),
    Project(PathBuf),
    Oci(String),
}

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Command(Vec<String>),
    Url(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub name: String,
    pub transport: Transport,
    /// Sent with every request to a `url` upstream.
    pub headers: Vec<(String, Secret)>,
    /// Added to a `command` upstream's environment.
    pub env: Vec<(String, Secret)>,
    /// A `command` upstream's working directory.
    pub cwd: Option<PathBuf>,
}

/// A front proxy's header, and what it is trusted from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedHeader {
    pub consumer: String,
    pub role: Option<String>,
    pub from: Vec<std::net::IpAddr>,
    pub secret_sha256: Option<[u8; 32]>,
    pub secret_header: String,
}

/// Who is asking, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityMode {
    /// Bearer tokens, checked by the credentials file.
    Auth(PathBuf),
    /// A front proxy's header.
    Header(TrustedHeader),
    /// One fixed identity (loopback only).
    Fixed {
        consumer: Option<String>,
        role: Role,
    },
}

/// The bounds (docs/gateway.md, "Bounds").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_pages: usize,
    pub max_tools: usize,
    pub upstream_timeout: Duration,
    pub max_body_bytes: usize,
    pub max_result_bytes: usize,
    pub list_page_size: usize,
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub relist_interval: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_pages: 100,
            max_tools: 100_000,
            upstream_timeout: Duration::from_secs(30),
            max_body_bytes: 4 << 20,
            max_result_bytes: 16 << 20,
            list_page_size: 1000,
            // Below the open-files limit, with room for the upstreams,
            // the table and the log (as `toolgate serve`'s default).
            max_connections: toolgate_service::default_max_connections().min(1024),
            header_timeout: Duration::from_secs(10),
            relist_interval: Duration::from_secs(60),
        }
    }
}

/// The configuration, checked, its paths resolved against the file's directory.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub public_url: Option<String>,
    pub source: TableSource,
    pub trusted_keys: Vec<PathBuf>,
    pub configuration: String,
    /// Served at `/mcp/NAME` each (the `configuration` too), in file order.
    pub configurations: Vec<String>,
    pub registry: Option<PathBuf>,
    pub stealth: bool,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub decision_log: Option<String>,
    pub identity: IdentityMode,
    pub limits: Limits,
    pub upstreams: Vec<Upstream>,
}

/// A configuration error: where, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line and column, when the error has a place.
    pub at: Option<(usize, usize)>,
    pub message: String,
    pub help: Option<String>,
}

impl ConfigError {
    fn new(message: impl Into<String>, help: Option<String>) -> ConfigError {
        ConfigError {
            at: None,
            message: message.into(),
            help,
        }
    }

    /// `FILE:LINE:COL: error: MESSAGE` and a `help:` line, as the compiler's short format.
    pub fn render(&self, file: &Path) -> String {
        let at = match self.at {
            Some((l, c)) => format!("{}:{l}:{c}", file.display()),
            None => file.display().to_string(),
        };
        let mut out = format!("{at}: error[gateway-config]: {}", self.message);
        if let Some(h) = &self.help {
            out.push_str(&format!("\n  help: {h}"));
        }
        out
    }
}

fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// What to write for a required key the file lacks.
fn missing_field_help(key: &str) -> Option<&'static str> {
    Some(match key {
        "identity" => "add `[identity]` with how callers are known: `auth = \"credentials.toml\"` (API keys or JWTs), `[identity.trusted-header]` (an authenticating proxy in front), or `consumer = \"NAME\"` and `role = \"user\"` (one fixed identity, loopback only); docs/gateway.md, \"Identity\"",
        "configuration" => "add `configuration = \"NAME\"`: the policy's configuration every request is decided under",
        "name" => "give each `[[upstream]]` a `name`: its tool NAME is the registry's mcp_NAME_TOOL",
        _ => return None,
    })
}

/// The keys each table may hold, for "did you mean" on an unknown one.
const KEYS: &[&str] = &[
    "listen",
    "public-url",
    "table",
    "project",
    "oci",
    "trusted-keys",
    "configuration",
    "configurations",
    "registry",
    "pin-definitions",
    "stealth",
    "allowed-hosts",
    "allowed-origins",
    "decision-log",
    "identity",
    "limits",
    "upstream",
    "auth",
    "consumer",
    "role",
    "trusted-header",
    "from",
    "secret-sha256",
    "secret-header",
    "max-pages",
    "max-tools",
    "upstream-timeout-ms",
    "max-body-bytes",
    "max-result-bytes",
    "headers",
    "env",
    "cwd",
    "value",
    "file",
    "prefix",
    "list-page-size",
    "max-connections",
    "header-timeout-ms",
    "relist-interval-ms",
    "name",
    "command",
    "url",
];

impl Config {
    /// Read and check the file at `path`.
    pub fn from_file(path: &Path) -> Result<Config, crate::Error> {
        let bytes = toolgate_runtime::host::read_file(path, MAX_FILE)
            .map_err(|e| crate::Error::Config(format!("{}: {e}", path.display())))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| crate::Error::Config(format!("{}: not UTF-8", path.display())))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Config::from_toml(&text, dir).map_err(|e| crate::Error::Config(e.render(path)))
    }

    /// Check TOML text; relative paths in it start at `dir`.
    pub fn from_toml(text: &str, dir: &Path) -> Result<Config, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| {
            let message = e.message().to_string();
            let help = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .and_then(|k| did_you_mean(k, KEYS.iter().copied()))
                .map(|k| format!("did you mean `{k}`?"))
                .or_else(|| {
                    message
                        .strip_prefix("missing field `")
                        .and_then(|rest| rest.split('`').next())
                        .and_then(missing_field_help)
                        .map(str::to_string)
                });
            ConfigError {
                at: e.span().map(|s| line_col(text, s.start)),
                message,
                help,
            }
        })?;
        check(file, dir)
    }
}

fn role_named(name: &str) -> Result<Role, ConfigError> {
    Role::from_name(name)
        .ok_or_else(|| ConfigError::new(format!("role `{name}` is not admin, user or none"), None))
}

/// Where the table comes from: exactly one of `table`, `project` and `oci`.
fn table_source(f: &File, dir: &Path) -> Result<TableSource, ConfigError> {
    match (&f.table, &f.project, &f.oci) {
        (Some(t), None, None) => Ok(TableSource::Table(dir.join(t))),
        (None, Some(p), None) => Ok(TableSource::Project(dir.join(p))),
        (None, None, Some(o)) => Ok(TableSource::Oci(o.clone())),
        _ => Err(ConfigError::new(
            "give exactly one of `table`, `project` and `oci`",
            Some("`table = \"policy.tgt\"` serves a compiled table".into()),
        )),
    }
}

fn listen_address(f: &File) -> Result<SocketAddr, ConfigError> {
    f.listen
        .as_deref()
        .unwrap_or("127.0.0.1:8800")
        .parse()
        .map_err(|_| {
            ConfigError::new(
                format!("`listen` is not an address and port: {:?}", f.listen),
                Some("for example `listen = \"127.0.0.1:8800\"`".into()),
            )
        })
}

/// Off the loopback address, something must authenticate the clients: an
/// identity anyone can claim would give every caller on the network its
/// access profile.
fn check_exposure(listen: SocketAddr, identity: &IdentityMode) -> Result<(), ConfigError> {
    if listen.ip().is_loopback() {
        return Ok(());
    }
    let authenticated = match identity {
        IdentityMode::Auth(_) => true,
        IdentityMode::Header(h) => h.secret_sha256.is_some() || !h.from.is_empty(),
        IdentityMode::Fixed { .. } => false,
    };
    if authenticated {
        return Ok(());
    }
    Err(ConfigError::new(
        format!("refusing to listen on {listen}: not a loopback address, and nothing authenticates the clients"),
        Some("set `[identity] auth = \"credentials.toml\"` (API keys or JWTs), or a trusted header with `from` or `secret-sha256`, or listen on 127.0.0.1".into()),
    ))
}

/// The `[[upstream]]` servers, in file order: at least one, each named
/// once, each with one transport.
fn upstreams(f: &File, dir: &Path) -> Result<Vec<Upstream>, ConfigError> {
    if f.upstream.is_empty() {
        return Err(ConfigError::new(
            "no `[[upstream]]`: the gateway would have no tools",
            Some("add `[[upstream]]` with `name` and `command` or `url`".into()),
        ));
    }
    let mut upstreams: Vec<Upstream> = Vec::new();
    for u in &f.upstream {
        if let Some(why) = remote_name_problem(&u.name) {
            return Err(ConfigError::new(
                format!("upstream name `{}` is not valid: {why}", u.name),
                Some("a server name follows MCP's tool-name rule, [a-zA-Z0-9_-]{1,64}".into()),
            ));
        }
        if upstreams.iter().any(|x| x.name == u.name) {
            return Err(ConfigError::new(
                format!("upstream `{}` is configured twice", u.name),
                None,
            ));
        }
        let transport = transport(u)?;
        let is_url = matches!(transport, Transport::Url(_));
        if u.headers.is_some() && !is_url {
            return Err(ConfigError::new(
                format!("upstream `{}`: `headers` are for a `url` upstream", u.name),
                Some("give a command its secrets through `env`".into()),
            ));
        }
        if (u.env.is_some() || u.cwd.is_some()) && is_url {
            return Err(ConfigError::new(
                format!(
                    "upstream `{}`: `env` and `cwd` are for a `command` upstream",
                    u.name
                ),
                Some("give a URL upstream its credentials through `headers`".into()),
            ));
        }
        let values = |what: &str, m: &Option<std::collections::BTreeMap<String, ValueFrom>>| {
            m.iter()
                .flatten()
                .map(|(k, v)| Ok((k.clone(), read_value(&u.name, what, k, v, dir)?)))
                .collect::<Result<Vec<_>, ConfigError>>()
        };
        let headers = values("header", &u.headers)?;
        for (name, value) in &headers {
            let bad_name = axum::http::HeaderName::from_bytes(name.as_bytes()).is_err();
            let reserved = [
                "accept",
                "content-type",
                "content-length",
                "host",
                "mcp-session-id",
                "mcp-protocol-version",
                "last-event-id",
            ]
            .contains(&name.to_ascii_lowercase().as_str());
            if bad_name || reserved {
                return Err(ConfigError::new(
                    format!(
                        "upstream `{}`: `{name}` is not a header the gateway may set",
                        u.name
                    ),
                    Some("the transport's own headers are the SDK's; name another header".into()),
                ));
            }
            if axum::http::HeaderValue::from_str(value.expose()).is_err() {
                return Err(ConfigError::new(
                    format!("upstream `{}`: header `{name}`'s value is not a valid header value (a newline or control character)", u.name),
                    None,
                ));
            }
        }
        upstreams.push(Upstream {
            name: u.name.clone(),
            transport,
            headers,
            env: values("environment variable", &u.env)?,
            cwd: u.cwd.as_ref().map(|c| dir.join(c)),
        });
    }
    Ok(upstreams)
}

/// The value `v` names, read now; an error names where it should have
/// come from, never the value.
fn read_value(
    upstream: &str,
    what: &str,
    key: &str,
    v: &ValueFrom,
    dir: &Path,
) -> Result<Secret, ConfigError> {
    let place = format!("upstream `{upstream}`, {what} `{key}`");
    let raw = match (&v.value, &v.env, &v.file) {
        (Some(x), None, None) => x.clone(),
        (None, Some(var), None) => std::env::var(var).map_err(|_| {
            ConfigError::new(
                format!("{place}: the environment variable `{var}` is not set (or not UTF-8)"),
                Some(format!("export {var} before starting the gateway")),
            )
        })?,
        (None, None, Some(file)) => {
            let p = dir.join(file);
            let bytes = toolgate_runtime::host::read_file(&p, 64 << 10)
                .map_err(|e| ConfigError::new(format!("{place}: {}: {e}", p.display()), None))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ConfigError::new(format!("{place}: {} is not UTF-8", p.display()), None)
            })?;
            text.strip_suffix('\n')
                .map(|t| t.strip_suffix('\r').unwrap_or(t))
                .unwrap_or(&text)
                .to_string()
        }
        _ => {
            return Err(ConfigError::new(
                format!("{place}: give exactly one of `value`, `env` and `file`"),
                None,
            ))
        }
    };
    Ok(Secret(format!(
        "{}{raw}",
        v.prefix.as_deref().unwrap_or_default()
    )))
}

fn transport(u: &UpstreamFile) -> Result<Transport, ConfigError> {
    match (&u.command, &u.url) {
        (Some(c), None) if !c.is_empty() => Ok(Transport::Command(c.clone())),
        (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
            Ok(Transport::Url(url.clone()))
        }
        _ => Err(ConfigError::new(
            format!("upstream `{}` needs exactly one of `command` (a non-empty list) and `url` (http:// or https://)", u.name),
            None,
        )),
    }
}

/// The `[limits]` given, the defaults for the rest, each raised to the
/// least value that still lets the gateway work.
fn limits(l: &LimitsFile) -> Limits {
    let d = Limits::default();
    Limits {
        max_pages: l.max_pages.unwrap_or(d.max_pages).max(1),
        max_tools: l.max_tools.unwrap_or(d.max_tools).max(1),
        upstream_timeout: l
            .upstream_timeout_ms
            .map_or(d.upstream_timeout, Duration::from_millis),
        max_body_bytes: l.max_body_bytes.unwrap_or(d.max_body_bytes).max(1024),
        max_result_bytes: l.max_result_bytes.unwrap_or(d.max_result_bytes).max(1024),
        list_page_size: l.list_page_size.unwrap_or(d.list_page_size).max(1),
        max_connections: l.max_connections.unwrap_or(d.max_connections).max(1),
        header_timeout: l
            .header_timeout_ms
            .map_or(d.header_timeout, Duration::from_millis),
        relist_interval: l
            .relist_interval_ms
            .map_or(d.relist_interval, Duration::from_millis)
            .max(Duration::from_millis(100)),
    }
}

/// The `Host` headers accepted: those given, or the loopback names and the
/// public URL's host.
fn allowed_hosts(f: &File) -> Vec<String> {
    let mut allowed_hosts = f.allowed_hosts.clone().unwrap_or_else(|| {
        let mut h = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        if let Some(host) = f.public_url.as_deref().and_then(url_host) {
            h.push(host);
        }
        h
    });
    allowed_hosts.dedup();
    allowed_hosts
}

fn check(f: File, dir: &Path) -> Result<Config, ConfigError> {
    for c in &f.configurations {
        let path_safe = !c.is_empty()
            && c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !path_safe || c == "." || c == ".." {
            return Err(ConfigError::new(
                format!("configuration `{}` cannot be served at /mcp/NAME: a name of letters, digits, `-`, `_` and `.` can", toolgate_runtime::names::shown(c)),
                Some("serve it from a gateway of its own (`configuration = ...`)".into()),
            ));
        }
    }
    let path = |p: &str| dir.join(p);
    let source = table_source(&f, dir)?;
    let listen = listen_address(&f)?;
    let identity = identity(&f.identity, dir)?;
    check_exposure(listen, &identity)?;
    let pin = f.pin_definitions.unwrap_or(true);
    if pin && f.registry.is_none() {
        return Err(ConfigError::new(
            "tool definitions are pinned, and no `registry` says what they were when reviewed",
            Some("set `registry = \"registry.toml\"` (the registry the table was compiled from), or `pin-definitions = false`".into()),
        ));
    }
    let upstreams = upstreams(&f, dir)?;
    Ok(Config {
        listen,
        public_url: f.public_url.clone(),
        source,
        trusted_keys: f.trusted_keys.iter().map(|k| path(k)).collect(),
        configuration: f.configuration.clone(),
        configurations: {
            let mut all = vec![f.configuration.clone()];
            for c in &f.configurations {
                if !all.contains(c) {
                    all.push(c.clone());
                }
            }
            all
        },
        registry: if pin {
            f.registry.as_deref().map(path)
        } else {
            None
        },
        stealth: f.stealth,
        allowed_hosts: allowed_hosts(&f),
        allowed_origins: f.allowed_origins.clone(),
        decision_log: f.decision_log.as_deref().map(|p| {
            if p == "-" {
                p.to_string()
            } else {
                path(p).display().to_string()
            }
        }),
        identity,
        limits: limits(&f.limits),
        upstreams,
    })
}

/// The host of an `http(s)://host[:port]/...` URL.
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_string())
}

fn hex32(s: &str) -> Option<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn identity(i: &IdentityFile, dir: &Path) -> Result<IdentityMode, ConfigError> {
    let fixed = i.consumer.is_some() || i.role.is_some();
    match (&i.auth, &i.trusted_header, fixed) {
        (Some(a), None, false) => Ok(IdentityMode::Auth(dir.join(a))),
        (None, Some(h), false) => {
            let from = h
                .from
                .iter()
                .map(|a| {
                    a.parse().map_err(|_| {
                        ConfigError::new(
                            format!("`trusted-header.from`: `{a}` is not an IP address"),
                            None,
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let secret_sha256 = match &h.secret_sha256 {
                None => None,
                Some(s) => Some(hex32(s).ok_or_else(|| {
                    ConfigError::new(
                        "`trusted-header.secret-sha256` is not 64 hex digits",
                        Some("the SHA-256 of the secret, never the secret: printf %s \"$SECRET\" | sha256sum".into()),
                    )
                })?),
            };
            if from.is_empty() && secret_sha256.is_none() {
                return Err(ConfigError::new(
                    "a trusted header must say what it is trusted from: `from` (the proxy's addresses) or `secret-sha256`",
                    None,
                ));
            }
            Ok(IdentityMode::Header(TrustedHeader {
                consumer: h.consumer.to_ascii_lowercase(),
                role: h.role.as_ref().map(|r| r.to_ascii_lowercase()),
                from,
                secret_sha256,
                secret_header: h
                    .secret_header
                    .clone()
                    .unwrap_or_else(|| "x-toolgate-proxy-secret".into())
                    .to_ascii_lowercase(),
            }))
        }
        (None, None, _) => {
            if i.consumer.as_deref() == Some("") {
                return Err(ConfigError::new("`identity.consumer` is empty", None));
            }
            Ok(IdentityMode::Fixed {
                consumer: i.consumer.clone(),
                role: role_named(i.role.as_deref().unwrap_or("user"))?,
            })
        }
        _ => Err(ConfigError::new(
            "`[identity]` takes one of `auth`, `trusted-header`, or `consumer`/`role`",
            Some(
                "a token's or a trusted proxy's word and a fixed identity cannot both apply".into(),
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "configuration = \"c\"\ntable = \"t.tgt\"\nregistry = \"r.toml\"\n[identity]\nconsumer = \"bot\"\n[[upstream]]\nname = \"git\"\ncommand = [\"mcp-server-git\"]\n";

    #[test]
    fn a_plain_file_gives_loopback_pins_and_the_defaults() {
        let c = Config::from_toml(BASE, Path::new("/etc/gw")).expect("valid");
        assert_eq!(c.listen.to_string(), "127.0.0.1:8800");
        assert_eq!(c.source, TableSource::Table("/etc/gw/t.tgt".into()));
        assert_eq!(c.registry, Some("/etc/gw/r.toml".into()));
        assert_eq!(
            c.identity,
            IdentityMode::Fixed {
                consumer: Some("bot".into()),
                role: Role::User
            }
        );
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert!(c.allowed_origins.is_empty());
    }

    #[test]
    fn a_missing_identity_says_what_to_write() {
        let text = BASE.replace("[identity]\nconsumer = \"bot\"\n", "");
        let e = Config::from_toml(&text, Path::new(".")).unwrap_err();
        assert_eq!(e.message, "missing field `identity`");
        assert!(
            e.help.as_deref().is_some_and(|h| h.starts_with(
                "add `[identity]` with how callers are known: `auth = \"credentials.toml\"`"
            )),
            "{e:?}"
        );
    }

    #[test]
    fn upstream_secrets_come_from_where_they_are_named_and_show_nowhere() {
        let dir = std::env::temp_dir().join(format!("tg-gw-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("token"), "t0ken\n").unwrap();
        let text = format!(
            "{BASE}[[upstream]]\nname = \"hosted\"\nurl = \"https://mcp.example/mcp\"\nheaders = {{ Authorization = {{ file = \"token\", prefix = \"Bearer \" }}, X-Region = {{ value = \"eu\" }} }}\n"
        );
        let c = Config::from_toml(&text, &dir).expect("valid");
        let h = &c.upstreams[1].headers;
        assert_eq!(h[0].0, "Authorization");
        assert_eq!(h[0].1.expose(), "Bearer t0ken");
        assert_eq!(
            format!("{h:?}"),
            "[(\"Authorization\", Secret(<12 bytes>)), (\"X-Region\", Secret(<2 bytes>))]"
        );
        // Headers on a command, env on a URL, two sources, a reserved header.
        for (bad, said) in [
            (
                "command = [\"x\"]\nheaders = { A = { value = \"v\" } }",
                "`headers` are for a `url` upstream",
            ),
            (
                "url = \"http://h/mcp\"\nenv = { A = { value = \"v\" } }",
                "`env` and `cwd` are for a `command` upstream",
            ),
            (
                "url = \"http://h/mcp\"\nheaders = { A = { value = \"v\", env = \"E\" } }",
                "give exactly one of `value`, `env` and `file`",
            ),
            (
                "url = \"http://h/mcp\"\nheaders = { Mcp-Session-Id = { value = \"v\" } }",
                "is not a header the gateway may set",
            ),
            (
                "url = \"http://h/mcp\"\nheaders = { A = { env = \"TG_SURELY_UNSET_VAR\" } }",
                "the environment variable `TG_SURELY_UNSET_VAR` is not set",
            ),
        ] {
            let text = format!("{BASE}[[upstream]]\nname = \"x\"\n{bad}\n");
            let e = Config::from_toml(&text, &dir).unwrap_err();
            assert!(e.message.contains(said), "{bad}: {}", e.message);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn what_would_open_access_is_an_error_with_a_place_and_a_fix() {
        let e = Config::from_toml(&format!("lisen = \"0.0.0.0:1\"\n{BASE}"), Path::new("."))
            .unwrap_err();
        assert_eq!(e.at, Some((1, 1)));
        assert_eq!(e.help.as_deref(), Some("did you mean `listen`?"));
        assert!(
            e.message.starts_with("unknown field `lisen`"),
            "{}",
            e.message
        );
        let e = Config::from_toml(
            &format!("listen = \"0.0.0.0:8800\"\n{BASE}"),
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "refusing to listen on 0.0.0.0:8800: not a loopback address, and nothing authenticates the clients"
        );
        let e = Config::from_toml(&BASE.replace("registry = \"r.toml\"\n", ""), Path::new("."))
            .unwrap_err();
        assert_eq!(
            e.message,
            "tool definitions are pinned, and no `registry` says what they were when reviewed"
        );
        let e =
            Config::from_toml(&BASE.replace("\"git\"", "\"git.hub\""), Path::new(".")).unwrap_err();
        assert_eq!(
            e.message,
            "upstream name `git.hub` is not valid: it contains `.`, outside [a-zA-Z0-9_-]"
        );
        let e = Config::from_toml(
            &BASE.replace(
                "consumer = \"bot\"",
                "consumer = \"bot\"\nauth = \"a.toml\"",
            ),
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "`[identity]` takes one of `auth`, `trusted-header`, or `consumer`/`role`"
        );
        let header = BASE.replace(
            "consumer = \"bot\"",
            "[identity.trusted-header]\nconsumer = \"X-Consumer\"",
        );
        let e = Config::from_toml(&header, Path::new(".")).unwrap_err();
        assert_eq!(
            e.message,
            "a trusted header must say what it is trusted from: `from` (the proxy's addresses) or `secret-sha256`"
        );
        let ok = Config::from_toml(
            &header.replace("\"X-Consumer\"", "\"X-Consumer\"\nfrom = [\"10.0.0.7\"]"),
            Path::new("."),
        )
        .expect("valid");
        let IdentityMode::Header(h) = ok.identity else {
            panic!("a header identity")
        };
        assert_eq!((h.consumer.as_str(), h.from.len()), ("x-consumer", 1));
    }
}

/// The JSON Schema of the configuration file (docs/gateway-config.schema.json).
pub fn schema() -> String {
    let mut text = serde_json::to_string_pretty(&schemars::schema_for!(File)).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod schema_tests {
    #[test]
    fn the_committed_schema_is_the_configurations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/gateway-config.schema.json");
        let want = super::schema();
        if std::env::var_os("UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &want).expect("written");
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/gateway-config.schema.json is not the configuration's schema: run UPDATE_SCHEMAS=1 cargo test -p toolgate-gateway"
        );
    }
}

#[cfg(test)]
mod docs_tests {
    /// Every TOML example of docs/gateway.md that is a whole file (it
    /// names `configuration`) is a valid configuration.
    #[test]
    fn the_documented_configurations_are_valid() {
        let doc = include_str!("../../docs/gateway.md");
        let mut checked = 0;
        for block in doc.split("```toml\n").skip(1) {
            let text = block.split("```").next().unwrap_or_default();
            if !text.contains("configuration = ") {
                continue;
            }
            super::Config::from_toml(text, std::path::Path::new("/srv"))
                .unwrap_or_else(|e| panic!("{}\n{text}", e.render(std::path::Path::new("docs"))));
            checked += 1;
        }
        assert_eq!(checked, 1);
    }
}
