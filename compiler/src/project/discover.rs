//! Which projects a path on the command line means, as `ruff check .`,
//! `opa check DIR` and cargo find theirs: a project directory or its
//! manifest is that project; any other directory is every project below it;
//! no path is the project of the current directory or of its nearest parent
//! that has one (else every project below it). A policy file or a directory
//! without projects is an error that says what to run instead.

use std::path::{Path, PathBuf};

use crate::project::{Project, ProjectError, MANIFEST};

/// Directories never searched for projects: hidden ones, build output and
/// vendored code.
const SKIPPED: &[&str] = &["target", "node_modules", "vendor"];

/// How deep below a directory projects are searched.
const MAX_DEPTH: usize = 16;

fn error(path: &Path, message: impl Into<String>) -> ProjectError {
    ProjectError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Every project directory below `dir` (itself included), in path order.
/// Symbolic links are not followed.
pub fn projects_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        if d.join(MANIFEST).is_file() {
            out.push(d.clone());
        }
        if depth == MAX_DEPTH {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// The nearest directory at or above `path` that holds a manifest.
pub fn project_above(path: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(path).ok()?;
    let start = if abs.is_dir() {
        Some(abs.as_path())
    } else {
        abs.parent()
    };
    start?
        .ancestors()
        .find(|d| d.join(MANIFEST).is_file())
        .map(Path::to_path_buf)
}

/// `path` as the user would type it: relative to the current directory when
/// it lies below it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|c| std::fs::canonicalize(c).ok());
    let rel = cwd
        .as_deref()
        .and_then(|c| path.strip_prefix(c).ok())
        .unwrap_or(path);
    if rel.as_os_str().is_empty() {
        ".".into()
    } else {
        rel.display().to_string()
    }
}

/// The projects `path` means (see the module doc); `None` is the current
/// directory as cargo reads it.
pub fn projects(path: Option<&Path>) -> Result<Vec<PathBuf>, ProjectError> {
    let Some(path) = path else {
        if Path::new(MANIFEST).is_file() {
            return Ok(vec![PathBuf::from(".")]);
        }
        if let Some(p) = project_above(Path::new(".")) {
            return Ok(vec![p]);
        }
        return below_or_error(Path::new("."));
    };
    if path.is_dir() {
        if path.join(MANIFEST).is_file() {
            return Ok(vec![path.to_path_buf()]);
        }
        return below_or_error(path);
    }
    if path.file_name().is_some_and(|n| n == MANIFEST) {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.exists() {
        return Err(error(path, "does not exist"));
    }
    Err(policy_file_error(path))
}

fn below_or_error(dir: &Path) -> Result<Vec<PathBuf>, ProjectError> {
    let found = projects_below(dir);
    if !found.is_empty() {
        return Ok(found);
    }
    let hint = match project_above(dir) {
        Some(p) => format!(
            "; it lies inside the project in `{}` (run `toolgate check {}`)",
            shown(&p),
            shown(&p)
        ),
        None => {
            "; a project is a directory with a toolgate.toml (`toolgate init DIR` makes one)".into()
        }
    };
    Err(error(
        dir,
        format!("holds no toolgate project (no {MANIFEST} in it or below it){hint}"),
    ))
}

/// A file that is not a manifest: name the project whose policy it is.
fn policy_file_error(file: &Path) -> ProjectError {
    let owner = project_above(file).filter(|p| {
        let Ok(project) = Project::load(p) else {
            return false;
        };
        let target = std::fs::canonicalize(file).ok();
        project
            .policy_files()
            .iter()
            .any(|(f, _)| std::fs::canonicalize(f).ok() == target)
    });
    match owner {
        Some(p) => error(
            file,
            format!(
                "is a policy file, not a project: it belongs to the project in `{}` (run `toolgate check {}`)",
                shown(&p),
                shown(&p)
            ),
        ),
        None => error(
            file,
            "is a file, not a project: give a project directory (one with a toolgate.toml) or its toolgate.toml",
        ),
    }
}
