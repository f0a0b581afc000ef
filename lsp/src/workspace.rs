//! The server's state: the editor's open documents and, per project, the
//! last analysis. A project is compiled by the compiler's own loader
//! (`Project::load_with`) over an overlay of the open documents, so what the
//! editor shows is exactly what `toolgate check` would say of the saved files.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use lsp_types::Diagnostic;
use toolgate_compiler::diagnostics::Problem;
use toolgate_compiler::model::Model;
use toolgate_compiler::project::{Project, RegistryCache, MANIFEST};
use toolgate_compiler::registry::Registry;
use toolgate_compiler::{lower, syntax::parse};
use toolgate_runtime::Table;

use crate::convert::{self};
use crate::index::{self, FileFacts, Index};

/// The canonical form of a path (the key of documents and files), or the
/// path itself when it does not exist on disk.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The manifest of the project a file belongs to: `toolgate.toml` in its
/// directory or the nearest one above.
pub fn find_manifest(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .map(|d| d.join(MANIFEST))
        .find(|m| m.is_file())
}

/// One project as last analysed.
pub struct ProjectState {
    /// The project as loaded this time (`None`: it could not be read).
    pub project: Option<Project>,
    /// Canonical path of each file of `project`, by `FileId`.
    pub paths: Vec<PathBuf>,
    pub problems: Vec<Problem>,
    /// The problems rendered, at their effective severity (parallel to `problems`).
    pub findings: Vec<toolgate_compiler::diagnostics::Diagnostic>,
    /// Names and outline per policy file, from its last text that parsed.
    pub files: HashMap<PathBuf, FileFacts>,
    pub index: Index,
    /// Whether every policy file parsed this time (rename needs exact ranges).
    pub all_parsed: bool,
    /// The last model that compiled without errors, and its table (made on
    /// first use: hover reads it, a keystroke does not pay for it).
    pub model: Option<Model>,
    table: OnceCell<Option<Table>>,
    /// Files diagnostics were last published for (to clear them when they go).
    published: Vec<PathBuf>,
    /// The registry as last parsed (reused while its text is unchanged).
    cache: RegistryCache,
}

impl ProjectState {
    fn new() -> ProjectState {
        ProjectState {
            project: None,
            paths: Vec::new(),
            problems: Vec::new(),
            findings: Vec::new(),
            files: HashMap::new(),
            index: Index::default(),
            all_parsed: false,
            model: None,
            table: OnceCell::new(),
            published: Vec::new(),
            cache: RegistryCache::default(),
        }
    }

    /// The compiled table of the last good model.
    pub fn table(&self) -> Option<&Table> {
        self.table
            .get_or_init(|| self.model.as_ref().and_then(|m| lower::table(m).ok()))
            .as_ref()
    }

    pub fn registry(&self) -> Option<&Registry> {
        self.project.as_ref().and_then(Project::parsed_registry)
    }

    /// The `FileId` of a canonical path in the current project.
    pub fn file_id(&self, path: &Path) -> Option<toolgate_compiler::source::FileId> {
        self.paths
            .iter()
            .position(|p| p == path)
            .map(|i| toolgate_compiler::source::FileId(i as u32))
    }
}

/// Diagnostics to publish: per file, the full list (empty clears).
pub type Publish = Vec<(PathBuf, Vec<Diagnostic>)>;

