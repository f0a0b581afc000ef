//! `toolgate diff`: the semantic diff of two tables, optionally replaying a
//! decision log against it (`--replay`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{load_table, Res};
use crate::io::{read_file, write_err, write_out, write_styled, Failure};
use toolgate_review::diff::Diff;
use toolgate_review::replay::{self, Replay};
use toolgate_runtime::Table;

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
    let d = toolgate_review::diff::diff_with_progress(&old, &new, &|| bar.tick());
    drop(bar);
    let mut replay_widened = 0;
    match (&a.replay, a.format) {
        (Some(log), f) => {
            replay_widened = replay_and_print(&old, &new, &d, log, f)?.changed.widened;
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
pub(super) fn paint_diff(text: &str) -> String {
    use crate::io::{paint, style};
    use toolgate_review::diff::ChangeKind;
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

/// Replay `log` and print it with the diff `d` in `format`.
pub fn replay_and_print(
    old: &Table,
    new: &Table,
    d: &Diff,
    log: &Path,
    format: DiffFormat,
) -> Result<Replay, Failure> {
    let bytes = read_file(log)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(format!("{}: not UTF-8 text", log.display())))?;
    let r = replay::replay(old, new, &text)
        .map_err(|e| Failure::Usage(format!("{}: {e}", log.display())))?;
    if r.records > 0 && r.compared == 0 && !r.other_tables.is_empty() {
        write_err(&format!(
            "warning: {}: no record was made by OLD's table ({}); nothing was compared. Replay against the table that served the traffic (a compiled .tgt file as OLD)\n",
            log.display(),
            r.old_table
        ));
    }
    match format {
        DiffFormat::Text => write_out(&format!("{}{}", d.text(), r.text())),
        DiffFormat::Markdown => write_out(&format!("{}\n{}", d.markdown(), r.markdown())),
        DiffFormat::Json => write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&replay::DiffReplay {
                diff: d,
                replay: &r
            })?
        )),
    }
    Ok(r)
}
