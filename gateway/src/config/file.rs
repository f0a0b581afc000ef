//! The file as written: what serde reads (unknown keys refused) and what
//! the JSON Schema describes; the keys a "did you mean" draws on are the
//! schema's, so they cannot drift from the structs.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::Deserialize;

/// The file as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(rename = "File")]
pub struct ConfigFile {
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
    /// How a call of a tool that needs a person's approval is approved
    /// (docs/approvals.md, "At the gateway").
    #[serde(default)]
    pub approvals: ApprovalsFile,
    /// OpenTelemetry export (docs/observability.md).
    #[serde(default)]
    pub telemetry: TelemetryFile,
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
    /// A session (revision 2025-11-25 and before) with nothing from its
    /// client, nor sent to it, for this long is ended (ms, default 300000).
    pub session_idle_ms: Option<u64>,
}

/// `[telemetry]`: OTLP export of traces, metrics and decision log records.
/// Without `endpoint`, the standard `OTEL_EXPORTER_OTLP_*` variables turn it
/// on and say where.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TelemetryFile {
    /// The collector's base address (`http://127.0.0.1:4318`, or `:4317`
    /// for gRPC); it turns export on.
    pub endpoint: Option<String>,
    /// `http/protobuf` (default) or `grpc`.
    pub protocol: Option<String>,
    /// `service.name` (default `toolgate-gateway`; `OTEL_SERVICE_NAME` wins).
    pub service_name: Option<String>,
    /// Put the names of tools a caller may not see into spans and log
    /// records too (default false: they are left out, or `(hidden)`).
    pub true_names: Option<bool>,
    /// Put a call's arguments into its span (default false).
    pub record_arguments: Option<bool>,
}

/// `[approvals]`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ApprovalsFile {
    /// Ask the caller's own user through its MCP client (elicitation, or
    /// on 2026-07-28 an `InputRequiredResult`) when the client can ask
    /// (default true). `false`: only an approver at `/approvals` approves.
    pub ask_caller: Option<bool>,
    /// How long a question waits for its answer, and a grant lasts once
    /// given (seconds, default 600, at most 86400).
    pub expiry_seconds: Option<u64>,
    /// Questions waiting for an approver at once (default 1024): beyond
    /// it a call that needs approval is refused, never let through.
    pub max_pending: Option<usize>,
    /// The Ed25519 secret key (PEM, `toolgate keygen`) grants are signed
    /// with, so the decision log's grants can be checked later. Default: a
    /// key made at start, known to this process only.
    pub signing_key: Option<String>,
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
    /// Keep connections to a `url` upstream alive between requests
    /// (default true; at most 32 idle, each for 4 s). An upstream server
    /// that writes an answer in parts without TCP_NODELAY holds each answer
    /// on a kept-alive connection for the gateway's delayed ACK (about
    /// 40 ms): set TCP_NODELAY there, or `false` here (a connection per
    /// request).
    pub keep_alive: Option<bool>,
    /// The MCP revision the gateway speaks to this upstream:
    /// `"2025-11-25"` (the default: the `initialize` handshake, and the
    /// upstream's log messages and resource updates on its stream),
    /// `"2026-07-28"` (`server/discover`, per-request capabilities,
    /// multi round-trip requests; the upstream must offer it) or `"auto"`
    /// (2026-07-28 when the upstream offers it, else 2025-11-25).
    pub protocol: Option<UpstreamProtocol>,
}

/// `protocol` of an `[[upstream]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum UpstreamProtocol {
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
    #[serde(rename = "auto")]
    Auto,
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

/// The JSON Schema of the configuration file (docs/gateway-config.schema.json).
pub fn schema() -> String {
    let mut text =
        serde_json::to_string_pretty(&schemars::schema_for!(ConfigFile)).unwrap_or_default();
    text.push('\n');
    text
}

/// Every key a table of the file may hold (each `properties` name of the
/// schema, nested tables included), for "did you mean".
pub fn keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let schema = serde_json::to_value(schemars::schema_for!(ConfigFile)).unwrap_or_default();
        let mut out = Vec::new();
        collect_keys(&schema, &mut out);
        out.sort();
        out.dedup();
        out
    })
}

fn collect_keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            for x in m.values() {
                collect_keys(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
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
