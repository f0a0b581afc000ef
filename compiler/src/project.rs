//! A project: the manifest `toolgate.toml`, its registry and its policy files.
//! [`Project::load`] reads them all into one [`SourceMap`]; [`Project::check`]
//! parses and validates.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::diagnostics::Problem;
use crate::model::{Model, Provenance};
use crate::source::{FileId, SourceMap, Span};
use crate::{parse, registry, validate};

pub const MANIFEST: &str = "toolgate.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    registry: String,
    policies: Vec<String>,
}

/// Why a project could not be read at all (exit code 2, not a diagnostic).
#[derive(Debug)]
pub struct LoadError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

/// The files of one project, read.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub manifest: FileId,
    pub registry: Option<FileId>,
    pub policies: Vec<FileId>,
    /// Problems found while reading the manifest.
    pub problems: Vec<Problem>,
}

/// The outcome of checking a project.
pub struct Checked {
    pub model: Option<Model>,
    pub problems: Vec<Problem>,
}

fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|e| LoadError {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn display(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let shown = cwd
        .as_deref()
        .and_then(|c| path.strip_prefix(c).ok())
        .unwrap_or(path);
    let s = shown.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

impl Project {
    /// `path` is a project directory or its `toolgate.toml`.
    pub fn load(path: &Path) -> Result<Project, LoadError> {
        let manifest_path = if path.is_dir() {
            path.join(MANIFEST)
        } else {
            path.to_path_buf()
        };
        let root = manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let text = read(&manifest_path)?;
        let mut sources = SourceMap::new();
        let manifest = sources.add(display(&manifest_path), text.clone());
        let mut project = Project {
            root: root.clone(),
            sources,
            manifest,
            registry: None,
            policies: Vec::new(),
            problems: Vec::new(),
        };
        let m: Manifest = match toml::from_str(&text) {
            Ok(m) => m,
            Err(e) => {
                project.problems.push(Problem::Manifest {
                    span: Span::new(manifest, e.span().unwrap_or(0..0)),
                    message: e.message().to_string(),
                });
                return Ok(project);
            }
        };
        let reg_path = root.join(&m.registry);
        let reg_text = read(&reg_path)?;
        project.registry = Some(project.sources.add(display(&reg_path), reg_text));
        for p in &m.policies {
            let path = root.join(p);
            let text = read(&path)?;
            project
                .policies
                .push(project.sources.add(display(&path), text));
        }
        if m.policies.is_empty() {
            project.problems.push(Problem::Manifest {
                span: Span::new(manifest, 0..text.len()),
                message: "`policies` lists no file".into(),
            });
        }
        Ok(project)
    }

    /// A project from texts in memory: (name, text) of the registry (a name
    /// ending in `.json` reads as JSON) and of each policy file.
    pub fn from_texts(registry: (&str, &str), policies: &[(&str, &str)]) -> Project {
        let mut sources = SourceMap::new();
        let manifest = sources.add(MANIFEST, "");
        let registry = Some(sources.add(registry.0, registry.1));
        let policies = policies.iter().map(|(n, t)| sources.add(*n, *t)).collect();
        Project {
            root: PathBuf::from("."),
            sources,
            manifest,
            registry,
            policies,
            problems: Vec::new(),
        }
    }

    /// Parse and validate everything.
    pub fn check(&self) -> Checked {
        let mut problems = self.problems.clone();
        let Some(reg_id) = self.registry else {
            return Checked {
                model: None,
                problems,
            };
        };
        let reg_file = self.sources.get(reg_id);
        let is_json = reg_file.name.ends_with(".json");
        let (registry, mut reg_problems) = registry::load(reg_id, &reg_file.text, is_json);
        problems.append(&mut reg_problems);
        let mut asts = Vec::new();
        let mut syntax_errors = false;
        for &id in &self.policies {
            match parse::parse_policy(id, &self.sources.get(id).text) {
                Ok(ast) => asts.push((id, ast)),
                Err(p) => {
                    syntax_errors = true;
                    problems.push(p);
                }
            }
        }
        // Names defined in a file that did not parse would be reported as
        // unknown elsewhere: report the syntax errors alone.
        if syntax_errors {
            return Checked {
                model: None,
                problems,
            };
        }
        let provenance = Provenance {
            policies: self
                .policies
                .iter()
                .map(|&id| {
                    let f = self.sources.get(id);
                    (f.name.clone(), sha256_hex(f.text.as_bytes()))
                })
                .collect(),
            registry: sha256_hex(reg_file.text.as_bytes()),
        };
        let parsed: Vec<validate::Parsed> = asts
            .iter()
            .map(|(file, ast)| validate::Parsed { file: *file, ast })
            .collect();
        let (model, mut v) = validate::validate(&self.sources, &parsed, &registry, provenance);
        problems.append(&mut v);
        let has_errors = problems
            .iter()
            .any(|p| p.severity() == crate::diagnostics::Severity::Error);
        Checked {
            model: if has_errors { None } else { model },
            problems,
        }
    }
}
