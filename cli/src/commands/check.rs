//! `check` and `compile`: a project's diagnostics, and its table file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use toolgate_compiler::project::Project;
use toolgate_compiler::report;

use super::{project_name, project_paths, Res};
use crate::io::{color_stdout, write_out, write_styled};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    /// For people (miette's report; `human` is the same).
    #[value(alias = "human")]
    Text,
    Plain,
    Json,
    Sarif,
    Github,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Project directories (or their toolgate.toml). Default: the current directory.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    #[command(flatten)]
    out: super::OutputArg,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

/// At most this many diagnostics are rendered per project by the formats for
/// people and GitHub (the counts, the exit code, `json` and `sarif` have
/// every one).
const MAX_SHOWN: usize = 1000;

pub fn check(a: CheckArgs) -> Res {
    a.out.apply();
    let paths = project_paths(&a.paths)?;
    let several = paths.len() > 1;
    let mut total = report::Summary::default();
    let mut json = report::CheckReport::default();
    let mut sarif = report::SarifLog::new();
    let mut summary_md = String::new();
    let bar = crate::progress::Progress::new(paths.len() as u64, "check");
    for path in &paths {
        let name = project_name(path);
        bar.label(&format!("check {name}"));
        let project = Project::load(path)?;
        let checked = project.check();
        bar.tick();
        let diags = checked.diagnostics();
        let s = report::summary(&diags);
        total.errors += s.errors;
        total.warnings += s.warnings;
        let sources = &project.sources;
        // For several projects, each summary line names its project.
        // Under --quiet, the diagnostics without the summary line.
        let named = |text: String| {
            let line = report::summary_line(s);
            match text.strip_suffix(&line) {
                Some(body) if crate::io::quiet() => body.to_string(),
                Some(body) if several => format!("{body}{name}: {line}"),
                _ => text,
            }
        };
        match a.format {
            CheckFormat::Text => {
                let text = named(report::human_at_most(
                    sources,
                    &diags,
                    color_stdout(),
                    MAX_SHOWN,
                ));
                bar.suspend(|| write_styled(&text));
            }
            CheckFormat::Plain => {
                let text = named(report::plain_at_most(sources, &diags, MAX_SHOWN));
                bar.suspend(|| write_out(&text));
            }
            CheckFormat::Json => json.add(&name, sources, &diags, &checked.suppressed),
            CheckFormat::Sarif => sarif.add(sources, &diags),
            CheckFormat::Github => {
                // GitHub shows a handful of annotations per step anyway.
                let text = report::github(sources, &diags[..diags.len().min(MAX_SHOWN)]);
                bar.suspend(|| write_out(&text));
                summary_md.push_str(&report::github_summary_at_most(sources, &diags, MAX_SHOWN));
            }
        }
    }
    drop(bar);
    match a.format {
        CheckFormat::Text | CheckFormat::Plain if several && !crate::io::quiet() => write_out(
            &format!("{} projects: {}", paths.len(), report::summary_line(total)),
        ),
        // One shape whatever the number of projects.
        CheckFormat::Json => write_out(&json.to_json()),
        CheckFormat::Sarif => write_out(&sarif.to_json()),
        _ => {}
    }
    if a.format == CheckFormat::Github {
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            f.write_all(summary_md.as_bytes())?;
        }
    }
    Ok(u8::from(
        total.errors > 0 || (a.deny_warnings && total.warnings > 0),
    ))
}
