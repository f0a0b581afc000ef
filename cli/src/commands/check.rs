//! `check` and `compile`: a project's diagnostics, and its table file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;
use toolgate_compiler::diagnostics::Diagnostic;
use toolgate_compiler::project::Project;
use toolgate_compiler::{lower, report};
use toolgate_runtime::Table;

use super::{compile_project, Res};
use crate::io::{color_stdout, write_atomic, write_err, write_out, Failure};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Human,
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
    #[arg(long, value_enum, default_value = "human")]
    format: CheckFormat,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Args)]
pub struct CompileArgs {
    /// Project directory (or its toolgate.toml).
    project: PathBuf,
    /// Where to write the table.
    #[arg(short, long)]
    output: PathBuf,
    /// Sign the table with this Ed25519 secret key (PKCS#8 PEM, from `toolgate keygen`).
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
}

/// At most this many diagnostics are rendered per project (the counts and the
/// exit code still reflect all of them).
const MAX_SHOWN: usize = 1000;

pub fn check(a: CheckArgs) -> Res {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    let mut all_errors = 0;
    let mut all_warnings = 0;
    let mut json_runs = Vec::new();
    let mut summary_md = String::new();
    for path in &paths {
        let project = Project::load(path)?;
        let checked = project.check();
        let all: Vec<Diagnostic> = checked.problems.iter().map(|p| p.diagnostic()).collect();
        let s = report::summary(&all);
        all_errors += s.errors;
        all_warnings += s.warnings;
        // A diagnostic storm is shown up to a limit; the counts stay exact.
        let diags = &all[..all.len().min(MAX_SHOWN)];
        if all.len() > MAX_SHOWN {
            write_err(&format!(
                "{}: {} diagnostics; showing the first {MAX_SHOWN}\n",
                path.display(),
                all.len()
            ));
        }
        let sources = &project.sources;
        match a.format {
            CheckFormat::Human => write_out(&report::human(sources, diags, color_stdout())),
            CheckFormat::Plain => write_out(&report::plain(sources, diags)),
            CheckFormat::Json => json_runs.push((path.clone(), report::json_value(sources, diags))),
            CheckFormat::Sarif => {
                if paths.len() > 1 {
                    return Err(Failure::Usage(
                        "--format sarif takes one project per run".into(),
                    ));
                }
                write_out(&report::sarif(sources, diags));
            }
            CheckFormat::Github => {
                write_out(&report::github(sources, diags));
                summary_md.push_str(&report::github_summary(sources, diags));
            }
        }
    }
    if a.format == CheckFormat::Json {
        let doc = if json_runs.len() == 1 {
            json_runs.remove(0).1
        } else {
            // Several projects: one object per project, same schema inside.
            json!({"version": 1, "projects": json_runs.iter().map(|(p, v)| json!({"path": p.display().to_string(), "result": v})).collect::<Vec<_>>()})
        };
        write_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
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
        all_errors > 0 || (a.deny_warnings && all_warnings > 0),
    ))
}

pub fn compile(a: CompileArgs) -> Res {
    let (_, model) = compile_project(&a.project)?;
    let bytes = lower::compile(&model);
    // Verify by loading before anything is written: never leave a table the runtime would refuse.
    let table = Table::load(&bytes)?;
    let (bytes, signed) = match &a.sign {
        Some(key) => {
            let (signed, key_id) = super::sign::sign_with(&bytes, key)?;
            (signed, format!(", signed by {key_id}"))
        }
        None => (bytes, String::new()),
    };
    write_atomic(&a.output, &bytes)?;
    write_err(&format!(
        "compiled {} tools, {} configurations into {} ({} bytes, digest {}{signed})\n",
        table.tool_count(),
        table.spec().configurations.len(),
        a.output.display(),
        bytes.len(),
        table.digest_hex()
    ));
    Ok(0)
}
