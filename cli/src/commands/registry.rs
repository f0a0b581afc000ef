//! `registry import-mcp` and `registry sync`: an MCP server's tools (and a live
//! server's prompts), from a
//! captured `tools/list` answer or from the live server, into the registry.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use toolgate_compiler::diagnostics::{Diagnostic, Problem};
use toolgate_compiler::mcp_sync::{self, Drift};
use toolgate_compiler::project::Project;
use toolgate_compiler::registry::{self, Registry};
use toolgate_compiler::{report, source::SourceMap};

use super::{OutFormat, Res};
use crate::io::{read_file, write_atomic, write_err, write_out, Failure};
use crate::mcp_client::{self, Endpoint};

#[derive(Subcommand)]
pub enum RegistryCommand {
    /// Turn an MCP server's tools and prompts (a captured tools/list answer, or the live server) into registry entries.
    ImportMcp(ImportArgs),
    /// Compare the registry with an MCP server's tools and prompts: new, removed and changed ones (--write, --check).
    Sync(SyncArgs),
    /// Print the pinned definition digest of every remote tool (JSON: registry name -> sha256:...),
    /// as the gateways compare a server's listing with it (docs/gateway.md, "Pinned definitions").
    Pins(PinsArgs),
}

#[derive(Args)]
pub struct PinsArgs {
    /// The project whose registry is read (its toolgate.toml names the registry).
    #[arg(short, long, default_value = ".")]
    project: PathBuf,
    /// Write here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// `registry pins`: the pins a proxy without a registry reader (the Python
/// package's `toolgate.mcp`, `pins=FILE`) is given.
fn pins(a: PinsArgs) -> Res {
    let project = Project::load(&a.project)?;
    let Some((registry, problems)) = project.registry_as_loaded() else {
        return Err(Failure::Usage(format!(
            "{}: the project has no registry",
            a.project.display()
        )));
    };
    if !problems.is_empty() {
        report_problems(&project.sources, problems);
        write_err("registry pins: fix the registry's errors first\n");
        return Ok(1);
    }
    let pins: serde_json::Map<String, serde_json::Value> = registry
        .tools
        .iter()
        .filter(|t| t.is_remote())
        .map(|t| (t.name.clone(), registry::definition_digest(t).into()))
        .collect();
    let mut text = serde_json::to_string_pretty(&pins).unwrap_or_default();
    text.push('\n');
    match &a.output {
        Some(path) => write_atomic(path, text.as_bytes())?,
        None => write_out(&text),
    }
    Ok(0)
}

pub fn run(c: RegistryCommand) -> Res {
    match c {
        RegistryCommand::ImportMcp(a) => import_mcp(a),
        RegistryCommand::Sync(a) => sync(a),
        RegistryCommand::Pins(a) => pins(a),
    }
}

/// Where the `tools/list` answer comes from: exactly one of a file, a URL or
/// a command.
#[derive(Args)]
#[group(id = "source", required = true, multiple = false)]
pub struct McpSource {
    /// A captured tools/list answer (a bare result or a JSON-RPC response).
    pub file: Option<PathBuf>,
    /// Ask a live server over streamable HTTP (plain http://), e.g. http://127.0.0.1:8000/mcp.
    #[arg(long)]
    pub url: Option<String>,
    /// Start a live server and ask it over stdio: the command and its arguments after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The server both commands ask: its name, where its answer comes from, and
/// how long a live server may take.
#[derive(Args)]
pub struct McpServer {
    /// The MCP server's name; tools become `mcp_<server>_<remote>` in group `mcp_<server>`.
    #[arg(long)]
    server: String,
    #[command(flatten)]
    source: McpSource,
    /// Seconds the whole exchange with a live server may take (start-up, handshake, every page).
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
}

#[derive(Args)]
pub struct ImportArgs {
    #[command(flatten)]
    mcp: McpServer,
    #[arg(long, value_enum, default_value = "toml")]
    format: RegistryFormat,
    /// Write here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RegistryFormat {
    Toml,
    Json,
}

#[derive(Args)]
pub struct SyncArgs {
    /// The project whose registry is compared (its toolgate.toml names the registry).
    #[arg(short, long, default_value = ".")]
    project: PathBuf,
    #[command(flatten)]
    mcp: McpServer,
    /// Write the updated registry over the project's registry file.
    #[arg(long, conflicts_with = "check")]
    write: bool,
    /// For CI: exit 1 when the registry and the server differ (nothing is written).
    #[arg(long)]
    check: bool,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// The answer's text and the name it is shown under in diagnostics.
fn answer(mcp: &McpServer) -> Result<(String, String), Failure> {
    let (src, timeout) = (&mcp.source, mcp.timeout);
    let endpoint = match (&src.file, &src.url) {
        (Some(f), _) => {
            let text = String::from_utf8(read_file(f)?)
                .map_err(|_| Failure::Usage(format!("{}: not UTF-8", f.display())))?;
            return Ok((f.display().to_string(), text));
        }
        (None, Some(u)) => {
            if !u.starts_with("http://") {
                return Err(Failure::Usage(format!(
                    "--url {u}: only plain http:// endpoints are supported (no TLS is built in); \
                     reach an https server through a local proxy, or capture its tools/list into a file"
                )));
            }
            Endpoint::Url(u.clone())
        }
        (None, None) => Endpoint::Command(src.command.clone()),
    };
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
        return Err(Failure::Usage(format!(
            "--timeout {timeout}: give a number of seconds above 0 and at most 3600"
        )));
    }
    let text =
        mcp_client::list(&endpoint, Duration::from_secs_f64(timeout)).map_err(Failure::Usage)?;
    Ok((format!("tools/list of {endpoint}"), text))
}

fn render(reg: &Registry, format: RegistryFormat) -> String {
    match format {
        RegistryFormat::Toml => registry::to_toml(reg),
        RegistryFormat::Json => registry::to_json(reg) + "\n",
    }
}

fn report_problems(sources: &SourceMap, problems: &[Problem]) {
    let diags: Vec<Diagnostic> = problems.iter().map(|p| p.diagnostic()).collect();
    write_err(&report::human(sources, &diags, false));
}

/// A finding that stops the import or sync before anything is written: the
/// server's list holds a name twice (TG4006), or a name another server's
/// tool holds (TG4007).
fn refuses(p: &Problem) -> bool {
    matches!(
        p,
        Problem::ServerListsTwice { .. } | Problem::RemoteNameCollision { .. }
    )
}

fn import_mcp(a: ImportArgs) -> Res {
    let (name, text) = answer(&a.mcp)?;
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    let (reg, problems) = registry::import_mcp(id, &sources.get(id).text, &a.mcp.server);
    if problems.iter().any(refuses) {
        report_problems(&sources, &problems);
        return Ok(1);
    }
    let out = render(&reg, a.format);
    match &a.output {
        Some(p) => write_atomic(p, out.as_bytes())?,
        None => write_out(&out),
    }
    if problems.is_empty() {
        return Ok(0);
    }
    report_problems(&sources, &problems);
    Ok(1)
}

fn sync(a: SyncArgs) -> Res {
    let mut project = Project::load(&a.project)?;
    let Some((current, reg_problems)) = project.registry_as_loaded().cloned() else {
        return Err(Failure::Usage(format!(
            "{}: the project has no registry",
            a.project.display()
        )));
    };
    if !reg_problems.is_empty() {
        report_problems(&project.sources, &reg_problems);
        write_err("registry sync: fix the registry's errors first\n");
        return Ok(1);
    }
    let (name, text) = answer(&a.mcp)?;
    // The answer joins the project's sources, so a finding about one of its
    // tools can point at the registry's tool too (TG4007).
    let id = project.sources.add(name, text);
    let (live, import_problems) =
        registry::import_mcp(id, &project.sources.get(id).text, &a.mcp.server);
    if import_problems
        .iter()
        .any(|p| matches!(p, Problem::RegistryInvalid { .. }) || refuses(p))
        || registry::remote_name_problem(&a.mcp.server).is_some()
    {
        // Not a tools/list answer, no server name, or a list no registry
        // can hold: nothing to compare with.
        report_problems(&project.sources, &import_problems);
        return Ok(1);
    }
    let collisions = mcp_sync::collisions(&current, &a.mcp.server, &live);
    if !collisions.is_empty() {
        report_problems(&project.sources, &collisions);
        write_err(&format!(
            "registry sync: {} of server {}'s tools take names the registry gives other tools; nothing compared or written\n",
            collisions.len(),
            a.mcp.server
        ));
        return Ok(1);
    }
    let (drift, updated) = mcp_sync::sync(&current, &a.mcp.server, &live);
    let stale = mcp_sync::stale_statements(&mut project, updated.clone(), &drift);
    let target = project.registry_path().map(PathBuf::from);
    let mut written = None;
    if a.write && !drift.is_empty() {
        let Some(path) = &target else {
            return Err(Failure::Usage(
                "registry sync --write: the registry lies outside the project; it is not written"
                    .into(),
            ));
        };
        let format = if path.extension().is_some_and(|e| e == "json") {
            RegistryFormat::Json
        } else {
            RegistryFormat::Toml
        };
        write_atomic(path, render(&updated, format).as_bytes())?;
        written = Some(path.clone());
    }
    let registry_shown = target
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the registry".into());
    match a.format {
        OutFormat::Text => write_out(&text_report(
            &drift,
            &stale,
            &project.sources,
            written.is_some(),
            &registry_shown,
        )),
        OutFormat::Json => write_out(&format!(
            "{:#}\n",
            json_report(&drift, &stale, &project.sources, written.is_some())
        )),
    }
    if !import_problems.is_empty() {
        report_problems(&project.sources, &import_problems);
        return Ok(1);
    }
    Ok(u8::from(a.check && !drift.is_empty()))
}

/// `file:line:col`, the code and the message of a stale statement.
fn statement(p: &Problem, sources: &SourceMap) -> (String, usize, usize, &'static str, String) {
    let d = p.diagnostic();
    let file = sources.get(d.span.file);
    let (line, col) = file.line_col(d.span.start as usize);
    (file.name.clone(), line, col, d.code, d.message)
}

/// The statements by the name they name (a removed tool, or the server's
/// group): one pass, so a report is linear in the removed tools and the
/// statements.
fn by_name(stale: &[Problem]) -> HashMap<&str, Vec<&Problem>> {
    let mut out: HashMap<&str, Vec<&Problem>> = HashMap::new();
    for p in stale {
        if let Problem::Unknown { name, .. }
        | Problem::StaleExclusion { name, .. }
        | Problem::ExclusionTypo { name, .. } = p
        {
            out.entry(name.as_str()).or_default().push(p);
        }
    }
    out
}

fn statements_of<'p>(
    named: &'p HashMap<&str, Vec<&'p Problem>>,
    name: &str,
) -> impl Iterator<Item = &'p Problem> + 'p {
    named.get(name).into_iter().flatten().copied()
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn text_report(
    drift: &Drift,
    stale: &[Problem],
    sources: &SourceMap,
    written: bool,
    registry_shown: &str,
) -> String {
    use std::fmt::Write as _;
    let named = by_name(stale);
    let mut s = String::new();
    if drift.is_empty() {
        let _ = writeln!(s, "server {}: no drift", drift.server);
        return s;
    }
    let _ = writeln!(
        s,
        "server {}: {} new, {} removed, {} changed; descriptor bytes {}",
        drift.server,
        drift.added.len(),
        drift.removed.len(),
        drift.changed.len(),
        signed(drift.descriptor_delta())
    );
    if !drift.added.is_empty() {
        let _ = writeln!(
            s,
            "new (disabled and admin-only until the policy says otherwise; no class):"
        );
        for t in &drift.added {
            let _ = writeln!(s, "  + {}  {} bytes", t.name, t.descriptor_bytes);
        }
    }
    if !drift.removed.is_empty() {
        let _ = writeln!(s, "removed:");
        for t in &drift.removed {
            let _ = writeln!(s, "  - {}  {} bytes", t.name, t.descriptor_bytes);
            for p in statements_of(&named, &t.name) {
                let (file, line, col, code, message) = statement(p, sources);
                let _ = writeln!(s, "      named at {file}:{line}:{col}: {code} {message}");
            }
        }
    }
    let group = format!("mcp_{}", drift.server);
    for p in statements_of(&named, &group) {
        let (file, line, col, code, message) = statement(p, sources);
        let _ = writeln!(
            s,
            "  group {group} is gone, named at {file}:{line}:{col}: {code} {message}"
        );
    }
    if !drift.changed.is_empty() {
        let _ = writeln!(s, "changed:");
        for c in &drift.changed {
            let _ = writeln!(
                s,
                "  ~ {}  {}  {} -> {} bytes ({})",
                c.name,
                c.fields.join(", "),
                c.descriptor_bytes_before,
                c.descriptor_bytes_after,
                signed(c.descriptor_bytes_after as i64 - c.descriptor_bytes_before as i64)
            );
        }
    }
    let p = &drift.prompts;
    if !p.is_empty() {
        let _ = writeln!(
            s,
            "prompts: {} new, {} removed, {} changed (a new or changed prompt is withheld by the gateway until this is written)",
            p.added.len(),
            p.removed.len(),
            p.changed.len()
        );
        for name in &p.added {
            let _ = writeln!(s, "  + {name}");
        }
        for name in &p.removed {
            let _ = writeln!(s, "  - {name}");
        }
        for c in &p.changed {
            let _ = writeln!(s, "  ~ {}  {}", c.name, c.fields.join(", "));
        }
    }
    if written {
        let _ = writeln!(s, "wrote {registry_shown}");
    } else {
        let _ = writeln!(s, "{registry_shown} not written (use --write to update it)");
    }
    s
}

fn json_report(
    drift: &Drift,
    stale: &[Problem],
    sources: &SourceMap,
    written: bool,
) -> serde_json::Value {
    let named = by_name(stale);
    let statements = |name: &str| -> Vec<mcp_sync::Statement> {
        statements_of(&named, name)
            .map(|p| {
                let (file, line, column, code, message) = statement(p, sources);
                mcp_sync::Statement {
                    file,
                    line,
                    column,
                    code,
                    message,
                }
            })
            .collect()
    };
    let removed = drift
        .removed
        .iter()
        .map(|r| mcp_sync::RemovedReport {
            name: r.name.clone(),
            descriptor_bytes: r.descriptor_bytes,
            statements: statements(&r.name),
        })
        .collect();
    serde_json::to_value(mcp_sync::SyncReport {
        server: &drift.server,
        drift: !drift.is_empty(),
        added: &drift.added,
        removed,
        group_statements: statements(&format!("mcp_{}", drift.server)),
        changed: &drift.changed,
        descriptor_bytes_delta: drift.descriptor_delta(),
        prompts: &drift.prompts,
        written,
    })
    .unwrap_or_default()
}
