//! `toolgate simulate`: every tool's decision in a context.

use super::context::{context, ContextArgs, LiveArg, LogArg};
use std::fmt::Write as _;

use clap::Args;
use toolgate_runtime::names::escape;
use toolgate_runtime::Decision;

use super::{load_table, OutFormat, Res};
use crate::io::write_out;

#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub(super) ctx: ContextArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: OutFormat,
    #[command(flatten)]
    pub(super) log: LogArg,
    #[command(flatten)]
    pub(super) live: LiveArg,
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
                    // Offered, and a person approves each call.
                    let reason = match d.reason {
                        Some(r) => r.code(),
                        None if d.needs_approval => "needs approval",
                        None => "-",
                    };
                    vec![
                        escape(d.tool).into_owned(),
                        offered.to_string(),
                        reason.to_string(),
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
