//! The subcommands, one module per family. Every answer comes from a
//! compiled table: loaded from a file, or compiled in memory from a project.
//! What several families share (the table source, the output format, a
//! stored run) is here.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use toolgate_compiler::diagnostics::{Diagnostic, Severity};
use toolgate_compiler::project::Project;
use toolgate_compiler::{lower, report};
use toolgate_runtime::{RunState, Table};

use crate::io::{read_file, write_err, Failure};

pub mod check;
pub mod classify;
pub mod distribute;
pub mod fmt;
pub mod query;
pub mod registry;
pub mod review;
pub mod run;
pub mod serve;
pub mod show;
pub mod sign;
pub mod stats;

/// What a command returns: its exit code, or why it stopped early.
pub type Res = Result<u8, Failure>;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutFormat {
    Text,
    Json,
}

/// Table source only (readouts need no context).
#[derive(Args, Clone)]
pub struct SourceArgs {
    /// Project directory, compiled in memory (ignored with --table).
    #[arg(long, short = 'p', default_value = ".")]
    project: PathBuf,
    /// A compiled table file instead of a project.
    #[arg(long)]
    table: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Compile a project in memory; on errors, the rendered diagnostics.
pub fn compile_project(path: &Path) -> Result<(Project, toolgate_compiler::model::Model), Failure> {
    let project = Project::load(path)?;
    let checked = project.check();
    match checked.model {
        Some(m) => Ok((project, m)),
        None => {
            let diags: Vec<Diagnostic> = checked
                .problems
                .iter()
                .map(|p| p.diagnostic())
                .filter(|d| d.severity == Severity::Error)
                .collect();
            Err(Failure::Findings(report::human(
                &project.sources,
                &diags,
                false,
            )))
        }
    }
}

pub fn load_table(project: &Path, table: Option<&Path>) -> Result<Table, Failure> {
    match table {
        Some(t) => {
            let bytes = read_file(t)?;
            Table::load(&bytes).map_err(|e| Failure::Usage(format!("{}: {e}", t.display())))
        }
        None => {
            let (_, model) = compile_project(project)?;
            Ok(lower::table(&model)?)
        }
    }
}

/// A stored run from a file. One that cannot be read admits no tool, and the
/// operator is told why on stderr (the answer itself stays fail-closed).
pub fn stored_run(path: &Path) -> Result<RunState, Failure> {
    let bytes = read_file(path)?;
    Ok(RunState::parse(&bytes).unwrap_or_else(|e| {
        write_err(&format!(
            "warning: {}: {e}; the run admits no tool\n",
            path.display()
        ));
        RunState::unreadable()
    }))
}
