//! Where the served table comes from: a compiled table file, or a project
//! compiled in memory (the compiler's own `check` and `lower`, as
//! `toolgate compile` runs them). Loading fails closed: any error leaves the
//! caller with no table, never a partial one.

use std::path::{Path, PathBuf};

use toolgate_compiler::project::{read_capped_bytes, Project, Read};
use toolgate_compiler::registry::MAX_REGISTRY_BYTES;
use toolgate_compiler::{lower, report};
use toolgate_runtime::Table;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A compiled table file (`toolgate compile -o`).
    Table(PathBuf),
    /// A project directory (or its `toolgate.toml`).
    Project(PathBuf),
}

impl Source {
    /// Load (or compile) the table. The error is a message for the operator.
    pub fn load(&self) -> Result<Table, String> {
        match self {
            Source::Table(path) => {
                let bytes =
                    match read_capped_bytes(path, MAX_REGISTRY_BYTES).map_err(|e| e.to_string())? {
                        Read::Text(t) => t.into_bytes(),
                        Read::Bytes(b) => b,
                        Read::TooLarge(n) => {
                            return Err(format!(
                                "{}: {n} bytes, over the limit of {MAX_REGISTRY_BYTES} bytes",
                                path.display()
                            ))
                        }
                    };
                Table::load(&bytes).map_err(|e| format!("{}: {e}", path.display()))
            }
            Source::Project(path) => {
                let project = Project::load(path).map_err(|e| e.to_string())?;
                let checked = project.check();
                match checked.model {
                    Some(model) => {
                        lower::table(&model).map_err(|e| format!("{}: {e}", path.display()))
                    }
                    None => {
                        let diags = checked.errors();
                        Err(format!(
                            "{}: the project has errors\n{}",
                            path.display(),
                            report::human(&project.sources, &diags, false)
                        ))
                    }
                }
            }
        }
    }

    /// The directory to watch, and whether recursively.
    pub fn watch_root(&self) -> (PathBuf, bool) {
        match self {
            Source::Table(path) => (parent_or_dot(path), false),
            Source::Project(path) if path.is_dir() => (path.clone(), true),
            Source::Project(path) => (parent_or_dot(path), true),
        }
    }

    /// Whether a change at `changed` may change the table. A table file is
    /// usually replaced by a rename in its directory, so the directory is
    /// watched and events are matched by file name; in a project, hidden
    /// files (an atomic writer's temporary files) are ignored.
    pub fn is_relevant(&self, changed: &Path) -> bool {
        match self {
            Source::Table(path) => changed.file_name() == path.file_name(),
            Source::Project(_) => !changed
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.')),
        }
    }
}

fn parent_or_dot(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
