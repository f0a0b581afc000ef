//! `check --format sarif`: one SARIF 2.1.0 log, one run for every project
//! of the invocation, the whole catalogue as the run's rules.
//!
//! Paths are relative to the source root ([`SrcRoot`]: the nearest directory
//! above the current one that holds `.git`, else the current directory),
//! with `uriBaseId` `%SRCROOT%`, which `originalUriBaseIds` resolves to the
//! root's `file:` URI: GitHub code scanning matches such paths to the files
//! of the repository. A file outside the root gets its absolute `file:` URI.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::diagnostics::{catalogue_url, Diagnostic, CATALOGUE, DOCS_URL};
use crate::report::json::pretty;
use crate::source::{SourceMap, Span};

/// The base id of paths relative to the source root.
pub const SRCROOT: &str = "%SRCROOT%";

/// The directory SARIF paths are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrcRoot {
    /// Absolute, symbolic links resolved.
    dir: PathBuf,
}

impl SrcRoot {
    /// The nearest directory from `cwd` upwards that holds `.git` (a
    /// repository or a worktree), else `cwd` itself.
    pub fn discover(cwd: &Path) -> SrcRoot {
        let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| normalise(cwd));
        let dir = cwd
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(&cwd)
            .to_path_buf();
        SrcRoot { dir }
    }

    /// The root's `file:` URI, ending with `/` as SARIF asks of a base.
    pub fn uri(&self) -> String {
        let mut u = file_uri(&self.dir);
        if !u.ends_with('/') {
            u.push('/');
        }
        u
    }

    /// Where a file named `name` (as the source map names it: relative to
    /// the current directory, or absolute) is, for SARIF.
    fn locate(&self, cwd: &Path, name: &str) -> ArtifactLocation {
        let path = normalise(&cwd.join(name));
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        match path.strip_prefix(&self.dir) {
            Ok(rel) => ArtifactLocation {
                uri: encode(&slashed(rel)),
                uri_base_id: Some(SRCROOT),
            },
            Err(_) => ArtifactLocation {
                uri: file_uri(&path),
                uri_base_id: None,
            },
        }
    }
}

/// `.` and `..` removed without reading the file system.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path's components joined by `/`.
fn slashed(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn file_uri(abs: &Path) -> String {
    let s = slashed(abs);
    let s = s.trim_start_matches('/');
    format!("file:///{}", encode(s))
}

/// Percent-encoding of everything but unreserved characters and `/` (RFC
/// 3986): a path with spaces or non-ASCII names is still a valid URI.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Message {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<String>,
}

