//! The runtime queries for one context: `decide`, `explain`, `unavailable`,
//! `simulate`, `offered`.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use toolgate_compiler::{registry, report, syntax::source::SourceMap};
use toolgate_review::readout::Explained;
use toolgate_runtime::names::escape;
use toolgate_runtime::{
    Context, Decision, GateOutcome, LiveTool, LiveToolSpec, Reason, Role, Table,
};

use super::{did_you_mean, load_table, stored_run, OutFormat, Res};
use crate::io::{paint, read_file, style, write_err, write_out, write_styled, Failure};

/// Where the table comes from, and who is asking.
#[derive(Args, Clone)]
pub struct ContextArgs {
    /// Project directory, compiled in memory (ignored with --table).
    #[arg(long, short = 'p', default_value = ".")]
    project: PathBuf,
    /// A compiled table file instead of a project.
    #[arg(long)]
    table: Option<PathBuf>,
    /// The configuration of the run.
    #[arg(long = "config", short = 'c')]
    config: String,
    /// The user is an administrator.
    #[arg(long, conflicts_with = "no_user")]
    admin: bool,
    /// There is no user (counts as not admin).
    #[arg(long)]
    no_user: bool,
    /// The MCP consumer asking (held to its access profile).
    #[arg(long)]
    consumer: Option<String>,
    /// A stored run state (JSON) to hold the decision to.
    #[arg(long)]
    run: Option<PathBuf>,
    /// The host's trust-zone enforcement setting; only `observe` observes.
    #[arg(long)]
    enforcement: Option<String>,
    #[command(flatten)]
    out: super::OutputArg,
}

#[derive(Args)]
pub struct DecideArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    /// The tool to decide.
    tool: String,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    /// Print the typed refusal (JSON: kind, class, retryable, action, remediation, model text) when refused.
    #[arg(long)]
    refusal: bool,
    #[command(flatten)]
    log: LogArg,
    #[command(flatten)]
    live: LiveArg,
}

/// `--log FILE`: append each decision to a decision log (docs/decision-log.md).
#[derive(Args)]
pub struct LogArg {
    /// Append the decisions to this decision log (JSON lines, the runtime record of docs/decision-log.md; `toolgate stats` reads it).
    #[arg(long = "log", value_name = "FILE")]
    log_file: Option<PathBuf>,
}

impl LogArg {
    /// Append `decisions`, made in `ctx`, as runtime records: every one,
    /// hidden names included (a dashboard leaves out `nameVisible: false`).
    fn write<'a>(
        &self,
        ctx: &Context<'_>,
        decisions: impl IntoIterator<Item = &'a Decision<'a>>,
    ) -> Result<(), Failure> {
        let Some(path) = &self.log_file else {
            return Ok(());
        };
        let fail = |e: std::io::Error| Failure::Usage(format!("{}: {e}", path.display()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(fail)?;
        let mut log = toolgate_runtime::log::DecisionLog::new(std::io::BufWriter::new(file));
        for d in decisions {
            log.record(ctx, d).map_err(fail)?;
        }
        use std::io::Write as _;
        log.into_inner().flush().map_err(fail)
    }
}

/// `--live FILE`: tools registered after the table was compiled.
#[derive(Args)]
pub struct LiveArg {
    /// A registry fragment (TOML `[[tool]]` tables, or JSON) of tools registered after compilation: decided through the runtime's live-tool path.
    #[arg(long = "live", value_name = "FILE")]
    live_file: Option<PathBuf>,
}

impl LiveArg {
    /// The fragment's tools, as the runtime takes them. A fragment with
    /// errors is an input error: a live tool is never guessed.
    fn tools(&self) -> Result<Vec<LiveTool>, Failure> {
        let Some(path) = &self.live_file else {
            return Ok(Vec::new());
        };
        let text = String::from_utf8(read_file(path)?)
            .map_err(|_| Failure::Usage(format!("{}: not UTF-8", path.display())))?;
        let mut sources = SourceMap::new();
        let id = sources.add(path.display().to_string(), text);
        let is_json = path.extension().is_some_and(|e| e == "json");
        let (reg, problems) = registry::load(id, &sources.get(id).text, is_json);
        let diags: Vec<_> = problems.iter().map(|p| p.diagnostic()).collect();
        if !diags.is_empty() {
            return Err(Failure::Input(report::human(&sources, &diags, false)));
        }
        reg.tools
            .into_iter()
            .map(|t| {
                LiveTool::new(LiveToolSpec {
                    remote: matches!(t.origin, registry::Origin::Remote { .. }),
                    name: t.name,
                    group: t.group,
                    enabled: t.enabled,
                    admin_only: t.admin_only,
                    class: t.class,
                })
                .map_err(|e| Failure::Input(format!("{}: {e}\n", path.display())))
            })
            .collect()
    }
}

#[derive(Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    /// Tool names (registered or not).
    #[arg(required = true)]
    tools: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum UnavailableFormat {
    Text,
    Json,
    Prompt,
}

#[derive(Args)]
pub struct UnavailableArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    #[arg(long, value_enum, default_value = "text")]
    format: UnavailableFormat,
    #[command(flatten)]
    live: LiveArg,
}

