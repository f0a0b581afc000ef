//! The subcommands, one module per family. Every answer comes from a
//! compiled table: loaded from a file, or compiled in memory from a project.
//! What several families share (the table source, the output format, a
//! stored run) is here.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::{RunState, Table};

use crate::io::{read_file, Failure};

pub mod approve;
pub mod check;
pub mod classify;
pub mod compile;
pub mod completions;
pub mod context;
pub mod decide;
pub mod diff;
pub mod drift;
pub mod explain;
pub mod fmt;
pub mod gateway;
pub mod init;
pub mod keygen;
pub mod keys;
pub mod lsp;
pub mod man;
pub mod oci_distribution;
pub mod offered;
pub mod pull;
pub mod push;
pub mod registry;
pub mod report;
pub mod run;
pub mod schema;
pub mod serve;
pub mod show;
pub mod simulate;
pub mod snapshot;
pub mod stats;
pub mod test;
pub mod unavailable;

/// What a command returns: its exit code, or why it stopped early.
pub type Res = Result<u8, Failure>;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutFormat {
    Text,
    Json,
}

/// `-o FILE`: a command's output into a file instead of standard output.
#[derive(Args, Clone, Default)]
pub struct OutputArg {
    /// Write the output to FILE instead of standard output (`-` is standard
    /// output); the file is replaced when the command ends, also when it
    /// reports problems.
    #[arg(short, long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

impl OutputArg {
    /// From here on, what the command prints goes to the file.
    pub fn apply(&self) {
        crate::io::output_to(self.output.as_deref());
    }
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
    #[command(flatten)]
    out: OutputArg,
}

impl SourceArgs {
    /// The table, with `-o` in effect.
    pub fn load(&self) -> Result<Table, Failure> {
        self.out.apply();
        load_table(&self.project, self.table.as_deref())
    }
}

/// Compile a project in memory; on errors, the rendered diagnostics.
pub fn compile_project(path: &Path) -> Result<(Project, toolgate_compiler::model::Model), Failure> {
    lower_project(path).map(|(project, model, _)| (project, model))
}

/// Like [`compile_project`], with the table the check lowered for its lint
/// (`None` when it lowered none).
pub fn lower_project(
    path: &Path,
) -> Result<(Project, toolgate_compiler::model::Model, Option<Table>), Failure> {
    let project = Project::load(path)?;
    let checked = project.check();
    match checked.model {
        Some(m) => Ok((project, m, checked.lowered)),
        None => Err(findings(&project, &checked)),
    }
}

/// The errors of a check that left no model, rendered.
pub fn findings(project: &Project, checked: &toolgate_compiler::pipeline::Checked) -> Failure {
    Failure::Findings(toolgate_compiler::report::human(
        &project.sources,
        &checked.errors(),
        false,
    ))
}

/// The table to answer from: a table file, or the project compiled in
/// memory. A project with errors is an input error here (exit code 2): for a
/// query, exit code 1 means "refused", never "the policy is broken".
pub fn load_table(project: &Path, table: Option<&Path>) -> Result<Table, Failure> {
    match table {
        Some(t) => {
            if t.is_dir() {
                return Err(Failure::Usage(format!(
                    "{}: --table wants a table file (written by `toolgate compile`), not a directory; for a project, use -p",
                    t.display()
                )));
            }
            let bytes = read_file(t)?;
            Table::load(&bytes).map_err(|e| Failure::Usage(format!("{}: {e}", t.display())))
        }
        None => {
            let (_, model) = compile_project(project).map_err(|f| match f {
                Failure::Findings(text) => Failure::Input(text),
                other => other,
            })?;
            Ok(lower::table(&model)?)
        }
    }
}

/// A stored run from a file. One that cannot be read is an input error
/// (exit code 2): no answer is printed, so nothing can read as allowed, and
/// the operator is told why (a host reading it through the runtime gets a
/// run that admits no tool).
pub fn stored_run(path: &Path) -> Result<RunState, Failure> {
    let bytes = read_file(path)?;
    RunState::parse(&bytes).map_err(|e| {
        Failure::Usage(format!(
            "{}: {e}; a run stored like this admits no tool (fix the file, or start the run again with `toolgate run start`)",
            path.display()
        ))
    })
}

/// `; did you mean `x`?` when `name` is a near miss of one of `candidates`
/// (the one rule, `toolgate_runtime::names::did_you_mean`), else nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    toolgate_runtime::names::did_you_mean(name, candidates)
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

/// `n thing` or `n things`, joined: `counted(&[(1, "tool"), (2, "configuration")])`
/// is "1 tool, 2 configurations".
pub fn counted(items: &[(usize, &str)]) -> String {
    items
        .iter()
        .map(|(n, what)| format!("{n} {what}{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The projects the paths mean (`discover`): a directory holding projects
/// is every project below it; no path is the project found as cargo finds
/// its manifest.
pub fn project_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    if paths.is_empty() {
        return Ok(toolgate_compiler::project::discover::projects(None)?);
    }
    let mut out = Vec::new();
    for p in paths {
        out.extend(toolgate_compiler::project::discover::projects(Some(p))?);
    }
    Ok(out)
}

/// A project's name in output: its directory as given or found.
pub fn project_name(path: &std::path::Path) -> String {
    let s = path.display().to_string();
    let s = s
        .strip_suffix(toolgate_compiler::project::MANIFEST)
        .unwrap_or(&s);
    let s = s.trim_end_matches('/');
    let s = s.strip_prefix("./").unwrap_or(s);
    if s.is_empty() {
        ".".into()
    } else {
        s.to_string()
    }
}
