//! `toolgate snapshot`: the effective-access snapshot, written or checked.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{load_table, project_name, project_paths, Res};
use crate::io::{read_file, write_atomic, write_err, Failure};

#[derive(Args)]
pub struct SnapshotArgs {
    /// Project directories, or directories holding projects. Default: the
    /// project of the current directory (or every project below it).
    paths: Vec<PathBuf>,
    /// Fail (exit 1) when the file is missing or out of date, instead of writing it.
    #[arg(long)]
    check: bool,
    /// The file (default: PROJECT/effective-access.txt).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write (or check) at most this many lines (default 1,000,000).
    #[arg(long)]
    max_lines: Option<u64>,
}

pub fn snapshot(a: SnapshotArgs) -> Res {
    let paths = project_paths(&a.paths)?;
    if paths.len() > 1 && a.output.is_some() {
        return Err(Failure::Usage(format!(
            "-o names one file, and {} projects were found; give one project with -o, or none",
            paths.len()
        )));
    }
    let mut code = 0;
    for p in &paths {
        code = code.max(snapshot_one(p, &a)?);
    }
    Ok(code)
}

/// Write (or check) one project's snapshot.
pub(super) fn snapshot_one(project: &Path, a: &SnapshotArgs) -> Res {
    let table = load_table(project, None)?;
    let lines = toolgate_review::snapshot::line_count(&table);
    let limit = a.max_lines.unwrap_or(toolgate_review::snapshot::MAX_LINES);
    if lines > limit {
        return Err(Failure::Usage(format!(
            "the snapshot would hold {} lines (configurations x roles x consumers x tools), over the limit of {}; give --max-lines {lines} to write it anyway, or review changes with `toolgate diff`",
            toolgate_compiler::report::thousands(lines as usize),
            toolgate_compiler::report::thousands(limit as usize),
        )));
    }
    let bar =
        crate::progress::Progress::new(table.configuration_names().count() as u64, "snapshot");
    let text = toolgate_review::snapshot::snapshot_with_progress(&table, &|| bar.tick());
    drop(bar);
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| project.join(toolgate_review::snapshot::FILE_NAME));
    if a.output.is_none() {
        // The default file lies in the project: a symlink there that leaves
        // it is neither read (its lines would be echoed) nor written through.
        if let (Ok(f), Ok(root)) = (std::fs::canonicalize(&path), std::fs::canonicalize(project)) {
            if !f.starts_with(root) {
                return Err(Failure::Usage(format!(
                    "{}: a symlink that resolves outside the project; remove it, or give the file with -o",
                    path.display()
                )));
            }
        }
    }
    if a.check {
        let current = match std::fs::symlink_metadata(&path) {
            Err(_) => String::new(),
            Ok(_) => String::from_utf8_lossy(&read_file(&path)?).into_owned(),
        };
        if current == text {
            return Ok(0);
        }
        let old: std::collections::BTreeSet<&str> = current.lines().collect();
        let new: std::collections::BTreeSet<&str> = text.lines().collect();
        let mut out = format!(
            "{} is out of date; run `toolgate snapshot {}`\n",
            path.strip_prefix(".").unwrap_or(&path).display(),
            project_name(project)
        );
        for l in new.difference(&old) {
            let _ = writeln!(out, "+ {l}");
        }
        for l in old.difference(&new) {
            let _ = writeln!(out, "- {l}");
        }
        write_err(&out);
        return Ok(1);
    }
    write_atomic(&path, text.as_bytes())?;
    Ok(0)
}
