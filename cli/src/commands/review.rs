//! Review: `diff`, `snapshot` and `test`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{load_table, project_name, project_paths, Res};
use crate::io::{read_file, write_atomic, write_err, write_out, write_styled, Failure};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The old project directory or compiled table file (with --git: the
    /// project, compared with itself at REV).
    old: PathBuf,
    /// The new project directory or compiled table file.
    new: Option<PathBuf>,
    /// Compare the working tree's project with the same project at this git revision.
    #[arg(long)]
    git: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: DiffFormat,
    /// Exit 1 when any decision widens (a tool newly offered).
    #[arg(long)]
    fail_on_widen: bool,
    /// A decision log (docs/decision-log.md) to replay: which recorded
    /// decisions NEW changes. Records of another table than OLD are counted, not compared.
    #[arg(long, value_name = "LOG")]
    replay: Option<PathBuf>,
    /// Exit 1 when a recorded decision would widen (needs --replay).
    #[arg(long, requires = "replay")]
    fail_on_replay_widen: bool,
    #[command(flatten)]
    out: super::OutputArg,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TestFormat {
    Text,
    Json,
    Junit,
}

#[derive(Args)]
pub struct TestArgs {
    /// Project directories. Default: the current directory.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: TestFormat,
    /// Report which rows of the decision table (configuration x outcome) the tests exercised.
    #[arg(long)]
    coverage: bool,
    #[command(flatten)]
    out: super::OutputArg,
    /// Fail when coverage is below this percentage (implies --coverage).
    #[arg(long)]
    threshold: Option<f64>,
}

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

/// Extract `project` as it is at git revision `rev` into a temporary directory.
pub(crate) fn project_at_revision(
    project: &Path,
    rev: &str,
) -> Result<(PathBuf, tempfile::TempDir), Failure> {
    let abs = std::fs::canonicalize(project)?;
    let top = std::process::Command::new("git")
        .arg("-C")
        .arg(&abs)
        .args(["rev-parse", "--show-toplevel"])
        .output()?;
    if !top.status.success() {
        return Err(Failure::Usage(format!(
            "{}: not in a git repository",
            project.display()
        )));
    }
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    let rel = abs
        .strip_prefix(&top)
        .map_err(|_| Failure::Usage("project is outside the repository".into()))?
        .to_path_buf();
    let tmp = tempfile::tempdir()?;
    let archive = std::process::Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["archive", "--format=tar", rev, "--"])
        .arg(if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &rel
        })
        .output()?;
    if !archive.status.success() {
        return Err(Failure::Usage(format!(
            "git archive {rev}: {}",
            String::from_utf8_lossy(&archive.stderr).trim()
        )));
    }
    let mut tar = std::process::Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(tmp.path())
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    if let Some(stdin) = tar.stdin.as_mut() {
        use std::io::Write as _;
        stdin.write_all(&archive.stdout)?;
    }
    tar.wait()?;
    Ok((tmp.path().join(rel), tmp))
}

pub fn diff(a: DiffArgs) -> Res {
    a.out.apply();
    let (old_dir, new_dir, _guard) = match (&a.git, &a.new) {
        (Some(rev), None) => {
            let (old, guard) = project_at_revision(&a.old, rev)?;
            (old, a.old.clone(), Some(guard))
        }
        (None, Some(new)) => (a.old.clone(), new.clone(), None),
        _ => {
            return Err(Failure::Usage(
                "give OLD and NEW project directories, or one PROJECT with --git REV".into(),
            ))
        }
    };
    let old = project_or_table(&old_dir)?;
    let new = project_or_table(&new_dir)?;
    let shared = new
        .configuration_names()
        .filter(|c| old.configuration(c).is_some())
        .count();
    let bar = crate::progress::Progress::new(shared as u64, "diff");
    let d = toolgate_compiler::diff::diff_with_progress(&old, &new, &|| bar.tick());
    drop(bar);
    let mut replay_widened = 0;
    match (&a.replay, a.format) {
        (Some(log), f) => {
            replay_widened = super::replay::replay_and_print(&old, &new, &d, log, f)?
                .changed
                .widened;
        }
        (None, DiffFormat::Text) => write_styled(&paint_diff(&d.text())),
        (None, DiffFormat::Markdown) => write_out(&d.markdown()),
        (None, DiffFormat::Json) => write_out(&format!("{}\n", serde_json::to_string_pretty(&d)?)),
    }
    Ok(u8::from(
        (a.fail_on_widen && d.summary.widened > 0)
            || (a.fail_on_replay_widen && replay_widened > 0),
    ))
}

