//! `toolgate unavailable`: what a context will not be offered, and why.

use super::context::{context, ContextArgs, LiveArg};
use std::fmt::Write as _;

use clap::{Args, ValueEnum};
use toolgate_runtime::names::escape;

use super::{load_table, Res};
use crate::io::write_out;

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
