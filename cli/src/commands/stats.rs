//! `stats`: refusals counted in a decision log.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use super::{OutFormat, Res};
use crate::io::{read_file, write_out, Failure};

#[derive(Args)]
pub struct StatsArgs {
    /// A decision log (JSON lines).
    log: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

pub fn stats(a: StatsArgs) -> Res {
    let text = String::from_utf8_lossy(&read_file(&a.log)?).into_owned();
    let stats = toolgate_runtime::log::LogStats::read(&text)
        .map_err(|e| Failure::Usage(format!("{}:{}", a.log.display(), e)))?;
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&stats)?)),
        OutFormat::Text => {
            let mut out = format!(
                "{} decisions, {} refused, {} offered under observe\n\nrefusals by reason\n",
                stats.decisions, stats.refused, stats.observed_only
            );
            let max = stats
                .by_reason
                .iter()
                .map(|r| r.1)
                .max()
                .unwrap_or(1)
                .max(1);
            for (code, c) in &stats.by_reason {
                let bar = "█".repeat((c * 40).div_ceil(max));
                let _ = writeln!(out, "  {code:<22} {c:>7}  {bar}");
            }
            out.push_str("\nrefusals by configuration\n");
            for (cfg, m) in &stats.by_configuration {
                let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
                let _ = writeln!(
                    out,
                    "  {cfg:<22} {:>7}  {}",
                    m.values().sum::<usize>(),
                    parts.join(", ")
                );
            }
            write_out(&out);
        }
    }
    Ok(0)
}
