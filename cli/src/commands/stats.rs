//! `stats`: refusals counted in a decision log.

use std::path::PathBuf;

use clap::Args;

use super::{OutFormat, Res};
use crate::grid::grid;
use crate::io::{read_file, write_out, Failure};
use toolgate_compiler::report::thousands;

#[derive(Args)]
pub struct StatsArgs {
    /// A decision log (JSON lines).
    log: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    #[command(flatten)]
    out: super::OutputArg,
}

pub fn stats(a: StatsArgs) -> Res {
    a.out.apply();
    let text = String::from_utf8_lossy(&read_file(&a.log)?).into_owned();
    let stats = toolgate_runtime::log::LogStats::read(&text)
        .map_err(|e| Failure::Usage(format!("{}:{}", a.log.display(), e)))?;
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&stats)?)),
        OutFormat::Text => {
            let mut out = format!(
                "{} decisions, {} refused, {} offered under observe\n\nrefusals by reason (bar: log scale)\n",
                thousands(stats.decisions),
                thousands(stats.refused),
                thousands(stats.observed_only)
            );
            let max = stats.by_reason.iter().map(|r| r.1).max().unwrap_or(0);
            let rows = stats
                .by_reason
                .iter()
                .map(|(code, c)| vec![code.to_string(), thousands(*c), bar(*c, max)])
                .collect();
            out.push_str(&indent(&grid(&["reason", "refusals", ""], &[1], rows)));
            out.push_str("\nrefusals by configuration\n");
            let rows = stats
                .by_configuration
                .iter()
                .map(|(cfg, m)| {
                    let parts: Vec<String> = m
                        .iter()
                        .map(|(k, v)| format!("{k} {}", thousands(*v)))
                        .collect();
                    vec![
                        cfg.to_string(),
                        thousands(m.values().sum::<usize>()),
                        parts.join(", "),
                    ]
                })
                .collect();
            out.push_str(&indent(&grid(
                &["configuration", "refusals", "by reason"],
                &[1],
                rows,
            )));
            write_out(&out);
        }
    }
    Ok(0)
}

/// Width of the longest bar, in terminal columns.
const BAR_WIDTH: usize = 40;

/// A bar for `count` on a log scale up to `max`, in eighths of a column:
/// a reason with 5 refusals and one with 50 look different next to one
/// with 50,000 (a linear scale gives both the one-eighth minimum). Any
/// count above zero shows at least one eighth.
fn bar(count: usize, max: usize) -> String {
    const EIGHTHS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
    if count == 0 || max == 0 {
        return String::new();
    }
    let scale = ((count as f64).ln_1p() / (max as f64).ln_1p()).clamp(0.0, 1.0);
    let eighths = ((scale * (BAR_WIDTH * 8) as f64).round() as usize).max(1);
    let mut out = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        out.push(EIGHTHS[eighths % 8 - 1]);
    }
    out
}

/// Every line of `text` indented by two spaces.
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn bars_on_a_log_scale_tell_small_counts_apart() {
        assert_eq!(bar(0, 100), "");
        assert_eq!(bar(100, 100).chars().count(), 40);
        assert_eq!(bar(100, 100), "█".repeat(40));
        // 5 and 50 next to 50,000: 6.6 and 14.5 columns, not both ▏.
        assert_eq!(bar(5, 50_000), format!("{}▋", "█".repeat(6)));
        assert_eq!(bar(50, 50_000), format!("{}▌", "█".repeat(14)));
        assert_eq!(bar(1, 1_000_000), "██");
    }
}