#[derive(Default)]
pub struct Workspace {
    /// Open documents by canonical path.
    pub open: HashMap<PathBuf, String>,
    /// Projects by canonical manifest path.
    pub projects: HashMap<PathBuf, ProjectState>,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace::default()
    }

    /// Record a document's text and analyse what it belongs to.
    pub fn set_text(&mut self, path: &Path, text: String) -> Publish {
        let path = canonical(path);
        self.open.insert(path.clone(), text);
        self.analyse_for(&path)
    }

    pub fn close(&mut self, path: &Path) -> Publish {
        let path = canonical(path);
        self.open.remove(&path);
        self.analyse_for(&path)
    }

    /// The project state a file belongs to (analysed at least once).
    pub fn project_of(&self, path: &Path) -> Option<&ProjectState> {
        let m = canonical(&find_manifest(&canonical(path))?);
        self.projects.get(&m)
    }

    /// The text of a file: the open document, else the file on disk when it
    /// is one of a loaded project's files (manifest, registry, policies).
    /// No other file is read: a request naming a path is no reason to read
    /// it, and its answer would hand the file's text to the client.
    pub fn text_of(&self, path: &Path) -> Option<String> {
        let path = canonical(path);
        if let Some(text) = self.open.get(&path) {
            return Some(text.clone());
        }
        self.projects
            .values()
            .any(|s| s.paths.contains(&path))
            .then(|| std::fs::read_to_string(&path).ok())
            .flatten()
    }

    fn analyse_for(&mut self, path: &Path) -> Publish {
        match find_manifest(path) {
            Some(m) => self.analyse(&canonical(&m)),
            None => self.lone_file(path),
        }
    }

    /// A policy file outside any project: its syntax alone can be checked.
    fn lone_file(&self, path: &Path) -> Publish {
        let Some(text) = self.open.get(path) else {
            return vec![(path.to_path_buf(), Vec::new())];
        };
        if path.extension().is_none_or(|e| e != "tg") {
            return Vec::new();
        }
        let mut sources = toolgate_compiler::source::SourceMap::new();
        let id = sources.add(path.to_string_lossy(), text.as_str());
        let diags = match parse::parse_policy(id, text) {
            Ok(_) => Vec::new(),
            Err(p) => vec![convert::diagnostic(
                &p.diagnostic(),
                &sources,
                &[path.to_path_buf()],
            )],
        };
        vec![(path.to_path_buf(), diags)]
    }

    /// Load and check a project from the overlay; keep what the editor needs.
    pub fn analyse(&mut self, manifest: &Path) -> Publish {
        let open = &self.open;
        let overlay = |p: &Path| open.get(p).cloned();
        let state = self
            .projects
            .entry(manifest.to_path_buf())
            .or_insert_with(ProjectState::new);
        let loaded = Project::load_cached(manifest, &overlay, &mut state.cache);
        let mut by_file: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
        match loaded {
            Err(e) => {
                // The project cannot be read at all: say so on the manifest
                // (or on the file named, when it is one of ours).
                let at = canonical(&e.path);
                let target = if state.paths.contains(&at) || at == manifest {
                    at
                } else {
                    manifest.to_path_buf()
                };
                by_file
                    .entry(target)
                    .or_default()
                    .push(convert::load_error(&e));
                state.project = None;
                state.problems.clear();
                state.findings.clear();
                state.all_parsed = false;
            }
            Ok(project) => {
                let checked = project.check();
                state.paths = project.paths.iter().map(|p| canonical(p)).collect();
                for (id, ast) in &checked.asts {
                    let path = &state.paths[id.0 as usize];
                    let text = project.sources.get(*id);
                    state
                        .files
                        .insert(path.clone(), index::file_facts(path, text, ast));
                }
                state.all_parsed = checked.asts.len() == project.policies.len();
                let mut occs = Vec::new();
                if let (Some(reg), Some(id)) = (project.parsed_registry(), project.registry) {
                    let path = &state.paths[id.0 as usize];
                    occs = index::registry_occs(path, project.sources.get(id), reg);
                }
                for id in &project.policies {
                    if let Some(f) = state.files.get(&state.paths[id.0 as usize]) {
                        occs.extend(f.occs.iter().cloned());
                    }
                }
                state.index = Index { occs };
                let findings = checked.diagnostics();
                if let Some(model) = checked.model {
                    state.model = Some(model);
                    state.table = OnceCell::new();
                }
                for p in &state.paths {
                    by_file.entry(p.clone()).or_default();
                }
                for f in &findings {
                    let d = convert::diagnostic(f, &project.sources, &state.paths);
                    by_file
                        .entry(state.paths[f.span.file.0 as usize].clone())
                        .or_default()
                        .push(d);
                }
                state.findings = findings;
                state.problems = checked.problems;
                state.project = Some(project);
            }
        }
        // Clear what was published before and is clean or gone now.
        for p in std::mem::take(&mut state.published) {
            by_file.entry(p).or_default();
        }
        state.published = by_file
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(p, _)| p.clone())
            .collect();
        by_file.into_iter().collect()
    }
}