fn text(t: impl Into<String>) -> Message {
    Message {
        text: t.into(),
        markdown: None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    /// Related locations are numbered from 1; the primary one has no id.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
    physical_location: PhysicalLocation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Level {
    level: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: &'static str,
    short_description: Message,
    full_description: Message,
    help_uri: String,
    help: Message,
    default_configuration: Level,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    original_uri_base_ids: BTreeMap<&'static str, ArtifactLocation>,
    /// Columns count characters (`SourceFile::line_col`), not UTF-16 units.
    column_kind: &'static str,
    results: Vec<SarifResult>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

/// A SARIF log being filled, one project at a time.
#[derive(Debug, Clone)]
pub struct SarifLog {
    root: SrcRoot,
    cwd: PathBuf,
    results: Vec<SarifResult>,
}

impl SarifLog {
    /// Paths relative to the root found from the current directory.
    pub fn new() -> SarifLog {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        SarifLog::with_root(SrcRoot::discover(&cwd), cwd)
    }

    /// Paths relative to `root`; the source map's relative names are taken
    /// relative to `cwd`.
    pub fn with_root(root: SrcRoot, cwd: PathBuf) -> SarifLog {
        SarifLog {
            root,
            cwd,
            results: Vec::new(),
        }
    }

    fn location(&self, sources: &SourceMap, span: Span, end: bool) -> PhysicalLocation {
        let f = sources.get(span.file);
        let (start_line, start_column) = f.line_col(span.start as usize);
        let (end_line, end_column) = f.line_col(span.end as usize);
        PhysicalLocation {
            artifact_location: self.root.locate(&self.cwd, &f.name),
            region: Region {
                start_line,
                start_column,
                end_line: end.then_some(end_line),
                end_column: end.then_some(end_column),
            },
        }
    }

    /// Stable when lines move, and wherever `check` runs from: the code,
    /// the file's URI, the text under the span, the message.
    fn fingerprint(&self, sources: &SourceMap, d: &Diagnostic) -> String {
        let f = sources.get(d.span.file);
        let uri = self.root.locate(&self.cwd, &f.name).uri;
        let key = format!(
            "{}\0{}\0{}\0{}",
            d.code,
            uri,
            sources.text(d.span),
            d.message
        );
        crate::project::sha256_hex(key.as_bytes())[..32].to_string()
    }

    /// Add one project's diagnostics.
    pub fn add(&mut self, sources: &SourceMap, diags: &[Diagnostic]) {
        for d in diags {
            let rule_index = CATALOGUE.iter().position(|c| c.code == d.code).unwrap_or(0);
            let mut message = d.message.clone();
            if let Some(h) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(h);
            }
            let related_locations = d
                .labels
                .iter()
                .enumerate()
                .map(|(i, l)| Location {
                    id: Some(i + 1),
                    message: Some(text(l.message.clone())),
                    physical_location: self.location(sources, l.span, false),
                })
                .collect();
            self.results.push(SarifResult {
                rule_id: d.code,
                rule_index,
                level: d.severity.as_str(),
                message: text(message),
                locations: vec![Location {
                    id: None,
                    message: None,
                    physical_location: self.location(sources, d.span, true),
                }],
                partial_fingerprints: BTreeMap::from([(
                    "toolgateDiagnostic/v1",
                    self.fingerprint(sources, d),
                )]),
                related_locations,
            });
        }
    }

    /// The log: one run holding every result added, and the catalogue as
    /// its rules.
    pub fn to_json(&self) -> String {
        let rules = CATALOGUE
            .iter()
            .map(|c| {
                let url = catalogue_url(c.code);
                Rule {
                    id: c.code,
                    name: c.name,
                    short_description: text(c.summary),
                    full_description: text(c.summary),
                    help: Message {
                        text: format!(
                            "{}: {} See {url} for a failing example and the fix.",
                            c.code, c.summary
                        ),
                        markdown: Some(format!(
                            "**{} {}**: {}\n\n[The catalogue entry]({url}) has a failing example and the fix.",
                            c.code, c.name, c.summary
                        )),
                    },
                    help_uri: url,
                    default_configuration: Level {
                        level: c.severity.as_str(),
                    },
                }
            })
            .collect();
        let log = Log {
            schema: "https://json.schemastore.org/sarif-2.1.0.json",
            version: "2.1.0",
            runs: vec![Run {
                tool: Tool {
                    driver: Driver {
                        name: "toolgate",
                        version: env!("CARGO_PKG_VERSION"),
                        semantic_version: env!("CARGO_PKG_VERSION"),
                        information_uri: DOCS_URL,
                        rules,
                    },
                },
                original_uri_base_ids: BTreeMap::from([(
                    SRCROOT,
                    ArtifactLocation {
                        uri: self.root.uri(),
                        uri_base_id: None,
                    },
                )]),
                column_kind: "unicodeCodePoints",
                results: self.results.clone(),
            }],
        };
        pretty(&log)
    }
}

impl Default for SarifLog {
    fn default() -> SarifLog {
        SarifLog::new()
    }
}

/// One project's diagnostics as a SARIF log, paths relative to the root
/// found from the current directory.
pub fn sarif(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut log = SarifLog::new();
    log.add(sources, diags);
    log.to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_root_and_encoded() {
        let root = SrcRoot {
            dir: PathBuf::from("/repo"),
        };
        let cwd = Path::new("/repo/sub");
        assert_eq!(
            root.locate(cwd, "../policies/größe x.tg"),
            ArtifactLocation {
                uri: "policies/gr%C3%B6%C3%9Fe%20x.tg".into(),
                uri_base_id: Some(SRCROOT),
            }
        );
        assert_eq!(
            root.locate(cwd, "/elsewhere/r.toml"),
            ArtifactLocation {
                uri: "file:///elsewhere/r.toml".into(),
                uri_base_id: None,
            }
        );
        assert_eq!(root.uri(), "file:///repo/");
    }
}
