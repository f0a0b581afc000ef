//! The context every query command builds (`decide`, `explain`, `unavailable`,
//! `simulate`, `offered`): configuration, role, consumer, run, mode, live
//! tools and the decision log, with operators' typos warned about.

use std::path::PathBuf;

use clap::Args;
use toolgate_compiler::{registry, report, source::SourceMap};
use toolgate_runtime::{Context, Decision, LiveTool, LiveToolSpec, Role, Table};

use super::{did_you_mean, stored_run};
use crate::io::{read_file, write_err, Failure};

/// Where the table comes from, and who is asking.
#[derive(Args, Clone)]
pub struct ContextArgs {
    /// Project directory, compiled in memory (ignored with --table).
    #[arg(long, short = 'p', default_value = ".")]
    pub(super) project: PathBuf,
    /// A compiled table file instead of a project.
    #[arg(long)]
    pub(super) table: Option<PathBuf>,
    /// The configuration of the run.
    #[arg(long = "config", short = 'c')]
    pub(super) config: String,
    /// The user is an administrator.
    #[arg(long, conflicts_with = "no_user")]
    pub(super) admin: bool,
    /// There is no user (counts as not admin).
    #[arg(long)]
    pub(super) no_user: bool,
    /// The MCP consumer asking (held to its access profile).
    #[arg(long)]
    pub(super) consumer: Option<String>,
    /// A stored run state (JSON) to hold the decision to.
    #[arg(long)]
    pub(super) run: Option<PathBuf>,
    /// The host's trust-zone enforcement setting; only `observe` observes.
    #[arg(long)]
    pub(super) enforcement: Option<String>,
    #[command(flatten)]
    pub(super) out: super::OutputArg,
}

/// `--log FILE`: append each decision to a decision log (docs/decision-log.md).
#[derive(Args)]
pub struct LogArg {
    /// Append the decisions to this decision log (JSON lines, the runtime record of docs/decision-log.md; `toolgate stats` reads it).
    #[arg(long = "log", value_name = "FILE")]
    pub(super) log_file: Option<PathBuf>,
}

impl LogArg {
    /// Append `decisions`, made in `ctx`, as runtime records: every one,
    /// hidden names included (a dashboard leaves out `nameVisible: false`).
    pub(super) fn write<'a>(
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
    pub(super) live_file: Option<PathBuf>,
}

impl LiveArg {
    /// The fragment's tools, as the runtime takes them. A fragment with
    /// errors is an input error: a live tool is never guessed.
    pub(super) fn tools(&self) -> Result<Vec<LiveTool>, Failure> {
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

pub(super) fn context<'t>(table: &'t Table, a: &ContextArgs) -> Result<Context<'t>, Failure> {
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
/// (a consumer the policy does not know is decided as the table decides it
/// for a reader: its profile gate closed, or, where the policy admits
/// unknown consumers, as a consumer without a profile; a setting other than
/// `observe` enforces).
pub(super) fn warn_operator_typos(table: &Table, a: &ContextArgs) {
    let spec = table.spec();
    if let Some(c) = &a.consumer {
        if !spec.consumers.iter().any(|k| &k.name == c) {
            let how = if table.check_consumer(c).is_ok() {
                "it is decided as a consumer without a profile (`unknown-consumers admitted`)"
            } else {
                "every edge and host refuses it (`unknownConsumer`); decided here with its profile gate closed"
            };
            write_err(&format!(
                "warning: no `consumer` block names `{}`, so {how}{}\n",
                toolgate_runtime::names::shown(c),
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

/// A hint for a tool name the table does not hold (`decide ... delete_pag`):
/// the nearest name the caller could be told of (a hidden remote tool is
/// never suggested: to the caller it does not exist), on standard error.
pub(super) fn hint_unregistered(
    table: &Table,
    ctx: &Context<'_>,
    asked: &str,
    shown: &Decision<'_>,
) {
    if shown.reason != Some(toolgate_runtime::Reason::NotRegistered) {
        return;
    }
    let names = (0..table.tool_count() as u32)
        .map(|id| table.tool_name(id))
        .filter(|n| !ctx.decide(n).hidden);
    if let Some(near) = toolgate_runtime::names::did_you_mean(asked, names) {
        crate::io::note(&format!(
            "hint: `{}` is not a registered tool; did you mean `{}`?\n",
            toolgate_runtime::names::escape_terminal(asked),
            near
        ));
    }
}
