//! A project: the manifest `toolgate.toml`, its registry and its policy files.
//! [`Project::load`] reads them all into one [`SourceMap`]; [`Project::check`]
//! parses and validates.

pub mod discover;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::diagnostics::suppress::Lints;
use crate::diagnostics::Problem;
use crate::registry::Registry;
use crate::source::{FileId, SourceMap, Span};
use crate::{registry, syntax::parse};

pub const MANIFEST: &str = "toolgate.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    registry: String,
    policies: Vec<String>,
    /// The documented opt-in for a registry or policy path outside the
    /// project directory (absolute, `..`, or a symlink that leaves it).
    #[serde(default, rename = "allow-outside-project")]
    allow_outside_project: bool,
    /// Per-code levels: `TG1009 = "allow"` (see `suppress`).
    #[serde(default)]
    lints: BTreeMap<toml::Spanned<String>, toml::Spanned<String>>,
}

/// The manifest is read up to this many bytes.
pub const MAX_MANIFEST_BYTES: usize = 1024 * 1024;

/// Words of the manifest and registry schemas: the only back-quoted or quoted
/// words an error about a file that failed to parse may keep (see [`redact`]).
const SCHEMA_WORDS: &[&str] = &[
    "registry",
    "policies",
    "allow-outside-project",
    "lints",
    "tool",
    "tools",
    "name",
    "group",
    "origin",
    "server",
    "admin_only",
    "enabled",
    "class",
    "title",
    "description",
    "input_schema",
    "annotations",
    "builtin",
    "remote",
];

/// Why a project could not be read at all (exit code 2, not a diagnostic).
#[derive(Debug)]
pub struct ProjectError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ProjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ProjectError {}

/// The files of one project, read.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub manifest: FileId,
    pub registry: Option<FileId>,
    pub policies: Vec<FileId>,
    /// Where each file was read from, indexed by [`FileId`] (the manifest's
    /// entry joined to the project root; for [`Project::from_texts`], the name).
    pub paths: Vec<PathBuf>,
    /// Problems found while reading the manifest.
    pub problems: Vec<Problem>,
    /// The manifest's `[lints]`, checked (its unusable entries are among
    /// `problems`).
    pub lints: Lints,
    /// The registry, parsed at load (so that a registry file that is not a
    /// registry is known before anything renders it); `None`: parse in `check`.
    /// Shared with the [`RegistryCache`] that parsed it (a million-tool
    /// registry is not copied).
    pub(crate) parsed_registry: Option<Arc<Loaded>>,
    /// The registry file, when it lies inside the project (the only one
    /// `registry sync --write` may write).
    registry_path: Option<PathBuf>,
}

/// Texts that stand in for files on disk (an editor's unsaved buffers),
/// keyed by canonical path: [`Project::load_with`] reads a file from here
/// when it holds the file's canonical path, else from disk.
pub type Overlay<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// The registry parsed by an earlier load of the same project, reused while
/// its text (and where it sits in the source map) is unchanged: an editor
/// loads the project on every keystroke, and parsing a large registry is
/// most of a load.
#[derive(Default)]
pub struct RegistryCache {
    key: Option<(FileId, bool, String)>,
    parsed: Option<Result<Arc<Loaded>, Problem>>,
}

/// A registry as read, with the problems of its entries.
type Loaded = (Registry, Vec<Problem>);

/// Read a text file capped, from the overlay when it holds the file.
fn read_text(overlay: Overlay<'_>, path: &Path, limit: usize) -> Result<Read, ProjectError> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match overlay(&canonical) {
        Some(t) if t.len() > limit => Ok(Read::TooLarge(t.len())),
        Some(t) => Ok(Read::Text(t)),
        None => read_capped(path, limit),
    }
}

/// What a capped read found.
pub enum Read {
    Text(String),
    Bytes(Vec<u8>),
    /// Over the limit: the size (from the file's metadata when it has one).
    TooLarge(usize),
}

