//! `toolgate offered`: the tools a context is offered.

use super::context::context;
use super::simulate::SimulateArgs;
use std::fmt::Write as _;

use toolgate_runtime::names::escape;
use toolgate_runtime::Decision;

use super::{load_table, OutFormat, Res};
use crate::io::{write_out, Failure};

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
