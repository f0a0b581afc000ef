//! `drift`: a consumer's access profile against what its gateway lists for
//! it and the decisions logged for it (the comparison is the runtime's,
//! `Table::profile_drift`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use toolgate_compiler::registry::{remote_tool_name, tools_list_names};
use toolgate_runtime::drift::{Drift, Seen};
use toolgate_runtime::log::Counted;
use toolgate_runtime::Table;

use super::{OutFormat, Res, SourceArgs};
use crate::io::{read_file, write_out, Failure};

#[derive(Args)]
pub struct DriftArgs {
    /// The MCP consumer whose profile to compare.
    #[arg(long)]
    consumer: String,
    /// What the gateway lists for the consumer: an MCP `tools/list` answer,
    /// as `SERVER=FILE` (names are that server's, compared with its tools)
    /// or `FILE` (registry names, compared with every registered tool).
    #[arg(long = "tools-list", value_name = "[SERVER=]FILE", required = true)]
    tools_lists: Vec<String>,
    /// A decision log (JSON lines, runtime or service records).
    #[arg(long)]
    decision_log: Option<PathBuf>,
    #[command(flatten)]
    src: SourceArgs,
}

pub fn drift(a: DriftArgs) -> Res {
    let table = a.src.load()?;
    let (listed, compared) = listed_and_compared(&table, &a.tools_lists)?;
    let log = match &a.decision_log {
        Some(path) => read_log(path)?,
        None => Vec::new(),
    };
    let d = table
        .profile_drift(&a.consumer, &listed, &compared, &log)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    match a.src.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&d)?)),
        OutFormat::Text => write_out(&text(&d, a.decision_log.is_some())),
    }
    Ok(u8::from(!d.is_empty()))
}

/// The names the gateway lists (each `--tools-list`, in order), and the
/// registered tools they are compared with (sorted, once each): a
/// server's tools for `SERVER=FILE`, every tool for `FILE`.
fn listed_and_compared(
    table: &Table,
    specs: &[String],
) -> Result<(Vec<String>, Vec<u32>), Failure> {
    let mut listed = Vec::new();
    let mut compared: Vec<u32> = Vec::new();
    for spec in specs {
        let (server, file) = match spec.split_once('=') {
            Some((s, f)) if !s.is_empty() && !s.contains('/') => (Some(s), PathBuf::from(f)),
            _ => (None, PathBuf::from(spec)),
        };
        let text = String::from_utf8(read_file(&file)?)
            .map_err(|_| Failure::Usage(format!("{}: not UTF-8", file.display())))?;
        let names = tools_list_names(&text)
            .map_err(|e| Failure::Usage(format!("{}: {e}", file.display())))?;
        match server {
            Some(s) => {
                listed.extend(names.iter().map(|n| remote_tool_name(s, n)));
                compared.extend(table.server_tools(s));
            }
            None => {
                listed.extend(names);
                compared.extend(0..table.tool_count() as u32);
            }
        }
    }
    compared.sort_unstable();
    compared.dedup();
    Ok((listed, compared))
}

fn read_log(path: &Path) -> Result<Vec<Counted>, Failure> {
    let text = String::from_utf8_lossy(&read_file(path)?).into_owned();
    toolgate_runtime::log::read_records(&text)
        .map_err(|e| Failure::Usage(format!("{}:{}", path.display(), e)))
}

/// A titled list: its count, then one line per entry.
fn list(out: &mut String, title: &str, lines: Vec<String>) {
    let colon = if lines.is_empty() { "" } else { ":" };
    let _ = writeln!(out, "{title} ({}){colon}", lines.len());
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
}

fn names(out: &mut String, title: &str, v: &[String]) {
    let lines = v
        .iter()
        .map(|n| toolgate_runtime::names::escape(n).into_owned());
    list(out, title, lines.collect());
}

fn seen(out: &mut String, title: &str, v: &[Seen]) {
    let lines = v.iter().map(|s| {
        let plural = if s.decisions == 1 { "" } else { "s" };
        let tool = toolgate_runtime::names::escape(&s.tool);
        format!("{tool}  {} decision{plural}", s.decisions)
    });
    list(out, title, lines.collect());
}

/// The drift for a person; the log's lists only when a log was read (empty
/// ones would say nothing was seen, not that nothing was looked at).
fn text(d: &Drift, with_log: bool) -> String {
    let mut out = format!(
        "consumer `{}`, {}\n",
        d.consumer,
        d.profile
            .as_ref()
            .map_or("bound to no profile".to_string(), |p| format!(
                "profile `{p}`"
            ))
    );
    names(
        &mut out,
        "listed by the gateway, refused by the profile",
        &d.listed_but_refused,
    );
    names(
        &mut out,
        "allowed by the profile, not listed by the gateway",
        &d.allowed_but_not_listed,
    );
    names(
        &mut out,
        "listed by the gateway, not in the registry",
        &d.listed_unregistered,
    );
    if with_log {
        seen(
            &mut out,
            "refused notInProfile in the log, yet listed",
            &d.refused_in_log_but_listed,
        );
        seen(
            &mut out,
            "allowed in the log, yet not listed",
            &d.allowed_in_log_but_not_listed,
        );
    }
    out.push_str(if d.is_empty() {
        "no drift\n"
    } else {
        "drift: the profile and the gateway disagree\n"
    });
    out
}
