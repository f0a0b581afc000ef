//! `toolgate decide`: one tool's decision in a context.

use super::context::{context, ContextArgs, LiveArg, LogArg};

use clap::Args;
use toolgate_runtime::names::escape;
use toolgate_runtime::{Decision, Reason};

use super::{load_table, OutFormat, Res};
use crate::io::{paint, style, write_out, write_styled};

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

/// One decision as a line for people, the verdict coloured under `--color`.
pub(super) fn decision_text(d: &Decision<'_>) -> String {
    let text = verdict_text(d);
    if d.needs_approval {
        format!(
            "{text}; {} (a person approves each call first)",
            paint(style::WARN, "needs approval")
        )
    } else {
        text
    }
}

fn verdict_text(d: &Decision<'_>) -> String {
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
        OutFormat::Text => {
            let shown = ctx.shown(d);
            write_styled(&format!("{}\n", decision_text(&shown)));
            if live.iter().all(|t| t.name() != a.tool) {
                super::context::hint_unregistered(&table, &ctx, &a.tool, &shown);
            }
        }
        // JSON is for a host program: the true gate.
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string(&d)?)),
    }
    Ok(u8::from(!d.allowed))
}
