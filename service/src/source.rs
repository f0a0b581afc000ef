//! Where the served table comes from: a compiled table file, or a project
//! compiled in memory (the compiler's own `check` and `lower`, as
//! `toolgate compile` runs them). Loading fails closed: any error leaves the
//! caller with no table, never a partial one.

use std::path::{Path, PathBuf};

use toolgate_compiler::project::{read_capped_bytes, Project, Read};
use toolgate_compiler::registry::MAX_REGISTRY_BYTES;
use toolgate_compiler::{lower, report};
use toolgate_oci::DistributionOptions;
use toolgate_runtime::{Table, TrustedKeys};

use crate::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A compiled table file (`toolgate compile -o`).
    Table(PathBuf),
    /// A project directory (or its `toolgate.toml`).
    Project(PathBuf),
    /// A table published to an OCI registry (`toolgate push`), polled.
    Oci {
        reference: String,
        registry: DistributionOptions,
    },
}

impl Source {
    /// Load (or compile) the table. The error is a message for the operator.
    /// How the console names what it serves.
    pub fn title(&self) -> String {
        match self {
            Source::Table(p) | Source::Project(p) => p.display().to_string(),
            Source::Oci { reference, .. } => reference.clone(),
        }
    }

    pub fn load(&self) -> Result<Table, Error> {
        self.load_with(None)
    }

    /// Load the table; with `keys`, only a table signed by one of them
    /// (a project compiled in memory is never signed, so it is refused).
    pub fn load_with(&self, keys: Option<&TrustedKeys>) -> Result<Table, Error> {
        self.load_text(keys).map_err(Error::Table)
    }

    fn load_text(&self, keys: Option<&TrustedKeys>) -> Result<Table, String> {
        match self {
            Source::Oci {
                reference,
                registry,
            } => {
                let pulled = crate::poll::pull_blocking(reference, registry)?;
                load_bytes_text(&pulled.bytes, keys).map_err(|e| {
                    format!(
                        "{reference} ({}): {e}",
                        pulled.artifact.manifest_digest
                    )
                })
            }
            Source::Project(path) if keys.is_some() => Err(format!(
                "{}: a project compiled in memory is not signed; serve a signed table (--table or --oci) when trusted keys are given",
                path.display()
            )),
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
                load_bytes(&bytes, keys).map_err(|e| format!("{}: {e}", path.display()))
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

    /// The directory to watch, and whether recursively (none for a registry: it is polled).
    pub fn watch_root(&self) -> Option<(PathBuf, bool)> {
        Some(match self {
            Source::Oci { .. } => return None,
            Source::Table(path) => (parent_or_dot(path), false),
            Source::Project(path) if path.is_dir() => (path.clone(), true),
            Source::Project(path) => (parent_or_dot(path), true),
        })
    }

    /// Whether a change at `changed` may change the table. A table file is
    /// usually replaced by a rename in its directory, so the directory is
    /// watched and events are matched by file name (a file reached through
    /// symbolic links is also followed by [`Source::identity`]); in a
    /// project, hidden files (an atomic writer's temporary files) are ignored.
    pub fn is_relevant(&self, changed: &Path) -> bool {
        match self {
            Source::Table(path) => changed.file_name() == path.file_name(),
            Source::Oci { .. } => false,
            Source::Project(_) => !changed
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.')),
        }
    }
}

/// The file a table path names now, every symbolic link followed: where
/// the chain ends, and that file's identity and version. A Kubernetes
/// ConfigMap or Secret volume shows `policy.tgt -> ..data/policy.tgt` and
/// swaps `..data` (a link to a timestamped directory) by a rename: the
/// name `policy.tgt` sees no event, but this changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIdentity {
    target: PathBuf,
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Source {
    /// For a table file, what it names now ([`FileIdentity`]); `None` for
    /// other sources and for a path that does not resolve to a file now.
    pub fn identity(&self) -> Option<FileIdentity> {
        let Source::Table(path) = self else {
            return None;
        };
        let target = std::fs::canonicalize(path).ok()?;
        let meta = std::fs::metadata(&target).ok()?;
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Some(FileIdentity {
            target,
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

fn parent_or_dot(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Load table bytes, verified when `keys` are given.
pub fn load_bytes(bytes: &[u8], keys: Option<&TrustedKeys>) -> Result<Table, Error> {
    load_bytes_text(bytes, keys).map_err(Error::Table)
}

fn load_bytes_text(bytes: &[u8], keys: Option<&TrustedKeys>) -> Result<Table, String> {
    match keys {
        Some(keys) => Table::load_verified(bytes, keys),
        None => Table::load(bytes),
    }
    .map_err(|e| e.to_string())
}