#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    #[command(flatten)]
    log: LogArg,
    #[command(flatten)]
    live: LiveArg,
}

fn context<'t>(table: &'t Table, a: &ContextArgs) -> Result<Context<'t>, Failure> {
    let role = if a.admin {
        Role::Admin
    } else if a.no_user {
        Role::None
    } else {
        Role::User
    };
    warn_operator_typos(table, a);
    a.out.apply();
    let mut ctx = table
        .context(&a.config)?
        .role(role)
        .consumer(a.consumer.as_deref())
        .enforcement(a.enforcement.as_deref());
    if let Some(run) = &a.run {
        ctx = ctx.run(&stored_run(run)?);
    }
    Ok(ctx)
}

/// An operator's near miss warns on stderr; the answer stays as documented
/// (an unknown consumer is a consumer without a profile, a setting other
/// than `observe` enforces).
fn warn_operator_typos(table: &Table, a: &ContextArgs) {
    let spec = table.spec();
    if let Some(c) = &a.consumer {
        if !spec.consumers.iter().any(|k| &k.name == c) {
            write_err(&format!(
                "warning: no `consumer` block names `{c}`, so it is decided as a consumer without a profile{}\n",
                did_you_mean(c, spec.consumers.iter().map(|k| k.name.as_str()))
            ));
        }
    }
    if let Some(e) = &a.enforcement {
        let word = e.trim_matches([' ', '\t', '\n', '\r', '\0', '\x0B']);
        if !["observe", "enforce"]
            .iter()
            .any(|w| word.eq_ignore_ascii_case(w))
        {
            write_err(&format!(
                "warning: `--enforcement {e}` is neither `observe` nor `enforce`, so it enforces{}\n",
                did_you_mean(&word.to_ascii_lowercase(), ["observe", "enforce"])
            ));
        }
    }
}

/// One decision as a line for people, the verdict coloured under `--color`.
fn decision_text(d: &Decision<'_>) -> String {
    let tool = paint(style::HEAD, &escape(d.tool));
    match (d.allowed, d.reason) {
        (true, Some(Reason::TrustZone)) => format!(
            "{tool}: {} (observed only: class {} is above the ceiling {} of zone {})",
            paint(style::WARN, "offered"),
            paint(style::HEAD, d.class.unwrap_or("?")),
            paint(style::HEAD, d.ceiling.unwrap_or("?")),
            paint(style::HEAD, d.zone.unwrap_or("?"))
        ),
        (true, _) => format!("{tool}: {}", paint(style::GOOD, "offered")),
        (false, Some(r)) => format!(
            "{tool}: {}, {} ({})",
            paint(style::BAD, "refused"),
            r.code(),
            r.message()
        ),
        (false, None) => format!("{tool}: {}", paint(style::BAD, "refused")),
    }
}

pub fn decide(a: DecideArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let live = a.live.tools()?;
    let d = match live.iter().find(|t| t.name() == a.tool) {
        Some(t) => ctx.decide_live(t),
        None => ctx.decide(&a.tool),
    };
    a.log.write(&ctx, [&d])?;
    if a.refusal {
        match ctx.refusal(&d) {
            Some(r) => write_out(&format!("{}\n", serde_json::to_string_pretty(&r)?)),
            None => write_out("null\n"),
        }
        return Ok(u8::from(!d.allowed));
    }
    match a.format {
        // Text is for a person: a hidden remote name reads as unregistered.
        OutFormat::Text => write_styled(&format!("{}\n", decision_text(&ctx.shown(d)))),
        // JSON is for a host program: the true gate.
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string(&d)?)),
    }
    Ok(u8::from(!d.allowed))
}