/// The diff's text with each change's label coloured under `--color`:
/// widenings red (a tool newly offered is what review must catch),
/// narrowings green, reason changes yellow.
fn paint_diff(text: &str) -> String {
    use crate::io::{paint, style};
    use toolgate_compiler::diff::ChangeKind;
    let kinds = [
        (ChangeKind::Widened, style::BAD),
        (ChangeKind::Narrowed, style::GOOD),
        (ChangeKind::ReasonChanged, style::WARN),
    ];
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match kinds.iter().find(|(k, _)| line.starts_with(k.label())) {
            Some((k, st)) => {
                out.push_str(&paint(*st, k.label()));
                out.push_str(&paint(anstyle::Style::new(), &line[k.label().len()..]));
            }
            None => out.push_str(&paint(anstyle::Style::new(), line)),
        }
    }
    out
}

/// A project directory, compiled in memory, or a compiled table file (the
/// one that served the traffic, whose digest its decision log records).
pub(crate) fn project_or_table(path: &Path) -> Result<toolgate_runtime::Table, Failure> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        load_table(path, Some(path))
    } else {
        load_table(path, None)
    }
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
fn snapshot_one(project: &Path, a: &SnapshotArgs) -> Res {
    let table = load_table(project, None)?;
    let lines = toolgate_compiler::snapshot::line_count(&table);
    let limit = a
        .max_lines
        .unwrap_or(toolgate_compiler::snapshot::MAX_LINES);
    if lines > limit {
        return Err(Failure::Usage(format!(
            "the snapshot would hold {} lines (configurations x roles x consumers x tools), over the limit of {}; give --max-lines {lines} to write it anyway, or review changes with `toolgate diff`",
            toolgate_compiler::report::thousands(lines as usize),
            toolgate_compiler::report::thousands(limit as usize),
        )));
    }
    let bar =
        crate::progress::Progress::new(table.configuration_names().count() as u64, "snapshot");
    let text = toolgate_compiler::snapshot::snapshot_with_progress(&table, &|| bar.tick());
    drop(bar);
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| project.join(toolgate_compiler::snapshot::FILE_NAME));
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

pub fn test(a: TestArgs) -> Res {
    a.out.apply();
    use toolgate_compiler::testing;
    let paths = project_paths(&a.paths)?;
    let want_coverage = a.coverage || a.threshold.is_some();
    let mut report = testing::Report::default();
    // Nothing covered of nothing reachable yet: 100%, as `coverage` says.
    let mut cov = testing::Coverage {
        percent: 100.0,
        ..testing::Coverage::default()
    };
    let bar = crate::progress::Progress::new(paths.len() as u64, "test");
    for p in &paths {
        bar.label(&format!("test {}", project_name(p)));
        let table = load_table(p, None)?;
        let files = testing::test_files(p);
        let mut covered = std::collections::BTreeSet::new();
        let r = testing::run(&table, &files, &mut covered);
        report.passed += r.passed;
        report.failed += r.failed;
        report.cases.extend(r.cases);
        report.errors.extend(r.errors);
        if want_coverage {
            let prefix = if paths.len() > 1 {
                format!("{}: ", project_name(p))
            } else {
                String::new()
            };
            cov.add(testing::coverage(&table, &covered), &prefix);
        }
        bar.tick();
    }
    drop(bar);
    if want_coverage {
        report.coverage = Some(cov.clone());
    }
    match a.format {
        TestFormat::Text => write_out(&report.text()),
        TestFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&report)?)),
        TestFormat::Junit => write_out(&report.junit(a.threshold)),
    }
    let under = a.threshold.is_some_and(|t| cov.percent < t);
    if under && a.format == TestFormat::Text {
        write_err(&format!(
            "coverage {:.1}% is below the threshold {:.1}%\n",
            cov.percent,
            a.threshold.unwrap_or(0.0)
        ));
    }
    // A test file that cannot be run is an input error, not a failing test.
    if !report.errors.is_empty() {
        return Ok(2);
    }
    Ok(u8::from(report.failed > 0 || under))
}
