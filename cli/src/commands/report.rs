//! `report`: the access report, one self-contained HTML file
//! (`toolgate-access-report`; docs/report.md).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use toolgate_access_report::{changes, denials, matrix, report_page, MatrixOptions, Report};

use super::diff::{project_at_revision, project_or_table};
use super::Res;
use crate::io::{read_file, write_atomic, Failure};

#[derive(Args)]
pub struct ReportArgs {
    /// A project directory or a compiled table file.
    #[arg(default_value = ".")]
    source: PathBuf,
    /// Write the report to FILE (default: standard output).
    #[arg(short, long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Add the changes against OLD: a project directory, a table file, or a
    /// git revision of the project (as `toolgate diff --git REV` takes it).
    #[arg(long, value_name = "OLD")]
    diff: Option<String>,
    /// Add the denial charts of a decision log (either format of docs/decision-log.md).
    #[arg(long, value_name = "LOG")]
    decision_log: Option<PathBuf>,
    /// Leave the refusal texts out (they are left out anyway past 200,000 refused cells).
    #[arg(long)]
    no_refusal_texts: bool,
}

pub fn report(a: ReportArgs) -> Res {
    let to = a.output.as_deref().filter(|p| p.as_os_str() != "-");
    if to.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(Failure::Usage(format!(
            "the report is an HTML page and standard output is a terminal: give -o FILE (for example `toolgate report {} -o report.html`), or redirect standard output",
            a.source.display()
        )));
    }
    let table = project_or_table(&a.source)?;
    let diff = match &a.diff {
        None => None,
        Some(old) => {
            let old_table = if Path::new(old).exists() {
                project_or_table(Path::new(old))?
            } else if a.source.is_dir() {
                let (dir, _guard) = project_at_revision(&a.source, old).map_err(|e| match e {
                    Failure::Usage(m) => Failure::Usage(format!(
                        "--diff {old}: no such file or directory, and not a git revision of {}: {m}",
                        a.source.display()
                    )),
                    other => other,
                })?;
                project_or_table(&dir)?
            } else {
                return Err(Failure::Usage(format!(
                    "--diff {old}: no such file or directory (a git revision needs a project directory, not a table file)"
                )));
            };
            Some(changes(&old_table, &table, old))
        }
    };
    let denials = match &a.decision_log {
        None => None,
        Some(log) => {
            let text = String::from_utf8(read_file(log)?)
                .map_err(|e| Failure::Usage(format!("{}: not UTF-8 text: {e}", log.display())))?;
            Some(denials(&text).map_err(|e| Failure::Usage(format!("{}:{e}", log.display())))?)
        }
    };
    let report = Report {
        title: title_of(&a.source),
        matrix: matrix(
            &table,
            MatrixOptions {
                refusal_texts: !a.no_refusal_texts,
            },
        ),
        diff,
        denials,
    };
    let html = report_page(&report);
    match to {
        Some(path) => write_atomic(path, html.as_bytes())?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(html.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| Failure::Usage(format!("standard output: {e}")))?;
        }
    }
    Ok(0)
}

/// The report's title: the project as the repository names it (its path
/// from the repository's root, or the root's own name), never a path of the
/// machine that wrote it; outside a repository, the path as given.
fn title_of(source: &Path) -> String {
    let Ok(abs) = source.canonicalize() else {
        return source.display().to_string();
    };
    let Some(root) = abs.ancestors().find(|d| d.join(".git").exists()) else {
        return source.display().to_string();
    };
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| source.display().to_string())
    };
    match abs.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => name(root),
        Ok(rel) => rel.display().to_string(),
        Err(_) => source.display().to_string(),
    }
}