fn load_error(path: &Path, message: impl Into<String>) -> ProjectError {
    ProjectError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Read a regular file, at most `limit` bytes: the cap holds while reading
/// (a file that grows, or claims size 0 as /proc files do, is cut at
/// `limit + 1` bytes and reported over the limit). A directory, FIFO, socket
/// or device is refused before it is opened, and again on the opened handle.
pub fn read_capped(path: &Path, limit: usize) -> Result<Read, ProjectError> {
    match read_capped_bytes(path, limit)? {
        Read::Bytes(bytes) => String::from_utf8(bytes)
            .map(Read::Text)
            .map_err(|_| load_error(path, "is not UTF-8 text")),
        other => Ok(other),
    }
}

/// [`read_capped`] without the UTF-8 check: [`Read::Bytes`] or [`Read::TooLarge`].
pub fn read_capped_bytes(path: &Path, limit: usize) -> Result<Read, ProjectError> {
    use std::io::Read as _;
    let not_regular = |what: &str| {
        load_error(
            path,
            format!("is {what}, not a regular file; toolgate reads only regular files"),
        )
    };
    let kind = |m: &std::fs::Metadata| {
        let t = m.file_type();
        if t.is_dir() {
            Some("a directory")
        } else if !t.is_file() {
            Some("a special file (device, FIFO or socket)")
        } else {
            None
        }
    };
    let meta = std::fs::metadata(path).map_err(|e| load_error(path, e.to_string()))?;
    if let Some(what) = kind(&meta) {
        return Err(not_regular(what));
    }
    let file = std::fs::File::open(path).map_err(|e| load_error(path, e.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| load_error(path, e.to_string()))?;
    if let Some(what) = kind(&meta) {
        return Err(not_regular(what));
    }
    // Sized from the metadata (within the cap) so that reading does not
    // double the buffer past the file: the file's size is what stays.
    let expected = usize::try_from(meta.len()).unwrap_or(usize::MAX).min(limit);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| load_error(path, e.to_string()))?;
    if bytes.len() > limit {
        let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        return Ok(Read::TooLarge(size.max(bytes.len())));
    }
    Ok(Read::Bytes(bytes))
}

/// A word of the schema, or a near miss of one (a misspelt key such as
/// `policy`): at most three edits away. Such a word says nothing the schema
/// does not.
fn schema_like(word: &str) -> bool {
    word.len() <= 40
        && SCHEMA_WORDS
            .iter()
            .any(|w| *w == word || strsim::damerau_levenshtein(w, word) <= 3)
}

/// Replace every back-quoted or double-quoted word of an error message that is
/// not a word of the manifest or registry schema (or a near miss of one) by
/// `…`: a message about a file that failed to parse names what the schema
/// expects, never the file's content (the file may be anything, e.g. a secret).
pub fn redact(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(['`', '"']) {
        let q = rest[i..].chars().next().unwrap_or('`');
        out.push_str(&rest[..i + 1]);
        let after = &rest[i + 1..];
        match after.find(q) {
            Some(j) => {
                let word = &after[..j];
                out.push_str(if schema_like(word) { word } else { "…" });
                out.push(q);
                rest = &after[j + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
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

pub use toolgate_runtime::format::sha256_hex;

/// Where a manifest entry points, checked against the project directory.
struct Resolved {
    path: PathBuf,
    /// Inside the project directory (always, unless the opt-in allowed otherwise).
    inside: bool,
    /// The file's name in the table: the manifest's entry, relative to the
    /// project directory (docs/table-format.md, "File names").
    table_name: String,
}

/// Resolve `entry` (a `registry` or `policies` path of the manifest) against
/// the project root. Without the opt-in, an absolute path, a `..` component
/// or a symlink whose target leaves the (canonical) project directory is an
/// error naming the manifest and the way out.
fn resolve(
    manifest: &Path,
    root: &Path,
    canonical_root: &Path,
    key: &str,
    entry: &str,
    allow_outside: bool,
) -> Result<Resolved, ProjectError> {
    use std::path::Component;
    let refuse = |why: &str| {
        load_error(
            manifest,
            format!(
                "`{key}` entry \"{}\" {why}; a project reads only files inside its directory. Move the file into the project, or set `allow-outside-project = true` in the manifest if this is intended (docs/registry.md, \"Project files\")",
                entry.escape_debug()
            ),
        )
    };
    let rel = Path::new(entry);
    let lexically_outside = rel.is_absolute()
        || rel.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        });
    if lexically_outside && !allow_outside {
        return Err(refuse(if rel.is_absolute() {
            "is an absolute path"
        } else {
            "goes up with `..`"
        }));
    }
    let path = root.join(rel);
    let canonical = std::fs::canonicalize(&path).map_err(|e| {
        load_error(
            &path,
            format!(
                "{e} (named by `{key}` at {}; fix the name there, or create the file)",
                manifest_line(manifest, entry)
            ),
        )
    })?;
    let inside = !lexically_outside && canonical.starts_with(canonical_root);
    if !inside && !allow_outside {
        return Err(refuse(
            "is a symlink that resolves outside the project directory",
        ));
    }
    Ok(Resolved {
        path,
        inside,
        table_name: project_relative(rel),
    })
}

/// A manifest entry as the table records it: `/`-separated, without `./`
/// steps, so the same project compiles to the same bytes from any working
/// directory and on any platform.
fn project_relative(entry: &Path) -> String {
    use std::path::Component;
    let mut parts: Vec<String> = Vec::new();
    for c in entry.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => parts.push("..".into()),
            Component::RootDir => parts.insert(0, String::new()),
            Component::Prefix(p) => parts.push(p.as_os_str().to_string_lossy().into_owned()),
        }
    }
    parts.join("/")
}

/// `manifest:LINE` of the line that names `entry` (quoted, as TOML writes
/// it), or the manifest alone when no line does.
fn manifest_line(manifest: &Path, entry: &str) -> String {
    let text = std::fs::read_to_string(manifest).unwrap_or_default();
    let quoted = [format!("\"{entry}\""), format!("'{entry}'")];
    match text
        .lines()
        .position(|l| quoted.iter().any(|q| l.contains(q.as_str())))
    {
        Some(i) => format!("{}:{}", manifest.display(), i + 1),
        None => manifest.display().to_string(),
    }
}

/// The manifest of the project at `path` (a directory or its
/// `toolgate.toml`), the project directory, and that directory resolved.
fn manifest_location(path: &Path) -> Result<(PathBuf, PathBuf, PathBuf), ProjectError> {
    let manifest_path = if path.is_dir() {
        path.join(MANIFEST)
    } else {
        path.to_path_buf()
    };
    let root = manifest_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let canonical_root =
        std::fs::canonicalize(&root).map_err(|e| load_error(&root, e.to_string()))?;
    // The manifest itself: a regular file in the project directory (a
    // symlink to somewhere else is refused like any other entry).
    let canonical_manifest = std::fs::canonicalize(&manifest_path)
        .map_err(|e| load_error(&manifest_path, e.to_string()))?;
    if canonical_manifest.parent() != Some(canonical_root.as_path()) {
        return Err(load_error(
            &manifest_path,
            "is a symlink that resolves outside its directory; the manifest must be a file in the project directory",
        ));
    }
    Ok((manifest_path, root, canonical_root))
}

/// The manifest's text: UTF-8, and within the manifest limit.
fn manifest_text(overlay: Overlay<'_>, manifest_path: &Path) -> Result<String, ProjectError> {
    match read_text(overlay, manifest_path, MAX_MANIFEST_BYTES)? {
        Read::Text(t) => Ok(t),
        Read::Bytes(_) => Err(load_error(manifest_path, "is not UTF-8 text")),
        Read::TooLarge(n) => Err(load_error(
            manifest_path,
            format!("is {n} bytes, over the manifest limit of {MAX_MANIFEST_BYTES} bytes"),
        )),
    }
}

impl Project {
    /// `path` is a project directory or its `toolgate.toml`. Every file is
    /// read capped, must be a regular file, and (unless the manifest opts
    /// out) must lie inside the project directory.
    pub fn load(path: &Path) -> Result<Project, ProjectError> {
        Project::load_with(path, &|_| None)
    }

    /// [`Project::load`], reading any file the overlay holds from the overlay
    /// instead of the disk (same limits, same checks of where files lie).
    pub fn load_with(path: &Path, overlay: Overlay<'_>) -> Result<Project, ProjectError> {
        // No cache: one that is dropped at once would only copy the
        // registry's text (64 MB at a million tools) to compare it with nothing.
        Project::load_inner(path, overlay, None)
    }

    /// [`Project::load_with`], reusing the registry parsed by an earlier
    /// load while its text is unchanged.
    pub fn load_cached(
        path: &Path,
        overlay: Overlay<'_>,
        cache: &mut RegistryCache,
    ) -> Result<Project, ProjectError> {
        Project::load_inner(path, overlay, Some(cache))
    }

    /// [`Project::load_cached`], or with no cache to keep the parse in.
    fn load_inner(
        path: &Path,
        overlay: Overlay<'_>,
        cache: Option<&mut RegistryCache>,
    ) -> Result<Project, ProjectError> {
        let (manifest_path, root, canonical_root) = manifest_location(path)?;
        let text = manifest_text(overlay, &manifest_path)?;
        let mut sources = SourceMap::new();
        let manifest = sources.add(display(&manifest_path), text);
        let mut project = Project {
            root: root.clone(),
            sources,
            manifest,
            registry: None,
            policies: Vec::new(),
            paths: vec![manifest_path.clone()],
            problems: Vec::new(),
            lints: Lints::default(),
            parsed_registry: None,
            registry_path: None,
        };
        let text = &project.sources.get(manifest).text;
        let m: Manifest = match toml::from_str(text) {
            Ok(m) => m,
            Err(e) => {
                // Not a manifest: never quote it (it may be any file).
                project.problems.push(Problem::Manifest {
                    span: Span::new(manifest, e.span().unwrap_or(0..0)),
                    message: redact(e.message()),
                });
                project.sources.forbid_quoting(manifest);
                return Ok(project);
            }
        };
        let whole = Span::new(manifest, 0..text.len());
        let entries: Vec<(String, String, Span)> = m
            .lints
            .iter()
            .map(|(k, v)| {
                let span = Span::new(manifest, k.span().start..v.span().end);
                (k.get_ref().clone(), v.get_ref().clone(), span)
            })
            .collect();
        let (lints, lint_problems) = Lints::new(&entries);
        project.lints = lints;
        project.problems.extend(lint_problems);
        let allow = m.allow_outside_project;
        let manifest_shown = PathBuf::from(display(&manifest_path));

        let reg = resolve(
            &manifest_shown,
            &root,
            &canonical_root,
            "registry",
            &m.registry,
            allow,
        )?;
        project.read_registry(overlay, &reg, cache)?;
        for p in &m.policies {
            let pol = resolve(
                &manifest_shown,
                &root,
                &canonical_root,
                "policies",
                p,
                allow,
            )?;
            project.read_policy(overlay, &pol)?;
        }
        if m.policies.is_empty() {
            project.problems.push(Problem::Manifest {
                span: whole,
                message: "`policies` lists no file".into(),
            });
        }
        Ok(project)
    }

    /// Read the registry the manifest names and parse it (or reuse the
    /// parse in `cache` while its text is unchanged, and keep it there).
    fn read_registry(
        &mut self,
        overlay: Overlay<'_>,
        reg: &Resolved,
        cache: Option<&mut RegistryCache>,
    ) -> Result<(), ProjectError> {
        let is_json = reg.path.extension().is_some_and(|e| e == "json");
        let (id, too_large) =
            self.read_source(overlay, reg, "registry file", registry::MAX_REGISTRY_BYTES)?;
        self.registry = Some(id);
        if let Some(p) = too_large {
            self.parsed_registry = Some(Arc::new((Registry::default(), vec![p])));
            return Ok(());
        }
        if reg.inside {
            self.registry_path = Some(reg.path.clone());
        }
        let text = &self.sources.get(id).text;
        let parsed = match cache {
            Some(cache) => {
                let hit = match &cache.key {
                    Some((i, j, t)) if *i == id && *j == is_json && t == text => {
                        cache.parsed.clone()
                    }
                    _ => None,
                };
                hit.unwrap_or_else(|| {
                    let p = registry::parse(id, text, is_json).map(Arc::new);
                    cache.key = Some((id, is_json, text.clone()));
                    cache.parsed = Some(p.clone());
                    p
                })
            }
            None => registry::parse(id, text, is_json).map(Arc::new),
        };
        let parsed = match parsed {
            Ok(r) if reg.inside => r,
            Ok(r) => {
                // A registry outside the project parsed: its entries are
                // quoted by name, but no excerpt of the file is shown.
                self.sources.forbid_quoting(id);
                r
            }
            Err(p) => {
                self.sources.forbid_quoting(id);
                Arc::new((Registry::default(), vec![redact_problem(p)]))
            }
        };
        self.parsed_registry = Some(parsed);
        Ok(())
    }

    /// Read one policy file the manifest names.
    fn read_policy(&mut self, overlay: Overlay<'_>, pol: &Resolved) -> Result<(), ProjectError> {
        let (id, too_large) =
            self.read_source(overlay, pol, "policy file", parse::MAX_POLICY_BYTES)?;
        // Nothing of a file outside the project, or of one not read, is quoted.
        if !pol.inside || too_large.is_some() {
            self.sources.forbid_quoting(id);
        }
        match too_large {
            Some(p) => self.problems.push(p),
            None => self.policies.push(id),
        }
        Ok(())
    }

    /// Add a file the manifest names to the sources: its id, and TG0002 when
    /// it is over `limit` (it is then added empty). A file that is not UTF-8
    /// text is a load error.
    fn read_source(
        &mut self,
        overlay: Overlay<'_>,
        file: &Resolved,
        what: &'static str,
        limit: usize,
    ) -> Result<(FileId, Option<Problem>), ProjectError> {
        let path = &file.path;
        let name = display(path);
        self.paths.push(path.to_path_buf());
        let (id, problem) = match read_text(overlay, path, limit)? {
            Read::Bytes(_) => return Err(load_error(path, "is not UTF-8 text")),
            Read::Text(t) => (self.sources.add(name, t), None),
            Read::TooLarge(n) => {
                let id = self.sources.add(name, String::new());
                (id, Some(Problem::too_large(id, what, limit, n)))
            }
        };
        self.sources.set_table_name(id, file.table_name.clone());
        Ok((id, problem))
    }

    /// The project's policy files as read, each with whether it lies inside
    /// the project directory (`fmt -w` writes only those).
    pub fn policy_files(&self) -> Vec<(PathBuf, bool)> {
        self.policies
            .iter()
            .map(|&id| {
                let f = self.sources.get(id);
                (PathBuf::from(&f.name), f.quote)
            })
            .collect()
    }

    /// A project from texts in memory: (name, text) of the registry (a name
    /// ending in `.json` reads as JSON) and of each policy file.
    pub fn from_texts(registry: (&str, &str), policies: &[(&str, &str)]) -> Project {
        let mut sources = SourceMap::new();
        let manifest = sources.add(MANIFEST, "");
        let registry = Some(sources.add(registry.0, registry.1));
        let policies = policies.iter().map(|(n, t)| sources.add(*n, *t)).collect();
        let paths = sources
            .files()
            .map(|(_, f)| PathBuf::from(&f.name))
            .collect();
        Project {
            root: PathBuf::from("."),
            sources,
            manifest,
            registry,
            policies,
            paths,
            problems: Vec::new(),
            lints: Lints::default(),
            parsed_registry: None,
            registry_path: None,
        }
    }

    /// The registry as read at load with its problems (`None` for a
    /// project made from texts).
    pub fn registry_as_loaded(&self) -> Option<&(Registry, Vec<Problem>)> {
        self.parsed_registry.as_deref()
    }

    /// The registry file's path, when it lies inside the project.
    pub fn registry_path(&self) -> Option<&Path> {
        self.registry_path.as_deref()
    }

    /// Check against this registry instead of the registry file (a registry
    /// about to be written, as `registry sync` does).
    pub fn set_registry(&mut self, registry: Registry) {
        self.parsed_registry = Some(Arc::new((registry, Vec::new())));
    }

    /// The registry as parsed at load (`None` for [`Project::from_texts`],
    /// whose registry is parsed in [`Project::check`]).
    pub fn parsed_registry(&self) -> Option<&Registry> {
        self.parsed_registry.as_deref().map(|(r, _)| r)
    }

    /// The file read from `path` (as [`Project::paths`] holds it).
    pub fn file_at(&self, path: &Path) -> Option<FileId> {
        self.paths
            .iter()
            .position(|p| p == path)
            .map(|i| FileId(i as u32))
    }
}

/// A problem about a file that must not be quoted, with every quotation of
/// the file's text taken out.
pub fn redact_problem(p: Problem) -> Problem {
    match p {
        Problem::Syntax {
            span,
            expected,
            found,
            ..
        } => Problem::Syntax {
            // Not even the token's length; no hint (it may quote the text).
            span: Span {
                end: span.start,
                ..span
            },
            expected,
            found: found.map(|_| "…".to_string()),
            hint: None,
            unclosed: None,
        },
        Problem::RegistryInvalid { span, message } => Problem::RegistryInvalid {
            span,
            message: redact(&message),
        },
        Problem::Manifest { span, message } => Problem::Manifest {
            span,
            message: redact(&message),
        },
        other => other,
    }
}
