//! The gateway's configuration file (TOML; docs/gateway.md, the JSON
//! Schema in docs/gateway-config.schema.json). Read strictly: an
//! unknown key is an error with its line and a "did you mean", never
//! ignored, and every rule that keeps access closed is checked here, before
//! anything connects.
//!
//! | module | holds |
//! | --- | --- |
//! | [`file`] | the file as written (serde and the JSON Schema; the key list derives from it) |
//! | [`check`] | the checks from the file to a [`Config`] |
//! | [`error`] | [`ConfigError`]: where, what, and how to fix it |

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toolgate_runtime::names::did_you_mean;
use toolgate_runtime::Role;

mod check;
mod error;
pub mod file;

pub use error::ConfigError;
pub use file::{
    schema, ApprovalsFile, ConfigFile, IdentityFile, LimitsFile, TelemetryFile, TrustedHeaderFile,
    UpstreamFile, ValueFrom,
};

/// The largest configuration file read.
const MAX_FILE: u64 = 1 << 20;

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
    /// Keep connections to a `url` upstream alive between requests.
    pub keep_alive: bool,
    /// The MCP revision spoken to it.
    pub protocol: file::UpstreamProtocol,
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
pub struct GatewayLimits {
    pub max_pages: usize,
    pub max_tools: usize,
    pub upstream_timeout: Duration,
    pub max_body_bytes: usize,
    pub max_result_bytes: usize,
    pub list_page_size: usize,
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub relist_interval: Duration,
    pub session_idle: Duration,
}

impl Default for GatewayLimits {
    fn default() -> GatewayLimits {
        GatewayLimits {
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
            // The MCP SDK's own default for a session's worker.
            session_idle: Duration::from_secs(300),
        }
    }
}

/// `[approvals]`, checked (docs/approvals.md, "At the gateway").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalSettings {
    pub ask_caller: bool,
    pub expiry: Duration,
    pub max_pending: usize,
    pub signing_key: Option<PathBuf>,
}

impl Default for ApprovalSettings {
    fn default() -> ApprovalSettings {
        ApprovalSettings {
            ask_caller: true,
            expiry: Duration::from_secs(600),
            max_pending: 1024,
            signing_key: None,
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
    pub limits: GatewayLimits,
    pub approvals: ApprovalSettings,
    pub telemetry: toolgate_service::telemetry::TelemetryConfig,
    pub upstreams: Vec<Upstream>,
}

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
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            let message = e.message().to_string();
            let help = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .and_then(|k| did_you_mean(k, file::keys().iter().map(String::as_str)))
                .map(|k| format!("did you mean `{k}`?"))
                .or_else(|| {
                    message
                        .strip_prefix("missing field `")
                        .and_then(|rest| rest.split('`').next())
                        .and_then(error::missing_field_help)
                        .map(str::to_string)
                });
            ConfigError {
                at: e.span().map(|s| error::line_col(text, s.start)),
                message,
                help,
            }
        })?;
        check::check(file, dir)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
