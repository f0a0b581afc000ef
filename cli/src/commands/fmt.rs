//! `fmt`: policy files in the one canonical layout.

use std::path::{Path, PathBuf};

use clap::Args;
use toolgate_compiler::project::Project;
use toolgate_compiler::{report, source::SourceMap};

use super::Res;
use crate::io::{
    paint, read_file_capped, style, write_atomic, write_err, write_out, write_styled, Failure,
};

#[derive(Args)]
pub struct FmtArgs {
    /// Policy files, or project directories (all their policy files). Default: the current directory.
    paths: Vec<PathBuf>,
    /// Show, as a unified diff, what formatting would change; exit 1 if anything.
    #[arg(long, conflicts_with = "write")]
    check: bool,
    /// Write the formatted text back to the files.
    #[arg(short, long)]
    write: bool,
}

pub fn fmt(a: FmtArgs) -> Res {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    let files = files_of(&paths)?;
    let mut changed = Vec::new();
    let mut diffs = String::new();
    for (f, writable) in &files {
        let (text, lf, formatted) = formatted(f, *writable)?;
        if formatted != text {
            let name = f.display().to_string();
            if a.check {
                diffs.push_str(
                    // Shown in LF: a CRLF file keeps its endings when written.
                    &similar::TextDiff::from_lines(&lf, &formatted.replace("\r\n", "\n"))
                        .unified_diff()
                        .context_radius(3)
                        .header(&name, &format!("{name} (formatted)"))
                        .to_string(),
                );
            }
            changed.push(name);
            if a.write {
                if !writable {
                    return Err(Failure::Usage(format!(
                        "{}: outside the project (or current) directory; `fmt -w` writes only inside it",
                        f.display()
                    )));
                }
                write_atomic(f, formatted.as_bytes())?;
            }
        }
        if !a.write && !a.check {
            write_out(&formatted);
        }
    }
    if a.check {
        write_styled(&paint_unified(&diffs));
        if !changed.is_empty() {
            write_err(&format!(
                "{} file{} not formatted: run `toolgate fmt -w`\n",
                changed.len(),
                if changed.len() == 1 { "" } else { "s" }
            ));
        }
        return Ok(u8::from(!changed.is_empty()));
    }
    Ok(0)
}

/// The policy files of `paths`, each with whether -w may write it: a
/// project's policy files outside the project directory
/// (`allow-outside-project`) are never written.
fn files_of(paths: &[PathBuf]) -> Result<Vec<(PathBuf, bool)>, Failure> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for p in paths {
        if p.is_dir()
            || p.file_name()
                .is_some_and(|n| n == toolgate_compiler::project::MANIFEST)
        {
            // A directory holding projects: every project below it.
            for dir in toolgate_compiler::project::discover::projects(Some(p))? {
                files.extend(Project::load(&dir)?.policy_files());
            }
        } else {
            files.push((p.clone(), inside_current_dir(p)));
        }
    }
    Ok(files)
}

/// A file named on the command line is written and quoted only when it
/// lies inside the current directory (a symlink that leaves it, e.g. to
/// /proc/self/environ, is neither).
fn inside_current_dir(p: &Path) -> bool {
    match (std::fs::canonicalize(p), std::env::current_dir()) {
        (Ok(f), Ok(cwd)) => std::fs::canonicalize(cwd).is_ok_and(|c| f.starts_with(c)),
        _ => false,
    }
}

/// The file `f` as read, in LF, and formatted (in its own line endings);
/// a file that does not parse is a finding, quoted only when `writable`.
fn formatted(f: &Path, writable: bool) -> Result<(String, String, String), Failure> {
    let text = String::from_utf8(read_file_capped(
        f,
        toolgate_compiler::syntax::parse::MAX_POLICY_BYTES,
    )?)
    .map_err(|_| Failure::Usage(format!("{}: not UTF-8", f.display())))?;
    // Windows line endings are read, and kept: the formatter sees LF.
    let crlf = text.contains("\r\n");
    let lf = if crlf {
        text.replace("\r\n", "\n")
    } else {
        text.clone()
    };
    let formatted = match toolgate_compiler::syntax::formatter::format(&lf) {
        Ok(t) if crlf => t.replace('\n', "\r\n"),
        Ok(t) => t,
        Err(problem) => {
            let mut sources = SourceMap::new();
            let id = sources.add(f.display().to_string(), text);
            let problem = if writable {
                problem
            } else {
                sources.forbid_quoting(id);
                toolgate_compiler::project::redact_problem(problem)
            };
            return Err(Failure::Findings(report::human(
                &sources,
                &[problem.diagnostic()],
                false,
            )));
        }
    };
    Ok((text, lf, formatted))
}

/// A unified diff with added lines green, removed lines red and hunk
/// headers bold under `--color` (as `git diff` shows them).
fn paint_unified(diff: &str) -> String {
    diff.split_inclusive('\n')
        .map(|line| {
            let st = if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@")
            {
                style::HEAD
            } else if line.starts_with('+') {
                anstyle::AnsiColor::Green.on_default()
            } else if line.starts_with('-') {
                anstyle::AnsiColor::Red.on_default()
            } else {
                anstyle::Style::new()
            };
            // The newline stays outside the style.
            match line.strip_suffix('\n') {
                Some(body) => format!("{}\n", paint(st, body)),
                None => paint(st, line),
            }
        })
        .collect()
}
