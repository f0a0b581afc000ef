//! The checks from the file as written to a [`Config`]: every rule that
//! keeps access closed, before anything connects.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use toolgate_runtime::names::remote_name_problem;
use toolgate_runtime::Role;
use toolgate_service::telemetry::{OtlpProtocol, TelemetryConfig};

use super::*;

fn role_named(name: &str) -> Result<Role, ConfigError> {
    Role::from_name(name)
        .ok_or_else(|| ConfigError::new(format!("role `{name}` is not admin, user or none"), None))
}

/// Where the table comes from: exactly one of `table`, `project` and `oci`.
fn table_source(f: &ConfigFile, dir: &Path) -> Result<TableSource, ConfigError> {
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

fn listen_address(f: &ConfigFile) -> Result<SocketAddr, ConfigError> {
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
fn upstreams(f: &ConfigFile, dir: &Path) -> Result<Vec<Upstream>, ConfigError> {
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
            keep_alive: u.keep_alive.unwrap_or(true),
            protocol: u.protocol.unwrap_or(file::UpstreamProtocol::V2025_11_25),
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
fn limits(l: &LimitsFile) -> GatewayLimits {
    let d = GatewayLimits::default();
    GatewayLimits {
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
        session_idle: l
            .session_idle_ms
            .map_or(d.session_idle, Duration::from_millis)
            .max(Duration::from_millis(100)),
    }
}

/// `[approvals]`: the defaults for what is not given; an expiry of 0 or
/// beyond a day, or room for no question, is an error.
fn approvals(a: &ApprovalsFile, dir: &Path) -> Result<ApprovalSettings, ConfigError> {
    let d = ApprovalSettings::default();
    let expiry = a.expiry_seconds.map_or(d.expiry, Duration::from_secs);
    if expiry.is_zero() || expiry > Duration::from_secs(86_400) {
        return Err(ConfigError::new(
            format!(
                "[approvals] expiry-seconds = {}: a question and a grant last from 1 second to a day",
                expiry.as_secs()
            ),
            Some("set `expiry-seconds` between 1 and 86400 (default 600)".into()),
        ));
    }
    if a.max_pending == Some(0) {
        return Err(ConfigError::new(
            "[approvals] max-pending = 0: no call that needs approval could wait for an approver",
            Some("set `max-pending` to 1 or more (default 1024), or `ask-caller = true` and leave it out".into()),
        ));
    }
    Ok(ApprovalSettings {
        ask_caller: a.ask_caller.unwrap_or(d.ask_caller),
        expiry,
        max_pending: a.max_pending.unwrap_or(d.max_pending),
        signing_key: a.signing_key.as_deref().map(|p| dir.join(p)),
    })
}

/// The `Host` headers accepted: those given, or the loopback names and the
/// public URL's host.
fn allowed_hosts(f: &ConfigFile) -> Vec<String> {
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

pub(super) fn check(f: ConfigFile, dir: &Path) -> Result<Config, ConfigError> {
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
        approvals: approvals(&f.approvals, dir)?,
        telemetry: telemetry(&f.telemetry)?,
        upstreams,
    })
}

/// `[telemetry]` over the standard environment: the file's endpoint turns
/// export on; what it leaves out the `OTEL_*` variables say.
fn telemetry(t: &TelemetryFile) -> Result<TelemetryConfig, ConfigError> {
    let service = t.service_name.as_deref().unwrap_or("toolgate-gateway");
    let mut c = TelemetryConfig::from_env(service)
        .map_err(|e| ConfigError::new(format!("OTEL_EXPORTER_OTLP_PROTOCOL: {e}"), None))?;
    if let Some(p) = &t.protocol {
        c.protocol = OtlpProtocol::parse(p)
            .map_err(|e| ConfigError::new(format!("[telemetry] protocol: {e}"), None))?;
    }
    if let Some(e) = &t.endpoint {
        if !(e.starts_with("http://") || e.starts_with("https://")) {
            return Err(ConfigError::new(
                format!("[telemetry] endpoint `{e}` is not an http:// or https:// URL"),
                None,
            ));
        }
        c.endpoint = Some(e.clone());
        c.enabled = true;
    }
    c.true_names = t.true_names.unwrap_or(false);
    c.record_arguments = t.record_arguments.unwrap_or(false);
    Ok(c)
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