pub fn explain(a: ExplainArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let names: Vec<&str> = a.tools.iter().map(String::as_str).collect();
    // `explain` shows to people: a hidden remote name reads as unregistered.
    let traces: Vec<_> = names.iter().map(|n| ctx.shown_trace(n)).collect();
    match a.format {
        OutFormat::Json => {
            let v: Vec<_> = traces.iter().map(Explained::of).collect();
            write_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
        }
        OutFormat::Text => {
            let mut out = String::new();
            for t in &traces {
                let _ = writeln!(out, "{}", decision_text(&t.decision));
                for (g, o) in &t.gates {
                    let mark = match o {
                        GateOutcome::Passed => paint(style::GOOD, "pass   "),
                        GateOutcome::Refused => paint(style::BAD, "REFUSE "),
                        GateOutcome::Observed => paint(style::WARN, "observe"),
                    };
                    let _ = writeln!(out, "  {mark} {}", g.code());
                }
            }
            write_styled(&out);
        }
    }
    Ok(0)
}

pub fn unavailable(a: UnavailableArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let live = a.live.tools()?;
    let list = ctx.unavailable_with(&live);
    match a.format {
        UnavailableFormat::Json => {
            write_out(&format!("{}\n", serde_json::to_string_pretty(&list)?))
        }
        UnavailableFormat::Prompt => write_out(&ctx.unavailable_prompt_with(&live)),
        UnavailableFormat::Text => {
            let mut out = String::new();
            for u in &list {
                let _ = writeln!(out, "{} {}", escape(u.tool), u.reason.code());
            }
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn simulate(a: SimulateArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    // For a person: the decisions as shown to this user, without the remote
    // tools whose names are hidden from them and refused. The note says the
    // rule, never how many it hid (a count would tell what exists).
    let live = a.live.tools()?;
    let mut all: Vec<Decision> = ctx.decisions().collect();
    // Live tools after the registered ones (a name the table has is the table's).
    all.extend(
        live.iter()
            .filter(|t| table.tool_id(t.name()).is_none())
            .map(|t| ctx.decide_live(t)),
    );
    a.log.write(&ctx, &all)?;
    let decisions: Vec<Decision> = all.into_iter().filter(|d| !ctx.hides(d)).collect();
    if !ctx.remote_names_visible() {
        crate::io::note("note: the policy's `remote-tools visible-to` rule hides refused remote tools from this user; run with --admin to see them\n");
    }
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&decisions)?)),
        OutFormat::Text => {
            let rows = decisions
                .iter()
                .map(|d| {
                    let offered = match (d.allowed, d.observed_only) {
                        (true, true) => "observed",
                        (true, false) => "yes",
                        _ => "no",
                    };
                    vec![
                        escape(d.tool).into_owned(),
                        offered.to_string(),
                        d.reason.map(Reason::code).unwrap_or("-").to_string(),
                        d.class.unwrap_or("-").to_string(),
                    ]
                })
                .collect();
            let mut out = crate::grid::grid(&["tool", "offered", "reason", "class"], &[], rows);
            let offered = decisions.iter().filter(|d| d.allowed).count();
            let _ = writeln!(
                out,
                "\n{offered} of {} tools offered to configuration {} ({}, {}, trust zone {})",
                decisions.len(),
                ctx.configuration_name(),
                ctx.user_role().as_str(),
                ctx.mode().as_str(),
                table.zone_name(
                    table
                        .configuration(ctx.configuration_name())
                        .map(|c| c.zone)
                        .unwrap_or(0)
                ),
            );
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn offered(a: SimulateArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    if a.live.live_file.is_some() {
        // The runtime's tool set has no live-tool form: refuse rather than ignore.
        return Err(Failure::Usage(
            "`offered` does not take --live (use `unavailable` or `simulate` with --live)".into(),
        ));
    }
    if a.log.log_file.is_some() {
        let all: Vec<Decision> = ctx.decisions().collect();
        a.log.write(&ctx, &all)?;
    }
    let set = ctx.tool_set();
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&set)?)),
        OutFormat::Text => {
            let mut out = String::new();
            for t in &set.offered {
                let _ = writeln!(out, "{}", escape(t));
            }
            // Text is for a person: only the names this user may see.
            let shown: Vec<_> = set.excluded.iter().filter(|u| u.name_visible).collect();
            if !shown.is_empty() {
                out.push_str("\nheld back:\n");
                for u in shown {
                    let _ = writeln!(out, "  {} {}", escape(u.tool), u.reason.code());
                }
            }
            let _ = writeln!(
                out,
                "\n{} tools offered, {} descriptor bytes, about {} tokens (4 bytes per token)",
                set.offered.len(),
                set.descriptor_bytes,
                set.estimated_tokens
            );
            write_out(&out);
        }
    }
    Ok(0)
}
