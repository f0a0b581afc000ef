//! `toolgate explain`: a tool's decision gate by gate.

use super::context::{context, ContextArgs};
use super::decide::decision_text;
use std::fmt::Write as _;

use clap::Args;
use toolgate_review::readout::Explained;
use toolgate_runtime::GateOutcome;

use super::{load_table, OutFormat, Res};
use crate::io::{paint, style, write_out, write_styled};

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
            for (t, name) in traces.iter().zip(&names) {
                super::context::hint_unregistered(&table, &ctx, name, &t.decision);
                let _ = writeln!(out, "{}", decision_text(&t.decision));
                for (g, o) in &t.gates {
                    let mark = match o {
                        GateOutcome::Passed => paint(style::GOOD, "pass   "),
                        GateOutcome::Refused => paint(style::BAD, "REFUSE "),
                        GateOutcome::Observed => paint(style::WARN, "observe"),
                    };
                    let _ = writeln!(out, "  {mark} {}", g.code());
                }
                // After every refusing gate: the call waits for a person.
                if t.decision.needs_approval {
                    let _ = writeln!(out, "  {} approval", paint(style::WARN, "ask    "));
                }
            }
            write_styled(&out);
        }
    }
    Ok(0)
}
